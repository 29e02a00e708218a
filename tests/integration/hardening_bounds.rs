//! Issue 34's bounds of simulated time and memory (items 8, 13, 14 and 17):
//! a setting that does not fit is refused before any work, naming the
//! flags whose product is too large; a run that would outgrow the clock or
//! memory while it runs stops, exit code 1, saying which bound and why; and
//! nothing hangs.

use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{usage_error, workdir};

/// Every command here ends in seconds; before the fixes several hung.
const PATIENCE: Duration = Duration::from_secs(60);

/// `herdsim run --resource server ARGS -q` in `dir`: (exit code, stdout,
/// stderr).
fn server_run(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = cargo_bin_cmd!("herdsim")
        .current_dir(dir)
        .args(["run", "--resource", "server", "-q"])
        .args(args)
        .timeout(PATIENCE)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        err,
    )
}

/// A run cut by a limit: exit 1, one line on stderr, nothing on stdout.
fn cut(dir: &std::path::Path, args: &[&str]) -> String {
    let (code, out, err) = server_run(dir, args);
    assert_eq!(code, Some(1), "{args:?}: {err}");
    assert!(out.is_empty(), "{args:?} printed results: {out}");
    assert_eq!(err.lines().count(), 1, "{args:?}:\n{err}");
    err
}

#[test]
fn a_retry_schedule_past_the_clocks_end_stops_there_and_says_why() {
    // 700 attempts a year apart: 700 years, past the clock's 584. Before,
    // the clock wrapped and windows 0 to 114 were counted twice (exit 0).
    let dir = workdir("bounds-1");
    let err = cut(
        &dir,
        &[
            "--policy",
            "constant",
            "--base",
            "8760h",
            "--cap",
            "8760h",
            "--max-attempts",
            "700",
            "--fail-rate",
            "1",
            "--requests",
            "1",
            "--rate",
            "1",
            "--duration",
            "10ms",
            "--window",
            "8760h",
            "--horizon",
            "none",
            "--series",
            "s.csv",
        ],
    );
    assert!(
        err.contains("end of the simulated clock, 292 years"),
        "{err}"
    );
    assert!(err.contains("--max-attempts 700"), "{err}");
    assert!(err.contains("--horizon"), "{err}");
    assert!(!&dir.join("s.csv").exists(), "a series was written");
}

#[test]
fn spikes_that_never_overlap_bound_thinning_by_the_largest() {
    // Thinning proposed at the product of every factor (1000³): its gap
    // rounded to 0 ns and time stood still; neither limit stopped it.
    let dir = workdir("bounds-2");
    let (code, _, err) = server_run(
        &dir,
        &[
            "--trigger",
            "spike:1000@1s..2s+spike:1000@3s..4s+spike:1000@5s..6s",
            "--max-events",
            "100000",
            "--horizon",
            "10ms",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("cut at the horizon"), "{err}");
    let ten: Vec<String> = (0..10).map(|i| format!("spike:10@{i}s..{i}.5s")).collect();
    let (code, out, err) = server_run(
        &dir,
        &["--trigger", &ten.join("+"), "--horizon", "3s", "--json"],
    );
    assert_eq!(code, Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // 500/s, ten times that over 1.5 s of the 3: about 8,250 requests.
    let requests = json["metrics"]["requests"]["mean"].as_f64().unwrap();
    assert!((7_500.0..9_000.0).contains(&requests), "{requests}");
}

#[test]
fn thinnings_proposals_count_toward_the_event_limit_and_stop_at_the_horizon() {
    // A rate of 0 for 300 days with requests still to make: thinning
    // proposed 10^10 times inside one event, past either limit.
    let dir = workdir("bounds-3");
    let zero = ["--trigger", "ramp:0/0@0s..7200h", "--requests", "5"];
    let err = cut(&dir, &[&zero[..], &["--max-events", "1000"]].concat());
    assert!(err.contains("reached --max-events 1,000"), "{err}");
    assert!(err.contains("proposals"), "{err}");
    let (code, _, err) = server_run(&dir, &[&zero[..], &["--horizon", "1s"]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("cut at the horizon"), "{err}");
}

#[test]
fn a_time_series_longer_than_fits_is_refused_or_cut() {
    // Up front: the load alone spans 3.6 billion windows (before: a 490 GB
    // series, grown until killed).
    let err = usage_error(&[
        "run",
        "--resource",
        "server",
        "--duration",
        "1h",
        "--window",
        "1us",
    ]);
    assert!(err.contains("'--window'"), "{err}");
    assert!(err.contains("3,600,000,000 windows"), "{err}");
    assert!(err.contains("at most 5,000,000"), "{err}");
    // While running: one request served for a year, a window of the
    // series per 100 ms of it (before: 40 GB asked for).
    let dir = workdir("bounds-4");
    let err = cut(
        &dir,
        &[
            "--service",
            "const:8760h",
            "--requests",
            "1",
            "--horizon",
            "none",
        ],
    );
    assert!(err.contains("5,000,000 windows of --window 100ms"), "{err}");
    assert!(err.contains("365.0 days"), "{err}");
}

#[test]
fn an_open_loop_whose_backlog_grows_without_bound_is_cut() {
    // 10^8 requests/s at one worker of 1 ms: before, memory grew about
    // 250 MB a second of wall time until the machine ran out.
    let dir = workdir("bounds-5");
    let err = cut(&dir, &["--rate", "1e8", "--duration", "1s"]);
    assert!(
        err.contains("more than 10,000,000 requests in flight"),
        "{err}"
    );
    assert!(err.contains("--rate 1e8/s against --workers 1"), "{err}");
}

#[test]
fn rates_that_do_not_fit_the_clock_or_the_load_are_refused_with_the_product() {
    let err = usage_error(&[
        "run",
        "--resource",
        "server",
        "--rate",
        "1e7",
        "--duration",
        "1s",
        "--trigger",
        "spike:200@0s..1s",
    ]);
    assert!(err.contains("'--rate'"), "{err}");
    assert!(err.contains("1e7/s × 200"), "{err}");
    assert!(err.contains("--trigger"), "{err}");
    let err = usage_error(&["run", "--resource", "server", "--rate", "1e9"]);
    assert!(err.contains("1.000e10 requests"), "{err}");
    assert!(err.contains("--duration"), "{err}");
}

#[test]
fn the_occ_model_refuses_more_clients_than_fit_before_any_work() {
    // Before: 4 GB of client state before the first event, --max-events
    // or not.
    let err = usage_error(&[
        "run",
        "--resource",
        "occ",
        "--clients",
        "100000000",
        "--max-events",
        "1",
    ]);
    assert!(err.contains("'--clients'"), "{err}");
    assert!(err.contains("4.0 GB"), "{err}");
    assert!(err.contains("at most 10,000,000"), "{err}");
}

/// Thirty thousand server replicates in 1 GB of address space: before,
/// every replicate's 58 KiB latency histogram was kept to the end (1.7 GB)
/// and the allocator failed.
#[cfg(target_os = "linux")]
#[test]
fn many_server_replicates_keep_only_their_figures() {
    let bin = env!("CARGO_BIN_EXE_herdsim");
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -v 1000000 && exec \"$0\" run --resource server --seeds 30000 \
             --duration 100ms --json -q",
            bin,
        ])
        .env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["replicates"], 30_000);
    assert_eq!(json["metrics"]["success_rate"]["mean"], 1.0);
}

#[test]
fn a_sweep_or_map_run_cut_by_a_bound_stops_as_at_the_event_limit() {
    // A year of service for one request, a window per 100 ms: `run` cuts it
    // at 5,000,000 windows (above). A sweep or map must not take the cut
    // run's figures as a point's or a cell's (before: exit 0, the figures up
    // to the cut in the row).
    let dir = workdir("bounds-sweep-cut");
    let base = [
        "--resource",
        "server",
        "--service",
        "const:8760h",
        "--requests",
        "1",
        "--horizon",
        "none",
        "--seeds",
        "1",
        "-q",
    ];
    let out = dir.join("s.csv");
    let output = cargo_bin_cmd!("herdsim")
        .arg("sweep")
        .args(base)
        .arg("--out")
        .arg(&out)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a run of point 0 was cut by one of a server run's bounds"),
        "{err}"
    );
    assert!(err.contains("5,000,000 windows"), "{err}");
    let rows = std::fs::read_to_string(&out).unwrap();
    assert_eq!(rows.lines().count(), 1, "only the header: {rows}");
    let output = cargo_bin_cmd!("herdsim")
        .args(["map", "--x", "rate", "--y", "timeout", "--rate", "1,2"])
        .args(["--timeout", "100ms"])
        .args(base)
        .arg("--out")
        .arg(dir.join("m.csv"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("was cut by one of a server run's bounds"),
        "{err}"
    );
    assert!(!dir.join("m.csv").exists());
}
