//! Where a run's retries land in time: the data behind `--plot` timelines and
//! the terminal sparkline.

use crate::engine::{Observer, Seeds, simulate_observed};
use crate::metrics::RunMetrics;
use crate::spec::RunSpec;
use crate::time::Micros;

/// Retries counted in equal bins of time from t = 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Width of each bin, µs.
    pub bin_us: Micros,
    /// Retries sent in each bin, in order.
    pub retries: Vec<u64>,
    /// The run's metrics.
    pub metrics: RunMetrics,
}

/// Records every retry's time.
#[derive(Default)]
struct RetryTimes(Vec<Micros>);

impl Observer for RetryTimes {
    fn call(&mut self, time: Micros, _client: u32, attempt: u32, _served: bool) {
        if attempt > 0 {
            self.0.push(time);
        }
    }
}

/// "Nice" bin widths, µs: 1, 2, 5 times powers of ten.
fn nice_width(at_least: Micros) -> Micros {
    let mut unit = 1;
    loop {
        for step in [1, 2, 5] {
            if step * unit >= at_least {
                return step * unit;
            }
        }
        unit *= 10;
    }
}

impl Timeline {
    /// The retries of one run of `spec` with `seeds`, in at most `max_bins`
    /// bins of a 1-2-5 width no narrower than the spec's peak window, spanning
    /// the run up to its last call.
    pub fn of_run(spec: &RunSpec, seeds: Seeds, max_bins: usize) -> Timeline {
        let mut times = RetryTimes::default();
        let metrics = simulate_observed(spec, seeds, &mut times);
        let end = times
            .0
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(metrics.last_success_us)
            + 1;
        Self::of_times(&times.0, end, spec.window(), max_bins, metrics)
    }

    /// Bins `times` (all below `end`) as [`Timeline::of_run`] does.
    pub fn of_times(
        times: &[Micros],
        end: Micros,
        window: Micros,
        max_bins: usize,
        metrics: RunMetrics,
    ) -> Timeline {
        let bin_us = nice_width(end.div_ceil(max_bins.max(1) as u64).max(window));
        Self::binned(times, bin_us, end, metrics)
    }

    /// The retries of one run in bins of `bin_us` up to `end` (later retries
    /// are left out): timelines that share axes share their bins.
    pub fn of_run_binned(spec: &RunSpec, seeds: Seeds, bin_us: Micros, end: Micros) -> Timeline {
        let mut times = RetryTimes::default();
        let metrics = simulate_observed(spec, seeds, &mut times);
        Self::binned(&times.0, bin_us, end, metrics)
    }

    fn binned(times: &[Micros], bin_us: Micros, end: Micros, metrics: RunMetrics) -> Timeline {
        let mut retries = vec![0u64; end.div_ceil(bin_us) as usize];
        for &t in times.iter().filter(|&&t| t < end) {
            retries[(t / bin_us) as usize] += 1;
        }
        Timeline {
            bin_us,
            retries,
            metrics,
        }
    }

    /// A shared bin width and end for runs lasting `spans` µs: the end is the
    /// longest span, but no more than twice the median one, so one run that
    /// lasts hours (no jitter) does not flatten the others; at most
    /// `max_bins` bins of a 1-2-5 width no narrower than `window`.
    pub fn shared_bins(spans: &[Micros], window: Micros, max_bins: usize) -> (Micros, Micros) {
        let mut sorted = spans.to_vec();
        sorted.sort_unstable();
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(1).max(1);
        let end = sorted
            .last()
            .copied()
            .unwrap_or(1)
            .min(median.saturating_mul(2))
            .max(1);
        let bin = nice_width(end.div_ceil(max_bins.max(1) as u64).max(window));
        (bin, end.div_ceil(bin) * bin)
    }

    /// Retries per ms in each bin.
    pub fn rates_per_ms(&self) -> Vec<f64> {
        let ms = self.bin_us as f64 / 1e3;
        self.retries.iter().map(|&n| n as f64 / ms).collect()
    }

    /// The timeline as one line of block characters, each the mean of its
    /// share of bins, scaled to the highest: `▁▃█▆▃▁`.
    pub fn sparkline(&self, width: usize) -> String {
        const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
        let n = self.retries.len();
        if n == 0 || width == 0 {
            return String::new();
        }
        let cells = width.min(n);
        let sums: Vec<u64> = (0..cells)
            .map(|i| {
                self.retries[i * n / cells..(i + 1) * n / cells]
                    .iter()
                    .sum()
            })
            .collect();
        let max = sums.iter().copied().max().unwrap_or(0).max(1);
        sums.iter()
            .map(|&s| {
                if s == 0 {
                    ' '
                } else {
                    BLOCKS[((s * 8 - 1) / max).min(7) as usize]
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;

    #[test]
    fn bins_count_every_retry() {
        let spec = RunSpec::seed_002(PolicyKind::Full, 300);
        let t = Timeline::of_run(&spec, Seeds::for_job(1, 0, 0), 200);
        assert_eq!(t.retries.iter().sum::<u64>(), t.metrics.retries);
        assert!(t.retries.len() <= 200);
        assert!([1, 2, 5].contains(&(t.bin_us / 10u64.pow(t.bin_us.ilog10()))));
    }

    #[test]
    fn no_jitter_is_a_row_of_spikes() {
        // Waves at 100, 300, 700 ms ... each a spike in one bin.
        let spec = RunSpec::seed_002(PolicyKind::None, 4);
        let t = Timeline::of_run(&spec, Seeds::for_job(1, 0, 0), 1_000);
        assert_eq!(t.bin_us, 1_000);
        let spikes: Vec<(usize, u64)> = t
            .retries
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .collect();
        assert_eq!(spikes, [(100, 3), (300, 2), (700, 1)]);
    }

    #[test]
    fn sparklines_scale_to_the_highest_cell() {
        let m = RunSpec::seed_002(PolicyKind::Full, 1);
        let metrics = crate::simulate(&m, Seeds::for_job(0, 0, 0));
        let t = Timeline {
            bin_us: 1,
            retries: vec![8, 0, 4, 1],
            metrics,
        };
        assert_eq!(t.sparkline(4), "█ ▄▁");
        assert_eq!(t.sparkline(2).chars().count(), 2);
    }
}
