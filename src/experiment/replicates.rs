//! Replicates of one workload, fanned across cores.

use rayon::prelude::*;

use crate::base::seeding::Seeds;

use crate::measure::observer::Watch;

use crate::base::time::Micros;
use crate::experiment::timelines::run_timeline_observed;
use crate::measure::metrics::{Metric, RunMetrics};
use crate::measure::stats::Summary;
use crate::measure::timeline::{Timeline, nice_width};
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
        window_latencies: false,
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

/// [`run_replicates_watched`] for replicates `0..replicates`, replicate 0
/// also binned in time from bins the width of the peak window (at most
/// `2·max_bins` of them): one simulation of it serves both. Returns its
/// timeline and every replicate's metrics, in replicate order.
pub fn replicates_with_timeline(
    spec: &RunSpec,
    master: u64,
    replicates: u32,
    watch: Watch<'_>,
    on_done: impl Fn() + Sync,
    queue: QueueKind,
    max_bins: usize,
) -> (Timeline, Vec<RunMetrics>) {
    let (timeline, rest) = rayon::join(
        || {
            let mut watch = watch;
            let seeds = Seeds::for_job(master, 0, 0);
            let first_bin = nice_width(spec.window());
            let timeline =
                run_timeline_observed(spec, seeds, first_bin, max_bins, &mut watch, queue);
            on_done();
            timeline
        },
        || run_replicates_watched(spec, master, 0, 1..replicates, watch, &on_done, queue),
    );
    let runs = std::iter::once(timeline.metrics.clone())
        .chain(rest)
        .collect();
    (timeline, runs)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;

    #[test]
    fn replicate_zero_is_binned_and_joins_the_others_in_order() {
        let spec = RunSpec::seed_002(PolicyKind::Decorrelated, 200);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let watch = Watch {
            max_events: u64::MAX,
            on_progress: &|_: Micros, _: u64| {},
            window_latencies: false,
        };
        let on_done = || {
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let (timeline, runs) =
            replicates_with_timeline(&spec, 9, 5, watch, on_done, QueueKind::default(), 100);
        assert_eq!(done.into_inner(), 5);
        assert_eq!(runs, run_replicates(&spec, 9, 0, 5, || {}));
        assert_eq!(timeline.metrics, runs[0]);
        assert_eq!(timeline.retries.iter().sum::<u64>(), runs[0].retries);
    }
}
