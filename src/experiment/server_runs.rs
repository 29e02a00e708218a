//! Replicates of a server-model workload, fanned across cores, and their
//! summary: every server metric over the replicates, and the storm
//! probability (the share of runs that ended stuck) with its Wilson interval.

use rayon::prelude::*;

use crate::base::seeding::Seeds;
use crate::measure::layer_metrics::LayerMetric;
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{ServerMetric, ServerMetrics};
use crate::measure::stats::Summary;
use crate::sim::queue::QueueKind;
use crate::sim::server_loop::{ServerRetry, simulate_server_watched};
use crate::spec::RunSpec;

/// The server model's run description and retry rules of `spec` (whose
/// resource is `server`).
pub fn server_parts(spec: &RunSpec) -> (crate::model::server::ServerSpec, ServerRetry) {
    let window = spec.window();
    let retry = ServerRetry {
        policy: spec.policy,
        max_attempts: spec.max_attempts,
        controls: spec.controls(),
        fleet: spec.fleet,
    };
    (spec.server.server_spec(window, spec.patience_us()), retry)
}

/// Runs replicates `0..replicates` of `spec` (as point `point` under master
/// seed `master`), each watched by `watch` (its progress and event limit) on
/// the event queue `queue`, calling `on_done` after each. Results in
/// replicate order whatever the thread count or queue.
pub fn run_server_replicates(
    spec: &RunSpec,
    master: u64,
    point: u64,
    replicates: u32,
    watch: &Watch<'_>,
    queue: QueueKind,
    on_done: impl Fn() + Sync,
) -> Vec<ServerMetrics> {
    let (server, retry) = server_parts(spec);
    (0..u64::from(replicates))
        .into_par_iter()
        .map(|replicate| {
            let seeds = Seeds::for_job(master, point, replicate);
            let metrics = simulate_server_watched(&server, &retry, seeds, watch, queue);
            on_done();
            metrics
        })
        .collect()
}

/// Every server metric summarised over `runs`.
pub fn summarize_server(runs: &[ServerMetrics]) -> Vec<(ServerMetric, Summary)> {
    let values: Vec<Vec<Option<f64>>> = runs.iter().map(|r| server_values(r, 0)).collect();
    summarize_server_values(&values).0
}

/// Every per-service metric of a chain summarised over `runs`: one list a
/// service, top first; empty for the server alone.
pub fn summarize_layers(runs: &[ServerMetrics]) -> Vec<Vec<(LayerMetric, Summary)>> {
    let depth = runs.first().map_or(0, |m| m.layers.len());
    (0..depth)
        .map(|i| {
            LayerMetric::ALL
                .iter()
                .map(|&metric| {
                    let column: Vec<Option<f64>> =
                        runs.iter().map(|m| metric.value(m, i)).collect();
                    (metric, Summary::of_present(&column))
                })
                .collect()
        })
        .collect()
}

/// A run's value of every server metric, in [`ServerMetric::ALL`] order,
/// then of each [`LayerMetric::IN_SWEEPS`] at services 1 to `services`
/// (`None` where it has none, such as a service below its chain's end):
/// all a sweep keeps of a run.
pub fn server_values(run: &ServerMetrics, services: usize) -> Vec<Option<f64>> {
    let server = ServerMetric::ALL.iter().map(|m| m.value(run));
    let per_service =
        (0..services).flat_map(|i| LayerMetric::IN_SWEEPS.iter().map(move |m| m.value(run, i)));
    server.chain(per_service).collect()
}

/// Every value summarised over runs given as their [`server_values`]: the
/// server metrics', then the per-service ones', in column order.
pub fn summarize_server_values(
    runs: &[Vec<Option<f64>>],
) -> (Vec<(ServerMetric, Summary)>, Vec<Summary>) {
    let width = runs.first().map_or(ServerMetric::ALL.len(), Vec::len);
    let mut summaries =
        (0..width).map(|i| Summary::of_present(&runs.iter().map(|v| v[i]).collect::<Vec<_>>()));
    let server = ServerMetric::ALL
        .iter()
        .map(|&metric| (metric, summaries.next().expect("a value a metric")))
        .collect();
    (server, summaries.collect())
}
