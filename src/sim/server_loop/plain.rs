//! The client's side of a request: sending an attempt with its timeout,
//! what its reply or its timeout means, the retry decision, success and
//! giving up. Plain requests (one attempt at a time) are this path alone;
//! hedged requests and requests hedging on timeout reuse its send.

use crate::base::time::ns_of_us;
use crate::control::Outcome;
use crate::control::deadline_propagation::DeadlinePropagation;
use crate::model::chain::RetryScope;
use crate::model::server::{Nanos, TimeoutLaw, TimeoutNoticed, round_ns};
use crate::sim::queue::EventQueue;
use crate::sim::retry_decision::{Decision, Failed, decide};

use super::event::{AttemptId, Event, Reply};
use super::requests::{Awaited, Request};
use super::{Mode, State};

/// One attempt at a time: a retry after each failure.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plain;

impl Mode for Plain {
    #[inline(always)]
    fn start<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, req: u32) -> bool {
        s.send(req, false)
    }
    #[inline(always)]
    fn reply<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        s.plain_reply(e);
    }
    #[inline(always)]
    fn timeout<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        s.plain_timeout(e);
    }
    #[inline(always)]
    fn resend<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        if s.slab.is_current(e.req, e.generation) && !s.send(e.req, e.admitted()) {
            s.end(e.req);
        }
    }
    #[inline]
    fn reply_ignored<Q: EventQueue<Event>>(
        s: &State<'_, Q, Self>,
        id: AttemptId,
        back: Nanos,
    ) -> bool {
        s.reply_ignored_plainly(id, back)
    }
}

/// A request's timeout when attempts have none.
pub(super) const NO_TIMEOUT: Nanos = Nanos::MAX;

impl<Q: EventQueue<Event>, M: Mode> State<'_, Q, M> {
    /// The timeout of attempt `id` of request `r`: the request's, or with
    /// the exponential law a draw of that mean. The draw is a hash of the
    /// run's key and the attempt's slot, generation and number, not a
    /// generator's next value, so that the send and the server (which must
    /// know whether the reply will be ignored) get the same one without a
    /// field per request.
    #[inline(always)]
    pub(super) fn attempt_timeout(&self, r: &Request, id: AttemptId) -> Nanos {
        let timeout = self.timeout_of_request(r);
        if self.spec.timeout_law != TimeoutLaw::Exponential || timeout == NO_TIMEOUT {
            return timeout;
        }
        use crate::base::seeding::splitmix64;
        let slot = (u64::from(id.req) << 32) | u64::from(id.generation);
        let bits = splitmix64(splitmix64(self.timeout_key ^ slot) ^ u64::from(id.attempt));
        let unit = crate::base::draws::unit_above_zero_of(bits);
        round_ns(timeout.ticks() as f64 * -unit.ln())
    }

    /// The timeout of the attempts of request `r` ([`NO_TIMEOUT`] for
    /// none): the users' (or the one they drew), or a call's layer's.
    #[inline]
    fn timeout_of_request(&self, r: &Request) -> Nanos {
        if r.layer == 0 {
            self.timeout_of(r.timeout_choice)
        } else {
            self.layer_timeouts[usize::from(r.layer)]
        }
    }

    /// The timeout of a users' request's attempts: the spec's, or the
    /// `choice` it drew; [`NO_TIMEOUT`] for none.
    #[inline]
    pub(super) fn timeout_of(&self, choice: u8) -> Nanos {
        match self.spec.timeout_choices.get(usize::from(choice)) {
            Some(&t) => t,
            None => self.spec.timeout.unwrap_or(NO_TIMEOUT),
        }
    }

    /// True if the users' request that started at `started` is past its
    /// deadline at `t` (never without one).
    #[inline]
    pub(super) fn past_deadline(&self, started: Nanos, t: Nanos) -> bool {
        self.deadline
            .is_some_and(|d| t >= started.saturating_add(d))
    }

    /// True if the reply of attempt `id`, arriving at `back`, finds its
    /// caller no longer waiting: it timed out already, or will have by then
    /// (a timeout at the reply's instant was scheduled earlier, so it wins
    /// the tie). `awaited` says whether its caller still awaits it now.
    #[inline]
    pub(super) fn reply_ignored_given(&self, id: AttemptId, back: Nanos, awaited: bool) -> bool {
        let r = &self.slab[id.req];
        !awaited
            || back >= r.sent.saturating_add(self.attempt_timeout(r, id))
            || (r.layer == 0 && self.past_deadline(r.started, back))
    }

    /// [`Self::reply_ignored_given`] for a request that awaits one attempt
    /// at a time.
    #[inline]
    pub(super) fn reply_ignored_plainly(&self, id: AttemptId, back: Nanos) -> bool {
        self.reply_ignored_given(id, back, self.slab[id.req].awaits(id))
    }

    /// Sends the request's next attempt, with its timeout, if every control
    /// admits it (or `admitted` says they did); false if one refused
    /// (counted; the caller ends the request as given up). An attempt a
    /// rate limiter holds back is sent when its token comes.
    #[must_use]
    #[inline(always)]
    pub(super) fn send(&mut self, req: u32, admitted: bool) -> bool {
        let now = self.now;
        let r = &self.slab[req];
        let (layer, source, retry_of, generation) = (r.layer, r.source, r.retry_of, r.generation);
        if let Some(controls) = self.controls_of(layer) {
            if !admitted {
                match controls.admit(source, now, retry_of.is_some()) {
                    None => {
                        if retry_of.is_some() {
                            controls.retry_dropped(source, now);
                        }
                        let retried = controls.refusal_retried();
                        if layer == 0 {
                            self.rec.refused();
                        }
                        // A refusal the client's retry treats as an error
                        // (resilience4j, Polly) uses up an attempt unsent.
                        if retried {
                            self.slab[req].attempts += 1;
                            if self.schedule_retry(req, Outcome::Failure, false) {
                                return true;
                            }
                        }
                        // Hedging on timeout: the refused attempt fails
                        // alone while others await their replies (Envoy's
                        // `onUpstreamReset` of an overflow).
                        if self.mode.goes_on_after_refusal(req) {
                            return true;
                        }
                        self.give_up(layer, self.slab[req].started);
                        return false;
                    }
                    Some(Nanos::ZERO) => {}
                    Some(wait) => {
                        self.push(
                            now.saturating_add(wait),
                            Event::resend(req, generation, true),
                        );
                        return true;
                    }
                }
            }
            controls.attempt_sent(source, now, retry_of);
        }
        let timeout = {
            let r = &self.slab[req];
            let id = AttemptId {
                req,
                generation: r.generation,
                attempt: r.attempts,
            };
            self.attempt_timeout(r, id)
        };
        let r = &mut self.slab[req];
        let (generation, attempt, started) = (r.generation, r.attempts, r.started);
        // The client stops waiting at the attempt's timeout or the request's
        // deadline, whichever is first.
        let wait = match self.deadline {
            Some(deadline) if layer == 0 => {
                timeout.min(started.saturating_add(deadline).saturating_sub(now))
            }
            _ => timeout,
        };
        r.attempts += 1;
        r.awaiting = true;
        r.sent = now;
        self.rec.attempt_sent(layer);
        let deadline = match self.spec.deadline_propagation {
            _ if timeout == NO_TIMEOUT => Nanos::MAX,
            DeadlinePropagation::Call => started.saturating_add(timeout),
            DeadlinePropagation::Attempt => now.saturating_add(timeout),
            DeadlinePropagation::Off => Nanos::MAX,
        };
        let arrive = now.saturating_add(self.spec.request_delay.sample(&mut self.environment));
        let id = AttemptId {
            req,
            generation,
            attempt,
        };
        self.push(arrive, Event::at_server(id, deadline, layer));
        if wait != NO_TIMEOUT && self.spec.timeout_noticed == TimeoutNoticed::Deadline {
            self.push(now.saturating_add(wait), Event::timeout(id));
        }
        true
    }

    /// Tells the controls how the awaited attempt ended.
    #[inline(always)]
    pub(super) fn attempt_ended(&mut self, awaited: &Awaited, outcome: Outcome) {
        let now = self.now;
        if let Some(controls) = self.controls_of(awaited.layer) {
            controls.attempt_ended(awaited.source, now, awaited.sent, outcome, awaited.retry_of);
        }
    }

    /// A reply to a request that awaits one attempt at a time.
    #[inline(always)]
    pub(super) fn plain_reply(&mut self, e: Event) {
        let Some(awaited) = self.slab.stop_awaiting(e.id()) else {
            return;
        };
        if self.spec.timeout_noticed == TimeoutNoticed::Reply
            && self.now - awaited.sent > self.timeout_of(awaited.timeout_choice)
        {
            // Late: a timeout, whatever the reply says.
            self.rec.users_timed_out(1);
            self.attempt_ended(&awaited, Outcome::Timeout);
            self.attempt_failed(e.req, Outcome::Timeout, false);
            return;
        }
        let reply = e.reply_of();
        let outcome = reply.outcome();
        self.attempt_ended(&awaited, outcome);
        if outcome == Outcome::Success {
            self.succeed(e.req, awaited.layer, awaited.started);
        } else {
            self.attempt_failed(e.req, outcome, reply == Reply::FailedBelow);
        }
    }

    /// A timeout of a request that awaits one attempt at a time.
    pub(super) fn plain_timeout(&mut self, e: Event) {
        let Some(awaited) = self.slab.stop_awaiting(e.id()) else {
            return;
        };
        self.rec.timed_out(awaited.layer);
        self.attempt_ended(&awaited, Outcome::Timeout);
        if awaited.layer == 0 && self.past_deadline(awaited.started, self.now) {
            self.give_up(0, awaited.started);
            self.end(e.req);
            return;
        }
        self.attempt_failed(e.req, Outcome::Timeout, false);
    }

    /// The request in slot `req`, to service `layer` and started at
    /// `started`, succeeded now: counted, and ended as succeeded (the path
    /// says how it ended; where the end goes is [`Self::end_as`]'s).
    #[inline(always)]
    pub(super) fn succeed(&mut self, req: u32, layer: u8, started: Nanos) {
        self.rec.succeeded(layer, started, self.now);
        self.end_as(req, true);
    }

    /// The current attempt failed with `cause` (a failed reply, a rejection
    /// or a timeout): retry or give up, decided now. `from_below` says the
    /// failure came from below the service called (its own call gave up):
    /// with the adjacent retry scope, only the caller right above the
    /// failing service retries, so this one gives up.
    pub(super) fn attempt_failed(&mut self, req: u32, cause: Outcome, from_below: bool) {
        if !self.schedule_retry(req, cause, from_below) {
            let r = &self.slab[req];
            self.give_up(r.layer, r.started);
            self.end(req);
        }
    }

    /// Schedules the retry of the request in slot `req` after an attempt
    /// that failed with `cause`, if its attempt limit and its controls let
    /// it ([`decide`]); false if they do not (the caller ends the request).
    pub(super) fn schedule_retry(&mut self, req: u32, cause: Outcome, from_below: bool) -> bool {
        let now = self.now;
        let r = self.slab[req];
        let max_attempts = self.attempt_limits[usize::from(r.layer)];
        let passes_up = from_below && self.spec.chain.retry_scope == RetryScope::Adjacent;
        let limits_allow = !passes_up
            && self.retry_on.retries(cause)
            && max_attempts.is_none_or(|max| r.attempts < max);
        let failed = Failed {
            source: r.source,
            now,
            cause,
            retry: r.attempts,
        };
        let policy = self.policy_of(r.layer);
        let mut walk = self.slab.walk(req);
        let controls = match r.layer {
            0 => self.controls.as_mut(),
            l => self.uppers.controls_of(l),
        };
        let Decision::Retry { delay } = decide(
            limits_allow,
            controls,
            failed,
            policy,
            &mut walk,
            &mut self.backoff,
        ) else {
            return false;
        };
        self.slab.set_walk(req, walk);
        let r = &mut self.slab[req];
        r.retry_of = Some(cause);
        let (generation, layer, started, source) = (r.generation, r.layer, r.started, r.source);
        let at = now.saturating_add(ns_of_us(delay));
        if layer == 0 && self.past_deadline(started, at) {
            // The retry would start after the request's deadline.
            if let Some(controls) = self.controls_of(layer) {
                controls.retry_dropped(source, now);
            }
            return false;
        }
        self.advance_areas();
        self.retries_waiting += 1;
        self.push(at, Event::resend(req, generation, false));
        true
    }

    /// A request to service `layer` made at `started` gave up now.
    pub(super) fn give_up(&mut self, layer: u8, started: Nanos) {
        self.rec.gave_up(layer, started, self.now);
    }
}
