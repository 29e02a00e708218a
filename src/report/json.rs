//! `--json`: the same results as one JSON object.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{RunReport, ServerRunReport, WorkloadSummary};
use crate::base::time::Nanos;
use crate::measure::metrics::Metric;
use crate::measure::metrics::ReportedMetric;
use crate::measure::server_metrics::ServerMetric;
use crate::measure::server_metrics::wilson_interval;
use crate::measure::stats::Summary;

#[derive(Serialize)]
struct RunJson<'a> {
    herdsim: &'static str,
    workload: WorkloadSummary,
    master_seed: u64,
    replicates: usize,
    metrics: MetricsJson<'a, Metric>,
    /// With `--per-run`: each replicate's value of every metric.
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<Vec<PerRunJson>>,
}

#[derive(Serialize)]
struct StormJson {
    /// Runs that ended stuck.
    stuck: u64,
    /// Runs decided: stuck or recovered.
    runs: u64,
    /// Runs the load ended too soon to judge (not in `runs`).
    unresolved: u64,
    /// `stuck / runs`; null when no run was decided.
    probability: Option<f64>,
    wilson_low: f64,
    wilson_high: f64,
}

/// One trigger in numbers.
#[derive(Serialize)]
struct TriggerJson {
    /// As `--trigger` reads it.
    spec: String,
    from_ms: f64,
    to_ms: f64,
    length_ms: f64,
}

/// The server model's workload: what the run is, before its numbers.
#[derive(Serialize)]
struct ServerWorkloadJson {
    resource: &'static str,
    /// The load and server in words.
    description: String,
    /// Requests per second the load offers (a closed loop's most).
    offered_rate_per_s: f64,
    /// ρ = λ·E[S]/c of each service, top first (null: unbounded workers).
    offered_load: Vec<Option<f64>>,
    /// Services in the chain, the server included.
    depth: u32,
    /// The load's duration, ms, and whether it is the default.
    duration_ms: f64,
    duration_is_default: bool,
    /// The verdict's patience window, ms, and whether it is the default.
    patience_ms: f64,
    patience_is_default: bool,
    triggers: Vec<TriggerJson>,
    /// Every parameter the run reads, by CSV column, in reported units.
    parameters: serde_json::Map<String, serde_json::Value>,
}

impl ServerWorkloadJson {
    fn of(spec: &crate::spec::RunSpec) -> Self {
        use crate::spec::params::PARAMS;
        let keys: Vec<&'static str> = PARAMS.iter().map(|p| p.key).collect();
        let unused: Vec<&'static str> = spec.unused(&keys).into_iter().map(|(k, _)| k).collect();
        let mut parameters = serde_json::Map::new();
        for p in PARAMS
            .iter()
            .filter(|p| p.applies_to(spec.resource) && !unused.contains(&p.key))
        {
            for (column, field) in p.columns.iter().zip((p.fields)(spec)) {
                let value = if field.is_empty() {
                    serde_json::Value::Null
                } else {
                    field
                        .parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                        .map_or(serde_json::Value::String(field), serde_json::Value::Number)
                };
                parameters.insert(column.to_string(), value);
            }
        }
        let ms = |ns: Nanos| ns.ticks() as f64 / 1e6;
        let server = &spec.server;
        ServerWorkloadJson {
            resource: "server",
            description: server.describe(spec.patience_us()),
            offered_rate_per_s: server.offered_rate_per_s(),
            offered_load: server.offered_loads(),
            depth: server.chain.depth,
            duration_ms: spec.duration_us().ticks() as f64 / 1e3,
            duration_is_default: server.duration_us.is_none(),
            patience_ms: spec.patience_us().ticks() as f64 / 1e3,
            patience_is_default: server.patience_us.is_none(),
            triggers: server
                .triggers
                .0
                .iter()
                .map(|t| TriggerJson {
                    spec: t.to_string(),
                    from_ms: ms(t.from),
                    to_ms: ms(t.to),
                    length_ms: ms(t.to - t.from),
                })
                .collect(),
            parameters,
        }
    }
}

#[derive(Serialize)]
struct ServerRunJson<'a> {
    herdsim: &'static str,
    workload: ServerWorkloadJson,
    master_seed: u64,
    replicates: usize,
    window_ms: f64,
    metrics: MetricsJson<'a, ServerMetric>,
    /// A chain's services, top first (absent for the server alone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    services: Vec<MetricsJson<'a, crate::measure::layer_metrics::LayerMetric>>,
    storm_probability: StormJson,
    /// With `--high`, `--low` or `--splitting`: the backlog section.
    #[serde(skip_serializing_if = "Option::is_none")]
    backlog: Option<serde_json::Value>,
    /// With `--per-run`: each replicate's value of every metric.
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<Vec<PerRunJson>>,
}

/// One replicate's values, keyed by metric name (null where the run has
/// none, such as the recovery time of a stuck run).
#[derive(Serialize)]
struct PerRunJson {
    replicate: usize,
    /// recovered, draining, stuck or unresolved; absent without a trigger.
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'static str>,
    metrics: serde_json::Map<String, serde_json::Value>,
}

/// Metric names and a run's values as a JSON object.
fn values_object<'a>(
    names: impl Iterator<Item = &'a str>,
    values: impl Iterator<Item = Option<f64>>,
) -> serde_json::Map<String, serde_json::Value> {
    names
        .zip(values)
        .map(|(name, v)| {
            let value = v
                .and_then(serde_json::Number::from_f64)
                .map_or(serde_json::Value::Null, serde_json::Value::Number);
            (name.to_string(), value)
        })
        .collect()
}

/// `herdsim run --resource server --json`: workload, seed, every server
/// metric's summary and the storm probability with its Wilson interval;
/// with `per_run`, each replicate's values too.
pub fn server_run_json(
    report: &ServerRunReport<'_>,
    per_run: Option<&[crate::measure::server_metrics::ServerMetrics]>,
) -> String {
    let storm = report.storm();
    let value = ServerRunJson {
        herdsim: env!("CARGO_PKG_VERSION"),
        workload: ServerWorkloadJson::of(report.spec),
        master_seed: report.master_seed,
        replicates: report.summaries.first().map_or(0, |(_, s)| s.n),
        window_ms: report.window_us.ticks() as f64 / 1e3,
        metrics: MetricsJson(&report.summaries),
        services: report.layers.iter().map(|l| MetricsJson(l)).collect(),
        storm_probability: StormJson {
            stuck: storm.stuck,
            runs: storm.runs,
            unresolved: storm.unresolved,
            probability: (storm.runs > 0).then(|| storm.probability()),
            wilson_low: storm.low,
            wilson_high: storm.high,
        },
        backlog: report.backlog.as_ref().map(super::backlog::backlog_json),
        runs: per_run.map(|runs| {
            runs.iter()
                .enumerate()
                .map(|(replicate, run)| PerRunJson {
                    replicate,
                    verdict: run.verdict.map(|v| v.name()),
                    metrics: values_object(
                        ServerMetric::ALL.iter().map(|m| m.name()),
                        ServerMetric::ALL.iter().map(|m| m.value(run)),
                    ),
                })
                .collect()
        }),
    };
    let mut text = serde_json::to_string_pretty(&value).expect("plain data serialises");
    text.push('\n');
    text
}

/// The metrics as an object keyed by metric name, in report order.
struct MetricsJson<'a, M>(&'a [(M, Summary)]);

impl<M: ReportedMetric> Serialize for MetricsJson<'_, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for &(metric, ref summary) in self.0 {
            map.serialize_entry(metric.name(), summary)?;
        }
        map.end()
    }
}

/// `herdsim run --json`: workload, seed and every metric's summary (mean, sd,
/// ci95, min, max; sd and ci95 are null for one replicate), pretty-printed;
/// with `per_run`, each replicate's values too.
pub fn run_json(
    report: &RunReport<'_>,
    per_run: Option<&[crate::measure::metrics::RunMetrics]>,
) -> String {
    let value = RunJson {
        herdsim: env!("CARGO_PKG_VERSION"),
        workload: WorkloadSummary::of(report.spec),
        master_seed: report.master_seed,
        replicates: report.replicates(),
        metrics: MetricsJson(&report.summaries),
        runs: per_run.map(|runs| {
            runs.iter()
                .enumerate()
                .map(|(replicate, run)| PerRunJson {
                    replicate,
                    verdict: None,
                    metrics: values_object(
                        Metric::ALL.iter().map(|m| m.name()),
                        run.values().into_iter().map(Some),
                    ),
                })
                .collect()
        }),
    };
    let mut text = serde_json::to_string_pretty(&value).expect("plain data serialises");
    text.push('\n');
    text
}

/// Named numbers as a JSON object, in their order (null where a number is
/// missing or not finite).
struct Named<'a, T>(&'a [(&'static str, T)]);

impl<T: Serialize> Serialize for Named<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// One table of the assessment: as printed, and its figures as numbers.
#[derive(Serialize)]
struct AssessTableJson<'a> {
    caption: &'a str,
    columns: &'a [&'static str],
    rows: &'a [Vec<String>],
    numbers: Named<'a, Vec<Option<f64>>>,
}

/// A map row's storm curve, a point per cell.
#[derive(Serialize)]
struct StormPointJson {
    x: f64,
    stuck: u64,
    decided: u64,
    probability: Option<f64>,
    wilson_low: Option<f64>,
    wilson_high: Option<f64>,
}

#[derive(Serialize)]
struct StormCurveJson<'a> {
    figure: &'static str,
    label: &'a str,
    /// What `x` measures.
    x: &'static str,
    points: Vec<StormPointJson>,
}

#[derive(Serialize)]
struct AssessJson<'a> {
    herdsim: &'static str,
    workload: ServerWorkloadJson,
    /// The workload in words, as the text's first lines.
    description: &'a [String],
    master_seed: u64,
    seeds: u32,
    rounds: u32,
    method: &'a str,
    /// The tables by name: margin, headroom and (with splitting) rare.
    tables: Named<'a, AssessTableJson<'a>>,
    /// The failure and recovery lines, as printed.
    findings: &'a [String],
    /// Their figures as numbers.
    figures: Named<'a, Option<f64>>,
    curves: Vec<StormCurveJson<'a>>,
    verdict: &'a str,
    /// The command behind each `[n]`, in order.
    commands: &'a [String],
}

/// `herdsim assess --json`: the answer the text gives, as one JSON
/// object: the workload, every table as printed and as numbers, the
/// failure figures, each map row's storm curve, the verdict and the
/// commands.
pub fn assessment_json(a: &crate::experiment::assess::Assessment, commands: &[String]) -> String {
    use super::assessment::{Part, answer, storm_curves};
    let answer = answer(a, commands);
    let curves = storm_curves(a);
    let mut tables = Vec::new();
    let mut findings: &[String] = &[];
    for part in &answer.parts {
        match part {
            Part::Table {
                name,
                caption,
                header,
                rows,
                numbers,
            } => tables.push((
                *name,
                AssessTableJson {
                    caption,
                    columns: header,
                    rows,
                    numbers: Named(numbers),
                },
            )),
            Part::Lines(lines) => findings = lines,
        }
    }
    let s = &a.settings;
    let value = AssessJson {
        herdsim: env!("CARGO_PKG_VERSION"),
        workload: ServerWorkloadJson::of(&s.base),
        description: &answer.workload,
        master_seed: s.master_seed,
        seeds: s.seeds,
        rounds: s.rounds,
        method: &answer.method,
        tables: Named(&tables),
        findings,
        figures: Named(&answer.figures),
        curves: curves
            .iter()
            .map(|c| StormCurveJson {
                figure: c.figure,
                label: &c.label,
                x: c.axis,
                points: c
                    .cells
                    .iter()
                    .map(|&(x, stuck, decided)| {
                        let band = (decided > 0).then(|| wilson_interval(stuck, decided));
                        StormPointJson {
                            x,
                            stuck,
                            decided,
                            probability: (decided > 0).then(|| stuck as f64 / decided as f64),
                            wilson_low: band.map(|b| b.0),
                            wilson_high: band.map(|b| b.1),
                        }
                    })
                    .collect(),
            })
            .collect(),
        verdict: &answer.verdict,
        commands: &answer.commands,
    };
    let mut text = serde_json::to_string_pretty(&value).expect("plain data serialises");
    text.push('\n');
    text
}
