//! Replicates of one workload, fanned across cores.

use rayon::prelude::*;

use crate::engine::{Seeds, simulate};
use crate::metrics::{METRICS, Metric, RunMetrics};
use crate::spec::RunSpec;
use crate::stats::Summary;

/// Runs replicates `0..replicates` of `spec` (as point `point` under master
/// seed `master`) on rayon's pool, calling `on_done` after each. Results come
/// back in replicate order whatever the thread count, each from its own
/// generators seeded by [`Seeds::for_job`].
pub fn run_replicates(
    spec: &RunSpec,
    master: u64,
    point: u64,
    replicates: u32,
    on_done: impl Fn() + Sync,
) -> Vec<RunMetrics> {
    (0..u64::from(replicates))
        .into_par_iter()
        .map(|replicate| {
            let metrics = simulate(spec, Seeds::for_job(master, point, replicate));
            on_done();
            metrics
        })
        .collect()
}

/// Every metric's summary over `runs` (at least one), in [`METRICS`] order.
pub fn summarize(runs: &[RunMetrics]) -> Vec<(Metric, Summary)> {
    let values: Vec<_> = runs.iter().map(RunMetrics::values).collect();
    METRICS
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let column: Vec<f64> = values.iter().map(|v| v[i]).collect();
            (*metric, Summary::of(&column))
        })
        .collect()
}
