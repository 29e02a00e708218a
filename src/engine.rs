//! The discrete-event loop: N clients, one resource, one backoff policy.
//!
//! `simulate(&RunSpec, seed)` is a pure function: no I/O, no clock, no global
//! state. Each event is one call. The queue pops the earliest `(time, seq)`;
//! `seq` grows at every schedule, so calls at the same instant run first-in
//! first-out and a run depends on nothing but its spec and seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

use crate::draws::Draws;
use crate::metrics::{RunMetrics, nearest_rank};
use crate::policy::{Backoff, PolicyVisitor};
use crate::resource::SlotResource;
use crate::seeding::job_rng;
use crate::spec::RunSpec;
use crate::time::Micros;

/// One pending call: client `client` calls at `time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    time: Micros,
    seq: u64,
    client: u32,
}

/// Earliest `(time, seq)` first: reversed, since `BinaryHeap` pops the largest.
impl Ord for Event {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Event {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Sees every call and every delay of a run, for tests and pictures. The
/// default methods do nothing and compile away.
pub trait Observer {
    /// Client `client` made attempt `attempt` (0 is its first call) at `time`.
    #[inline]
    fn call(&mut self, _time: Micros, _client: u32, _attempt: u32, _served: bool) {}
    /// Client `client` will wait `delay` before retry `retry`.
    #[inline]
    fn delay(&mut self, _client: u32, _retry: u32, _delay: Micros) {}
}

/// An observer that observes nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl Observer for NoObserver {}

/// Runs one replicate of `spec` with the generator of job seed `seed`.
///
/// Panics if `spec` is invalid ([`RunSpec::validate`]).
pub fn simulate(spec: &RunSpec, seed: u64) -> RunMetrics {
    simulate_observed(spec, seed, &mut NoObserver)
}

/// [`simulate`], reporting every call and delay to `observer`.
pub fn simulate_observed<O: Observer>(spec: &RunSpec, seed: u64, observer: &mut O) -> RunMetrics {
    if let Err(e) = spec.validate() {
        panic!("simulate called with an invalid spec: {e}");
    }
    spec.policy.visit(SlotRun {
        spec,
        seed,
        observer,
    })
}

/// The slot model's event loop, made concrete for one policy type.
struct SlotRun<'a, O> {
    spec: &'a RunSpec,
    seed: u64,
    observer: &'a mut O,
}

impl<O: Observer> PolicyVisitor for SlotRun<'_, O> {
    type Output = RunMetrics;

    fn visit<P: Backoff>(self, policy: P) -> RunMetrics {
        let mut draws = job_rng(self.seed);
        slot_loop(self.spec, &policy, &mut draws, self.observer)
    }
}

fn slot_loop<P: Backoff, D: Draws, O: Observer>(
    spec: &RunSpec,
    policy: &P,
    draws: &mut D,
    observer: &mut O,
) -> RunMetrics {
    let clients = spec.clients;
    let n = clients as usize;
    // The herd: every first call at t = 0, in client-id order.
    let mut queue: BinaryHeap<Event> = (0..clients)
        .map(|client| Event {
            time: 0,
            seq: u64::from(client),
            client,
        })
        .collect();
    let mut seq = u64::from(clients);
    let mut retry_of = vec![0u32; n];
    let mut walk_of = vec![policy.start(); n];
    let mut completions: Vec<Micros> = Vec::with_capacity(n);
    let mut resource = SlotResource::new(spec.service_ns());

    let window = spec.window();
    let (mut window_end, mut in_window, mut peak_retries) = (0, 0u64, 0u64);
    let (mut calls, mut retries, mut last_success_us) = (0u64, 0u64, 0);

    while let Some(mut next) = queue.peek_mut() {
        let Event { time, client, .. } = *next;
        let c = client as usize;
        let attempt = retry_of[c];
        calls += 1;
        if attempt > 0 {
            retries += 1;
            if time >= window_end {
                peak_retries = peak_retries.max(in_window);
                in_window = 0;
                window_end = (time / window + 1) * window;
            }
            in_window += 1;
        }
        let served = resource.call(time);
        observer.call(time, client, attempt, served);
        if served {
            // Completion is measured from the client's first call, at t = 0.
            completions.push(time);
            last_success_us = time;
            PeekMut::pop(next);
        } else {
            let retry = attempt + 1;
            retry_of[c] = retry;
            let delay = policy.delay(retry, &mut walk_of[c], draws);
            observer.delay(client, retry, delay);
            // Replacing the top and sifting once is cheaper than pop + push,
            // and pops in exactly the same order: keys are unique.
            *next = Event {
                time: time + delay,
                seq,
                client,
            };
            seq += 1;
        }
    }
    peak_retries = peak_retries.max(in_window);

    let successes = completions.len() as u64;
    let completion_total_us = completions.iter().map(|&c| u128::from(c)).sum();
    let completion_max_us = completions.iter().copied().max().unwrap_or(0);
    RunMetrics {
        clients: u64::from(clients),
        calls,
        retries,
        successes,
        gave_up: u64::from(clients) - successes,
        last_success_us,
        completion_total_us,
        completion_p50_us: nearest_rank(&mut completions, 50.0),
        completion_p99_us: nearest_rank(&mut completions, 99.0),
        completion_max_us,
        peak_retries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyKind;

    fn spec(kind: PolicyKind, clients: u32) -> RunSpec {
        RunSpec::seed_002(kind, clients)
    }

    #[test]
    fn events_pop_earliest_first_and_fifo_within_an_instant() {
        let mut q = BinaryHeap::new();
        for (time, seq) in [(5, 3), (1, 4), (5, 1), (1, 2), (0, 9)] {
            q.push(Event {
                time,
                seq,
                client: 0,
            });
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|e| (e.time, e.seq))).collect();
        assert_eq!(order, [(0, 9), (1, 2), (1, 4), (5, 1), (5, 3)]);
    }

    #[test]
    fn one_client_succeeds_at_once() {
        let m = simulate(&spec(PolicyKind::Full, 1), 1);
        assert_eq!(
            (m.calls, m.retries, m.successes, m.last_success_us),
            (1, 0, 1, 0)
        );
        assert_eq!(m.peak_retries, 0);
    }

    #[test]
    fn two_clients_without_jitter() {
        // t=0: client 0 served, client 1 fails and waits base (100 ms);
        // t=100 ms: served.
        let m = simulate(&spec(PolicyKind::None, 2), 1);
        assert_eq!((m.calls, m.retries, m.last_success_us), (3, 1, 100_000));
        assert_eq!((m.completion_p50_us, m.completion_max_us), (0, 100_000));
        assert_eq!(m.completion_total_us, 100_000);
    }

    #[test]
    fn no_jitter_serves_one_client_per_wave() {
        // Every wave is the whole remaining herd at one instant; the first in
        // line wins, the rest fail together: n(n+1)/2 calls.
        for n in [1u64, 2, 10, 100, 1_000] {
            let m = simulate(&spec(PolicyKind::None, n as u32), 7);
            assert_eq!(m.calls, n * (n + 1) / 2, "{n} clients");
            assert_eq!(m.peak_retries, n - 1);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_another_seed_another() {
        let s = spec(PolicyKind::Decorrelated, 500);
        assert_eq!(simulate(&s, 3), simulate(&s, 3));
        assert_ne!(simulate(&s, 3), simulate(&s, 4));
    }
}
