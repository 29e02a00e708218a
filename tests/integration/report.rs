//! `herdsim report` as a user runs it: one self-contained HTML file whose
//! table is the one `compare --markdown` prints, with its pictures inline,
//! the same bytes at any thread count; bad input refused with no file.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{succeed, usage_error, workdir};

const HERD: &[&str] = &["--policy", "none,full", "--clients", "200", "--seeds", "5"];

/// `herdsim report HERD --out FILE` on `threads` threads; the page.
fn report(out: &str, args: &[&str], threads: &str) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .arg("report")
            .args(args)
            .args(["--out", out, "--quiet"])
            .env("RAYON_NUM_THREADS", threads),
    );
    fs::read_to_string(out).unwrap()
}

#[test]
fn a_report_holds_the_comparison_its_pictures_and_the_command() {
    let dir = workdir("report");
    let out = dir.join("r.html").to_str().unwrap().to_string();
    let page = report(&out, HERD, "2");
    let markdown = succeed(
        cargo_bin_cmd!("herdsim")
            .arg("compare")
            .args(HERD)
            .args(["--markdown", "--quiet"]),
    );
    // Every row of compare's table is a row of the report's, cell for cell.
    let rows: Vec<&str> = markdown
        .lines()
        .filter(|l| l.starts_with("| none") || l.starts_with("| full"))
        .collect();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let html_row = format!(
            "<tr><td>{}</td>{}</tr>",
            cells[0],
            cells[1..]
                .iter()
                .map(|c| format!("<td class=\"num\">{c}</td>"))
                .collect::<String>()
        );
        assert!(page.contains(&html_row), "missing {html_row}");
    }
    // The picture inline, nothing fetched, the command to reproduce it.
    assert_eq!(page.matches("<svg").count(), 1);
    assert!(page.contains("<figcaption>Retries per ms over time"));
    for outside in ["<script", "<link", "<img", "src=", "@import"] {
        assert!(!page.contains(outside), "{outside}");
    }
    assert!(page.contains("herdsim report --policy none,full --clients 200 --seeds 5 --out"));
    assert!(page.contains(&format!("herdsim {}", env!("CARGO_PKG_VERSION"))));
    assert!(page.contains("Varies: <code>policy</code> over none, full"));
    // The same bytes on one thread.
    let again = dir.join("r1.html").to_str().unwrap().to_string();
    let one = report(&again, HERD, "1");
    assert_eq!(one.replace("r1.html", "r.html"), page);
}

#[test]
fn a_server_report_draws_each_points_replicate_zero() {
    let dir = workdir("report-server");
    let out = dir.join("s.html").to_str().unwrap().to_string();
    let csv = dir.join("s.csv").to_str().unwrap().to_string();
    let args = [
        "--resource",
        "server",
        "--rate",
        "500",
        "--timeout",
        "100ms",
        "--policy",
        "no-backoff,full",
        "--base",
        "1s",
        "--max-attempts",
        "4",
        "--trigger",
        "outage@2s..2.5s",
        "--duration",
        "5s",
        "--seeds",
        "4",
        "--csv",
        &csv,
    ];
    let page = report(&out, &args, "2");
    assert_eq!(page.matches("<svg").count(), 1);
    assert!(page.contains("storm probability"));
    assert!(page.contains("no-backoff") && page.contains("full"));
    let long = fs::read_to_string(&csv).unwrap();
    assert!(long.starts_with("point,") && long.contains(",stuck,"));
}

#[test]
fn bad_report_input_leaves_no_file() {
    let dir = workdir("report-bad");
    let out = dir.join("r.html").to_str().unwrap().to_string();
    let err = usage_error(&["report", "--clients", "0", "--out", &out]);
    assert!(err.contains("--clients"), "{err}");
    let err = usage_error(&["report", "--reference", "x.csv", "--out", &out]);
    assert!(err.contains("--reference"), "{err}");
    assert!(!dir.join("r.html").exists());
    fs::write(&out, "precious\n").unwrap();
    let err = usage_error(&["report", "--out", &out]);
    assert!(err.contains("--force"), "{err}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious\n");
}

#[test]
fn a_report_of_an_existing_compare_file_holds_its_figures() {
    let dir = workdir("report-from");
    let (csv, out) = (dir.join("c.csv"), dir.join("r.html"));
    let (csv, out) = (csv.to_str().unwrap(), out.to_str().unwrap());
    succeed(
        cargo_bin_cmd!("herdsim")
            .arg("compare")
            .args(HERD)
            .args(["--csv", csv, "--quiet"]),
    );
    succeed(cargo_bin_cmd!("herdsim").args(["report", "--from", csv, "--out", out, "--quiet"]));
    let page = fs::read_to_string(out).unwrap();
    // Every row of the file is a row of the table, with its mean.
    let rows = crate::common::csv_rows(&fs::read_to_string(csv).unwrap());
    assert_eq!(page.matches("<tr><td>policy=").count(), rows.len());
    for row in &rows {
        let mean: f64 = row["mean"].parse().unwrap();
        let decimals = if mean.abs() >= 100.0 {
            1
        } else if mean.abs() >= 1.0 {
            3
        } else {
            4
        };
        let shown = format!("{mean:.decimals$}");
        let whole = shown.split('.').next().unwrap().parse::<i64>().unwrap();
        let grouped = herdsim::base::format::group_thousands(whole.unsigned_abs());
        let fraction = shown.split('.').nth(1).unwrap();
        assert!(
            page.contains(&format!("{grouped}.{fraction}")),
            "{} {}: {shown}",
            row["policy"],
            row["metric"]
        );
    }
    assert!(!page.contains("<svg"), "no runs, no pictures");
    assert!(page.contains("Varies: <code>policy</code> over none, full"));
    // Flags cannot change a file's figures.
    let err = usage_error(&[
        "report", "--from", csv, "--seeds", "3", "--out", out, "--force",
    ]);
    assert!(err.contains("--from"), "{err}");
    let err = usage_error(&["report", "--from", out, "--out", &format!("{out}2")]);
    assert!(err.contains("not a `herdsim compare --csv` file"), "{err}");
}

/// A server workload that recovers from its outage: 50% load, full jitter
/// from 1 s, at most 4 attempts (the metastable case's calm side).
const RECOVERS: &[&str] = &[
    "--resource",
    "server",
    "--rate",
    "500",
    "--timeout",
    "100ms",
    "--policy",
    "full",
    "--base",
    "1s",
    "--max-attempts",
    "4",
    "--trigger",
    "outage@2s..2.5s",
];

/// The text of the summary section of a report (its paragraphs, tags
/// dropped).
fn summary_of(page: &str) -> String {
    let start = page.find("<section id=\"summary\">").expect("a summary");
    let end = start + page[start..].find("</section>").unwrap();
    page[start..end]
        .replace("<strong>", "")
        .replace("</strong>", "")
}

/// The number after `before` in `text`, up to the next space, comma or
/// semicolon.
fn number_after(text: &str, before: &str) -> f64 {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("no '{before}' in {text}"))
        + before.len();
    let word: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
        .collect();
    word.parse()
        .unwrap_or_else(|_| panic!("no number after '{before}': {word}"))
}

#[test]
fn workload_flags_alone_report_runs_defaults_not_the_built_in_scenario() {
    let dir = workdir("report-flags");
    let out = dir.join("r.html").to_str().unwrap().to_string();
    let page = report(&out, RECOVERS, "2");
    // One point, one replicate from master seed 42: what `run` does.
    assert!(
        page.contains("<li>1 point × 1 replicate seed from master seed 42</li>"),
        "{page}"
    );
    assert!(page.contains("500 requests/s (Poisson)"));
    for built_in in [
        "four-strategies",
        "Seed 002",
        "decorrelated",
        "100 replicate",
    ] {
        assert!(!page.contains(built_in), "{built_in} in a report of flags");
    }
    // The summary's numbers are the run's: `herdsim run` with the same
    // flags and master seed is the same single run.
    let json = crate::common::server_json(&RECOVERS[2..]);
    let summary = summary_of(&page);
    assert!(summary.contains("(outage@2s..2.5s)"), "{summary}");
    assert_eq!(
        number_after(&summary, "the queue peaked at "),
        crate::common::mean(&json, "queue_peak"),
        "{summary}"
    );
    assert_eq!(
        format!("{:.3}", number_after(&summary, "the server saw ")),
        format!("{:.3}", crate::common::mean(&json, "server_amplification")),
        "{summary}"
    );
    let recovered_s = number_after(&summary, "; recovered ");
    let recovery_ms = crate::common::mean(&json, "recovery_ms");
    assert!(
        (recovered_s * 1e3 - recovery_ms).abs() <= 50.0,
        "{recovered_s} s against {recovery_ms} ms: {summary}"
    );
    assert!(
        summary.contains("(1 of 1 run decided, 0 stuck, 0 unresolved)"),
        "{summary}"
    );
    // Offered load ρ = 500/s × 1 ms / 1 worker.
    assert!(summary.contains("Offered load ρ = 0.500."), "{summary}");
    // The goodput before the trigger: about the rate, and nothing during
    // the outage.
    let before = number_after(&summary, "fell from ");
    assert!((450.0..550.0).contains(&before), "{summary}");
    assert!(summary.contains("to 0/s at t = 2.0 s"), "{summary}");
    assert!(!page.contains("id=\"services\""), "no chain, no services");
}

#[test]
fn a_chain_report_has_each_services_table() {
    let dir = workdir("report-chain");
    let out = dir.join("c.html").to_str().unwrap().to_string();
    let chain = [
        "--resource",
        "server",
        "--depth",
        "3",
        "--workers",
        "inf",
        "--fail-rate",
        "1",
        "--max-attempts",
        "4",
        "--policy",
        "no-backoff",
        "--rate",
        "200",
        "--duration",
        "1s",
    ];
    let page = report(&out, &chain, "2");
    let start = page
        .find("<section id=\"services\">")
        .expect("a services section");
    let services = &page[start..start + page[start..].find("</section>").unwrap()];
    assert!(services.contains("<th class=\"num\">amplification</th>"));
    assert_eq!(services.matches("<tr><td>").count(), 3, "{services}");
    // A full failure: (r + 1)^k attempts at each depth, 4, 16 and 64 (and
    // the server's is the summary's, and `run`'s).
    for (service, amplification) in [("1", "4.000"), ("2", "16.000"), ("3 (server)", "64.000")] {
        let row = format!("<tr><td>{service}</td>");
        let at = services
            .find(&row)
            .unwrap_or_else(|| panic!("{row}: {services}"));
        let cells = &services[at..at + services[at..].find("</tr>").unwrap()];
        assert!(
            cells.contains(&format!("<td class=\"num\">{amplification}</td>")),
            "{cells}"
        );
    }
    let json = crate::common::server_json(&chain[2..]);
    assert_eq!(crate::common::mean(&json, "server_amplification"), 64.0);
    assert!(summary_of(&page).contains("the server saw 64.000 attempts per request"));
}

#[test]
fn progress_when_piped_is_a_start_and_an_end_line_and_quiet_is_silent() {
    let dir = workdir("report-progress");
    let out = dir.join("p.html");
    let run = |quiet: bool| {
        let mut command = cargo_bin_cmd!("herdsim");
        command
            .arg("report")
            .args(RECOVERS)
            .args(["--seeds", "3", "--out"])
            .arg(&out)
            .arg("--force");
        if quiet {
            command.arg("--quiet");
        }
        let output = command.output().unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stderr).unwrap()
    };
    // Piped stderr: no bar, but what runs and where the report went.
    let err = run(false);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("1 point × 3 replicates: 3 runs to go"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("report of 1 point (3 runs) in ")
            && lines[1].ends_with(&format!("s → {}", out.display())),
        "{err}"
    );
    assert!(
        !err.contains('\r') && !err.contains('█'),
        "a bar in a pipe: {err}"
    );
    assert_eq!(run(true), "");
    // Nothing chosen at all: the built-in scenario, and it says so.
    let mut command = cargo_bin_cmd!("herdsim");
    let output = command
        .args(["report", "--seeds", "2", "--clients", "1000", "--out"])
        .arg(dir.join("b.html"))
        .output()
        .unwrap();
    assert!(output.status.success());
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(!err.contains("built-in"), "workload flags chose: {err}");
    let output = cargo_bin_cmd!("herdsim")
        .args(["report", "--seeds", "2", "--out"])
        .arg(dir.join("four.html"))
        .output()
        .unwrap();
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(
        err.starts_with(
            "no scenario and no workload flag: reporting the built-in \
                         scenarios/four-strategies.toml"
        ),
        "{err}"
    );
    assert!(
        err.contains("4 points × 2 replicates: 8 runs to go"),
        "{err}"
    );
    let page = fs::read_to_string(dir.join("four.html")).unwrap();
    assert!(page.contains("<h1>four-strategies</h1>"));
}

#[test]
fn a_description_the_flags_made_untrue_says_so_in_the_report() {
    let dir = workdir("report-description");
    let scenario = format!("{}/scenarios/metastable.toml", env!("CARGO_MANIFEST_DIR"));
    let out = dir.join("m.html").to_str().unwrap().to_string();
    let page = report(
        &out,
        &[
            &scenario,
            "--trigger",
            "outage@2s..2.5s",
            "--rate",
            "400",
            "--seeds",
            "2",
        ],
        "2",
    );
    assert!(
        page.contains(
            "<p class=\"lede\">Storm probability as an outage grows: 50% load, 100 ms timeout, \
             retries immediate, none, or full jitter from 1 s (description from the scenario \
             file; --rate 400 and --trigger outage@2s..2.5s on the command line change its \
             workload)</p>"
        ),
        "{page}"
    );
    // The scenario's own values, and seeds, change no workload.
    let page = report(
        &out,
        &[
            &scenario,
            "--rate",
            "500",
            "--workers",
            "1",
            "--seeds",
            "2",
            "--force",
        ],
        "2",
    );
    assert!(
        page.contains(
            "<p class=\"lede\">Storm probability as an outage grows: 50% load, 100 ms timeout, \
             retries immediate, none, or full jitter from 1 s</p>"
        ),
        "{page}"
    );
}
