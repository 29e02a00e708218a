//! The discrete-event loop: N clients, one resource, one backoff policy.
//!
//! `simulate(&RunSpec, seed)` is a pure function: no I/O, no clock, no global
//! state. Each event is one call. The queue pops the earliest `(time, seq)`;
//! `seq` grows at every schedule, so calls at the same instant run first-in
//! first-out and a run depends on nothing but its spec and seed.

use crate::base::seeding::{Seeds, job_rng};
use crate::base::time::Micros;
use crate::control::Outcome;
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::{NoObserver, Observer};
use crate::measure::recorder::Recorder;
use crate::model::{CallResource, OccNetwork, OutageResource, ResourceKind, SlotResource};
use crate::policy::WalkBits;
use crate::sim::occ_loop::run_occ;
use crate::sim::queue::{EventQueue, Heaps, QueueFamily, QueueKind, RadixHeaps};
use crate::sim::retries::{Admitted, Client, Retries};
use crate::sim::wave::wave_loop;
use crate::spec::RunSpec;

/// Runs one replicate of `spec` with the generators of `seeds`.
///
/// Panics if `spec` is invalid ([`RunSpec::validate`]) or on the server
/// model, whose requests and metrics are its own
/// ([`crate::sim::server_loop::simulate_server`]).
pub fn simulate(spec: &RunSpec, seeds: Seeds) -> RunMetrics {
    simulate_observed(spec, seeds, &mut NoObserver)
}

/// [`simulate`], reporting every call and delay to `observer`.
pub fn simulate_observed<O: Observer>(
    spec: &RunSpec,
    seeds: Seeds,
    observer: &mut O,
) -> RunMetrics {
    simulate_with(spec, seeds, observer, QueueKind::default())
}

/// [`simulate_observed`] on the event queue `queue`. Every queue gives the
/// same result; they differ in speed.
pub fn simulate_with<O: Observer>(
    spec: &RunSpec,
    seeds: Seeds,
    observer: &mut O,
    queue: QueueKind,
) -> RunMetrics {
    simulate_run(spec, seeds, observer, queue, true)
}

/// [`simulate_with`] with every call its own event, even where clients
/// without jitter could move in waves ([`crate::sim::wave`]): the reference the
/// waves are tested against, and as fast as the waves are not.
pub fn simulate_each_call<O: Observer>(
    spec: &RunSpec,
    seeds: Seeds,
    observer: &mut O,
    queue: QueueKind,
) -> RunMetrics {
    simulate_run(spec, seeds, observer, queue, false)
}

fn simulate_run<O: Observer>(
    spec: &RunSpec,
    seeds: Seeds,
    observer: &mut O,
    queue: QueueKind,
    waves: bool,
) -> RunMetrics {
    if let Err(e) = spec.validate() {
        panic!("simulate called with an invalid spec: {e}");
    }
    Run {
        spec,
        seeds,
        observer,
        queue,
        waves,
    }
    .run_on_queues()
}

/// One run, before its memory width and queues are chosen.
struct Run<'a, O> {
    spec: &'a RunSpec,
    seeds: Seeds,
    observer: &'a mut O,
    queue: QueueKind,
    /// Move clients in waves where that is exact.
    waves: bool,
}

impl<O: Observer> Run<'_, O> {
    /// The run with a client's policy memory `W` as wide as the policy's
    /// ([`crate::policy::PolicySpec::walk_words`]) and on the queues of the
    /// run's family: the loops are compiled once per width and family, not
    /// per policy.
    fn run_on_queues(self) -> RunMetrics {
        // `for_resource` has resolved `Auto`.
        let radix = !matches!(self.queue.for_resource(self.spec.resource), QueueKind::Heap);
        match (self.spec.policy.walk_words(), radix) {
            (0, true) => self.run::<(), RadixHeaps>(),
            (0, false) => self.run::<(), Heaps>(),
            (1, true) => self.run::<u64, RadixHeaps>(),
            (1, false) => self.run::<u64, Heaps>(),
            (_, true) => self.run::<(u64, u64), RadixHeaps>(),
            (_, false) => self.run::<(u64, u64), Heaps>(),
        }
    }

    /// The run on the queues of family `F`, in the resource model's loop.
    fn run<W: WalkBits, F: QueueFamily>(self) -> RunMetrics {
        let spec = self.spec;
        let mut environment = job_rng(self.seeds.environment);
        let first_calls = spec.arrivals.first_calls(spec.clients, &mut environment);
        let retries = Retries::new(spec, self.seeds.policy, first_calls);
        let observer = self.observer;
        match spec.resource {
            ResourceKind::Slot => {
                let mut slot = SlotResource::new(spec.service_ns()).with_outage(spec.down);
                if retries.wants_hints() {
                    slot = slot.with_hints(spec.clients);
                }
                if self.waves && retries.waves_are_exact() {
                    wave_loop::<W, _, F::Queue<_>>(spec, retries, slot, observer)
                } else {
                    call_loop::<W, _, _, F::Queue<_>>(spec, retries, slot, observer)
                }
            }
            ResourceKind::Outage => {
                let outage = OutageResource::new(spec.clients, &mut environment);
                call_loop::<W, _, _, F::Queue<_>>(spec, retries, outage, observer)
            }
            ResourceKind::Occ => {
                let network = OccNetwork::new(environment);
                run_occ::<W, _, F::Queue<_>>(spec, retries, network, observer)
            }
            ResourceKind::Server => {
                panic!("the server model runs in sim::server_loop::simulate_server")
            }
        }
    }
}

/// The event loop of a resource that answers every call at once: each event
/// is one call.
fn call_loop<W: WalkBits, R: CallResource, O: Observer, Q: EventQueue<Client<W>>>(
    spec: &RunSpec,
    mut retries: Retries,
    mut resource: R,
    observer: &mut O,
) -> RunMetrics {
    let mut queue = Q::with_first_calls(retries.first_calls(), retries.new_client());
    let mut recorder = Recorder::new(spec.clients, spec.window());

    while let Some((time, mut client)) = queue.first() {
        let time = Micros::from_ticks(time);
        let attempt = client.attempt;
        match retries.about_to_call(&client, time, &mut recorder) {
            Admitted::Yes => {}
            Admitted::No => {
                queue.reschedule_first(None);
                continue;
            }
            Admitted::Retry => {
                let at =
                    retries.after_failure(&mut client, time, Micros::ZERO, observer, &mut recorder);
                queue.reschedule_first(at.map(|t| (t.ticks(), client)));
                continue;
            }
        }
        if !recorder.call(time, attempt, observer) {
            break;
        }
        let served = resource.call(time, client.id, attempt);
        observer.call(time, client.id, attempt, served);
        if served {
            recorder.success(time, retries.started(client.id));
            retries.attempt_ended(&client, time, time, Outcome::Success);
            queue.reschedule_first(None);
            continue;
        }
        retries.attempt_ended(&client, time, time, Outcome::Failure);
        let hint = if retries.wants_hints() {
            resource.retry_hint(time)
        } else {
            Micros::ZERO
        };
        let at = retries.after_failure(&mut client, time, hint, observer, &mut recorder);
        queue.reschedule_first(at.map(|t| (t.ticks(), client)));
    }
    recorder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyKind;

    fn spec(kind: PolicyKind, clients: u32) -> RunSpec {
        RunSpec::seed_002(kind, clients)
    }

    #[test]
    fn one_client_succeeds_at_once() {
        let m = simulate(&spec(PolicyKind::Full, 1), Seeds::for_job(1, 0, 0));
        assert_eq!(
            (m.calls, m.retries, m.successes, m.last_success_us),
            (1, 0, 1, Micros::ZERO)
        );
        assert_eq!(m.peak_retries, 0);
    }

    #[test]
    fn two_clients_without_jitter() {
        // t=0: client 0 served, client 1 fails and waits base (100 ms);
        // t=100 ms: served.
        let m = simulate(&spec(PolicyKind::None, 2), Seeds::for_job(1, 0, 0));
        assert_eq!(
            (m.calls, m.retries, m.last_success_us),
            (3, 1, Micros::from_ms(100))
        );
        assert_eq!(
            (m.completion_p50_us, m.completion_max_us),
            (Micros::ZERO, Micros::from_ms(100))
        );
        assert_eq!(m.completion_total_us, 100_000);
    }

    #[test]
    fn no_jitter_serves_one_client_per_wave() {
        // Every wave is the whole remaining herd at one instant; the first in
        // line wins, the rest fail together: n(n+1)/2 calls.
        for n in [1u64, 2, 10, 100, 1_000] {
            let m = simulate(&spec(PolicyKind::None, n as u32), Seeds::for_job(7, 0, 0));
            assert_eq!(m.calls, n * (n + 1) / 2, "{n} clients");
            assert_eq!(m.peak_retries, n - 1);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_another_seed_another() {
        let s = spec(PolicyKind::Decorrelated, 500);
        let seeds = |r| Seeds::for_job(3, 0, r);
        assert_eq!(simulate(&s, seeds(0)), simulate(&s, seeds(0)));
        assert_ne!(simulate(&s, seeds(0)), simulate(&s, seeds(1)));
    }
}
