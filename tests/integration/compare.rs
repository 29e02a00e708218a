//! `herdsim compare` as a user runs it.

use crate::common::workdir;

use std::fs;
use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;

fn run(args: &[&str], dir: &PathBuf) -> String {
    crate::common::succeed(cargo_bin_cmd!("herdsim").args(args).current_dir(dir))
}

fn records(path: &PathBuf) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    (header, reader.records().map(Result::unwrap).collect())
}

fn column(header: &csv::StringRecord, name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn compare_reports_the_numbers_sweep_computes() {
    let dir = workdir("same-as-sweep");
    fs::write(
        dir.join("small.toml"),
        "name = \"small\"\npolicy = [\"none\", \"full\", \"decorrelated\"]\nclients = [50, 200]\nseeds = 8\nseed = 3\n",
    )
    .unwrap();
    run(
        &["compare", "small.toml", "--csv", "compare.csv", "--quiet"],
        &dir,
    );
    run(
        &["sweep", "small.toml", "--out", "sweep.csv", "--quiet"],
        &dir,
    );
    let (ch, compared) = records(&dir.join("compare.csv"));
    let (sh, swept) = records(&dir.join("sweep.csv"));
    assert_eq!(swept.len(), 6);
    // Long format: one row per point and metric.
    assert_eq!(
        compared.len(),
        6 * herdsim::measure::metrics::Metric::ALL.len()
    );
    for row in &compared {
        let point: usize = row[column(&ch, "point")].parse().unwrap();
        let metric = &row[column(&ch, "metric")];
        let sweep_row = &swept[point];
        assert_eq!(
            &row[column(&ch, "policy")],
            &sweep_row[column(&sh, "policy")]
        );
        for stat in ["mean", "sd", "ci95", "min", "max"] {
            assert_eq!(
                &row[column(&ch, stat)],
                &sweep_row[column(&sh, &format!("{metric}_{stat}"))],
                "point {point} {metric}_{stat}"
            );
        }
    }
}

#[test]
fn the_default_scenario_sets_seed_002s_table_beside_the_model() {
    // From a directory with no scenarios/: the default scenario is built in.
    let dir = workdir("default");
    let text = run(&["compare", "--seeds", "10", "--quiet"], &dir);
    assert!(
        text.starts_with("four-strategies: Seed 002's workload"),
        "{text}"
    );
    let none = text.lines().find(|l| l.starts_with("none ")).unwrap();
    // Each synchronised wave serves one client: 500,500 calls against a
    // published ~28,000, and 19,845.5 s against ~31 s.
    assert!(none.contains("500,500.0 ± 0.0"), "{none}");
    assert!(
        none.contains("~28,000") && none.contains("17.9× higher"),
        "{none}"
    );
    assert!(
        none.contains("~31 s") && none.contains("640× higher"),
        "{none}"
    );
    for policy in ["equal", "full", "decorrelated"] {
        assert!(
            text.lines().any(|l| l.starts_with(policy)),
            "{policy} row missing"
        );
    }
    assert!(
        text.contains("Lowest calls: herdsim decorrelated"),
        "{text}"
    );
}

#[test]
fn markdown_names_the_command_that_made_it() {
    let dir = workdir("markdown");
    let text = run(
        &["compare", "--seeds", "5", "--clients", "100", "--markdown"],
        &dir,
    );
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "Made with `herdsim compare --seeds 5 --clients 100 --markdown` (this is its standard output)."
        )
    );
    // 100 clients is not seed 002's workload: no published figures apply.
    assert!(
        text.contains("| policy | calls | last success (s) |"),
        "{text}"
    );
    assert!(!text.contains("~3,400"), "{text}");
    // The built-in scenario's description was written for 1,000 clients.
    assert!(
        text.contains(
            "Seed 002's workload: 1,000 clients, 1 request per ms, base 100 ms, cap 20 s \
             (description from the scenario file; --clients 100 on the command line changes its \
             workload)"
        ),
        "{text}"
    );
    let full = run(&["compare", "--seeds", "5", "--markdown"], &dir);
    assert!(
        full.contains("| policy | calls | published | verdict | last success (s) |"),
        "{full}"
    );
}

#[test]
fn the_csv_is_not_clobbered_unless_forced() {
    let dir = workdir("clobber");
    fs::write(dir.join("c.csv"), "keep\n").unwrap();
    let out = cargo_bin_cmd!("herdsim")
        .args(["compare", "--seeds", "2", "--csv", "c.csv"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing runs before the check");
    assert_eq!(fs::read_to_string(dir.join("c.csv")).unwrap(), "keep\n");
    run(
        &[
            "compare", "--seeds", "2", "--csv", "c.csv", "--force", "--quiet",
        ],
        &dir,
    );
    assert!(
        fs::read_to_string(dir.join("c.csv"))
            .unwrap()
            .starts_with("point,policy,")
    );
}

#[test]
fn a_description_the_flags_made_untrue_is_flagged_in_the_table_and_the_markdown() {
    let dir = workdir("description");
    let scenario = format!("{}/scenarios/metastable.toml", env!("CARGO_MANIFEST_DIR"));
    let description = "metastable: Storm probability as an outage grows: 50% load, 100 ms \
                       timeout, retries immediate, none, or full jitter from 1 s";
    // --rate overrides the scenario's 500; --duration sets a key it left
    // to its default; --trigger keeps one of its ten outages.
    let args = [
        "compare",
        &scenario,
        "--rate",
        "800",
        "--duration",
        "5s",
        "--trigger",
        "outage@2s..2.1s",
        "--seeds",
        "2",
        "--quiet",
    ];
    let flagged = format!(
        "{description} (description from the scenario file; --rate 800, --duration 5s and \
         --trigger outage@2s..2.1s on the command line change its workload)"
    );
    let text = run(&args, &dir);
    assert_eq!(text.lines().next().unwrap(), flagged, "{text}");
    let markdown = run(&[&args[..], &["--markdown"]].concat(), &dir);
    assert_eq!(markdown.lines().nth(2).unwrap(), flagged, "{markdown}");
    // The scenario's own values, a default it left out, and the seeds:
    // the description stands as written.
    let text = run(
        &[
            "compare",
            &scenario,
            "--rate",
            "500",
            "--workers",
            "1",
            "--fail-rate",
            "0",
            "--seeds",
            "2",
            "--quiet",
        ],
        &dir,
    );
    assert_eq!(text.lines().next().unwrap(), description, "{text}");
}
