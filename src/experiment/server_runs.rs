//! Replicates of a server-model workload, fanned across cores, and their
//! summary: every server metric over the replicates, and the storm
//! probability (the share of runs that ended stuck) with its Wilson interval.

use rayon::prelude::*;

use crate::base::seeding::Seeds;
use crate::base::time::ns_of_us;
use crate::measure::layer_metrics::LayerMetric;
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{Cut, ServerMetric, ServerMetrics};
use crate::measure::stats::Summary;
use crate::model::server::Nanos;
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
        deadline: spec.deadline_us.map(ns_of_us),
        retry_on: spec.retry_on,
        hedge: spec.hedge_delay_us.map(|us| crate::model::hedging::Hedge {
            delay: ns_of_us(us),
            copies: spec.max_attempts.unwrap_or(1),
        }),
        hedge_on_timeout: spec.hedge_on_timeout
            == crate::model::timeout_hedging::HedgeOnTimeout::On,
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
    let parts = server_parts(spec);
    run_range(
        &parts,
        (master, point),
        0..u64::from(replicates),
        watch,
        queue,
        &on_done,
    )
}

/// Runs replicates `range` of the point (master seed, point) across
/// cores, in replicate order.
fn run_range(
    (server, retry): &(crate::model::server::ServerSpec, ServerRetry),
    (master, point): (u64, u64),
    range: std::ops::Range<u64>,
    watch: &Watch<'_>,
    queue: QueueKind,
    on_done: &(impl Fn() + Sync),
) -> Vec<ServerMetrics> {
    range
        .into_par_iter()
        .map(|replicate| {
            let seeds = Seeds::for_job(master, point, replicate);
            let metrics = simulate_server_watched(server, retry, seeds, watch, queue);
            on_done();
            metrics
        })
        .collect()
}

/// Replicates run at a time: each chunk's results are reduced, in
/// replicate order, before the next starts, so memory holds one chunk's
/// runs (each with its 58 KiB latency histogram and its time series), not
/// every replicate's.
const CHUNK: u64 = 4_096;

/// Which replicates [`run_server_kept`] keeps whole.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    /// Replicates `0..whole` are kept as they ended (a run's per-run
    /// figures need its histogram).
    pub whole: u32,
    /// Of those, replicates `0..windows` keep their time series too.
    pub windows: u32,
}

/// A replicate that a bound of memory or of the clock cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CutRun {
    /// Its index.
    pub replicate: u32,
    /// Which bound.
    pub cut: Cut,
    /// The time of its last event, ns.
    pub end_ns: Nanos,
    /// Requests made, and ended (succeeded or gave up).
    pub requests: u64,
    pub ended: u64,
    /// The most requests in flight at once.
    pub peak_in_flight: u64,
}

/// What `run` keeps of a server workload's replicates: each metric's values
/// in replicate order (so every summary is the one the runs themselves
/// give, to the bit), the first replicate each limit stopped, and the runs
/// asked for whole. Memory follows the metrics, 8 bytes a metric a
/// replicate, not the runs' state: a million replicates held 58 GB of
/// latency histograms.
#[derive(Debug, Clone, Default)]
pub struct ServerReplicates {
    /// Replicates run.
    pub replicates: u32,
    /// Each server metric's present values, replicate order.
    server: Vec<Vec<f64>>,
    /// Each service's (top first) each per-service metric's present values.
    layers: Vec<Vec<Vec<f64>>>,
    /// The first replicate the event limit stopped: (replicate, requests
    /// ended, requests).
    pub event_limit: Option<(u32, u64, u64)>,
    /// The first replicate a bound cut.
    pub cut: Option<CutRun>,
    /// Replicates that did not run to their end (horizon, limit or bound).
    pub incomplete: u32,
    /// The replicates kept whole, in order from 0.
    pub kept: Vec<ServerMetrics>,
}

impl ServerReplicates {
    /// Adds replicate `replicate`'s figures (in order).
    fn add(&mut self, replicate: u32, mut run: ServerMetrics, keep: Keep) {
        if self.server.is_empty() {
            self.server = vec![Vec::new(); ServerMetric::ALL.len()];
            self.layers = vec![vec![Vec::new(); LayerMetric::ALL.len()]; run.layers.len()];
        }
        for (column, metric) in self.server.iter_mut().zip(ServerMetric::ALL) {
            column.extend(metric.value(&run));
        }
        for (i, service) in self.layers.iter_mut().enumerate() {
            for (column, metric) in service.iter_mut().zip(LayerMetric::ALL) {
                column.extend(metric.value(&run, i));
            }
        }
        let ended = run.successes + run.gave_up;
        if run.hit_event_limit && self.event_limit.is_none() {
            self.event_limit = Some((replicate, ended, run.requests));
        }
        if let (Some(cut), None) = (run.cut, self.cut) {
            self.cut = Some(CutRun {
                replicate,
                cut,
                end_ns: run.end_ns,
                requests: run.requests,
                ended,
                peak_in_flight: run.peak_in_flight,
            });
        }
        self.incomplete += u32::from(!run.complete);
        self.replicates += 1;
        if replicate < keep.whole {
            if replicate >= keep.windows {
                run.windows = Vec::new();
            }
            self.kept.push(run);
        }
    }

    /// Every server metric summarised over the replicates, as
    /// [`summarize_server`] of their runs.
    pub fn summaries(&self) -> Vec<(ServerMetric, Summary)> {
        ServerMetric::ALL
            .iter()
            .zip(&self.server)
            .map(|(&metric, present)| (metric, summary_of_present(present)))
            .collect()
    }

    /// `metric`'s present values, in replicate order (a run's recovery
    /// time is present only where it recovered).
    pub fn values(&self, metric: ServerMetric) -> &[f64] {
        ServerMetric::ALL
            .iter()
            .position(|&m| m == metric)
            .and_then(|i| self.server.get(i))
            .map_or(&[], Vec::as_slice)
    }

    /// A chain's per-service summaries, as [`summarize_layers`] of the
    /// runs.
    pub fn layer_summaries(&self) -> Vec<Vec<(LayerMetric, Summary)>> {
        self.layers
            .iter()
            .map(|service| {
                LayerMetric::ALL
                    .iter()
                    .zip(service)
                    .map(|(&metric, present)| (metric, summary_of_present(present)))
                    .collect()
            })
            .collect()
    }
}

/// [`Summary::of_present`] of a column whose absent values are left out.
fn summary_of_present(present: &[f64]) -> Summary {
    if present.is_empty() {
        Summary::of_present(&[])
    } else {
        Summary::of(present)
    }
}

/// [`run_server_replicates`] reduced as it goes: replicates run a chunk at
/// a time across cores, each chunk's runs reduced in replicate order to
/// their metrics' values, and the runs `keep` names kept whole.
#[allow(clippy::too_many_arguments)]
pub fn run_server_kept(
    spec: &RunSpec,
    master: u64,
    point: u64,
    replicates: u32,
    watch: &Watch<'_>,
    queue: QueueKind,
    on_done: impl Fn() + Sync,
    keep: Keep,
) -> ServerReplicates {
    let never = |_: u32, _: &ServerMetrics| Ok::<(), std::convert::Infallible>(());
    match run_server_streamed(
        spec, master, point, replicates, watch, queue, on_done, keep, never,
    ) {
        Ok(kept) => kept,
        Err(never) => match never {},
    }
}

/// [`run_server_kept`] with every run handed to `sink` whole, in replicate
/// order, before it is reduced: what is written of each run (its time
/// series) need not be held. The first error of `sink` stops the runs.
#[allow(clippy::too_many_arguments)]
pub fn run_server_streamed<E>(
    spec: &RunSpec,
    master: u64,
    point: u64,
    replicates: u32,
    watch: &Watch<'_>,
    queue: QueueKind,
    on_done: impl Fn() + Sync,
    keep: Keep,
    mut sink: impl FnMut(u32, &ServerMetrics) -> Result<(), E>,
) -> Result<ServerReplicates, E> {
    let parts = server_parts(spec);
    let mut kept = ServerReplicates::default();
    let total = u64::from(replicates);
    let mut from = 0;
    while from < total {
        let to = (from + CHUNK).min(total);
        let runs = run_range(&parts, (master, point), from..to, watch, queue, &on_done);
        for (replicate, run) in (from..to).zip(runs) {
            sink(replicate as u32, &run)?;
            kept.add(replicate as u32, run, keep);
        }
        from = to;
    }
    Ok(kept)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;
    use crate::measure::observer::Watch;
    use crate::model::ResourceKind;
    use crate::policy::PolicyKind;

    #[test]
    fn reduced_replicates_summarise_to_the_bit_as_the_runs_do() {
        let mut spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
        spec.resource = ResourceKind::Server;
        spec.max_attempts = Some(3);
        spec.server.timeout_us = Some(Micros::from_ms(50));
        spec.server.duration_us = Some(Micros::from_s(3));
        spec.server.triggers = "outage@1s..1.3s".parse().unwrap();
        spec.server.chain.depth = 2;
        let watch = Watch {
            max_events: u64::MAX,
            on_progress: &|_, _| {},
            window_latencies: false,
        };
        let runs = run_server_replicates(&spec, 7, 0, 5, &watch, QueueKind::Auto, || {});
        let keep = Keep {
            whole: 2,
            windows: 1,
        };
        let kept = run_server_kept(&spec, 7, 0, 5, &watch, QueueKind::Auto, || {}, keep);
        let bits = |s: &[(ServerMetric, Summary)]| format!("{s:?}");
        assert_eq!(bits(&kept.summaries()), bits(&summarize_server(&runs)));
        assert_eq!(
            format!("{:?}", kept.layer_summaries()),
            format!("{:?}", summarize_layers(&runs))
        );
        assert_eq!(kept.replicates, 5);
        assert_eq!(kept.kept.len(), 2);
        assert_eq!(kept.kept[0], runs[0]);
        assert!(kept.kept[1].windows.is_empty() && !runs[1].windows.is_empty());
        assert_eq!((kept.event_limit, kept.cut), (None, None));
    }
}
