//! Human output: aligned text tables.

use std::fmt::Write;

use super::{RunReport, WorkloadSummary, format_number};
use crate::policy::PolicyKind;

/// `herdsim run`'s human output: the workload stated above a table with one
/// metric a row, mean ± 95% CI and min..max.
pub fn run_table(report: &RunReport<'_>) -> String {
    let mut out = String::new();
    for line in WorkloadSummary::lines(report.spec) {
        let _ = writeln!(out, "{line}");
    }
    let n = report.replicates();
    let _ = writeln!(
        out,
        "{n} replicate{} from master seed {}; peak retries counted in {}ms windows",
        if n == 1 { "" } else { "s" },
        report.master_seed,
        format_number(report.spec.window() as f64 / 1e3, 3)
            .trim_end_matches('0')
            .trim_end_matches('.'),
    );
    out.push('\n');

    let rows: Vec<[String; 4]> = report
        .summaries
        .iter()
        .map(|(metric, s)| {
            let d = metric.decimals;
            let mean_decimals = if n > 1 { d.max(1) } else { d };
            [
                metric.name.to_string(),
                format_number(s.mean, mean_decimals),
                s.ci95.map_or_else(
                    || "-".to_string(),
                    |ci| format!("± {}", format_number(ci, mean_decimals)),
                ),
                format!("{} .. {}", format_number(s.min, d), format_number(s.max, d)),
            ]
        })
        .collect();
    let header = [
        "metric",
        if n > 1 { "mean" } else { "value" },
        "95% CI",
        "min .. max",
    ];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([header[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2), width(3)];
    let _ = writeln!(
        out,
        "{:<w0$}  {:>w1$}  {:<w2$}  {}",
        header[0],
        header[1],
        header[2],
        header[3],
        w0 = widths[0],
        w1 = widths[1],
        w2 = widths[2]
    );
    for r in &rows {
        let _ = writeln!(
            out,
            "{:<w0$}  {:>w1$}  {:<w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
    out
}

/// `herdsim policies`: each policy with its formula and parameters.
pub fn policies_table() -> String {
    let mut out = String::new();
    let width = PolicyKind::ALL
        .iter()
        .map(|k| k.name().len())
        .max()
        .unwrap_or(0);
    for kind in PolicyKind::ALL {
        let _ = writeln!(out, "{:<width$}  {}", kind.name(), kind.summary());
        let _ = writeln!(out, "{:<width$}  {}", "", kind.formula());
        let _ = writeln!(out, "{:<width$}  parameters: {}", "", kind.parameters());
        out.push('\n');
    }
    out.push_str(
        "For retry k ≥ 1, c_k = min(cap, base·2^(k−1)). U[a, b] is a uniform whole number of\n\
         microseconds, both ends included. Every delay lies in [0, cap].\n\
         --jitter-factor f (any policy; seed 003): d' = d + U[−f·d/2, +f·d/2], applied after\n\
         the cap, so a delay may exceed the cap by at most f·cap/2.\n",
    );
    out
}
