//! Files herdsim wrote, read back after someone or something changed them
//! (issue 34): a map's run journal on --resume, map shards on merge and
//! `map --from`, a sweep shard's claimed size, a study's reference file and
//! a compare file, and `plot` over values past the largest float. Each bad
//! file is refused in one line naming where, quickly, never with a panic.

use std::fs;
use std::path::Path;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::base::fingerprint::Fingerprint;

use crate::common::{succeed, workdir};

/// A small map (two rows, three coarse outages, two refinement rounds, 4
/// seeds a cell): a fraction of a second.
const MAP: &[&str] = &[
    "map",
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
    "--rate",
    "300,500",
    "--trigger",
    "outage@2s..2.1s;outage@2s..2.3s;outage@2s..2.5s",
    "--x",
    "trigger",
    "--y",
    "rate",
    "--seeds",
    "4",
    "--refine",
    "2",
    "--quiet",
];

/// `herdsim args` (in `dir`), which must be refused: exit code 2 within
/// 30 s (a hang fails, it does not stall the suite), nothing on stdout,
/// one line on stderr without a panic. The line.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = cargo_bin_cmd!("herdsim")
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed results");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

/// `line` with its last field (a checksum) made again for its new text: a
/// change the checksum alone cannot see.
fn checksummed(line: &str) -> String {
    let body = line.rsplit_once(',').unwrap().0;
    format!("{body},{}", Fingerprint::of(body))
}

/// `text` with line `n` (from 1) replaced by `f` of it.
fn with_line(text: &str, n: usize, f: impl Fn(&str) -> String) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[n - 1] = f(&lines[n - 1]);
    lines.join("\n") + "\n"
}

/// `text` with `from` replaced by `to` once in line `n`, checksummed again.
fn forged(text: &str, n: usize, from: &str, to: &str) -> String {
    let out = with_line(text, n, |l| {
        assert!(l.contains(from), "line {n} has no '{from}': {l}");
        checksummed(&l.replacen(from, to, 1))
    });
    assert_ne!(out, text, "the forgery changed the file");
    out
}

/// `text` with every row's field under `column` set to `value`, each row
/// checksummed again (fields without quoted commas).
fn with_column(text: &str, column: &str, value: &str) -> String {
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let at = header.split(',').position(|c| c == column).unwrap();
    let mut out = format!("{header}\n");
    for line in lines {
        let mut fields: Vec<&str> = line.split(',').collect();
        fields[at] = value;
        out += &checksummed(&fields.join(","));
        out.push('\n');
    }
    out
}

#[test]
fn a_changed_journal_line_is_refused_by_its_line_and_a_cut_one_rerun() {
    let dir = workdir("h2-journal");
    let map = |extra: &[&str]| {
        let mut args = MAP.to_vec();
        args.extend(["--out", "m.csv"]);
        args.extend(extra);
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    // A run of the 500/s row reaches the event limit: the runs before it
    // stay in the journal, as after a kill.
    let out = cargo_bin_cmd!("herdsim")
        .current_dir(&dir)
        .args(map(&["--max-events", "20000"]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "stopped at the limit");
    let journal = fs::read_to_string(dir.join("m.csv.runs")).unwrap();
    assert!(journal.lines().count() > 4, "{journal}");
    assert!(
        journal
            .lines()
            .nth(1)
            .unwrap()
            .contains(",300,0,recovered,")
    );
    let resume = map(&["--resume"]);
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    let try_journal = |text: &str| {
        fs::write(dir.join("m.csv.runs"), text).unwrap();
        refused(&dir, &resume)
    };
    // A flipped verdict, as an editor or a bad disk leaves it.
    let flipped = journal.replacen(",300,0,recovered,", ",300,0,stuck,", 1);
    assert_ne!(flipped, journal);
    let err = try_journal(&flipped);
    assert!(err.contains("'m.csv.runs' line 2"), "{err}");
    assert!(
        err.contains("row_checksum") && err.contains("--force"),
        "{err}"
    );
    // Changes made with the checksum recomputed: figures no run gives, a
    // replicate past the cell's seeds or given twice, a row not the map's.
    let amplification = journal.lines().nth(1).unwrap().split(',').nth(6).unwrap();
    for (edit, says) in [
        (
            forged(&journal, 2, amplification, "NaN"),
            "line 2: amplification 'NaN'",
        ),
        (
            forged(&journal, 2, amplification, "-1"),
            "line 2: amplification '-1'",
        ),
        (
            forged(&journal, 2, ",recovered,0.0,", ",stuck,0.0,"),
            "line 2: recovery_ms '0.0' on a run that did not recover",
        ),
        (
            forged(&journal, 2, ",300,0,", ",300,99,"),
            "line 2: replicate '99' is not a replicate of a cell (0 to 15",
        ),
        (
            forged(&journal, 3, ",300,1,", ",300,0,"),
            "line 3: replicate 0 of the cell x = outage@2s..2.1s, y = 300 is on line 2 already",
        ),
        (
            forged(&journal, 3, ",300,1,", ",400,1,"),
            "line 3: y '400' is not a row this map makes",
        ),
        (
            forged(&journal, 3, "outage@2s..2.1s", "outage@2s..9s"),
            "line 3: x 'outage@2s..9s' is not on this map's x axis",
        ),
    ] {
        let err = try_journal(&edit);
        assert!(err.contains(says), "{says}: {err}");
        assert!(!dir.join("m.csv").exists(), "no map made from it");
    }
    // The last line cut short by a kill is dropped and its run made again:
    // the map is the whole map's, byte for byte.
    let second = journal.lines().nth(2).unwrap();
    let cut = format!("{journal}{}", &second[..second.len() / 2]);
    fs::write(dir.join("m.csv.runs"), cut).unwrap();
    succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&resume));
    let mut whole = MAP.to_vec();
    whole.extend(["--out", "w.csv"]);
    succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&whole));
    assert_eq!(
        fs::read(dir.join("m.csv")).unwrap(),
        fs::read(dir.join("w.csv")).unwrap()
    );
}

#[test]
fn map_files_with_a_cell_twice_or_left_out_are_refused_in_merge_and_from() {
    let dir = workdir("h2-map-cells");
    let make = |extra: &[&str]| {
        let mut args = MAP.to_vec();
        args.extend(extra);
        succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&args));
    };
    make(&["--out", "w.csv"]);
    make(&["--out", "a.csv", "--shard", "1/2"]);
    make(&["--out", "b.csv", "--shard", "2/2"]);
    let read = |name: &str| fs::read_to_string(dir.join(name)).unwrap();
    let (whole, b) = (read("w.csv"), read("b.csv"));
    // Row 1 (500/s) is refined: outages to 2.1, 2.2, 2.25, 2.3, 2.35, 2.4
    // and 2.5 s, the 2.2 s cell made in round 1, 2.25 s from it in round 2.
    let b_lines: Vec<&str> = b.lines().collect();
    assert!(b_lines[2].starts_with("1,2.2,") && b_lines[3].starts_with("1,2.25,"));
    assert!(
        b_lines[3].contains(",outage@2s..2.25s,2,"),
        "{}",
        b_lines[3]
    );
    let write = |name: &str, text: &str| fs::write(dir.join(name), text).unwrap();
    let merge = |files: &[&str]| {
        let mut args = vec!["merge"];
        args.extend(files);
        args.extend(["--out", "merged.csv"]);
        let err = refused(&dir, &args);
        assert!(!dir.join("merged.csv").exists(), "nothing written");
        err
    };
    let from = |file: &str| {
        let mut args = MAP.to_vec();
        args.extend(["--from", file]);
        refused(&dir, &args)
    };
    let without = |text: &str, start: &str| {
        let kept: String = text
            .split_inclusive('\n')
            .filter(|l| !l.starts_with(start))
            .collect();
        assert_ne!(kept, text, "a line of {start} was left out");
        kept
    };

    // A cell twice: its line copied, checksum and all.
    write("b_twice.csv", &format!("{b}{}\n", b_lines[2]));
    let err = merge(&["a.csv", "b_twice.csv"]);
    assert!(
        err.contains("the cell (row 1, x outage@2s..2.2s)") && err.contains("given twice"),
        "{err}"
    );
    assert!(
        err.contains("'b_twice.csv' line 3") && err.contains("line 9"),
        "{err}"
    );
    write("w_twice.csv", &format!("{whole}{}\n", b_lines[2]));
    let err = from("w_twice.csv");
    assert!(err.contains("(row 1, x outage@2s..2.2s)"), "{err}");

    // A coarse cell left out.
    write("b_coarse.csv", &without(&b, "1,2.3,"));
    let err = merge(&["a.csv", "b_coarse.csv"]);
    assert!(
        err.contains("'b_coarse.csv' lacks the cell (row 1, x outage@2s..2.3s)"),
        "{err}"
    );
    write("w_coarse.csv", &without(&whole, "1,2.3,"));
    assert!(from("w_coarse.csv").contains("(row 1, x outage@2s..2.3s)"));

    // A refined cell left out that a later round refined around: its
    // child is no longer at a midpoint.
    write("b_parent.csv", &without(&b, "1,2.2,"));
    let err = merge(&["a.csv", "b_parent.csv"]);
    assert!(
        err.contains("(row 1, x outage@2s..2.25s) of round 2 is not half way"),
        "{err}"
    );
    write("w_parent.csv", &without(&whole, "1,2.2,"));
    assert!(from("w_parent.csv").contains("outage@2s..2.25s) of round 2"));

    // A cell of the last round left out: no other cell was refined from
    // it, so only its row's count of cells (row_cells) tells.
    write("b_last.csv", &without(&b, "1,2.25,"));
    let err = merge(&["a.csv", "b_last.csv"]);
    assert!(
        err.contains("'b_last.csv' line 2: row 1 has 7 cells (row_cells), but 6 are given"),
        "{err}"
    );
    write("w_last.csv", &without(&whole, "1,2.25,"));
    assert!(from("w_last.csv").contains("row 1 has 7 cells (row_cells), but 6"));

    // Rows and counts a map never writes, checksummed again.
    write("b_row.csv", &forged(&b, 2, "1,2.1,", "7,2.1,"));
    assert!(merge(&["a.csv", "b_row.csv"]).contains("map_row 7 is not a row of a map of 2"));
    write("w_row.csv", &forged(&whole, 5, "1,2.1,", "7,2.1,"));
    assert!(from("w_row.csv").contains("line 5: map_row 7"));
    let stuck_at = whole
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "stuck");
    let line = whole.lines().nth(1).unwrap();
    let fields: Vec<&str> = line.split(',').collect();
    let (runs, stuck) = (fields[stuck_at.unwrap() - 1], fields[stuck_at.unwrap()]);
    assert_eq!((runs, stuck), ("4", "0"), "{line}");
    write("w_counts.csv", &forged(&whole, 2, ",4,0,0,", ",4,9,0,"));
    assert!(from("w_counts.csv").contains("stuck 9 and unresolved 0 of 4 runs"));

    // The whole files still merge and draw.
    succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args([
        "merge",
        "b.csv",
        "a.csv",
        "--out",
        "merged.csv",
    ]));
    assert_eq!(read("merged.csv"), whole);
    let mut draw = MAP.to_vec();
    draw.extend(["--from", "merged.csv"]);
    succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&draw));
}

#[test]
fn merge_refuses_claimed_sizes_far_above_the_rows_present_without_allocating_them() {
    let dir = workdir("h2-claims");
    fs::write(
        dir.join("s.toml"),
        "policy = [\"none\", \"full\"]\nclients = [5, 9]\nseeds = 2\n",
    )
    .unwrap();
    for (shard, out) in [("1/2", "s1.csv"), ("2/2", "s2.csv")] {
        succeed(
            cargo_bin_cmd!("herdsim")
                .current_dir(&dir)
                .args(["sweep", "s.toml", "--out", out, "--shard", shard, "-q"]),
        );
    }
    let read = |name: &str| fs::read_to_string(dir.join(name)).unwrap();
    // Each claim in every row, so the shards agree: 10^9 points asked an
    // 8 GB allocation, 2^64 - 1 a panic.
    for claim in ["1000000000", "18446744073709551615"] {
        for name in ["s1.csv", "s2.csv"] {
            let text = with_column(&read(name), "sweep_points", claim);
            fs::write(dir.join(format!("big-{name}")), text).unwrap();
        }
        let err = refused(
            &dir,
            &["merge", "big-s1.csv", "big-s2.csv", "--out", "m.csv"],
        );
        assert!(
            err.contains("points 4 to ") && err.contains(&format!("sweep's {claim}")),
            "{err}"
        );
        assert!(!dir.join("m.csv").exists());
    }
    // The same for a map's shards' map_rows.
    let mut map = MAP.to_vec();
    map.extend(["--out", "a.csv", "--shard", "1/2"]);
    succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&map));
    let big = with_column(&read("a.csv"), "map_rows", "1000000000000000000");
    fs::write(dir.join("big-a.csv"), big).unwrap();
    let err = refused(&dir, &["merge", "big-a.csv", "--out", "m.csv"]);
    assert!(
        err.contains("lack rows 1, 2, 3, 4, 5, 6, 7, 8 and 999999999999999991 more"),
        "{err}"
    );
}

#[test]
fn a_reference_file_with_figures_that_are_not_finite_is_refused_by_line_and_column() {
    let dir = workdir("h2-reference");
    let root = env!("CARGO_MANIFEST_DIR");
    let reference = fs::read_to_string(format!("{root}/reference/brooker-2022-retries.csv"))
        .unwrap()
        .replace("\r\n", "\n");
    let scenario = format!("{root}/scenarios/brooker-2022-retries.toml");
    let header: Vec<&str> = reference.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let set = |name: &str, value: &str| {
        with_line(&reference, 2, |l| {
            let mut fields: Vec<&str> = l.split(',').collect();
            fields[column(name)] = value;
            fields.join(",")
        })
    };
    for (name, value, says) in [
        ("success_mean", "NaN", "'NaN' is not a finite number"),
        ("success_mean", "inf", "'inf' is not a finite number"),
        ("load_mean", "1e400", "'1e400' is not a finite number"),
        ("load_mean", "", "'' is not a number"),
        ("success_sd", "-0.5", "-0.5 is not a standard deviation"),
        ("seeds", "-3", "'-3' is not a count of runs"),
        ("seeds", "2.5", "'2.5' is not a count of runs"),
        ("seeds", "1e12", "'1e12' is not a count of runs"),
        ("rate_per_client", "NaN", "'NaN' is not a finite number"),
        // A figure the study does not judge is checked all the same: a
        // broken one means a broken rerun.
        ("unique_calls_mean", "abc", "'abc' is not a number"),
        // A rate the registry refuses: an error, not a panic.
        (
            "rate_per_client",
            "1e300",
            "at most 1,000,000,000 requests/s",
        ),
    ] {
        fs::write(dir.join("ref.csv"), set(name, value)).unwrap();
        let err = refused(
            &dir,
            &["compare", &scenario, "--reference", "ref.csv", "-q"],
        );
        assert!(
            err.contains(&format!("--reference ref.csv: line 2: column '{name}'")),
            "{name}={value}: {err}"
        );
        assert!(err.contains(says), "{name}={value}: {err}");
    }

    // A compare file read back by `report --from`: every figure a number.
    let compare = "point,policy,clients,replicates,master_seed,metric,mean,sd,ci95,min,max,\
                   published,published_low,published_high,published_runs,published_source,verdict\n\
                   0,none,1000,100,42,calls,500500,0,0,500500,500500,28000,27500,28500,,seed 002 table,higher\n\
                   1,full,1000,100,42,calls,4726,17,3.4,4690,4770,3400,3350,3450,,seed 002 table,higher\n";
    let report = |text: &str| {
        fs::write(dir.join("c.csv"), text).unwrap();
        let err = refused(&dir, &["report", "--from", "c.csv", "--out", "r.html"]);
        assert!(!dir.join("r.html").exists());
        err
    };
    for (from, to, says) in [
        (
            ",4726,",
            ",NaN,",
            "line 3: column 'mean': 'NaN' is not a finite number",
        ),
        (
            ",3.4,",
            ",-3.4,",
            "line 3: column 'ci95': '-3.4' is not a finite number from 0",
        ),
        (",4770,", ",inf,", "line 3: column 'max': 'inf'"),
        (
            ",100,42,calls,4726",
            ",1.5,42,calls,4726",
            "column 'replicates': '1.5'",
        ),
    ] {
        let err = report(&compare.replacen(from, to, 1));
        assert!(err.contains("'c.csv'") && err.contains(says), "{err}");
    }
    fs::write(dir.join("c.csv"), compare).unwrap();
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(&dir)
            .args(["report", "--from", "c.csv", "--out", "r.html"]),
    );
}

#[test]
fn plot_refuses_values_and_ranges_past_the_largest_float_instead_of_hanging() {
    let dir = workdir("h2-plot");
    let plot = |table: &str| {
        fs::write(dir.join("t.csv"), table).unwrap();
        let err = refused(
            &dir,
            &[
                "plot",
                "t.csv",
                "--x",
                "clients",
                "--y",
                "calls_mean",
                "--out",
                "t.svg",
            ],
        );
        assert!(!dir.join("t.svg").exists(), "no picture written");
        err
    };
    let band = |ci: &str| format!("clients,calls_mean,calls_ci95\n1,5,1\n2,6,{ci}\n");
    // A band past the largest float: plotters' ticks never ended.
    let err = plot(&band("1e308"));
    assert!(
        err.contains("the y axis (calls_mean) would run from -1e308 to 1e308"),
        "{err}"
    );
    for (ci, says) in [
        ("inf", "the band column calls_ci95 is inf at clients = 2"),
        ("NaN", "the band column calls_ci95 is NaN at clients = 2"),
        ("-1", "the band column calls_ci95 is -1 at clients = 2"),
    ] {
        let err = plot(&band(ci));
        assert!(err.contains("'t.csv'") && err.contains(says), "{ci}: {err}");
    }
    let err = plot("clients,calls_mean\n1,5\n2,1e308\n3,-1e308\n");
    assert!(err.contains("y axis (calls_mean)"), "{err}");
    let err = plot("clients,calls_mean\n1,5\n1.7e308,6\n-1.7e308,6\n");
    assert!(err.contains("x axis (clients)"), "{err}");
    let err = plot("clients,calls_mean\n1,5\n2,inf\n");
    assert!(
        err.contains("--y column calls_mean is inf at clients = 2"),
        "{err}"
    );
    // A log axis over a value at or below 0 names its flag and column.
    fs::write(dir.join("t.csv"), band("6")).unwrap();
    let err = refused(
        &dir,
        &[
            "plot",
            "t.csv",
            "--x",
            "clients",
            "--y",
            "calls_mean",
            "--log-y",
            "--out",
            "t.svg",
        ],
    );
    assert!(
        err.contains("--log-y: the y axis (calls_mean) reaches 0"),
        "{err}"
    );
    // Large but finite bands still draw.
    fs::write(dir.join("t.csv"), band("1e307")).unwrap();
    succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args([
        "plot",
        "t.csv",
        "--x",
        "clients",
        "--y",
        "calls_mean",
        "--out",
        "t.svg",
    ]));
}
