//! Retry controls and server controls on the server model, as a user runs
//! them: the metastable case of DESIGN Part two with each control, what each
//! measurably does, and bad input.

use crate::common::{mean, server_json, usage_error};

use assert_cmd::cargo::cargo_bin_cmd;

/// The metastable case (500/s on one worker of 1 ms, 100 ms timeout, 3
/// immediate retries, 500 ms outage at 2 s, 10 s of load), 5 seeds, with
/// `extra`; the JSON report.
fn metastable(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "--rate",
        "500",
        "--timeout",
        "100ms",
        "--duration",
        "10s",
        // Judged over 7 s after the outage's end, within the 10 s load.
        "--patience",
        "7s",
        "--policy",
        "no-backoff",
        "--max-attempts",
        "4",
        "--trigger",
        "outage@2s..2.5s",
        "--seeds",
        "5",
    ];
    args.extend_from_slice(extra);
    server_json(&args)
}

fn stuck(json: &serde_json::Value) -> u64 {
    json["storm_probability"]["stuck"].as_u64().unwrap()
}

#[test]
fn every_retry_budget_and_breaker_holds_the_metastable_case_up() {
    // Without a control all 5 seeds stay stuck (the server test's claim).
    assert_eq!(stuck(&metastable(&[])), 5);
    for control in [
        ["--budget", "tokens:500,cost:5,refund:1,timeout-cost:10"],
        ["--budget", "ratio:0.1,min:10"],
        ["--budget", "earned:3000,cost:100,deposit:10"],
        ["--budget", "grpc:10,ratio:0.1"],
        ["--budget", "finagle:0.2,ttl:10s,min:10"],
        ["--budget", "envoy:0.2,min:3"],
        ["--breaker", "windowed:0.1,window:200ms"],
        ["--breaker", "classic:0.1,window:200ms,calls:100,open:100ms"],
    ] {
        let json = metastable(&control);
        assert_eq!(stuck(&json), 0, "{control:?}: {json}");
        // Retries stay a small share: at most 20% more attempts than
        // requests over the run (3.4 attempts a request without).
        assert!(mean(&json, "amplification") < 1.2, "{control:?}");
        // The requests of the outage still fail: 500 ms of 10 s.
        assert!(mean(&json, "success_rate") > 0.9, "{control:?}");
        let requests = mean(&json, "requests");
        let ended = mean(&json, "successes") + mean(&json, "gave_up");
        assert!(
            (requests - ended).abs() < 1e-9,
            "{control:?}: every request ends"
        );
    }
    // Brooker's per-client controls, each client its own state.
    for control in ["adaptive:5,deposit:0.1", "cumulative:0.1"] {
        let key = if control.starts_with("adaptive") {
            "--budget"
        } else {
            "--breaker"
        };
        let json = metastable(&[key, control, "--fleet", "1"]);
        assert_eq!(stuck(&json), 0, "{control}: {json}");
    }
}

#[test]
fn server_side_controls_that_shed_stale_work_hold_it_up_and_codel_alone_does_not() {
    for control in [
        ["--discipline", "lifo"],
        ["--discipline", "adaptive-lifo:50ms"],
        ["--shed-wait", "100ms"],
        ["--deadline-propagation", "attempt"],
        ["--deadline-propagation", "call"],
    ] {
        let json = metastable(&control);
        assert_eq!(stuck(&json), 0, "{control:?}: {json}");
    }
    // Deadline propagation cuts work on attempts whose clients have gone:
    // wasted work falls from near 1 (stuck) to a few percent.
    let json = metastable(&["--deadline-propagation", "attempt"]);
    assert!(mean(&json, "wasted_work") < 0.1, "{json}");
    // CoDel drops from the head, but each drop is a rejection its client
    // retries at once: the retries keep the queue standing, as many
    // attempts go out as without it, and every seed stays stuck.
    let codel = metastable(&["--discipline", "codel:5ms,interval:100ms"]);
    assert_eq!(stuck(&codel), 5, "{codel}");
    assert!(mean(&codel, "rejected") > 1_000.0);
}

#[test]
fn shedding_by_expected_wait_caps_the_queue_at_its_bound() {
    // One worker of 1 ms mean: a 10 ms bound admits an arrival while
    // (queue + 1) × 1 ms ≤ 10 ms, so the queue never passes 10.
    let json = metastable(&["--shed-wait", "10ms"]);
    assert!(
        json["metrics"]["queue_peak"]["max"].as_f64().unwrap() <= 10.0,
        "{json}"
    );
    assert!(mean(&json, "rejected") > 0.0);
}

#[test]
fn refused_attempts_end_their_requests_as_given_up() {
    // The SRE book's throttle refuses locally; its 2-minute memory of the
    // outage's failures outlasts the 8 s after it, so success stays below
    // its level before the outage: stuck, by refusals, not by the server.
    let json = metastable(&["--throttle", "sre:2,window:2m"]);
    assert!(mean(&json, "refused") > 100.0, "{json}");
    assert!(mean(&json, "refused") <= mean(&json, "gave_up"));
    let requests = mean(&json, "requests");
    let ended = mean(&json, "successes") + mean(&json, "gave_up");
    assert!((requests - ended).abs() < 1e-9);
    // A shorter memory forgets it within the run.
    let short = metastable(&["--throttle", "sre:2,window:1s"]);
    assert!(stuck(&short) < stuck(&json), "{short}");
}

#[test]
fn the_aws_rate_limiter_backs_off_after_rejections() {
    // A 50-place queue rejects during the storm; the adaptive mode's rate
    // limiter, switched on by the first rejection, holds attempts back:
    // far fewer rejections, and a higher success rate.
    let without = metastable(&["--queue-limit", "50"]);
    let with = metastable(&[
        "--queue-limit",
        "50",
        "--throttle",
        "aws-adaptive:0.4,beta:0.7",
    ]);
    assert!(
        mean(&with, "rejected") * 10.0 < mean(&without, "rejected"),
        "{with}"
    );
    assert!(mean(&with, "success_rate") > mean(&without, "success_rate"));
}

#[test]
fn controls_are_deterministic_at_any_thread_count() {
    let run = |threads: &str| {
        cargo_bin_cmd!("herdsim")
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "run",
                "--resource",
                "server",
                "--json",
                "-q",
                "--seeds",
                "6",
            ])
            .args(["--timeout", "100ms", "--trigger", "outage@2s..2.3s"])
            .args(["--policy", "full", "--base", "20ms", "--max-attempts", "4"])
            .args([
                "--throttle",
                "sre:2,window:1s",
                "--fleet",
                "1",
                "--sources",
                "4",
            ])
            .args([
                "--breaker",
                "classic:0.2,window:200ms,calls:20,open:50ms,jitter:0.5",
            ])
            .output()
            .unwrap()
            .stdout
    };
    let one = run("1");
    assert!(!one.is_empty());
    assert_eq!(one, run("4"));
}

#[test]
fn bad_control_input_names_the_parameter_and_what_it_accepts() {
    for (args, says) in [
        (
            vec!["--budget", "tokens:0,cost:5,refund:1"],
            vec!["budget", "1 to"],
        ),
        (vec!["--breaker", "classic:0.1"], vec!["breaker", "window"]),
        (
            vec!["--breaker", "earned:1,cost:1,deposit:1"],
            vec!["breaker", "cumulative"],
        ),
        (
            vec!["--throttle", "sre:0.5,window:2m"],
            vec!["throttle", "from 1"],
        ),
        (
            vec!["--discipline", "codel:5ms"],
            vec!["discipline", "interval"],
        ),
        (
            vec!["--deadline-propagation", "call"],
            vec!["deadline-propagation", "timeout"],
        ),
        (
            vec!["--shed-wait", "10ms", "--workers", "inf"],
            vec!["shed-wait", "workers"],
        ),
    ] {
        let mut full = vec!["run", "--resource", "server", "-q"];
        full.extend_from_slice(&args);
        let err = usage_error(&full);
        assert!(says.iter().all(|s| err.contains(s)), "{args:?}: {err}");
    }
    // A rate limiter delays attempts: only the server model does.
    let err = usage_error(&["run", "-q", "--throttle", "aws-adaptive:0.4,beta:0.7"]);
    assert!(
        err.contains("throttle") && err.contains("resource"),
        "{err}"
    );
}

#[test]
fn controls_lists_every_control_with_its_source() {
    let out = cargo_bin_cmd!("herdsim").arg("controls").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for about in herdsim::control::ABOUT {
        assert!(text.contains(about.syntax), "{}", about.name);
        assert!(text.contains(about.source), "{}", about.name);
    }
    for about in herdsim::control::SERVER_ABOUT {
        assert!(text.contains(about.syntax), "{}", about.key);
        assert!(text.contains(about.source), "{}", about.key);
    }
}
