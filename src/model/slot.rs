//! The `slot` resource: seed 002's contended dependency.

use super::CallResource;
use crate::base::time::{Micros, Nanos, ns_of_us};

/// A resource that serves one call at a time, `capacity` calls per ms.
///
/// A call at time `t` succeeds iff `t ≥ free_at`, and then occupies the
/// resource for one service time `S = 1/capacity` ms. A failed call costs no
/// time (it is rejected at once, as by a full queue or a 503).
///
/// The slot keeps its clock in ns so that a fractional capacity (3
/// requests/ms is a 333.333 µs service time) loses at most 0.5 ns per served
/// call instead of rounding every slot to whole µs.
///
/// An optional outage window `[from, to)` makes every call inside it fail.
///
/// With hints on, the slot counts the clients it has rejected and not yet
/// served, and answers a rejection with the time its backlog needs:
/// the rest of the current service plus one service time per waiting client.
#[derive(Debug, Clone)]
pub struct SlotResource {
    service_ns: Nanos,
    free_at_ns: Nanos,
    down: Option<(Micros, Micros)>,
    /// Per client: rejected and not yet served (only with hints on).
    waiting_client: Vec<bool>,
    waiting: u64,
}

impl SlotResource {
    /// A free resource with the given service time in ns.
    pub fn new(service_ns: Nanos) -> Self {
        assert!(!service_ns.is_zero(), "service time must be positive");
        SlotResource {
            service_ns,
            free_at_ns: Nanos::ZERO,
            down: None,
            waiting_client: Vec::new(),
            waiting: 0,
        }
    }

    /// The same resource, keeping the backlog count behind its retry hints.
    pub fn with_hints(mut self, clients: u32) -> Self {
        self.waiting_client = vec![false; clients as usize];
        self
    }

    /// The same resource, failing every call in `[from, to)`.
    pub fn with_outage(mut self, down: Option<(Micros, Micros)>) -> Self {
        self.down = down;
        self
    }

    /// The service time for `capacity_per_ms` requests per millisecond, in ns
    /// (rounded to the nearest ns).
    pub fn service_ns_for(capacity_per_ms: f64) -> Nanos {
        Nanos::from_ticks((1e6 / capacity_per_ms).round().max(1.0) as u64)
    }

    /// Offers a call at `t`; true if it is served.
    #[inline]
    pub fn call(&mut self, t: Micros) -> bool {
        if let Some((from, to)) = self.down
            && (from..to).contains(&t)
        {
            return false;
        }
        let now = ns_of_us(t);
        if now >= self.free_at_ns {
            self.free_at_ns = now + self.service_ns;
            true
        } else {
            false
        }
    }
}

impl CallResource for SlotResource {
    #[inline]
    fn call(&mut self, t: Micros, client: u32, _attempt: u32) -> bool {
        let served = SlotResource::call(self, t);
        if let Some(waiting) = self.waiting_client.get_mut(client as usize)
            && *waiting == served
        {
            *waiting = !served;
            if served {
                self.waiting -= 1;
            } else {
                self.waiting += 1;
            }
        }
        served
    }

    fn retry_hint(&self, t: Micros) -> Micros {
        let busy_ns = self.free_at_ns.saturating_sub(ns_of_us(t));
        (busy_ns + self.service_ns * self.waiting).ceil_us()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_per_service_time() {
        let mut r = SlotResource::new(SlotResource::service_ns_for(1.0));
        assert!(r.call(Micros::ZERO));
        assert!(!r.call(Micros::ZERO));
        assert!(!r.call(Micros::from_us(999)));
        assert!(r.call(Micros::from_ms(1)));
        assert!(!r.call(Micros::from_us(1999)));
        assert!(r.call(Micros::from_ms(5)));
    }

    #[test]
    fn the_hint_is_the_backlog_of_rejected_clients() {
        let mut r = SlotResource::new(Nanos::from_ms(1)).with_hints(3);
        assert!(CallResource::call(&mut r, Micros::ZERO, 0, 0));
        assert!(!CallResource::call(&mut r, Micros::from_us(100), 1, 0));
        assert!(!CallResource::call(&mut r, Micros::from_us(100), 2, 0));
        assert!(
            !CallResource::call(&mut r, Micros::from_us(200), 2, 1),
            "a client counts once"
        );
        // 800 µs left of the current call, then two waiting clients of 1 ms.
        assert_eq!(r.retry_hint(Micros::from_us(200)), Micros::from_us(2800));
        assert!(CallResource::call(&mut r, Micros::from_ms(1), 1, 1));
        assert_eq!(r.retry_hint(Micros::from_ms(1)), Micros::from_ms(2));
    }

    #[test]
    fn every_call_inside_the_outage_window_fails() {
        let mut r = SlotResource::new(Nanos::from_ms(1))
            .with_outage(Some((Micros::from_ms(5), Micros::from_ms(9))));
        assert!(r.call(Micros::ZERO));
        assert!(!r.call(Micros::from_ms(5)));
        assert!(!r.call(Micros::from_us(8999)));
        assert!(r.call(Micros::from_ms(9)));
    }

    #[test]
    fn fractional_capacity_keeps_its_rate() {
        // 3 per ms: 333.333 µs slots. Offering a call every µs for 3 ms serves
        // exactly 9 (at 0, 334, 667, 1000, ...), not 9 ± rounding drift.
        let mut r = SlotResource::new(SlotResource::service_ns_for(3.0));
        let served = (0..3_000)
            .filter(|&t| r.call(Micros::from_ticks(t)))
            .count();
        assert_eq!(served, 9);
        let mut half = SlotResource::new(SlotResource::service_ns_for(0.5));
        assert_eq!(
            (0..10_000)
                .filter(|&t| half.call(Micros::from_ticks(t)))
                .count(),
            5
        );
    }
}
