//! `herdsim assess` as a user runs it: every figure it prints comes back
//! from the `map` or `run` command it names, the same at any thread count,
//! its page holds the curves, and bad input is one line.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{succeed, usage_error, workdir};

/// A small service that storms: 300 requests/s on 4 workers of 10 ms
/// (ρ = 0.75), a 200 ms timeout and four immediate attempts, so a stall of
/// a few hundred ms tips it over and every run is short.
const SERVICE: &[&str] = &[
    "--resource",
    "server",
    "--rate",
    "300",
    "--workers",
    "4",
    "--service",
    "10ms",
    "--timeout",
    "200ms",
    "--policy",
    "no-backoff",
    "--max-attempts",
    "4",
];

/// assess's own flags in these tests: one stall kind, few seeds, one
/// refinement round, no budget to compare (a few seconds in all).
const QUICK: &[&str] = &[
    "--stall",
    "outage",
    "--seeds",
    "4",
    "--refine",
    "1",
    "--suggest",
    "none",
];

/// `herdsim assess SERVICE QUICK extra` in `dir`: its standard output.
fn assess(dir: &Path, threads: &str, extra: &[&str]) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(dir)
            .env("RAYON_NUM_THREADS", threads)
            .arg("assess")
            .args(SERVICE)
            .args(QUICK)
            .args(extra)
            .arg("-q"),
    )
}

/// The words of a command as a POSIX shell reads them: what assess's
/// quoting (`'…'`, a quote itself as `'\''`) makes.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            ' ' if in_word => {
                words.push(std::mem::take(&mut word));
                in_word = false;
            }
            ' ' => {}
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The command numbered `n` in assess's output, as words after `herdsim`.
fn command(out: &str, n: usize) -> Vec<String> {
    let mark = format!("[{n}] herdsim ");
    let line = out
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(&mark))
        .unwrap_or_else(|| panic!("no command [{n}] in:\n{out}"));
    shell_words(line)
}

/// The cells of the table row that starts with `first` (split on runs of
/// two or more spaces, as the aligned tables are).
fn row<'a>(out: &'a str, first: &str) -> Vec<&'a str> {
    let line = out
        .lines()
        .find(|l| l.starts_with(first))
        .unwrap_or_else(|| panic!("no row {first} in:\n{out}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// A length in seconds as assess prints it ("0.29 s", "-"), rounded to
/// `decimals` as `herdsim map` prints its boundary.
fn rounded(cell: &str, decimals: i32) -> String {
    match cell.strip_suffix(" s") {
        Some(s) => {
            let f = 10f64.powi(decimals);
            let v: f64 = s.parse().unwrap();
            format!("{}", (v * f).round() / f)
        }
        None => cell.to_string(),
    }
}

#[test]
fn every_figure_comes_back_from_the_command_it_names() {
    let dir = workdir("assess-reproduce");
    let out = assess(&dir, "2", &[]);
    // The run says what it is before its numbers.
    assert!(out.starts_with("a server of 4 workers"), "{out}");
    assert!(out.contains("offered load ρ = λ·E[S]/c = 0.750"), "{out}");

    // [1], the margin map: its printed boundary is assess's margin row, at
    // the map's own precision, from the same runs.
    let margin = row(&out, "outage  ");
    let map = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(&dir)
            .args(&command(&out, 1)[..])
            .arg("-q"),
    );
    let map_row = row(&map, "4 ");
    assert_eq!(map_row.len(), 6, "{map}");
    // Each row's default patience, in one word (this map's cells differ).
    assert!(
        map_row[5].ends_with('s') && map_row[5].contains(".."),
        "{map}"
    );
    let decimals = map_row[1].split('.').nth(1).map_or(0, |d| d.len() as i32);
    assert_eq!(
        rounded(margin[1], decimals),
        map_row[1],
        "crossing:\n{out}\n{map}"
    );
    assert_eq!(
        rounded(margin[2], decimals),
        map_row[2],
        "surely below:\n{out}\n{map}"
    );
    assert_eq!(
        rounded(margin[3], decimals),
        map_row[3],
        "surely above:\n{out}\n{map}"
    );
    assert_eq!(margin[5], map_row[4], "runs:\n{out}\n{map}");
    assert!(dir.join("assess-map-1.csv").is_file(), "the map's --out");

    // [3], the full outage: its amplification is assess's (and exactly 4,
    // the attempt limit, since every attempt fails).
    let mut run = command(&out, 3);
    run.push("--json".into());
    run.push("-q".into());
    let json: serde_json::Value =
        serde_json::from_str(&succeed(cargo_bin_cmd!("herdsim").args(&run[..]))).unwrap();
    let amplification = json["metrics"]["server_amplification"]["mean"]
        .as_f64()
        .unwrap();
    assert_eq!(amplification, 4.0);
    assert!(
        out.contains(
            "4.000 ± 0.000 attempts per request at the server (exact 4, met in every run) [3]"
        ),
        "{out}"
    );

    // [4], a tenth of attempts failing: assess's success share is the run's.
    let mut run = command(&out, 4);
    run.extend(["--json".into(), "-q".into()]);
    let json: serde_json::Value =
        serde_json::from_str(&succeed(cargo_bin_cmd!("herdsim").args(&run[..]))).unwrap();
    let success = json["metrics"]["success_rate"]["mean"].as_f64().unwrap();
    assert!(
        out.contains(&format!("success {success:.5} ±")),
        "the run's success {success} is not assess's:\n{out}"
    );
    assert!(
        out.contains("\nverdict: At ρ = 0.75 this service "),
        "{out}"
    );
}

/// Splitting after two blips, towards a backlog of 100 from one of 5.
const SPLIT: &[&str] = &[
    "--blip",
    "100ms",
    "--blip",
    "200ms",
    "--high",
    "100",
    "--low",
    "5",
    "--splitting",
    "100",
    "--batches",
    "4",
];

/// `assess SERVICE QUICK SPLIT` on one thread, in a directory of its own:
/// its standard output. Run once for the three tests that read it (the
/// thread-count test checks two threads print the same).
fn split_assessment() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let dir = workdir("assess-split-one-thread");
        let out = assess(&dir, "1", SPLIT);
        let _ = fs::remove_dir_all(&dir);
        out
    })
}

#[test]
fn a_rare_storm_figure_is_the_splitting_of_the_run_it_names() {
    let out = split_assessment();
    assert!(
        out.contains("storm region before calm") && out.contains("not the verdict's stuck"),
        "the table says which question it answers:\n{out}"
    );
    // Two margin and headroom maps, four run sets, then one estimate per
    // blip: [7] and [8].
    let rare = &out[out.find("\nrare storms:").expect("a rare-storm table")..];
    for (n, blip) in [(7, "0.1 s of outage"), (8, "0.2 s of outage")] {
        let figure = row(rare, blip);
        assert_eq!(
            figure.last(),
            Some(&format!("[{n}]").as_str()),
            "{figure:?}"
        );
        let run = succeed(
            cargo_bin_cmd!("herdsim")
                .args(&command(out, n)[..])
                .arg("-q"),
        );
        let line = run
            .lines()
            .skip_while(|l| !l.starts_with("Splitting"))
            .find(|l| l.trim_start().starts_with("storm before calm"))
            .unwrap_or_else(|| panic!("no splitting estimate in:\n{run}"));
        let estimate = line.split_whitespace().nth(6).unwrap();
        assert_eq!(
            figure[1], estimate,
            "assess's estimate is the run's:\n{out}\n{run}"
        );
    }
    assert!(
        out.contains("0.1 s of outage drives its backlog to 100 before calm with chance "),
        "the verdict names the first blip's chance:\n{out}"
    );
}

#[test]
fn an_assessment_is_the_same_at_any_thread_count_and_writes_its_page() {
    let dir = workdir("assess-threads");
    let one = split_assessment();
    let page = dir.join("assess.html");
    let mut with_page = SPLIT.to_vec();
    with_page.extend(["--report", page.to_str().unwrap()]);
    let two = assess(&dir, "2", &with_page);
    assert_eq!(one, two, "RAYON_NUM_THREADS changed the answer");
    let html = fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Storm probability against stall length"));
    assert!(html.contains("Storm probability against offered load"));
    // Each curve's Wilson band is a filled polygon under its line.
    assert!(html.matches("<polygon").count() >= 2, "no bands drawn");
    assert!(html.contains("<strong>Verdict.</strong> At ρ = 0.75"));
    assert!(
        html.contains("[1] <code>herdsim map "),
        "the commands are listed"
    );
    // The page is not replaced without --force, and a refusal is one line.
    let err = usage_error(&[
        "assess",
        "--resource",
        "server",
        "--workers",
        "4",
        "--report",
        page.to_str().unwrap(),
    ]);
    assert!(err.contains("--force"), "{err}");
}

#[test]
fn the_json_answer_is_the_texts_with_its_figures_as_numbers() {
    let dir = workdir("assess-json");
    let text = split_assessment();
    let mut with_json = SPLIT.to_vec();
    with_json.push("--json");
    let json: serde_json::Value = serde_json::from_str(&assess(&dir, "2", &with_json)).unwrap();
    let verdict = text
        .lines()
        .find_map(|l| l.strip_prefix("verdict: "))
        .unwrap();
    assert_eq!(json["verdict"], verdict);
    for (i, line) in json["commands"].as_array().unwrap().iter().enumerate() {
        let words = shell_words(line.as_str().unwrap());
        assert_eq!(words[1..], command(text, i + 1), "command [{}]", i + 1);
    }
    // Each table row is the text's, and its numbers are what it prints.
    let margin = &json["tables"]["margin"];
    let printed = row(text, "outage ");
    assert_eq!(margin["rows"][0], serde_json::json!(printed));
    let at = margin["numbers"]["margin_s"][0].as_f64().unwrap();
    assert_eq!(
        rounded(printed[1], 2),
        format!("{}", (at * 100.0).round() / 100.0)
    );
    let rare = &json["tables"]["rare"];
    assert_eq!(rare["rows"].as_array().unwrap().len(), 2, "a row per blip");
    let rare_text = &text[text.find("rare storms:").unwrap()..];
    for (k, blip) in ["0.1 s of outage", "0.2 s of outage"].iter().enumerate() {
        let printed = row(rare_text, blip);
        assert_eq!(rare["rows"][k], serde_json::json!(printed));
        let p = rare["numbers"]["probability"][k].as_f64().unwrap();
        let shown: f64 = printed[1].parse().unwrap();
        assert!((p - shown).abs() <= 0.005 * p, "{p} printed {shown}");
    }
    // The failure figures: the attempt limit alone decides a full outage.
    assert_eq!(json["figures"]["outage_attempts_per_request"], 4.0);
    assert_eq!(json["figures"]["outage_attempts_exact"], 4.0);
    // A storm curve's cells hold every decided run of its map.
    let decided: u64 = json["curves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["figure"] == "margin")
        .flat_map(|c| c["points"].as_array().unwrap())
        .map(|p| p["decided"].as_u64().unwrap())
        .sum();
    let runs = margin["numbers"]["runs"][0].as_f64().unwrap() as u64;
    assert!(
        decided > 0 && decided <= runs,
        "{decided} decided of {runs}"
    );
}

#[test]
fn bad_assess_input_is_refused_in_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--stall", "sideways"], "--stall"),
        (&["--stall", "outage@1s..2s"], "give the kind alone"),
        (&["--partial", "0"], "--partial"),
        (&["--partial", "1.5"], "--partial"),
        (&["--blip", "0s"], "--blip"),
        (&["--refine", "11"], "--refine"),
        (&["--trigger", "outage@1s..2s"], "trigger"),
        (&["--duration", "5s"], "duration"),
        (&["--rate", "100,200"], "one service"),
        (&["--suggest", "bogus"], "--suggest"),
        (&["--high", "100"], "give --splitting PATHS too"),
        (
            &["--splitting", "100", "--high", "5", "--low", "5"],
            "expected low < high",
        ),
        (&["--splitting", "1", "--high", "50"], "--splitting"),
        (&["--batches", "4"], "--splitting"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["assess"];
        args.extend(SERVICE);
        args.extend(*extra);
        let err = usage_error(&args);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    // Neither a timeout nor a queue limit: no storm region to derive.
    let mut args = vec!["assess"];
    args.extend(
        SERVICE
            .chunks(2)
            .filter(|kv| kv[0] != "--timeout")
            .flatten(),
    );
    args.extend(["--splitting", "100"]);
    let err = usage_error(&args);
    assert!(
        err.contains("--high: give the storm region's backlog")
            && err.contains("neither a timeout on bounded workers nor a queue_limit"),
        "{err}"
    );
    let err = usage_error(&["assess", "--policy", "full"]);
    assert!(err.contains("--resource server"), "{err}");
    // (Repeating a flag adds values: an overloaded service is its own line.)
    let over = [
        "assess",
        "--resource",
        "server",
        "--rate",
        "500",
        "--workers",
        "4",
    ];
    let err = usage_error(&[&over[..], &["--service", "10ms"]].concat());
    assert!(err.contains("ρ = 1.250"), "{err}");
    let err = usage_error(&["assess", "--resource", "server", "--workers", "inf"]);
    assert!(err.contains("--workers"), "{err}");
}

#[test]
fn a_scenarios_run_commands_name_its_keys_as_flags() {
    // `herdsim run` reads no scenario file: the run commands of a scenario's
    // assessment give its keys as flags, and reproduce its figures.
    let out = succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["assess", "scenarios/sre-service.toml"])
            .args(["--stall", "outage", "--seeds", "2", "--refine", "0"])
            .args(["--suggest", "none", "-q"]),
    );
    let map = command(&out, 1);
    assert_eq!(
        map[1], "scenarios/sre-service.toml",
        "the map reads the file"
    );
    let mut run = command(&out, 3);
    assert!(!run.iter().any(|w| w.ends_with(".toml")), "{run:?}");
    for flag in [
        "--workers",
        "16",
        "--service",
        "lognormal:20ms/0.3",
        "--max-attempts",
        "5",
    ] {
        assert!(run.iter().any(|w| w == flag), "{flag} missing from {run:?}");
    }
    run.extend(["--json".into(), "-q".into()]);
    let json: serde_json::Value =
        serde_json::from_str(&succeed(cargo_bin_cmd!("herdsim").args(&run[..]))).unwrap();
    assert_eq!(
        json["metrics"]["server_amplification"]["mean"].as_f64(),
        Some(5.0)
    );
    assert!(out.contains("5.000 ± 0.000 attempts per request"), "{out}");
}
