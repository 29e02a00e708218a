//! `herdsim map --splitting` as a user runs it: the rare cells split and
//! nothing else, the estimate the same question `run` answers with plain
//! runs, the same bytes at any thread count, through a kill and resume and
//! across shards, and bad input refused.

use std::fs;
use std::sync::OnceLock;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{csv_rows as rows, server_json, succeed, usage_error, workdir};

/// The service of `map.rs`'s map (one worker at 300 or 500 requests/s, a
/// 100 ms timeout, four immediate attempts), without a queue limit, so the
/// storm region is given: a backlog of 40, calm at 5. `--resource server`
/// comes first, for `run`'s helper (which gives it) to leave out.
const SERVICE: &[&str] = &[
    "--resource",
    "server",
    "--workers",
    "1",
    "--service",
    "exp:1ms",
    "--timeout",
    "100ms",
    "--duration",
    "10s",
    "--patience",
    "7s",
    "--policy",
    "no-backoff",
    "--max-attempts",
    "4",
    "--high",
    "40",
    "--low",
    "5",
];

/// `map` over three outages and two rates, coarse grid only, with 10
/// batches of `paths` paths for each cell below the default threshold.
fn map_args(paths: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["map"];
    args.extend(SERVICE);
    args.extend([
        "--rate",
        "300,500",
        "--trigger",
        "outage@2s..2.1s;outage@2s..2.3s;outage@2s..2.5s",
        "--x",
        "trigger",
        "--y",
        "rate",
        "--seeds",
        "20",
        "--refine",
        "0",
        "--splitting",
        paths,
        "--batches",
        "10",
    ]);
    args.extend(extra);
    args.into_iter().map(str::to_string).collect()
}

/// A field of a CSV row as a number.
fn number(row: &std::collections::HashMap<String, String>, column: &str) -> f64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column}: {}", row[column]))
}

/// The map of 200 paths a batch on one thread: what it printed and its
/// file's bytes. Made once for the two tests that read it (seconds of
/// splitting each time): the kill test resumes a run on two threads to
/// these bytes, so the rare-cells test checks what any thread count makes.
fn whole_map() -> &'static (String, Vec<u8>) {
    static WHOLE: OnceLock<(String, Vec<u8>)> = OnceLock::new();
    WHOLE.get_or_init(|| {
        let dir = workdir("map-split-whole");
        let out = dir.join("w.csv").to_str().unwrap().to_string();
        let table = succeed(
            cargo_bin_cmd!("herdsim")
                .args(map_args("200", &["--out", &out, "--quiet"]))
                .env("RAYON_NUM_THREADS", "1"),
        );
        let bytes = fs::read(&out).unwrap();
        let _ = fs::remove_dir_all(&dir);
        (table, bytes)
    })
}

#[test]
fn a_map_splits_its_rare_cells_and_means_runs_storm_before_calm() {
    let (table, bytes) = whole_map();
    assert!(
        table.contains("storm region before calm") && table.contains("not the verdict's stuck"),
        "the table says which question splitting answers: {table}"
    );
    let cells = rows(std::str::from_utf8(bytes).unwrap());
    assert_eq!(cells.len(), 6);
    let mut compared = 0;
    for cell in &cells {
        let plain = number(cell, "storm_probability");
        let split = !cell["split_probability"].is_empty();
        // Exactly the cells below the default threshold (0.05) are split.
        assert_eq!(split, plain < 0.05, "{cell:?}");
        if !split {
            assert!(cell["split_paths"].is_empty() && cell["split_high"].is_empty());
            continue;
        }
        assert_eq!(
            (&cell["split_high"][..], &cell["split_low"][..]),
            ("40", "5")
        );
        assert_eq!(cell["split_batches"], "10");
        let (p, ci) = (
            number(cell, "split_probability"),
            number(cell, "split_ci95"),
        );
        // Where plain runs can check it (p well inside 0 to 1), `run`'s
        // 4,000 plain runs of the same cell answer the same question:
        // storm before calm after the trigger.
        if !(0.05..0.95).contains(&p) {
            continue;
        }
        let json = server_json(
            &[
                &SERVICE[2..],
                &[
                    "--rate",
                    &cell["rate_per_s"],
                    "--trigger",
                    &cell["map_value"],
                    "--seeds",
                    "4000",
                ],
            ]
            .concat(),
        );
        let plain = &json["backlog"]["plain"];
        let (storm, runs) = (
            plain["storm"].as_f64().unwrap(),
            plain["runs"].as_f64().unwrap(),
        );
        let q = storm / runs;
        // Splitting's half-width is t(0.975, 9) = 2.262 standard errors
        // over its 10 batches; a binomial share's is sqrt(q(1 − q)/n). The
        // two are independent, so |z| < 4 fails a sound estimator about
        // once in 15,000 comparisons, and a biased one (the cut paths of
        // one level, the wrong trigger's end) by far more than that.
        let se = ((ci / 2.262).powi(2) + q * (1.0 - q) / runs).sqrt();
        let z = (p - q) / se;
        assert!(
            z.abs() < 4.0,
            "{} at {}: splitting {p} ± {ci} against plain {q} (z {z:.2})",
            cell["map_value"],
            cell["rate_per_s"]
        );
        compared += 1;
    }
    assert!(compared >= 2, "at least two cells checked: {cells:?}");
}

#[test]
fn a_split_map_is_the_same_at_any_thread_count_and_through_a_kill() {
    use std::os::unix::process::ExitStatusExt;
    let dir = workdir("map-split-killed");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // 200 paths a batch, the rare-cells test's map: its 6 cells' splitting
    // (up to 60 batches) takes seconds, and the run is killed once a batch
    // is in the journal (polled every 5 ms), so the kill lands in the
    // splitting, not the runs, and cuts it short (checked below).
    let (out, journal) = (path("k.csv"), path("k.csv.runs"));
    let args = |out: &str| map_args("200", &["--out", out, "--quiet"]);
    let whole = &whole_map().1;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .args(args(&out))
        .env("RAYON_NUM_THREADS", "2")
        .spawn()
        .unwrap();
    let batches = |text: &str| text.matches(",split,").count();
    let started = std::time::Instant::now();
    while batches(&fs::read_to_string(&journal).unwrap_or_default()) < 1 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no batch journaled"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    assert_eq!(
        child.wait().unwrap().signal(),
        Some(9),
        "killed, not finished"
    );
    let kept = fs::read_to_string(&journal).unwrap();
    // The map's 6 cells × 10 batches: the kill cut the splitting short.
    assert!(
        (1..60).contains(&batches(&kept)),
        "the kill cut the splitting: {} batches",
        batches(&kept)
    );
    assert!(!dir.join("k.csv").exists(), "no half-made map");
    let mut resume = args(&out);
    resume.push("--resume".into());
    // A batch's line changed since it was written is refused, naming it;
    // the journal as written then resumes.
    let at = kept.find(",split,").unwrap();
    let line_no = kept[..at].matches('\n').count() + 1;
    let estimate = at + ",split,".len();
    let mut changed = kept.clone();
    changed.replace_range(estimate..estimate + 1, "9");
    assert_ne!(changed, kept, "the estimate's first digit changed");
    fs::write(&journal, &changed).unwrap();
    let err = usage_error(&resume.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        err.contains(&format!("line {line_no}")) && err.contains("changed since it was written"),
        "{err}"
    );
    fs::write(&journal, &kept).unwrap();
    succeed(
        cargo_bin_cmd!("herdsim")
            .args(&resume)
            .env("RAYON_NUM_THREADS", "2"),
    );
    assert_eq!(
        &fs::read(&out).unwrap(),
        whole,
        "resumed on 2 threads, the bytes of one made whole on 1"
    );
    assert!(!dir.join("k.csv.runs").exists());
}

#[test]
fn a_split_maps_shards_merge_into_the_whole_map() {
    let dir = workdir("map-split-shards");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let whole = path("whole.csv");
    let table = succeed(cargo_bin_cmd!("herdsim").args(map_args("100", &["--out", &whole, "-q"])));
    let mut shards = Vec::new();
    for shard in ["1/2", "2/2"] {
        let file = path(&format!("s{}.csv", &shard[..1]));
        let args = map_args("100", &["--out", &file, "-q", "--shard", shard]);
        succeed(cargo_bin_cmd!("herdsim").args(&args));
        shards.push(file);
    }
    let merged = path("merged.csv");
    succeed(
        cargo_bin_cmd!("herdsim")
            .args(["merge", "--out", &merged])
            .args(&shards),
    );
    assert_eq!(fs::read(&merged).unwrap(), fs::read(&whole).unwrap());
    // The merged file prints the whole map's tables again.
    let from = map_args("100", &["--from", &merged]);
    let again = succeed(cargo_bin_cmd!("herdsim").args(&from));
    assert_eq!(again, table, "--from prints what the map printed");
}

#[test]
fn bad_map_splitting_input_is_refused_in_one_line() {
    let dir = workdir("map-split-bad");
    let out = dir.join("m.csv").to_str().unwrap().to_string();
    let refused =
        |args: Vec<String>| usage_error(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let without = |flags: &[&str], extra: &[&str]| {
        let mut args = map_args("100", &["--out", &out]);
        for flag in flags {
            let i = args.iter().position(|a| a == flag).unwrap();
            args.drain(i..i + 2);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        refused(args)
    };
    for (flags, extra, says) in [
        (
            &["--splitting", "--batches"][..],
            &[][..],
            "--high: a map's backlog regions are splitting's",
        ),
        // With a timeout the storm region has a default; without one (and
        // no queue limit) it must be given.
        (
            &["--high", "--timeout"],
            &[],
            "--high: give the storm region's backlog",
        ),
        (&[], &["--split-below", "0"], "--split-below"),
        (&[], &["--split-below", "1.5"], "--split-below"),
        (&["--low"], &["--low", "40"], "expected low < high"),
        (&[], &["--batches", "1"], "--batches"),
    ] {
        let err = without(flags, extra);
        assert!(err.contains(says), "{flags:?} {extra:?}: {err}");
    }
    // A map made without splitting is not read back as one made with it.
    let plain = dir.join("plain.csv").to_str().unwrap().to_string();
    let mut args = map_args("100", &["--out", &plain, "-q"]);
    let i = args.iter().position(|a| a == "--splitting").unwrap();
    args.drain(i..i + 4);
    args.retain(|a| !["--high", "--low", "40", "5"].contains(&a.as_str()));
    succeed(cargo_bin_cmd!("herdsim").args(&args));
    let err = refused(map_args("100", &["--from", &plain]));
    assert!(err.contains("without --splitting"), "{err}");
}
