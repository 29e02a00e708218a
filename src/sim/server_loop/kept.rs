//! Envoy's hedging on per-try timeout ([`crate::model::timeout_hedging`])
//! as a run's mode: a timed-out attempt is kept and a retry goes beside it,
//! the first success wins, and the route's timeout (the deadline) ends
//! every attempt, kept or not.

use crate::base::time::ns_of_us;
use crate::control::Outcome;
use crate::model::server::Nanos;
use crate::model::timeout_hedging::{self as rules, AfterFailure};
use crate::sim::queue::EventQueue;
use crate::sim::retry_decision::{Decision, Failed, decide};
use crate::sim::timeout_hedging::TimeoutHedging;

use super::event::{AttemptId, Event};
use super::{Mode, State};

/// A run hedging on timeout: each slot's attempts, and the wins of kept
/// attempts.
#[derive(Debug, Clone, Default)]
pub(super) struct Kept(TimeoutHedging);

impl Mode for Kept {
    /// A request hedging on timeout starts: its deadline (the route's
    /// timeout, which ends every attempt, kept or not) is set, and its first
    /// attempt goes. False if a control refused it.
    fn start<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, req: u32) -> bool {
        let r = &s.slab[req];
        let (generation, started) = (r.generation, r.started);
        s.mode.0.slots.start(req);
        if let Some(deadline) = s.deadline {
            // Any timeout at or past the deadline is the deadline's.
            let id = AttemptId {
                req,
                generation,
                attempt: 0,
            };
            s.push(started.saturating_add(deadline), Event::timeout(id));
        }
        s.kept_send(req, false)
    }

    fn reply<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        s.kept_reply(e);
    }

    fn timeout<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        s.kept_timeout(e);
    }

    /// A retry of a request hedging on timeout is due.
    fn resend<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        if !s.slab.is_current(e.req, e.generation) {
            return;
        }
        s.mode.0.slots.of(e.req).pending = false;
        if !s.kept_send(e.req, e.admitted()) {
            s.end(e.req);
        }
    }

    /// Every attempt is awaited while its request lasts, past its own
    /// timeout too.
    fn reply_ignored<Q: EventQueue<Event>>(
        s: &State<'_, Q, Self>,
        id: AttemptId,
        back: Nanos,
    ) -> bool {
        let r = &s.slab[id.req];
        r.generation != id.generation || s.past_deadline(r.started, back)
    }

    /// The refused attempt fails alone while others await their replies
    /// (Envoy's `onUpstreamReset` of an overflow).
    fn goes_on_after_refusal(&mut self, req: u32) -> bool {
        self.0.slots.of(req).in_flight > 0
    }

    fn capacity_bytes(&self) -> usize {
        self.0.slots.capacity_bytes()
    }

    fn kept_wins(&self) -> u64 {
        self.0.kept_wins
    }
}

impl<Q: EventQueue<Event>> State<'_, Q, Kept> {
    /// Sends the request's next attempt ([`Self::send`]) and counts it in
    /// flight if it went; false if a control refused it and nothing else
    /// is in flight (the caller ends the request).
    fn kept_send(&mut self, req: u32, admitted: bool) -> bool {
        let before = self.slab[req].attempts;
        if !self.send(req, admitted) {
            return false;
        }
        if self.slab[req].attempts > before {
            let attempts = self.mode.0.slots.of(req);
            attempts.in_flight += 1;
            attempts.timed_out = false;
        }
        true
    }

    /// Envoy's `shouldRetry` for a request hedging on timeout, after an
    /// attempt that ended (or timed out) with `cause`: true if a retry is
    /// scheduled, after the policy's backoff. Refused when `num_retries`
    /// are spent; a control's refusal spends one ([`rules::retries_left`]).
    /// A retry due past the deadline stays pending until the deadline ends
    /// the request, as Envoy's backoff timer outlasted by the route's
    /// timeout does.
    fn kept_retry(&mut self, req: u32, cause: Outcome) -> bool {
        let now = self.now;
        let r = self.slab[req];
        let spent = self.mode.0.slots.of(req).spent;
        let failed = Failed {
            source: r.source,
            now,
            cause,
            retry: r.attempts,
        };
        let limits_allow = rules::retries_left(r.attempts, spent, self.attempt_limits[0]);
        let (policy, mut walk) = (self.policy_of(0), self.slab.walk(req));
        let decision = decide(
            limits_allow,
            self.controls.as_mut(),
            failed,
            policy,
            &mut walk,
            &mut self.backoff,
        );
        let delay = match decision {
            Decision::Retry { delay } => delay,
            Decision::Limit => return false,
            Decision::Refused => {
                self.mode.0.slots.of(req).spent += 1;
                return false;
            }
        };
        self.slab.set_walk(req, walk);
        let r = &mut self.slab[req];
        r.retry_of = Some(cause);
        let (generation, started) = (r.generation, r.started);
        let at = now.saturating_add(ns_of_us(delay));
        self.mode.0.slots.of(req).pending = true;
        if !self.past_deadline(started, at) {
            self.advance_areas();
            self.retries_waiting += 1;
            self.push(at, Event::resend(req, generation, false));
        }
        true
    }

    /// A timeout of a request hedging on timeout. At or past the deadline:
    /// the request gives up and every attempt in flight is abandoned
    /// (Envoy's `onResponseTimeout`). Else the latest attempt's per-try
    /// timeout, if it still awaits its reply: it is kept, the retry counted
    /// for it stops counting, and a retry is asked for whatever `retry_on`
    /// says (`onSoftPerTryTimeout`, `shouldHedgeRetryPerTryTimeout`).
    fn kept_timeout(&mut self, e: Event) {
        let now = self.now;
        let r = &self.slab[e.req];
        if r.generation != e.generation {
            return;
        }
        let (started, source, awaiting, retry_of) = (r.started, r.source, r.awaiting, r.retry_of);
        let awaits = r.awaits(e.id());
        if self.past_deadline(started, now) {
            // The latest attempt is a timeout now unless its own fired.
            if awaiting && !self.mode.0.slots.of(e.req).timed_out {
                self.rec.users_timed_out(1);
            }
            self.abandon(e.req);
            self.give_up(0, started);
            self.end(e.req);
            return;
        }
        if !awaits {
            return;
        }
        self.rec.users_timed_out(1);
        self.mode.0.slots.of(e.req).timed_out = true;
        if retry_of.is_some() {
            // `shouldRetry` resets the retry counted first (`resetRetry`).
            self.slab[e.req].retry_of = None;
            if let Some(controls) = self.controls.as_mut() {
                controls.retry_dropped(source, now);
            }
        }
        if self.kept_retry(e.req, Outcome::Timeout) {
            // Retried: its reply can still win, but never retry.
            self.slab[e.req].awaiting = false;
        }
    }

    /// A reply to an attempt of a request hedging on timeout: a success
    /// wins and abandons the others; a failure asks for a retry, waits for
    /// the others, or fails the request ([`rules::after_failure`]).
    fn kept_reply(&mut self, e: Event) {
        let now = self.now;
        let r = &mut self.slab[e.req];
        if r.generation != e.generation {
            return;
        }
        let current = r.awaits(e.id());
        r.awaiting &= !current;
        let (source, started, sent) = (r.source, r.started, r.sent);
        // Only the latest attempt, not yet retried, holds a retry's count.
        let retry_of = if current { r.retry_of } else { None };
        let attempts = self.mode.0.slots.of(e.req);
        attempts.in_flight -= 1;
        let kept_won = !current || attempts.timed_out;
        let outcome = e.reply_of().outcome();
        // Envoy's controls read no attempt's duration: `sent` is the
        // latest's.
        if let Some(controls) = self.controls.as_mut() {
            controls.attempt_ended(source, now, sent, outcome, retry_of);
        }
        if outcome == Outcome::Success {
            if kept_won {
                self.mode.0.kept_wins += 1;
            }
            self.abandon(e.req);
            self.succeed(e.req, 0, started);
            return;
        }
        let retriable = self.retry_on.retries(outcome);
        let attempts = *self.mode.0.slots.of(e.req);
        let awaited = attempts.in_flight > 0 || attempts.pending;
        let fails = match rules::after_failure(retriable, current, awaited) {
            AfterFailure::AsksRetry => {
                !self.kept_retry(e.req, outcome)
                    && rules::after_refusal(attempts.in_flight > 0) == AfterFailure::Fails
            }
            AfterFailure::Waits => false,
            AfterFailure::Fails => true,
        };
        if fails {
            self.abandon(e.req);
            self.give_up(0, started);
            self.end(e.req);
        }
    }

    /// The request hedging on timeout ends with attempts in flight or a
    /// retry pending: Envoy resets them (`resetOtherUpstreams`, or the
    /// route's timeout) and drops the retry. The controls learn each
    /// attempt ended (Envoy's read no outcome) and the retry dropped; only
    /// the latest attempt, not yet retried, holds a retry's count.
    fn abandon(&mut self, req: u32) {
        let now = self.now;
        let attempts = *self.mode.0.slots.of(req);
        let r = &self.slab[req];
        let Some(controls) = self.controls.as_mut() else {
            return;
        };
        for i in 0..attempts.in_flight {
            let retry_of = if i == 0 && r.awaiting {
                r.retry_of
            } else {
                None
            };
            controls.attempt_ended(r.source, now, r.sent, Outcome::Timeout, retry_of);
        }
        if attempts.pending {
            controls.retry_dropped(r.source, now);
        }
    }
}
