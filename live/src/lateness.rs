//! How late the live commands' timers fire: each wake-up's lateness past
//! its deadline, in a fixed histogram of whole microseconds (bounded
//! memory however long a run is), reported as median, p99 and maximum.
//! This is the testbed's own faithfulness, measured in every run: a
//! service sleep that ends late holds its worker longer than the model
//! says, an arrival sent late shifts the load, a timeout that fires late
//! keeps an attempt waiting longer.

use std::time::Duration;

/// Lateness up to this many µs is counted exactly; beyond, in one bucket
/// (the maximum is still exact).
const EXACT_US: usize = 10_000;

/// Wake-ups and how late each was.
#[derive(Debug, Clone)]
pub struct Lateness {
    /// counts[k]: wake-ups k µs late (the last: `EXACT_US` or more).
    counts: Vec<u64>,
    n: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            counts: vec![0; EXACT_US + 1],
            n: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    /// Counts one wake-up `late` past its deadline.
    pub fn record(&mut self, late: Duration) {
        let ns = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        let us = usize::try_from(ns / 1_000).unwrap_or(usize::MAX);
        self.counts[us.min(EXACT_US)] += 1;
        self.n += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Wake-ups counted.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q` quantile (0 to 1), µs, to the µs below it.
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (us, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return us as u64;
            }
        }
        EXACT_US as u64
    }

    /// The mean, µs.
    pub fn mean_us(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64 / 1e3
        }
    }

    /// One line: `n N, mean M µs, p50 A µs, p99 B µs, max C µs`.
    pub fn describe(&self) -> String {
        if self.n == 0 {
            return "none".to_string();
        }
        format!(
            "n {}, mean {:.0} µs, p50 {} µs, p99 {} µs, max {} µs",
            self.n,
            self.mean_us(),
            self.quantile_us(0.5),
            self.quantile_us(0.99),
            self.max_ns / 1_000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_count_whole_microseconds_and_the_tail_keeps_its_maximum() {
        let mut l = Lateness::default();
        assert_eq!(l.describe(), "none");
        // 98 wake-ups 10 µs late, one 500 µs, one 20 ms (past the exact
        // range): the median and p99 are exact, the maximum too.
        for _ in 0..98 {
            l.record(Duration::from_micros(10));
        }
        l.record(Duration::from_micros(500));
        l.record(Duration::from_millis(20));
        assert_eq!(l.count(), 100);
        assert_eq!(l.quantile_us(0.5), 10);
        assert_eq!(l.quantile_us(0.99), 500);
        assert_eq!(l.quantile_us(1.0), EXACT_US as u64);
        assert!((l.mean_us() - (980.0 + 500.0 + 20_000.0) / 100.0).abs() < 1e-9);
        assert_eq!(
            l.describe(),
            "n 100, mean 215 µs, p50 10 µs, p99 500 µs, max 20000 µs"
        );
    }
}
