//! What a drill measures, through the simulator's own recorder
//! ([`ServerRecorder`]) fed from a real clock: the same counts, windows,
//! latencies and verdict as `run`, so that the two report alike. The client
//! cannot see the server's queue and workers: its backlog is the attempts
//! it has in flight (sent, not yet answered: the server's queue and busy
//! workers plus what is on the wire) and its retries waiting out their
//! delay, and the series' `queue` column holds the first, `busy_workers` 0.

use std::sync::Mutex;
use std::time::Instant;

use herdsim::measure::server_metrics::ServerMetrics;
use herdsim::measure::server_recorder::{Backlog, ServerRecorder};
use herdsim::model::server::{Nanos, ServerSpec};

use crate::timing::{duration_of, nanos_of};

/// The recorder and the client's backlog, behind one lock.
struct Inner {
    rec: ServerRecorder,
    /// The window after the current one starts here.
    next_window_at: Nanos,
    /// False once the run passed the recorder's window bound.
    open: bool,
    in_flight: u64,
    retries_waiting: u64,
    peak_in_flight: u64,
}

impl Inner {
    fn backlog(&self) -> Backlog {
        Backlog {
            queue: self.in_flight,
            busy: 0,
            retries_waiting: self.retries_waiting,
        }
    }

    /// Enters the window of `now` if it moved on (before anything counts).
    fn at(&mut self, now: Nanos, window: Nanos) {
        if now >= self.next_window_at && self.open {
            let backlog = self.backlog();
            self.open = self.rec.enter_window(now, backlog);
            self.next_window_at = window.saturating_mul(now / window + 1);
        }
    }

    /// Brings the areas up to `now` before the backlog changes.
    fn before_change(&mut self, now: Nanos) {
        let backlog = self.backlog();
        self.rec.advance_areas(now, || backlog);
    }
}

/// A drill's measurements, shared by its requests.
pub struct LiveRecorder {
    inner: Mutex<Inner>,
    origin: Instant,
    window: Nanos,
}

/// One thing that happened to a request, for [`LiveRecorder::note`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happened {
    /// An open-loop request arrived (or a closed-loop one started).
    Arrived {
        open_loop: bool,
    },
    /// The controls refused an attempt.
    Refused,
    AttemptSent,
    /// An answer (or a timeout) ended the attempt in flight.
    AttemptEnded,
    /// The server refused the attempt (429, RESOURCE_EXHAUSTED).
    Rejected,
    TimedOut,
    RetryWaiting,
    RetryDue,
    /// The request made at `started` succeeded.
    Succeeded {
        started: Nanos,
    },
    /// The request made at `started` gave up.
    GaveUp {
        started: Nanos,
    },
}

impl LiveRecorder {
    /// Nothing measured of `spec`'s run yet; its clock starts now.
    pub fn new(spec: &ServerSpec) -> Self {
        LiveRecorder {
            inner: Mutex::new(Inner {
                rec: ServerRecorder::new(spec, true),
                next_window_at: Nanos::ZERO,
                open: true,
                in_flight: 0,
                retries_waiting: 0,
                peak_in_flight: 0,
            }),
            origin: Instant::now(),
            window: spec.window,
        }
    }

    /// Ns since the drill began.
    pub fn now(&self) -> Nanos {
        nanos_of(self.origin.elapsed())
    }

    /// The instant of drill time `t`.
    pub fn instant_of(&self, t: Nanos) -> Instant {
        self.origin + duration_of(t)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `what` as happening now: the time, read under the lock, so
    /// the recorder sees time only move on. Returns that time.
    pub fn note(&self, what: Happened) -> Nanos {
        let mut inner = self.lock();
        let now = self.now();
        inner.at(now, self.window);
        match what {
            Happened::Arrived { open_loop } => {
                inner.rec.request_made(open_loop.then_some(now));
                inner.rec.call_started(0);
            }
            Happened::Refused => inner.rec.refused(),
            Happened::AttemptSent => {
                inner.before_change(now);
                inner.in_flight += 1;
                inner.peak_in_flight = inner.peak_in_flight.max(inner.in_flight);
                inner.rec.attempt_sent(0);
            }
            Happened::AttemptEnded => {
                inner.before_change(now);
                inner.in_flight -= 1;
            }
            Happened::Rejected => inner.rec.rejected(),
            Happened::TimedOut => inner.rec.timed_out(0),
            Happened::RetryWaiting => {
                inner.before_change(now);
                inner.retries_waiting += 1;
            }
            Happened::RetryDue => {
                inner.before_change(now);
                inner.retries_waiting -= 1;
            }
            Happened::Succeeded { started } => inner.rec.succeeded(0, started, now),
            Happened::GaveUp { started } => inner.rec.gave_up(0, started, now),
        }
        now
    }

    /// Requests in flight or waiting to retry now.
    pub fn busy(&self) -> bool {
        let inner = self.lock();
        inner.in_flight + inner.retries_waiting > 0
    }

    /// The run's metrics as the simulator gives them, ended now; `stopped`
    /// says it was cut short (Ctrl-C, or its horizon with requests still
    /// in flight).
    pub fn finish(&self, spec: &ServerSpec, stopped: bool) -> ServerMetrics {
        let mut inner = self.lock();
        let now = self.now();
        inner.at(now, self.window);
        if stopped {
            inner.rec.stopped(None);
        }
        let backlog = inner.backlog();
        let peak = inner.peak_in_flight;
        let rec = std::mem::replace(&mut inner.rec, ServerRecorder::new(spec, true));
        rec.finish(spec, now, backlog, (peak, 0, 0))
    }
}
