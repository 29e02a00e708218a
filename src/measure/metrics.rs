//! What one run measures, and the table of metric names every exporter uses.

use crate::base::time::{Micros, us_to_ms};

/// The raw counts and times of one run. Derived metrics (percentages, shares,
/// amplification) are computed by [`RunMetrics::values`], in one place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunMetrics {
    /// Clients in the run.
    pub clients: u64,
    /// Every attempt, first calls included.
    pub calls: u64,
    /// Attempts after a client's first call.
    pub retries: u64,
    /// Clients whose call eventually succeeded.
    pub successes: u64,
    /// Clients that stopped without success.
    pub gave_up: u64,
    /// Time of the last successful call, µs.
    pub last_success_us: Micros,
    /// Sum of per-client completion times (success − first call), µs.
    pub completion_total_us: u128,
    /// Median completion time (nearest rank), µs.
    pub completion_p50_us: Micros,
    /// 99th percentile completion time (nearest rank), µs.
    pub completion_p99_us: Micros,
    /// Longest completion time, µs.
    pub completion_max_us: Micros,
    /// The most retries sent inside one peak window.
    pub peak_retries: u64,
    /// False if the run was stopped before every client finished (a
    /// `--max-events` limit); its other fields then count what happened so far.
    pub complete: bool,
}

/// One reported metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// snake_case name with its unit, as in CSV headers and JSON keys.
    pub name: &'static str,
    /// What it is, for `--help`-style listings.
    pub description: &'static str,
    /// Decimals shown in human output.
    pub decimals: usize,
}

const fn metric(name: &'static str, decimals: usize, description: &'static str) -> Metric {
    Metric {
        name,
        description,
        decimals,
    }
}

/// Every metric, in report order. [`RunMetrics::values`] returns them in this
/// order.
pub const METRICS: [Metric; 14] = [
    metric("calls", 0, "every attempt, first calls included"),
    metric("retries", 0, "calls after each client's first"),
    metric("successes", 0, "clients whose call succeeded"),
    metric("gave_up", 0, "clients that stopped without success"),
    metric("success_rate", 3, "successes as a fraction of clients"),
    metric("last_success_ms", 1, "time of the last successful call"),
    metric(
        "completion_mean_ms",
        1,
        "mean time from first call to success",
    ),
    metric(
        "completion_p50_ms",
        1,
        "median time from first call to success",
    ),
    metric(
        "completion_p99_ms",
        1,
        "99th percentile time from first call to success",
    ),
    metric(
        "completion_max_ms",
        1,
        "longest time from first call to success",
    ),
    metric("peak_retries", 0, "most retries sent inside one window"),
    metric(
        "peak_retries_pct",
        2,
        "peak_retries as a percentage of clients",
    ),
    metric(
        "peak_retry_share",
        4,
        "peak_retries as a fraction of all retries",
    ),
    metric(
        "amplification",
        3,
        "calls per client: the mean number of attempts",
    ),
];

impl RunMetrics {
    /// Every metric's value, in [`METRICS`] order.
    pub fn values(&self) -> [f64; METRICS.len()] {
        let clients = self.clients as f64;
        let completion_mean_ms = if self.successes == 0 {
            0.0
        } else {
            self.completion_total_us as f64 / self.successes as f64 / 1e3
        };
        [
            self.calls as f64,
            self.retries as f64,
            self.successes as f64,
            self.gave_up as f64,
            self.successes as f64 / clients,
            us_to_ms(self.last_success_us),
            completion_mean_ms,
            us_to_ms(self.completion_p50_us),
            us_to_ms(self.completion_p99_us),
            us_to_ms(self.completion_max_us),
            self.peak_retries as f64,
            100.0 * self.peak_retries as f64 / clients,
            if self.retries == 0 {
                0.0
            } else {
                self.peak_retries as f64 / self.retries as f64
            },
            self.calls as f64 / clients,
        ]
    }
}

/// The nearest-rank percentile `p` (in (0, 100]) of `values`, reordering them;
/// 0 for an empty slice.
pub fn nearest_rank(values: &mut [Micros], p: f64) -> Micros {
    if values.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * values.len() as f64).ceil() as usize;
    let index = rank.clamp(1, values.len()) - 1;
    *values.select_nth_unstable(index).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<Micros> = (1..=100).rev().collect();
        assert_eq!(nearest_rank(&mut v, 50.0), 50);
        assert_eq!(nearest_rank(&mut v, 99.0), 99);
        assert_eq!(nearest_rank(&mut v, 100.0), 100);
        assert_eq!(nearest_rank(&mut [7], 50.0), 7);
        assert_eq!(nearest_rank(&mut [], 50.0), 0);
        assert_eq!(nearest_rank(&mut [1, 2, 3], 50.0), 2);
    }

    #[test]
    fn derived_metrics() {
        let m = RunMetrics {
            clients: 1_000,
            calls: 4_000,
            retries: 3_000,
            successes: 1_000,
            gave_up: 0,
            last_success_us: 12_345_000,
            completion_total_us: 5_000_000_000,
            completion_p50_us: 4_000_000,
            completion_p99_us: 11_000_000,
            completion_max_us: 12_345_000,
            peak_retries: 30,
            complete: true,
        };
        let v = m.values();
        let get = |name| v[METRICS.iter().position(|m| m.name == name).unwrap()];
        assert_eq!(get("last_success_ms"), 12_345.0);
        assert_eq!(get("completion_mean_ms"), 5_000.0);
        assert_eq!(get("peak_retries_pct"), 3.0);
        assert_eq!(get("peak_retry_share"), 0.01);
        assert_eq!(get("amplification"), 4.0);
    }
}
