//! The users' requests: an open-loop arrival takes a client slot or waits
//! for one, a closed-loop user thinks between requests, and a request (or
//! a call below) starts in the slab and ends there, handing its slot on.

use crate::base::draws::Draws;
use crate::model::server::{Load, Nanos};
use crate::sim::queue::EventQueue;

use super::event::{Event, Kind};
use super::requests::Request;
use super::{Mode, State};

impl<Q: EventQueue<Event>, M: Mode> State<'_, Q, M> {
    /// An open-loop request from `source` arrives: it starts, or waits for a
    /// client slot.
    #[inline(always)]
    pub(super) fn arrive(&mut self, source: u32) {
        let Load::Open { concurrency, .. } = self.spec.load else {
            unreachable!("arrivals are open-loop")
        };
        let req = self.new_request(source, Some(self.now));
        match concurrency {
            Some(k) if self.holding_slot >= k => {
                let generation = self.slab[req].generation;
                self.waiting_for_slot.push_back((req, generation));
            }
            _ => {
                if concurrency.is_some() {
                    self.holding_slot += 1;
                }
                if !self.start(req) {
                    self.end(req);
                }
            }
        }
    }

    /// The request starts: latency counts from now; its first attempt goes.
    /// False if a control refused it (the caller ends the request).
    #[must_use]
    #[inline(always)]
    pub(super) fn start(&mut self, req: u32) -> bool {
        self.slab[req].started = self.now;
        M::start(self, req)
    }

    /// A new users' request from `source` (open-loop: arrived now), in the
    /// slab: its slot. It draws its fate and its timeout here.
    #[inline(always)]
    pub(super) fn new_request(&mut self, source: u32, arrived: Option<Nanos>) -> u32 {
        let fate = if self.effects.per_user_failures {
            self.environment.unit_above_zero()
        } else {
            1.0
        };
        let choices = self.spec.timeout_choices.len() as u64;
        let timeout_choice = if choices == 0 {
            0
        } else {
            self.environment.uniform(0, choices - 1) as u8
        };
        self.rec.request_made(arrived);
        self.new_call(source, 0, fate, timeout_choice).0
    }

    /// A new request to service `layer` (0: a user's), in the slab: its
    /// index and generation. A call below carries its user's `fate`.
    #[inline(always)]
    pub(super) fn new_call(
        &mut self,
        source: u32,
        layer: u8,
        fate: f64,
        timeout_choice: u8,
    ) -> (u32, u32) {
        let now = self.now;
        if let Some(controls) = self.controls_of(layer) {
            controls.request_started(source, now);
        }
        self.rec.call_started(layer);
        let policy = self.policy_of(layer);
        self.slab.insert(
            Request {
                layer,
                timeout_choice,
                generation: 0,
                source,
                started: now,
                attempts: 0,
                sent: Nanos::ZERO,
                awaiting: false,
                retry_of: None,
                fate,
            },
            || policy.start(),
        )
    }

    /// The request gave up: [`Self::end_as`] it, not succeeded.
    #[inline(always)]
    pub(super) fn end(&mut self, req: u32) {
        self.end_as(req, false);
    }

    /// The request is over, `succeeded` or not: the one place a request's
    /// path hands its end on. A call below ends in its chain (its reply
    /// goes up); a users' request's slot goes to the next waiting request,
    /// or its closed-loop user starts thinking. A waiting request a control
    /// refuses at once ends in turn (a loop, not recursion: an open breaker
    /// may refuse every waiting request).
    #[inline(always)]
    pub(super) fn end_as(&mut self, req: u32, succeeded: bool) {
        if self.slab[req].layer > 0 {
            self.end_call(req, succeeded);
            return;
        }
        let mut ending = req;
        loop {
            let source = self.slab[ending].source;
            self.slab.remove(ending);
            match self.spec.load {
                Load::Open {
                    concurrency: Some(_),
                    ..
                } => match self.waiting_for_slot.pop_front() {
                    Some((next, _)) if !self.start(next) => ending = next,
                    Some(_) => return,
                    None => {
                        self.holding_slot -= 1;
                        return;
                    }
                },
                Load::Closed { think, .. } => {
                    let t = self.now.saturating_add(think.sample(&mut self.environment));
                    self.push(t, Event::of_source(Kind::ThinkDone, source));
                    return;
                }
                Load::Open { .. } => return,
            }
        }
    }
}
