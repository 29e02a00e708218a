//! `herdsim serve --trace`: every attempt logged with its call id (a
//! request header), its arrival, its reply and its outcome, in the columns
//! `herdsim conform` reads. Loopback only; the server stops by itself.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{PATIENCE, alone, finish, live, start_serve};

/// POST /call with `header` (if any): the reply's status.
fn post_with(port: u16, header: Option<(&str, &str)>) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let extra = header.map_or(String::new(), |(k, v)| format!("{k}: {v}\r\n"));
    write!(
        stream,
        "POST /call HTTP/1.1\r\nHost: test\r\n{extra}Content-Length: 1\r\nConnection: close\r\n\r\nx"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("a reply");
    reply[9..12].parse().expect("a status code")
}

/// A call's two attempts (one failed inside an outage, one after it) share
/// the id of the header named by --call-id-header, matched whatever its
/// case; an attempt without the header is a call of its own; rows come in
/// arrival order, each reply after its arrival by at least the service
/// time; a full queue's refusal is `throttled`.
#[test]
fn every_attempt_is_logged_with_its_call_and_outcome() {
    let _alone = alone();
    let dir = std::env::temp_dir().join(format!("herdsim-live-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.csv");
    let served = start_serve(
        &[
            "serve",
            "--workers",
            "1",
            "--service",
            "const:20ms",
            "--queue-limit",
            "0",
            "--trigger",
            "outage@200ms..400ms",
            "--for",
            "1s",
            "--trace",
            trace.to_str().unwrap(),
            "--call-id-header",
            "X-Req",
        ],
        None,
    );
    let port = served.port;
    assert_eq!(post_with(port, Some(("x-req", "first"))), 200);
    let clock = Instant::now();
    let at = |ms: u64, header: Option<(&str, &str)>| {
        std::thread::sleep(Duration::from_millis(ms).saturating_sub(clock.elapsed()));
        post_with(port, header)
    };
    assert_eq!(at(250, Some(("X-REQ", "call-1"))), 503, "inside the outage");
    assert_eq!(at(500, Some(("x-req", "call-1"))), 200, "its retry, after");
    assert_eq!(at(600, None), 200);
    // One worker and no queue: a call arriving while another is served is
    // refused at once.
    let busy = std::thread::spawn(move || post_with(port, Some(("x-req", "holder"))));
    std::thread::sleep(Duration::from_millis(5));
    let refused = post_with(port, Some(("x-req", "refused")));
    assert_eq!(busy.join().unwrap(), 200);
    assert_eq!(refused, 429);
    let out = finish(served.child, PATIENCE);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).expect("the trace is written at the stop");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("call,sent_ms,done_ms,outcome"));
    let rows: Vec<(String, f64, f64, String)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].to_string(),
            )
        })
        .collect();
    let calls: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(calls.len(), 6, "{text}");
    assert_eq!(&calls[..3], ["first", "call-1", "call-1"], "{text}");
    assert!(calls[3].starts_with("anonymous-"), "{text}");
    let outcomes: Vec<&str> = rows.iter().map(|r| r.3.as_str()).collect();
    assert_eq!(
        &outcomes[..4],
        ["success", "failure", "success", "success"],
        "{text}"
    );
    let last_two: Vec<(&str, &str)> = rows[4..]
        .iter()
        .map(|r| (r.0.as_str(), r.3.as_str()))
        .collect();
    assert!(last_two.contains(&("holder", "success")), "{text}");
    assert!(last_two.contains(&("refused", "throttled")), "{text}");
    for (call, sent, done, outcome) in &rows {
        let held = if outcome == "throttled" { 0.0 } else { 20.0 };
        assert!(done - sent >= held - 0.01, "{call}: {sent} → {done}");
    }
    assert!(
        rows.windows(2).all(|w| w[0].1 <= w[1].1),
        "by arrival: {text}"
    );
    assert_eq!(rows[0].1, 0.0, "the first request starts the clock");
    assert!((230.0..330.0).contains(&rows[1].1), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A client that hangs up before its reply (its timeout) is logged as a
/// `timeout` when it hung up, though its worker serves the attempt to the
/// end.
#[test]
fn an_attempt_whose_client_hangs_up_is_a_timeout() {
    let _alone = alone();
    let dir = std::env::temp_dir().join(format!("herdsim-live-trace-gone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.csv");
    let served = start_serve(
        &[
            "serve",
            "--workers",
            "1",
            "--service",
            "const:400ms",
            "--for",
            "1s",
            "--trace",
            trace.to_str().unwrap(),
        ],
        None,
    );
    {
        let mut stream = TcpStream::connect(("127.0.0.1", served.port)).expect("connects");
        write!(
            stream,
            "POST /call HTTP/1.1\r\nHost: test\r\nx-call-id: gone\r\nContent-Length: 1\r\n\r\nx"
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = finish(served.child, PATIENCE);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).expect("the trace is written");
    let row: Vec<&str> = text.lines().nth(1).expect("one row").split(',').collect();
    assert_eq!((row[0], row[3]), ("gone", "timeout"), "{text}");
    let held = row[2].parse::<f64>().unwrap() - row[1].parse::<f64>().unwrap();
    assert!(
        (80.0..390.0).contains(&held),
        "logged when the client hung up: {text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// --trace and --series in one file would overwrite each other: refused in
/// one line, exit 2, before serving; a call id header must be a header name.
#[test]
fn a_trace_that_cannot_be_written_is_refused_before_serving() {
    let dir = std::env::temp_dir().join(format!("herdsim-live-trace-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("both.csv");
    let file = file.to_str().unwrap();
    for (args, expected) in [
        (vec!["--series", file, "--trace", file], "--trace"),
        (
            vec!["--trace", file, "--call-id-header", "bad header"],
            "--call-id-header",
        ),
    ] {
        let out = live()
            .args([
                "serve",
                "--workers",
                "1",
                "--listen",
                "127.0.0.1:0",
                "--for",
                "1s",
            ])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!std::path::Path::new(file).exists(), "nothing written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
