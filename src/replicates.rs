//! Replicates of one workload, fanned across cores.

use rayon::prelude::*;

use crate::engine::{Seeds, Watch, simulate_observed};
use crate::metrics::{METRICS, Metric, RunMetrics};
use crate::spec::RunSpec;
use crate::stats::Summary;
use crate::time::Micros;

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
    let watch = |_: Micros, _: u64| {};
    run_replicates_watched(
        spec,
        master,
        point,
        0..replicates,
        u64::MAX,
        &watch,
        on_done,
    )
}

/// [`run_replicates`] for the replicates in `replicates`, each run stopped at `max_events` calls (checked every
/// [`PROGRESS_EVERY`](crate::engine::PROGRESS_EVERY) calls, the stopped run
/// marked incomplete) and reporting its progress to `on_progress`.
pub fn run_replicates_watched(
    spec: &RunSpec,
    master: u64,
    point: u64,
    replicates: std::ops::Range<u32>,
    max_events: u64,
    on_progress: &(dyn Fn(Micros, u64) + Sync),
    on_done: impl Fn() + Sync,
) -> Vec<RunMetrics> {
    (u64::from(replicates.start)..u64::from(replicates.end))
        .into_par_iter()
        .map(|replicate| {
            let mut watch = Watch {
                max_events,
                on_progress,
            };
            let seeds = Seeds::for_job(master, point, replicate);
            let metrics = simulate_observed(spec, seeds, &mut watch);
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
