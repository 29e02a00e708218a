//! Human output: aligned text tables.

use std::fmt::Write;

use super::{RunReport, ServerRunReport, WorkloadSummary};
use crate::base::format::format_number;
use crate::base::format::group_thousands;
use crate::measure::metrics::ReportedMetric;
use crate::measure::stats::Summary;
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
        "{} replicate{} from master seed {}; peak retries counted in {}ms windows",
        group_thousands(n as u64),
        if n == 1 { "" } else { "s" },
        report.master_seed,
        format_number(report.spec.window().ticks() as f64 / 1e3, 3)
            .trim_end_matches('0')
            .trim_end_matches('.'),
    );
    out.push('\n');

    out += &summary_table(&report.summaries);
    out
}

/// One metric a row: mean ± 95% CI and min..max over replicates, or the one
/// replicate's value; "–" for a metric no replicate has. The replicates are
/// the first metric's (every run has it); a later metric may be over fewer.
fn summary_table<M: ReportedMetric>(summaries: &[(M, Summary)]) -> String {
    let n = summaries.first().map_or(0, |(_, s)| s.n);
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|&(metric, ref s)| {
            let d = metric.decimals();
            let name = metric.name().to_string();
            match s.ci95 {
                // No replicate has it (a recovery time when every run is stuck).
                _ if s.n == 0 && n > 1 => {
                    vec![
                        name,
                        "–".into(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]
                }
                _ if s.n == 0 => vec![name, "–".into()],
                // One replicate has it, of several.
                None if n > 1 => vec![
                    name,
                    format_number(s.mean, d.max(1)),
                    String::new(),
                    format_number(s.min, d),
                    format_number(s.max, d),
                ],
                // One replicate: its values, exactly.
                None => vec![name, format_number(s.mean, d)],
                Some(ci) => {
                    let mean_decimals = d.max(1);
                    vec![
                        name,
                        format_number(s.mean, mean_decimals),
                        format!("± {}", format_number(ci, mean_decimals)),
                        format_number(s.min, d),
                        format_number(s.max, d),
                    ]
                }
            }
        })
        .collect();
    let header: &[&str] = if n > 1 {
        &["metric", "mean", "95% CI", "min", "max"]
    } else {
        &["metric", "value"]
    };
    aligned(header, &rows)
}

/// `herdsim run --resource server`'s human output: the workload, a table
/// of the server metrics, and the storm probability.
pub fn server_run_table(report: &ServerRunReport<'_>) -> String {
    let mut out = String::new();
    for line in WorkloadSummary::lines(report.spec) {
        let _ = writeln!(out, "{line}");
    }
    let n = report.summaries.first().map_or(0, |(_, s)| s.n);
    let _ = writeln!(
        out,
        "{} replicate{} from master seed {}; time series and recovery in {}ms windows\n",
        group_thousands(n as u64),
        if n == 1 { "" } else { "s" },
        report.master_seed,
        format_number(report.window_us.ticks() as f64 / 1e3, 3)
            .trim_end_matches('0')
            .trim_end_matches('.'),
    );
    out += &summary_table(&report.summaries);
    for (metric, s) in &report.summaries {
        if s.n < n && n > 1 {
            let _ = writeln!(
                out,
                "{}: over the {} of {} runs that have one",
                metric.name(),
                s.n,
                n
            );
        }
        if let (true, Some([q1, median, q3])) = (metric.spread_shown() && s.n > 1, s.quartiles) {
            let d = metric.decimals();
            let _ = writeln!(
                out,
                "{}: median {}, quartiles {} to {} (the mean hides clusters; these do not)",
                metric.name(),
                format_number(median, d),
                format_number(q1, d),
                format_number(q3, d)
            );
        }
    }
    if !report.layers.is_empty() {
        out += &layers_table(&report.layers);
    }
    let storm = report.storm();
    if storm.runs + storm.unresolved > 0 {
        let _ = writeln!(
            out,
            "\nstorm probability (stuck of the runs decided, Wilson 95% CI): {}",
            storm.describe()
        );
    } else {
        let _ = writeln!(
            out,
            "\nno trigger, so no verdict: recovery and storm probability need one"
        );
    }
    if let Some(backlog) = &report.backlog {
        out += &super::backlog::backlog_table(backlog);
    }
    out
}

/// A chain's services, one a row (1 is the one users call, the last the
/// server), each per-service metric's mean over the replicates.
fn layers_table(layers: &[Vec<(crate::measure::layer_metrics::LayerMetric, Summary)>]) -> String {
    let depth = layers.len();
    let names: Vec<&str> = layers[0].iter().map(|(m, _)| m.name()).collect();
    let mut header = vec!["service"];
    header.extend(&names);
    let rows: Vec<Vec<String>> = layers
        .iter()
        .enumerate()
        .map(|(i, summaries)| {
            let label = if i + 1 == depth {
                format!("{} (server)", i + 1)
            } else {
                (i + 1).to_string()
            };
            std::iter::once(label)
                .chain(summaries.iter().map(|&(metric, ref s)| {
                    if s.n == 0 {
                        "–".to_string()
                    } else {
                        format_number(s.mean, metric.decimals())
                    }
                }))
                .collect()
        })
        .collect();
    let n = layers[0].first().map_or(0, |(_, s)| s.n);
    format!(
        "\neach service of the chain{} (amplification: its attempts per user request):\n{}",
        if n > 1 {
            ", mean over the replicates"
        } else {
            ""
        },
        aligned(&header, &rows)
    )
}

/// Rows under a header: the first column left-aligned, the rest right-aligned,
/// two spaces apart.
fn aligned(header: &[&str], rows: &[Vec<String>]) -> String {
    aligned_text_first(header, rows, 1)
}

/// Rows under a header, two spaces apart: the first `text_columns` columns
/// left-aligned, the rest (numbers) right-aligned.
pub fn aligned_text_first(header: &[&str], rows: &[Vec<String>], text_columns: usize) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
            let gap = if i == 0 { "" } else { "  " };
            if i < text_columns {
                let _ = write!(line, "{gap}{cell:<width$}");
            } else {
                let _ = write!(line, "{gap}{cell:>width$}");
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

/// `herdsim compare`'s human output: the scenario, a row per point with the
/// published figures and verdicts beside herdsim's, then the notes.
pub fn compare_table(comparison: &crate::study::compare::Comparison<'_>) -> String {
    let mut out = String::new();
    for line in super::comparison_title(comparison) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let (header, rows) = super::comparison_cells(comparison);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    out += &aligned(&header, &rows);
    out.push('\n');
    for note in super::comparison_notes(comparison) {
        let _ = writeln!(out, "{note}");
    }
    out
}

/// `herdsim policy`: a policy's schedule without contention, retry by retry,
/// then when it reaches the cap.
pub fn schedule_table(schedule: &crate::experiment::schedule::Schedule) -> String {
    let mut out = String::new();
    let p = &schedule.policy;
    let spec = crate::RunSpec {
        policy: *p,
        ..crate::RunSpec::seed_002(p.kind, 1)
    };
    let _ = writeln!(out, "{}", WorkloadSummary::lines(&spec)[1]);
    let _ = writeln!(
        out,
        "{} sampled clients, every attempt failing; delays in ms",
        group_thousands(u64::from(schedule.samples))
    );
    out.push('\n');
    let ms = |us: crate::base::time::Micros| format_number(us.ticks() as f64 / 1e3, 1);
    let rows: Vec<Vec<String>> = schedule
        .retries
        .iter()
        .map(|r| {
            vec![
                r.retry.to_string(),
                ms(r.p1),
                ms(r.p50),
                ms(r.p99),
                format!("{}%", format_number(r.at_cap * 100.0, 2)),
                ms(r.wait_p50),
            ]
        })
        .collect();
    out += &aligned(
        &["retry", "p1", "p50", "p99", "at cap", "total wait p50"],
        &rows,
    );
    out.push('\n');
    match schedule.all_at_cap_from {
        Some(k) => {
            let _ = writeln!(out, "Every delay is the cap from retry {k}.");
        }
        None => {
            let _ = writeln!(
                out,
                "No retry up to {} has every delay at the cap.",
                schedule.retries.len()
            );
        }
    }
    if let Some(w) = schedule.walk {
        let _ = writeln!(
            out,
            "Walks to the cap: median {} draws (p1 {}, p99 {}, max {}); mean step ratio {:.3}.",
            w.median, w.p1, w.p99, w.max, w.step_ratio
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
        "For retry k ≥ 1, c_k = min(cap, base·m^(k−1)), m the --multiplier (default 2: doubling).\n\
         U[a, b] is a uniform whole number of microseconds, both ends included. Every delay lies\n\
         in [0, cap] but grpc-connection's and grpc-retry's (up to 1.2·cap). The bare name grpc\n\
         is refused: it could mean either.\n\
         --jitter-factor f (any policy; seed 003): d' = d + U[−f·d/2, +f·d/2], applied after\n\
         the cap, so a delay may exceed the cap by at most f·cap/2.\n",
    );
    out
}

/// `herdsim controls`: every retry control, grouped by its key, with its
/// syntax, source, rule and whose state it is.
pub fn controls_table() -> String {
    use crate::control::{ABOUT, Family};
    let mut out = String::new();
    for family in [Family::Budget, Family::Breaker, Family::Throttle] {
        let _ = writeln!(out, "--{} (scenario key {}):\n", family.key(), family.key());
        for about in ABOUT.iter().filter(|a| a.family == family) {
            let _ = writeln!(out, "  {}", about.syntax);
            let _ = writeln!(out, "      source: {}", about.source);
            let _ = writeln!(out, "      rule:   {}", about.rule);
            let _ = writeln!(out, "      state:  {}\n", about.scope);
        }
    }
    out.push_str(
        "A run takes at most one budget, breaker and throttle. Their state is kept per\n\
         scope of --fleet N sources (clients), or one scope for all without it: --fleet 1\n\
         is per client (local), no --fleet is global. A budget or retry breaker is\n\
         consulted when a retry is decided, before its backoff; the classic breaker and a\n\
         throttle when an attempt is about to be sent. A refused retry or attempt ends its\n\
         request as given up.\n",
    );
    out.push('\n');
    out.push_str("The server's own controls (server model):\n\n");
    for about in crate::control::SERVER_ABOUT {
        let _ = writeln!(out, "  --{} {}", about.key.replace('_', "-"), about.syntax);
        let _ = writeln!(out, "      source: {}", about.source);
        let _ = writeln!(out, "      rule:   {}\n", about.rule);
    }
    out
}

/// `text` broken at spaces into lines of at most `width` characters (a word
/// longer than that stands alone), each after `indent`.
pub(super) fn wrapped(text: &str, indent: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

/// `herdsim triggers`: every trigger kind of the server model, with its
/// syntax, what the server loop does with it, and an example; then what
/// every trigger shares and the keys that change them.
pub fn triggers_table() -> String {
    use crate::model::server::TRIGGERS;
    let mut out = String::from(
        "--trigger (scenario key trigger, server model): KIND@FROM..TO, several joined by +\n\
         (not commas), or none. FROM..TO takes durations (2s..2.5s); the window is [FROM, TO).\n\n",
    );
    for about in &TRIGGERS {
        let _ = writeln!(out, "  {}", about.syntax);
        out += &wrapped(about.meaning, "      ", 84);
        let _ = writeln!(out, "      example: --trigger {}\n", about.example);
    }
    out += &wrapped(
        "Every trigger acts on the server (with --depth, the last service of the chain), \
         from FROM, included, to TO, excluded; FROM must lie inside --duration. Triggers \
         may overlap, of any kinds. --failure-end (window, next-start) says when the \
         failure triggers (outage, fail, user-fail) stop failing attempts; --rate-changes \
         (exact, at-arrival) how arrivals follow spikes and ramps. A sweep takes several \
         trigger lists separated by ';'.",
        "",
        88,
    );
    out += "\nFor example:\n  herdsim run --resource server --rate 500 --timeout 100ms --policy no-backoff \\\n      \
            --max-attempts 4 --trigger outage@2s..2.5s+spike:2@5s..6s\n";
    out
}

/// `herdsim params`: every registry parameter, one block each.
pub fn params_table(names: super::ParamNames) -> String {
    let mut out = String::new();
    for param in &crate::spec::params::PARAMS {
        let name = match names {
            super::ParamNames::Flags => format!("--{} <{}>", param.flag(), param.value_name),
            super::ParamNames::Keys => param.key.to_string(),
        };
        let _ = writeln!(out, "{name}\n    {}", param.doc);
        let _ = writeln!(
            out,
            "    default: {}; accepts: {}; scenario key: {}; CSV: {}\n",
            param.default_text(),
            param.accepts,
            param.key,
            param.columns.join(", ")
        );
    }
    out.push_str(
        "Durations take a unit: 250us, 100ms, 1.5s, 2m, 1h; a bare number is ms. In sweep and\n\
         compare each flag takes a list (a grid axis); so does each key in a scenario file.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_trigger_listing_has_every_kind_with_its_syntax_meaning_and_example() {
        use crate::model::server::{TriggerKind, Triggers};
        let text = super::triggers_table();
        // One trigger of every kind (the match fails to compile when a kind
        // is added, until it is added here).
        let every: Triggers = "outage@1s..2s+fail:0.5@1s..2s+user-fail:0.5@1s..2s+spike:2@1s..2s\
                               +ramp:1/2@1s..2s+slow:2@1s..2s+capacity:0@1s..2s"
            .parse()
            .unwrap();
        let mut seen = [false; 7];
        for trigger in &every.0 {
            let i = match trigger.kind {
                TriggerKind::Outage => 0,
                TriggerKind::PartialFailure(_) => 1,
                TriggerKind::PerUserFailure(_) => 2,
                TriggerKind::LoadSpike(_) => 3,
                TriggerKind::Ramp { .. } => 4,
                TriggerKind::Slowdown(_) => 5,
                TriggerKind::CapacityDrop(_) => 6,
            };
            seen[i] = true;
            let about = trigger.kind.about();
            assert!(
                text.contains(&format!("\n  {}\n", about.syntax)),
                "{}",
                about.syntax
            );
            assert!(text.contains(&format!("example: --trigger {}\n", about.example)));
            // The meaning is there word for word, wrapped.
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(about.meaning), "{}", about.syntax);
        }
        assert!(seen.iter().all(|&s| s));
        assert!(text.lines().all(|l| l.chars().count() <= 92), "{text}");
    }

    use super::*;
    use crate::measure::server_metrics::ServerMetric;

    #[test]
    fn a_metric_some_replicates_lack_keeps_the_table_square() {
        let summaries = [
            (ServerMetric::Requests, Summary::of(&[10.0, 12.0, 14.0])),
            (
                ServerMetric::RecoveryMs,
                Summary::of_present(&[Some(50.0), None, None]),
            ),
            (
                ServerMetric::LatencyP50Ms,
                Summary::of_present(&[None, None, None]),
            ),
        ];
        let table = summary_table(&summaries);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert!(
            lines[2].starts_with("recovery_ms") && lines[2].contains("50.0"),
            "{table}"
        );
        assert!(
            lines[3].starts_with("latency_p50_ms") && lines[3].contains('–'),
            "{table}"
        );
        assert!(!table.contains("NaN"), "{table}");
    }
}
