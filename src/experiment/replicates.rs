//! Replicates of one workload, fanned across cores.

use rayon::prelude::*;

use crate::base::seeding::Seeds;

use crate::measure::observer::Watch;

use crate::base::time::Micros;
use crate::measure::metrics::{Metric, RunMetrics};
use crate::measure::stats::Summary;
use crate::sim::engine::simulate_with;
use crate::sim::queue::QueueKind;
use crate::spec::RunSpec;

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
    let watch = Watch {
        max_events: u64::MAX,
        on_progress: &|_: Micros, _: u64| {},
    };
    run_replicates_watched(
        spec,
        master,
        point,
        0..replicates,
        watch,
        on_done,
        QueueKind::default(),
    )
}

/// [`run_replicates`] for the replicates in `replicates`, each run watched by
/// a copy of `watch` (stopped at its `max_events` calls, the stopped run
/// marked incomplete, and reporting its progress), on the event queue
/// `queue`.
pub fn run_replicates_watched(
    spec: &RunSpec,
    master: u64,
    point: u64,
    replicates: std::ops::Range<u32>,
    watch: Watch<'_>,
    on_done: impl Fn() + Sync,
    queue: QueueKind,
) -> Vec<RunMetrics> {
    (u64::from(replicates.start)..u64::from(replicates.end))
        .into_par_iter()
        .map(|replicate| {
            let mut watch = watch;
            let seeds = Seeds::for_job(master, point, replicate);
            let metrics = simulate_with(spec, seeds, &mut watch, queue);
            on_done();
            metrics
        })
        .collect()
}

/// Every metric's summary over `runs` (at least one), in [`Metric::ALL`] order.
pub fn summarize(runs: &[RunMetrics]) -> Vec<(Metric, Summary)> {
    let values: Vec<_> = runs.iter().map(RunMetrics::values).collect();
    Metric::ALL
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let column: Vec<f64> = values.iter().map(|v| v[i]).collect();
            (*metric, Summary::of(&column))
        })
        .collect()
}
