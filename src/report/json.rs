//! `--json`: the same results as one JSON object.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{RunReport, WorkloadSummary};
use crate::measure::metrics::Metric;
use crate::measure::stats::Summary;

#[derive(Serialize)]
struct RunJson<'a> {
    herdsim: &'static str,
    workload: WorkloadSummary,
    master_seed: u64,
    replicates: usize,
    metrics: MetricsJson<'a>,
}

/// The metrics as an object keyed by metric name, in report order.
struct MetricsJson<'a>(&'a [(Metric, Summary)]);

impl Serialize for MetricsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (metric, summary) in self.0 {
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
