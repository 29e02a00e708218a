//! `herdsim compare` on the server model, as a table and as Markdown: each
//! point's success, cost and recovery side by side, and its storm
//! probability with the Wilson interval.

use std::fmt::Write as _;

use crate::base::format::{format_number, group_thousands};
use crate::measure::server_metrics::ServerMetric;
use crate::measure::stats::Summary;
use crate::study::server_compare::{SERVER_COMPARED, ServerComparedPoint, ServerComparison};

/// A compared server metric's column heading.
fn heading(metric: ServerMetric) -> &'static str {
    match metric {
        ServerMetric::SuccessRate => "success rate",
        ServerMetric::SuccessDuringTrigger => "success during trigger",
        ServerMetric::SuccessAfterTrigger => "success after trigger",
        ServerMetric::Amplification => "attempts per request",
        ServerMetric::WastedWork => "wasted work",
        ServerMetric::LatencyP99Ms => "p99 latency (ms)",
        ServerMetric::QueuePeak => "queue peak",
        ServerMetric::RecoveryMs => "recovery (ms)",
        other => other.name(),
    }
}

/// Decimals a compared server metric is shown with.
fn decimals(metric: ServerMetric) -> usize {
    match metric {
        ServerMetric::SuccessRate
        | ServerMetric::SuccessDuringTrigger
        | ServerMetric::SuccessAfterTrigger
        | ServerMetric::WastedWork => 3,
        ServerMetric::Amplification => 2,
        ServerMetric::LatencyP99Ms => 1,
        _ => 0,
    }
}

/// `mean ± ci95`; the runs it is over when fewer than all; `–` when none
/// has it.
fn value(metric: ServerMetric, s: &Summary, runs: usize) -> String {
    if s.n == 0 {
        return "–".to_string();
    }
    let d = decimals(metric);
    let mut text = format_number(s.mean, d);
    if let Some(ci) = s.ci95 {
        text += &format!(" ± {}", format_number(ci, d));
    }
    if let (true, Some([q1, median, q3])) = (
        crate::measure::metrics::ReportedMetric::spread_shown(metric) && s.n > 1,
        s.quartiles,
    ) {
        text += &format!(
            "; median {} ({} to {})",
            format_number(median, d),
            format_number(q1, d),
            format_number(q3, d)
        );
    }
    if s.n < runs {
        text += &format!(" ({} runs)", s.n);
    }
    text
}

/// `0.300 (6 of 20; 0.145 to 0.519)`, and `; 4 draining` when some
/// decided runs were still draining (slow, not stuck).
fn storm(point: &ServerComparedPoint) -> String {
    let storm = point.storm();
    format!(
        "{} ({} of {}; {} to {}{})",
        format_number(storm.probability(), 3),
        storm.stuck,
        storm.runs,
        format_number(storm.low, 3),
        format_number(storm.high, 3),
        if storm.draining > 0 {
            format!("; {} draining", storm.draining)
        } else {
            String::new()
        }
    )
}

/// The table as cells: a header, then a row per point.
pub fn server_comparison_cells(
    comparison: &ServerComparison<'_>,
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["point".to_string()];
    header.extend(SERVER_COMPARED.iter().map(|&m| heading(m).to_string()));
    header.push("storm probability (Wilson 95%)".to_string());
    let rows = comparison
        .points
        .iter()
        .map(|p| {
            let runs = p.summary(ServerMetric::Requests).n;
            let mut row = vec![p.label.clone()];
            row.extend(
                SERVER_COMPARED
                    .iter()
                    .map(|&m| value(m, p.summary(m), runs)),
            );
            row.push(storm(p));
            row
        })
        .collect();
    (header, rows)
}

/// The lines above the table.
fn title(comparison: &ServerComparison<'_>) -> Vec<String> {
    let s = comparison.scenario;
    vec![
        match &s.description {
            Some(d) => format!("{}: {d}", s.name),
            None => s.name.clone(),
        },
        format!(
            "{} replicate{} per point from master seed {}; mean ± 95% CI over the runs that \
             have the metric (only a run that recovered has a recovery time); a run with \
             triggers is recovered, draining, stuck or unresolved as judged over the patience window \
             after the last trigger (`herdsim metrics`), its storm probability the share stuck \
             of the runs decided.",
            group_thousands(u64::from(s.replicates)),
            if s.replicates == 1 { "" } else { "s" },
            s.master_seed
        ),
    ]
}

/// `herdsim compare`'s table on the server model.
pub fn server_compare_table(comparison: &ServerComparison<'_>) -> String {
    let mut out = title(comparison).join("\n");
    out += "\n\n";
    let (header, rows) = server_comparison_cells(comparison);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    out += &super::aligned_text_first(&header, &rows, 1);
    out
}

/// `herdsim compare --markdown` on the server model.
pub fn server_compare_markdown(comparison: &ServerComparison<'_>, command: &str) -> String {
    let mut out = format!("Made with `{command}` (this is its standard output).\n\n");
    for line in title(comparison) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let (header, rows) = server_comparison_cells(comparison);
    out + &super::markdown::markdown_table(&header, &rows)
}
