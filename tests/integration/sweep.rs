//! `herdsim sweep` and `herdsim merge` as a user runs them.

use crate::common::{usage_error, workdir};

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;

fn herdsim(args: &[&str], threads: &str) -> Output {
    cargo_bin_cmd!("herdsim")
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap()
}

fn ok(args: &[&str], threads: &str) {
    let out = herdsim(args, threads);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// A small grid: 6 points × 5 replicates, uneven work per point.
const GRID: &[&str] = &[
    "--policy",
    "none,full,decorrelated",
    "--clients",
    "50,300",
    "--seeds",
    "5",
];

fn sweep(dir: &Path, name: &str, extra: &[&str], threads: &str) -> String {
    let out = path(dir, name);
    let mut args = vec!["sweep", "--out", &out, "--quiet"];
    args.extend_from_slice(GRID);
    args.extend_from_slice(extra);
    ok(&args, threads);
    fs::read_to_string(&out).unwrap()
}

#[test]
fn thread_count_does_not_change_a_byte() {
    let dir = workdir("threads");
    for per_run in [&[][..], &["--per-run"][..]] {
        let one = sweep(&dir, "one.csv", per_run, "1");
        let two = sweep(&dir, "two.csv", per_run, "2");
        assert_eq!(one, two, "per-run: {}", !per_run.is_empty());
        fs::remove_file(dir.join("one.csv")).unwrap();
        fs::remove_file(dir.join("two.csv")).unwrap();
    }
}

#[test]
fn rows_are_in_grid_order_with_every_parameter() {
    let dir = workdir("order");
    let text = sweep(&dir, "x.csv", &[], "2");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    assert_eq!(&headers[0], "point");
    assert!(headers.iter().any(|h| h == "last_success_ms_mean"));
    let rows: Vec<_> = reader.records().map(Result::unwrap).collect();
    let keys: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r[0].to_string(), r[1].to_string(), r[2].to_string()))
        .collect();
    let expected: Vec<(String, String, String)> = [
        ("0", "none", "50"),
        ("1", "none", "300"),
        ("2", "full", "50"),
        ("3", "full", "300"),
        ("4", "decorrelated", "50"),
        ("5", "decorrelated", "300"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(keys, expected);
    let calls_mean = headers.iter().position(|h| h == "calls_mean").unwrap();
    assert_eq!(
        &rows[1][calls_mean], "45150",
        "none at 300 clients: 300·301/2 calls"
    );
}

#[test]
fn per_run_rows_average_to_the_aggregated_rows() {
    let dir = workdir("per-run");
    let aggregated = sweep(&dir, "agg.csv", &[], "2");
    let per_run = sweep(&dir, "runs.csv", &["--per-run"], "2");
    let mut agg = csv::Reader::from_reader(aggregated.as_bytes());
    let calls_mean = agg
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "calls_mean")
        .unwrap();
    let means: Vec<f64> = agg
        .records()
        .map(|r| r.unwrap()[calls_mean].parse().unwrap())
        .collect();
    let mut runs = csv::Reader::from_reader(per_run.as_bytes());
    let calls = runs
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "calls")
        .unwrap();
    let mut sums = vec![0.0; means.len()];
    let mut count = 0;
    for r in runs.records() {
        let r = r.unwrap();
        sums[r[0].parse::<usize>().unwrap()] += r[calls].parse::<f64>().unwrap();
        count += 1;
    }
    assert_eq!(count, 30);
    for (sum, mean) in sums.iter().zip(&means) {
        assert!((sum / 5.0 - mean).abs() < 1e-9, "{sum} / 5 vs {mean}");
    }
}

#[test]
fn a_sweep_point_is_the_same_run_as_herdsim_run() {
    // Point 0 under master seed S uses the seeds `herdsim run --seed S` uses.
    let dir = workdir("same-as-run");
    let out = path(&dir, "x.csv");
    let workload = [
        "--policy",
        "decorrelated",
        "--clients",
        "400",
        "--seeds",
        "7",
        "--seed",
        "9",
    ];
    ok(&[&["sweep", "--out", &out][..], &workload].concat(), "2");
    let text = fs::read_to_string(&out).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "calls_mean")
        .unwrap();
    let row = reader.records().next().unwrap().unwrap();
    let run = herdsim(&[&["run", "--json"][..], &workload].concat(), "2");
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        row[column].parse::<f64>().unwrap(),
        json["metrics"]["calls"]["mean"].as_f64().unwrap()
    );
}

#[test]
fn merged_shards_equal_the_unsharded_file() {
    let dir = workdir("shards");
    for per_run in [&[][..], &["--per-run"][..]] {
        let whole = sweep(&dir, "whole.csv", per_run, "2");
        let mut shards = Vec::new();
        for k in 1..=3 {
            let name = format!("shard-{k}.csv");
            let shard = format!("{k}/3");
            let mut extra = per_run.to_vec();
            extra.extend(["--shard", &shard]);
            sweep(&dir, &name, &extra, "1");
            shards.push(path(&dir, &name));
        }
        // Given in any order, as a shell glob might.
        let merged = path(&dir, "merged.csv");
        ok(
            &[
                "merge", &shards[2], &shards[0], &shards[1], "--out", &merged,
            ],
            "1",
        );
        assert_eq!(fs::read_to_string(&merged).unwrap(), whole);

        // A missing shard, or one given twice, is refused.
        let other = path(&dir, "other.csv");
        let missing = herdsim(&["merge", &shards[0], &shards[2], "--out", &other], "1");
        assert_eq!(missing.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&missing.stderr).contains("missing"));
        let twice = herdsim(
            &["merge", &shards[0], &shards[0], &shards[1], "--out", &other],
            "1",
        );
        assert_eq!(twice.status.code(), Some(2));
        assert!(
            !Path::new(&other).exists(),
            "a refused merge writes nothing"
        );
        for f in fs::read_dir(&dir).unwrap() {
            fs::remove_file(f.unwrap().path()).unwrap();
        }
    }
}

/// The grid of issue 13's merge report: 9 points, 4 shards (the last two
/// points in shard 4/4); `changes` replace its flags' values or add flags.
fn merge_grid(changes: &[&str]) -> Vec<String> {
    let mut flags: Vec<(String, String)> = [
        ("--policy", "full,decorrelated,equal"),
        ("--clients", "10,20,30"),
        ("--seeds", "2"),
    ]
    .iter()
    .map(|(f, v)| (f.to_string(), v.to_string()))
    .collect();
    for change in changes.chunks(2) {
        match flags.iter_mut().find(|(f, _)| f == change[0]) {
            Some((_, value)) => *value = change[1].to_string(),
            None => flags.push((change[0].to_string(), change[1].to_string())),
        }
    }
    let mut args = vec!["sweep".to_string(), "--quiet".to_string()];
    args.extend(flags.into_iter().flat_map(|(f, v)| [f, v]));
    args
}

#[test]
fn merge_refuses_files_that_do_not_make_one_whole_sweep() {
    let dir = workdir("merge-provenance");
    let write = |name: &str, extra: &[&str]| -> String {
        let file = path(&dir, name);
        let mut args = merge_grid(extra);
        args.extend(["--out".to_string(), file.clone()]);
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>(), "2");
        file
    };
    let shards: Vec<String> = (1..=4)
        .map(|k| write(&format!("s{k}.csv"), &["--shard", &format!("{k}/4")]))
        .collect();
    let whole = fs::read_to_string(write("whole.csv", &[])).unwrap();
    let merged = path(&dir, "merged.csv");
    let merge = |files: &[&str]| {
        let mut args = vec!["merge"];
        args.extend_from_slice(files);
        args.extend(["--out", &merged]);
        usage_error(&args)
    };
    let s: Vec<&str> = shards.iter().map(String::as_str).collect();

    // The last shard left out: its points are named, though no row says so
    // but the sweep's size.
    let err = merge(&s[..3]);
    assert!(
        err.contains("points 6 to 8 of the sweep's 9 are missing"),
        "{err}"
    );
    // A header-only file alone knows no sweep.
    let header_only = path(&dir, "header.csv");
    fs::write(
        &header_only,
        whole.lines().next().unwrap().to_string() + "\n",
    )
    .unwrap();
    let err = merge(&[&header_only]);
    assert!(err.contains("no file has a row"), "{err}");

    // A last shard from another sweep: each names the file and what differs.
    let others = [
        (
            "seed.csv",
            vec!["--seed", "7"],
            "master seed 7 where the first has 42",
        ),
        (
            "seeds.csv",
            vec!["--seeds", "3"],
            "3 replicates per point where the first has 2",
        ),
        (
            "grid.csv",
            vec!["--clients", "10,20,40"],
            "another grid of as many points",
        ),
        (
            "size.csv",
            vec!["--clients", "10,20,30,40"],
            "a grid of 12 points where the first has 9",
        ),
    ];
    for (name, mut extra, says) in others {
        extra.extend(["--shard", "4/4"]);
        let other = write(name, &extra);
        let err = merge(&[s[0], s[1], s[2], &other]);
        assert!(err.contains(says) && err.contains(&other), "{name}: {err}");
    }
    // A row edited by hand.
    let text = fs::read_to_string(s[3]).unwrap();
    let edited = path(&dir, "edited.csv");
    fs::write(&edited, text.replacen(",equal,", ",none,", 1)).unwrap();
    assert_ne!(
        fs::read_to_string(&edited).unwrap(),
        text,
        "the edit was made"
    );
    let err = merge(&[s[0], s[1], s[2], &edited]);
    assert!(
        err.contains(&edited) && err.contains("line 2") && err.contains("changed"),
        "{err}"
    );
    // A file of the format before sweep ids.
    let old_format = path(&dir, "old.csv");
    fs::write(&old_format, text.replace(",sweep_id,sweep_points", "")).unwrap();
    let err = merge(&[s[0], s[1], s[2], &old_format]);
    assert!(err.contains("no sweep_id column"), "{err}");
    assert!(
        !Path::new(&merged).exists(),
        "a refused merge writes nothing"
    );

    // And the four of one sweep still make the whole, byte for byte.
    ok(&["merge", s[3], s[1], s[0], s[2], "--out", &merged], "1");
    assert_eq!(fs::read_to_string(&merged).unwrap(), whole);
}

#[test]
fn a_resumed_sweep_equals_an_uninterrupted_one() {
    let dir = workdir("resume");
    for per_run in [&[][..], &["--per-run"][..]] {
        let whole = sweep(&dir, "whole.csv", per_run, "2");
        let lines: Vec<&str> = whole.split_inclusive('\n').collect();
        // Interrupted after the header alone, after some rows, and mid-line.
        for cut in [
            lines[0].len(),
            lines[..3].concat().len(),
            lines[..3].concat().len() + 7,
            5,
        ] {
            let partial = path(&dir, "partial.csv");
            fs::write(&partial, &whole[..cut]).unwrap();
            let mut args = vec!["sweep", "--out", &partial, "--quiet", "--resume"];
            args.extend_from_slice(GRID);
            args.extend_from_slice(per_run);
            ok(&args, "2");
            assert_eq!(
                fs::read_to_string(&partial).unwrap(),
                whole,
                "cut at byte {cut}"
            );
            // Resuming a finished sweep changes nothing.
            ok(&args, "1");
            assert_eq!(fs::read_to_string(&partial).unwrap(), whole);
            fs::remove_file(&partial).unwrap();
        }
        // No file yet (an array task's first start): the whole sweep, and a
        // line that says it starts from the first row.
        let fresh = path(&dir, "fresh.csv");
        let mut args = vec!["sweep", "--out", &fresh, "--resume"];
        args.extend_from_slice(GRID);
        args.extend_from_slice(per_run);
        let out = herdsim(&args, "2");
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("does not exist yet"), "{err}");
        assert_eq!(fs::read_to_string(&fresh).unwrap(), whole);
        fs::remove_file(&fresh).unwrap();
        fs::remove_file(dir.join("whole.csv")).unwrap();
    }
}

#[test]
fn resuming_another_sweeps_file_is_refused() {
    let dir = workdir("resume-other");
    let file = path(&dir, "x.csv");
    let whole = sweep(&dir, "x.csv", &[], "2");
    let half: String = whole.split_inclusive('\n').take(3).collect();
    fs::write(&file, &half).unwrap();
    let mut args = vec!["sweep", "--out", &file, "--resume", "--seed", "7"];
    args.extend_from_slice(GRID);
    let out = herdsim(&args, "2");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2: expected a row starting") && err.contains("cannot be continued"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        half,
        "the file is left as it was"
    );
}

#[test]
fn a_killed_sweep_keeps_its_rows_and_resumes_to_the_same_file() {
    use std::os::unix::process::ExitStatusExt;
    let dir = workdir("killed");
    // 2,000 runs of 2,000 clients under full jitter, one row each: seconds of
    // work, killed once 20 rows are on disk, so the cut is not a race.
    let args = |out: &str| -> Vec<String> {
        [
            "sweep",
            "--policy",
            "full,equal",
            "--clients",
            "2000",
            "--seeds",
            "1000",
            "--per-run",
            "--quiet",
            "--out",
            out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let rows = |text: &str| text.matches('\n').count().saturating_sub(1);
    let killed = path(&dir, "killed.csv");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .args(args(&killed))
        .env("RAYON_NUM_THREADS", "2")
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while rows(&fs::read_to_string(&killed).unwrap_or_default()) < 20 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no rows written"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "the sweep was killed, not finished"
    );
    let partial = fs::read_to_string(&killed).unwrap();
    assert!(
        (20..2_000).contains(&rows(&partial)),
        "the kill cut the sweep: {} rows",
        rows(&partial)
    );

    let whole = path(&dir, "whole.csv");
    ok(
        &args(&whole).iter().map(String::as_str).collect::<Vec<_>>(),
        "2",
    );
    let expected = fs::read_to_string(&whole).unwrap();
    assert_eq!(rows(&expected), 2_000);
    assert!(
        expected.starts_with(partial.trim_end_matches(|c| c != '\n')),
        "finished rows are intact"
    );

    let mut resume = args(&killed);
    resume.push("--resume".into());
    ok(&resume.iter().map(String::as_str).collect::<Vec<_>>(), "2");
    assert_eq!(fs::read_to_string(&killed).unwrap(), expected);
}

#[test]
fn an_existing_file_is_not_clobbered_unless_forced() {
    let dir = workdir("clobber");
    let file = path(&dir, "x.csv");
    fs::write(&file, "precious\n").unwrap();
    let out = herdsim(&["sweep", "--clients", "10", "--out", &file], "1");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(fs::read_to_string(&file).unwrap(), "precious\n");
    ok(
        &["sweep", "--clients", "10", "--out", &file, "--force"],
        "1",
    );
    assert!(fs::read_to_string(&file).unwrap().starts_with("point,"));
}

#[test]
fn bad_output_paths_get_a_clear_error() {
    let dir = workdir("paths");
    for out in [dir.display().to_string(), path(&dir, "no/such/dir/x.csv")] {
        let result = herdsim(&["sweep", "--clients", "10", "--out", &out], "1");
        assert_eq!(result.status.code(), Some(2), "{out}");
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&out), "{err}");
    }
}

#[test]
fn flags_replace_the_scenarios_values() {
    let dir = workdir("override");
    let scenario = path(&dir, "s.toml");
    fs::write(
        &scenario,
        "policy = [\"none\", \"full\"]\nclients = [10, 20, 30]\nseeds = 3\n",
    )
    .unwrap();
    let out = path(&dir, "x.csv");
    ok(&["sweep", &scenario, "--clients", "40", "--out", &out], "2");
    let text = fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.contains(",40,")), "{text}");
}

#[test]
fn malformed_scenarios_name_the_file_line_and_key_and_write_nothing() {
    let dir = workdir("malformed");
    let cases = [
        (
            "bad-toml.toml",
            "clients = 10\nbase = \"100ms\n",
            ":2:",
            "invalid TOML",
        ),
        (
            "unknown.toml",
            "clients = 10\n\nretries = 3\n",
            ":3:",
            "key 'retries'",
        ),
        ("empty.toml", "policy = []\n", ":1:", "key 'policy'"),
        (
            "type.toml",
            "seeds = 5\nclients = \"lots\"\n",
            ":2:",
            "key 'clients'",
        ),
        (
            "range.toml",
            "clients = [10,\n  0]\n",
            ":2:",
            "key 'clients'",
        ),
        (
            "factor.toml",
            "jitter_factor = 1.5\n",
            ":1:",
            "key 'jitter_factor'",
        ),
    ];
    for (name, text, line, key) in cases {
        let scenario = path(&dir, name);
        fs::write(&scenario, text).unwrap();
        let out = path(&dir, &format!("{name}.csv"));
        let result = herdsim(&["sweep", &scenario, "--out", &out], "1");
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&format!("{scenario}{line}")), "{name}: {err}");
        assert!(err.contains(key), "{name}: {err}");
        assert!(!Path::new(&out).exists(), "{name} wrote an output file");
    }
}

#[test]
fn bad_flag_values_name_the_flag() {
    let dir = workdir("flags");
    let out = path(&dir, "x.csv");
    for (args, flag) in [
        (&["--clients", "10,0"][..], "--clients"),
        (&["--policy", "full,jittery"][..], "--policy"),
        (&["--shard", "4/3"][..], "--shard"),
        (&["--seeds", "0"][..], "--seeds"),
    ] {
        let mut all = vec!["sweep", "--out", &out];
        all.extend_from_slice(args);
        let result = herdsim(&all, "1");
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{args:?}");
        assert!(err.contains(flag) && err.lines().count() == 1, "{err}");
        assert!(!Path::new(&out).exists());
    }
}

#[test]
fn shipped_scenarios_parse() {
    for name in [
        "four-strategies",
        "clients-scaling",
        "base-cap",
        "metastable",
        "controls",
        "controls-partial",
    ] {
        let file = format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let text = fs::read_to_string(&file).unwrap();
        let scenario = herdsim::experiment::scenario::Scenario::from_toml(&file, &text).unwrap();
        assert!(scenario.grid.len() >= 4, "{name}");
    }
}

/// Runs `herdsim args` and returns the file it wrote at `out`.
fn regenerated(args: &[&str], out: &str) -> String {
    let status = cargo_bin_cmd!("herdsim")
        .args(args)
        .args(["--out", out, "--quiet"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{args:?}: {status:?}");
    fs::read_to_string(out).unwrap()
}

#[test]
fn the_golden_files_regenerate_byte_for_byte() {
    // Committed outputs of jittered runs: a change in any random stream (a
    // new rand, another seeding) or in a formula changes them.
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = workdir("golden");
    let per_run = path(&dir, "per-run.csv");
    let scenario = format!("{root}/tests/golden/per-run.toml");
    assert_eq!(
        regenerated(&["sweep", &scenario, "--per-run"], &per_run),
        fs::read_to_string(format!("{root}/tests/golden/per-run.csv")).unwrap(),
        "tests/golden/per-run.csv"
    );
    // The four-strategy comparison of results/, 500 jittered runs.
    let compared = path(&dir, "four-strategies.csv");
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "compare",
            "--policy",
            "none,equal,full,decorrelated,decorrelated-attempt",
            "--quiet",
            "--csv",
            &compared,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        fs::read_to_string(&compared).unwrap(),
        fs::read_to_string(format!("{root}/results/four-strategies.csv")).unwrap(),
        "results/four-strategies.csv"
    );
}

#[test]
fn resume_refuses_a_changed_or_damaged_file_and_names_it() {
    let dir = workdir("resume-damaged");
    let args = |out: &str| {
        vec![
            "sweep".to_string(),
            "--policy".into(),
            "none,full".into(),
            "--clients".into(),
            "50".into(),
            "--seeds".into(),
            "3".into(),
            "--quiet".into(),
            "--out".into(),
            out.to_string(),
        ]
    };
    let whole = path(&dir, "whole.csv");
    ok(
        &args(&whole).iter().map(String::as_str).collect::<Vec<_>>(),
        "2",
    );
    let text = fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The first row's last metric and checksum, and what comes before them.
    let [checksum, last_metric, rest]: [&str; 3] = lines[1]
        .rsplitn(3, ',')
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let damaged = [
        ("crlf", text.replace('\n', "\r\n"), "CR line endings"),
        (
            "short",
            format!("{}\n{}\n", lines[0], lines[1].rsplit_once(',').unwrap().0),
            "fields where a row has",
        ),
        (
            "junk",
            format!("{}\n{rest},x,{checksum}\n", lines[0]),
            "where a number belongs",
        ),
        // A number changed by hand: every field still a number, the row's
        // checksum no longer its text's.
        (
            "edited",
            format!("{}\n{rest},{}1,{checksum}\n", lines[0], last_metric),
            "changed after herdsim wrote it",
        ),
    ];
    for (name, content, says) in damaged {
        let file = path(&dir, &format!("{name}.csv"));
        fs::write(&file, &content).unwrap();
        let mut resume = args(&file);
        resume.push("--resume".into());
        let err = usage_error(&resume.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(err.contains(says) && err.contains(&file), "{name}: {err}");
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            content,
            "{name}: left as it was"
        );
    }
    let binary = path(&dir, "binary.csv");
    let mut bytes = text.clone().into_bytes();
    bytes.extend([0xff, 0xfe, 0x00]);
    fs::write(&binary, &bytes).unwrap();
    let mut resume = args(&binary);
    resume.push("--resume".into());
    let err = usage_error(&resume.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(err.contains("not UTF-8") && err.contains(&binary), "{err}");
}

#[test]
fn an_absurd_grid_is_refused_at_once_with_its_size() {
    let dir = workdir("absurd");
    let values = |n: u32| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let file = path(&dir, "huge.toml");
    fs::write(
        &file,
        format!(
            "clients = [{}]\nbase = [{}]\ncap = [{}]\n",
            values(1_000),
            values(1_000),
            values(1_000)
        ),
    )
    .unwrap();
    let out = path(&dir, "out.csv");
    let err = usage_error(&["sweep", &file, "--out", &out]);
    assert!(
        err.contains("1,000,000,000 points (clients 1000 × base 1000 × cap 1000)"),
        "{err}"
    );
    assert!(!Path::new(&out).exists());
    // A sweep says how many runs it will make before it starts.
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "sweep",
            "--policy",
            "full,none",
            "--clients",
            "10",
            "--seeds",
            "3",
        ])
        .args(["--out", &path(&dir, "small.csv")])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("2 points × 3 replicates: 6 runs to go\n"),
        "{stderr}"
    );
}

#[test]
fn max_events_stops_a_runaway_point_and_keeps_the_rows_before_it() {
    // No jitter at 3,000 clients is 4,501,500 calls; the others are small.
    let dir = workdir("max-events");
    let out = path(&dir, "m.csv");
    let args = [
        "sweep",
        "--policy",
        "full,none",
        "--clients",
        "1000,3000",
        "--max-events",
        "2000000",
        "--quiet",
        "--out",
        &out,
    ];
    let run = cargo_bin_cmd!("herdsim").args(args).output().unwrap();
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8(run.stderr).unwrap();
    assert!(
        err.contains("point 3 reached --max-events 2,000,000"),
        "{err}"
    );
    let rows = fs::read_to_string(&out).unwrap();
    assert_eq!(rows.lines().count(), 1 + 3, "the header and points 0 to 2");
    let compare = cargo_bin_cmd!("herdsim")
        .args([
            "compare",
            "--policy",
            "none",
            "--clients",
            "3000",
            "--seeds",
            "2",
        ])
        .args(["--max-events", "2000000", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(1));
    assert!(compare.stdout.is_empty());
}
