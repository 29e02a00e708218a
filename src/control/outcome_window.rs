//! The outcomes of the attempts of a recent time window, with how many
//! failed: what Yandex's retry breaker and its classic circuit breaker both
//! judge by. Old outcomes leave only when a new one is recorded, as in both
//! originals; they differ only in which age is too old.

use std::collections::VecDeque;

use crate::control::Nanos;

/// Which age leaves the window when an outcome is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evict {
    /// Outcomes `window` old or older (the retry breaker's `>=`).
    AtWindow,
    /// Outcomes older than `window` (the circuit breaker's `>`).
    PastWindow,
}

/// Recent outcomes, oldest first, and the count of failures among them.
#[derive(Debug, Clone)]
pub struct OutcomeWindow {
    window: Nanos,
    evict: Evict,
    /// (time, failed).
    entries: VecDeque<(Nanos, bool)>,
    failed: u64,
}

impl OutcomeWindow {
    /// An empty window of `window` ns.
    pub fn new(window: Nanos, evict: Evict) -> Self {
        OutcomeWindow {
            window,
            evict,
            entries: VecDeque::new(),
            failed: 0,
        }
    }

    /// Records an outcome at `now`, dropping those too old first.
    pub fn record(&mut self, now: Nanos, failed: bool) {
        while let Some(&(t, old_failed)) = self.entries.front() {
            let age = now.saturating_sub(t);
            let too_old = match self.evict {
                Evict::AtWindow => age >= self.window,
                Evict::PastWindow => age > self.window,
            };
            if !too_old {
                break;
            }
            self.entries.pop_front();
            self.failed -= u64::from(old_failed);
        }
        self.entries.push_back((now, failed));
        self.failed += u64::from(failed);
    }

    /// Outcomes held.
    pub fn len(&self) -> u64 {
        self.entries.len() as u64
    }

    /// True if it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Failures among them.
    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// Failures per outcome; NaN when empty.
    pub fn failure_share(&self) -> f64 {
        self.failed as f64 / self.entries.len() as f64
    }

    /// The outcomes held, oldest first: (time, failed).
    pub fn entries(&self) -> impl Iterator<Item = &(Nanos, bool)> {
        self.entries.iter()
    }

    /// Forgets every outcome.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.failed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_drops_its_own_age() {
        for (evict, kept) in [(Evict::AtWindow, 1), (Evict::PastWindow, 2)] {
            let mut w = OutcomeWindow::new(Nanos::from_ticks(10), evict);
            w.record(Nanos::ZERO, true);
            // Exactly a window later: `>=` drops it, `>` keeps it.
            w.record(Nanos::from_ticks(10), false);
            assert_eq!(w.len(), kept, "{evict:?}");
            assert_eq!(w.failed(), kept - 1);
            w.record(Nanos::from_ticks(21), false);
            assert_eq!((w.len(), w.failed()), (1, 0), "{evict:?}");
            w.clear();
            assert!(w.is_empty() && w.failure_share().is_nan());
        }
    }
}
