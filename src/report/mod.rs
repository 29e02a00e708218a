//! Reports of results, one exporter per format. Exporters build strings; the
//! command line decides where they go.

pub mod assessment;
pub mod backlog;
pub mod compare_file;
pub mod conform;
pub mod csv;
pub mod diff;
pub mod error;
pub mod herd_svg;
pub mod html;
mod json;
pub mod map_csv;
pub mod map_svg;
mod markdown;
mod metric_docs;
pub mod series;
pub mod series_svg;
pub mod server_compare;
pub mod strategies_svg;
pub mod study_series_svg;
pub mod study_table;
pub mod summary;
pub mod svg;
pub mod sweep_file;
mod table;
pub mod table_curves;
pub mod tune_file;
pub mod tune_svg;
pub mod tune_table;

pub use json::{assessment_json, run_json, server_run_json};
pub use markdown::{ParamNames, compare_markdown, params_markdown};
pub use metric_docs::{metrics_table, verdict_rule_text};
pub use table::{
    aligned_text_first, compare_table, controls_table, params_table, policies_table, run_table,
    schedule_table, server_run_table, triggers_table,
};

use serde::Serialize;

use crate::base::format::{format_number, group_thousands};
use crate::base::time::{Micros, Nanos, format_duration, us_to_ms};
use crate::measure::metrics::Metric;
use crate::measure::stats::Summary;
use crate::spec::RunSpec;

/// A workload's results over replicate seeds: what `herdsim run` reports.
#[derive(Debug, Clone)]
pub struct RunReport<'a> {
    /// The workload.
    pub spec: &'a RunSpec,
    /// The master seed every job seed was mixed from.
    pub master_seed: u64,
    /// Each metric's summary over the replicates, in report order.
    pub summaries: Vec<(Metric, Summary)>,
}

/// The results of a server-model run over replicates, for the reports.
pub struct ServerRunReport<'a> {
    /// The workload.
    pub spec: &'a RunSpec,
    /// The master seed.
    pub master_seed: u64,
    /// The time-series window, µs.
    pub window_us: crate::base::time::Micros,
    /// Each server metric's summary over the replicates, in report order.
    pub summaries: Vec<(crate::measure::server_metrics::ServerMetric, Summary)>,
    /// A chain's per-service summaries, top first; empty for the server
    /// alone.
    pub layers: Vec<Vec<(crate::measure::layer_metrics::LayerMetric, Summary)>>,
    /// The backlog's passages and splitting's estimate, if asked for.
    pub backlog: Option<backlog::BacklogReport>,
}

impl ServerRunReport<'_> {
    /// The storm probability, from the summaries of `stuck` and
    /// `unresolved`.
    pub fn storm(&self) -> crate::measure::server_metrics::Storm {
        crate::measure::server_metrics::Storm::of(&self.summaries)
    }
}

impl RunReport<'_> {
    /// How many replicates were run.
    pub fn replicates(&self) -> usize {
        self.summaries.first().map_or(0, |(_, s)| s.n)
    }
}

/// The workload as reported: every parameter, in reported units (ms).
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSummary {
    /// Resource model.
    pub resource: &'static str,
    /// How first calls arrive.
    pub arrivals: String,
    /// The slot's outage window `[from, to)`, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub down_ms: Option<(f64, f64)>,
    /// Most attempts per client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Deadline after each client's first call, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<f64>,
    /// Hedged requests' delay between copies, ms (server model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hedge_delay_ms: Option<f64>,
    /// Clients.
    pub clients: u32,
    /// Requests served per ms.
    pub capacity_per_ms: f64,
    /// One service time, ms.
    pub service_ms: f64,
    /// Policy name.
    pub policy: &'static str,
    /// Policy base, ms.
    pub base_ms: f64,
    /// Policy cap, ms.
    pub cap_ms: f64,
    /// Linear step, ms (linear only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_ms: Option<f64>,
    /// Proportional jitter factor (0 is off).
    pub jitter_factor: f64,
    /// Exponent offset of the exponential family.
    pub first_exponent: u32,
    /// The ceiling's growth per retry (policies that read it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiplier: Option<f64>,
    /// Where equal and full jitter apply the cap.
    pub cap_mode: &'static str,
    /// How clients' generators are seeded.
    pub seeding: &'static str,
    /// The retry budget, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The circuit breaker, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker: Option<String>,
    /// The client-side throttle, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle: Option<String>,
    /// Clients per scope of the controls' state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<u32>,
    /// What clients do with retry hints.
    pub retry_after: &'static str,
    /// Peak-retries window, ms.
    pub window_ms: f64,
}

impl WorkloadSummary {
    /// The summary of `spec`.
    pub fn of(spec: &RunSpec) -> Self {
        let p = &spec.policy;
        WorkloadSummary {
            resource: spec.resource.name(),
            arrivals: spec.arrivals.to_string(),
            down_ms: spec.down.map(|(a, b)| (us_to_ms(a), us_to_ms(b))),
            max_attempts: spec.max_attempts,
            deadline_ms: spec.deadline_us.map(us_to_ms),
            hedge_delay_ms: spec
                .hedge_delay_us
                .filter(|_| spec.resource == crate::model::ResourceKind::Server)
                .map(us_to_ms),
            clients: spec.clients,
            capacity_per_ms: spec.capacity_per_ms,
            service_ms: spec.service_ns().ticks() as f64 / 1e6,
            policy: p.kind.name(),
            base_ms: us_to_ms(p.base_us),
            cap_ms: us_to_ms(p.cap_us),
            step_ms: (p.kind == crate::PolicyKind::Linear).then(|| us_to_ms(p.step())),
            jitter_factor: p.jitter_factor,
            first_exponent: p.first_exponent,
            multiplier: p.kind.uses_multiplier().then_some(p.multiplier),
            cap_mode: p.cap_mode.name(),
            seeding: spec.seeding.name(),
            budget: spec.budget.map(|b| b.to_string()),
            breaker: spec.breaker.map(|b| b.to_string()),
            throttle: spec.throttle.map(|b| b.to_string()),
            fleet: spec.fleet,
            retry_after: spec.retry_after.name(),
            window_ms: us_to_ms(spec.window()),
        }
    }

    /// One line a parameter group, for human output.
    pub fn lines(spec: &RunSpec) -> Vec<String> {
        let p = &spec.policy;
        let clients = group_thousands(u64::from(spec.clients));
        let arrivals = match spec.arrivals {
            crate::model::arrivals::Arrivals::Herd => "all first calls at t = 0".to_string(),
            other => format!("first calls {other}"),
        };
        let resource = match spec.resource {
            crate::model::ResourceKind::Slot => {
                let service = spec.service_ns();
                let service = if service.is_multiple_of(Nanos::from_us(1)) {
                    format_duration(service.whole_us())
                } else {
                    format!("{:.3}us", service.ticks() as f64 / 1e3)
                };
                let mut text = format!(
                    "a slot resource serving {}/ms (one call per {service})",
                    spec.capacity_per_ms
                );
                if let Some((from, to)) = spec.down {
                    text += &format!(
                        ", down from {} to {}",
                        format_duration(from),
                        format_duration(to)
                    );
                }
                text
            }
            crate::model::ResourceKind::Outage => {
                "outage episodes (each client down U[0, 30s], then 90% success)".to_string()
            }
            crate::model::ResourceKind::Occ => {
                "an optimistic-concurrency row (read, then write; hops |N(10ms, 2ms)|)".to_string()
            }
            crate::model::ResourceKind::Server => spec.server.describe(spec.patience_us()),
        };
        let mut policy = format!(
            "{} (base {}, cap {}",
            p.kind.name(),
            format_duration(p.base_us),
            format_duration(p.cap_us)
        );
        if p.kind == crate::PolicyKind::Linear {
            policy += &format!(", step {}", format_duration(p.step()));
        }
        if p.kind == crate::PolicyKind::Aws2026 {
            policy += &format!(", throttle base {}", format_duration(p.throttle_base_us));
        }
        // The default doubling is not shown, so the exponential family
        // reads as it did before the multiplier; gRPC's retry policy always
        // names its multiplier.
        let multiplied = p.kind.uses_multiplier()
            && (p.multiplier != 2.0 || p.kind == crate::PolicyKind::GrpcRetry);
        if multiplied {
            policy += &format!(", multiplier {}", p.multiplier);
        }
        if p.first_exponent > 0 {
            policy += &format!(", first exponent {}", p.first_exponent);
        }
        if p.cap_mode == crate::policy::CapMode::After {
            policy += ", cap after the draw";
        }
        if p.jitter_factor > 0.0 {
            policy += &format!(", jitter factor {}", p.jitter_factor);
        }
        policy.push(')');
        let first = if spec.resource == crate::model::ResourceKind::Server {
            resource
        } else {
            format!("{clients} clients, {arrivals}, against {resource}")
        };
        let mut formula = p.kind.formula().to_string();
        if multiplied {
            let exponent = match p.first_exponent {
                e if e > 0 && p.kind.parameters().contains("first-exponent") => {
                    format!("k−1+{e}")
                }
                _ => "k−1".to_string(),
            };
            formula += &format!("; c_k = min(cap, base·{}^({exponent}))", p.multiplier);
        }
        let mut lines = vec![first];
        if spec.resource == crate::model::ResourceKind::Server {
            lines.push(spec.server.describe_offered_load());
            if let Some(rule) = verdict_rule(spec) {
                lines.push(rule);
            }
        }
        let server = spec.resource == crate::model::ResourceKind::Server;
        let hedged = spec.hedge_delay_us.filter(|_| server);
        let mut stops = Vec::new();
        match hedged {
            // Hedging sends copies in place of retries: no backoff.
            Some(delay) => {
                let most = spec.max_attempts.unwrap_or(1);
                lines.push(format!(
                    "hedged: another copy every {} while none has answered, at most {most} \
                     copies (amplification counts them); the first success wins, the others \
                     are abandoned but still served; a failure {} fails the request",
                    format_duration(delay),
                    if spec.retry_on == crate::model::retry_on::RetryOn::ALL {
                        "never".to_string()
                    } else {
                        format!("outside {}", spec.retry_on)
                    }
                ));
            }
            None => {
                lines.push(format!("policy {policy}: {formula}"));
                if let Some(n) = spec.max_attempts {
                    stops.push(format!("at most {n} attempts"));
                }
            }
        }
        if server && spec.hedge_on_timeout == crate::model::timeout_hedging::HedgeOnTimeout::On {
            lines.push(
                "hedging on timeout (Envoy's hedge_on_per_try_timeout): a timed-out attempt is \
                 kept, its reply may still win, and a retry goes beside it whatever retry_on \
                 says; the first success wins, the others are abandoned but still served"
                    .to_string(),
            );
        }
        if let Some(d) = spec.deadline_us {
            stops.push(if server {
                format!("at its request's {} deadline", format_duration(d))
            } else {
                format!("no attempt after {}", format_duration(d))
            });
        }
        if server && hedged.is_none() && spec.retry_on != crate::model::retry_on::RetryOn::ALL {
            stops.push(format!(
                "after a failure it does not retry (it retries {})",
                spec.retry_on
            ));
        }
        let scope = match spec.fleet {
            Some(1) => "per client".to_string(),
            Some(n) => format!("per fleet of {n}"),
            None => "shared by all".to_string(),
        };
        if let Some(budget) = spec.budget {
            stops.push(format!("when a budget of {budget} {scope} refuses a retry"));
        }
        if let Some(breaker) = spec.breaker {
            stops.push(format!("when a breaker {breaker} {scope} refuses"));
        }
        if let Some(throttle) = spec.throttle {
            stops.push(format!(
                "when a throttle {throttle} {scope} refuses an attempt"
            ));
        }
        if !stops.is_empty() {
            lines.push(format!("each client stops: {}", stops.join(", ")));
        }
        let mut controls = Vec::new();
        if spec.seeding == crate::spec::Seeding::Shared {
            controls.push("every client's generator seeded alike (shared seeding)".to_string());
        }
        if spec.retry_after != crate::control::retry_after::RetryAfter::Ignore {
            controls.push(format!("retry hints used as {}", spec.retry_after.name()));
        }
        if !controls.is_empty() {
            lines.push(controls.join("; "));
        }
        lines
    }
}

impl WorkloadSummary {
    /// The lines of [`WorkloadSummary::lines`] that say how a client
    /// retries: its policy and when it stops (what `conform` holds a trace
    /// to), whatever the resource.
    pub fn retry_lines(spec: &RunSpec) -> Vec<String> {
        let slot = RunSpec {
            resource: crate::model::ResourceKind::Slot,
            ..spec.clone()
        };
        WorkloadSummary::lines(&slot)
            .into_iter()
            .filter(|l| l.starts_with("policy ") || l.starts_with("each client stops"))
            .collect()
    }
}

/// How a server run with triggers is judged, in one line: the patience
/// window and where its length comes from; `None` without a trigger.
pub fn verdict_rule(spec: &RunSpec) -> Option<String> {
    let end = spec.server.last_trigger_end_us()?;
    let patience = spec.patience_us();
    let source = if spec.server.patience_us.is_some() {
        "given".to_string()
    } else {
        let mut why = format!(
            "the default: the longer of {} retry cycles of the longest timeout {} plus the longest \
             retry delay {}",
            crate::spec::server_load::PATIENCE_CYCLES,
            format_duration(spec.server.longest_timeout_us()),
            format_duration(spec.longest_retry_delay_us())
        );
        if let Some(drain) = spec.server.drain_estimate_us() {
            why += &format!(
                " and {} times the {} a stall as long as the triggers takes to drain at this load",
                crate::spec::server_load::PATIENCE_DRAINS,
                // To a tenth of a second: an estimate, not a measurement.
                format_duration(drain.div_ceil(Micros::from_ms(100)) * Micros::from_ms(100))
            );
        }
        why + ", within 10s to 10min"
    };
    let mut text = format!(
        "verdict over the patience window {} to {} ({source}): recovered if every window is \
         healthy (success rate, goodput and mean latency back at their levels before the first \
         trigger, within sampling error) from some time in its first three quarters to its end; \
         draining if not but its backlog still falls steadily in the window's second half; \
         stuck if neither; unresolved if the load ends before it does",
        format_duration(end),
        format_duration(end.saturating_add(patience)),
    );
    // A fixed request count ends the load at its last arrival, about
    // N / rate; otherwise the duration does.
    let load_end = match (spec.server.requests, spec.server.users) {
        (Some(n), None) => {
            Micros::from_ticks((n as f64 * 1e6 / spec.server.offered_rate_per_s()) as u64)
        }
        _ => spec.duration_us(),
    };
    if load_end < end.saturating_add(patience) {
        text += &format!(
            "; note: the load ends at about {}, before the window does, so runs are unresolved \
             (leave --duration and --requests out, or load until {} at least)",
            format_duration(load_end),
            format_duration(end.saturating_add(patience))
        );
    }
    Some(text)
}

/// A compared metric's heading, in the unit [`compared_value`] shows it in.
pub fn compared_heading(metric: Metric) -> &'static str {
    match metric {
        Metric::LastSuccessMs => "last success (s)",
        Metric::PeakRetries | Metric::PeakRetriesPct => "peak retries (% of clients)",
        Metric::CompletionP99Ms => "p99 completion (s)",
        Metric::PeakRetryShare => "peak retry share",
        Metric::SuccessRate => "success rate",
        other => other.name(),
    }
}

/// `mean ± ci95` of a compared metric, times in seconds (as seed 002 publishes
/// them), `mean` alone for a single replicate.
pub fn compared_value(cell: &crate::study::compare::ComparedCell) -> String {
    let (scale, decimals) = compared_unit(cell.metric);
    let s = &cell.summary;
    let mean = format_number(s.mean * scale, decimals);
    match s.ci95 {
        Some(ci) => format!("{mean} ± {}", format_number(ci * scale, decimals)),
        None => mean,
    }
}

/// The scale and decimals a compared metric is shown with: times in
/// seconds, as seed 002 publishes them.
fn compared_unit(metric: Metric) -> (f64, usize) {
    match metric {
        Metric::LastSuccessMs | Metric::CompletionP99Ms => (1e-3, 2),
        Metric::PeakRetriesPct => (1.0, 2),
        Metric::PeakRetryShare => (1.0, 4),
        Metric::SuccessRate => (1.0, 3),
        _ => (1.0, 1),
    }
}

/// The published figure of a compared cell as published, or `-`.
pub fn compared_published(cell: &crate::study::compare::ComparedCell) -> String {
    cell.published
        .as_ref()
        .map_or_else(|| "-".to_string(), |f| f.shown.clone())
}

/// The verdict of a compared cell, or `-`.
pub fn compared_verdict(cell: &crate::study::compare::ComparedCell) -> String {
    cell.verdict
        .map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The table of a comparison as rows of cells: a header, then a row per point.
/// Metrics with published figures get a published and a verdict column.
pub fn comparison_cells(
    comparison: &crate::study::compare::Comparison<'_>,
) -> (Vec<String>, Vec<Vec<String>>) {
    let compared = comparison.metrics();
    let with_published: Vec<bool> = compared
        .iter()
        .map(|m| {
            comparison
                .points
                .iter()
                .any(|p| p.cell(*m).published.is_some())
        })
        .collect();
    let mut header = vec!["policy".to_string()];
    for (metric, published) in compared.iter().zip(&with_published) {
        if *metric == Metric::PeakRetriesPct {
            continue; // shown beside the count
        }
        header.push(compared_heading(*metric).to_string());
        if *published {
            header.extend(["published".to_string(), "verdict".to_string()]);
        }
    }
    let rows = comparison
        .points
        .iter()
        .map(|p| {
            let mut row = vec![p.label.clone()];
            for (metric, published) in compared.iter().zip(&with_published) {
                let cell = p.cell(*metric);
                match *metric {
                    Metric::PeakRetriesPct => continue,
                    Metric::PeakRetries => row.push(format!(
                        "{} ({}%)",
                        compared_value(cell),
                        format_number(p.cell(Metric::PeakRetriesPct).summary.mean, 2)
                    )),
                    _ => row.push(compared_value(cell)),
                }
                if *published {
                    row.extend([compared_published(cell), compared_verdict(cell)]);
                }
            }
            row
        })
        .collect();
    (header, rows)
}

/// The notes under a comparison: published remarks and the rankings.
pub fn comparison_notes(comparison: &crate::study::compare::Comparison<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    let remarks: Vec<String> = comparison
        .points
        .iter()
        .filter(|p| p.spec.policy.kind != crate::PolicyKind::DecorrelatedAttempt)
        .filter_map(|p| Some(format!("{}: {}", p.label, p.remark.as_ref()?.text)))
        .collect();
    if let Some(source) = comparison.points.iter().find_map(|p| p.remark.as_ref()) {
        notes.push(format!(
            "Published server-side contention ({}): {}.",
            source.source,
            remarks.join("; ")
        ));
    }
    for ranking in comparison.rankings() {
        let (scale, decimals) = compared_unit(ranking.metric);
        let unit = if scale == 1.0 { "" } else { " s" };
        let (label, s) = &ranking.lowest;
        let mut note = format!(
            "Lowest {}: herdsim {label}, {}{unit}{}",
            compared_heading(ranking.metric).trim_end_matches(" (s)"),
            format_number(s.mean * scale, decimals),
            if ranking.clear {
                " (its 95% CI lies below every other row's)"
            } else {
                " (not clearly: its 95% CI overlaps another's)"
            }
        );
        if let Some((published_label, figure)) = &ranking.published_lowest {
            let same = published_label == label;
            note += &format!(
                "; published: {published_label}, {} ({}).",
                figure.shown,
                if same { "the same" } else { "differs" }
            );
        } else {
            note.push('.');
        }
        notes.push(note);
    }
    notes
}

/// The lines above a comparison: the scenario, and how to read it.
pub fn comparison_title(comparison: &crate::study::compare::Comparison<'_>) -> Vec<String> {
    let s = comparison.scenario;
    let mut lines = vec![match &s.description {
        Some(d) => format!("{}: {d}", s.name),
        None => s.name.clone(),
    }];
    lines.push(format!(
        "{} replicate{} per point from master seed {}; herdsim's figures are mean ± 95% CI.",
        group_thousands(u64::from(s.replicates)),
        if s.replicates == 1 { "" } else { "s" },
        s.master_seed
    ));
    let published = comparison
        .points
        .iter()
        .any(|p| p.cells.iter().any(|c| c.published.is_some()));
    if !published {
        lines.push(
            "No published figure for this workload: a figure applies only to a workload equal \
             in every parameter to the one it was measured with."
                .to_string(),
        );
    }
    if published {
        lines.push(
            "A published figure agrees when herdsim's mean is within sampling error of the range \
             its rounding allows (~3,400 is 3,350 to 3,450): 1.96 standard errors of the \
             difference, counting the published figure's own when it is a mean of known runs."
                .to_string(),
        );
    }
    lines
}
