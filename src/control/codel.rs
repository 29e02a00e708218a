//! CoDel, controlled delay (Nichols and Jacobson; RFC 8289), as the queue
//! discipline of the server: drop attempts from the head while the sojourn
//! of those leaving has stayed above `target` (5 ms) for an `interval`
//! (100 ms), more often the longer it stays (the next drop
//! interval / √count later), until a sojourn falls below the target.
//!
//! RFC 8289's pseudocode, with requests for packets: its "at most one MTU
//! left in the queue" test is "at most one attempt left waiting". A dropped
//! attempt is answered at once with a rejection (an RPC server sheds with
//! an overload error; the client does not wait out its timeout).

use std::collections::VecDeque;

use crate::control::queue_discipline::Waiting;
use crate::control::{Nanos, ServerAbout};

/// Listed by `herdsim controls`.
pub const ABOUT: ServerAbout = ServerAbout {
    key: "discipline",
    syntax: "codel:TARGET,interval:DURATION (RFC 8289: codel:5ms,interval:100ms)",
    source: "Nichols and Jacobson, CoDel (RFC 8289)",
    rule: "once sojourns have stayed above TARGET for an interval, drop from the head \
           (answered as rejections), the next drop interval/√count later",
};

/// CoDel's state.
#[derive(Debug, Clone)]
pub struct CoDel {
    target: Nanos,
    interval: Nanos,
    /// When the sojourn, above the target since, will have stayed there an
    /// interval; `None` while it is below.
    first_above: Option<Nanos>,
    /// In the dropping state, when the next drop is due.
    drop_next: Nanos,
    dropping: bool,
    count: u32,
    last_count: u32,
}

impl CoDel {
    /// Not dropping.
    pub fn new(target: Nanos, interval: Nanos) -> Self {
        CoDel {
            target,
            interval,
            first_above: None,
            drop_next: Nanos::ZERO,
            dropping: false,
            count: 0,
            last_count: 0,
        }
    }

    /// True while it is dropping.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    fn control_law(&self, t: Nanos) -> Nanos {
        t + Nanos::from_ticks(
            (self.interval.ticks() as f64 / f64::from(self.count.max(1)).sqrt()) as u64,
        )
    }

    /// RFC 8289's `dodequeue`: the head, and whether it may be dropped.
    fn head<T: Waiting>(&mut self, queue: &mut VecDeque<T>, now: Nanos) -> (Option<T>, bool) {
        let Some(item) = queue.pop_front() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now.saturating_sub(item.arrived());
        if sojourn < self.target || queue.len() <= 1 {
            self.first_above = None;
            return (Some(item), false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.interval);
                (Some(item), false)
            }
            Some(at) => (Some(item), now >= at),
        }
    }

    /// RFC 8289's `dequeue`: the attempt a free worker takes at `now`;
    /// those dropped on the way go to `dropped`.
    pub fn take<T: Waiting>(
        &mut self,
        queue: &mut VecDeque<T>,
        now: Nanos,
        dropped: &mut Vec<T>,
    ) -> Option<T> {
        let (mut item, mut ok_to_drop) = self.head(queue, now);
        if item.is_none() {
            self.dropping = false;
            return None;
        }
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                dropped.extend(item.take());
                self.count += 1;
                (item, ok_to_drop) = self.head(queue, now);
                if item.is_none() || !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok_to_drop {
            dropped.extend(item.take());
            (item, _) = self.head(queue, now);
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * self.interval {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now);
            self.last_count = self.count;
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = Nanos::from_ms(1);

    // Test queues hold arrival times (`Waiting` for `Nanos` is in
    // queue_discipline's tests).
    #[test]
    fn drops_only_after_an_interval_above_target_then_faster() {
        let mut c = CoDel::new(5 * MS, 100 * MS);
        let mut dropped = Vec::new();
        // A standing queue of attempts that arrived at 0.
        let mut queue: VecDeque<Nanos> = std::iter::repeat_n(Nanos::ZERO, 1_000).collect();
        // At 10 ms the sojourn (10 ms) is above target: the clock starts.
        assert_eq!(c.take(&mut queue, 10 * MS, &mut dropped), Some(Nanos::ZERO));
        assert!(dropped.is_empty() && !c.dropping());
        // Still within the interval: no drop.
        c.take(&mut queue, 109 * MS, &mut dropped);
        assert!(dropped.is_empty());
        // An interval above target: one drop, and it is dropping.
        c.take(&mut queue, 110 * MS, &mut dropped);
        assert_eq!(dropped.len(), 1);
        assert!(c.dropping());
        // The next drop is interval/√1 later; then interval/√2 after that.
        c.take(&mut queue, 209 * MS, &mut dropped);
        assert_eq!(dropped.len(), 1);
        c.take(&mut queue, 210 * MS, &mut dropped);
        assert_eq!(dropped.len(), 2);
        c.take(
            &mut queue,
            210 * MS + Nanos::from_ticks(70_710_678),
            &mut dropped,
        );
        assert_eq!(dropped.len(), 3);
        // A young attempt at the head ends the dropping state.
        queue.push_front(300 * MS);
        c.take(&mut queue, 301 * MS, &mut dropped);
        assert!(!c.dropping());
        assert_eq!(dropped.len(), 3);
    }

    #[test]
    fn a_short_queue_is_never_dropped_from() {
        let mut c = CoDel::new(5 * MS, 100 * MS);
        let mut dropped = Vec::new();
        for t in 0..1_000 {
            // One attempt waiting, long ago: at most one left behind it.
            let mut queue: VecDeque<Nanos> = VecDeque::from([Nanos::ZERO]);
            c.take(&mut queue, t * MS, &mut dropped);
        }
        assert!(dropped.is_empty());
    }

    proptest::proptest! {
        /// CoDel never drops while sojourns stay under the target, never
        /// drops from a queue of at most two (one taken, one left), and
        /// every attempt is either taken, dropped or still waiting.
        #[test]
        fn drops_need_a_long_queue_of_stale_attempts(
            steps in proptest::collection::vec((0u64..20, 0usize..4), 1..300),
        ) {
            let mut c = CoDel::new(5 * MS, 100 * MS);
            let mut queue: VecDeque<Nanos> = VecDeque::new();
            let (mut now, mut arrived, mut taken, mut dropped) = (Nanos::ZERO, 0usize, 0usize, Vec::new());
            for (gap_ms, arrivals) in steps {
                now += gap_ms * MS;
                for _ in 0..arrivals {
                    queue.push_back(now);
                    arrived += 1;
                }
                let before = (queue.len(), dropped.len());
                let fresh = queue.iter().all(|&t| now - t < 5 * MS);
                taken += usize::from(c.take(&mut queue, now, &mut dropped).is_some());
                if before.0 <= 2 || fresh {
                    proptest::prop_assert_eq!(dropped.len(), before.1);
                }
                proptest::prop_assert_eq!(arrived, taken + dropped.len() + queue.len());
            }
        }
    }
}
