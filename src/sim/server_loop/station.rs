//! The server itself: its workers, its queue and how the queue is served
//! (the discipline), what it sheds, and the time a worker spends on an
//! attempt. It knows nothing of requests beyond the attempts it holds: what
//! a refusal or a finished attempt means to its client is the loop's.

use std::collections::VecDeque;

use crate::base::lookahead::Lookahead;
use crate::control::deadline_propagation;
use crate::control::queue_discipline::{self, Waiting};
use crate::control::shed_wait::sheds;
use crate::measure::server_recorder::Backlog;
use crate::model::server::{Nanos, ServerSpec, round_ns};

use super::event::AttemptId;

/// An attempt waiting in the server's queue.
#[derive(Debug, Clone, Copy)]
pub(super) struct Queued {
    pub(super) id: AttemptId,
    pub(super) arrived: Nanos,
    /// Its propagated deadline; `Nanos::MAX` for none.
    pub(super) deadline: Nanos,
}

impl Waiting for Queued {
    #[inline]
    fn arrived(&self) -> Nanos {
        self.arrived
    }
}

/// What the server does with an attempt that reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrival {
    /// A worker is free: it takes the attempt now.
    Served,
    /// Refused: the queue is full, or its expected wait is past the bound.
    Refused,
    /// It waits; the queue's length now.
    Waits(usize),
}

/// A worker's time on an attempt, drawn when it takes it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Service {
    /// The time the worker spends, ns.
    pub(super) time: Nanos,
    /// When it is done.
    pub(super) done: Nanos,
    /// True if it failed the attempt for its propagated deadline.
    pub(super) expired: bool,
}

/// The server's workers and queue.
#[derive(Clone)]
pub(super) struct Station {
    pub(super) queue: VecDeque<Queued>,
    /// Workers busy now.
    pub(super) busy: u32,
    /// How the queue is served.
    discipline: queue_discipline::Server,
    /// Attempts the discipline dropped while taking the next (reused).
    dropped: Vec<Queued>,
    /// The mean service time, ns (for shedding by expected wait).
    mean_service: f64,
    /// The workers while no capacity drop covers the time.
    base_workers: u32,
    /// True if a trigger changes the workers.
    workers_vary: bool,
    /// True if a trigger slows service down.
    slows_down: bool,
    /// When a worker last started on an attempt (a failure that ends at the
    /// next start lasts while this is inside its window).
    pub(super) latest_start: Nanos,
}

impl Station {
    pub(super) fn new(spec: &ServerSpec) -> Self {
        let effects = spec.trigger_effects();
        Station {
            queue: VecDeque::new(),
            busy: 0,
            discipline: spec.discipline.server(),
            dropped: Vec::new(),
            mean_service: spec.service.mean(),
            base_workers: spec.workers.unwrap_or(u32::MAX),
            workers_vary: effects.capacity,
            slows_down: effects.slowdown,
            latest_start: Nanos::ZERO,
        }
    }

    /// The workers at `now`.
    #[inline]
    pub(super) fn workers_at(&self, spec: &ServerSpec, now: Nanos) -> u32 {
        if self.workers_vary {
            spec.workers_at(now)
        } else {
            self.base_workers
        }
    }

    /// Attempt `queued` reaches the server now: a free worker is to take it
    /// ([`Self::start`]), or it is refused, or it waits.
    #[inline(always)]
    pub(super) fn arrive(&mut self, queued: Queued, spec: &ServerSpec, now: Nanos) -> Arrival {
        let workers = self.workers_at(spec, now);
        if self.busy < workers {
            Arrival::Served
        } else if spec
            .queue_limit
            .is_some_and(|limit| self.queue.len() >= limit as usize)
            || spec
                .shed_wait
                .is_some_and(|bound| sheds(self.queue.len() + 1, workers, self.mean_service, bound))
        {
            Arrival::Refused
        } else {
            self.queue.push_back(queued);
            Arrival::Waits(self.queue.len())
        }
    }

    /// A worker takes `queued` now: its service time is drawn (and held to
    /// the attempt's propagated deadline).
    #[inline(always)]
    pub(super) fn start(
        &mut self,
        queued: &Queued,
        spec: &ServerSpec,
        now: Nanos,
        environment: &mut Lookahead,
    ) -> Service {
        self.busy += 1;
        self.latest_start = now;
        let mut time = spec.service.sample(environment);
        if spec.service_per_busy > Nanos::ZERO {
            time += spec.service_per_busy * u64::from(self.busy);
        }
        if self.slows_down {
            let factor = spec.slowdown_at(now);
            if factor != 1.0 {
                time = round_ns(time.ticks() as f64 * factor);
            }
        }
        let mut expired = false;
        if queued.deadline != Nanos::MAX {
            (time, expired) = deadline_propagation::hold(queued.deadline, now, time);
        }
        Service {
            time,
            done: now.saturating_add(time),
            expired,
        }
    }

    /// A worker finished its attempt.
    #[inline(always)]
    pub(super) fn finished(&mut self) {
        self.busy -= 1;
    }

    /// The next queued attempt, if a worker is free for it, as the
    /// discipline chooses; attempts it drops on the way are left for
    /// [`Self::take_dropped`].
    #[inline(always)]
    pub(super) fn take_next(
        &mut self,
        spec: &ServerSpec,
        now: Nanos,
        environment: &mut Lookahead,
    ) -> Option<Queued> {
        if self.busy >= self.workers_at(spec, now) {
            return None;
        }
        self.discipline
            .take(&mut self.queue, now, &mut self.dropped, environment)
    }

    /// The attempts the discipline dropped, if any, to be refused; hand the
    /// emptied list back with [`Self::reuse_dropped`].
    #[inline(always)]
    pub(super) fn take_dropped(&mut self) -> Option<Vec<Queued>> {
        (!self.dropped.is_empty()).then(|| std::mem::take(&mut self.dropped))
    }

    /// The list [`Self::take_dropped`] gave, emptied, for its storage.
    pub(super) fn reuse_dropped(&mut self, dropped: Vec<Queued>) {
        debug_assert!(dropped.is_empty());
        self.dropped = dropped;
    }

    /// True if an attempt waits and a worker is free for it at `now`.
    pub(super) fn can_take(&self, spec: &ServerSpec, now: Nanos) -> bool {
        !self.queue.is_empty() && self.busy < self.workers_at(spec, now)
    }

    /// The queue and the busy workers now, with `retries_waiting` (the
    /// retries waiting out their delay, which the loop counts): the
    /// backlog a window records.
    #[inline(always)]
    pub(super) fn backlog(&self, retries_waiting: u32) -> Backlog {
        Backlog {
            queue: self.queue.len() as u64,
            busy: u64::from(self.busy),
            retries_waiting: u64::from(retries_waiting),
        }
    }

    /// Bytes of queue storage held (its capacity, not its use).
    pub(super) fn capacity_bytes(&self) -> usize {
        self.queue.capacity() * size_of::<Queued>()
    }
}
