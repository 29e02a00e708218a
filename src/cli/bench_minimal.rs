//! A minimal Rust loop of the server benchmark's M/M/c model: the yardstick
//! that says how much of herdsim's time per event is the model's generality
//! (controls, triggers, chains, time series, latency quantiles) and how much
//! is the language and the event queue.
//!
//! It handles the same four events a request as herdsim's loop and the
//! Python reference, in the same order (time, then first scheduled first),
//! on herdsim's own event queue, and takes the same draws from the same
//! generator: an arrival's gap when the arrival is handled, a service time
//! when a worker takes an attempt. So with the same seed it makes herdsim's
//! run exactly: the same events and the same total sojourn (tested). What it
//! leaves out is the model: no request slab, no metrics but the sojourn.

use std::collections::VecDeque;

use crate::base::draws::Draws;
use crate::base::lookahead::Lookahead;
use crate::base::seeding::{Seeds, job_rng};
use crate::model::server::{NS_PER_MS, Nanos, round_ns};
use crate::sim::queue::{ClientItem, EventQueue, RadixQueue};

/// What a pending event does: the events herdsim and the Python reference
/// handle for every request.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// The next arrival: its request goes to the server at once.
    Arrival,
    /// The attempt reaches the server.
    AtServer,
    /// A worker finishes an attempt.
    ServiceDone,
    /// The reply reaches the client.
    Reply,
}

impl ClientItem for Step {
    /// Never made for a herd of clients.
    fn for_client(self, _id: u32) -> Self {
        self
    }
}

/// A run's totals: what the test compares with herdsim's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinimalRun {
    pub requests: u64,
    pub events: u64,
    /// Sum over served attempts of completion minus arrival, ns.
    pub sojourn_ns: u128,
}

/// Runs the open-loop M/M/`workers` queue for `duration` ns: Poisson
/// arrivals of mean gap `mean_gap` ns, exponential service of mean
/// `mean_service` ns, unbounded FIFO queue, drawn from `seeds.environment`.
pub fn simulate_minimal(
    duration: Nanos,
    mean_gap: f64,
    mean_service: f64,
    workers: u32,
    seeds: Seeds,
) -> MinimalRun {
    let mut draws = Lookahead::new(job_rng(seeds.environment));
    let mut exp = move |mean: f64| round_ns(mean * draws.exp1());
    let mut events = RadixQueue::<Step>::with_events(Vec::new());
    // Arrival times of the attempts waiting for a worker.
    let mut waiting: VecDeque<Nanos> = VecDeque::new();
    let mut busy = 0;
    let mut run = MinimalRun {
        requests: 0,
        events: 0,
        sojourn_ns: 0,
    };
    let first = exp(mean_gap);
    if first < duration {
        events.push(first.ticks(), Step::Arrival);
    }
    while let Some((now, step)) = events.first() {
        let now = Nanos::from_ticks(now);
        events.reschedule_first(None);
        run.events += 1;
        match step {
            Step::Arrival => {
                run.requests += 1;
                events.push(now.ticks(), Step::AtServer);
                let next = now.saturating_add(exp(mean_gap));
                if next < duration {
                    events.push(next.ticks(), Step::Arrival);
                }
            }
            Step::AtServer if busy < workers => {
                busy += 1;
                let done = now + exp(mean_service);
                run.sojourn_ns += u128::from((done - now).ticks());
                events.push(done.ticks(), Step::ServiceDone);
            }
            Step::AtServer => waiting.push_back(now),
            Step::ServiceDone => {
                busy -= 1;
                events.push(now.ticks(), Step::Reply);
                if let Some(arrived) = waiting.pop_front() {
                    busy += 1;
                    let done = now + exp(mean_service);
                    run.sojourn_ns += u128::from((done - arrived).ticks());
                    events.push(done.ticks(), Step::ServiceDone);
                }
            }
            Step::Reply => {}
        }
    }
    run
}

/// [`simulate_minimal`] on the benchmark's workload of `requests` expected
/// requests (the same as [`super::bench_server::mmc_spec`]).
pub fn minimal_mmc(requests: u64, seeds: Seeds) -> MinimalRun {
    let spec = super::bench_server::mmc_spec(requests);
    simulate_minimal(
        spec.duration,
        NS_PER_MS.ticks() as f64 / super::bench_server::RATE_PER_MS,
        spec.service.mean(),
        super::bench_server::WORKERS,
        seeds,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::bench_server::{mmc_spec, no_retry};
    use crate::sim::server_loop::simulate_server;

    /// The yardstick is herdsim's run, not a model like it: the same seeds
    /// give the same requests, events and total sojourn to the ns, at sizes
    /// where the queue empties often and where it does not.
    #[test]
    fn the_minimal_loop_makes_herdsims_run_exactly() {
        for (requests, replicate) in [(2_000, 0), (2_000, 1), (30_000, 2)] {
            let seeds = Seeds::for_job(1, 0, replicate);
            let ours = minimal_mmc(requests, seeds);
            let herdsim = simulate_server(&mmc_spec(requests), &no_retry(), seeds, u64::MAX);
            assert!(ours.requests > requests / 2, "{ours:?}");
            assert_eq!(
                ours,
                MinimalRun {
                    requests: herdsim.requests,
                    events: herdsim.events,
                    sojourn_ns: herdsim.sojourn_ns,
                }
            );
        }
    }
}
