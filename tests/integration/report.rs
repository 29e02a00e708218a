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
