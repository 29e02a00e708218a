//! The summary a report opens with (`herdsim report`): what happened at
//! each point, in sentences a postmortem can quote, generated from
//! replicate 0's time series and the summaries over every replicate; and
//! a chain's services, one a row.
//!
//! Every number here is written plain, without thousands separators
//! (`1868`, not `1,868`), so that it pastes into a spreadsheet or a
//! calculator as a number; the comparison tables keep `compare`'s format.

use std::fmt::Write as _;

use crate::base::time::Micros;
use crate::base::time::Nanos;
use crate::measure::layer_metrics::LayerMetric;
use crate::measure::metrics::Metric;
use crate::measure::server_metrics::{ServerMetric, ServerMetrics, Storm};
use crate::measure::stats::Summary;
use crate::measure::verdict::Verdict;
use crate::spec::RunSpec;
use crate::study::compare::ComparedPoint;

/// The most points summarised in sentences, one paragraph each; a grid of
/// more gets one table row a point.
pub const MAX_SENTENCES: usize = 8;

/// What the summary says of one server-model point.
#[derive(Debug, Clone)]
pub struct ServerPointSummary {
    /// What sets the point apart (empty for a scenario of one point).
    pub label: String,
    /// Offered load ρ of each service, top first (the server last).
    pub loads: Vec<Option<f64>>,
    /// The triggers as given (`outage@2s..2.5s`).
    pub triggers: Vec<String>,
    /// Replicate 0's mean goodput (successes per second) over the whole
    /// windows before the first trigger (over the load without one).
    pub goodput_before: Option<f64>,
    /// Replicate 0's lowest goodput in one window from the first trigger's
    /// start to the end of the patience window (of the load), and the
    /// window's start, s.
    pub lowest: Option<(f64, f64)>,
    /// Replicate 0's queue peak.
    pub queue_peak: u64,
    /// Replicate 0's attempts that reached the server per request.
    pub server_amplification: f64,
    /// Replicate 0's verdict (`None` without a trigger).
    pub verdict: Option<Verdict>,
    /// The verdicts of every run, when the runs' summaries are known.
    pub storm: Option<Storm>,
    /// Runs of the point (1 when only replicate 0 is known).
    pub runs: usize,
    /// Over every run: queue peak, server amplification and recovery
    /// (ms; over the runs that recovered), when known.
    pub means: Option<[Summary; 3]>,
    /// Decimals of a time in seconds: the window's.
    pub time_decimals: usize,
    /// The patience window the verdicts were judged over, ns.
    pub patience_ns: Nanos,
}

/// `x` with `decimals` decimals, no thousands separator, no `-0`.
pub fn plain(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// A goodput per second, plain: whole requests at 10/s and above (and
/// when whole), a decimal below.
fn per_second(x: f64) -> String {
    let whole = x.abs() >= 10.0 || x == x.round();
    plain(x, if whole { 0 } else { 1 })
}

/// The decimals that show a multiple of `window_ns` in seconds exactly
/// (at least one, at most six).
fn decimals_of(window_ns: Nanos) -> usize {
    (1..=6)
        .find(|&d| window_ns.ticks().is_multiple_of(10u64.pow(9 - d as u32)))
        .unwrap_or(6)
}

/// The summary of a server point from replicate 0 (`run`, the first
/// replicate of the point, with its windows) and, when known, every run's
/// `summaries`.
pub fn server_point_summary(
    label: &str,
    spec: &RunSpec,
    run: &ServerMetrics,
    summaries: Option<&[(ServerMetric, Summary)]>,
) -> ServerPointSummary {
    let window_ns = Nanos::of_us(spec.window().max(Micros::from_us(1)));
    let window_s = window_ns.ticks() as f64 / 1e9;
    let triggers = &spec.server.triggers.0;
    let first = triggers.iter().map(|t| t.from).min();
    let last = triggers.iter().map(|t| t.to).max();
    let whole = |i: usize, end: Nanos| (i as u64 + 1) * window_ns <= end;
    let goodput = |w: &crate::measure::server_metrics::Window| w.successes as f64 / window_s;
    let before_end = first.unwrap_or(run.load_end_ns);
    let before: Vec<f64> = run
        .windows
        .iter()
        .enumerate()
        .take_while(|&(i, _)| whole(i, before_end))
        .map(|(_, w)| goodput(w))
        .collect();
    let goodput_before =
        (!before.is_empty()).then(|| before.iter().sum::<f64>() / before.len() as f64);
    // From the first trigger's window to the end of the patience window,
    // or of the load if it ends sooner.
    let from = first.map_or(0, |f| (f / window_ns) as usize);
    let judged_end = last.map_or(run.load_end_ns, |l| {
        (l + Nanos::of_us(spec.patience_us())).min(run.load_end_ns.max(l))
    });
    let mut lowest: Option<(f64, f64)> = None;
    for (i, w) in run.windows.iter().enumerate().skip(from) {
        if !whole(i, judged_end) && lowest.is_some() {
            break;
        }
        let g = goodput(w);
        if lowest.is_none_or(|(low, _)| g < low) {
            lowest = Some((g, i as f64 * window_s));
        }
    }
    let find = |metric: ServerMetric| {
        summaries.and_then(|s| s.iter().find(|(m, _)| *m == metric).map(|(_, s)| *s))
    };
    let means = match (
        find(ServerMetric::QueuePeak),
        find(ServerMetric::ServerAmplification),
        find(ServerMetric::RecoveryMs),
    ) {
        (Some(a), Some(b), Some(c)) => Some([a, b, c]),
        _ => None,
    };
    ServerPointSummary {
        label: label.to_string(),
        loads: spec.server.offered_loads(),
        triggers: triggers.iter().map(ToString::to_string).collect(),
        goodput_before,
        lowest,
        queue_peak: run.queue_peak,
        server_amplification: ServerMetric::ServerAmplification
            .value(run)
            .unwrap_or(f64::NAN),
        verdict: run.verdict,
        storm: summaries.map(Storm::of),
        runs: find(ServerMetric::Requests).map_or(1, |s| s.n),
        means,
        time_decimals: decimals_of(window_ns),
        patience_ns: Nanos::of_us(spec.patience_us()),
    }
}

/// ρ of each service in words: `0.790`, or for a chain `0.200, 0.300,
/// 0.790 (services 1 to 3, the last the server)`.
fn loads_text(loads: &[Option<f64>]) -> String {
    let show = |rho: &Option<f64>| rho.map_or("unbounded".to_string(), |r| plain(r, 3));
    let each: Vec<String> = loads.iter().map(show).collect();
    let mut text = if loads.len() == 1 {
        each[0].clone()
    } else {
        format!(
            "{} (services 1 to {}, the last the server)",
            each.join(", "),
            loads.len()
        )
    };
    if loads.iter().flatten().any(|&r| r >= 1.0) {
        text += " (at ρ ≥ 1 the queue grows without any trigger: no verdict means much)";
    }
    text
}

impl ServerPointSummary {
    /// The trigger(s) in words, for "after the trigger's end".
    fn the_trigger(&self) -> &'static str {
        if self.triggers.len() > 1 {
            "the last trigger's end"
        } else {
            "the trigger's end"
        }
    }

    /// Replicate 0's verdict in a few words.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            None => "no trigger, so no verdict".to_string(),
            Some(Verdict::Recovered(ns)) => format!(
                "recovered {} s after {}",
                plain(ns.ticks() as f64 / 1e9, self.time_decimals),
                self.the_trigger()
            ),
            Some(Verdict::Draining(ns)) => format!(
                "draining: still degraded at the patience window's end ({} s) but its backlog \
                 falling steadily, healthy by about {} s after {}",
                plain(self.patience_ns.ticks() as f64 / 1e9, self.time_decimals),
                plain(ns.ticks() as f64 / 1e9, self.time_decimals),
                self.the_trigger()
            ),
            Some(Verdict::Stuck) => format!(
                "stuck: still degraded late in the patience window ({} s) after {}, its backlog \
                 not falling",
                plain(self.patience_ns.ticks() as f64 / 1e9, self.time_decimals),
                self.the_trigger()
            ),
            Some(Verdict::Unresolved) => {
                "unresolved: the load ended before the patience window did".to_string()
            }
        }
    }

    /// The paragraph: offered load, goodput, queue, amplification,
    /// verdict, then the means over every run when there are several.
    pub fn sentences(&self) -> String {
        let t = |s: f64| plain(s, self.time_decimals);
        let mut text = format!("Offered load ρ = {}. ", loads_text(&self.loads));
        let several = self.runs > 1;
        if several {
            text += "In replicate 0, goodput ";
        } else {
            text += "Goodput ";
        }
        let triggers = if self.triggers.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.triggers.join(", "))
        };
        match (self.goodput_before, self.lowest, self.triggers.is_empty()) {
            (Some(before), Some((low, at)), false) if low < before => {
                let _ = write!(
                    text,
                    "fell from {}/s before the trigger to {}/s at t = {} s{triggers}",
                    per_second(before),
                    per_second(low),
                    t(at)
                );
            }
            (Some(before), Some((low, at)), false) => {
                let _ = write!(
                    text,
                    "held at {}/s through the trigger{triggers} (its lowest window {}/s at t = \
                     {} s)",
                    per_second(before),
                    per_second(low),
                    t(at)
                );
            }
            (None, Some((low, at)), false) => {
                let _ = write!(
                    text,
                    "was {}/s at its lowest, at t = {} s{triggers}",
                    per_second(low),
                    t(at)
                );
            }
            (Some(before), low, _) => {
                let _ = write!(text, "averaged {}/s", per_second(before));
                if let Some((low, at)) = low {
                    let _ = write!(
                        text,
                        " (its lowest window {}/s at t = {} s)",
                        per_second(low),
                        t(at)
                    );
                }
            }
            _ => text += "was not measured (no whole window)",
        }
        let _ = write!(
            text,
            ", the queue peaked at {}, the server saw {} attempts per request; {}",
            self.queue_peak,
            plain(self.server_amplification, 3),
            self.verdict_text()
        );
        if let Some(storm) = self.storm
            && storm.runs + storm.unresolved > 0
        {
            let _ = write!(
                text,
                " ({} of {} run{} decided, {} stuck, {} unresolved)",
                storm.runs,
                self.runs,
                if self.runs == 1 { "" } else { "s" },
                storm.stuck,
                storm.unresolved
            );
        }
        text.push('.');
        if let (true, Some([peak, amplification, recovery])) = (several, &self.means) {
            let _ = write!(
                text,
                " Over the {} runs: the queue peaked at {} on average ({} to {}), the server saw \
                 {} attempts per request",
                self.runs,
                plain(peak.mean, 1),
                plain(peak.min, 0),
                plain(peak.max, 0),
                plain(amplification.mean, 3)
            );
            if recovery.n > 0 {
                let _ = write!(
                    text,
                    ", and the {} that recovered did so {} s after {} on average",
                    recovery.n,
                    plain(recovery.mean / 1e3, self.time_decimals),
                    self.the_trigger()
                );
            }
            text.push('.');
        }
        text
    }

    /// The point's row of the summary table (see [`summary_table_header`]).
    fn row(&self) -> Vec<String> {
        let storm = self.storm;
        let count = |f: fn(&Storm) -> u64| storm.map_or("–".to_string(), |s| f(&s).to_string());
        vec![
            self.label.clone(),
            self.loads
                .iter()
                .map(|r| r.map_or("unbounded".to_string(), |r| plain(r, 3)))
                .collect::<Vec<_>>()
                .join(" "),
            self.goodput_before.map_or("–".to_string(), per_second),
            self.lowest.map_or("–".to_string(), |(g, _)| per_second(g)),
            self.lowest
                .map_or("–".to_string(), |(_, at)| plain(at, self.time_decimals)),
            self.queue_peak.to_string(),
            plain(self.server_amplification, 3),
            match self.verdict {
                None => "no trigger".to_string(),
                Some(Verdict::Recovered(ns)) => format!(
                    "recovered at +{} s",
                    plain(ns.ticks() as f64 / 1e9, self.time_decimals)
                ),
                Some(Verdict::Draining(ns)) => format!(
                    "draining, about +{} s",
                    plain(ns.ticks() as f64 / 1e9, self.time_decimals)
                ),
                Some(v) => v.name().to_string(),
            },
            storm.map_or("–".to_string(), |s| {
                format!("{} of {}", s.runs, self.runs)
            }),
            count(|s| s.stuck),
            count(|s| s.unresolved),
        ]
    }
}

/// The summary table's header.
fn summary_table_header() -> Vec<String> {
    [
        "point",
        "ρ",
        "goodput before (/s)",
        "lowest goodput (/s)",
        "at t (s)",
        "queue peak",
        "attempts per request at the server",
        "replicate 0",
        "runs decided",
        "stuck",
        "unresolved",
    ]
    .iter()
    .map(ToString::to_string)
    .collect()
}

/// A Markdown table: a header, then rows; every column after the first
/// right-aligned.
fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n", header.join(" | "));
    out += "| --- |";
    for _ in 1..header.len() {
        out += " ---: |";
    }
    out.push('\n');
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

/// The summary of server points as Markdown: a paragraph a point (its
/// label in bold when there are several), or past [`MAX_SENTENCES`]
/// points a table of replicate 0's figures and every run's verdicts.
pub fn server_summary_markdown(points: &[ServerPointSummary]) -> String {
    if points.len() > MAX_SENTENCES {
        let header = summary_table_header();
        let rows: Vec<Vec<String>> = points.iter().map(ServerPointSummary::row).collect();
        return format!(
            "Replicate 0 of each point: its goodput before the first trigger and at its lowest \
             after it, its queue peak and attempts per request at the server, and its verdict; \
             then every run's verdicts.\n\n{}",
            table(&header, &rows)
        );
    }
    let mut out = String::new();
    for point in points {
        if points.len() > 1 || !point.label.is_empty() {
            let _ = write!(out, "**{}**: ", point.label);
        }
        out += &point.sentences();
        out += "\n\n";
    }
    out
}

/// The summary of a herd-model point: its means over the replicates.
pub fn herd_point_summary(point: &ComparedPoint) -> String {
    let mean = |metric: Metric| point.cell(metric).summary.mean;
    let runs = point.cell(Metric::Calls).summary.n;
    let spec = &point.spec;
    let mut text = format!(
        "{} clients made {} calls, {} per client; {} gave up and the last success came at t = {} \
         s; retries peaked at {} in one {} ms window ({}% of the clients)",
        spec.clients,
        plain(mean(Metric::Calls), if runs > 1 { 1 } else { 0 }),
        plain(mean(Metric::Amplification), 3),
        plain(mean(Metric::GaveUp), if runs > 1 { 1 } else { 0 }),
        plain(mean(Metric::LastSuccessMs) / 1e3, 3),
        plain(mean(Metric::PeakRetries), if runs > 1 { 1 } else { 0 }),
        plain(spec.window().ticks() as f64 / 1e3, 3)
            .trim_end_matches('0')
            .trim_end_matches('.'),
        plain(mean(Metric::PeakRetriesPct), 2)
    );
    if runs > 1 {
        let _ = write!(text, " (means over {runs} runs)");
    }
    text.push('.');
    text
}

/// The summary of herd points as Markdown, a paragraph a point (its label
/// in bold).
pub fn herd_summary_markdown(points: &[ComparedPoint]) -> String {
    let mut out = String::new();
    for point in points {
        let _ = write!(
            out,
            "**{}**: {}\n\n",
            point.label,
            herd_point_summary(point)
        );
    }
    out
}

/// Each service of a chain point as a Markdown table: `services` holds
/// the point's per-service summaries in sweep column order
/// ([`LayerMetric::IN_SWEEPS`] for service 1, then 2, ...), `depth` of
/// them filled; the mean over the replicates, ± its 95% CI with several.
pub fn services_markdown(label: &str, depth: usize, runs: usize, services: &[Summary]) -> String {
    let metrics = LayerMetric::IN_SWEEPS;
    let mut header = vec!["service".to_string()];
    header.extend(metrics.iter().map(|m| m.name().to_string()));
    let rows: Vec<Vec<String>> = (0..depth)
        .map(|i| {
            let name = if i + 1 == depth {
                format!("{} (server)", i + 1)
            } else {
                (i + 1).to_string()
            };
            std::iter::once(name)
                .chain(metrics.iter().enumerate().map(|(k, metric)| {
                    match services.get(i * metrics.len() + k) {
                        Some(s) if s.n > 0 => {
                            let d = metric.decimals();
                            match s.ci95 {
                                Some(ci) => format!("{} ± {}", plain(s.mean, d), plain(ci, d)),
                                None => plain(s.mean, d),
                            }
                        }
                        _ => "–".to_string(),
                    }
                }))
                .collect()
        })
        .collect();
    let title = if label.is_empty() {
        "Each service of the chain".to_string()
    } else {
        format!("Each service of the chain at **{label}**")
    };
    format!(
        "{title}{} (1 is the service users call, {depth} the server; amplification: its \
         attempts per user request):\n\n{}",
        if runs > 1 {
            format!(", mean ± 95% CI over {runs} runs")
        } else {
            String::new()
        },
        table(&header, &rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Nanos;

    #[test]
    fn plain_numbers_have_no_separator_and_no_negative_zero() {
        assert_eq!(plain(1868.0, 0), "1868");
        assert_eq!(plain(-0.0001, 2), "0.00");
        assert_eq!(plain(-1.5, 1), "-1.5");
        assert_eq!(per_second(600.4), "600");
        assert_eq!(per_second(2.25), "2.2");
        assert_eq!(per_second(0.0), "0");
    }

    #[test]
    fn a_windows_decimals_show_its_multiples_exactly() {
        assert_eq!(decimals_of(Nanos::from_ms(100)), 1);
        assert_eq!(decimals_of(Nanos::from_s(1)), 1);
        assert_eq!(decimals_of(Nanos::from_ms(10)), 2);
        assert_eq!(decimals_of(Nanos::from_ms(250)), 2);
        assert_eq!(decimals_of(Nanos::from_us(1)), 6);
    }

    #[test]
    fn a_big_grid_is_a_table_and_a_small_one_sentences() {
        let point = ServerPointSummary {
            label: "policy=full".to_string(),
            loads: vec![Some(0.79)],
            triggers: vec!["capacity:0@2s..5s".to_string()],
            goodput_before: Some(600.0),
            lowest: Some((0.0, 2.0)),
            queue_peak: 1868,
            server_amplification: 1.004,
            verdict: Some(Verdict::Recovered(Nanos::from_ms(11_300))),
            storm: Some(Storm::of_counts(0, 10, 0)),
            runs: 10,
            means: None,
            time_decimals: 1,
            patience_ns: Nanos::from_s(10),
        };
        let one = server_summary_markdown(std::slice::from_ref(&point));
        assert!(one.starts_with("**policy=full**: Offered load ρ = 0.790. In replicate 0, goodput fell from 600/s before the trigger to 0/s at t = 2.0 s (capacity:0@2s..5s), the queue peaked at 1868, the server saw 1.004 attempts per request; recovered 11.3 s after the trigger's end (10 of 10 runs decided, 0 stuck, 0 unresolved)."), "{one}");
        let many = server_summary_markdown(&vec![point; MAX_SENTENCES + 1]);
        assert_eq!(many.matches("| policy=full | 0.790 | 600 | 0 | 2.0 | 1868 | 1.004 | recovered at +11.3 s | 10 of 10 | 0 | 0 |").count(), MAX_SENTENCES + 1, "{many}");
    }
}
