//! Hedging on per-attempt timeout (`--hedge-on-timeout`, Envoy's
//! `hedge_on_per_try_timeout`), as a user runs it: what it does to a
//! heavy-tailed server beside plain retries, its header, the combinations
//! refused, the Envoy example imported as its flags, and the same bytes at
//! any thread count.

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{mean, server_json, succeed, usage_error};

/// A lightly loaded server with a heavy-tailed service (lognormal, median
/// 1 ms, σ 1.5; 4 workers at 200 requests/s, ρ ≈ 0.15), a 5 ms timeout, a
/// constant 1 ms backoff and up to 3 attempts, 10 s, 10 seeds.
const TAILED: [&str; 20] = [
    "--policy",
    "constant",
    "--base",
    "1ms",
    "--rate",
    "200",
    "--workers",
    "4",
    "--service",
    "lognormal:1ms/1.5",
    "--timeout",
    "5ms",
    "--max-attempts",
    "3",
    "--duration",
    "10s",
    "--seeds",
    "10",
    "--seed",
    "7",
];

#[test]
fn a_kept_attempt_turns_plain_retries_give_ups_into_successes() {
    let plain = server_json(&TAILED);
    let kept = server_json(&[&TAILED[..], &["--hedge-on-timeout", "on"]].concat());
    // Plain retries give up when three attempts each take over 5 ms:
    // P(S > 5 ms) = 0.1417, so about 0.1417³ = 0.28% of requests (a little
    // more with the queue's waits). Kept, every attempt may still answer,
    // and nothing else ends a request: all succeed.
    assert_eq!(mean(&kept, "success_rate"), 1.0);
    let failed = 1.0 - mean(&plain, "success_rate");
    assert!(failed > 0.001 && failed < 0.01, "plain gave up {failed}");
    // Retries go at the same timeouts, but a kept attempt that answers
    // before the next is due stops it: plain retries send about
    // 1 + 0.1417 + 0.1417² = 1.162 attempts a request, kept ones 1.119
    // (the unit test's Monte Carlo of the same rules; the queue's waits
    // add a little to both). 10 seeds of 2,000 requests give each a 95%
    // interval near ±0.005: the gap of 0.04 is far outside it.
    let (a_plain, a_kept) = (mean(&plain, "amplification"), mean(&kept, "amplification"));
    assert!(a_kept < a_plain - 0.02, "{a_kept} vs {a_plain}");
    assert!((a_kept - 1.119).abs() < 0.03, "amplification {a_kept}");
}

#[test]
fn the_run_says_it_hedges_on_timeout_and_the_csv_keeps_its_columns() {
    let out = succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--resource",
        "server",
        "--timeout",
        "20ms",
        "--hedge-on-timeout",
        "on",
        "--max-attempts",
        "3",
        "--duration",
        "1s",
        "--seeds",
        "1",
    ]));
    assert!(
        out.contains(
            "hedging on timeout (Envoy's hedge_on_per_try_timeout): a timed-out attempt is kept"
        ),
        "{out}"
    );
    let dir = crate::common::workdir("envoy-hedging-csv");
    let csv = |name: &str, extra: &[&str]| {
        let path = dir.join(name);
        succeed(
            cargo_bin_cmd!("herdsim")
                .args(["sweep", "--resource", "server", "--timeout", "20ms"])
                .args(["--max-attempts", "2", "--duration", "1s", "--seeds", "1"])
                .args(["--per-run", "--quiet", "--out", path.to_str().unwrap()])
                .args(extra),
        );
        std::fs::read_to_string(path).unwrap()
    };
    let plain = csv("plain.csv", &[]);
    let off = csv("off.csv", &["--hedge-on-timeout", "off"]);
    let on = csv("on.csv", &["--hedge-on-timeout", "on"]);
    // Off is the run without the flag, to the byte; on changes the run but
    // not the columns.
    assert_eq!(plain, off);
    assert_eq!(plain.lines().next(), on.lines().next());
    assert!(!plain.lines().next().unwrap().contains("hedge_on_timeout"));
}

#[test]
fn combinations_hedging_on_timeout_cannot_model_are_refused_in_one_line() {
    let kept = ["run", "--resource", "server", "--hedge-on-timeout", "on"];
    let cases: [(&[&str], &str); 8] = [
        (&[], "--timeout"),
        (
            &[
                "--timeout",
                "5ms",
                "--hedge-delay",
                "2ms",
                "--max-attempts",
                "2",
            ],
            "--hedge-delay",
        ),
        (&["--timeout", "5ms", "--depth", "2"], "--depth"),
        (
            &["--timeout", "5ms", "--timeout-noticed", "reply"],
            "--timeout-noticed",
        ),
        (
            &["--timeout", "5ms", "--deadline-propagation", "attempt"],
            "--deadline-propagation",
        ),
        (
            &["--timeout", "5ms", "--budget", "ratio:0.1,min:10"],
            "--budget",
        ),
        (
            &["--timeout", "5ms", "--breaker", "windowed:0.5,window:1s"],
            "--breaker",
        ),
        (
            &[
                "--timeout",
                "5ms",
                "--budget",
                "envoy:0.2,min:3,backoff:uncounted",
            ],
            "backoff:uncounted",
        ),
    ];
    for (extra, named) in cases {
        let err = usage_error(&[&kept[..], extra].concat());
        assert!(err.contains("--hedge-on-timeout"), "{extra:?}: {err}");
        assert!(err.contains(named), "{extra:?}: {err}");
    }
    let err = usage_error(&["run", "--resource", "server", "--hedge-on-timeout", "yes"]);
    assert!(
        err.contains("off, on") || err.contains("off") && err.contains("on"),
        "{err}"
    );
    // Envoy's own controls are modelled with it.
    server_json(&[
        "--hedge-on-timeout",
        "on",
        "--timeout",
        "5ms",
        "--budget",
        "envoy-max-retries:3",
        "--throttle",
        "envoy-max-requests:100",
        "--duration",
        "1s",
        "--seeds",
        "1",
    ]);
}

/// The load the Envoy example is run on: a heavy tail and a capacity drop.
const LOAD: [&str; 14] = [
    "--rate",
    "300",
    "--workers",
    "4",
    "--service",
    "lognormal:2ms/1.2",
    "--trigger",
    "capacity:1@1s..1.5s",
    "--sources",
    "5",
    "--duration",
    "3s",
    "--seeds",
    "3",
];

/// The example route's settings, written as flags.
const WRITTEN: [&str; 16] = [
    "--deadline",
    "1s",
    "--max-attempts",
    "3",
    "--retry-on",
    "failure+rejected+timeout",
    "--policy",
    "envoy",
    "--base",
    "5ms",
    "--cap",
    "50ms",
    "--timeout",
    "25ms",
    "--hedge-on-timeout",
    "on",
];

fn run_from_root(args: &[&str], threads: &str) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("RAYON_NUM_THREADS", threads)
            .args(["run", "--resource", "server", "--json", "-q"])
            .args(args),
    )
}

#[test]
fn the_envoy_hedging_example_imported_is_its_flags_at_any_thread_count() {
    let imported = run_from_root(
        &[
            &["--import", "scenarios/configs/envoy-hedge-route.yaml"][..],
            &LOAD[..],
        ]
        .concat(),
        "1",
    );
    let written = run_from_root(&[&WRITTEN[..], &LOAD[..]].concat(), "1");
    assert_eq!(imported, written);
    assert_eq!(
        written,
        run_from_root(&[&WRITTEN[..], &LOAD[..]].concat(), "2"),
        "one generator per job: the thread count changes nothing"
    );
    let json: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert!(mean(&json, "timeouts") > 0.0, "the example's timeouts fire");
    // With the cluster's budget and request limit too.
    let both = run_from_root(
        &[
            &[
                "--import",
                "scenarios/configs/envoy-hedge-route.yaml",
                "--import",
                "scenarios/configs/envoy-cluster.yaml",
            ][..],
            &LOAD[..],
        ]
        .concat(),
        "2",
    );
    let flags = run_from_root(
        &[
            &WRITTEN[..],
            &[
                "--budget",
                "envoy:0.2,min:3",
                "--throttle",
                "envoy-max-requests:400",
            ][..],
            &LOAD[..],
        ]
        .concat(),
        "1",
    );
    assert_eq!(both, flags);
}
