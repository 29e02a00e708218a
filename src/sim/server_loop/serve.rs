//! The server's side of an attempt: it arrives, waits or is refused, a
//! worker serves it, and it succeeds or fails as the triggers say when its
//! service completes. The station ([`super::station`]) says what the
//! server does; this turns its answers into replies, metrics and the next
//! attempt taken.

use crate::base::draws::Draws;
use crate::model::server::Nanos;
use crate::sim::queue::EventQueue;

use super::event::{AttemptId, Event, Kind, Reply};
use super::station::{Arrival, Queued};
use super::{Mode, State};

impl<Q: EventQueue<Event>, M: Mode> State<'_, Q, M> {
    /// An attempt reaches the server: a free worker takes it, or it is
    /// refused, or it waits.
    #[inline(always)]
    pub(super) fn at_server(&mut self, e: Event) {
        self.advance_areas();
        self.rec.at_server();
        let queued = Queued {
            id: e.id(),
            arrived: self.now,
            deadline: e.deadline(),
        };
        match self.station.arrive(queued, self.spec, self.now) {
            Arrival::Served => self.serve(queued),
            Arrival::Refused => self.reject(queued.id),
            Arrival::Waits(length) => self.rec.queued(length),
        }
    }

    /// A worker finished an attempt: its reply goes back, succeeded or
    /// failed, and the worker takes the next.
    #[inline(always)]
    pub(super) fn service_done(&mut self, e: Event) {
        self.advance_areas();
        self.station.finished();
        let succeeded = e.kind == Kind::ServiceDone && self.succeeds(e.id(), self.now);
        let reply = if succeeded {
            Reply::Success
        } else {
            Reply::Failure
        };
        self.push(e.back(), Event::reply(e.id(), reply, 0));
        self.take_next();
    }

    /// A worker takes `queued` now. Its service time and reply delay are
    /// drawn here, so its sojourn and whether its reply will be ignored are
    /// known at once.
    #[inline(always)]
    fn serve(&mut self, queued: Queued) {
        let service = self
            .station
            .start(&queued, self.spec, self.now, &mut self.environment);
        let back = service
            .done
            .saturating_add(self.spec.reply_delay.sample(&mut self.environment));
        // Work whose reply its caller ignores is wasted. An attempt no
        // longer awaited has timed out already (it waited in the queue, so
        // no reply or rejection ended it).
        let wasted = self.times_out && M::reply_ignored(self, queued.id, back);
        self.rec
            .served(queued.arrived, service.time, service.done, wasted);
        self.push(
            service.done,
            Event::service_done(queued.id, service.expired, back, self.bottom),
        );
    }

    /// The next queued attempt, if a worker is free for it, as the
    /// discipline chooses; attempts it drops on the way are rejected.
    #[inline(always)]
    pub(super) fn take_next(&mut self) {
        let next = self
            .station
            .take_next(self.spec, self.now, &mut self.environment);
        if let Some(mut dropped) = self.station.take_dropped() {
            for attempt in dropped.drain(..) {
                self.reject(attempt.id);
            }
            self.station.reuse_dropped(dropped);
        }
        if let Some(next) = next {
            self.serve(next);
        }
    }

    /// The server refuses attempt `id` now (a full queue, shedding, or its
    /// discipline's drop): its rejection travels back to the client.
    fn reject(&mut self, id: AttemptId) {
        self.rec.rejected();
        let back = self
            .now
            .saturating_add(self.spec.reply_delay.sample(&mut self.environment));
        self.push(back, Event::reply(id, Reply::Rejected, 0));
    }

    /// Does attempt `id`, completing at `t`, succeed?
    #[inline(always)]
    fn succeeds(&mut self, id: AttemptId, t: Nanos) -> bool {
        let fail_p = if self.effects.failures {
            match self.failure_share(id, t) {
                Some(p) => p,
                None => return false,
            }
        } else {
            self.spec.fail_rate
        };
        fail_p <= 0.0 || self.environment.unit_above_zero() > fail_p
    }

    /// The failure probability of attempt `id` completing at `t` under the
    /// spec's failure triggers ([`crate::model::server::ServerSpec::failure_share`]);
    /// `None` if it fails for certain.
    fn failure_share(&self, id: AttemptId, t: Nanos) -> Option<f64> {
        self.spec.failure_share(t, self.station.latest_start, |p| {
            let r = &self.slab[id.req];
            // A request that ended since keeps no fate: its reply is
            // ignored anyway.
            r.generation == id.generation && r.fate <= p
        })
    }
}
