//! Issue 56's tune, exact and run items, through the binary: an incomplete
//! search refused by `tune --from`, a whole one resumed to exit 0, a stall
//! too long named as --stall, exact's memory, trigger and rate bounds, a
//! state count past u64 as computed, `--series-all` streamed to the same
//! bytes, and resource messages that name where the resource was given.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{repo, succeed, usage_error, workdir};

/// The search: three maxTokens by two ratios, one refinement.
const SEARCH: &[&str] = &[
    "tune",
    "scenarios/sre-service.toml",
    "--control",
    "grpc",
    "--param",
    "grpc=5,20,100",
    "--param",
    "ratio=0.1,1",
    "--seeds",
    "2",
    "--refine",
    "1",
];

/// `herdsim ARGS` from the repository's root: its exit code, stdout and
/// stderr.
fn herdsim(args: &[&str]) -> (Option<i32>, String, String) {
    let out = cargo_bin_cmd!("herdsim")
        .current_dir(repo())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn with(extra: &[&str]) -> Vec<String> {
    SEARCH.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn refused(args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = herdsim(&args);
    assert_eq!(code, Some(2), "{args:?}: {out}{err}");
    assert!(out.is_empty(), "{args:?} printed {out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn tune_from_refuses_a_shard_or_a_file_short_of_a_setting_naming_what_is_missing() {
    let dir = workdir("tune-partial");
    let path = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let whole = path("whole.csv");
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .args(with(&["-q", "-o", &whole])),
    );
    let shard = path("shard.csv");
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .args(with(&["-q", "-o", &shard, "--shard", "1/2"])),
    );
    // One shard of two: the second row's three grid settings are missing.
    let err = refused(&with(&["--from", &shard]));
    assert!(
        err.contains("shard.csv") && err.contains("3 of its settings are missing"),
        "{err}"
    );
    assert!(err.contains("grpc:20,ratio:1"), "{err}");
    // The whole file less one setting's line (the header stays).
    let text = fs::read_to_string(&whole).unwrap();
    let dropped = text.lines().nth(2).unwrap();
    let rule = dropped.split(',').nth(2).unwrap().trim_matches('"');
    let cut: String = text
        .lines()
        .filter(|l| *l != dropped)
        .map(|l| format!("{l}\n"))
        .collect();
    let cut_path = path("cut.csv");
    fs::write(&cut_path, cut).unwrap();
    let err = refused(&with(&["--from", &cut_path]));
    assert!(
        err.contains("cut.csv") && err.contains("1 of its settings is missing"),
        "{err}"
    );
    assert!(err.contains(rule), "{rule}: {err}");
    // The whole file still reads.
    let (code, _, err) = herdsim(
        &with(&["--from", &whole])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn tune_resume_on_a_whole_search_exits_0_as_sweep_and_map_do() {
    let dir = workdir("tune-resume-whole");
    let out = dir.join("t.csv").to_str().unwrap().to_string();
    let first = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(repo())
            .args(with(&["-q", "-o", &out])),
    );
    let bytes = fs::read(&out).unwrap();
    let (code, again, err) = herdsim(
        &with(&["-o", &out, "--resume"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("is this search, whole"), "{err}");
    assert_eq!(again, first, "the same front printed");
    assert_eq!(fs::read(&out).unwrap(), bytes, "the file untouched");
}

#[test]
fn a_stall_too_long_for_the_load_names_stall_and_its_latest_end() {
    let err = usage_error(&[
        "tune",
        "scenarios/sre-service.toml",
        "--control",
        "grpc",
        "--stall",
        "outage@1s..8760h",
    ]);
    assert!(err.starts_with("error: --stall outage@1s..8760h"), "{err}");
    assert!(err.contains("must end by"), "{err}");
}

#[test]
fn exact_refuses_a_solve_past_its_memory_bound_up_front() {
    for extra in [
        &["--queue-limit", "40"][..],
        &["--queue-limit", "50", "--max-states", "400000"],
    ] {
        let mut args = vec!["exact", "scenarios/exact-small.toml"];
        args.extend(extra);
        let err = usage_error(&args);
        assert!(
            err.contains("GB at once")
                && err.contains("queue_limit")
                && err.contains("at most 2.0 GB"),
            "{err}"
        );
    }
}

#[test]
fn exact_refuses_a_trigger_too_long_to_follow_with_the_longest_it_follows() {
    let started = std::time::Instant::now();
    let err = usage_error(&[
        "exact",
        "scenarios/exact-small.toml",
        "--trigger",
        "outage@1s..86401s",
    ]);
    assert!(
        err.contains("--trigger") && err.contains("follows a trigger of at most"),
        "{err}"
    );
    // Refused before the follow-up, not after hours of it.
    assert!(started.elapsed().as_secs() < 60);
}

#[test]
fn exact_names_rate_not_duration_and_counts_states_past_u64() {
    let err = usage_error(&["exact", "scenarios/exact-small.toml", "--rate", "1e9"]);
    assert!(
        err.contains("--rate 1e9") && !err.contains("--duration "),
        "{err}"
    );
    let err = usage_error(&[
        "exact",
        "scenarios/exact-small.toml",
        "--queue-limit",
        "10000000",
    ]);
    // (10⁷ + 1)·... states: past 2⁶⁴, never the saturated figure.
    assert!(!err.contains("18446744073709551615"), "{err}");
    assert!(
        err.contains("2,000,002,900,000,750,000,069 states"),
        "{err}"
    );
}

/// A year-long trigger makes the load's default length a year: the
/// refusal names the trigger that set it, not a --duration nobody gave
/// (exact takes none; run was told to shorten a load it did not set).
#[test]
fn a_load_too_long_by_its_trigger_names_the_trigger() {
    for command in ["exact", "run"] {
        let err = usage_error(&[
            command,
            "scenarios/exact-small.toml",
            "--trigger",
            "fail:0.5@1s..8760h",
        ]);
        assert!(
            !err.contains("--duration")
                && err.contains("the load's default length")
                && err.contains("shorten the trigger"),
            "{command}: {err}"
        );
    }
}

#[test]
fn series_all_streams_the_same_bytes_at_any_thread_count() {
    let dir = workdir("series-all");
    let run = |threads: &str, name: &str, all: bool| {
        let path = dir.join(name);
        let mut cmd = cargo_bin_cmd!("herdsim");
        cmd.env("RAYON_NUM_THREADS", threads).args([
            "run",
            "--resource",
            "server",
            "--rate",
            "500",
            "--duration",
            "2s",
            "--trigger",
            "outage@500ms..800ms",
            "--seeds",
            "6",
            "-q",
            "--series",
        ]);
        cmd.arg(&path);
        if all {
            cmd.arg("--series-all");
        }
        succeed(&mut cmd);
        fs::read_to_string(path).unwrap()
    };
    let one = run("1", "one.csv", true);
    assert_eq!(one, run("2", "two.csv", true));
    let first = run("2", "first.csv", false);
    // Replicate 0's rows are --series's own; every replicate is there.
    assert!(one.starts_with(&first), "replicate 0 first");
    for r in 0..6 {
        assert!(one.contains(&format!("\n{r},")), "replicate {r}");
    }
    // No temporary left beside the files.
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_resource_refused_is_named_where_it_was_given() {
    let dir = workdir("resource-place");
    let grid = dir.join("grid.toml");
    fs::write(&grid, "resource = [\"slot\", \"server\"]\nclients = [10]\n").unwrap();
    let out = dir.join("g.csv");
    let err = usage_error(&["sweep", grid.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(err.contains("grid.toml:1"), "{err}");
    // A study's file with the resource changed names its line, not a flag
    // the user did not give.
    let text = fs::read_to_string(repo().join("scenarios/yandex-2024/mfs.toml")).unwrap();
    let study = dir.join("study.toml");
    fs::write(
        &study,
        text.replace("resource = \"server\"", "resource = \"slot\""),
    )
    .unwrap();
    let err = usage_error(&["compare", study.to_str().unwrap()]);
    assert!(
        err.contains("study.toml:") && !err.contains("--resource"),
        "{err}"
    );
}
