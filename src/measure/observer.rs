//! Observers: what sees every call and delay of a run as it happens (tests,
//! timelines, progress and limits), at no cost when nothing observes.

use std::ops::Range;

use crate::base::time::Micros;

/// Sees every call and every delay of a run, for tests and pictures. The
/// default methods do nothing and compile away.
pub trait Observer {
    /// Client `client` made attempt `attempt` (0 is its first call) at `time`.
    #[inline]
    fn call(&mut self, _time: Micros, _client: u32, _attempt: u32, _served: bool) {}
    /// Client `client` will wait `delay` before retry `retry`.
    #[inline]
    fn delay(&mut self, _client: u32, _retry: u32, _delay: Micros) {}
    /// A wave (see [`crate::sim::wave`]): each of `clients`, in order, made
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
    /// The server model: each window's latency quantiles are wanted (a
    /// time series or a plot reads them). They cost a selection over each
    /// window's successes, about 3% of a run's instructions, so runs read
    /// only for their totals and counts leave them out (`None`).
    pub window_latencies: bool,
}

impl Watch<'static> {
    /// No event limit, no progress to tell and no window latencies (timed
    /// runs, tests): what `herdsim run` does without a series or a plot.
    pub const UNLIMITED: Watch<'static> = Watch {
        max_events: u64::MAX,
        on_progress: &|_, _| {},
        window_latencies: false,
    };
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
