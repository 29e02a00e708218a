//! The server model's server in wall-clock time, as a state machine with no
//! I/O and no clock of its own: the caller says what time it is. Workers,
//! the queue with its limit, shedding and discipline, service drawn when a
//! worker takes an attempt, success decided when it completes (the model's
//! own [`ServerSpec::failure_share`]), capacity drops and slowdowns from the
//! spec's triggers. `herdsim serve` drives it from real threads; the tests
//! drive it from a plain counter.
//!
//! Each waiting attempt carries a `T`, the caller's way to reach its client
//! (a reply channel in the server, a number in the tests).

use std::collections::VecDeque;

use herdsim::base::draws::Draws;
use herdsim::base::lookahead::Lookahead;
use herdsim::base::seeding::job_rng;
use herdsim::control::queue_discipline::{self, Waiting};
use herdsim::control::shed_wait::sheds;
use herdsim::model::server::{Nanos, ServerSpec, round_ns};

use crate::window_series::WindowSeries;

/// An attempt in the queue.
#[derive(Debug)]
struct Waiter<T> {
    ticket: T,
    arrived: Nanos,
}

impl<T> Waiting for Waiter<T> {
    fn arrived(&self) -> Nanos {
        self.arrived
    }
}

/// An attempt a worker holds, from `started` for `service` ns.
#[derive(Debug)]
pub struct Job<T> {
    pub ticket: T,
    pub arrived: Nanos,
    pub started: Nanos,
    pub service: Nanos,
}

impl<T> Job<T> {
    /// When the model says the worker is done with it.
    pub fn done(&self) -> Nanos {
        self.started.saturating_add(self.service)
    }
}

/// What the server does with an attempt that reaches it.
#[derive(Debug)]
pub enum Admission<T> {
    /// A worker took it now.
    Started(Job<T>),
    /// It waits in the queue.
    Queued,
    /// Refused at once: the queue is full or its expected wait is past the
    /// shedding bound.
    Refused(T),
}

/// A worker finished an attempt.
#[derive(Debug)]
pub struct Finished<T> {
    /// The finished attempt's client, and whether it succeeded.
    pub ticket: T,
    pub succeeded: bool,
    /// The attempt the same worker takes next, if one waits.
    pub next: Option<Job<T>>,
    /// Attempts the discipline dropped on the way (refused).
    pub refused: Vec<T>,
}

/// The server: its workers, queue and draws.
pub struct Station<T> {
    spec: ServerSpec,
    queue: VecDeque<Waiter<T>>,
    busy: u32,
    discipline: queue_discipline::Server,
    dropped: Vec<Waiter<T>>,
    draws: Lookahead,
    mean_service: f64,
    /// When a worker last started on an attempt (a failure that ends at
    /// the next start lasts while this is inside its window).
    latest_start: Nanos,
    series: WindowSeries,
}

impl<T> Station<T> {
    /// An idle server of `spec`, drawing from the stream of `seed`.
    pub fn new(spec: ServerSpec, seed: u64) -> Self {
        Station {
            queue: VecDeque::new(),
            busy: 0,
            discipline: spec.discipline.server(),
            dropped: Vec::new(),
            draws: Lookahead::new(job_rng(seed)),
            mean_service: spec.service.mean(),
            latest_start: Nanos::ZERO,
            series: WindowSeries::new(spec.window),
            spec,
        }
    }

    /// The spec it serves.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// What it counted, window by window.
    pub fn series(&self) -> &WindowSeries {
        &self.series
    }

    /// Attempts waiting now.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Workers busy now (a capacity drop lets work in hand finish, so this
    /// can exceed the workers for a while).
    pub fn busy(&self) -> u32 {
        self.busy
    }

    /// Brings the windows up to `now` with the state as it stands.
    fn advance(&mut self, now: Nanos) {
        self.series
            .advance(now, self.queue.len() as u64, u64::from(self.busy));
    }

    /// An attempt for `ticket` reaches the server at `now`.
    pub fn arrive(&mut self, now: Nanos, ticket: T) -> Admission<T> {
        self.advance(now);
        self.series.attempt_arrived();
        let workers = self.spec.workers_at(now);
        if self.busy < workers {
            let waiter = Waiter {
                ticket,
                arrived: now,
            };
            return Admission::Started(self.start(now, waiter));
        }
        let full = self
            .spec
            .queue_limit
            .is_some_and(|limit| self.queue.len() >= limit as usize);
        let shed = self
            .spec
            .shed_wait
            .is_some_and(|bound| sheds(self.queue.len() + 1, workers, self.mean_service, bound));
        if full || shed {
            self.series.rejected(1);
            return Admission::Refused(ticket);
        }
        self.queue.push_back(Waiter {
            ticket,
            arrived: now,
        });
        self.series.queued(self.queue.len() as u64);
        Admission::Queued
    }

    /// A worker takes `waiter` at `now`: its service time is drawn, as the
    /// simulator draws it (slowed by a slowdown covering `now`).
    fn start(&mut self, now: Nanos, waiter: Waiter<T>) -> Job<T> {
        self.busy += 1;
        self.latest_start = now;
        let mut service = self.spec.service.sample(&mut self.draws);
        if !self.spec.service_per_busy.is_zero() {
            service += self.spec.service_per_busy * u64::from(self.busy);
        }
        let factor = self.spec.slowdown_at(now);
        if factor != 1.0 {
            service = round_ns(service.ticks() as f64 * factor);
        }
        Job {
            ticket: waiter.ticket,
            arrived: waiter.arrived,
            started: now,
            service,
        }
    }

    /// The worker holding `job` finished it at `now`: success is decided
    /// now, as the model decides it at completion, and the worker takes the
    /// next attempt the discipline gives, if the workers at `now` allow.
    pub fn finish(&mut self, now: Nanos, job: Job<T>) -> Finished<T> {
        self.advance(now);
        self.busy -= 1;
        let succeeded = match self.spec.failure_share(now, self.latest_start, |_| false) {
            None => false,
            Some(p) => p <= 0.0 || self.draws.unit_above_zero() > p,
        };
        self.series
            .completed(succeeded, now.saturating_sub(job.started));
        let (next, refused) = self.take_next(now);
        Finished {
            ticket: job.ticket,
            succeeded,
            next,
            refused,
        }
    }

    /// The next waiting attempt for a free worker at `now`, and what the
    /// discipline dropped on the way.
    fn take_next(&mut self, now: Nanos) -> (Option<Job<T>>, Vec<T>) {
        if self.busy >= self.spec.workers_at(now) {
            return (None, Vec::new());
        }
        let next = self
            .discipline
            .take(&mut self.queue, now, &mut self.dropped, &mut self.draws);
        let refused: Vec<T> = self.dropped.drain(..).map(|w| w.ticket).collect();
        self.series.rejected(refused.len() as u64);
        (next.map(|w| self.start(now, w)), refused)
    }

    /// Workers freed by a capacity drop's end take waiting attempts at
    /// `now`: the jobs started, and attempts dropped on the way.
    pub fn take_idle(&mut self, now: Nanos) -> (Vec<Job<T>>, Vec<T>) {
        self.advance(now);
        let (mut jobs, mut refused) = (Vec::new(), Vec::new());
        while !self.queue.is_empty() && self.busy < self.spec.workers_at(now) {
            let (job, dropped) = self.take_next(now);
            refused.extend(dropped);
            match job {
                Some(job) => jobs.push(job),
                None => break,
            }
        }
        (jobs, refused)
    }

    /// Closes the windows up to `now` (the end of the serve).
    pub fn close(&mut self, now: Nanos) {
        self.advance(now);
        self.series
            .close(self.queue.len() as u64, u64::from(self.busy));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herdsim::model::server::{Dist, NS_PER_MS, Service, Trigger, TriggerKind};

    fn spec(workers: u32, queue_limit: Option<u32>) -> ServerSpec {
        ServerSpec {
            workers: Some(workers),
            queue_limit,
            service: Service::One(Dist::Const(10 * NS_PER_MS)),
            window: 100 * NS_PER_MS,
            ..ServerSpec::default()
        }
    }

    /// Two workers take the first two attempts, the third waits, the fourth
    /// finds the queue of one full; a finishing worker takes the waiting one.
    #[test]
    fn workers_queue_and_limit_behave_as_the_model() {
        let mut s = Station::new(spec(2, Some(1)), 1);
        let ns = Nanos::from_ticks;
        let a = s.arrive(ns(0), 'a');
        let b = s.arrive(ns(1), 'b');
        assert!(matches!(s.arrive(ns(2), 'c'), Admission::Queued));
        assert!(matches!(s.arrive(ns(3), 'd'), Admission::Refused('d')));
        let (Admission::Started(a), Admission::Started(_b)) = (a, b) else {
            panic!("both workers should take the first attempts");
        };
        assert_eq!(a.done(), 10 * NS_PER_MS);
        let f = s.finish(a.done(), a);
        assert!(f.succeeded && f.ticket == 'a');
        let next = f.next.expect("the waiting attempt is taken");
        assert_eq!(
            (next.ticket, next.arrived, next.started),
            ('c', ns(2), 10 * NS_PER_MS)
        );
        assert_eq!(s.busy(), 2);
        assert_eq!(s.queue_len(), 0);
    }

    /// An outage fails what completes inside it; a capacity drop holds
    /// waiting attempts until it ends, and a slowdown stretches service.
    #[test]
    fn triggers_act_in_the_stations_time() {
        let mut sp = spec(1, None);
        sp.triggers = vec![
            Trigger {
                kind: TriggerKind::Outage,
                from: 5 * NS_PER_MS,
                to: 15 * NS_PER_MS,
            },
            Trigger {
                kind: TriggerKind::CapacityDrop(0),
                from: 10 * NS_PER_MS,
                to: 30 * NS_PER_MS,
            },
            Trigger {
                kind: TriggerKind::Slowdown(3.0),
                from: 30 * NS_PER_MS,
                to: 40 * NS_PER_MS,
            },
        ];
        let mut s = Station::new(sp, 1);
        let ns = Nanos::from_ticks;
        let Admission::Started(a) = s.arrive(ns(0), 1) else {
            panic!("an idle worker takes it")
        };
        assert!(matches!(s.arrive(ns(1), 2), Admission::Queued));
        let f = s.finish(a.done(), a);
        assert!(!f.succeeded, "completes inside the outage");
        assert!(f.next.is_none(), "no worker during the capacity drop");
        let (jobs, refused) = s.take_idle(20 * NS_PER_MS);
        assert!(jobs.is_empty() && refused.is_empty());
        let (mut jobs, _) = s.take_idle(30 * NS_PER_MS);
        let b = jobs.pop().expect("taken when the drop ends");
        assert_eq!(b.service, 30 * NS_PER_MS, "slowed threefold");
        assert!(s.finish(b.done(), b).succeeded);
    }
}
