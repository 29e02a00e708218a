//! The `slot` resource: seed 002's contended dependency.

use crate::time::Micros;

/// Nanoseconds per microsecond: the slot keeps its clock in ns so that a
/// fractional capacity (3 requests/ms is a 333.333 µs service time) loses at
/// most 0.5 ns per served call instead of rounding every slot to whole µs.
const NS_PER_US: u64 = 1_000;

/// A resource that serves one call at a time, `capacity` calls per ms.
///
/// A call at time `t` succeeds iff `t ≥ free_at`, and then occupies the
/// resource for one service time `S = 1/capacity` ms. A failed call costs no
/// time (it is rejected at once, as by a full queue or a 503).
#[derive(Debug, Clone)]
pub struct SlotResource {
    service_ns: u64,
    free_at_ns: u64,
}

impl SlotResource {
    /// A free resource with the given service time in ns.
    pub fn new(service_ns: u64) -> Self {
        assert!(service_ns > 0, "service time must be positive");
        SlotResource {
            service_ns,
            free_at_ns: 0,
        }
    }

    /// The service time for `capacity_per_ms` requests per millisecond, in ns
    /// (rounded to the nearest ns).
    pub fn service_ns_for(capacity_per_ms: f64) -> u64 {
        (1e6 / capacity_per_ms).round().max(1.0) as u64
    }

    /// Offers a call at `t`; true if it is served.
    #[inline]
    pub fn call(&mut self, t: Micros) -> bool {
        let now = t.saturating_mul(NS_PER_US);
        if now >= self.free_at_ns {
            self.free_at_ns = now + self.service_ns;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_per_service_time() {
        let mut r = SlotResource::new(SlotResource::service_ns_for(1.0));
        assert!(r.call(0));
        assert!(!r.call(0));
        assert!(!r.call(999));
        assert!(r.call(1_000));
        assert!(!r.call(1_999));
        assert!(r.call(5_000));
    }

    #[test]
    fn fractional_capacity_keeps_its_rate() {
        // 3 per ms: 333.333 µs slots. Offering a call every µs for 3 ms serves
        // exactly 9 (at 0, 334, 667, 1000, ...), not 9 ± rounding drift.
        let mut r = SlotResource::new(SlotResource::service_ns_for(3.0));
        let served = (0..3_000).filter(|&t| r.call(t)).count();
        assert_eq!(served, 9);
        let mut half = SlotResource::new(SlotResource::service_ns_for(0.5));
        assert_eq!((0..10_000).filter(|&t| half.call(t)).count(), 5);
    }
}
