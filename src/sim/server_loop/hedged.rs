//! gRPC's hedging ([`crate::model::hedging`]) as a run's mode: copies of a
//! request at a fixed delay in place of retries, the first success wins, a
//! fatal failure fails the request, and the throttle freezes hedging.

use crate::control::Outcome;
use crate::model::hedging::{AfterFailure, Hedge, NextCopy, after_failure, next_copy};
use crate::model::server::Nanos;
use crate::sim::hedging::Hedging;
use crate::sim::queue::EventQueue;

use super::event::{AttemptId, Event};
use super::{Mode, State};

/// A hedged run's requests: the hedge and each slot's copies.
#[derive(Debug, Clone)]
pub(super) struct Hedged(Hedging);

impl Hedged {
    pub(super) fn new(hedge: Hedge) -> Self {
        Hedged(Hedging::new(hedge))
    }
}

impl Mode for Hedged {
    fn start<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, req: u32) -> bool {
        s.mode.0.slots.start(req);
        if !s.send(req, false) {
            return false;
        }
        s.copy_sent(req, true);
        true
    }

    fn reply<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        s.hedged_reply(e);
    }

    fn timeout<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        s.hedged_deadline(e);
    }

    fn resend<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        if s.slab.is_current(e.req, e.generation) && !s.send(e.req, e.admitted()) {
            s.end(e.req);
        }
    }

    /// A hedged request's next copy is due: it goes, if the request still
    /// lasts.
    fn hedge_due<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event) {
        if !s.slab.is_current(e.req, e.generation) {
            return;
        }
        if !s.send(e.req, false) {
            s.end(e.req);
            return;
        }
        s.copy_sent(e.req, false);
    }

    /// A hedged request awaits every copy of its own while it lasts.
    fn reply_ignored<Q: EventQueue<Event>>(
        s: &State<'_, Q, Self>,
        id: AttemptId,
        back: Nanos,
    ) -> bool {
        let awaited = s.slab.is_current(id.req, id.generation);
        s.reply_ignored_given(id, back, awaited)
    }

    fn capacity_bytes(&self) -> usize {
        self.0.slots.capacity_bytes()
    }
}

impl<Q: EventQueue<Event>> State<'_, Q, Hedged> {
    /// A copy of hedged request `req` was sent now (`first`: its first
    /// copy): it is in flight, and its next copy is scheduled `delay` on if
    /// the most copies are not sent and the throttle is above half, else
    /// hedging freezes, though not after the first copy ([`next_copy`]). No
    /// copy is scheduled past the deadline, which ends the request first.
    fn copy_sent(&mut self, req: u32, first: bool) {
        let now = self.now;
        let r = &self.slab[req];
        let (generation, source, started, sent) = (r.generation, r.source, r.started, r.attempts);
        let hedge = self.mode.0.hedge;
        let copies = self.mode.0.slots.of(req);
        copies.in_flight += 1;
        let frozen = copies.frozen;
        // Asked only when a copy may come; gRPC's throttle ignores the
        // cause (`isAboveThreshold`).
        let throttle_allows = sent < hedge.copies
            && !frozen
            && self
                .controls
                .as_mut()
                .is_none_or(|c| c.allow_retry(source, now, Outcome::Failure));
        match next_copy(sent, hedge.copies, frozen, throttle_allows, first) {
            NextCopy::Scheduled => {
                let at = now.saturating_add(hedge.delay);
                if !self.past_deadline(started, at) {
                    let id = AttemptId {
                        req,
                        generation,
                        attempt: sent,
                    };
                    self.push(at, Event::hedge(id));
                }
            }
            NextCopy::Frozen => self.mode.0.slots.of(req).frozen = true,
            NextCopy::NotScheduled => {}
        }
    }

    /// A reply to a copy of a hedged request: the first success wins; a
    /// fatal failure (an outcome not in `retry_on`) fails the request; a
    /// non-fatal one takes a throttle token and ends that copy alone, unless
    /// the throttle is then at or below half or nothing is left to wait for
    /// ([`after_failure`]). The request's other copies are abandoned when it
    /// ends: their replies find a later generation.
    fn hedged_reply(&mut self, e: Event) {
        let r = &self.slab[e.req];
        if r.generation != e.generation {
            return;
        }
        let (source, started, sent, attempts) = (r.source, r.started, r.sent, r.attempts);
        let now = self.now;
        let most = self.mode.0.hedge.copies;
        let copies = self.mode.0.slots.of(e.req);
        copies.in_flight -= 1;
        let (in_flight, frozen) = (copies.in_flight, copies.frozen);
        let outcome = e.reply_of().outcome();
        // The throttle sees the winner's success and non-fatal failures
        // only; `sent` is the latest copy's (gRPC's throttle reads no time).
        if outcome == Outcome::Success {
            if let Some(controls) = self.controls.as_mut() {
                controls.attempt_ended(source, now, sent, outcome, None);
            }
            self.succeed(e.req, 0, started);
            return;
        }
        let fatal = !self.retry_on.retries(outcome);
        let throttled = !fatal
            && self.controls.as_mut().is_some_and(|c| {
                c.attempt_ended(source, now, sent, outcome, None);
                !c.allow_retry(source, now, outcome)
            });
        let hedge_may_come = attempts < most && !frozen;
        if after_failure(fatal, throttled, in_flight, hedge_may_come) == AfterFailure::Fails {
            self.give_up(0, started);
            self.end(e.req);
        }
    }

    /// A hedged request's deadline passed (its copies have no timeout of
    /// their own): it gives up, and every copy still in flight times out.
    fn hedged_deadline(&mut self, e: Event) {
        let r = &self.slab[e.req];
        if r.generation != e.generation {
            return;
        }
        let started = r.started;
        let in_flight = self.mode.0.slots.of(e.req).in_flight;
        self.rec.users_timed_out(u64::from(in_flight));
        self.give_up(0, started);
        self.end(e.req);
    }
}
