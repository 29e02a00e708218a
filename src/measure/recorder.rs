//! Counts what a run measures as it happens, in one place for every model.

use crate::base::time::Micros;
use crate::measure::metrics::{RunMetrics, nearest_ranks};
use crate::measure::observer::{Observer, PROGRESS_EVERY};

/// Counts what a run measures as it happens.
pub struct Recorder {
    clients: u32,
    window: Micros,
    window_end: Micros,
    in_window: u64,
    peak_retries: u64,
    calls: u64,
    retries: u64,
    gave_up: u64,
    last_success_us: Micros,
    completions: Vec<Micros>,
    stopped: bool,
}

impl Recorder {
    /// A recorder for `clients` clients, counting peak retries in windows
    /// `window` µs wide.
    pub fn new(clients: u32, window: Micros) -> Self {
        Recorder {
            clients,
            window,
            window_end: Micros::ZERO,
            in_window: 0,
            peak_retries: 0,
            calls: 0,
            retries: 0,
            gave_up: 0,
            last_success_us: Micros::ZERO,
            completions: Vec::with_capacity(clients as usize),
            stopped: false,
        }
    }

    /// A call (attempt `attempt`) at `time`; calls arrive in time order.
    /// False if the observer stops the run here.
    #[inline]
    pub fn call<O: Observer>(&mut self, time: Micros, attempt: u32, observer: &mut O) -> bool {
        if (self.calls + 1).is_multiple_of(PROGRESS_EVERY)
            && !observer.progress(time, self.calls + 1)
        {
            self.calls += 1;
            self.stopped = true;
            return false;
        }
        self.count_calls(time, attempt, 1);
        true
    }

    /// `count` calls (attempt `attempt`) at `time`, as `count` calls to
    /// [`Recorder::call`] would record them. Returns how many were made: all
    /// of them, or those before the call at which the observer stopped the
    /// run.
    pub fn calls<O: Observer>(
        &mut self,
        time: Micros,
        attempt: u32,
        count: u32,
        observer: &mut O,
    ) -> u32 {
        let mut made = 0;
        loop {
            let left = u64::from(count - made);
            // The next progress check falls on the `until`-th call from here.
            let until = PROGRESS_EVERY - self.calls % PROGRESS_EVERY;
            if left < until {
                self.count_calls(time, attempt, left);
                return count;
            }
            self.count_calls(time, attempt, until - 1);
            made += (until - 1) as u32;
            if !self.call(time, attempt, observer) {
                return made;
            }
            made += 1;
        }
    }

    /// Counts `n` calls at `time` that need no progress check.
    #[inline]
    fn count_calls(&mut self, time: Micros, attempt: u32, n: u64) {
        self.calls += n;
        if attempt > 0 && n > 0 {
            self.retries += n;
            if time >= self.window_end {
                self.peak_retries = self.peak_retries.max(self.in_window);
                self.in_window = 0;
                self.window_end = (time / self.window + 1) * self.window;
            }
            self.in_window += n;
        }
    }

    /// `count` clients that stopped without success.
    #[inline]
    pub fn give_up_many(&mut self, count: u32) {
        self.gave_up += u64::from(count);
    }

    /// A client done at `done` that first called at `first`.
    #[inline]
    pub fn success(&mut self, done: Micros, first: Micros) {
        self.completions.push(done - first);
        self.last_success_us = self.last_success_us.max(done);
    }

    /// A client that stopped without success.
    #[inline]
    pub fn give_up(&mut self) {
        self.gave_up += 1;
    }

    pub fn finish(mut self) -> RunMetrics {
        let peak_retries = self.peak_retries.max(self.in_window);
        let successes = self.completions.len() as u64;
        let completion_total_us = self
            .completions
            .iter()
            .map(|&c| u128::from(c.ticks()))
            .sum();
        let completion_max_us = self
            .completions
            .iter()
            .copied()
            .max()
            .unwrap_or(Micros::ZERO);
        let [completion_p50_us, completion_p99_us] =
            nearest_ranks(&mut self.completions, [50.0, 99.0]);
        RunMetrics {
            clients: u64::from(self.clients),
            calls: self.calls,
            retries: self.retries,
            successes,
            gave_up: self.gave_up,
            last_success_us: self.last_success_us,
            completion_total_us,
            completion_p50_us,
            completion_p99_us,
            completion_max_us,
            peak_retries,
            complete: !self.stopped,
        }
    }
}
