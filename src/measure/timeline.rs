//! Where a run's retries and successes land in time: the data behind
//! `--plot` timelines and the terminal sparkline.

use std::ops::Range;

use crate::base::time::Micros;
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::Observer;

/// Retries and successes counted in equal bins of time from t = 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Width of each bin, µs.
    pub bin_us: Micros,
    /// Retries sent in each bin, in order.
    pub retries: Vec<u64>,
    /// Calls that succeeded in each bin (each a client done: a client
    /// succeeds once), as long as `retries`.
    pub successes: Vec<u64>,
    /// The run's metrics.
    pub metrics: RunMetrics,
}

/// Counts retries into bins while a run goes, forwarding everything to an
/// inner observer. Growing, it doubles the bin width whenever the run outgrows
/// `2·max_bins` bins, so memory stays bounded however long the run (no jitter
/// at 100,000 clients is 5·10^9 retries); fixed, it counts up to its last bin
/// and drops later retries.
pub struct Binning<'a, O> {
    inner: &'a mut O,
    bin_us: Micros,
    counts: Vec<u64>,
    successes: Vec<u64>,
    max_bins: usize,
    grow: bool,
}

impl<'a, O: Observer> Binning<'a, O> {
    /// Bins starting `first_bin_us` wide, doubling to stay within
    /// `2·max_bins` bins.
    pub fn growing(inner: &'a mut O, first_bin_us: Micros, max_bins: usize) -> Self {
        Binning {
            inner,
            bin_us: first_bin_us.max(Micros::from_us(1)),
            counts: Vec::new(),
            successes: Vec::new(),
            max_bins: max_bins.max(1),
            grow: true,
        }
    }

    /// Bins exactly `bin_us` wide up to `end`.
    pub fn fixed(inner: &'a mut O, bin_us: Micros, end: Micros) -> Self {
        let bins = end.div_ceil(bin_us.max(Micros::from_us(1))) as usize;
        Binning {
            inner,
            bin_us: bin_us.max(Micros::from_us(1)),
            counts: vec![0; bins],
            successes: vec![0; bins],
            max_bins: bins,
            grow: false,
        }
    }

    /// Doubles the bin width while `time` would fall past `2·max_bins` bins.
    fn widen_for(&mut self, time: Micros) {
        let halve =
            |bins: &[u64]| -> Vec<u64> { bins.chunks(2).map(|pair| pair.iter().sum()).collect() };
        while time / self.bin_us >= 2 * self.max_bins as u64 {
            self.counts = halve(&self.counts);
            self.successes = halve(&self.successes);
            self.bin_us *= 2;
        }
    }

    /// The timeline, reaching at least the run's last success.
    pub fn finish(mut self, metrics: RunMetrics) -> Timeline {
        if self.grow {
            self.widen_for(metrics.last_success_us);
            let bins = (metrics.last_success_us / self.bin_us + 1) as usize;
            self.counts.resize(self.counts.len().max(bins), 0);
        }
        self.successes.resize(self.counts.len(), 0);
        Timeline {
            bin_us: self.bin_us,
            retries: self.counts,
            successes: self.successes,
            metrics,
        }
    }
}

impl<O: Observer> Binning<'_, O> {
    /// Counts `retries` retries and `successes` successful calls at `time`.
    #[inline]
    fn count(&mut self, time: Micros, retries: u64, successes: u64) {
        if self.grow {
            self.widen_for(time);
        }
        let i = (time / self.bin_us) as usize;
        if self.grow && i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
            self.successes.resize(i + 1, 0);
        }
        if let Some(count) = self.counts.get_mut(i) {
            *count += retries;
        }
        if let Some(count) = self.successes.get_mut(i) {
            *count += successes;
        }
    }
}

impl<O: Observer> Observer for Binning<'_, O> {
    #[inline]
    fn call(&mut self, time: Micros, client: u32, attempt: u32, served: bool) {
        if attempt > 0 || served {
            self.count(time, u64::from(attempt > 0), u64::from(served));
        }
        self.inner.call(time, client, attempt, served);
    }

    #[inline]
    fn delay(&mut self, client: u32, retry: u32, delay: Micros) {
        self.inner.delay(client, retry, delay);
    }

    #[inline]
    fn wave_calls(&mut self, time: Micros, clients: Range<u32>, attempt: u32, first_served: bool) {
        let retries = if attempt > 0 { clients.len() as u64 } else { 0 };
        let served = u64::from(first_served && !clients.is_empty());
        if retries > 0 || served > 0 {
            self.count(time, retries, served);
        }
        self.inner.wave_calls(time, clients, attempt, first_served);
    }

    #[inline]
    fn wave_delays(&mut self, clients: Range<u32>, retry: u32, delay: Micros) {
        self.inner.wave_delays(clients, retry, delay);
    }

    #[inline]
    fn progress(&mut self, time: Micros, calls: u64) -> bool {
        self.inner.progress(time, calls)
    }
}

/// "Nice" bin widths, µs: 1, 2, 5 times powers of ten.
pub fn nice_width(at_least: Micros) -> Micros {
    let mut unit = Micros::from_us(1);
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
    /// This timeline in bins of `bin_us` (a multiple of its own) up to `end`;
    /// `None` if its bins are wider than that.
    pub fn rebinned(&self, bin_us: Micros, end: Micros) -> Option<Timeline> {
        if !bin_us.is_multiple_of(self.bin_us) {
            return None;
        }
        let factor = (bin_us / self.bin_us) as usize;
        let regroup = |bins: &[u64]| {
            let mut wide: Vec<u64> = bins.chunks(factor).map(|c| c.iter().sum()).collect();
            wide.resize(end.div_ceil(bin_us) as usize, 0);
            wide
        };
        Some(Timeline {
            bin_us,
            retries: regroup(&self.retries),
            successes: regroup(&self.successes),
            metrics: self.metrics.clone(),
        })
    }

    /// A shared bin width and end for runs lasting `spans` µs: the end is the
    /// longest span, but no more than twice the median one, so one run that
    /// lasts hours (no jitter) does not flatten the others; the width is the
    /// smallest `first_bin_us·2^k` giving at most `max_bins` bins.
    pub fn shared_bins(
        spans: &[Micros],
        first_bin_us: Micros,
        max_bins: usize,
    ) -> (Micros, Micros) {
        let mut sorted = spans.to_vec();
        sorted.sort_unstable();
        let median = sorted
            .get(sorted.len() / 2)
            .copied()
            .unwrap_or(Micros::from_us(1))
            .max(Micros::from_us(1));
        let end = sorted
            .last()
            .copied()
            .unwrap_or(Micros::from_us(1))
            .min(median.saturating_mul(2))
            .max(Micros::from_us(1));
        let mut bin = first_bin_us.max(Micros::from_us(1));
        while end.div_ceil(bin) > max_bins as u64 {
            bin *= 2;
        }
        (bin, end.div_ceil(bin) * bin)
    }

    /// Retries per ms in each bin.
    pub fn rates_per_ms(&self) -> Vec<f64> {
        let ms = self.bin_us.ticks() as f64 / 1e3;
        self.retries.iter().map(|&n| n as f64 / ms).collect()
    }

    /// The share of the run's clients that have succeeded by the end of each
    /// bin, 0 to 1 (0 throughout without clients).
    pub fn succeeded_shares(&self) -> Vec<f64> {
        let clients = self.metrics.clients.max(1) as f64;
        self.successes
            .iter()
            .scan(0u64, |done, &n| {
                *done += n;
                Some(*done as f64 / clients)
            })
            .collect()
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

    #[test]
    fn sparklines_scale_to_the_highest_cell() {
        let t = Timeline {
            bin_us: Micros::from_us(1),
            retries: vec![8, 0, 4, 1],
            successes: vec![0; 4],
            metrics: RunMetrics::default(),
        };
        assert_eq!(t.sparkline(4), "█ ▄▁");
        assert_eq!(t.sparkline(2).chars().count(), 2);
    }
}
