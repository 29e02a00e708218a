//! No answer from no data (issue 55): a map, assess or tune whose runs end
//! before their patience window does states no crossing, margin, headroom
//! or recommendation it cannot know, says how many runs were decided, and
//! warns; where decided cells place a crossing, it is stated with its
//! count. Run as the user runs the binary.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{csv_rows, workdir};

/// `herdsim ARGS` in `dir`: its exit code, stdout and stderr.
fn herdsim(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = cargo_bin_cmd!("herdsim")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The issue's map: 3 s of load after an outage ending at 1.5 s, whose
/// patience window is at least 10 s, so no run can be decided.
const ISSUE_MAP: [&str; 22] = [
    "map",
    "--x",
    "rate",
    "--y",
    "timeout",
    "--resource",
    "server",
    "--rate",
    "300,900",
    "--timeout",
    "100ms",
    "--policy",
    "no-backoff",
    "--max-attempts",
    "4",
    "--trigger",
    "outage@1s..1.5s",
    "--seeds",
    "10",
    "--refine",
    "0",
    "-q",
];

#[test]
fn a_map_with_no_decided_run_states_no_crossing_and_says_what_would_decide_it() {
    let dir = workdir("undecided-map");
    let mut args = ISSUE_MAP.to_vec();
    args.extend(["--duration", "3s", "--out", "m.csv"]);
    let (code, out, err) = herdsim(&dir, &args);
    // It ran what it was asked: the map is written, exit 0.
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("decided 0 of 20 runs: every run ended before its patience window did; give --duration at least "),
        "{out}"
    );
    assert!(!out.contains("beyond"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("100"))
        .expect("the row of 100 ms");
    assert!(row.contains("unknown") && row.contains("0 of 20"), "{row}");
    assert!(
        err.contains("warning: decided 0 of 20 runs") && err.contains("no crossing is known"),
        "{err}"
    );
    let cells = csv_rows(&fs::read_to_string(dir.join("m.csv")).unwrap());
    assert_eq!(cells.len(), 2);
    for cell in &cells {
        assert_eq!(cell["side"], "undecided");
        assert_eq!(cell["storm_probability"], "");
        assert_eq!(cell["unresolved"], cell["runs"]);
    }
    // Read back, the map says the same.
    let mut from = ISSUE_MAP.to_vec();
    from.extend(["--duration", "3s", "--from", "m.csv"]);
    let (code, again, err) = herdsim(&dir, &from);
    assert_eq!((code, &again), (0, &out), "{err}");
    assert!(err.contains("warning: decided 0 of 20 runs"), "{err}");
    // The length the summary advises decides every run.
    let advised = out
        .split("give --duration at least ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("an advised duration")
        .to_string();
    let mut decided = ISSUE_MAP.to_vec();
    decided.extend(["--duration", &advised, "--out", "d.csv"]);
    let (code, out, err) = herdsim(&dir, &decided);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("decided") && !err.contains("warning: decided"),
        "{out}{err}"
    );
    assert!(!out.contains("unknown"), "{out}");
}

#[test]
fn a_partly_decided_map_states_the_crossing_its_decided_cells_place() {
    // The metastable case at 700 requests/s crosses 50% near a 0.17 s
    // outage (docs/src/guide/map.md), at 500 near 0.32 s. Each patience
    // window is 10 s, so 12.4 s of load decides the outages ending at
    // 2.1 s and 2.3 s, not the one ending at 2.5 s: at 700 the crossing
    // lies between two decided cells, at 500 next to the undecided one.
    let dir = workdir("undecided-partly");
    let root = env!("CARGO_MANIFEST_DIR");
    let scenario = format!("{root}/scenarios/metastable-map.toml");
    let (code, out, err) = herdsim(
        &dir,
        &[
            "map",
            &scenario,
            "--x",
            "trigger",
            "--y",
            "rate",
            "--rate",
            "500,700",
            "--trigger",
            "outage@2s..2.1s;outage@2s..2.3s;outage@2s..2.5s",
            "--seeds",
            "10",
            "--refine",
            "0",
            "--duration",
            "12.4s",
            "--out",
            "p.csv",
            "-q",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("decided 40 of 60 runs: 20 runs ended before their patience window did; give --duration at least 12.5s or drop --duration"), "{out}");
    let row = |rate: &str| {
        out.lines()
            .find(|l| l.starts_with(rate))
            .unwrap_or_else(|| panic!("row {rate}: {out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let fast = row("700");
    let crossing: f64 = fast[1].parse().expect("a crossing at 700");
    assert!((0.1..0.3).contains(&crossing), "{fast:?}");
    // Decided runs, then the row's default patience.
    assert_eq!(fast[fast.len() - 4..], ["20", "of", "30", "10s"]);
    assert_eq!(row("500")[1], "unknown", "{out}");
    assert!(
        err.contains("the crossing of 1 of 2 rows is not known"),
        "{err}"
    );
}

#[test]
fn an_assessment_with_no_decided_run_gives_no_margin_nor_headroom() {
    // A horizon of 3 s cuts every run a second after its stall starts.
    let dir = workdir("undecided-assess");
    let root = env!("CARGO_MANIFEST_DIR");
    let scenario = format!("{root}/scenarios/sre-service.toml");
    let args = [
        "assess",
        &scenario,
        "--horizon",
        "3s",
        "--stall",
        "outage",
        "--suggest",
        "none",
        "--seeds",
        "2",
        "--refine",
        "0",
        "-q",
    ];
    let (code, text, err) = herdsim(&dir, &args);
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains("beyond"), "{text}");
    assert!(
        text.contains("has no known margin for a stall of outage"),
        "{text}"
    );
    assert!(
        text.contains("Its headroom for 0.5 s of outage is not known"),
        "{text}"
    );
    assert!(
        text.contains("every run ended before its patience window did; give --horizon at least"),
        "{text}"
    );
    assert!(
        err.contains("warning: decided 0 of 28 runs")
            && err.contains("not known: the margin of outage, the headroom for outage@2s..2.5s"),
        "{err}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let (code, json, err) = herdsim(&dir, &json_args);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    for (table, figure) in [("margin", "margin_s"), ("headroom", "headroom_rho")] {
        let numbers = &json["tables"][table]["numbers"];
        assert_eq!(numbers[figure], serde_json::json!([null]), "{table}");
        assert_eq!(numbers["decided_runs"], serde_json::json!([0.0]), "{table}");
        assert_eq!(
            numbers["unresolved_runs"],
            serde_json::json!([14.0]),
            "{table}"
        );
        assert_eq!(json["tables"][table]["rows"][0][1], "unknown", "{table}");
    }
    assert_eq!(json["figures"]["recovery_decided_runs"], 0.0);
}

#[test]
fn a_search_with_no_decided_stall_recommends_nothing() {
    let dir = workdir("undecided-tune");
    let root = env!("CARGO_MANIFEST_DIR");
    let scenario = format!("{root}/scenarios/sre-service.toml");
    let (code, out, err) = herdsim(
        &dir,
        &[
            "tune",
            &scenario,
            "--control",
            "grpc",
            "--param",
            "grpc=5,20",
            "--param",
            "ratio=0.1",
            "--horizon",
            "3s",
            "--seeds",
            "2",
            "--refine",
            "1",
            "-o",
            "t.csv",
            "-q",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("no recommendation: no run of the stall was decided"),
        "{out}"
    );
    assert!(!out.contains("recommended"), "{out}");
    assert!(
        out.contains("the stall: decided 0 of 4 runs: every run ended before its patience window did; give --horizon at least"),
        "{out}"
    );
    assert!(
        err.contains("warning: the stall: decided 0 of 4 runs")
            && err.contains("none is recommended"),
        "{err}"
    );
    // No refinement where being allowed is not known: the two settings only.
    let rows = csv_rows(&fs::read_to_string(dir.join("t.csv")).unwrap());
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["survives_stall"] == "unknown"));
}
