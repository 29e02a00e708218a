//! `herdsim map` as a user runs it: the metastable boundary found and
//! refined, the same bytes at any thread count, a killed map resumed, and
//! bad input refused.

use std::fs;
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::measure::server_metrics::wilson_interval;

use crate::common::{csv_rows as rows, succeed, usage_error, workdir};

/// The metastable case of `scenarios/metastable.toml` (50% utilisation at
/// 500 requests/s, 100 ms timeout, 4 attempts with immediate retries) at
/// 300 and 500 requests/s, outages ending at 2.1 s to 2.5 s.
pub(crate) const MAP: &[&str] = &[
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
    // Judged over 7 s after the longest outage's end, within the load.
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
    "20",
    "--refine",
    "2",
    "--quiet",
];

fn map_args<'a>(out: &'a str, svg: &'a str) -> Vec<&'a str> {
    let mut args = MAP.to_vec();
    args.extend(["--out", out, "--svg", svg]);
    args
}

#[test]
fn a_map_finds_the_metastable_boundary_and_refines_it() {
    let dir = workdir("map");
    let (out, svg) = (dir.join("m.csv"), dir.join("m.svg"));
    let (out, svg) = (out.to_str().unwrap(), svg.to_str().unwrap());
    let table = succeed(
        cargo_bin_cmd!("herdsim")
            .args(map_args(out, svg))
            .env("RAYON_NUM_THREADS", "2"),
    );
    let cells = rows(&fs::read_to_string(out).unwrap());
    let at = |rate: &str, end: f64| {
        cells
            .iter()
            .find(|c| c["rate_per_s"] == rate && c["map_x"].parse::<f64>().unwrap() == end)
            .unwrap_or_else(|| panic!("no cell at {rate}, {end}"))
    };
    // results/metastable.csv (100 seeds): 0 of 100 stuck after 100 ms, 100
    // of 100 after 500 ms; at 30% load nothing is stuck.
    assert_eq!(at("500", 2.1)["stuck"], "0");
    assert_eq!(at("500", 2.5)["stuck"], "20");
    for cell in cells.iter().filter(|c| c["rate_per_s"] == "300") {
        assert_eq!(cell["side"], "below", "{cell:?}");
        assert_eq!(cell["round"], "0", "nothing to refine at 30%");
    }
    // Refinement put cells between 2.1 and 2.5 at 500 requests/s only.
    let refined: Vec<_> = cells.iter().filter(|c| c["round"] != "0").collect();
    assert!(!refined.is_empty());
    assert!(refined.iter().all(|c| c["rate_per_s"] == "500"));
    // Every cell's figures follow from its counts.
    for c in &cells {
        let (stuck, runs): (u64, u64) = (c["stuck"].parse().unwrap(), c["runs"].parse().unwrap());
        assert!((20..=80).contains(&runs), "{c:?}");
        let p: f64 = c["storm_probability"].parse().unwrap();
        assert!((p - stuck as f64 / runs as f64).abs() < 1e-12);
        let (low, high) = wilson_interval(stuck, runs);
        assert!((c["storm_low"].parse::<f64>().unwrap() - low).abs() < 1e-12);
        assert!((c["storm_high"].parse::<f64>().unwrap() - high).abs() < 1e-12);
        let side = if high < 0.5 {
            "below"
        } else if low > 0.5 {
            "above"
        } else {
            "uncertain"
        };
        assert_eq!(c["side"], side);
    }
    // The printed boundary at 500 lies inside the range of the outages,
    // given as the outage's length in seconds (0.1 s to 0.5 s), the unit in
    // the header, to the decimals the refinement resolves: two rounds halve
    // the coarse 0.2 s step twice, to 0.05 s, so two decimals and no more.
    assert!(
        table.contains("outage length (s), from t = 2s (x) by rate (requests/s) (y)"),
        "{table}"
    );
    let header = table.lines().nth(1).unwrap();
    assert!(
        header.contains("50% crossing (outage length, s)"),
        "{header}"
    );
    let line = table.lines().find(|l| l.starts_with("500 ")).unwrap();
    let shown = line.split_whitespace().nth(1).unwrap();
    let crossing: f64 = shown.parse().unwrap();
    assert!((0.1..0.5).contains(&crossing), "{line}");
    let decimals = shown.split_once('.').map_or(0, |(_, d)| d.len());
    assert_eq!(decimals, 2, "{line}");
    // The patience the verdicts were judged over: given, so one window.
    assert!(header.ends_with("  patience"), "{header}");
    assert!(line.ends_with(" 7s"), "{line}");
    // The crossing lies between the cells either side of it.
    let cells_at_500: Vec<f64> = cells
        .iter()
        .filter(|c| c["rate_per_s"] == "500")
        .map(|c| c["map_x"].parse::<f64>().unwrap() - 2.0)
        .collect();
    assert!(cells_at_500.iter().any(|&x| x <= crossing + 0.005));
    assert!(cells_at_500.iter().any(|&x| x >= crossing - 0.005));

    // The heatmap: a rectangle per cell, coloured by its probability, the
    // uncertain ones hatched, and the contour drawn.
    let text = fs::read_to_string(svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let class = |name: &str| {
        doc.descendants()
            .filter(|n| n.attribute("class") == Some(name))
            .collect::<Vec<_>>()
    };
    let drawn = class("cell");
    // Under the map, what its verdicts were judged over; each cell's own
    // window in its tooltip.
    assert!(
        text.contains(
            "verdicts judged over a patience window of 7s after the last trigger (given)"
        ),
        "{text}"
    );
    assert!(
        drawn.iter().all(|n| n
            .descendants()
            .any(|t| t.has_tag_name("title") && t.text().unwrap_or("").ends_with("; patience 7s"))),
        "every cell's tooltip states its patience"
    );
    assert_eq!(drawn.len(), cells.len());
    for (rect, cell) in drawn.iter().zip(&cells) {
        let p: f64 = rect.attribute("data-p").unwrap().parse().unwrap();
        let expected: f64 = cell["storm_probability"].parse().unwrap();
        assert!((p - expected).abs() < 1e-4, "{p} against {expected}");
        assert!(rect.attribute("width").unwrap().parse::<f64>().unwrap() > 0.0);
    }
    let uncertain = cells.iter().filter(|c| c["side"] == "uncertain").count();
    assert_eq!(class("uncertain").len(), uncertain);
    assert_eq!(class("contour").len(), 1, "one row crosses 50%");
    // The x axis reads outage lengths, s (not end times), with its unit; y
    // has its unit too.
    let words: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for expected in [
        "0.1",
        "0.3",
        "0.5",
        "outage length (s), from t = 2s",
        "rate (requests/s)",
    ] {
        assert!(words.contains(&expected), "no '{expected}' in {words:?}");
    }
    assert!(!words.contains(&"2.5"), "an end time as a tick: {words:?}");
}

#[test]
fn a_map_is_the_same_at_any_thread_count() {
    let dir = workdir("map-threads");
    let files = |n: &str| {
        let (out, svg) = (dir.join(format!("{n}.csv")), dir.join(format!("{n}.svg")));
        (
            out.to_str().unwrap().to_string(),
            svg.to_str().unwrap().to_string(),
        )
    };
    let mut made = Vec::new();
    for threads in ["1", "2"] {
        let (out, svg) = files(threads);
        succeed(
            cargo_bin_cmd!("herdsim")
                .args(map_args(&out, &svg))
                .env("RAYON_NUM_THREADS", threads),
        );
        made.push((fs::read(&out).unwrap(), fs::read(&svg).unwrap()));
        assert!(
            !dir.join(format!("{threads}.csv.runs")).exists(),
            "the journal is removed once the map is written"
        );
    }
    assert!(made[0] == made[1], "the same bytes on 1 and 2 threads");
}

#[test]
fn a_killed_map_keeps_its_runs_and_resumes_to_the_same_bytes() {
    use std::os::unix::process::ExitStatusExt;
    let dir = workdir("map-killed");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // 200 seeds a cell: seconds of work, killed once 40 runs are in the
    // journal, so the cut is not a race.
    let args = |out: &str, svg: &str| {
        let mut args: Vec<String> = map_args(out, svg).iter().map(|s| s.to_string()).collect();
        let seeds = args.iter().position(|a| a == "--seeds").unwrap();
        args[seeds + 1] = "200".into();
        args
    };
    let (out, svg, journal) = (path("k.csv"), path("k.svg"), path("k.csv.runs"));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("herdsim"))
        .args(args(&out, &svg))
        .env("RAYON_NUM_THREADS", "2")
        .spawn()
        .unwrap();
    let runs = |text: &str| text.matches('\n').count().saturating_sub(1);
    let started = std::time::Instant::now();
    while runs(&fs::read_to_string(&journal).unwrap_or_default()) < 40 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no runs journaled"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    assert_eq!(
        child.wait().unwrap().signal(),
        Some(9),
        "killed, not finished"
    );
    let kept = runs(&fs::read_to_string(&journal).unwrap());
    assert!(
        (40..1_200).contains(&kept),
        "the kill cut the map: {kept} runs"
    );
    assert!(
        !dir.join("k.csv").exists() && !dir.join("k.svg").exists(),
        "no half-made map"
    );
    // Without --resume or --force the journal is not thrown away.
    let err = usage_error(
        &args(&out, &svg)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(err.contains("--resume"), "{err}");

    let (whole, whole_svg) = (path("w.csv"), path("w.svg"));
    succeed(cargo_bin_cmd!("herdsim").args(args(&whole, &whole_svg)));
    let mut resume = args(&out, &svg);
    resume.push("--resume".into());
    let table = succeed(cargo_bin_cmd!("herdsim").args(&resume));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&whole).unwrap());
    assert_eq!(fs::read(&svg).unwrap(), fs::read(&whole_svg).unwrap());
    assert!(table.contains("500"), "{table}");
    assert!(!dir.join("k.csv.runs").exists());
}

#[test]
fn bad_map_input_is_refused_in_one_line() {
    let dir = workdir("map-bad");
    let out = dir.join("m.csv").to_str().unwrap().to_string();
    let with = |changes: &[(&str, &str)], extra: &[&str]| {
        let mut args: Vec<String> = MAP.iter().map(|s| s.to_string()).collect();
        for (flag, value) in changes {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1] = value.to_string();
        }
        args.extend(["--out".to_string(), out.clone()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        usage_error(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (changes, extra, says) in [
        (&[("--x", "nope")][..], &[][..], "unknown parameter 'nope'"),
        (
            &[("--y", "trigger")],
            &[],
            "--x and --y both name 'trigger'",
        ),
        (
            &[("--trigger", "outage@2s..2.1s")],
            &[],
            "--x trigger: 1 value given",
        ),
        (
            &[("--policy", "no-backoff,full")],
            &[],
            "key 'policy' has 2 values",
        ),
        (
            &[("--resource", "slot")],
            &[],
            "a map needs the server model",
        ),
        (&[("--refine", "11")], &[], "--refine"),
        (
            &[],
            &["--max-seeds", "10"],
            "--max-seeds 10 is below --seeds 20",
        ),
        (&[], &["--max-runs", "50"], "below a row's coarse 60 runs"),
        // One cell twice over: by its text, or by its place along x.
        (
            &[("--rate", "300,300")],
            &[],
            "--y rate: '300' is '300' again",
        ),
        (
            &[("--x", "rate"), ("--y", "trigger"), ("--rate", "300,300.0")],
            &[],
            "--x rate: '300.0' is '300' again",
        ),
        (&[], &["--shard", "3/2"], "--shard"),
        (&[], &["--from", "x.csv"], "--from"),
    ] {
        let err = with(changes, extra);
        assert!(err.contains(says), "{changes:?} {extra:?}: {err}");
        assert!(!dir.join("m.csv").exists() && !dir.join("m.csv.runs").exists());
    }
    fs::write(&out, "precious\n").unwrap();
    let err = with(&[], &[]);
    assert!(err.contains("--force"), "{err}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious\n");
}

#[test]
fn a_maps_shards_merge_into_the_whole_map_and_draw_it_again() {
    let dir = workdir("map-shards");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let run = |extra: &[&str]| {
        let mut args = MAP.to_vec();
        args.extend(extra);
        succeed(cargo_bin_cmd!("herdsim").args(&args))
    };
    let table = run(&["--out", &path("whole.csv"), "--svg", &path("whole.svg")]);
    run(&["--out", &path("a.csv"), "--shard", "1/2"]);
    run(&["--out", &path("b.csv"), "--shard", "2/2"]);
    let a = fs::read_to_string(path("a.csv")).unwrap();
    assert!(
        a.lines().skip(1).all(|l| l.starts_with("0,")),
        "shard 1 holds row 0 only"
    );
    succeed(cargo_bin_cmd!("herdsim").args([
        "merge",
        &path("b.csv"),
        &path("a.csv"),
        "--out",
        &path("m.csv"),
    ]));
    assert_eq!(
        fs::read(path("m.csv")).unwrap(),
        fs::read(path("whole.csv")).unwrap()
    );
    // The merged file draws the whole map's picture and prints its table.
    let (merged, again) = (path("m.csv"), path("again.svg"));
    let mut from = MAP.to_vec();
    from.extend(["--from", &merged, "--svg", &again]);
    let drawn = succeed(cargo_bin_cmd!("herdsim").args(&from));
    assert_eq!(drawn, table);
    assert_eq!(
        fs::read(path("again.svg")).unwrap(),
        fs::read(path("whole.svg")).unwrap()
    );

    // A shard missing, a shard twice, a changed line, another map's file.
    let merge = |files: &[String]| {
        let mut args = vec!["merge".to_string()];
        args.extend(files.iter().cloned());
        args.extend(["--out".to_string(), path("bad.csv")]);
        usage_error(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert!(merge(&[path("a.csv")]).contains("lack rows 1"));
    assert!(merge(&[path("a.csv"), path("a.csv"), path("b.csv")]).contains("row 0 is in both"));
    fs::write(path("edited.csv"), a.replacen(",below,", ",above,", 1)).unwrap();
    assert!(merge(&[path("edited.csv"), path("b.csv")]).contains("changed since"));
    let mut other = MAP.to_vec();
    let seeds = other.iter().position(|a| *a == "20").unwrap();
    other[seeds] = "10";
    let c = path("c.csv");
    other.extend(["--out", &c, "--shard", "2/2"]);
    succeed(cargo_bin_cmd!("herdsim").args(&other));
    assert!(merge(&[path("a.csv"), path("c.csv")]).contains("another map"));
    assert!(!dir.join("bad.csv").exists());
    let shard = path("a.csv");
    let mut wrong = MAP.to_vec();
    wrong.extend(["--from", &shard]);
    let err = usage_error(&wrong);
    assert!(err.contains("no cells in row 1"), "{err}");
}

#[test]
fn values_given_out_of_order_draw_the_same_cells() {
    let dir = workdir("map-order");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let mut reversed = MAP.to_vec();
    let i = reversed.iter().position(|a| *a == "--trigger").unwrap();
    reversed[i + 1] = "outage@2s..2.5s;outage@2s..2.1s;outage@2s..2.3s";
    let (a, b) = (path("a.svg"), path("b.svg"));
    let mut sorted = MAP.to_vec();
    sorted.extend(["--out", "a.csv", "--svg", &a]);
    reversed.extend(["--out", "b.csv", "--svg", &b]);
    let left = succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&sorted));
    let right = succeed(cargo_bin_cmd!("herdsim").current_dir(&dir).args(&reversed));
    assert_eq!(left, right, "the same boundaries");
    // The same rectangles (the title aside), every one of positive width.
    let cells = |file: &str| {
        let text = fs::read_to_string(file).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("cell"))
            .map(|n| ["x", "y", "width", "data-p"].map(|k| n.attribute(k).unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    let (one, two) = (cells(&a), cells(&b));
    assert!(!one.is_empty());
    assert_eq!(one, two);
    assert!(one.iter().all(|c| c[2].parse::<f64>().unwrap() > 0.0));
}

/// A map whose run budget stopped a row's refinement says so whether it
/// is made, found whole by `--resume`, or read back by `--from`: the same
/// file prints the same text.
#[test]
fn a_spent_run_budget_is_stated_by_a_map_made_resumed_or_read_back() {
    let dir = workdir("map-budget-spent");
    let (out, svg) = (dir.join("m.csv"), dir.join("m.svg"));
    let (out, svg) = (out.to_str().unwrap(), svg.to_str().unwrap());
    // 500 requests/s crosses 50% between the coarse cells: its 60 coarse
    // runs and a budget of 70 leave no room for two refinement rounds.
    let mut args = map_args(out, svg);
    args.extend(["--max-runs", "70"]);
    let made = succeed(cargo_bin_cmd!("herdsim").args(&args));
    let stated = "; the run budget stopped the refinement of some rows";
    assert!(made.lines().next().unwrap().ends_with(stated), "{made}");
    let cells = rows(&fs::read_to_string(out).unwrap());
    for c in &cells {
        let want = if c["rate_per_s"] == "500" {
            "yes"
        } else {
            "no"
        };
        assert_eq!(c["row_budget_spent"], want, "{c:?}");
    }
    let mut resumed = args.clone();
    resumed.push("--resume");
    assert_eq!(succeed(cargo_bin_cmd!("herdsim").args(&resumed)), made);
    let mut from = MAP.to_vec();
    from.extend(["--max-runs", "70", "--from", out]);
    assert_eq!(succeed(cargo_bin_cmd!("herdsim").args(&from)), made);
    // A line whose flag was changed (its checksum made again) is refused.
    let text = fs::read_to_string(out).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let at = header
        .iter()
        .position(|&c| c == "row_budget_spent")
        .unwrap();
    let line = text.lines().nth(1).unwrap();
    let mut fields: Vec<&str> = line.split(',').collect();
    fields[at] = if fields[at] == "yes" { "no" } else { "yes" };
    fields.pop();
    let body = fields.join(",");
    let changed = text.replacen(
        line,
        &format!("{body},{}", herdsim::report::csv::checksum(&body)),
        1,
    );
    let bad = dir.join("bad.csv");
    fs::write(&bad, changed).unwrap();
    let mut from = MAP.to_vec();
    from.extend(["--max-runs", "70", "--from", bad.to_str().unwrap()]);
    let err = usage_error(&from);
    assert!(err.contains("row_budget_spent"), "{err}");
}
