//! The discrete-event loop: N clients, one resource, one backoff policy.
//!
//! `simulate(&RunSpec, seed)` is a pure function: no I/O, no clock, no global
//! state. Each event is one call. The queue pops the earliest `(time, seq)`;
//! `seq` grows at every schedule, so calls at the same instant run first-in
//! first-out and a run depends on nothing but its spec and seed.

use std::ops::Range;

use rand_pcg::Pcg64Mcg;

use crate::arrivals::FirstCalls;
use crate::budget::{Budget, RetryAfter};
use crate::metrics::{RunMetrics, nearest_rank};
use crate::policy::{Backoff, PolicyVisitor};
use crate::queue::{ClientItem, EventQueue, Heaps, QueueFamily, QueueKind, RadixHeaps};
use crate::resource::{
    CallResource, OccNetwork, OutageResource, ResourceKind, SlotResource, run_occ,
};
use crate::seeding::{environment_seed, job_rng, job_seed};
use crate::spec::{RunSpec, Seeding};
use crate::time::Micros;
use crate::wave::{Wave, wave_loop};

/// The seeds of one run: one for the policy's draws, one for the
/// environment's (arrival times, outage lengths and rolls, network delays).
///
/// The environment's seed depends on the replicate but not on the workload
/// point, so every policy in a sweep meets the same environment in the same
/// replicate: differences between policies are the policies' own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seeds {
    /// Seeds the policy's generator.
    pub policy: u64,
    /// Seeds the environment's generator.
    pub environment: u64,
}

impl Seeds {
    /// The seeds of replicate `replicate` of point `point` under `master`.
    pub fn for_job(master: u64, point: u64, replicate: u64) -> Seeds {
        Seeds {
            policy: job_seed(master, point, replicate),
            environment: environment_seed(master, replicate),
        }
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
    /// A wave (see [`crate::wave`]): each of `clients`, in order, made
    /// attempt `attempt` at `time`, and only the first may have been served.
    /// The default reports each call.
    #[inline]
    fn wave_calls(&mut self, time: Micros, clients: Range<u32>, attempt: u32, first_served: bool) {
        for client in clients.clone() {
            self.call(
                time,
                client,
                attempt,
                first_served && client == clients.start,
            );
        }
    }
    /// Each of `clients` will wait `delay` before retry `retry`. The default
    /// reports each delay.
    #[inline]
    fn wave_delays(&mut self, clients: Range<u32>, retry: u32, delay: Micros) {
        for client in clients {
            self.delay(client, retry, delay);
        }
    }
    /// Every [`PROGRESS_EVERY`] calls: simulated time and calls so far. Return
    /// false to stop the run there (its metrics then say it is incomplete).
    #[inline]
    fn progress(&mut self, _time: Micros, _calls: u64) -> bool {
        true
    }
}

/// How often, in calls, a run reports its progress to its observer.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// An observer for long runs: reports progress and stops a run at a number
/// of calls (checked every [`PROGRESS_EVERY`] calls).
#[derive(Clone, Copy)]
pub struct Watch<'a> {
    /// Stop at the first check with at least this many calls.
    pub max_events: u64,
    /// Called at every check with the simulated time and the calls so far.
    pub on_progress: &'a (dyn Fn(Micros, u64) + Sync),
}

impl Observer for Watch<'_> {
    fn progress(&mut self, time: Micros, calls: u64) -> bool {
        (self.on_progress)(time, calls);
        calls < self.max_events
    }
}

/// An observer that observes nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl Observer for NoObserver {}

/// When a client stops trying: after `max_attempts` attempts, or when its next
/// attempt would start more than `deadline` after its first call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StopRules {
    max_attempts: u32,
    deadline: Micros,
}

impl StopRules {
    pub(crate) fn of(spec: &RunSpec) -> Self {
        StopRules {
            max_attempts: spec.max_attempts.unwrap_or(u32::MAX),
            deadline: spec.deadline_us.unwrap_or(Micros::MAX),
        }
    }

    /// May a client that has made `attempts` attempts make another?
    #[inline]
    pub(crate) fn another_attempt(&self, attempts: u32) -> bool {
        attempts < self.max_attempts
    }

    /// May an attempt start at `start`, for a client that first called at
    /// `first`? (An attempt exactly at the deadline is made.)
    #[inline]
    pub(crate) fn in_time(&self, start: Micros, first: Micros) -> bool {
        start - first <= self.deadline
    }

    /// True if a deadline applies.
    #[inline]
    pub(crate) fn has_deadline(&self) -> bool {
        self.deadline != Micros::MAX
    }
}

/// A client as its pending event carries it: who it is, which attempt is next
/// and its policy's memory. Travelling in the event queue rather than in
/// arrays indexed by client, it costs no random memory access per event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Client<W> {
    /// The client's index.
    pub(crate) id: u32,
    /// The attempt it makes next (0 is its first call).
    pub(crate) attempt: u32,
    /// Its policy's memory.
    pub(crate) walk: W,
}

impl<W: Copy> ClientItem for Client<W> {
    #[inline]
    fn for_client(self, id: u32) -> Self {
        Client { id, ..self }
    }
}

/// What happens after a failed attempt: the next attempt's start, or giving
/// up. Shared by every model's event loop, so the stop rules mean the same
/// everywhere.
pub(crate) struct Retries<'a, P: Backoff> {
    policy: &'a P,
    draws: PolicyDraws,
    stop: StopRules,
    first_calls: FirstCalls,
    budget: Option<Budget>,
    retry_after: RetryAfter,
}

/// Where the policy's draws come from.
enum PolicyDraws {
    /// One generator for the run, drawn in event order: every client's draws
    /// are independent of every other's.
    Independent(Pcg64Mcg),
    /// One generator per client, all seeded alike (`--seeding shared`): the
    /// fleet bug of seed 002's failure table, where clients that failed
    /// together draw the same delays and stay together.
    Shared(Vec<Pcg64Mcg>),
}

impl<'a, P: Backoff> Retries<'a, P> {
    pub(crate) fn new(spec: &RunSpec, policy: &'a P, seed: u64, first_calls: FirstCalls) -> Self {
        let n = spec.clients as usize;
        let draws = match spec.seeding {
            Seeding::Independent => PolicyDraws::Independent(job_rng(seed)),
            Seeding::Shared => PolicyDraws::Shared(vec![job_rng(seed); n]),
        };
        Retries {
            policy,
            draws,
            stop: StopRules::of(spec),
            first_calls,
            budget: spec
                .budget
                .map(|b| Budget::new(b, spec.clients, spec.fleet.unwrap_or(spec.clients))),
            retry_after: spec.retry_after,
        }
    }

    /// When `client` made its first call.
    #[inline]
    pub(crate) fn started(&self, client: u32) -> Micros {
        self.first_calls.of(client)
    }

    /// Every client's first call.
    pub(crate) fn first_calls(&self) -> &FirstCalls {
        &self.first_calls
    }

    /// A client before its first call (client 0; see [`ClientItem`]).
    pub(crate) fn new_client(&self) -> Client<P::Walk> {
        Client {
            id: 0,
            attempt: 0,
            walk: self.policy.start(),
        }
    }

    /// True if the clients read the resource's retry hints.
    pub(crate) fn wants_hints(&self) -> bool {
        self.retry_after != RetryAfter::Ignore
    }

    /// `client` makes its first call (a request, for ratio budgets).
    #[inline]
    pub(crate) fn first_call(&mut self, client: u32) {
        if let Some(budget) = &mut self.budget {
            budget.request(client);
        }
    }

    /// `client`'s current attempt succeeded.
    #[inline]
    pub(crate) fn succeeded(&mut self, client: &Client<P::Walk>) {
        if let Some(budget) = &mut self.budget {
            budget.success(client.id, client.attempt > 0);
        }
    }

    /// The policy's delay before retry `retry` of client `id`, drawn from the
    /// run's generator (or, with shared seeding, the client's own).
    #[inline]
    fn policy_delay(&mut self, retry: u32, walk: &mut P::Walk, id: u32) -> Micros {
        match &mut self.draws {
            PolicyDraws::Independent(draws) => self.policy.delay(retry, walk, draws),
            PolicyDraws::Shared(draws) => self.policy.delay(retry, walk, &mut draws[id as usize]),
        }
    }

    /// After `client`'s current attempt failed, at `ready` (when the client
    /// learns of it, with the resource's retry `hint`): the time its next
    /// attempt starts, `ready` plus the policy's delay (or the hint, as
    /// `--retry-after` says), or `None` if a stop rule or the budget ends it
    /// (counted as given up).
    #[inline]
    pub(crate) fn after_failure<O: Observer>(
        &mut self,
        client: &mut Client<P::Walk>,
        ready: Micros,
        hint: Micros,
        observer: &mut O,
        recorder: &mut Recorder,
    ) -> Option<Micros> {
        let retry = client.attempt + 1;
        if !self.stop.another_attempt(retry) {
            recorder.give_up();
            return None;
        }
        if let Some(budget) = &mut self.budget
            && !budget.allow_retry(client.id)
        {
            recorder.give_up();
            return None;
        }
        client.attempt = retry;
        let delay = self.policy_delay(retry, &mut client.walk, client.id);
        let delay = self.retry_after.wait(delay, hint);
        observer.delay(client.id, retry, delay);
        let start = ready + delay;
        if self.stop.has_deadline() && !self.stop.in_time(start, self.first_calls.of(client.id)) {
            recorder.give_up();
            return None;
        }
        Some(start)
    }
}

/// Waves ([`crate::wave`]).
impl<P: Backoff> Retries<'_, P> {
    /// True if this run's clients can move in waves: a policy without jitter
    /// and nothing that tells clients in the same state apart (a budget, the
    /// slot's per-client retry hints).
    pub(crate) fn waves_are_exact(&self) -> bool {
        !P::JITTERED && self.budget.is_none() && self.retry_after == RetryAfter::Ignore
    }

    /// [`Retries::after_failure`] for the clients `failed` of a wave at once
    /// (they share the wave's retry number, memory and first call, so the
    /// stop rules and the policy treat them alike): their next attempt's
    /// start, or `None` if a stop rule ends them all.
    pub(crate) fn after_wave_failure<O: Observer>(
        &mut self,
        wave: &mut Wave<P::Walk>,
        failed: Range<u32>,
        ready: Micros,
        observer: &mut O,
        recorder: &mut Recorder,
    ) -> Option<Micros> {
        debug_assert!(self.waves_are_exact());
        let count = failed.len() as u32;
        let retry = wave.attempt + 1;
        if !self.stop.another_attempt(retry) {
            recorder.give_up_many(count);
            return None;
        }
        wave.attempt = retry;
        let delay = self.policy_delay(retry, &mut wave.walk, failed.start);
        observer.wave_delays(failed.clone(), retry, delay);
        let start = ready + delay;
        if self.stop.has_deadline() && !self.stop.in_time(start, self.first_calls.of(failed.start))
        {
            recorder.give_up_many(count);
            return None;
        }
        Some(start)
    }
}

/// Counts what a run measures as it happens.
pub(crate) struct Recorder {
    clients: u32,
    window: Micros,
    window_end: Micros,
    in_window: u64,
    peak_retries: u64,
    calls: u64,
    retries: u64,
    gave_up: u64,
    last_success_us: Micros,
    completions: Vec<Micros>,
    stopped: bool,
}

impl Recorder {
    pub(crate) fn new(spec: &RunSpec) -> Self {
        Recorder {
            clients: spec.clients,
            window: spec.window(),
            window_end: 0,
            in_window: 0,
            peak_retries: 0,
            calls: 0,
            retries: 0,
            gave_up: 0,
            last_success_us: 0,
            completions: Vec::with_capacity(spec.clients as usize),
            stopped: false,
        }
    }

    /// A call (attempt `attempt`) at `time`; calls arrive in time order.
    /// False if the observer stops the run here.
    #[inline]
    pub(crate) fn call<O: Observer>(
        &mut self,
        time: Micros,
        attempt: u32,
        observer: &mut O,
    ) -> bool {
        self.calls += 1;
        if self.calls.is_multiple_of(PROGRESS_EVERY) && !observer.progress(time, self.calls) {
            self.stopped = true;
            return false;
        }
        if attempt > 0 {
            self.retries += 1;
            if time >= self.window_end {
                self.peak_retries = self.peak_retries.max(self.in_window);
                self.in_window = 0;
                self.window_end = (time / self.window + 1) * self.window;
            }
            self.in_window += 1;
        }
        true
    }

    /// `count` calls (attempt `attempt`) at `time`, as `count` calls to
    /// [`Recorder::call`] would record them. Returns how many were made: all
    /// of them, or those before the call at which the observer stopped the
    /// run.
    pub(crate) fn calls<O: Observer>(
        &mut self,
        time: Micros,
        attempt: u32,
        count: u32,
        observer: &mut O,
    ) -> u32 {
        let mut made = 0;
        loop {
            let left = u64::from(count - made);
            // The next progress check falls on the `until`-th call from here.
            let until = PROGRESS_EVERY - self.calls % PROGRESS_EVERY;
            if left < until {
                self.count_calls(time, attempt, left);
                return count;
            }
            self.count_calls(time, attempt, until - 1);
            made += (until - 1) as u32;
            if !self.call(time, attempt, observer) {
                return made;
            }
            made += 1;
        }
    }

    /// Counts `n` calls at `time` that need no progress check.
    #[inline]
    fn count_calls(&mut self, time: Micros, attempt: u32, n: u64) {
        self.calls += n;
        if attempt > 0 && n > 0 {
            self.retries += n;
            if time >= self.window_end {
                self.peak_retries = self.peak_retries.max(self.in_window);
                self.in_window = 0;
                self.window_end = (time / self.window + 1) * self.window;
            }
            self.in_window += n;
        }
    }

    /// `count` clients that stopped without success.
    #[inline]
    pub(crate) fn give_up_many(&mut self, count: u32) {
        self.gave_up += u64::from(count);
    }

    /// A client done at `done` that first called at `first`.
    #[inline]
    pub(crate) fn success(&mut self, done: Micros, first: Micros) {
        self.completions.push(done - first);
        self.last_success_us = self.last_success_us.max(done);
    }

    /// A client that stopped without success.
    #[inline]
    pub(crate) fn give_up(&mut self) {
        self.gave_up += 1;
    }

    pub(crate) fn finish(mut self) -> RunMetrics {
        let peak_retries = self.peak_retries.max(self.in_window);
        let successes = self.completions.len() as u64;
        let completion_total_us = self.completions.iter().map(|&c| u128::from(c)).sum();
        let completion_max_us = self.completions.iter().copied().max().unwrap_or(0);
        RunMetrics {
            clients: u64::from(self.clients),
            calls: self.calls,
            retries: self.retries,
            successes,
            gave_up: self.gave_up,
            last_success_us: self.last_success_us,
            completion_total_us,
            completion_p50_us: nearest_rank(&mut self.completions, 50.0),
            completion_p99_us: nearest_rank(&mut self.completions, 99.0),
            completion_max_us,
            peak_retries,
            complete: !self.stopped,
        }
    }
}

/// Runs one replicate of `spec` with the generators of `seeds`.
///
/// Panics if `spec` is invalid ([`RunSpec::validate`]).
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
/// without jitter could move in waves ([`crate::wave`]): the reference the
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
    spec.policy.visit(Run {
        spec,
        seeds,
        observer,
        queue,
        waves,
    })
}

/// One run, made concrete for one policy type.
struct Run<'a, O> {
    spec: &'a RunSpec,
    seeds: Seeds,
    observer: &'a mut O,
    queue: QueueKind,
    /// Move clients in waves where that is exact.
    waves: bool,
}

impl<O: Observer> PolicyVisitor for Run<'_, O> {
    type Output = RunMetrics;

    fn visit<P: Backoff>(self, policy: P) -> RunMetrics {
        // `for_resource` has resolved `Auto`.
        match self.queue.for_resource(self.spec.resource) {
            QueueKind::Heap => self.run::<P, Heaps>(&policy),
            QueueKind::Radix | QueueKind::Auto => self.run::<P, RadixHeaps>(&policy),
        }
    }
}

impl<O: Observer> Run<'_, O> {
    /// The run on the queues of family `F`, in the resource model's loop.
    fn run<P: Backoff, F: QueueFamily>(self, policy: &P) -> RunMetrics {
        let spec = self.spec;
        let mut environment = job_rng(self.seeds.environment);
        let first_calls = spec.arrivals.first_calls(spec.clients, &mut environment);
        let retries = Retries::new(spec, policy, self.seeds.policy, first_calls);
        let observer = self.observer;
        match spec.resource {
            ResourceKind::Slot => {
                let mut slot = SlotResource::new(spec.service_ns()).with_outage(spec.down);
                if retries.wants_hints() {
                    slot = slot.with_hints(spec.clients);
                }
                if self.waves && retries.waves_are_exact() {
                    wave_loop::<_, _, F::Queue<_>>(spec, retries, slot, observer)
                } else {
                    call_loop::<_, _, _, F::Queue<_>>(spec, retries, slot, observer)
                }
            }
            ResourceKind::Outage => {
                let outage = OutageResource::new(spec.clients, &mut environment);
                call_loop::<_, _, _, F::Queue<_>>(spec, retries, outage, observer)
            }
            ResourceKind::Occ => {
                let network = OccNetwork::new(environment);
                run_occ::<_, _, F::Queue<_>>(spec, retries, network, observer)
            }
        }
    }
}

/// The event loop of a resource that answers every call at once: each event
/// is one call.
fn call_loop<P: Backoff, R: CallResource, O: Observer, Q: EventQueue<Client<P::Walk>>>(
    spec: &RunSpec,
    mut retries: Retries<'_, P>,
    mut resource: R,
    observer: &mut O,
) -> RunMetrics {
    let mut queue = Q::with_first_calls(retries.first_calls(), retries.new_client());
    let mut recorder = Recorder::new(spec);

    while let Some((time, mut client)) = queue.first() {
        let attempt = client.attempt;
        if !recorder.call(time, attempt, observer) {
            break;
        }
        if attempt == 0 {
            retries.first_call(client.id);
        }
        let served = resource.call(time, client.id, attempt);
        observer.call(time, client.id, attempt, served);
        if served {
            recorder.success(time, retries.started(client.id));
            retries.succeeded(&client);
            queue.reschedule_first(None);
            continue;
        }
        let hint = if retries.wants_hints() {
            resource.retry_hint(time)
        } else {
            0
        };
        let at = retries.after_failure(&mut client, time, hint, observer, &mut recorder);
        queue.reschedule_first(at.map(|t| (t, client)));
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
            (1, 0, 1, 0)
        );
        assert_eq!(m.peak_retries, 0);
    }

    #[test]
    fn two_clients_without_jitter() {
        // t=0: client 0 served, client 1 fails and waits base (100 ms);
        // t=100 ms: served.
        let m = simulate(&spec(PolicyKind::None, 2), Seeds::for_job(1, 0, 0));
        assert_eq!((m.calls, m.retries, m.last_success_us), (3, 1, 100_000));
        assert_eq!((m.completion_p50_us, m.completion_max_us), (0, 100_000));
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
