//! Adaptive LIFO (Facebook, "Fail at scale", 2015; Wangle's server queue):
//! serve first-in first-out while the queue is young, and last-in
//! first-out once the oldest waiting attempt has waited longer than a
//! threshold, so under overload the newest attempts, whose clients are
//! still waiting, are served first and the stale ones wait (and time out)
//! instead of burning workers.

use std::collections::VecDeque;

use crate::control::queue_discipline::Waiting;
use crate::control::{Nanos, ServerAbout};

/// Listed by `herdsim controls`.
pub const ABOUT: ServerAbout = ServerAbout {
    key: "discipline",
    syntax: "adaptive-lifo:THRESHOLD (such as adaptive-lifo:50ms)",
    source: "Facebook, \"Fail at scale\" (2015); Wangle's adaptive LIFO",
    rule: "FIFO while the oldest waiting attempt has waited at most THRESHOLD, then LIFO",
};

/// FIFO until the head has waited `threshold`, then LIFO.
#[derive(Debug, Clone, Copy)]
pub struct AdaptiveLifo {
    /// The head's wait that switches to LIFO, ns.
    pub threshold: Nanos,
}

impl AdaptiveLifo {
    /// The attempt a free worker takes at `now`.
    pub fn take<T: Waiting>(&self, queue: &mut VecDeque<T>, now: Nanos) -> Option<T> {
        let congested = queue
            .front()
            .is_some_and(|head| now.saturating_sub(head.arrived()) > self.threshold);
        if congested {
            queue.pop_back()
        } else {
            queue.pop_front()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_while_young_lifo_once_the_head_is_old() {
        let t = Nanos::from_ticks;
        let a = AdaptiveLifo { threshold: t(50) };
        let mut queue: VecDeque<Nanos> = VecDeque::from([0, 10, 20, 30].map(t));
        // At 50 the head has waited 50, not more: FIFO.
        assert_eq!(a.take(&mut queue, t(50)), Some(t(0)));
        // At 61 the head (10) has waited 51: LIFO.
        assert_eq!(a.take(&mut queue, t(61)), Some(t(30)));
        assert_eq!(a.take(&mut queue, t(61)), Some(t(20)));
        // The head is 10 still: LIFO takes it last.
        assert_eq!(a.take(&mut queue, t(61)), Some(t(10)));
        assert_eq!(a.take(&mut queue, t(61)), None);
    }

    proptest::proptest! {
        /// It takes the head while the head is young and the tail once it
        /// is old, and never anything else.
        #[test]
        fn takes_the_head_or_the_tail_by_the_heads_age(
            arrivals in proptest::collection::vec(0u64..1_000, 1..50),
            now in 1_000u64..2_000,
        ) {
            let mut sorted = arrivals.clone();
            sorted.sort_unstable();
            let mut queue: VecDeque<Nanos> = sorted.iter().copied().map(Nanos::from_ticks).collect();
            let a = AdaptiveLifo { threshold: Nanos::from_ticks(500) };
            let head = sorted[0];
            let expected = if now - head > 500 { *sorted.last().unwrap() } else { head };
            proptest::prop_assert_eq!(
                a.take(&mut queue, Nanos::from_ticks(now)),
                Some(Nanos::from_ticks(expected))
            );
        }
    }
}
