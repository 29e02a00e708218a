//! Load shedding by expected wait: the server refuses an arriving attempt
//! at once when the queue it would join is expected to take longer than a
//! bound to clear, queue length / workers × mean service time. A bound on
//! the wait, rather than on the queue's length, says what clients feel: an
//! attempt that would wait past its timeout is better refused than served
//! to nobody.

use crate::base::time::Nanos;
use crate::control::ServerAbout;

/// Listed by `herdsim controls`.
pub const ABOUT: ServerAbout = ServerAbout {
    key: "shed_wait",
    syntax: "DURATION (such as 100ms)",
    source: "load shedding by expected queueing delay",
    rule: "refuse an arriving attempt at once when queue / workers × mean service > DURATION",
};

/// True if an attempt arriving at a queue of `waiting` attempts, served by
/// `workers` workers of `mean_service` ns on average, would wait longer
/// than `bound`.
pub fn sheds(waiting: usize, workers: u32, mean_service: f64, bound: Nanos) -> bool {
    waiting as f64 / f64::from(workers.max(1)) * mean_service > bound.ticks() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_once_the_expected_wait_passes_the_bound() {
        // 4 workers of 1 ms: 40 waiting clear in 10 ms.
        let ten_ms = Nanos::from_ms(10);
        assert!(!sheds(40, 4, 1e6, ten_ms));
        assert!(sheds(41, 4, 1e6, ten_ms));
        assert!(!sheds(0, 1, 1e6, Nanos::ZERO));
        assert!(sheds(1, 1, 1e6, Nanos::ZERO));
    }

    proptest::proptest! {
        /// Admitting while `sheds` is false keeps the expected wait of the
        /// last admitted within the bound, whatever the workers and service.
        #[test]
        fn what_it_admits_waits_at_most_the_bound(
            workers in 1u32..64, mean_us in 1u64..10_000, bound_us in 0u64..1_000_000,
        ) {
            let (mean, bound) = (mean_us as f64 * 1e3, Nanos::from_us(bound_us));
            let mut waiting = 0usize;
            while !sheds(waiting + 1, workers, mean, bound) && waiting < 1_000_000 {
                waiting += 1;
            }
            proptest::prop_assert!(waiting as f64 / f64::from(workers) * mean <= bound.ticks() as f64);
            proptest::prop_assert!(sheds(waiting + 1, workers, mean, bound) || waiting == 1_000_000);
        }
    }
}
