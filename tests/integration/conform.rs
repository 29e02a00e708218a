//! `herdsim conform` as a user runs it: a synthetic trace from `herdsim
//! policy --trace`, held to the policy that made it (exit 0), to another
//! (exit 1), to a lower attempt limit (exit 1), and bad input (exit 2).
//! The statistics are the library's tests' (src/conform/tests.rs); here,
//! the binary's exit codes, its report and its JSON.

use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{usage_error, workdir};

/// `herdsim args` in `dir`: its exit code and standard output.
fn herdsim(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = cargo_bin_cmd!("herdsim")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

const FULL: [&str; 7] = [
    "--policy",
    "full",
    "--base",
    "10ms",
    "--cap",
    "1s",
    "--max-attempts",
];

#[test]
fn a_policys_trace_conforms_to_it_and_not_to_another() {
    let dir = workdir("conform");
    let (code, _) = herdsim(
        &dir,
        &[
            "policy",
            "full",
            "--base",
            "10ms",
            "--cap",
            "1s",
            "--retries",
            "4",
            "--samples",
            "300",
            "--trace",
            "trace.csv",
        ],
    );
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
    assert!(text.starts_with("call,sent_ms,done_ms,outcome\n"), "{text}");
    assert_eq!(text.lines().count(), 1 + 300 * 5);

    let held = |extra: &[&str]| {
        let mut args = vec!["conform", "trace.csv"];
        args.extend(extra);
        herdsim(&dir, &args)
    };
    let (code, out) = held(&[&FULL[..], &["5"]].concat());
    assert_eq!(code, 0, "{out}");
    let verdict = out.lines().last().unwrap();
    assert!(
        verdict.starts_with("conforms: the delays of 4 retry numbers"),
        "{out}"
    );
    assert!(
        out.contains("300 calls, 1,500 attempts (1,500 failure)"),
        "{out}"
    );

    // Equal jitter's delays are never below half the ceiling: refused.
    let (code, out) = held(&[
        "--policy",
        "equal",
        "--base",
        "10ms",
        "--cap",
        "1s",
        "--max-attempts",
        "5",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("does not conform: the delays of retry 1, 2, 3, 4"),
        "{out}"
    );

    // Three attempts at most: the fourth and fifth of every call are
    // retries the configuration stops.
    let (code, out) = held(&[&FULL[..], &["3"]].concat());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("600 retried where it stops"), "{out}");

    // JSON: the same verdict, for machines.
    let (code, out) = held(&[&FULL[..], &["5", "--json"]].concat());
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["conforms"], true);
    assert_eq!(json["test"]["delays"].as_array().unwrap().len(), 4);
    assert_eq!(json["observed_retries"], 1200);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_traces_and_flags_are_refused_in_one_line() {
    let dir = workdir("conform-bad");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "call,sent_ms,outcome\na,1,failure\na,x,ok\n").unwrap();
    let bad = bad.to_str().unwrap();
    let err = usage_error(&["conform", bad, "--policy", "full"]);
    assert!(err.contains("row 3: sent_ms is \"x\""), "{err}");
    let err = usage_error(&["conform", bad]);
    assert!(err.contains("--policy"), "{err}");
    let err = usage_error(&["conform", bad, "--policy", "full", "--alpha", "0.001"]);
    assert!(err.contains("raise --resamples to at least 999"), "{err}");
    let err = usage_error(&["conform", bad, "--policy", "full", "--alpha", "0.7"]);
    assert!(err.contains("--alpha"), "{err}");
    let err = usage_error(&[
        "conform",
        bad,
        "--policy",
        "full",
        "--throttle",
        "sre:2,window:2m",
    ]);
    assert!(err.contains("budgets and quotas only"), "{err}");
    let err = usage_error(&["conform", "missing.csv", "--policy", "full"]);
    assert!(err.contains("missing.csv"), "{err}");
    let err = usage_error(&[
        "policy",
        "full,equal",
        "--trace",
        dir.join("t.csv").to_str().unwrap(),
    ]);
    assert!(err.contains("--trace writes one policy's trace"), "{err}");
    assert!(!dir.join("t.csv").exists());
    let t = dir.join("t.csv");
    let err = usage_error(&[
        "policy",
        "full",
        "--samples",
        "400000",
        "--retries",
        "4",
        "--trace",
        t.to_str().unwrap(),
    ]);
    assert!(
        err.contains("2,000,000 attempts; a synthetic trace has at most 1,000,000"),
        "{err}"
    );
    assert!(!t.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
