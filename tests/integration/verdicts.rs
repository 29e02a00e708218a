//! Verdicts a user can trust (issue 33): recovered, stuck or unresolved,
//! never flipped by the load's length; what a run is, said before its
//! numbers; the server workload in JSON and its numbers in CSV.

use crate::common::{server_json, succeed, workdir};

use assert_cmd::cargo::cargo_bin_cmd;

/// The SRE's service of issue 33: 16 workers, lognormal median 20 ms, 600
/// requests/s (ρ = 0.785), 1 s timeout, full jitter from 100 ms capped at
/// 1 s, 5 attempts, and a 3 s database stall (no worker serves) at 2 s.
const SRE: &[&str] = &[
    "--rate",
    "600",
    "--workers",
    "16",
    "--service",
    "lognormal:20ms/0.3",
    "--timeout",
    "1s",
    "--policy",
    "full",
    "--base",
    "100ms",
    "--cap",
    "1s",
    "--max-attempts",
    "5",
    "--trigger",
    "capacity:0@2s..5s",
];

/// The metastable case of DESIGN Part two: 500/s on one 1 ms worker, 100 ms
/// timeout, a 500 ms outage at 2 s.
const METASTABLE: &[&str] = &[
    "--rate",
    "500",
    "--timeout",
    "100ms",
    "--trigger",
    "outage@2s..2.5s",
];

/// Each replicate's (verdict, recovery time) of `base` + `extra` over 3
/// seeds, and the run's load duration, ms.
fn verdicts(base: &[&str], extra: &[&str]) -> (Vec<(String, Option<f64>)>, f64) {
    let mut args = base.to_vec();
    args.extend_from_slice(extra);
    args.extend(["--seeds", "3", "--per-run"]);
    let json = server_json(&args);
    let runs = json["runs"].as_array().unwrap();
    let each = runs
        .iter()
        .map(|r| {
            (
                r["verdict"].as_str().unwrap().to_string(),
                r["metrics"]["recovery_ms"].as_f64(),
            )
        })
        .collect();
    (each, json["workload"]["duration_ms"].as_f64().unwrap())
}

#[test]
fn the_verdict_at_the_defaults_is_the_verdict_with_the_load_five_times_longer() {
    let workloads: [(&[&str], &[&str], &str); 4] = [
        // A retry quota that lets the service drain slowly: recovered.
        (
            SRE,
            &["--budget", "tokens:500,cost:5,refund:1,timeout-cost:10"],
            "recovered",
        ),
        // Immediate retries, 4 attempts: stuck.
        (
            METASTABLE,
            &["--policy", "no-backoff", "--max-attempts", "4"],
            "stuck",
        ),
        // No retries: recovered at once.
        (METASTABLE, &["--max-attempts", "1"], "recovered"),
        // The AWS adaptive limiter holding requests at the client (a queue
        // of 200 rejects, so it throttles): successes come back only after
        // minutes in the client's queue, which is not a recovery.
        (
            SRE,
            &[
                "--queue-limit",
                "200",
                "--throttle",
                "aws-adaptive:0.4,beta:0.7",
            ],
            "stuck",
        ),
    ];
    for (base, extra, expected) in workloads {
        let (default, duration_ms) = verdicts(base, extra);
        assert!(
            default.iter().all(|(v, _)| v == expected),
            "{extra:?}: {default:?}"
        );
        let longer = format!("{}ms", 5.0 * duration_ms);
        let mut extra_longer = extra.to_vec();
        extra_longer.extend(["--duration", &longer]);
        let (long, _) = verdicts(base, &extra_longer);
        // Not only the verdict: the recovery time is the same to the bit.
        assert_eq!(default, long, "{extra:?}");
    }
}

#[test]
fn a_load_that_ends_too_soon_leaves_the_runs_unresolved_and_says_so() {
    // The case: the SRE's service with the AWS quota at a 10 s load
    // read "10 of 10 stuck"; the load simply ended before recovery could.
    let mut args = SRE.to_vec();
    args.extend([
        "--budget",
        "tokens:500,cost:5,refund:1,timeout-cost:10",
        "--duration",
        "10s",
        "--seeds",
        "4",
    ]);
    let json = server_json(&args);
    let storm = &json["storm_probability"];
    assert_eq!(
        (storm["stuck"].as_u64(), storm["runs"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(storm["unresolved"], 4);
    assert!(storm["probability"].is_null(), "{storm}");
    // No recovery time and no stuck value for an unresolved run.
    assert_eq!(json["metrics"]["stuck"]["n"], 0);
    assert_eq!(json["metrics"]["unresolved"]["mean"], 1.0);
    // The table says why, before the numbers and beside the storm line.
    let table = succeed(
        cargo_bin_cmd!("herdsim")
            .args(["run", "--resource", "server", "-q"])
            .args(&args),
    );
    let verdict_line = table.lines().find(|l| l.starts_with("verdict")).unwrap();
    assert!(
        verdict_line.contains("the load ends at about 10s, before the window does"),
        "{verdict_line}"
    );
    assert!(
        table.contains("no run decided, 4 unresolved (the load ended before the patience window"),
        "{table}"
    );
}

#[test]
fn every_server_run_says_its_offered_load_and_warns_past_one() {
    let table = succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--resource",
        "server",
        "--rate",
        "900",
        "--workers",
        "1",
        "--service",
        "exp:1ms",
        "-q",
    ]));
    let lines: Vec<&str> = table.lines().collect();
    // The second line, before any number: 900/s × 1 ms / 1 worker.
    assert_eq!(lines[1], "offered load ρ = λ·E[S]/c = 0.900");
    let over = succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--resource",
        "server",
        "--rate",
        "1100",
        "-q",
    ]));
    assert!(
        over.contains("offered load ρ = λ·E[S]/c = 1.100; warning: at ρ ≥ 1"),
        "{over}"
    );
    // A chain states each service's, the server last.
    let chain = server_json(&[
        "--depth",
        "2",
        "--layer-workers",
        "4",
        "--layer-service",
        "exp:4ms",
        "--rate",
        "500",
    ]);
    let loads: Vec<f64> = chain["workload"]["offered_load"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(loads.len(), 2);
    // 500/s × 4 ms / 4 workers = 0.5 above; 500/s × 1 ms / 1 worker below.
    assert!((loads[0] - 0.5).abs() < 1e-12 && (loads[1] - 0.5).abs() < 1e-12);
}

#[test]
fn the_server_json_reports_the_server_workload_not_the_herds() {
    let json = server_json(&[
        "--rate",
        "600",
        "--workers",
        "16",
        "--service",
        "lognormal:20ms/0.3",
        "--timeout",
        "1s",
        "--trigger",
        "capacity:0@2s..5s",
        "--budget",
        "tokens:500,cost:5,refund:1,timeout-cost:10",
    ]);
    let w = &json["workload"];
    assert_eq!(w["resource"], "server");
    assert!(
        w.get("clients").is_none() && w["parameters"].get("clients").is_none(),
        "{w}"
    );
    assert_eq!(w["parameters"]["rate_per_s"], 600.0);
    assert_eq!(w["parameters"]["workers"], 16.0);
    assert_eq!(w["parameters"]["service"], "lognormal:20ms/0.3");
    assert_eq!(w["parameters"]["timeout_ms"], 1000.0);
    assert_eq!(
        w["parameters"]["budget"],
        "tokens:500,cost:5,refund:1,timeout-cost:10"
    );
    assert_eq!(w["triggers"][0]["length_ms"], 3000.0);
    assert_eq!(w["depth"], 1);
    assert_eq!(w["duration_is_default"], true);
    // The default load: the trigger's end plus the patience window.
    assert_eq!(
        w["duration_ms"].as_f64().unwrap(),
        5000.0 + w["patience_ms"].as_f64().unwrap()
    );
    // ρ = 600/s × E[S] / 16, E[S] = 20 ms × e^(0.3²/2).
    let rho = 600.0 * 0.020 * (0.045f64).exp() / 16.0;
    assert!((w["offered_load"][0].as_f64().unwrap() - rho).abs() < 1e-12);
}

#[test]
fn sweep_csvs_carry_the_triggers_offered_load_and_storm_bounds_in_numbers() {
    let dir = workdir("verdict-columns");
    let out = dir.join("s.csv").display().to_string();
    succeed(cargo_bin_cmd!("herdsim").args([
        "sweep",
        "--resource",
        "server",
        "--rate",
        "500",
        "--timeout",
        "100ms",
        "--policy",
        "no-backoff",
        "--max-attempts",
        "4",
        "--trigger",
        "outage@2s..2.05s;outage@2s..2.5s+slow:2@3s..4s",
        "--seeds",
        "3",
        "--out",
        &out,
        "--quiet",
    ]));
    let mut reader = csv::Reader::from_path(&out).unwrap();
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let at = |row: usize, column: &str| {
        let i = header.iter().position(|c| c == column).unwrap();
        rows[row][i].to_string()
    };
    assert_eq!(at(0, "trigger_start_ms"), "2000");
    assert_eq!(at(0, "trigger_length_ms"), "50");
    assert_eq!(at(1, "trigger_length_ms"), "500");
    assert_eq!(at(1, "triggers_total_ms"), "1500");
    assert_eq!(at(0, "offered_load"), "0.5");
    // 3 runs decided each: the short outage recovers, the long one sticks.
    assert_eq!(
        (at(0, "storm_stuck"), at(0, "storm_decided")),
        ("0".into(), "3".into())
    );
    assert_eq!(at(1, "storm_probability"), "1");
    assert_eq!(at(0, "storm_unresolved"), "0");
    let (low, high): (f64, f64) = (
        at(1, "storm_low").parse().unwrap(),
        at(1, "storm_high").parse().unwrap(),
    );
    // Wilson's 95% interval of 3 of 3: (0.4385, 1).
    assert!((low - 0.4385).abs() < 1e-4 && high > 0.9999, "{low} {high}");
}

#[test]
fn herdsim_metrics_defines_every_metric_and_the_verdict() {
    let text = succeed(cargo_bin_cmd!("herdsim").arg("metrics"));
    for metric in herdsim::measure::server_metrics::ServerMetric::ALL {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{} ", metric.name()))),
            "{} is not defined",
            metric.name()
        );
    }
    for metric in herdsim::measure::metrics::Metric::ALL {
        assert!(text.contains(metric.name()), "{}", metric.name());
    }
    // The rule, with the numbers the code uses.
    assert!(text.contains("four standard errors"), "{text}");
    assert!(text.contains("10 retry cycles"), "{text}");
    assert!(text.contains("Unresolved: the load"), "{text}");
    // And `run --help` points to it.
    let help = succeed(cargo_bin_cmd!("herdsim").args(["run", "--help"]));
    assert!(help.contains("herdsim metrics"), "{help}");
}

#[test]
fn a_series_marks_each_window_healthy_or_not_against_the_baseline() {
    let dir = workdir("verdict-series");
    let file = dir.join("s.csv").display().to_string();
    let mut args = vec!["run", "--resource", "server", "-q", "--series", &file];
    args.extend_from_slice(METASTABLE);
    args.extend(["--policy", "no-backoff", "--max-attempts", "4"]);
    succeed(cargo_bin_cmd!("herdsim").args(&args));
    let mut reader = csv::Reader::from_path(&file).unwrap();
    let header = reader.headers().unwrap().clone();
    let healthy = header.iter().position(|c| c == "healthy").unwrap();
    let start = header.iter().position(|c| c == "window_start_ms").unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let at = |ms: &str| &rows.iter().find(|r| &r[start] == ms).unwrap()[healthy];
    // Healthy before the outage, not long after it: the stuck case.
    assert_eq!(at("1000"), "1");
    assert_eq!(at("8000"), "0");
}

/// Issue 55's mesh: an Envoy route (3 retries, 250 ms per try, on 5xx and
/// resets) and cluster (Envoy's default budget, 20% with at least 3) in
/// front of 8 workers with exponential service of 15 ms mean at 400
/// requests/s (ρ = 0.75), every worker stalled from 2 s to 3 s.
const MESH: &[&str] = &[
    "--import",
    "scenarios/configs/envoy-mesh-route.yaml",
    "--import",
    "scenarios/configs/envoy-mesh-cluster.yaml",
    "--workers",
    "8",
    "--service",
    "exp:15ms",
    "--trigger",
    "capacity:0@2s..3s",
    "--rate",
    "400",
];

/// `herdsim run --resource server ARGS --json --per-run -q` from the
/// repository's root (the mesh's files resolve), parsed: each run's
/// verdict and its metrics.
fn per_run(args: &[&str]) -> Vec<(String, serde_json::Value)> {
    let out = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["run", "--resource", "server", "--json", "--per-run", "-q"])
            .args(args),
    );
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["verdict"].as_str().unwrap().to_string(),
                r["metrics"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_slow_drain_reads_draining_with_its_projection_not_stuck() {
    // At the default patience (10 s) eight of these 20 runs were read
    // stuck; given 60 s, all 20 recover, 4 to 14 s after the stall.
    let default = per_run(&[MESH, &["--seeds", "20"]].concat());
    let long = per_run(&[MESH, &["--seeds", "20", "--patience", "60s"]].concat());
    assert!(long.iter().all(|(v, _)| v == "recovered"), "{long:?}");
    let draining: Vec<usize> = (0..20).filter(|&i| default[i].0 == "draining").collect();
    assert!(
        default
            .iter()
            .all(|(v, _)| v == "recovered" || v == "draining"),
        "{:?}",
        default.iter().map(|(v, _)| v).collect::<Vec<_>>()
    );
    assert!(draining.len() >= 4, "{draining:?}");
    for i in draining {
        let metrics = &default[i].1;
        let projected = metrics["projected_recovery_ms"].as_f64().unwrap();
        let actual = long[i].1["recovery_ms"].as_f64().unwrap();
        // Falling means a negative slope past the threshold.
        assert!(metrics["backlog_trend_t"].as_f64().unwrap() <= -4.0);
        assert!(metrics["recovery_ms"].is_null() && metrics["stuck"] == 0.0);
        assert!(projected >= 10_000.0, "{projected}");
        // The projection extrapolates a line through ten noisy segment
        // means, and is at least the patience: within half the recovery
        // it projects (the runs seen: 8.0 to 14.3 s, projected 10 to 14).
        assert!(
            (projected - actual).abs() <= actual / 2.0,
            "run {i}: projected {projected} ms, recovered at {actual} ms"
        );
    }
}

#[test]
fn a_quiet_spell_or_one_burst_in_a_healthy_service_is_no_relapse() {
    // Issue 55: replicate 248 had one window of 45 arrivals, all served
    // (goodput then fell short of the baseline's 60 a window), and
    // replicate 185 one burst of 85 arrivals whose queue slowed the next
    // window to 27 ms; each read stuck, with every request after the
    // trigger served.
    let runs = per_run(&[
        "--rate",
        "600",
        "--workers",
        "1",
        "--service",
        "exp:1ms",
        "--timeout",
        "100ms",
        "--policy",
        "no-backoff",
        "--max-attempts",
        "3",
        "--trigger",
        "outage@2s..2.15s",
        "--seeds",
        "250",
    ]);
    for i in [185, 248] {
        assert_eq!(runs[i].0, "recovered", "replicate {i}");
        assert_eq!(runs[i].1["success_after_trigger"], 1.0);
    }
    let stuck = runs.iter().filter(|(v, _)| v == "stuck").count();
    assert_eq!(stuck, 0);
}

#[test]
fn recovery_times_show_their_median_and_quartiles_beside_the_mean() {
    let args = [MESH, &["--seeds", "20", "--patience", "60s"]].concat();
    let runs = per_run(&args);
    let mut times: Vec<f64> = runs
        .iter()
        .map(|(_, m)| m["recovery_ms"].as_f64().unwrap())
        .collect();
    times.sort_by(f64::total_cmp);
    // Type 7: position (n − 1)·p between the order statistics.
    let quantile = |p: f64| {
        let h = 19.0 * p;
        let low = h.floor() as usize;
        times[low] + (h - h.floor()) * (times[(low + 1).min(19)] - times[low])
    };
    let json = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["run", "--resource", "server", "--json", "-q"])
            .args(&args),
    );
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let quartiles = &json["metrics"]["recovery_ms"]["quartiles"];
    for (k, p) in [0.25, 0.5, 0.75].into_iter().enumerate() {
        assert!((quartiles[k].as_f64().unwrap() - quantile(p)).abs() < 1e-9);
    }
    let text = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["run", "--resource", "server", "-q"])
            .args(&args),
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("recovery_ms: median"))
        .unwrap_or_else(|| panic!("{text}"));
    let shown = |x: f64| {
        let whole = format!("{:.1}", x);
        let (int, frac) = whole.split_once('.').unwrap();
        let mut grouped = String::new();
        for (i, c) in int.chars().enumerate() {
            if i > 0 && (int.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{grouped}.{frac}")
    };
    assert!(
        line.contains(&format!("median {}", shown(quantile(0.5)))),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "quartiles {} to {}",
            shown(quantile(0.25)),
            shown(quantile(0.75))
        )),
        "{line}"
    );
}

#[test]
fn a_grid_whose_default_patience_differs_between_points_says_so() {
    // At ρ 0.3 the default patience is 10 s; at 0.9 the drain of a 1 s
    // outage, three times over, is about 27 s.
    let dir = workdir("varying-patience");
    let sweep = |extra: &[&str]| {
        let out = cargo_bin_cmd!("herdsim")
            .current_dir(&dir)
            .args(["sweep", "--out", "p.csv", "--force", "-q"])
            .args(["--resource", "server", "--rate", "300,900"])
            .args(["--trigger", "outage@1s..2s", "--max-attempts", "1"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let warned = sweep(&[]);
    assert!(
        warned.contains(
            "note: the default patience window differs between points (10s at point 0 to "
        ) && warned.contains("s at point 1): each verdict is judged over its own"),
        "{warned}"
    );
    assert!(!sweep(&["--patience", "10s"]).contains("patience"));
}
