//! Hedged requests on the server model (`--hedge-delay`), as a user runs
//! them: their header, the gRPC hedging example imported, the combinations
//! refused, and what hedging does to a heavy-tailed server's tail.

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{mean, server_json, succeed, usage_error};

/// A lightly loaded server with a heavy-tailed service: 4 workers, 200
/// requests/s of lognormal service (median 1 ms, σ 1.5: mean 3.1 ms, so
/// ρ ≈ 0.15), 10 s, 10 seeds.
const TAILED: [&str; 12] = [
    "--rate",
    "200",
    "--workers",
    "4",
    "--service",
    "lognormal:1ms/1.5",
    "--duration",
    "10s",
    "--seeds",
    "10",
    "--seed",
    "7",
];

fn ci(json: &serde_json::Value, metric: &str) -> f64 {
    json["metrics"][metric]["ci95"].as_f64().unwrap()
}

#[test]
fn hedging_cuts_a_heavy_tails_p99_and_costs_the_copies_it_sends() {
    let plain = server_json(&TAILED);
    let hedged = server_json(
        &[
            &TAILED[..],
            &["--hedge-delay", "5ms", "--max-attempts", "2"],
        ]
        .concat(),
    );
    // A second copy goes when the first has not answered in 5 ms: with
    // little queueing, P(S > 5 ms) = 1 − Φ(ln 5 / 1.5) = 0.1417, so
    // amplification is about 1.142. The queue's waits (ρ ≈ 0.15) add well
    // under a point, and 10 seeds' 95% interval is about ±0.005: 0.02 holds
    // both with room.
    let amplification = mean(&hedged, "amplification");
    assert!(
        (amplification - 1.1417).abs() < 0.02,
        "amplification {amplification}"
    );
    assert_eq!(mean(&plain, "amplification"), 1.0);
    // Without hedging the p99 is the service's, e^(2.326·1.5) ≈ 33 ms; with
    // it, min(S₁, 5 ms + S₂)'s, about 10 ms. Asserted with each side's 95%
    // interval, and a factor of 2 far inside the gap.
    let (p99_plain, p99_hedged) = (
        mean(&plain, "latency_p99_ms"),
        mean(&hedged, "latency_p99_ms"),
    );
    assert!(
        p99_hedged + ci(&hedged, "latency_p99_ms")
            < (p99_plain - ci(&plain, "latency_p99_ms")) / 2.0,
        "p99 {p99_hedged} hedged, {p99_plain} not"
    );
    // The copies are work the server does: its utilisation rises.
    assert!(mean(&hedged, "utilisation") > mean(&plain, "utilisation"));
    assert_eq!(mean(&hedged, "success_rate"), 1.0);
}

#[test]
fn a_hedged_run_says_so_in_its_header_and_its_csv_column() {
    let out = succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--resource",
        "server",
        "--hedge-delay",
        "20ms",
        "--max-attempts",
        "3",
        "--retry-on",
        "failure",
        "--duration",
        "1s",
        "--seeds",
        "1",
    ]));
    assert!(
        out.contains(
            "hedged: another copy every 20ms while none has answered, at most 3 copies \
             (amplification counts them)"
        ),
        "{out}"
    );
    assert!(
        out.contains("a failure outside failure fails the request"),
        "{out}"
    );
    assert!(
        !out.contains("policy full"),
        "hedging has no backoff: {out}"
    );
    let dir = crate::common::workdir("hedging-csv");
    let csv = dir.join("runs.csv");
    succeed(cargo_bin_cmd!("herdsim").args([
        "sweep",
        "--resource",
        "server",
        "--hedge-delay",
        "0,20ms",
        "--max-attempts",
        "2",
        "--duration",
        "1s",
        "--seeds",
        "1",
        "--per-run",
        "--quiet",
        "--out",
        csv.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "hedge_delay_ms").unwrap();
    assert_eq!(header[column - 1], "retry_on");
    let values: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap())
        .collect();
    assert_eq!(values, ["0", "20"]);
}

#[test]
fn the_grpc_hedging_example_imported_is_its_flags() {
    let load = [
        "--rate",
        "300",
        "--workers",
        "4",
        "--service",
        "lognormal:2ms/1.2",
        "--fail-rate",
        "0.05",
        "--sources",
        "5",
        "--duration",
        "3s",
        "--seeds",
        "3",
    ];
    let imported = server_json(
        &[
            &["--import", "scenarios/configs/grpc-hedging.json"][..],
            &load[..],
        ]
        .concat(),
    );
    let written = server_json(
        &[
            &[
                "--deadline",
                "1s",
                "--max-attempts",
                "3",
                "--hedge-delay",
                "10ms",
                "--retry-on",
                "failure",
                "--budget",
                "grpc:10,ratio:0.1",
                "--fleet",
                "1",
            ][..],
            &load[..],
        ]
        .concat(),
    );
    assert_eq!(imported, written);
    assert!(mean(&imported, "amplification") > 1.0);
}

#[test]
fn combinations_hedging_cannot_model_are_refused_in_one_line() {
    let hedged = ["run", "--resource", "server", "--hedge-delay", "5ms"];
    let cases: [(&[&str], &str); 8] = [
        (&[], "--max-attempts"),
        (&["--max-attempts", "1"], "at least 2"),
        (&["--max-attempts", "2", "--timeout", "50ms"], "--timeout"),
        (
            &["--max-attempts", "2", "--timeout-choices", "50ms/80ms"],
            "--timeout-choices",
        ),
        (&["--max-attempts", "2", "--depth", "2"], "--depth"),
        (
            &["--max-attempts", "2", "--breaker", "windowed:0.5,window:1s"],
            "--breaker",
        ),
        (
            &["--max-attempts", "2", "--budget", "ratio:0.1,min:10"],
            "--budget",
        ),
        (
            &["--max-attempts", "2", "--budget", "grpc:10,ratio:0.1"],
            "--deadline",
        ),
    ];
    for (extra, named) in cases {
        let err = usage_error(&[&hedged[..], extra].concat());
        assert!(err.contains("--hedge-delay"), "{extra:?}: {err}");
        assert!(err.contains(named), "{extra:?}: {err}");
    }
    // gRPC's throttle with a deadline is modelled.
    server_json(&[
        "--hedge-delay",
        "5ms",
        "--max-attempts",
        "2",
        "--budget",
        "grpc:10,ratio:0.1",
        "--deadline",
        "1s",
        "--duration",
        "1s",
        "--seeds",
        "1",
    ]);
    // Both policies in one method config are refused by name.
    let dir = crate::common::workdir("hedging-both");
    let both = dir.join("both.json");
    std::fs::write(
        &both,
        r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "1s"},
        "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s",
        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
    )
    .unwrap();
    let err = usage_error(&["import", both.to_str().unwrap()]);
    assert!(err.contains("methodConfig[0].hedgingPolicy"), "{err}");
    assert!(err.contains("both retryPolicy and hedgingPolicy"), "{err}");
}
