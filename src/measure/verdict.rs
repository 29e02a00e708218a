//! A server run's verdict after its triggers (DESIGN Part three): recovered,
//! stuck or unresolved, judged over a patience window after the last
//! trigger's end so that it never depends on how long the load ran past it.
//!
//! The rule, in the words `herdsim metrics` and the docs repeat:
//! - The *baseline* is what the windows wholly before the first trigger saw:
//!   their success rate, their successes per window, and the mean and
//!   spread of a success's end-to-end latency.
//! - After the triggers, a window is judged by the requests made after the
//!   last trigger's end that ended in it ([`Window::judged_successes`]):
//!   whether the service serves its fresh traffic as before. Requests
//!   caught in the incident that finish late from their backoff are its
//!   tail, not the service's health (an SRE calls a service recovered when
//!   new requests are served, while stragglers still drain).
//! - A window is *healthy* when, pooled with the next two ([`BLOCK`]),
//!   against the baseline, its success rate, its
//!   successes (goodput) and its mean success latency are each no worse than
//!   the baseline less a small margin and four standard errors (so a healthy
//!   service fails a window's test about once in 30,000 windows by chance,
//!   while a degraded one fails it in every window it has enough requests to
//!   judge). For goodput and latency the standard error is the larger of
//!   the independent-sample one and the spread the baseline's own windows
//!   showed: a queue makes neighbouring requests' latencies move together,
//!   so a window's mean varies more than independent requests would. A window in which no request ended passes the rate and latency
//!   tests; the goodput test then judges it wherever the baseline saw enough
//!   successes per window to tell (16 or more).
//! - The *judged span* is the patience window `[E, E + patience)`, `E` the
//!   last trigger's end. Recovery is the first window of the span from which
//!   every window to the span's end (the last block's start) is healthy.
//! - **Recovered**: recovery comes within the first three quarters of the
//!   span (so the service held for at least the last quarter) and a request
//!   succeeded in that last quarter. **Stuck**: not so. **Unresolved**: the
//!   load (or the run's horizon) ended before the span did, so the run
//!   cannot tell.
//!
//! Nothing after `E + patience` is read, and a run's events up to a time do
//! not depend on how long its load lasts after it, so the verdict and the
//! recovery time are the same for any load that runs at least that long.

use crate::measure::server_metrics::Window;
use crate::model::server::Nanos;

/// Standard errors of the margin in every health test.
const Z: f64 = 4.0;
/// Success rate a healthy window may lose beyond sampling error.
const RATE_MARGIN: f64 = 0.01;
/// How many times the baseline's mean latency a healthy window's mean may
/// be (beyond sampling error). A queue's ordinary bursts move a 100 ms
/// window's mean well past twice the baseline at moderate load (an M/M/1
/// server at 50% showed windows at 3.4 times its mean, and the SRE case of
/// issue 33, 16 workers at 79%, at 1.6 times), while a draining backlog or
/// requests held at the client are ten to a million times slower.
const LATENCY_FACTOR: f64 = 4.0;
/// Consecutive windows pooled into the block each health test reads (300 ms
/// at the default window): an ordinary burst of one window, such as a
/// queue's long busy period (an M/M/1 server at 50% showed a window at 7.5
/// times its mean latency, 8 s after any trigger), is diluted rather than
/// read as a relapse, while a stuck service fails every block.
pub const BLOCK: usize = 3;
/// Baseline successes per window below which the goodput test is not made
/// (four standard errors of a Poisson count of 16 are its whole value).
const GOODPUT_MIN: f64 = 16.0;

/// How a run with triggers ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Healthy again, this long after the last trigger's end, ns.
    Recovered(Nanos),
    /// Still (or again) degraded late in the patience window.
    Stuck,
    /// The load or the horizon ended before the patience window did (or
    /// the window holds no whole window of the series).
    Unresolved,
}

impl Verdict {
    /// Its name, as the docs and tables say it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Recovered(_) => "recovered",
            Verdict::Stuck => "stuck",
            Verdict::Unresolved => "unresolved",
        }
    }
}

/// What the windows before the first trigger saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baseline {
    /// Successes per request ended (1 if none ended).
    pub success_rate: f64,
    /// Mean successes per window.
    pub successes_per_window: f64,
    /// Mean and standard deviation of a success's latency, ms; `None`
    /// without a success.
    pub latency_ms: Option<(f64, f64)>,
    /// The standard deviation of the baseline windows' mean latencies, ms
    /// (0 with fewer than two windows that had a success).
    pub window_latency_sd_ms: f64,
    /// The standard deviation of the baseline windows' successes.
    pub window_successes_sd: f64,
}

/// The sample standard deviation of `values` (0 for fewer than two).
fn sample_sd(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt()
}

impl Baseline {
    /// From the windows wholly before `first_trigger`.
    pub fn before(windows: &[Window], window: Nanos, first_trigger: Nanos) -> Baseline {
        let whole = ((first_trigger / window) as usize).min(windows.len());
        let before = &windows[..whole];
        let successes: u64 = before.iter().map(|w| w.judged_successes).sum();
        let ended: u64 = successes + before.iter().map(|w| w.judged_gave_up).sum::<u64>();
        let success_rate = if ended == 0 {
            1.0
        } else {
            successes as f64 / ended as f64
        };
        let latency_ms = (successes > 0).then(|| {
            let n = successes as f64;
            let sum: f64 = before
                .iter()
                .map(|w| w.judged_latency_sum_ns as f64 / 1e6)
                .sum();
            let squares: f64 = before.iter().map(|w| w.judged_latency_squares_ms2).sum();
            let mean = sum / n;
            let variance = if successes > 1 {
                ((squares - n * mean * mean) / (n - 1.0)).max(0.0)
            } else {
                0.0
            };
            (mean, variance.sqrt())
        });
        let window_means: Vec<f64> = before
            .iter()
            .filter_map(Window::judged_latency_mean_ms)
            .collect();
        let window_successes: Vec<f64> = before.iter().map(|w| w.judged_successes as f64).collect();
        Baseline {
            success_rate,
            successes_per_window: if whole == 0 {
                0.0
            } else {
                successes as f64 / whole as f64
            },
            latency_ms,
            window_latency_sd_ms: sample_sd(&window_means),
            window_successes_sd: sample_sd(&window_successes),
        }
    }

    /// Is the block of windows starting at `i` ([`BLOCK`] of them, pooled)
    /// as good as the baseline? `None` if fewer than that remain.
    pub fn block_healthy(&self, windows: &[Window], i: usize) -> Option<bool> {
        let block = windows.get(i..i + BLOCK)?;
        let mut pooled = Window::default();
        for w in block {
            pooled.add_counts(w);
        }
        Some(self.healthy(&pooled, BLOCK))
    }

    /// Is `w`, the counts of `span` windows pooled, as good as the
    /// baseline, within sampling error?
    pub fn healthy(&self, w: &Window, span: usize) -> bool {
        let (successes, ended) = (w.judged_successes, w.judged_successes + w.judged_gave_up);
        if ended > 0 {
            let (n, p) = (ended as f64, self.success_rate);
            let floor = n * (p - RATE_MARGIN) - Z * (n * p * (1.0 - p)).sqrt();
            if (successes as f64) < floor {
                return false;
            }
        }
        if successes > 0
            && let Some((mean, sd)) = self.latency_ms
        {
            let n = successes as f64;
            let window_mean = w.judged_latency_sum_ns as f64 / 1e6 / n;
            let error = (sd / n.sqrt()).max(self.window_latency_sd_ms);
            if window_mean > mean * LATENCY_FACTOR + Z * error {
                return false;
            }
        }
        let span = span as f64;
        let g = self.successes_per_window * span;
        let error = g.sqrt().max(self.window_successes_sd * span.sqrt());
        !(self.successes_per_window >= GOODPUT_MIN && (successes as f64) < g - Z * error)
    }
}

/// The verdict of a run whose windows are `windows` (of `window` ns), whose
/// triggers span `first_trigger` to `last_trigger_end`, judged over
/// `patience` after it; `load_end` is when new requests stopped (or the
/// horizon cut the run, if sooner).
pub fn judge(
    windows: &[Window],
    window: Nanos,
    first_trigger: Nanos,
    last_trigger_end: Nanos,
    patience: Nanos,
    load_end: Nanos,
) -> Verdict {
    let span_end = last_trigger_end.saturating_add(patience);
    if load_end < span_end {
        return Verdict::Unresolved;
    }
    let baseline = Baseline::before(windows, window, first_trigger);
    let (first, last) = judged_windows(window, last_trigger_end, patience);
    let last = last.min(windows.len());
    if first + BLOCK > last {
        // Not one whole block to judge: a patience this short cannot tell.
        return Verdict::Unresolved;
    }
    let mut recovered_from = None;
    for i in first..=last - BLOCK {
        if baseline.block_healthy(windows, i) == Some(true) {
            recovered_from.get_or_insert(i);
        } else {
            recovered_from = None;
        }
    }
    let hold_from = last_trigger_end + patience / 4 * 3;
    let Some(i) = recovered_from else {
        return Verdict::Stuck;
    };
    let at = i as Nanos * window;
    if at > hold_from {
        return Verdict::Stuck;
    }
    // The last quarter must show service coming back, not only silence.
    let hold_first = (hold_from.div_ceil(window) as usize).min(last);
    let served_late = windows[hold_first..last]
        .iter()
        .any(|w| w.judged_successes > 0);
    if baseline.successes_per_window > 0.0 && !served_late {
        return Verdict::Stuck;
    }
    Verdict::Recovered(at.saturating_sub(last_trigger_end))
}

/// The judged span's windows as indices `from..to`: from the first window
/// starting at or after the last trigger's end to the last one ending by
/// the patience window's end.
pub fn judged_windows(window: Nanos, last_trigger_end: Nanos, patience: Nanos) -> (usize, usize) {
    (
        last_trigger_end.div_ceil(window) as usize,
        (last_trigger_end.saturating_add(patience) / window) as usize,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window with `successes` of latency `latency_ms` each and `gave_up`.
    fn w(successes: u64, gave_up: u64, latency_ms: f64) -> Window {
        let latency_sum_ns = (successes as f64 * latency_ms * 1e6) as u64;
        Window {
            successes,
            gave_up,
            latency_sum_ns,
            judged_successes: successes,
            judged_gave_up: gave_up,
            judged_latency_sum_ns: latency_sum_ns,
            judged_latency_squares_ms2: successes as f64 * latency_ms * latency_ms,
            ..Window::default()
        }
    }

    /// Ten healthy windows of 10 ns, then `after` from t = 100 (the trigger
    /// is 100..100 wide enough to start the span at window 10).
    fn run(after: &[Window]) -> Vec<Window> {
        let mut windows = vec![w(20, 0, 5.0); 10];
        windows.extend_from_slice(after);
        windows
    }

    #[test]
    fn a_run_healthy_again_early_in_the_span_recovered_when_it_did() {
        // Span 100..180 (patience 80): bad for two windows, then healthy.
        let mut after = vec![w(0, 20, 0.0), w(5, 15, 9.0)];
        after.extend(vec![w(20, 0, 5.0); 6]);
        let windows = run(&after);
        assert_eq!(
            judge(&windows, 10, 50, 100, 80, 180),
            Verdict::Recovered(20)
        );
    }

    #[test]
    fn a_run_degraded_in_the_last_quarter_is_stuck() {
        let mut after = vec![w(20, 0, 5.0); 7];
        after.push(w(2, 18, 5.0));
        assert_eq!(judge(&run(&after), 10, 50, 100, 80, 180), Verdict::Stuck);
        // Recovery only in the last quarter (from t = 170 > 160): stuck.
        let mut late = vec![w(0, 20, 0.0); 7];
        late.push(w(20, 0, 5.0));
        assert_eq!(judge(&run(&late), 10, 50, 100, 80, 180), Verdict::Stuck);
    }

    #[test]
    fn successes_far_slower_than_before_are_not_a_recovery() {
        // Every request succeeds, but each took 40 times the baseline.
        let after = vec![w(20, 0, 200.0); 8];
        assert_eq!(judge(&run(&after), 10, 50, 100, 80, 180), Verdict::Stuck);
    }

    #[test]
    fn one_bursting_window_is_not_a_relapse() {
        // A window at 7.5 times the latency in the last quarter: pooled
        // with its neighbours, 15.8 ms against 4 × 5 ms allowed.
        let mut after = vec![w(20, 0, 5.0); 8];
        after[6] = w(20, 0, 37.5);
        assert_eq!(
            judge(&run(&after), 10, 50, 100, 80, 180),
            Verdict::Recovered(0)
        );
        // Three such windows in a row are.
        after[5] = w(20, 0, 37.5);
        after[7] = w(20, 0, 37.5);
        assert_eq!(judge(&run(&after), 10, 50, 100, 80, 180), Verdict::Stuck);
    }

    #[test]
    fn stragglers_of_the_incident_do_not_count_against_recovery() {
        // Fresh requests served as before; requests made during the trigger
        // finish late from their backoff (200 ms), not judged.
        let straggling = Window {
            successes: 25,
            latency_sum_ns: 20 * 5_000_000 + 5 * 200_000_000,
            ..w(20, 0, 5.0)
        };
        let after = vec![straggling; 8];
        assert_eq!(
            judge(&run(&after), 10, 50, 100, 80, 180),
            Verdict::Recovered(0)
        );
    }

    #[test]
    fn silence_where_the_baseline_served_is_not_a_recovery() {
        // Nothing ends at all (requests held at the client): goodput fails.
        let after = vec![Window::default(); 8];
        assert_eq!(judge(&run(&after), 10, 50, 100, 80, 180), Verdict::Stuck);
    }

    #[test]
    fn a_load_that_ends_inside_the_span_leaves_the_run_unresolved() {
        let after = vec![w(20, 0, 5.0); 8];
        assert_eq!(
            judge(&run(&after), 10, 50, 100, 80, 179),
            Verdict::Unresolved
        );
        assert_eq!(
            judge(&run(&after), 10, 50, 100, 80, 10_000),
            Verdict::Recovered(0)
        );
    }

    #[test]
    fn windows_after_the_span_are_not_read() {
        let mut after = vec![w(20, 0, 5.0); 8];
        let judged = judge(&run(&after), 10, 50, 100, 80, 1_000);
        after.extend(vec![w(0, 20, 0.0); 50]);
        assert_eq!(judge(&run(&after), 10, 50, 100, 80, 1_000), judged);
    }

    #[test]
    fn the_margins_pass_sampling_noise_and_fail_real_loss() {
        let b = Baseline {
            success_rate: 0.9,
            successes_per_window: 50.0,
            latency_ms: Some((10.0, 10.0)),
            window_latency_sd_ms: 0.0,
            window_successes_sd: 0.0,
        };
        // 43 of 50 (86%) is 1.9 standard errors under 90%: healthy.
        assert!(b.healthy(&w(43, 7, 10.0), 1));
        // 30 of 50 (60%) is 7 standard errors under: not.
        assert!(!b.healthy(&w(30, 20, 10.0), 1));
        // A mean of 45 ms over 49 successes: 40 + 4·10/7 = 45.7 allowed.
        assert!(b.healthy(&w(49, 6, 45.0), 1));
        assert!(!b.healthy(&w(49, 6, 46.0), 1));
        // Goodput: 50 per window, 4·√50 = 28.3: 20 successes fail it.
        assert!(!b.healthy(&w(20, 2, 10.0), 1));
        // Windows whose means moved together by 3 ms in the baseline widen
        // the latency margin to 40 + 4·3 = 52 ms.
        let correlated = Baseline {
            window_latency_sd_ms: 3.0,
            ..b
        };
        assert!(correlated.healthy(&w(49, 6, 51.0), 1));
        assert!(!correlated.healthy(&w(49, 6, 53.0), 1));
    }

    #[test]
    fn the_baseline_reads_the_windows_before_the_first_trigger() {
        let windows = [w(10, 0, 4.0), w(30, 10, 6.0), w(0, 50, 0.0)];
        let b = Baseline::before(&windows, 10, 25);
        assert_eq!(b.success_rate, 40.0 / 50.0);
        assert_eq!(b.successes_per_window, 20.0);
        let (mean, sd) = b.latency_ms.unwrap();
        assert!((mean - 5.5).abs() < 1e-9, "{mean}");
        // 10 at 4 and 30 at 6: variance (10·2.25 + 30·0.25)/39.
        assert!((sd - (30.0f64 / 39.0).sqrt()).abs() < 1e-9, "{sd}");
        assert!((b.window_latency_sd_ms - 2f64.sqrt()).abs() < 1e-9);
        assert!((b.window_successes_sd - 200f64.sqrt()).abs() < 1e-9);
    }
}
