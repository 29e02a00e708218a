//! `herdsim serve` as a user runs it: the binary on a loopback port, real
//! HTTP/1.1 requests over TCP and real gRPC calls over HTTP/2. Every wait
//! is bounded (a read timeout, a deadline on the child); every server
//! stops by itself (`--for`).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{PATIENCE, Served, alone, live, post, post_with, start_serve};

/// Starts `serve ARGS` on a free port.
fn serve(args: &[&str]) -> Served {
    start_serve(&[&["serve"], args].concat(), None)
}

/// Waits for a serve to stop at its `--for`.
fn finish(served: Served) -> Output {
    common::finish(served.child, PATIENCE)
}

/// `GET /metrics`: the value of each sample line.
fn metrics(port: u16) -> Vec<(String, f64)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    reply
        .split("\r\n\r\n")
        .nth(1)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (name, value) = l.split_once(' ').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

fn metric(samples: &[(String, f64)], name: &str) -> f64 {
    samples
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {samples:?}"))
        .1
}

/// Two workers serving 200 ms each really serve two at once: of four
/// simultaneous calls two come back after one service time, two after two;
/// a fifth finds the queue of two full and is refused at once (429).
#[test]
fn workers_serve_concurrently_and_a_full_queue_refuses() {
    let _alone = alone();
    let served = serve(&[
        "--resource",
        "server",
        "--workers",
        "2",
        "--service",
        "const:200ms",
        "--queue-limit",
        "2",
        "--for",
        "1500ms",
    ]);
    assert!(
        served
            .announced
            .contains("2 workers, service const:200ms, queue limit 2")
    );
    let port = served.port;
    let calls: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                // Staggered so that the arrivals' order is known.
                std::thread::sleep(Duration::from_millis(20 * i));
                post(port, &format!("call {i}"))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let (refused, _, refused_after) = post(port, "one too many");
    let mut replies: Vec<_> = calls.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(refused, 429);
    assert!(
        refused_after < Duration::from_millis(150),
        "{refused_after:?}"
    );
    replies.sort_by_key(|r| r.2);
    // Calls sent at 0, 20, 40 and 60 ms: the first two are taken at once
    // and done after 200 ms; the other two wait for them and are done at
    // 400 and 420 ms, 360 ms after each was sent. Timers here fire within
    // a few ms, so 60 ms either way is generous and still tells one
    // service from two.
    for ((status, body, took), expected) in replies.iter().zip([200, 200, 360, 360]) {
        assert_eq!(*status, 200);
        assert!(
            body.starts_with("call "),
            "the payload comes back: {body:?}"
        );
        let off = took.as_millis() as i64 - expected;
        assert!(
            off.abs() < 60,
            "expected about {expected} ms, took {took:?}"
        );
    }
    let samples = metrics(port);
    assert_eq!(metric(&samples, "herdsim_attempts_total"), 5.0);
    assert_eq!(metric(&samples, "herdsim_rejected_total"), 1.0);
    assert_eq!(metric(&samples, "herdsim_completions_total"), 4.0);
    assert_eq!(metric(&samples, "herdsim_queue_peak"), 2.0);
    let out = finish(served);
    assert!(out.status.success());
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(
        summary.contains("5 attempts arrived, 4 finished (4 succeeded), 1 refused"),
        "{summary}"
    );
}

/// An outage fails what completes inside it (503), not what completes
/// after; the series counts each window, in run --series' column names,
/// and is written when the server stops at --for.
#[test]
fn an_outage_fails_in_wall_time_and_the_series_is_written_at_the_stop() {
    let _alone = alone();
    let dir = std::env::temp_dir().join(format!("herdsim-live-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let series: PathBuf = dir.join("series.csv");
    let served = serve(&[
        "--resource",
        "server",
        "--workers",
        "4",
        "--service",
        "const:10ms",
        "--trigger",
        "outage@300ms..700ms",
        "--window",
        "100ms",
        "--for",
        "1s",
        "--series",
        series.to_str().unwrap(),
        "--force",
    ]);
    let port = served.port;
    // The first call starts the clock.
    let (first, ..) = post(port, "x");
    let clock = Instant::now();
    assert_eq!(first, 200);
    let at = |ms: u64| {
        let wait = Duration::from_millis(ms).saturating_sub(clock.elapsed());
        std::thread::sleep(wait);
        post(port, "x").0
    };
    assert_eq!(at(450), 503, "inside the outage");
    assert_eq!(at(850), 200, "after it");
    let out = finish(served);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&series).expect("the series is written");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("window_start_ms,attempts,completions,successes,rejected,queue,busy_workers")
    );
    let rows: Vec<Vec<u64>> = lines
        .map(|l| {
            l.split(',')
                .map(|v| v.parse::<f64>().unwrap() as u64)
                .collect()
        })
        .collect();
    assert!(rows.len() >= 9, "windows to the stop: {rows:?}");
    let total = |col: usize| rows.iter().map(|r| r[col]).sum::<u64>();
    assert_eq!((total(1), total(2), total(3)), (3, 3, 2));
    let failed_window = rows.iter().position(|r| r[2] == 1 && r[3] == 0).unwrap();
    assert!(
        (3..=5).contains(&failed_window),
        "the failure lands near 450 ms: {rows:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Work is not cancelled: a client that sends and hangs up still costs its
/// worker the whole service time, and its reply is counted unheard.
#[test]
fn a_client_that_hangs_up_still_costs_its_worker_the_whole_service() {
    let _alone = alone();
    let served = serve(&[
        "--resource",
        "server",
        "--workers",
        "1",
        "--service",
        "const:300ms",
        "--for",
        "1s",
    ]);
    let port = served.port;
    {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "POST /call HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx"
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        stream.shutdown(std::net::Shutdown::Both).unwrap();
    }
    // The hung-up call still holds the only worker: the next waits for it.
    let (status, _, took) = post(port, "y");
    assert_eq!(status, 200);
    assert!(
        took >= Duration::from_millis(450),
        "waited for the abandoned work: {took:?}"
    );
    let out = finish(served);
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(summary.contains("2 finished (2 succeeded)"), "{summary}");
    assert!(
        summary.contains("1 replies unheard"),
        "the hang-up really happened: {summary}"
    );
}

/// A client that says how far into its run it is (drill's
/// `herdsim-clock-ns`) starts the serve's clock that far back: a first
/// call 1.5 s into the client's run meets an outage from 1 s, where a
/// first call without the header starts the clock at 0 and succeeds (the
/// outage test above). A clock claimed beyond an hour is not believed.
#[test]
fn a_drills_clock_header_starts_the_serves_clock_on_its_own() {
    let _alone = alone();
    let workload = [
        "--resource",
        "server",
        "--workers",
        "1",
        "--service",
        "const:1ms",
        "--trigger",
        "outage@1s..60s",
        "--for",
        "2s",
    ];
    let served = serve(&workload);
    let (status, ..) = post_with(served.port, "x", "herdsim-clock-ns: 1500000000\r\n");
    assert_eq!(
        status, 503,
        "the clock started 1.5 s back: inside the outage"
    );
    let _ = finish(served);
    let served = serve(&workload);
    let (status, ..) = post_with(served.port, "x", "herdsim-clock-ns: 7200000000000\r\n");
    assert_eq!(
        status, 200,
        "two hours back is not believed: the clock starts at 0"
    );
    let _ = finish(served);
}

/// Bad input is one line and exit 2: workers the live server cannot be, a
/// trigger it cannot honour, an address already taken.
#[test]
fn what_serve_cannot_be_is_refused_in_one_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--workers", "inf"],
            "--workers: serve needs a number of workers from 1 to 4096",
        ),
        (
            &["--workers", "2", "--trigger", "user-fail:0.5@1s..2s"],
            "a real server cannot tell users apart",
        ),
        (
            &["--workers", "2", "--listen", &port],
            "cannot listen there",
        ),
    ];
    for (args, expected) in cases {
        let out = live()
            .args(["serve", "--resource", "server", "--for", "1s"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// gRPC over HTTP/2 without generated code: the message comes back framed
/// with `grpc-status` 0 in the trailers, and 14 (UNAVAILABLE) inside an
/// outage in a Trailers-Only reply, on the same port as HTTP/1.1.
#[test]
fn grpc_calls_get_their_status_in_the_trailers() {
    let _alone = alone();
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let served = serve(&[
        "--resource",
        "server",
        "--workers",
        "2",
        "--service",
        "const:5ms",
        "--trigger",
        "outage@300ms..700ms",
        "--for",
        "1s",
    ]);
    let port = served.port;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let statuses = runtime.block_on(async {
        tokio::time::timeout(PATIENCE, async {
            let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            let (mut sender, connection) =
                hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                    .await
                    .unwrap();
            tokio::spawn(connection);
            let clock = Instant::now();
            let mut seen = Vec::new();
            for at_ms in [0, 450] {
                let wait = Duration::from_millis(at_ms).saturating_sub(clock.elapsed());
                tokio::time::sleep(wait).await;
                let request =
                    hyper::Request::post(format!("http://127.0.0.1:{port}/herdsim.Herdsim/Call"))
                        .header("content-type", "application/grpc")
                        .header("te", "trailers")
                        .body(Full::new(Bytes::from_static(b"\0\0\0\0\x05hello")))
                        .unwrap();
                let response = sender.send_request(request).await.unwrap();
                assert_eq!(response.headers()["content-type"], "application/grpc");
                let in_headers = response.headers().get("grpc-status").cloned();
                let body = response.into_body().collect().await.unwrap();
                // A failure is Trailers-Only: its status in the headers
                // and no trailers (gRPC clients retry only such replies).
                let status = match (in_headers, body.trailers()) {
                    (Some(code), None) => code.to_str().unwrap().to_string(),
                    (None, Some(trailers)) => trailers["grpc-status"].to_str().unwrap().to_string(),
                    other => panic!("grpc-status in the headers or the trailers: {other:?}"),
                };
                seen.push((status, body.to_bytes()));
            }
            seen
        })
        .await
        .expect("the calls end within the patience")
    });
    assert_eq!(statuses[0].0, "0");
    assert_eq!(
        &statuses[0].1[..],
        b"\0\0\0\0\x05hello",
        "the message, framed, echoed"
    );
    assert_eq!(
        statuses[1].0, "14",
        "UNAVAILABLE inside the outage, Trailers-Only"
    );
    assert!(statuses[1].1.is_empty());
    assert!(finish(served).status.success());
}
