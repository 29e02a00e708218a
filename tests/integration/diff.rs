//! `herdsim diff` as a user runs it: one AWS config under two botocore
//! releases (1.43's 2.0 quota and the current 1.44's 2026 one) on one
//! service, and bad input.

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::usage_error;

const SERVICE: [&str; 14] = [
    "--rate",
    "500",
    "--workers",
    "1",
    "--service",
    "exp:1ms",
    "--timeout",
    "100ms",
    "--stall",
    "outage",
    "--seeds",
    "4",
    "--refine",
    "0",
];

#[test]
fn the_2026_quota_spends_a_full_outages_retries_sooner() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/configs/aws-config");
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "diff",
            config,
            config,
            "--select-a",
            "sdk=botocore==1.43.67",
            "-q",
            "--json",
        ])
        .args(SERVICE)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let figures = json["figures"].as_array().unwrap();
    let outage = figures
        .iter()
        .find(|f| f["figure"] == "attempts per request in a full outage")
        .unwrap();
    // The quota of 500 tokens at a cost of 5 lets 100 retries through a
    // full outage of 5,000 requests; at a cost of 14, 35 (the quota's own
    // arithmetic): 1.020 against 1.007 attempts per request, the same in
    // every seed, so far beyond the noise.
    assert!(
        (outage["difference"].as_f64().unwrap() + 0.013).abs() < 0.001,
        "{outage}"
    );
    assert!(outage["z"].as_f64().unwrap() < -3.0, "{outage}");
    let summary = json["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("B differs most in attempts per request in a full outage"),
        "{summary}"
    );
    assert!(
        summary.contains("budget tokens:500,cost:5,refund:1,timeout-cost:10 → tokens:500,cost:14"),
        "{summary}"
    );
    // The same file read the same way: nothing differs.
    let out = cargo_bin_cmd!("herdsim")
        .args(["diff", config, config, "-q"])
        .args(SERVICE)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.trim_end().ends_with("; no setting differs"), "{text}");
    assert!(
        text.contains("A and B do not differ beyond the seeds' noise"),
        "{text}"
    );
}

#[test]
fn diff_refuses_what_assess_refuses_in_one_line() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/configs/aws-config");
    let err = usage_error(&["diff", config, "missing-config"]);
    assert!(err.contains("missing-config"), "{err}");
    let err = usage_error(&[
        "diff",
        config,
        config,
        "--rate",
        "2000",
        "--workers",
        "1",
        "--service",
        "exp:1ms",
    ]);
    assert!(err.contains("offered load is ρ = 2.000"), "{err}");
    let err = usage_error(&[
        "diff",
        config,
        config,
        "--workers",
        "1",
        "--trigger",
        "outage@1s..2s",
    ]);
    assert!(err.contains("trigger"), "{err}");
}
