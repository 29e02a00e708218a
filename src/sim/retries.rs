//! What happens after a failed attempt, the same in every model's loop: the
//! stop rules, the retry controls, the retry hint and the policy's delay.

use std::ops::Range;

use rand_pcg::Pcg64Mcg;

use crate::base::seeding::{controls_seed, job_rng};
use crate::base::time::{Micros, ns_of_us};
use crate::control::retry_after::RetryAfter;
use crate::control::{Controls, Outcome};
use crate::measure::observer::Observer;
use crate::measure::recorder::Recorder;
use crate::model::arrivals::FirstCalls;
use crate::policy::{AnyPolicy, AnyWalk, WalkBits};
use crate::sim::queue::ClientItem;
use crate::sim::retry_decision::{Decision, Failed, decide};
use crate::sim::wave::Wave;
use crate::spec::{RunSpec, Seeding};

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

    /// `start`, if an attempt may start then for a client whose first call
    /// was at `first()` (an attempt exactly at the deadline is made); the
    /// first call is looked up only where a deadline applies.
    #[inline]
    pub(crate) fn start_in_time(
        &self,
        start: Micros,
        first: impl FnOnce() -> Micros,
    ) -> Option<Micros> {
        (self.deadline == Micros::MAX || start - first() <= self.deadline).then_some(start)
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

/// Whether an attempt may go ([`Retries::about_to_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admitted {
    /// It goes.
    Yes,
    /// A control refused it; its request is over (counted as given up).
    No,
    /// A control refused it as a retryable error: it failed at once.
    Retry,
}

/// What happens after a failed attempt: the next attempt's start, or giving
/// up. Shared by every model's event loop, so the stop rules mean the same
/// everywhere.
///
/// Not generic over the policy: the policy is dispatched on its kind per
/// delay, so each loop is compiled once per width of a client's memory
/// (`()`, one word or two, [`crate::policy::PolicySpec::walk_words`])
/// rather than once per policy, and the events of a policy without memory
/// stay two words.
pub(crate) struct Retries {
    policy: AnyPolicy,
    /// False if the policy never draws ([`Backoff::JITTERED`]).
    jittered: bool,
    draws: PolicyDraws,
    stop: StopRules,
    first_calls: FirstCalls,
    controls: Option<Controls>,
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

impl Retries {
    pub(crate) fn new(spec: &RunSpec, seed: u64, first_calls: FirstCalls) -> Self {
        let n = spec.clients as usize;
        let draws = match spec.seeding {
            Seeding::Independent => PolicyDraws::Independent(job_rng(seed)),
            Seeding::Shared => PolicyDraws::Shared(vec![job_rng(seed); n]),
        };
        Retries {
            policy: AnyPolicy::new(&spec.policy),
            jittered: spec.policy.is_jittered(),
            draws,
            stop: StopRules::of(spec),
            first_calls,
            controls: Controls::new(
                &spec.controls(),
                spec.clients,
                spec.fleet,
                controls_seed(seed),
            ),
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
    pub(crate) fn new_client<W: WalkBits>(&self) -> Client<W> {
        Client {
            id: 0,
            attempt: 0,
            walk: W::from_bits(self.policy.start().to_bits()),
        }
    }

    /// True if the clients read the resource's retry hints.
    pub(crate) fn wants_hints(&self) -> bool {
        self.retry_after != RetryAfter::Ignore
    }

    /// `client` is about to make its attempt at `now` (µs): a first call
    /// starts its request for the controls. [`Admitted::No`] if a breaker or
    /// throttle refuses it; the client then gives up (counted here) without
    /// calling. [`Admitted::Retry`] if the refusal is a retryable error
    /// ([`crate::control::RetryControl::retries_refusal`]): the caller
    /// treats the attempt as failed at once ([`Retries::after_failure`]).
    /// Always inlined: every call asks, and without controls the answer is
    /// one test (left to itself, the compiler stopped inlining it once
    /// `Micros` became a newtype: 4% more instructions for a herd).
    #[inline(always)]
    pub(crate) fn about_to_call<W>(
        &mut self,
        client: &Client<W>,
        now: Micros,
        recorder: &mut Recorder,
    ) -> Admitted {
        let Some(controls) = &mut self.controls else {
            return Admitted::Yes;
        };
        let ns = ns_of_us(now);
        if client.attempt == 0 {
            controls.request_started(client.id, ns);
        }
        let retry_of = (client.attempt > 0).then_some(Outcome::Failure);
        // A control that delays attempts (a rate limiter) runs only on the
        // server model (a spec check), so an admitted attempt goes now.
        if controls.admit(client.id, ns, retry_of.is_some()).is_none() {
            if retry_of.is_some() {
                controls.retry_dropped(client.id, ns);
            }
            if controls.refusal_retried() {
                return Admitted::Retry;
            }
            recorder.give_up();
            return Admitted::No;
        }
        controls.attempt_sent(client.id, ns, retry_of);
        Admitted::Yes
    }

    /// `client`'s current attempt, sent at `sent` and ended at `now` (µs),
    /// ended with `outcome` (every failure on these models is the
    /// resource's).
    #[inline]
    pub(crate) fn attempt_ended<W>(
        &mut self,
        client: &Client<W>,
        now: Micros,
        sent: Micros,
        outcome: Outcome,
    ) {
        if let Some(controls) = &mut self.controls {
            let retry_of = (client.attempt > 0).then_some(Outcome::Failure);
            let (now, sent) = (ns_of_us(now), ns_of_us(sent));
            controls.attempt_ended(client.id, now, sent, outcome, retry_of);
        }
    }

    /// The retry decision ([`decide`]) for client `source`'s attempt
    /// that failed, learnt at `ready` (µs), before retry `retry`: the stop
    /// rules' attempt limit, the controls if `ask_controls`, then the
    /// policy's delay drawn from the run's generator (or, with shared
    /// seeding, the client's own).
    #[inline(always)]
    fn decide<W: WalkBits>(
        &mut self,
        source: u32,
        ready: Micros,
        retry: u32,
        ask_controls: bool,
        walk: &mut W,
    ) -> Decision {
        let failed = Failed {
            source,
            now: ns_of_us(ready),
            cause: Outcome::Failure,
            retry,
        };
        let limits_allow = self.stop.another_attempt(retry);
        let mut memory = AnyWalk::from_bits(walk.to_bits());
        let controls = if ask_controls {
            self.controls.as_mut()
        } else {
            None
        };
        let decision = match &mut self.draws {
            PolicyDraws::Independent(draws) => decide(
                limits_allow,
                controls,
                failed,
                &self.policy,
                &mut memory,
                draws,
            ),
            PolicyDraws::Shared(draws) => {
                let draws = &mut draws[failed.source as usize];
                decide(
                    limits_allow,
                    controls,
                    failed,
                    &self.policy,
                    &mut memory,
                    draws,
                )
            }
        };
        *walk = W::from_bits(memory.to_bits());
        decision
    }

    /// After `client`'s current attempt failed, at `ready` (when the client
    /// learns of it, with the resource's retry `hint`): the time its next
    /// attempt starts, `ready` plus the policy's delay (or the hint, as
    /// `--retry-after` says), or `None` if a stop rule or a control ends it
    /// (counted as given up).
    #[inline]
    pub(crate) fn after_failure<W: WalkBits, O: Observer>(
        &mut self,
        client: &mut Client<W>,
        ready: Micros,
        hint: Micros,
        observer: &mut O,
        recorder: &mut Recorder,
    ) -> Option<Micros> {
        let retry = client.attempt + 1;
        let Decision::Retry { delay } =
            self.decide(client.id, ready, retry, true, &mut client.walk)
        else {
            recorder.give_up();
            return None;
        };
        client.attempt = retry;
        let delay = self.retry_after.wait(delay, hint);
        observer.delay(client.id, retry, delay);
        let start = self
            .stop
            .start_in_time(ready + delay, || self.first_calls.of(client.id));
        if start.is_none() {
            if let Some(controls) = &mut self.controls {
                controls.retry_dropped(client.id, ns_of_us(ready));
            }
            recorder.give_up();
        }
        start
    }
}

/// Waves ([`crate::sim::wave`]).
impl Retries {
    /// True if this run's clients can move in waves: a policy without jitter
    /// and nothing that tells clients in the same state apart (a control, the
    /// slot's per-client retry hints).
    pub(crate) fn waves_are_exact(&self) -> bool {
        !self.jittered && self.controls.is_none() && self.retry_after == RetryAfter::Ignore
    }

    /// [`Retries::after_failure`] for the clients `failed` of a wave at once
    /// (they share the wave's retry number, memory and first call, so the
    /// stop rules and the policy treat them alike): their next attempt's
    /// start, or `None` if a stop rule ends them all.
    pub(crate) fn after_wave_failure<W: WalkBits, O: Observer>(
        &mut self,
        wave: &mut Wave<W>,
        failed: Range<u32>,
        ready: Micros,
        observer: &mut O,
        recorder: &mut Recorder,
    ) -> Option<Micros> {
        debug_assert!(self.waves_are_exact());
        let count = failed.len() as u32;
        let retry = wave.attempt + 1;
        // Waves run without controls (`waves_are_exact`): none is asked.
        let Decision::Retry { delay } =
            self.decide(failed.start, ready, retry, false, &mut wave.walk)
        else {
            recorder.give_up_many(count);
            return None;
        };
        wave.attempt = retry;
        observer.wave_delays(failed.clone(), retry, delay);
        let start = self
            .stop
            .start_in_time(ready + delay, || self.first_calls.of(failed.start));
        if start.is_none() {
            recorder.give_up_many(count);
        }
        start
    }
}
