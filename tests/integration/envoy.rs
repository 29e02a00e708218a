//! Envoy's configuration as herdsim runs it: a run from the example route
//! and cluster files is the run written as flags, the retry budget counting
//! retries in backoff (Envoy's code) holds a stall's retries to fewer than
//! the budget that does not (envoyproxy/envoy#30205), and a bad Envoy file
//! is one line naming its field.

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{mean, succeed, usage_error, workdir};

/// `herdsim ARGS` from the crate's root: its standard output.
fn herdsim(args: &[&str]) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args),
    )
}

const SERVICE: [&str; 15] = [
    "--workers",
    "16",
    "--service",
    "lognormal:20ms/0.5",
    "--rate",
    "550",
    "--sources",
    "50",
    "--trigger",
    "capacity:0@2s..3s",
    "--duration",
    "6s",
    "--seeds",
    "4",
    "-q",
];

#[test]
fn a_run_from_envoys_files_is_the_run_written_as_flags() {
    let run = |head: &[&str]| herdsim(&[head, &SERVICE[..], &["--json"][..]].concat());
    let imported = run(&[
        "run",
        "--import",
        "scenarios/configs/envoy-route.yaml",
        "--import",
        "scenarios/configs/envoy-cluster.yaml",
        "--select",
        "route=place-order",
    ]);
    // What the files say, by Envoy's rules: num_retries 3 is 4 attempts;
    // per_try_timeout 0.5s; route timeout 3s; backoff 50 ms to 1 s; the
    // DEFAULT thresholds' budget (20%, minimum 3) and max_requests 400.
    let written = run(&[
        "run",
        "--resource",
        "server",
        "--deadline",
        "3s",
        "--max-attempts",
        "4",
        "--retry-on",
        "failure+rejected+timeout",
        "--policy",
        "envoy",
        "--base",
        "50ms",
        "--cap",
        "1s",
        "--timeout",
        "500ms",
        "--throttle",
        "envoy-max-requests:400",
        "--budget",
        "envoy:0.2,min:3",
    ]);
    assert_eq!(imported, written);
}

#[test]
fn counting_retries_in_backoff_holds_a_stalls_retries_below_the_budget_that_does_not() {
    // The committed scenario's two budgets through its 1 s stall, fewer
    // seeds. Counted, at most max(3, ⌊0.2 × in flight⌋) retries are
    // outstanding from their decision on; uncounted, every timed-out
    // attempt of the stall may enter its backoff and only those in flight
    // count, so more retries go: the attempts per request can only be
    // higher (1.10 against 1.23 in the committed run's 20 seeds; the gap is
    // far beyond the runs' spread of ±0.01).
    let dir = workdir("envoy-backoff");
    let out = dir.join("budget.csv");
    herdsim(&[
        "sweep",
        "scenarios/configs/envoy-budget-backoff.toml",
        "--seeds",
        "4",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = crate::common::csv_rows(&std::fs::read_to_string(&out).unwrap());
    let attempts = |budget: &str| -> f64 {
        let row = rows
            .iter()
            .find(|r| r["budget"] == budget)
            .unwrap_or_else(|| panic!("no row of {budget}"));
        row["attempts_mean"].parse::<f64>().unwrap() / row["requests_mean"].parse::<f64>().unwrap()
    };
    let counted = attempts("envoy:0.2,min:3");
    let uncounted = attempts("envoy:0.2,min:3,backoff:uncounted");
    assert!(uncounted > counted + 0.05, "{counted} vs {uncounted}");
}

#[test]
fn envoys_max_requests_fails_the_attempt_past_it_at_once() {
    // One worker of 10 ms at 50 requests/s, stalled for 1 s: with at most
    // two attempts in flight, nearly every request arriving in the stall
    // (about 50) finds two there and ends at once, refused and not retried;
    // without the limit none is refused.
    let run = |extra: &[&str]| {
        crate::common::server_json(
            &[
                &[
                    "--workers",
                    "1",
                    "--service",
                    "const:10ms",
                    "--rate",
                    "50",
                    "--trigger",
                    "capacity:0@1s..2s",
                    "--timeout",
                    "500ms",
                    "--duration",
                    "3s",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let limited = run(&["--throttle", "envoy-max-requests:2"]);
    assert!(mean(&limited, "refused") > 30.0, "{limited}");
    assert_eq!(mean(&limited, "refused"), mean(&limited, "gave_up"));
    assert_eq!(mean(&run(&[]), "refused"), 0.0);
}

#[test]
fn a_bad_envoy_file_is_one_line_naming_its_field() {
    let dir = workdir("envoy-bad");
    let file = dir.join("route.yaml");
    std::fs::write(
        &file,
        "match: {prefix: /}\nroute:\n  cluster: c\n  retry_policy:\n    retry_on: 5xx\n    \
         per_try_timeout: 250ms\n",
    )
    .unwrap();
    let err = usage_error(&["import", file.to_str().unwrap()]);
    assert!(
        err.contains(
            "route.retry_policy.per_try_timeout: \"250ms\" is not a protobuf JSON duration"
        ),
        "{err}"
    );
    std::fs::write(
        &file,
        "name: c\nconnect_timeout: 1s\ncircuit_breakers: {thresholds: [{max_connections: 10}]}\n",
    )
    .unwrap();
    let err = usage_error(&["run", "--import", file.to_str().unwrap()]);
    assert!(err.contains("max_connections: not modelled"), "{err}");
}
