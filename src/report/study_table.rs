//! `herdsim compare` on a study scenario, as a table and as Markdown: each
//! point's figures beside the study's reference, the z-score of every
//! difference and its verdict, then the tally and the cells that differ.

use std::fmt::Write as _;

use crate::base::format::{format_number, group_thousands};
use crate::study::overload::{Cell, PointRow, StudyComparison, StudyPoint};
use crate::study::reference::{Estimate, Judged, Verdict};

/// `mean ± se`, or `–`.
fn estimate(e: Option<Estimate>, decimals: usize) -> String {
    match e {
        Some(e) if e.n > 1 => format!(
            "{} ± {}",
            format_number(e.mean, decimals),
            format_number(e.standard_error(), decimals)
        ),
        Some(e) => format_number(e.mean, decimals),
        None => "–".to_string(),
    }
}

/// A z-score with its sign, or `–` when neither side varies.
fn z_text(z: Option<f64>) -> String {
    z.map_or("–".to_string(), |z| format!("{z:+.2}"))
}

/// The table as cells: the reference row's key columns, then herdsim's
/// figure, the reference's, the z-score and the verdict, for each metric
/// side by side (a few metrics) or a row each (many).
pub fn study_cells(comparison: &StudyComparison<'_>) -> (Vec<String>, Vec<Vec<String>>) {
    if !comparison.study.wide_table {
        return long_cells(comparison);
    }
    let (key_columns, mut header) = key_header(comparison);
    for m in comparison.study.metrics {
        header.extend([
            format!("{} herdsim", m.title),
            "reference".to_string(),
            "z".to_string(),
            "verdict".to_string(),
        ]);
    }
    let cells = comparison.cells();
    let mut rows = Vec::new();
    for p in &comparison.points {
        for point_row in &p.rows {
            let mut row = key_cells(comparison, p, point_row, key_columns.len());
            for (i, m) in comparison.study.metrics.iter().enumerate() {
                let judged = judged_cell(&cells, point_row, i);
                let theirs = point_row
                    .row
                    .and_then(|r| comparison.rows[r].figure(m.name))
                    .map(|e| estimate(Some(e), m.decimals));
                row.extend([
                    estimate(point_row.ours[i], m.decimals),
                    theirs.unwrap_or_else(|| "–".to_string()),
                    judged.map_or("–".to_string(), |j| z_text(j.z)),
                    judged.map_or("–".to_string(), |j| j.verdict.to_string()),
                ]);
            }
            rows.push(row);
        }
    }
    (header, rows)
}

/// The reference's key columns, and the header they start (`point` when
/// the reference has no rows).
fn key_header<'a>(comparison: &'a StudyComparison<'_>) -> (Vec<&'a str>, Vec<String>) {
    let key_columns: Vec<&str> = comparison
        .rows
        .first()
        .map(|r| r.key.iter().map(|(k, _)| *k).collect())
        .unwrap_or_default();
    let mut header: Vec<String> = key_columns.iter().map(|k| k.to_string()).collect();
    if header.is_empty() {
        header.push("point".to_string());
    }
    (key_columns, header)
}

/// The judgement of a point row's metric `metric` among `cells`, if it has
/// one.
fn judged_cell<'a>(cells: &'a [Cell<'_>], row: &PointRow, metric: usize) -> Option<&'a Judged> {
    cells
        .iter()
        .find(|c| std::ptr::eq(c.row, row) && c.metric == metric)
        .map(|c| &c.judged)
}

/// A point row's key cells: its reference row's key, or the point's index.
fn key_cells(
    comparison: &StudyComparison<'_>,
    point: &StudyPoint,
    row: &PointRow,
    width: usize,
) -> Vec<String> {
    match row.row {
        Some(i) => comparison.rows[i]
            .key
            .iter()
            .map(|(_, v)| v.clone())
            .collect(),
        None => {
            let mut row = vec![String::new(); width.max(1)];
            row[0] = format!("point {}: not in the reference", point.point);
            row
        }
    }
}

/// The table a row per point and metric.
fn long_cells(comparison: &StudyComparison<'_>) -> (Vec<String>, Vec<Vec<String>>) {
    let (key_columns, mut header) = key_header(comparison);
    header.extend(["metric", "herdsim", "reference", "z", "verdict"].map(str::to_string));
    let cells = comparison.cells();
    let mut rows = Vec::new();
    for p in &comparison.points {
        for point_row in &p.rows {
            for (i, m) in comparison.study.metrics.iter().enumerate() {
                let judged = judged_cell(&cells, point_row, i);
                let theirs = point_row
                    .row
                    .and_then(|r| comparison.rows[r].figure(m.name));
                let mut row = key_cells(comparison, p, point_row, key_columns.len());
                row.extend([
                    m.title.to_string(),
                    estimate(point_row.ours[i], m.decimals),
                    estimate(theirs, m.decimals),
                    judged.map_or("–".to_string(), |j| z_text(j.z)),
                    judged.map_or("–".to_string(), |j| j.verdict.to_string()),
                ]);
                rows.push(row);
            }
        }
    }
    (header, rows)
}

/// The lines above the table.
fn title(comparison: &StudyComparison<'_>) -> Vec<String> {
    let s = comparison.scenario;
    let study = comparison.study;
    vec![
        match &s.description {
            Some(d) => format!("{}: {d}", s.name),
            None => s.name.clone(),
        },
        format!(
            "{} replicate{} per point from master seed {}, beside {} (reference: {}). \
             Figures are mean ± one standard error; z is herdsim's difference from the \
             reference over the standard error of the difference (both sides' sampling \
             error; the runs' spread pooled when that is larger): agrees below 1.96, \
             borderline below 3, differs from 3.",
            group_thousands(u64::from(s.replicates)),
            if s.replicates == 1 { "" } else { "s" },
            s.master_seed,
            study.title,
            comparison.reference_name
        ),
    ]
}

/// The tally, the differing cells and the reference rows left out, in
/// lines.
fn notes(comparison: &StudyComparison<'_>) -> Vec<String> {
    let tally = comparison.tally();
    let scored = tally.scored() as f64;
    // Under agreement |z| ≥ 1.96 in 5% of scored cells, binomially.
    let expected = 0.05 * scored;
    let spread = (scored * 0.05 * 0.95).sqrt();
    let mut lines = vec![format!(
        "{} cells: {} the same (no sampling error on either side), {} agree, {} borderline, \
         {} differ. Chance alone puts {} ± {} of the {} scored cells at |z| ≥ 1.96; here {}.",
        tally.total(),
        tally.same,
        tally.agrees,
        tally.borderline,
        tally.differs,
        format_number(expected, 1),
        format_number(spread, 1),
        tally.scored(),
        tally.borderline + tally.differs
    )];
    for Cell {
        point,
        row,
        metric,
        judged,
    } in comparison.cells()
    {
        if judged.verdict == Verdict::Differs {
            let m = &comparison.study.metrics[metric];
            lines.push(format!(
                "Differs: {} {}: herdsim {}, reference {}, z {}.",
                comparison.label(point, row),
                m.title,
                estimate(Some(judged.ours), m.decimals),
                estimate(Some(judged.theirs), m.decimals),
                z_text(judged.z)
            ));
        }
    }
    if comparison.points.iter().any(|p| !p.complete) {
        lines.push("Some runs were cut before every request ended: their figures count only what happened before.".to_string());
    }
    let unmatched = comparison.unmatched_rows();
    if let Some(first) = unmatched.first() {
        lines.push(format!(
            "{} of the reference's {} rows have no point in this grid (the first: {}); give \
             their values as grid flags or keys to judge them.",
            unmatched.len(),
            comparison.rows.len(),
            first.label()
        ));
    }
    lines
}

/// `herdsim compare`'s table on a study scenario.
pub fn study_table(comparison: &StudyComparison<'_>) -> String {
    let mut out = title(comparison).join("\n");
    out += "\n\n";
    let (header, rows) = study_cells(comparison);
    let mut keys = comparison.rows.first().map_or(1, |r| r.key.len());
    if !comparison.study.wide_table {
        keys += 1;
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    out += &super::aligned_text_first(&header, &rows, keys);
    out.push('\n');
    for line in notes(comparison) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `herdsim compare --markdown` on a study scenario.
pub fn study_markdown(comparison: &StudyComparison<'_>, command: &str) -> String {
    let mut out = format!("Made with `{command}` (this is its standard output).\n\n");
    for line in title(comparison) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let (header, rows) = study_cells(comparison);
    out += &super::markdown::markdown_table(&header, &rows);
    out.push('\n');
    for line in notes(comparison) {
        let _ = writeln!(out, "- {line}");
    }
    out
}
