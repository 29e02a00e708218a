//! `herdsim tune` as a user runs it: the same bytes at any thread count,
//! a search read back from its CSV (or its shards') gives the same front,
//! and bad input is one line.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{repo, succeed, usage_error, workdir};

/// The SRE tutorial's service, gRPC's throttle over a small grid with one
/// refinement round, 2 seeds a measure (a second or two in all).
const SEARCH: &[&str] = &[
    "tune",
    "scenarios/sre-service.toml",
    "--control",
    "grpc",
    "--param",
    "grpc=2,20,200",
    "--param",
    "ratio=0.01,0.1,1",
    "--seeds",
    "2",
    "--refine",
    "1",
    "--bound",
    "1.05",
];

fn tune(threads: &str, extra: &[&str]) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .env("RAYON_NUM_THREADS", threads)
            .args(SEARCH)
            .args(extra)
            .arg("-q"),
    )
}

#[test]
fn a_search_is_the_same_bytes_at_any_thread_count_and_reads_back_from_its_csv() {
    let dir = workdir("tune-threads");
    let (one, two) = (dir.join("one.csv"), dir.join("two.csv"));
    let text_one = tune("1", &["-o", one.to_str().unwrap()]);
    let text_two = tune("2", &["-o", two.to_str().unwrap()]);
    assert_eq!(text_one, text_two);
    let csv = fs::read_to_string(&one).unwrap();
    assert_eq!(csv, fs::read_to_string(&two).unwrap());
    // 9 grid settings and the header; a setting's row names its rule.
    assert!(csv.lines().count() >= 10, "{csv}");
    assert!(csv.contains("grpc:20,ratio:0.1"));
    assert!(text_one.contains("Pareto front"), "{text_one}");
    // The journal goes once the CSV is whole.
    assert!(!dir.join("one.csv.runs").exists());
    // Read back: the same answer, no run made.
    let again = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .args(SEARCH)
            .args(["--from", one.to_str().unwrap()]),
    );
    assert_eq!(again, text_one);
}

#[test]
fn shards_joined_give_the_whole_searchs_front() {
    let dir = workdir("tune-shards");
    let whole = dir.join("whole.csv");
    let text = tune("2", &["-o", whole.to_str().unwrap()]);
    let mut from = Vec::new();
    for k in 1..=2 {
        let part = dir.join(format!("part{k}.csv"));
        tune(
            "2",
            &["-o", part.to_str().unwrap(), "--shard", &format!("{k}/2")],
        );
        from.push(part);
    }
    let joined = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .args(SEARCH)
            .args(["--from", from[0].to_str().unwrap()])
            .args(["--from", from[1].to_str().unwrap()]),
    );
    assert_eq!(joined, text);
}

#[test]
fn bad_input_is_one_line_naming_the_flag() {
    let base = ["tune", "scenarios/sre-service.toml", "--control", "grpc"];
    let with = |extra: &[&'static str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        usage_error(&args)
    };
    assert!(with(&["--bound", "0.9"]).contains("--bound"));
    let err = with(&["--param", "tokens=1,2"]);
    assert!(
        err.contains("no field 'tokens'") && err.contains("grpc, ratio"),
        "{err}"
    );
    let err = with(&["--param", "ratio=-1,2"]);
    assert!(err.contains("--param") && err.contains("ratio"), "{err}");
    assert!(with(&["--stall", "meltdown@1s..2s"]).contains("--stall"));
    let err = usage_error(&[
        "tune",
        "scenarios/sre-service.toml",
        "--control",
        "nonsense",
    ]);
    assert!(err.contains("grpc") && err.contains("envoy"), "{err}");
}

/// The command a search prints for its recommended setting measures that
/// setting alone to the same figures, and its header says that nothing
/// varies rather than searching "over" nothing.
#[test]
fn the_printed_command_reproduces_the_recommended_setting() {
    let text = tune("2", &[]);
    let mut lines = text.lines();
    lines
        .by_ref()
        .find(|l| l.starts_with("recommended"))
        .unwrap_or_else(|| panic!("no recommendation in:\n{text}"));
    let figures = lines.next().unwrap().trim().to_string();
    let command = text
        .lines()
        .skip_while(|l| !l.starts_with("reproduce the recommended"))
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(args[0], "herdsim", "{command}");
    let again = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .args(&args[1..])
            .arg("-q"),
    );
    let rule = figures.split(": ").next().unwrap();
    assert!(
        again.contains(&format!(
            "measuring the budget grpc at {rule} (no field varies)"
        )),
        "{again}"
    );
    assert!(again.contains(&figures), "{figures}\nnot in:\n{again}");
}
