//! `herdsim run --resource server` as a user runs it: results, the
//! metastable failure the model exists to show, and bad input.

use crate::common::{mean, server_json, usage_error};

use assert_cmd::cargo::cargo_bin_cmd;

#[test]
fn the_default_server_runs_at_half_load_and_every_request_succeeds() {
    let json = server_json(&["--seeds", "4"]);
    assert_eq!(mean(&json, "success_rate"), 1.0);
    assert_eq!(mean(&json, "amplification"), 1.0);
    // 500 requests/s of 1 ms mean service: utilisation 0.5. Each 10 s run
    // measures it with an sd of about 0.01 (seen over 8 seeds: ± 0.0104 as
    // a 95% CI); the mean of 4 is within 0.05 by a margin of 10 sd.
    let utilisation = mean(&json, "utilisation");
    assert!((utilisation - 0.5).abs() < 0.05, "{utilisation}");
    assert_eq!(json["replicates"], 4);
    assert_eq!(json["storm_probability"]["stuck"], 0);
}

/// DESIGN Part two's question: at 50% utilisation, with a 100 ms timeout
/// and 3 immediate retries, does an outage leave the server stuck?
fn after_outage(outage: &str, policy: &str, max_attempts: &str) -> serde_json::Value {
    let trigger = format!("outage@2s..{outage}");
    let args = [
        "--rate",
        "500",
        "--timeout",
        "100ms",
        "--policy",
        policy,
        "--max-attempts",
        max_attempts,
        "--trigger",
        &trigger,
        // The verdict watches 7 s after the outage: the load must last
        // that long (2.5 s + 7 s < 10 s), or the runs are unresolved.
        "--duration",
        "10s",
        "--patience",
        "7s",
        "--seeds",
        "5",
    ];
    server_json(&args)
}

#[test]
fn a_short_outage_leaves_immediate_retries_stuck_and_no_retries_recover() {
    // 500 ms down: every client retries at once, the queue outgrows the
    // timeout, every attempt times out and is retried, and the server works
    // on abandoned attempts (wasted work near 1) long after the outage: all
    // 5 seeds stuck.
    let stuck = after_outage("2.5s", "no-backoff", "4");
    assert_eq!(stuck["storm_probability"]["stuck"], 5, "{stuck}");
    assert!(mean(&stuck, "wasted_work") > 0.9);
    // Stuck from 2 s to 10 s at about 3.7 attempts a request: above 3 over
    // the run (1 attempt a request before the outage).
    assert!(mean(&stuck, "amplification") > 3.0);
    // A stuck run has no recovery time: none of the five has one, so the
    // summary is empty (null), not a mean of zeros.
    let recovery = &stuck["metrics"]["recovery_ms"];
    assert_eq!(
        (recovery["n"].as_u64(), recovery["mean"].is_null()),
        (Some(0), true),
        "{recovery}"
    );
    // The same outage without retries, or a 50 ms one with them: recovered.
    for json in [
        after_outage("2.5s", "none", "1"),
        after_outage("2.05s", "no-backoff", "4"),
    ] {
        assert_eq!(json["storm_probability"]["stuck"], 0, "{json}");
        // Without retries the requests of the 0.5 s outage fail (5% of a
        // 10 s load); after it, every window is back at its level.
        assert!(mean(&json, "success_rate") > 0.9);
        // Every run recovered, within a few windows of the outage's end.
        assert_eq!(json["metrics"]["recovery_ms"]["n"], 5, "{json}");
        assert!(mean(&json, "recovery_ms") <= 500.0);
    }
}

#[test]
fn the_server_is_a_deterministic_function_of_its_seed() {
    let args = ["--timeout", "5ms", "--rate", "900", "--seeds", "3"];
    assert_eq!(server_json(&args), server_json(&args));
}

#[test]
fn bad_server_input_names_the_parameters() {
    for (args, says) in [
        (vec!["--users", "4", "--rate", "5"], vec!["--users", "rate"]),
        (
            vec!["--trigger", "outage@20s..21s", "--duration", "10s"],
            vec!["--trigger", "duration"],
        ),
        (
            vec!["--patience", "500us"],
            vec!["--patience", "at least 1ms"],
        ),
        (
            vec!["--trigger", "slow:0@1s..2s"],
            vec!["--trigger", "above 0"],
        ),
        (vec!["--workers", "0"], vec!["--workers", "1 to 10,000,000"]),
        (
            vec!["--service", "gamma:1ms"],
            vec!["--service", "expected"],
        ),
        (vec!["--fail-rate", "1.5"], vec!["--fail-rate", "0 to 1"]),
        (
            vec!["--timeout", "100ms", "--timeout-choices", "100ms/200ms"],
            vec!["--timeout-choices", "timeout"],
        ),
        (
            vec!["--timeout-choices", "100ms/0ms"],
            vec!["--timeout-choices", "at least 1us"],
        ),
        (
            vec!["--timeout-noticed", "reply"],
            vec!["--timeout-noticed", "timeout"],
        ),
        (
            vec!["--users", "3", "--rate-changes", "at-arrival"],
            vec!["--rate-changes", "users"],
        ),
        (
            vec!["--trigger", "ramp:2@1s..2s"],
            vec!["--trigger", "ramp:START/END"],
        ),
        (
            vec!["--service-per-busy", "-1ms"],
            vec!["--service-per-busy"],
        ),
        (
            vec![
                "--policy",
                "no-backoff",
                "--timeout",
                "15ms",
                "--timeout-noticed",
                "reply",
            ],
            vec!["--policy", "a timeout noticed at the reply and a horizon"],
        ),
    ] {
        let mut full = vec!["run", "--resource", "server", "-q"];
        full.extend_from_slice(&args);
        let err = usage_error(&full);
        assert!(says.iter().all(|s| err.contains(s)), "{args:?}: {err}");
    }
    // A grid mixing it with another model is refused, and so are compare's
    // herd timelines on it.
    let err = usage_error(&[
        "sweep",
        "--resource",
        "slot,server",
        "--out",
        "/nonexistent/x.csv",
    ]);
    assert!(err.contains("point 1") && err.contains("apart"), "{err}");
    let err = usage_error(&["compare", "--resource", "server", "--plot", "x.svg"]);
    assert!(
        err.contains("--plot") && err.contains("herdsim run --plot"),
        "{err}"
    );
}

#[test]
fn compare_sets_server_points_side_by_side_with_their_storm_probability() {
    let dir = crate::common::workdir("server-compare");
    let file = dir.join("c.csv").display().to_string();
    let args = [
        "compare",
        "--resource",
        "server",
        "--timeout",
        "100ms",
        "--policy",
        "no-backoff,full",
        "--base",
        "1s",
        "--max-attempts",
        "4",
        "--trigger",
        "outage@2s..2.5s",
        "--duration",
        "5s",
        "--patience",
        "2.5s",
        "--seeds",
        "5",
        "-q",
        "--csv",
        &file,
        "--force",
    ];
    let out = cargo_bin_cmd!("herdsim").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // A row per point: immediate retries stuck in all five runs (no
    // recovery time, shown as –), full jitter in none.
    let row = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row: {text}"))
            .to_string()
    };
    let (stuck, jitter) = (row("no-backoff"), row("full"));
    assert!(
        stuck.contains("1.000 (5 of 5;") && stuck.contains('–'),
        "{stuck}"
    );
    assert!(jitter.contains("0.000 (0 of 5;"), "{jitter}");
    assert!(text.starts_with("server: a server of 1 worker"), "{text}");
    // The CSV: compare's long format, a row per point and server metric.
    let mut reader = csv::Reader::from_path(&file).unwrap();
    let header = reader.headers().unwrap().clone();
    let metric = header.iter().position(|c| c == "metric").unwrap();
    let mean = header.iter().position(|c| c == "mean").unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // Each metric, then the storm's five figures (probability, its Wilson
    // bounds, decided and unresolved runs).
    assert_eq!(
        rows.len(),
        2 * (herdsim::measure::server_metrics::ServerMetric::ALL.len() + 5)
    );
    let stuck_means: Vec<&str> = rows
        .iter()
        .filter(|r| &r[metric] == "stuck")
        .map(|r| &r[mean])
        .collect();
    assert_eq!(stuck_means, ["1", "0"]);
    // The same as Markdown, and the same at one thread.
    let markdown = cargo_bin_cmd!("herdsim")
        .args(&args[..args.len() - 4])
        .arg("--markdown")
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    assert!(markdown.contains("| point | success rate |"), "{markdown}");
    assert!(
        markdown.contains(&format!("| {}", stuck.split("  ").next().unwrap())),
        "{markdown}"
    );
}

#[test]
fn server_flags_on_another_model_warn_that_they_do_nothing() {
    let out = cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "10", "--rate", "100", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--rate has no effect: only the server model uses it"),
        "{err}"
    );
}

#[test]
fn server_sweeps_shard_merge_and_resume_to_the_same_file() {
    // Sharded and merged, or cut after the first row and resumed: the same
    // bytes.
    let whole = crate::common::sweep_shards_and_resumes(
        "server-sweep",
        &[
            "--resource",
            "server",
            "--trigger",
            "outage@2s..2.05s;outage@2s..2.5s",
            "--timeout",
            "100ms",
            "--policy",
            "no-backoff",
            "--max-attempts",
            "4",
            "--duration",
            "5s",
            "--patience",
            "2.5s",
            "--seeds",
            "3",
        ],
        1,
    );
    let rows: Vec<csv::StringRecord> = csv::Reader::from_reader(whole.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect();
    let header = whole.lines().next().unwrap();
    assert!(header.contains(",stuck_mean,") && header.contains(",wasted_work_ci95,"));
    assert!(
        !header.contains(",calls_mean,"),
        "herd metrics in a server sweep"
    );
    // The 50 ms outage recovers; the 500 ms one is stuck in every seed.
    let stuck = header.split(',').position(|c| c == "stuck_mean").unwrap();
    assert_eq!((&rows[0][stuck], &rows[1][stuck]), ("0", "1"));
}

#[test]
fn series_writes_each_replicates_windows_and_shows_the_storm() {
    let dir = crate::common::workdir("server-series");
    let file = dir.join("series.csv").display().to_string();
    crate::common::succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--resource",
        "server",
        "--timeout",
        "100ms",
        "--policy",
        "no-backoff",
        "--max-attempts",
        "4",
        "--trigger",
        "outage@2s..2.5s",
        "--duration",
        "5s",
        "--seeds",
        "2",
        "-q",
        "--series",
        &file,
        "--series-all",
    ]));
    let mut reader = csv::Reader::from_path(&file).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(&header[..3], ["replicate", "window_start_ms", "arrivals"]);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let column = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (replicate, start, rate, queue) = (
        column("replicate"),
        column("window_start_ms"),
        column("success_rate"),
        column("queue"),
    );
    let (p50, p99) = (column("latency_p50_ms"), column("latency_p99_ms"));
    // Both replicates, 100 ms windows from 0; before the outage every
    // request succeeds, from 3 s on (stuck) almost none do and the queue is
    // far past one timeout's work (100 attempts).
    assert!(rows.iter().any(|r| &r[replicate] == "1"));
    for r in rows.iter().filter(|r| &r[replicate] == "0") {
        let t: f64 = r[start].parse().unwrap();
        if t < 1_900.0 && !r[rate].is_empty() {
            assert_eq!(&r[rate], "1", "window at {t} ms");
            // At 50% load on one worker of 1 ms mean service the sojourn is
            // Exp(0.5/ms): p99 9.2 ms; a window's 50 successes put its own
            // p99 far below the 100 ms timeout, and above its p50.
            let (median, tail): (f64, f64) = (r[p50].parse().unwrap(), r[p99].parse().unwrap());
            assert!(
                0.0 < median && median <= tail && tail < 100.0,
                "window at {t} ms: {median}, {tail}"
            );
        }
        if &r[column("successes")] == "0" {
            assert!(
                r[p50].is_empty() && r[p99].is_empty(),
                "a latency without a success at {t} ms"
            );
        }
        if (3_000.0..5_000.0).contains(&t) {
            assert!(
                r[rate].parse::<f64>().unwrap_or(0.0) < 0.5,
                "window at {t} ms"
            );
            assert!(r[queue].parse::<u64>().unwrap() > 100, "window at {t} ms");
        }
    }
    // Without --series-all, replicate 0 alone.
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "run",
            "--resource",
            "server",
            "--seeds",
            "2",
            "-q",
            "--force",
            "--series",
            &file,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut reader = csv::Reader::from_path(&file).unwrap();
    let replicates: std::collections::BTreeSet<String> = reader
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    assert_eq!(replicates.into_iter().collect::<Vec<_>>(), ["0"]);
    // On another model, --series is refused by name.
    let err = usage_error(&["run", "--clients", "10", "--series", &file, "--force"]);
    assert!(err.contains("--series"), "{err}");
}

#[test]
fn a_horizon_ends_the_run_and_says_so_where_an_event_limit_is_an_error() {
    // 2 s of load against a 1 s horizon: requests are still in flight when
    // it comes. The run reports what happened before it and says so; a
    // sweep keeps its row. An event limit that cuts the run is an error.
    let dir = crate::common::workdir("horizon");
    let args = [
        "--resource",
        "server",
        "--rate",
        "900",
        "--duration",
        "2s",
        "--horizon",
        "1s",
    ];
    let out = cargo_bin_cmd!("herdsim")
        .args(["run", "--json", "-q", "--seeds", "2"])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("2 of 2 replicates were cut at the horizon"),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.to_string().contains("requests"), "{report}");
    let csv = dir.join("cut.csv");
    cargo_bin_cmd!("herdsim")
        .args(["sweep", "--out", csv.to_str().unwrap(), "--quiet"])
        .args(args)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 2);
    let limited = cargo_bin_cmd!("herdsim")
        .args(["run", "-q", "--max-events", "1000"])
        .args(args)
        .output()
        .unwrap();
    assert_ne!(limited.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&limited.stderr).contains("--max-events 1,000"));
}
