//! `--json`: the same results as one JSON object.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{RunReport, ServerRunReport, WorkloadSummary};
use crate::measure::metrics::Metric;
use crate::measure::metrics::ReportedMetric;
use crate::measure::server_metrics::ServerMetric;
use crate::measure::stats::Summary;

#[derive(Serialize)]
struct RunJson<'a> {
    herdsim: &'static str,
    workload: WorkloadSummary,
    master_seed: u64,
    replicates: usize,
    metrics: MetricsJson<'a, Metric>,
}

#[derive(Serialize)]
struct StormJson {
    stuck: u64,
    runs: u64,
    probability: f64,
    wilson_low: f64,
    wilson_high: f64,
}

#[derive(Serialize)]
struct ServerRunJson<'a> {
    herdsim: &'static str,
    workload: WorkloadSummary,
    master_seed: u64,
    replicates: usize,
    window_ms: f64,
    metrics: MetricsJson<'a, ServerMetric>,
    /// A chain's services, top first (absent for the server alone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    services: Vec<MetricsJson<'a, crate::measure::layer_metrics::LayerMetric>>,
    storm_probability: StormJson,
}

/// `herdsim run --resource server --json`: workload, seed, every server
/// metric's summary and the storm probability with its Wilson interval.
pub fn server_run_json(report: &ServerRunReport<'_>) -> String {
    let storm = report.storm();
    let value = ServerRunJson {
        herdsim: env!("CARGO_PKG_VERSION"),
        workload: WorkloadSummary::of(report.spec),
        master_seed: report.master_seed,
        replicates: report.summaries.first().map_or(0, |(_, s)| s.n),
        window_ms: report.window_us as f64 / 1e3,
        metrics: MetricsJson(&report.summaries),
        services: report.layers.iter().map(|l| MetricsJson(l)).collect(),
        storm_probability: StormJson {
            stuck: storm.stuck,
            runs: storm.runs,
            probability: storm.probability(),
            wilson_low: storm.low,
            wilson_high: storm.high,
        },
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
/// ci95, min, max; sd and ci95 are null for one replicate), pretty-printed.
pub fn run_json(report: &RunReport<'_>) -> String {
    let value = RunJson {
        herdsim: env!("CARGO_PKG_VERSION"),
        workload: WorkloadSummary::of(report.spec),
        master_seed: report.master_seed,
        replicates: report.replicates(),
        metrics: MetricsJson(&report.summaries),
    };
    let mut text = serde_json::to_string_pretty(&value).expect("plain data serialises");
    text.push('\n');
    text
}
