//! The `herdsim` binary as a user runs it.

use crate::common::usage_error;

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn herdsim(args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("herdsim").args(args).assert()
}

fn stdout_of(args: &[&str], threads: &str) -> String {
    crate::common::succeed(
        cargo_bin_cmd!("herdsim")
            .args(args)
            .env("RAYON_NUM_THREADS", threads),
    )
}

fn json_of(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&stdout_of(&all, "2")).unwrap()
}

#[test]
fn the_main_job_prints_a_table_with_the_workload_above_it() {
    let out = stdout_of(
        &["run", "--clients", "1000", "--policy", "decorrelated"],
        "2",
    );
    assert!(
        out.starts_with("1,000 clients, all first calls at t = 0"),
        "{out}"
    );
    assert!(
        out.contains("policy decorrelated (base 100ms, cap 20s)"),
        "{out}"
    );
    assert!(out.contains("1 replicate from master seed 42"), "{out}");
    for metric in [
        "calls",
        "last_success_ms",
        "peak_retries_pct",
        "completion_p99_ms",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(metric)),
            "{metric} missing:\n{out}"
        );
    }
}

#[test]
fn no_jitter_makes_500_500_calls_through_the_cli() {
    let v = json_of(&["run", "--policy", "none", "--seeds", "3"]);
    assert_eq!(v["metrics"]["calls"]["mean"], 500_500.0);
    assert_eq!(v["metrics"]["calls"]["sd"], 0.0);
    assert_eq!(v["replicates"], 3);
    assert_eq!(v["workload"]["clients"], 1000);
    assert_eq!(v["workload"]["cap_ms"], 20_000.0);
    let table = stdout_of(&["run", "--policy", "none"], "1");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("calls") && l.contains("500,500")),
        "{table}"
    );
}

#[test]
fn json_has_every_metric_with_its_summary() {
    let v = json_of(&[
        "run",
        "--policy",
        "full",
        "--clients",
        "200",
        "--seeds",
        "5",
    ]);
    let metrics = v["metrics"].as_object().unwrap();
    assert_eq!(metrics.len(), herdsim::measure::metrics::Metric::ALL.len());
    for (name, s) in metrics {
        for field in ["mean", "sd", "ci95", "min", "max"] {
            assert!(s[field].is_number(), "{name}.{field}");
        }
        assert!(s["min"].as_f64() <= s["mean"].as_f64() && s["mean"].as_f64() <= s["max"].as_f64());
    }
    let single = json_of(&["run", "--clients", "50"]);
    assert!(
        single["metrics"]["calls"]["ci95"].is_null(),
        "one replicate has no CI"
    );
}

#[test]
fn the_same_seed_gives_byte_identical_output_at_any_thread_count() {
    for extra in [&[][..], &["--json"][..]] {
        let mut args = vec![
            "run",
            "--policy",
            "decorrelated",
            "--seeds",
            "16",
            "--clients",
            "300",
        ];
        args.extend_from_slice(extra);
        let one = stdout_of(&args, "1");
        let two = stdout_of(&args, "2");
        assert_eq!(one, two, "RAYON_NUM_THREADS=1 and =2 differ");
        assert_eq!(one, stdout_of(&args, "2"), "a second run differs");
    }
}

#[test]
fn both_event_queues_give_byte_identical_output() {
    let herd = ["--clients", "2000", "--policy", "decorrelated"];
    let spread = [
        "--clients",
        "2000",
        "--policy",
        "full",
        "--arrivals",
        "uniform:2s",
    ];
    let server = [
        "--resource",
        "server",
        "--timeout",
        "100ms",
        "--policy",
        "no-backoff",
        "--max-attempts",
        "4",
        "--trigger",
        "outage@1s..1.3s",
        "--duration",
        "3s",
    ];
    for extra in [&herd[..], &spread[..], &server[..]] {
        let mut args = vec!["run", "--seeds", "4"];
        args.extend_from_slice(extra);
        let radix = stdout_of(&[&args[..], &["--queue", "radix"]].concat(), "2");
        let heap = stdout_of(&[&args[..], &["--queue", "heap"]].concat(), "2");
        assert_eq!(radix, heap, "{extra:?}");
        assert_eq!(
            radix,
            stdout_of(&args, "2"),
            "auto is radix on the slot and server"
        );
    }
}

#[test]
fn bench_times_every_size_and_queue_and_the_fan_out() {
    let args = [
        "bench",
        "--clients",
        "200,1000",
        "--queue",
        "radix,heap",
        "--min-time",
        "1ms",
        "--fan-out",
        "20",
        "--server-requests",
        "0",
        "--quiet",
    ];
    let out = stdout_of(&args, "2");
    // A row per size and queue: clients, queue, calls, runs, median, events/s.
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with("200 ") || l.starts_with("1,000 "))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for pair in rows.chunks(2) {
        assert_eq!(pair[0][1], "radix");
        assert_eq!(pair[1][1], "heap");
        assert_eq!(pair[0][2], pair[1][2], "both queues make the same calls");
    }
    for row in &rows {
        let rate: f64 = row[5].trim_end_matches(" M").parse().unwrap();
        assert!(rate > 0.0, "{row:?}");
    }
    assert!(
        out.contains("seed fan-out: 20 runs of 1,000 clients"),
        "{out}"
    );
    assert!(out.contains("(results identical)"), "{out}");
}

#[test]
fn another_seed_gives_other_results() {
    let args = ["run", "--policy", "full", "--clients", "300", "--json"];
    let a = stdout_of(&[&args[..], &["--seed", "1"]].concat(), "2");
    let b = stdout_of(&[&args[..], &["--seed", "2"]].concat(), "2");
    assert_ne!(a, b);
}

#[test]
fn a_cap_below_the_base_is_valid() {
    let v = json_of(&[
        "run",
        "--policy",
        "full",
        "--base",
        "100ms",
        "--cap",
        "20ms",
        "--clients",
        "100",
    ]);
    assert_eq!(v["metrics"]["successes"]["mean"], 100.0);
}

#[test]
fn bad_input_gets_one_line_naming_the_flag_and_exit_code_2() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["--clients", "0"], "--clients", "1 to 100,000,000"),
        (&["--clients", "-5"], "--clients", "1 to 100,000,000"),
        (&["--clients=-5"], "--clients", "1 to 100,000,000"),
        (&["--clients", "many"], "--clients", "whole number"),
        (&["--base", "0"], "--base", "at least 1us"),
        (&["--base", "0ms"], "--base", "at least 1us"),
        (&["--capacity", "0"], "--capacity", "from 0.001 to 1000"),
        (&["--capacity", "-2"], "--capacity", "from 0.001 to 1000"),
        (&["--capacity", "NaN"], "--capacity", "from 0.001 to 1000"),
        (&["--base", "NaN"], "--base", "a duration such as"),
        (&["--cap", "10 parsecs"], "--cap", "unknown unit 'parsecs'"),
        (&["--window", "0"], "--window", "at least 1us"),
        (
            &["--jitter-factor", "1.5"],
            "--jitter-factor",
            "from 0 to 1",
        ),
        (
            &["--jitter-factor", "-0.1"],
            "--jitter-factor",
            "from 0 to 1",
        ),
        (
            &["--policy", "jittery"],
            "--policy",
            "none, equal, full, decorrelated, decorrelated-ceiling, decorrelated-v2, decorrelated-attempt, grpc-connection, grpc-retry, fibonacci, no-backoff, constant, linear",
        ),
        (
            &["--policy", "grpc"],
            "--policy",
            "policy 'grpc' is ambiguous: choose grpc-connection (gRPC's connection backoff) or \
             grpc-retry (gRPC's retry policy, gRFC A6)",
        ),
        (
            &["--multiplier", "1"],
            "--multiplier",
            "above 1 and at most 100",
        ),
        (
            &["--multiplier", "100.5"],
            "--multiplier",
            "above 1 and at most 100",
        ),
        (
            &["--multiplier", "NaN"],
            "--multiplier",
            "above 1 and at most 100",
        ),
        (
            &[
                "--resource",
                "server",
                "--trigger",
                "outage@1s..2s,spike:2@3s..4s",
            ],
            "--trigger",
            "join triggers with +, not commas",
        ),
        (&["--seeds", "0"], "--seeds", "1 to 1,000,000"),
        (&["--seed", "-1"], "--seed", "whole number"),
        (&["--frobnicate"], "--frobnicate", "unexpected argument"),
        (
            &["--policy", "none", "--cap", "8760h", "--base", "8760h"],
            "--cap",
            "clock stops at 584 years",
        ),
    ];
    for (args, flag, accepted) in cases {
        // Exit code 2, one line, nothing on stdout, no panic:
        let stderr = usage_error(&[&["run"][..], args].concat());
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(
            stderr.contains(flag),
            "{args:?} does not name {flag}: {stderr}"
        );
        assert!(
            stderr.contains(accepted),
            "{args:?} does not say '{accepted}': {stderr}"
        );
    }
}

#[test]
fn bad_queue_and_bench_flags_get_one_line_and_exit_code_2() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["run", "--queue", "fibonacci"],
            "--queue",
            "expected one of auto, radix, heap",
        ),
        (
            &["bench", "--queue", "radix,splay"],
            "--queue",
            "expected one of auto, radix, heap",
        ),
        (
            &["bench", "--clients", "0"],
            "--clients",
            "1 to 100,000,000",
        ),
        (&["bench", "--min-time", "0"], "--min-time", "at least 1us"),
        (&["bench", "--fan-out", "-1"], "--fan-out", "0 to 100,000"),
        (
            &["bench", "--server-requests", "1e12"],
            "--server-requests",
            "0 to 100,000,000",
        ),
        (
            &["bench", "--policy", "jittery"],
            "--policy",
            "decorrelated",
        ),
    ];
    for (args, flag, accepted) in cases {
        let stderr = usage_error(args);
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        assert!(stderr.contains(accepted), "{args:?}: {stderr}");
    }
}

#[test]
fn the_bare_grpc_name_is_refused_everywhere_a_policy_is_named() {
    let says = "choose grpc-connection (gRPC's connection backoff) or grpc-retry";
    for args in [
        &["policy", "grpc"][..],
        &["policy", "full,grpc", "--retries", "3"][..],
        &[
            "sweep",
            "--policy",
            "full,grpc",
            "--out",
            "never-written.csv",
        ][..],
        &["compare", "--policy", "grpc", "--clients", "10"][..],
    ] {
        let err = usage_error(args);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("'grpc'"), "{args:?}: {err}");
    }
    assert!(!std::path::Path::new("never-written.csv").exists());
    // A scenario file's key gets the same reason, with its file and key.
    let dir = crate::common::workdir("grpc-scenario");
    let scenario = dir.join("s.toml");
    fs::write(&scenario, "policy = \"grpc\"\n").unwrap();
    let err = usage_error(&["compare", scenario.to_str().unwrap()]);
    assert!(err.contains(says) && err.contains("policy"), "{err}");
}

#[test]
fn grpc_retry_shows_its_multiplier_and_jitters_the_first_retry() {
    // The README's example: the formula with the multiplier in it.
    let out = stdout_of(
        &[
            "policy",
            "grpc-retry",
            "--multiplier",
            "1.5",
            "--base",
            "100ms",
            "--cap",
            "10s",
            "--retries",
            "4",
        ],
        "1",
    );
    assert!(
        out.starts_with(
            "policy grpc-retry (base 100ms, cap 10s, multiplier 1.5): d = c_k·U[0.8, 1.2], the \
             first retry too; c_k = min(cap, base·1.5^(k−1))\n"
        ),
        "{out}"
    );
    // Retry 3's ceiling is 225 ms: its delays lie in [180, 270] ms.
    let row: Vec<f64> = out
        .lines()
        .find(|l| l.starts_with("3 "))
        .unwrap()
        .split_whitespace()
        .skip(1)
        .take(3)
        .map(|v| v.replace(',', "").parse().unwrap())
        .collect();
    assert!(
        row[0] >= 180.0 && row[2] <= 270.0 && (row[1] - 225.0).abs() < 3.0,
        "{row:?}"
    );
    // Full jitter's schedule names a multiplier other than 2, and only then.
    let full = stdout_of(
        &["policy", "full", "--multiplier", "3", "--retries", "2"],
        "1",
    );
    assert!(full.contains("multiplier 3): d = U[0, c_k]; c_k = min(cap, base·3^(k−1))"));
    let doubling = stdout_of(&["policy", "full", "--retries", "2"], "1");
    assert!(doubling.starts_with("policy full (base 100ms, cap 20s): d = U[0, c_k]\n"));
    // The README's herd: gRPC's connection backoff puts 9,999 of 10,000 first
    // retries in one window; its retry policy spreads them.
    let peak = |policy: &[&str]| -> f64 {
        let json = json_of(
            &[
                &["run", "--clients", "10000", "--base", "1s", "--cap", "120s"][..],
                policy,
            ]
            .concat(),
        );
        json["metrics"]["peak_retries"]["mean"].as_f64().unwrap()
    };
    assert_eq!(peak(&["--policy", "grpc-connection"]), 9_999.0);
    assert_eq!(
        peak(&["--policy", "grpc-retry", "--multiplier", "1.6"]),
        38.0
    );
}

#[test]
fn a_multiplier_given_to_a_policy_without_one_is_a_warning() {
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "run",
            "--policy",
            "decorrelated",
            "--multiplier",
            "1.5",
            "--clients",
            "10",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "warning: --multiplier has no effect: the decorrelated policy does not use it\n"
    );
}

#[test]
fn triggers_lists_every_kind_with_its_meaning() {
    let out = stdout_of(&["triggers"], "1");
    for about in &herdsim::model::server::TRIGGERS {
        assert!(
            out.contains(&format!("  {}\n", about.syntax)),
            "{}",
            about.syntax
        );
        assert!(out.contains(&format!("example: --trigger {}\n", about.example)));
    }
    assert!(out.contains("joined by +"), "{out}");
}

#[test]
fn policies_lists_every_policy_with_its_formula() {
    let out = stdout_of(&["policies"], "1");
    for kind in herdsim::PolicyKind::ALL {
        assert!(
            out.lines().any(|l| l.starts_with(kind.name())),
            "{kind} missing"
        );
        assert!(out.contains(kind.formula()), "{kind} formula missing");
    }
}

#[test]
fn help_and_version_succeed() {
    herdsim(&["--help"])
        .success()
        .stdout(predicates::str::contains("run"));
    herdsim(&["run", "--help"])
        .success()
        .stdout(predicates::str::contains("--jitter-factor"));
    herdsim(&["--version"])
        .success()
        .stdout(predicates::str::contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn no_subcommand_shows_help_and_fails() {
    herdsim(&[])
        .code(2)
        .stderr(predicates::str::contains("Usage"));
}

#[test]
fn bench_times_the_server_model_beside_the_python_reference() {
    let bench = |extra: &[&str]| {
        crate::common::succeed(
            cargo_bin_cmd!("herdsim")
                .args([
                    "bench",
                    "--clients",
                    "10",
                    "--min-time",
                    "1us",
                    "--fan-out",
                    "0",
                    "-q",
                ])
                .args(extra),
        )
    };
    let sizes = ["--server-requests", "2000,5000"];
    let text = bench(&sizes);
    assert!(text.contains("server model: open-loop M/M/4"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" radix ") && l.ends_with(" KB"))
        .collect();
    assert_eq!(rows.len(), 2, "one row per size: {text}");
    assert!(text.contains("bytes per request in flight"), "{text}");
    // The minimal Rust loop of the same run is timed at every size, and
    // herdsim's loop given as a share of its speed.
    let minimal: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("minimal Rust loop of the same run"))
        .collect();
    assert_eq!(minimal.len(), 2, "one line per size: {text}");
    assert!(
        minimal[0].contains("2,0") && minimal[1].contains("5,0"),
        "{text}"
    );
    assert!(
        minimal.iter().all(|l| l.ends_with("% of its speed")),
        "{text}"
    );
    // The reference runs where python3 is, and says so where it is not.
    let has_python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let reference: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("python heapq reference"))
        .collect();
    if has_python {
        assert_eq!(reference.len(), 2, "{text}");
        // Small sizes take the most runs, in ten rounds of four.
        assert!(
            reference[0].contains("2,0") && reference[0].contains("fastest of 40 runs"),
            "{text}"
        );
        assert!(text.contains("× per event"), "{text}");
    } else {
        assert!(text.contains("python3 not available, skipped"), "{text}");
    }
    // --no-reference skips it; 0 skips the section.
    assert!(!bench(&[&sizes[..], &["--no-reference"]].concat()).contains("python heapq"));
    assert!(!bench(&["--server-requests", "0"]).contains("server model"));
}

#[test]
fn a_huge_thread_count_is_capped_at_the_machines_parallelism() {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "bench",
            "--clients",
            "10",
            "--min-time",
            "1us",
            "--fan-out",
            "4",
            "--server-requests",
            "0",
            "-q",
        ])
        .env("RAYON_NUM_THREADS", "1000")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("{available} threads"))
            || (available == 1 && text.contains("1 thread")),
        "{text}"
    );
    assert!(!text.contains("1000 threads"), "{text}");
}

#[test]
fn values_starting_with_a_dash_get_the_flags_own_message() {
    for (args, flag) in [
        (&["run", "--arrivals", "-1"][..], "--arrivals"),
        (&["run", "--down", "-1s..5s"][..], "--down"),
        (&["run", "--budget", "-inf"][..], "--budget"),
        (&["bench", "--queue", "-0"][..], "--queue"),
    ] {
        let err = usage_error(args);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
    let err = usage_error(&["run", "--down", "-1s..5s"]);
    assert!(err.contains("cannot be negative"), "{err}");
    assert!(usage_error(&["run", "--arrivals", "herd:"]).contains("--arrivals"));
    assert!(
        usage_error(&["run", "--base", "1000.0001"]).contains("not a whole number of microseconds")
    );
}

#[test]
fn help_that_cannot_be_written_fails() {
    // /dev/full refuses every write: the help was not shown.
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .args(["run", "--help"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("No space left on device"), "{err}");
}
