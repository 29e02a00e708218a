//! Sweeps: a scenario's grid × replicates as jobs on rayon's pool, results
//! delivered in grid order.
//!
//! Job `j` is replicate `j mod R` of point `j div R`, with the seeds
//! [`Seeds::for_job`]`(master, point, replicate)`: the same job gets the same seeds
//! whatever the thread count, shard or resume point, which is what makes
//! sharded, resumed and parallel sweeps byte-identical to a plain one.
//!
//! Workers take jobs in index order from a shared counter, so results finish
//! nearly in order; the few that finish early wait in a small reorder buffer
//! (workers pause when it is full) and the sink sees every result exactly once,
//! in index order. Memory stays bounded for any number of jobs.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use rayon::prelude::*;

use crate::base::fingerprint::Fingerprint;
use crate::base::seeding::Seeds;
use crate::experiment::error::ExperimentError;

use crate::base::time::Micros;
use crate::experiment::replicates::summarize;
use crate::experiment::scenario::Scenario;
use crate::experiment::server_runs::{server_parts, server_values, summarize_server_values};
use crate::measure::layer_metrics::LayerMetric;
use crate::measure::metrics::{Metric, RunMetrics};
use crate::measure::observer::Watch;
use crate::measure::server_metrics::ServerMetric;
use crate::measure::stats::Summary;
use crate::model::ResourceKind;
use crate::model::chain::MAX_DEPTH;
use crate::sim::engine::simulate_with;
use crate::sim::queue::QueueKind;
use crate::sim::server_loop::simulate_server_watched;
use crate::spec::RunSpec;
use crate::spec::server::parse_depth;

/// Results allowed to wait for an earlier one, per worker thread.
const REORDER_SLOTS_PER_THREAD: usize = 64;

/// Runs `job(i)` for every `i` in `jobs` on rayon's current pool and hands each
/// result to `sink` in index order. Stops at the sink's first error and
/// returns it (jobs already running finish; no new ones start).
pub fn for_each_ordered<T, E>(
    jobs: Range<usize>,
    job: impl Fn(usize) -> T + Sync,
    sink: impl FnMut(usize, T) -> Result<(), E> + Send,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    struct Delivery<T, S, E> {
        next: usize,
        waiting: BTreeMap<usize, T>,
        sink: S,
        error: Option<E>,
    }
    let threads = rayon::current_num_threads();
    let capacity = REORDER_SLOTS_PER_THREAD * threads;
    let next_job = AtomicUsize::new(jobs.start);
    let failed = AtomicBool::new(false);
    let delivery = Mutex::new(Delivery {
        next: jobs.start,
        waiting: BTreeMap::new(),
        sink,
        error: None,
    });
    let advanced = Condvar::new();

    (0..threads).into_par_iter().for_each(|_| {
        loop {
            if failed.load(Ordering::Relaxed) {
                return;
            }
            let i = next_job.fetch_add(1, Ordering::Relaxed);
            if i >= jobs.end {
                return;
            }
            // Back-pressure: do not run ahead of the oldest unfinished job by
            // more than the reorder buffer holds.
            {
                let mut d = delivery.lock().unwrap();
                while i >= d.next + capacity && !failed.load(Ordering::Relaxed) {
                    d = advanced.wait(d).unwrap();
                }
            }
            let result = job(i);
            let mut d = delivery.lock().unwrap();
            d.waiting.insert(i, result);
            let mut moved = false;
            while d.error.is_none() {
                let next = d.next;
                let Some(ready) = d.waiting.remove(&next) else {
                    break;
                };
                if let Err(e) = (d.sink)(next, ready) {
                    d.error = Some(e);
                    failed.store(true, Ordering::Relaxed);
                }
                d.next += 1;
                moved = true;
            }
            if moved || d.error.is_some() {
                advanced.notify_all();
            }
        }
    });
    let d = delivery.into_inner().unwrap();
    match d.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The `K`-th of `N` deterministic slices of a sweep (`--shard K/N`, 1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, 1 to `count`.
    pub index: u32,
    /// How many slices.
    pub count: u32,
}

impl Shard {
    /// The whole sweep.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// The points of a `points`-point grid in this shard: contiguous, in grid
    /// order, sizes differing by at most one. Shards split points, not
    /// replicates, so each shard's rows are complete and shards concatenate.
    pub fn points(&self, points: usize) -> Range<usize> {
        let at = |k: u32| (points as u128 * u128::from(k) / u128::from(self.count)) as usize;
        at(self.index - 1)..at(self.index)
    }
}

impl FromStr for Shard {
    type Err = ExperimentError;

    fn from_str(text: &str) -> Result<Self, ExperimentError> {
        let bad = || ExperimentError::Shard {
            text: text.to_string(),
        };
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) =
            (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if index == 0 || index > count || count > 1_000_000 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// One row of a sweep's output.
#[derive(Debug, Clone)]
pub enum SweepRow {
    /// One job (`--per-run`).
    Run {
        /// The point's index in the grid.
        point: usize,
        /// The replicate's index.
        replicate: u32,
        /// The job's seeds.
        seeds: Seeds,
        /// The point's workload.
        spec: RunSpec,
        /// What the run measured.
        metrics: RunMetrics,
    },
    /// One job of the server model (`--per-run`).
    ServerRun {
        /// The point's index in the grid.
        point: usize,
        /// The replicate's index.
        replicate: u32,
        /// The job's seeds.
        seeds: Seeds,
        /// The point's workload.
        spec: RunSpec,
        /// Every server metric's value, in [`ServerMetric::ALL`] order
        /// (`None` where the run has none, such as a recovery time when
        /// stuck), then the per-service ones ([`MetricColumns::Server`]).
        values: Vec<Option<f64>>,
        /// False if the run was stopped at the plan's `max_events` (a cut at
        /// the workload's horizon is its end, not a stop).
        complete: bool,
    },
    /// One point of the server model, summarised over its replicates.
    ServerPoint {
        /// The point's index in the grid.
        point: usize,
        /// The point's workload.
        spec: RunSpec,
        /// Every server metric's summary over the replicates.
        summaries: Vec<(ServerMetric, Summary)>,
        /// The per-service metrics' summaries, in the order of their
        /// columns ([`MetricColumns::Server`]).
        services: Vec<Summary>,
        /// False if a replicate was stopped at the plan's `max_events`.
        complete: bool,
    },
    /// One point, summarised over its replicates (the default).
    Point {
        /// The point's index in the grid.
        point: usize,
        /// The point's workload.
        spec: RunSpec,
        /// Every metric's summary over the replicates.
        summaries: Vec<(Metric, Summary)>,
        /// False if a replicate was stopped at the plan's `max_events`.
        complete: bool,
    },
}

impl SweepRow {
    /// False if a run of the row was stopped at the plan's `max_events`
    /// (its figures then count only what happened before).
    pub fn complete(&self) -> bool {
        match self {
            SweepRow::Run { metrics, .. } => metrics.complete,
            SweepRow::Point { complete, .. }
            | SweepRow::ServerRun { complete, .. }
            | SweepRow::ServerPoint { complete, .. } => *complete,
        }
    }

    /// A per-point row's summaries in column order, whichever model (none
    /// for a per-run row).
    pub fn summaries(&self) -> Vec<&Summary> {
        match self {
            SweepRow::Point { summaries, .. } => summaries.iter().map(|(_, s)| s).collect(),
            SweepRow::ServerPoint {
                summaries,
                services,
                ..
            } => summaries.iter().map(|(_, s)| s).chain(services).collect(),
            SweepRow::Run { .. } | SweepRow::ServerRun { .. } => Vec::new(),
        }
    }

    /// The row's point.
    pub fn point(&self) -> usize {
        match self {
            SweepRow::Run { point, .. }
            | SweepRow::Point { point, .. }
            | SweepRow::ServerRun { point, .. }
            | SweepRow::ServerPoint { point, .. } => *point,
        }
    }
}

/// The metric columns of a sweep file, after its sweep columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricColumns {
    /// The herd models' metrics.
    Herd,
    /// The server model's metrics, then, for a grid with call chains, the
    /// per-service metrics ([`LayerMetric::IN_SWEEPS`]) of services 1 to
    /// `services` (its deepest chain's length; 0 without chains), empty
    /// where a point's chain is shorter.
    Server {
        /// Services with columns.
        services: usize,
    },
}

impl MetricColumns {
    /// Every kind of sweep file, for reading one back.
    pub fn all() -> Vec<MetricColumns> {
        let chains = 2..=MAX_DEPTH as usize;
        [MetricColumns::Herd, MetricColumns::Server { services: 0 }]
            .into_iter()
            .chain(chains.map(|services| MetricColumns::Server { services }))
            .collect()
    }

    /// The metric names, in column order.
    pub fn names(self) -> Vec<String> {
        match self {
            MetricColumns::Herd => Metric::ALL.iter().map(|m| m.name().to_string()).collect(),
            MetricColumns::Server { services } => {
                let server = ServerMetric::ALL.iter().map(|m| m.name().to_string());
                let per_service = (1..=services)
                    .flat_map(|s| LayerMetric::IN_SWEEPS.iter().map(move |m| m.column(s)));
                server.chain(per_service).collect()
            }
        }
    }
}

/// What to run: which points of which scenario, one row per run or per point,
/// and how many rows are already done (a resumed sweep).
#[derive(Debug, Clone)]
pub struct SweepPlan<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The points to run (a shard's, or all).
    pub points: Range<usize>,
    /// One row per run instead of one per point.
    pub per_run: bool,
    /// Rows already written, to skip.
    pub rows_done: usize,
    /// Stop any run at this many calls (checked every
    /// [`crate::measure::observer::PROGRESS_EVERY`]); `u64::MAX` is no limit.
    pub max_events: u64,
}

impl<'a> SweepPlan<'a> {
    /// Every point of `scenario`, nothing done yet.
    pub fn whole(scenario: &'a Scenario, per_run: bool) -> Self {
        SweepPlan {
            scenario,
            points: Shard::WHOLE.points(scenario.grid.len()),
            per_run,
            rows_done: 0,
            max_events: u64::MAX,
        }
    }

    /// True if the plan's points are on the server model (a grid is all of
    /// one kind: the server model's metrics are its own).
    pub fn is_server(&self) -> bool {
        !self.scenario.grid.is_empty()
            && self.scenario.grid.point(0).resource == ResourceKind::Server
    }

    /// The metric columns of the plan's rows: a server grid with call
    /// chains has per-service columns for its deepest chain's services.
    pub fn metric_columns(&self) -> MetricColumns {
        if !self.is_server() {
            return MetricColumns::Herd;
        }
        let deepest = self
            .scenario
            .grid
            .values_anywhere("depth")
            .filter_map(|v| parse_depth(v).ok())
            .max()
            .unwrap_or(1);
        let services = if deepest > 1 { deepest as usize } else { 0 };
        MetricColumns::Server { services }
    }

    /// The rows this plan writes in all, done ones included.
    pub fn total_rows(&self) -> usize {
        let points = self.points.len();
        if self.per_run {
            points * self.scenario.replicates as usize
        } else {
            points
        }
    }

    /// The sweep's fingerprint (16 hex digits), in every row of its file and
    /// its shards' files: the grid, replicates, master seed and row kind.
    /// Shards of one sweep share it; merge and resume refuse rows without it.
    pub fn fingerprint(&self) -> String {
        let scenario = self.scenario;
        let fingerprint = Fingerprint::default()
            .field("herdsim sweep 1")
            .field(if self.per_run { "per-run" } else { "per-point" })
            .field(&scenario.replicates.to_string())
            .field(&scenario.master_seed.to_string());
        scenario.grid.fingerprint(fingerprint).hex()
    }

    /// The jobs still to run.
    pub fn jobs(&self) -> Range<usize> {
        let r = self.scenario.replicates as usize;
        let first_row_job = if self.per_run {
            self.points.start * r + self.rows_done
        } else {
            (self.points.start + self.rows_done) * r
        };
        first_row_job..self.points.end * r
    }
}

/// Runs the plan's remaining jobs, calling `on_job_done` after each and `sink`
/// with each row, in grid order.
pub fn run_sweep<E: Send>(
    plan: &SweepPlan<'_>,
    on_job_done: impl Fn() + Sync,
    mut sink: impl FnMut(SweepRow) -> Result<(), E> + Send,
) -> Result<(), E> {
    let scenario = plan.scenario;
    let replicates = scenario.replicates as usize;
    let master = scenario.master_seed;
    let per_run = plan.per_run;
    let services = match plan.metric_columns() {
        MetricColumns::Server { services } => services,
        MetricColumns::Herd => 0,
    };
    let mut current: Vec<Outcome> = Vec::with_capacity(if per_run { 0 } else { replicates });

    let job = |j: usize| {
        let (point, replicate) = (j / replicates, (j % replicates) as u64);
        let seeds = Seeds::for_job(master, point as u64, replicate);
        let spec = scenario.grid.point(point);
        let outcome = if spec.resource == ResourceKind::Server {
            // Reduced to its metrics' values here: a run's latency histogram
            // and time series stay with the worker (and no row reads a
            // window's latency quantiles).
            let (server, retry) = server_parts(&spec);
            let watch = Watch {
                max_events: plan.max_events,
                on_progress: &|_: Micros, _: u64| {},
                window_latencies: false,
            };
            let metrics =
                simulate_server_watched(&server, &retry, seeds, &watch, QueueKind::default());
            Outcome::Server {
                values: server_values(&metrics, services),
                complete: !metrics.hit_event_limit && metrics.cut.is_none(),
            }
        } else {
            let mut watch = Watch {
                max_events: plan.max_events,
                on_progress: &|_: Micros, _: u64| {},
                window_latencies: false,
            };
            Outcome::Herd(simulate_with(
                &spec,
                seeds,
                &mut watch,
                QueueKind::default(),
            ))
        };
        on_job_done();
        (seeds, outcome)
    };
    for_each_ordered(plan.jobs(), job, |j, (seeds, outcome)| {
        let (point, replicate) = (j / replicates, j % replicates);
        if per_run {
            let spec = scenario.grid.point(point);
            let replicate = replicate as u32;
            return sink(match outcome {
                Outcome::Herd(metrics) => SweepRow::Run {
                    point,
                    replicate,
                    seeds,
                    spec,
                    metrics,
                },
                Outcome::Server { values, complete } => SweepRow::ServerRun {
                    point,
                    replicate,
                    seeds,
                    spec,
                    values,
                    complete,
                },
            });
        }
        current.push(outcome);
        if current.len() < replicates {
            return Ok(());
        }
        sink(summarize_point(
            point,
            scenario.grid.point(point),
            current.drain(..),
        ))
    })
}

/// What one job measured.
enum Outcome {
    /// A herd model's run.
    Herd(RunMetrics),
    /// A server-model run's metric values, as [`server_values`] gives them.
    Server {
        values: Vec<Option<f64>>,
        complete: bool,
    },
}

/// The row of `point` from its replicates' outcomes (a grid is all of one
/// model, so the first outcome says which).
fn summarize_point(
    point: usize,
    spec: RunSpec,
    outcomes: impl Iterator<Item = Outcome>,
) -> SweepRow {
    let mut herd = Vec::new();
    let mut server = Vec::new();
    let mut complete = true;
    for outcome in outcomes {
        match outcome {
            Outcome::Herd(m) => {
                complete &= m.complete;
                herd.push(m);
            }
            Outcome::Server {
                values,
                complete: done,
            } => {
                complete &= done;
                server.push(values);
            }
        }
    }
    if server.is_empty() {
        SweepRow::Point {
            point,
            spec,
            summaries: summarize(&herd),
            complete,
        }
    } else {
        let (summaries, services) = summarize_server_values(&server);
        SweepRow::ServerPoint {
            point,
            spec,
            summaries,
            services,
            complete,
        }
    }
}

/// [`run_sweep`] with its rows kept in memory, in grid order.
pub fn sweep_rows(plan: &SweepPlan<'_>, on_job_done: impl Fn() + Sync) -> Vec<SweepRow> {
    let mut rows = Vec::with_capacity(plan.total_rows());
    let kept = run_sweep(plan, on_job_done, |row| {
        rows.push(row);
        Ok::<_, std::convert::Infallible>(())
    });
    match kept {
        Ok(()) => rows,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_at_any_thread_count() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut seen = Vec::new();
            pool.install(|| {
                for_each_ordered(
                    5..2_000,
                    |i| {
                        // Uneven work, so jobs finish out of order.
                        let spin = (i * 7_919) % 97;
                        (0..spin * 100).fold(i, |a, b| a ^ b)
                            ^ (0..spin * 100).fold(0, |a, b| a ^ b)
                    },
                    |i, v| {
                        assert_eq!(i, v);
                        seen.push(i);
                        Ok::<_, ()>(())
                    },
                )
            })
            .unwrap();
            assert_eq!(seen, (5..2_000).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn the_first_sink_error_stops_the_run() {
        let mut delivered = 0;
        let result = for_each_ordered(
            0..100_000,
            |i| i,
            |i, _| {
                delivered += 1;
                if i == 10 { Err(i) } else { Ok(()) }
            },
        );
        assert_eq!(result, Err(10));
        assert_eq!(delivered, 11);
    }

    #[test]
    fn shards_cover_every_point_once_in_order() {
        for points in [0, 1, 2, 7, 100, 1_001] {
            for count in [1, 2, 3, 8] {
                let ranges: Vec<_> = (1..=count)
                    .map(|index| Shard { index, count }.points(points))
                    .collect();
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges.last().unwrap().end, points);
                for pair in ranges.windows(2) {
                    assert_eq!(pair[0].end, pair[1].start);
                }
                let sizes: Vec<_> = ranges.iter().map(|r| r.len()).collect();
                assert!(
                    sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                    "{sizes:?}"
                );
            }
        }
    }

    #[test]
    fn shard_syntax() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
