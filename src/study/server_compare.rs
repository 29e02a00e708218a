//! A server-model scenario's points side by side: what `herdsim compare`
//! reports on the server model. Built from a sweep's aggregated rows, like
//! the herd comparison; published figures for the overload studies come
//! with them (their reference tables), so here each point stands alone.

use crate::experiment::scenario::Scenario;
use crate::experiment::sweep::SweepRow;
use crate::measure::server_metrics::{ServerMetric, Storm};
use crate::measure::stats::Summary;
use crate::spec::RunSpec;
use crate::study::compare::{label, labelled_params};

/// The metrics a server comparison shows, in column order: whether requests
/// got through, what it cost the server, and whether it came back.
pub const SERVER_COMPARED: [ServerMetric; 8] = [
    ServerMetric::SuccessRate,
    ServerMetric::SuccessDuringTrigger,
    ServerMetric::SuccessAfterTrigger,
    ServerMetric::Amplification,
    ServerMetric::WastedWork,
    ServerMetric::LatencyP99Ms,
    ServerMetric::QueuePeak,
    ServerMetric::RecoveryMs,
];

/// One point of a server scenario.
#[derive(Debug, Clone)]
pub struct ServerComparedPoint {
    /// The point's index in the grid.
    pub point: usize,
    /// Its workload.
    pub spec: RunSpec,
    /// The policy, and every other parameter that varies.
    pub label: String,
    /// Every server metric's summary over the replicates, in report order.
    pub summaries: Vec<(ServerMetric, Summary)>,
    /// A chain's per-service summaries, in sweep column order
    /// ([`crate::measure::layer_metrics::LayerMetric::IN_SWEEPS`] of service 1,
    /// then of service 2, ...) for the grid's deepest chain; empty without
    /// chains.
    pub services: Vec<Summary>,
}

impl ServerComparedPoint {
    /// The summary of `metric`.
    pub fn summary(&self, metric: ServerMetric) -> &Summary {
        &self
            .summaries
            .iter()
            .find(|(m, _)| *m == metric)
            .expect("every server metric has a summary")
            .1
    }

    /// The storm probability, from the summaries of `stuck` and
    /// `unresolved`.
    pub fn storm(&self) -> Storm {
        Storm::of(&self.summaries)
    }
}

/// A server scenario's points.
#[derive(Debug, Clone)]
pub struct ServerComparison<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// One entry per point, in grid order.
    pub points: Vec<ServerComparedPoint>,
}

impl<'a> ServerComparison<'a> {
    /// The points of aggregated sweep `rows` of `scenario` (a server grid);
    /// other rows are ignored.
    pub fn new(scenario: &'a Scenario, rows: Vec<SweepRow>) -> Self {
        let varying = labelled_params(scenario);
        let points = rows
            .into_iter()
            .filter_map(|row| match row {
                SweepRow::ServerPoint {
                    point,
                    spec,
                    summaries,
                    services,
                    ..
                } => Some(ServerComparedPoint {
                    point,
                    label: label(&spec, &varying),
                    spec,
                    summaries,
                    services,
                }),
                _ => None,
            })
            .collect();
        ServerComparison { scenario, points }
    }
}
