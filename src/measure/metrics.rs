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
    /// The most retries inside one peak window: counted when sent, or on the
    /// occ model when the retry's write reaches the row (its call).
    pub peak_retries: u64,
    /// False if the run was stopped before every client finished (a
    /// `--max-events` limit); its other fields then count what happened so far.
    pub complete: bool,
}

/// One reported metric: a name with its unit (as in CSV headers and JSON
/// keys), a description, the decimals people see, and how it is computed
/// from a run's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Every attempt, first calls included.
    Calls,
    /// Calls after each client's first.
    Retries,
    /// Clients whose call succeeded.
    Successes,
    /// Clients that stopped without success.
    GaveUp,
    /// Successes as a fraction of clients.
    SuccessRate,
    /// Time of the last successful call, ms.
    LastSuccessMs,
    /// Mean time from first call to success, ms.
    CompletionMeanMs,
    /// Median time from first call to success, ms.
    CompletionP50Ms,
    /// 99th percentile time from first call to success, ms.
    CompletionP99Ms,
    /// Longest time from first call to success, ms.
    CompletionMaxMs,
    /// Most retries sent inside one window.
    PeakRetries,
    /// Peak retries as a percentage of clients.
    PeakRetriesPct,
    /// Peak retries as a fraction of all retries.
    PeakRetryShare,
    /// Calls per client.
    Amplification,
}

/// What is said of a metric, and how it is computed.
struct MetricInfo {
    name: &'static str,
    decimals: usize,
    description: &'static str,
    value: fn(&RunMetrics) -> f64,
}

/// `part / whole`, 0 when there is no whole.
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 14] = [
        Metric::Calls,
        Metric::Retries,
        Metric::Successes,
        Metric::GaveUp,
        Metric::SuccessRate,
        Metric::LastSuccessMs,
        Metric::CompletionMeanMs,
        Metric::CompletionP50Ms,
        Metric::CompletionP99Ms,
        Metric::CompletionMaxMs,
        Metric::PeakRetries,
        Metric::PeakRetriesPct,
        Metric::PeakRetryShare,
        Metric::Amplification,
    ];

    fn info(self) -> MetricInfo {
        let (name, decimals, description, value): (_, _, _, fn(&RunMetrics) -> f64) = match self {
            Metric::Calls => ("calls", 0, "every attempt, first calls included", |m| {
                m.calls as f64
            }),
            Metric::Retries => ("retries", 0, "calls after each client's first", |m| {
                m.retries as f64
            }),
            Metric::Successes => ("successes", 0, "clients whose call succeeded", |m| {
                m.successes as f64
            }),
            Metric::GaveUp => ("gave_up", 0, "clients that stopped without success", |m| {
                m.gave_up as f64
            }),
            Metric::SuccessRate => (
                "success_rate",
                3,
                "successes as a fraction of clients",
                |m| m.successes as f64 / m.clients as f64,
            ),
            Metric::LastSuccessMs => (
                "last_success_ms",
                1,
                "time of the last successful call",
                |m| us_to_ms(m.last_success_us),
            ),
            Metric::CompletionMeanMs => (
                "completion_mean_ms",
                1,
                "mean time from first call to success",
                |m| {
                    if m.successes == 0 {
                        0.0
                    } else {
                        m.completion_total_us as f64 / m.successes as f64 / 1e3
                    }
                },
            ),
            Metric::CompletionP50Ms => (
                "completion_p50_ms",
                1,
                "median time from first call to success",
                |m| us_to_ms(m.completion_p50_us),
            ),
            Metric::CompletionP99Ms => (
                "completion_p99_ms",
                1,
                "99th percentile time from first call to success",
                |m| us_to_ms(m.completion_p99_us),
            ),
            Metric::CompletionMaxMs => (
                "completion_max_ms",
                1,
                "longest time from first call to success",
                |m| us_to_ms(m.completion_max_us),
            ),
            Metric::PeakRetries => (
                "peak_retries",
                0,
                "most retries inside one window (sent; on occ, when the write reaches the row)",
                |m| m.peak_retries as f64,
            ),
            Metric::PeakRetriesPct => (
                "peak_retries_pct",
                2,
                "peak_retries as a percentage of clients",
                |m| 100.0 * m.peak_retries as f64 / m.clients as f64,
            ),
            Metric::PeakRetryShare => (
                "peak_retry_share",
                4,
                "peak_retries as a fraction of all retries",
                |m| share(m.peak_retries, m.retries),
            ),
            Metric::Amplification => (
                "amplification",
                3,
                "calls per client: the mean number of attempts",
                |m| m.calls as f64 / m.clients as f64,
            ),
        };
        MetricInfo {
            name,
            decimals,
            description,
            value,
        }
    }

    /// snake_case name with its unit, as in CSV headers and JSON keys.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// What it is, for `--help`-style listings.
    pub fn description(self) -> &'static str {
        self.info().description
    }

    /// Decimals shown in human output.
    pub fn decimals(self) -> usize {
        self.info().decimals
    }

    /// Its value in the run `metrics`.
    pub fn value(self, metrics: &RunMetrics) -> f64 {
        (self.info().value)(metrics)
    }

    /// The metric called `name` (user input: CSV columns, flags).
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// What reports need of a metric, whichever model it belongs to.
pub trait ReportedMetric: Copy {
    /// snake_case name with its unit.
    fn name(self) -> &'static str;
    /// Decimals shown in human output.
    fn decimals(self) -> usize;
    /// Whether reports show its median and quartiles beside its mean: a
    /// time whose runs may fall in clusters (recovery at once, or a breaker
    /// cycle later), where a mean and its interval describe no run.
    fn spread_shown(self) -> bool {
        false
    }
}

impl ReportedMetric for Metric {
    fn name(self) -> &'static str {
        Metric::name(self)
    }
    fn decimals(self) -> usize {
        Metric::decimals(self)
    }
}

impl ReportedMetric for crate::measure::layer_metrics::LayerMetric {
    fn name(self) -> &'static str {
        crate::measure::layer_metrics::LayerMetric::name(self)
    }
    fn decimals(self) -> usize {
        crate::measure::layer_metrics::LayerMetric::decimals(self)
    }
}

impl ReportedMetric for crate::measure::server_metrics::ServerMetric {
    fn name(self) -> &'static str {
        crate::measure::server_metrics::ServerMetric::name(self)
    }
    fn decimals(self) -> usize {
        crate::measure::server_metrics::ServerMetric::decimals(self)
    }
    fn spread_shown(self) -> bool {
        use crate::measure::server_metrics::ServerMetric;
        matches!(
            self,
            ServerMetric::RecoveryMs | ServerMetric::ProjectedRecoveryMs
        )
    }
}

impl RunMetrics {
    /// Every metric's value, in [`Metric::ALL`] order.
    pub fn values(&self) -> [f64; Metric::ALL.len()] {
        Metric::ALL.map(|m| m.value(self))
    }
}

/// The nearest-rank percentile `p` (in (0, 100]) of `values`, reordering them;
/// 0 for an empty slice.
pub fn nearest_rank(values: &mut [Micros], p: f64) -> Micros {
    if values.is_empty() {
        return Micros::ZERO;
    }
    *values.select_nth_unstable(rank_index(values.len(), p)).1
}

/// The index of the nearest-rank percentile `p` among `len > 0` sorted
/// values.
fn rank_index(len: usize, p: f64) -> usize {
    let rank = (p / 100.0 * len as f64).ceil() as usize;
    rank.clamp(1, len) - 1
}

/// [`nearest_rank`] at each of `percentiles`, in ascending order, reordering
/// `values`: each selection searches only above the rank before it, so two
/// percentiles cost about one and a half selections, not two.
/// (Any ordered values: µs of the herd, ns of the server.)
pub fn nearest_ranks<T: Ord + Copy + Default, const N: usize>(
    values: &mut [T],
    percentiles: [f64; N],
) -> [T; N] {
    debug_assert!(percentiles.is_sorted(), "{percentiles:?}");
    let len = values.len();
    // Values before `from` are at most the last one selected, and the ones
    // from it on at least it, so the rank-`index` value overall is the
    // rank-`index − from` one of `values[from..]`.
    let mut from = 0;
    percentiles.map(|p| {
        if len == 0 {
            return T::default();
        }
        let index = rank_index(len, p).max(from);
        let value = *values[from..].select_nth_unstable(index - from).1;
        from = index;
        value
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<Micros> = (1..=100).rev().map(Micros::from_ticks).collect();
        assert_eq!(nearest_rank(&mut v, 50.0), Micros::from_us(50));
        assert_eq!(nearest_rank(&mut v, 99.0), Micros::from_us(99));
        assert_eq!(nearest_rank(&mut v, 100.0), Micros::from_us(100));
        assert_eq!(
            nearest_rank(&mut [Micros::from_us(7)], 50.0),
            Micros::from_us(7)
        );
        assert_eq!(nearest_rank(&mut [], 50.0), Micros::ZERO);
        assert_eq!(
            nearest_rank(
                &mut [Micros::from_us(1), Micros::from_us(2), Micros::from_us(3)],
                50.0
            ),
            Micros::from_us(2)
        );
    }

    /// The chained selections give each percentile's own nearest rank, on
    /// lists with ties, of every length from 0 to 60 (the second selection
    /// searches a tail: a wrong offset gives a wrong value at some length).
    #[test]
    fn nearest_ranks_are_each_percentiles_nearest_rank() {
        let mut draws = 0x9e37_79b9_7f4a_7c15_u64;
        for len in 0..=60 {
            for _ in 0..20 {
                let values: Vec<Micros> = (0..len)
                    .map(|_| {
                        draws = draws
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1);
                        Micros::from_ticks((draws >> 58) % 17)
                    })
                    .collect();
                let ps = [1.0, 50.0, 50.0, 99.0, 100.0];
                let each = ps.map(|p| nearest_rank(&mut values.clone(), p));
                assert_eq!(nearest_ranks(&mut values.clone(), ps), each, "{values:?}");
                let pair = [50.0, 99.0];
                let each = pair.map(|p| nearest_rank(&mut values.clone(), p));
                assert_eq!(nearest_ranks(&mut values.clone(), pair), each);
            }
        }
    }

    #[test]
    fn derived_metrics() {
        let m = RunMetrics {
            clients: 1_000,
            calls: 4_000,
            retries: 3_000,
            successes: 1_000,
            gave_up: 0,
            last_success_us: Micros::from_ms(12_345),
            completion_total_us: 5_000_000_000,
            completion_p50_us: Micros::from_s(4),
            completion_p99_us: Micros::from_s(11),
            completion_max_us: Micros::from_ms(12_345),
            peak_retries: 30,
            complete: true,
        };
        assert_eq!(Metric::LastSuccessMs.value(&m), 12_345.0);
        assert_eq!(Metric::CompletionMeanMs.value(&m), 5_000.0);
        assert_eq!(Metric::PeakRetriesPct.value(&m), 3.0);
        assert_eq!(Metric::PeakRetryShare.value(&m), 0.01);
        assert_eq!(Metric::Amplification.value(&m), 4.0);
        assert_eq!(m.values()[0], 4_000.0);
        for metric in Metric::ALL {
            assert_eq!(Metric::from_name(metric.name()), Some(metric));
        }
        assert_eq!(Metric::from_name("calls_mean"), None);
    }
}
