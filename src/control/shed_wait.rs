//! Load shedding by expected wait: the server refuses an arriving attempt
//! at once when the queue it would join is expected to take longer than a
//! bound to clear, queue length / workers × mean service time. A bound on
//! the wait, rather than on the queue's length, says what clients feel: an
//! attempt that would wait past its timeout is better refused than served
//! to nobody.

/// True if an attempt arriving at a queue of `waiting` attempts, served by
/// `workers` workers of `mean_service` ns on average, would wait longer
/// than `bound` ns.
pub fn sheds(waiting: usize, workers: u32, mean_service: f64, bound: u64) -> bool {
    waiting as f64 / f64::from(workers.max(1)) * mean_service > bound as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_once_the_expected_wait_passes_the_bound() {
        // 4 workers of 1 ms: 40 waiting clear in 10 ms.
        assert!(!sheds(40, 4, 1e6, 10_000_000));
        assert!(sheds(41, 4, 1e6, 10_000_000));
        assert!(!sheds(0, 1, 1e6, 0));
        assert!(sheds(1, 1, 1e6, 0));
    }
}
