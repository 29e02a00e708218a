//! A server run's verdict after its triggers (DESIGN Part three): recovered,
//! draining, stuck or unresolved, judged over a patience window after the
//! last trigger's end so that it never depends on how long the load ran
//! past it.
//!
//! The rule, in the words `herdsim metrics` and the docs repeat:
//! - The *baseline* is what the windows wholly before the first trigger saw:
//!   their success rate, their successes per window, their backlog, and the
//!   mean and spread of a success's end-to-end latency.
//! - After the triggers, a window is judged by the requests made after the
//!   last trigger's end that ended in it ([`Window::judged_successes`]):
//!   whether the service serves its fresh traffic as before. Requests
//!   caught in the incident that finish late from their backoff are its
//!   tail, not the service's health (an SRE calls a service recovered when
//!   new requests are served, while stragglers still drain).
//! - A window is *healthy* when, pooled with the next two ([`BLOCK`]),
//!   its success rate, its successes (goodput) and its mean success
//!   latency are each no worse than the baseline's less a small margin and
//!   four standard errors (so a healthy service fails a window's test about
//!   once in 30,000 windows by chance, while a degraded one fails it in
//!   every window it has enough requests to judge). Goodput is judged
//!   against the block's own arrivals where arrivals do not depend on the
//!   service (an open loop: a block thin in arrivals by chance is thin in
//!   successes too, and is no relapse), and against the baseline's
//!   successes per window where they do (a closed loop, whose users stop
//!   arriving while they wait). For goodput and latency the standard error
//!   is the larger of the independent-sample one and the spread the
//!   baseline's own windows showed: a queue makes neighbouring requests'
//!   latencies move together, so a window's mean varies more than
//!   independent requests would. A window in which no request ended passes
//!   the rate and latency tests; the goodput test then judges it.
//! - The *judged span* is the patience window `[E, E + patience)`, `E` the
//!   last trigger's end. Recovery is the first window of the span from which
//!   every window to the span's end (the last block's start) is healthy,
//!   but for at most one excursion of [`BLOCK`] unhealthy blocks or fewer
//!   with healthy blocks after it (a burst of arrivals, read by the three
//!   blocks that pool its window, is no relapse).
//! - **Recovered**: recovery comes within the first three quarters of the
//!   span (so the service held for at least the last quarter) and a request
//!   succeeded in that last quarter.
//! - **Draining**: not recovered, but the backlog (queue, attempts in
//!   service and retries waiting, [`Window::backlog`]) is still falling
//!   steadily over the span's second half: its least-squares slope over
//!   [`SEGMENTS`] segment means is at least [`DRAIN_T`] standard errors
//!   below zero and the fitted fall is at least [`DRAIN_SHARE`] of the
//!   fitted level where the half starts. Its projected recovery is when
//!   that line reaches the baseline's backlog. A slow drain is not a storm.
//! - **Stuck**: neither, with the load on: the service is degraded and its
//!   backlog does not fall. This is the metastable case.
//! - **Unresolved**: the load (or the run's horizon) ended before the span
//!   did, so the run cannot tell.
//!
//! Nothing after `E + patience` is read, and a run's events up to a time do
//! not depend on how long its load lasts after it, so the verdict and the
//! recovery time are the same for any load that runs at least that long.

use crate::measure::server_metrics::Window;
use crate::model::server::{Load, Nanos};

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
/// Baseline successes per window below which the goodput test against the
/// baseline is not made (four standard errors of a Poisson count of 16 are
/// its whole value).
const GOODPUT_MIN: f64 = 16.0;
/// Segments of the patience window's second half whose mean backlogs the
/// drain test fits a line through (8 degrees of freedom): averaging whole
/// segments damps the window-to-window correlation of a queue, which would
/// make a fit through every window overconfident.
pub const SEGMENTS: usize = 10;
/// Standard errors below zero the backlog's slope must be for a drain: a
/// t statistic with 8 degrees of freedom passes −4 by chance with
/// probability 0.002 where the backlog holds, while a backlog worked off at
/// spare capacity falls on a near-straight line (issue 55's mesh: −5.7 to
/// −14 at 10 s, recovering 8 to 14 s after its stall). A stuck service's
/// backlog grows (t from +10 to +300 in the metastable and SRE cases).
pub const DRAIN_T: f64 = 4.0;
/// Least share of its level the backlog must lose over the second half for
/// a drain: a significant but slight fall (a stuck queue settling) is no
/// drain.
pub const DRAIN_SHARE: f64 = 0.2;

/// How a run with triggers ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Healthy again, this long after the last trigger's end, ns.
    Recovered(Nanos),
    /// Not healthy by the patience window's end but its backlog falling
    /// steadily: projected healthy this long after the last trigger's end,
    /// ns (at least the patience).
    Draining(Nanos),
    /// Still (or again) degraded late in the patience window, its backlog
    /// not falling.
    Stuck,
    /// The load or the horizon ended before the patience window did (or
    /// the window holds no whole window of the series).
    Unresolved,
}

/// How the goodput test reads a block: against its own arrivals, or against
/// the baseline's successes per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goodput {
    /// Arrivals come whatever the service does (an open loop).
    FromArrivals,
    /// Arrivals follow the service (a closed loop's users wait).
    FromBaseline,
}

impl Goodput {
    /// How a load's goodput is judged: from arrivals in an open loop (its
    /// Poisson arrivals come whatever the service does), from the baseline
    /// in a closed one.
    pub fn of(load: &Load) -> Goodput {
        match load {
            Load::Open { .. } => Goodput::FromArrivals,
            Load::Closed { .. } => Goodput::FromBaseline,
        }
    }
}

/// The backlog's course over the patience window's second half.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// The fitted slope, backlog per second.
    pub slope_per_s: f64,
    /// The slope's t statistic (slope over its standard error, over
    /// [`SEGMENTS`] segment means); infinite for a straight line.
    pub t: f64,
    /// The fitted backlog where the half starts and where it ends.
    pub from: f64,
    /// See `from`.
    pub to: f64,
}

impl Trend {
    /// Is this a drain: steep and large enough ([`DRAIN_T`], [`DRAIN_SHARE`])?
    pub fn draining(&self) -> bool {
        self.t <= -DRAIN_T && self.from - self.to >= DRAIN_SHARE * self.from
    }
}

/// The least-squares line through the backlog's segment means over windows
/// `from..to` (of `window` ns), if there are windows enough for
/// [`SEGMENTS`] segments of at least one.
pub fn backlog_trend(windows: &[Window], window: Nanos, from: usize, to: usize) -> Option<Trend> {
    let to = to.min(windows.len());
    let n = to.checked_sub(from)?;
    if n < SEGMENTS {
        return None;
    }
    let seconds = window.ticks() as f64 / 1e9;
    let points: Vec<(f64, f64)> = (0..SEGMENTS)
        .map(|j| {
            let (a, b) = (from + j * n / SEGMENTS, from + (j + 1) * n / SEGMENTS);
            let mean = windows[a..b]
                .iter()
                .map(|w| w.backlog() as f64)
                .sum::<f64>()
                / (b - a) as f64;
            // A window's backlog is read at its end.
            ((a + b) as f64 / 2.0 * seconds + seconds / 2.0, mean)
        })
        .collect();
    let k = SEGMENTS as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / k;
    let my = points.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let residual: f64 = points
        .iter()
        .map(|p| {
            let e = p.1 - (my + slope * (p.0 - mx));
            e * e
        })
        .sum();
    let se = (residual / (k - 2.0) / sxx).sqrt();
    let t = if se > 0.0 {
        slope / se
    } else if slope < 0.0 {
        f64::NEG_INFINITY
    } else if slope > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let (start, end) = (from as f64 * seconds, to as f64 * seconds);
    Some(Trend {
        slope_per_s: slope,
        t,
        from: my + slope * (start - mx),
        to: my + slope * (end - mx),
    })
}

impl Verdict {
    /// Its name, as the docs and tables say it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Recovered(_) => "recovered",
            Verdict::Draining(_) => "draining",
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
    /// The mean backlog at the baseline windows' ends.
    pub backlog: f64,
    /// What the goodput test compares a block's successes with.
    pub goodput: Goodput,
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
    /// From the windows wholly before `first_trigger`, with goodput judged
    /// as `goodput` says.
    pub fn before(
        windows: &[Window],
        window: Nanos,
        first_trigger: Nanos,
        goodput: Goodput,
    ) -> Baseline {
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
            backlog: if whole == 0 {
                0.0
            } else {
                before.iter().map(|w| w.backlog() as f64).sum::<f64>() / whole as f64
            },
            goodput,
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
        match self.goodput {
            Goodput::FromArrivals => {
                // The block's own arrivals, served at the baseline's rate
                // less the margin: its Poisson spread as the error.
                let g = w.arrivals as f64 * (self.success_rate - RATE_MARGIN).max(0.0);
                (successes as f64) >= g - Z * g.sqrt()
            }
            Goodput::FromBaseline => {
                let span = span as f64;
                let g = self.successes_per_window * span;
                let error = g.sqrt().max(self.window_successes_sd * span.sqrt());
                !(self.successes_per_window >= GOODPUT_MIN && (successes as f64) < g - Z * error)
            }
        }
    }
}

/// What the judge reads of a run: its windows (of `window` ns), its
/// triggers' span from `first_trigger` to `last_trigger_end`, the
/// `patience` after it, when new requests stopped (`load_end`, or the
/// horizon's cut if sooner) and how goodput is judged.
#[derive(Debug, Clone, Copy)]
pub struct Judged<'a> {
    /// The run's series.
    pub windows: &'a [Window],
    /// The series' window, ns.
    pub window: Nanos,
    /// The first trigger's start, ns.
    pub first_trigger: Nanos,
    /// The last trigger's end, ns.
    pub last_trigger_end: Nanos,
    /// The patience window, ns.
    pub patience: Nanos,
    /// When new requests stopped, ns.
    pub load_end: Nanos,
    /// How goodput is judged.
    pub goodput: Goodput,
}

/// A run's verdict with the backlog trend it was judged by (none when the
/// run recovered or was unresolved, or the span was too short to fit one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// The backlog's course over the span's second half, when read.
    pub trend: Option<Trend>,
}

/// The verdict of the run `run` describes.
pub fn judge(run: &Judged) -> Judgement {
    let Judged {
        windows,
        window,
        first_trigger,
        last_trigger_end,
        patience,
        load_end,
        goodput,
    } = *run;
    let unresolved = Judgement {
        verdict: Verdict::Unresolved,
        trend: None,
    };
    let span_end = last_trigger_end.saturating_add(patience);
    if load_end < span_end {
        return unresolved;
    }
    let baseline = Baseline::before(windows, window, first_trigger, goodput);
    let (first, last) = judged_windows(window, last_trigger_end, patience);
    let last = last.min(windows.len());
    if first + BLOCK > last {
        // Not one whole block to judge: a patience this short cannot tell.
        return unresolved;
    }
    // Recovery holds through at most one excursion of BLOCK unhealthy
    // blocks or fewer (one window's burst, read by the blocks that pool
    // it) followed by healthy blocks: a burst of arrivals by chance is no
    // relapse, while a service stuck again fails every block to the end.
    let mut recovered_from = None;
    let (mut excursion, mut forgiven) = (0, false);
    for i in first..=last - BLOCK {
        if baseline.block_healthy(windows, i) == Some(true) {
            if excursion > 0 {
                forgiven = true;
                excursion = 0;
            }
            recovered_from.get_or_insert(i);
        } else if recovered_from.is_some() && !forgiven && excursion < BLOCK {
            excursion += 1;
        } else {
            recovered_from = None;
            excursion = 0;
        }
    }
    if excursion > 0 {
        // Unhealthy to the span's end.
        recovered_from = None;
    }
    let hold_from = last_trigger_end + patience / 4 * 3;
    let recovered = recovered_from.and_then(|i| {
        let at = i as u64 * window;
        // The last quarter must show service coming back, not only silence.
        let hold_first = (hold_from.div_ceil(window) as usize).min(last);
        let served_late = windows[hold_first..last]
            .iter()
            .any(|w| w.judged_successes > 0);
        (at <= hold_from && (served_late || baseline.successes_per_window == 0.0))
            .then(|| at.saturating_sub(last_trigger_end))
    });
    if let Some(after) = recovered {
        return Judgement {
            verdict: Verdict::Recovered(after),
            trend: None,
        };
    }
    let half = judged_windows(
        window,
        last_trigger_end + patience / 2,
        patience - patience / 2,
    );
    let trend = backlog_trend(windows, window, half.0, half.1.min(last));
    let verdict = match trend {
        Some(t) if t.draining() => {
            // Where the fitted line meets the baseline's backlog, and at
            // least the span's end (the run was not healthy before it).
            let beyond_s = ((t.to - baseline.backlog) / -t.slope_per_s).max(0.0);
            let beyond =
                Nanos::from_ticks((beyond_s * 1e9).min(Nanos::MAX.ticks() as f64 / 2.0) as u64);
            Verdict::Draining(patience.saturating_add(beyond))
        }
        _ => Verdict::Stuck,
    };
    Judgement { verdict, trend }
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

    /// The verdict of `windows` (of 10 ns) with a trigger over 50..100, a
    /// patience of 80 and the load on until `load_end`, goodput judged
    /// against the baseline.
    fn verdict(windows: &[Window], load_end: Nanos) -> Verdict {
        judge(&Judged {
            windows,
            window: Nanos::from_ticks(10),
            first_trigger: Nanos::from_ticks(50),
            last_trigger_end: Nanos::from_ticks(100),
            patience: Nanos::from_ticks(80),
            load_end,
            goodput: Goodput::FromBaseline,
        })
        .verdict
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
            verdict(&windows, Nanos::from_ticks(180)),
            Verdict::Recovered(Nanos::from_ticks(20))
        );
    }

    #[test]
    fn a_run_degraded_in_the_last_quarter_is_stuck() {
        let mut after = vec![w(20, 0, 5.0); 7];
        after.push(w(2, 18, 5.0));
        assert_eq!(
            verdict(&run(&after), Nanos::from_ticks(180)),
            Verdict::Stuck
        );
        // Recovery only in the last quarter (from t = 170 > 160): stuck.
        let mut late = vec![w(0, 20, 0.0); 7];
        late.push(w(20, 0, 5.0));
        assert_eq!(verdict(&run(&late), Nanos::from_ticks(180)), Verdict::Stuck);
    }

    #[test]
    fn successes_far_slower_than_before_are_not_a_recovery() {
        // Every request succeeds, but each took 40 times the baseline.
        let after = vec![w(20, 0, 200.0); 8];
        assert_eq!(
            verdict(&run(&after), Nanos::from_ticks(180)),
            Verdict::Stuck
        );
    }

    #[test]
    fn one_bursting_window_is_not_a_relapse() {
        // A window at 7.5 times the latency in the last quarter: pooled
        // with its neighbours, 15.8 ms against 4 × 5 ms allowed.
        let mut after = vec![w(20, 0, 5.0); 8];
        after[6] = w(20, 0, 37.5);
        assert_eq!(
            verdict(&run(&after), Nanos::from_ticks(180)),
            Verdict::Recovered(Nanos::ZERO)
        );
        // Three such windows in a row are.
        after[5] = w(20, 0, 37.5);
        after[7] = w(20, 0, 37.5);
        assert_eq!(
            verdict(&run(&after), Nanos::from_ticks(180)),
            Verdict::Stuck
        );
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
            verdict(&run(&after), Nanos::from_ticks(180)),
            Verdict::Recovered(Nanos::ZERO)
        );
    }

    #[test]
    fn silence_where_the_baseline_served_is_not_a_recovery() {
        // Nothing ends at all (requests held at the client): goodput fails.
        let after = vec![Window::default(); 8];
        assert_eq!(
            verdict(&run(&after), Nanos::from_ticks(180)),
            Verdict::Stuck
        );
    }

    #[test]
    fn a_load_that_ends_inside_the_span_leaves_the_run_unresolved() {
        let after = vec![w(20, 0, 5.0); 8];
        assert_eq!(
            verdict(&run(&after), Nanos::from_ticks(179)),
            Verdict::Unresolved
        );
        assert_eq!(
            verdict(&run(&after), Nanos::from_us(10)),
            Verdict::Recovered(Nanos::ZERO)
        );
    }

    #[test]
    fn windows_after_the_span_are_not_read() {
        let mut after = vec![w(20, 0, 5.0); 8];
        let judged = verdict(&run(&after), Nanos::from_us(1));
        after.extend(vec![w(0, 20, 0.0); 50]);
        assert_eq!(verdict(&run(&after), Nanos::from_us(1)), judged);
    }

    #[test]
    fn the_margins_pass_sampling_noise_and_fail_real_loss() {
        let b = Baseline {
            success_rate: 0.9,
            successes_per_window: 50.0,
            latency_ms: Some((10.0, 10.0)),
            window_latency_sd_ms: 0.0,
            window_successes_sd: 0.0,
            backlog: 0.0,
            goodput: Goodput::FromBaseline,
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
        let b = Baseline::before(
            &windows,
            Nanos::from_ticks(10),
            Nanos::from_ticks(25),
            Goodput::FromBaseline,
        );
        assert_eq!(b.success_rate, 40.0 / 50.0);
        assert_eq!(b.successes_per_window, 20.0);
        let (mean, sd) = b.latency_ms.unwrap();
        assert!((mean - 5.5).abs() < 1e-9, "{mean}");
        // 10 at 4 and 30 at 6: variance (10·2.25 + 30·0.25)/39.
        assert!((sd - (30.0f64 / 39.0).sqrt()).abs() < 1e-9, "{sd}");
        assert!((b.window_latency_sd_ms - 2f64.sqrt()).abs() < 1e-9);
        assert!((b.window_successes_sd - 200f64.sqrt()).abs() < 1e-9);
    }

    /// Ten healthy windows of 10 ns with a backlog of 5, a trigger over
    /// 50..100, then `after`, judged with a patience of 400 (the second
    /// half's 20 windows make ten segments).
    fn long(after: &[Window], goodput: Goodput) -> Judgement {
        let mut windows = vec![
            Window {
                queue: 5,
                arrivals: 20,
                ..w(20, 0, 5.0)
            };
            10
        ];
        windows.extend_from_slice(after);
        judge(&Judged {
            windows: &windows,
            window: Nanos::from_ticks(10),
            first_trigger: Nanos::from_ticks(50),
            last_trigger_end: Nanos::from_ticks(100),
            patience: Nanos::from_ticks(400),
            load_end: Nanos::from_us(10),
            goodput,
        })
    }

    /// A degraded window (half the requests give up, ten times slower) with
    /// `backlog` waiting.
    fn degraded(backlog: u64) -> Window {
        Window {
            queue: backlog,
            arrivals: 20,
            ..w(10, 10, 50.0)
        }
    }

    #[test]
    fn a_degraded_run_whose_backlog_falls_steadily_is_draining_not_stuck() {
        // 40 windows from 1,000 down by 20 a window: at the span's end
        // (t = 500) the line is at 220, 21.5 windows above the baseline's 5.
        let after: Vec<Window> = (0..40).map(|i| degraded(1_000 - 20 * i)).collect();
        let judged = long(&after, Goodput::FromBaseline);
        let trend = judged.trend.expect("a trend is fitted");
        assert!(trend.t < -1e6, "{trend:?}");
        // The backlog is read at each window's end: -20 per 10 ns.
        assert!((trend.slope_per_s + 2e9).abs() < 1e-3, "{trend:?}");
        let Verdict::Draining(projected) = judged.verdict else {
            panic!("{judged:?}");
        };
        // The line reaches 5 at 215 / 2 per ns past the span's end.
        assert!(
            (projected.ticks() as f64 - (400.0 + 215.0 / 2.0)).abs() <= 1.0,
            "{projected:?}"
        );
    }

    #[test]
    fn a_degraded_run_whose_backlog_holds_or_grows_is_stuck() {
        // Flat at 1,000 with noise, and growing: no drain.
        let flat: Vec<Window> = (0..40)
            .map(|i| degraded(1_000 + [0, 30, 10, 40, 20][i % 5]))
            .collect();
        let judged = long(&flat, Goodput::FromBaseline);
        assert_eq!(judged.verdict, Verdict::Stuck);
        assert!(judged.trend.unwrap().t.abs() < DRAIN_T, "{judged:?}");
        let growing: Vec<Window> = (0..40).map(|i| degraded(1_000 + 20 * i)).collect();
        let judged = long(&growing, Goodput::FromBaseline);
        assert_eq!(judged.verdict, Verdict::Stuck);
        assert!(judged.trend.unwrap().t > 0.0);
    }

    #[test]
    fn a_slight_steady_fall_is_not_a_drain() {
        // Down by 1 a window from 1,000: significant, but 2% of the level.
        let settling: Vec<Window> = (0..40).map(|i| degraded(1_000 - i)).collect();
        let judged = long(&settling, Goodput::FromBaseline);
        assert!(judged.trend.unwrap().t < -DRAIN_T);
        assert_eq!(judged.verdict, Verdict::Stuck);
    }

    #[test]
    fn a_block_thin_in_arrivals_is_no_relapse_in_an_open_loop() {
        // Healthy throughout, but six windows late in the span had 2
        // arrivals each, all served: blocks of 24 or 6 successes against
        // 60 a block before, more of them than one burst's.
        let mut after = vec![
            Window {
                arrivals: 20,
                queue: 5,
                ..w(20, 0, 5.0)
            };
            40
        ];
        for w in &mut after[30..36] {
            *w = Window {
                arrivals: 2,
                queue: 5,
                ..super::tests::w(2, 0, 5.0)
            };
        }
        assert_eq!(
            long(&after, Goodput::FromArrivals).verdict,
            Verdict::Recovered(Nanos::ZERO)
        );
        // Judged against the baseline's goodput, the same spell fails.
        assert_eq!(long(&after, Goodput::FromBaseline).verdict.name(), "stuck");
        // Arrivals not served do fail it in an open loop: 5 of 20 served.
        for w in &mut after[30..36] {
            *w = Window {
                arrivals: 20,
                queue: 5,
                ..super::tests::w(5, 0, 5.0)
            };
        }
        assert_ne!(
            long(&after, Goodput::FromArrivals).verdict,
            Verdict::Recovered(Nanos::ZERO)
        );
    }

    #[test]
    fn one_burst_late_in_the_span_is_no_relapse_but_two_are() {
        // Healthy from the trigger's end; in the last quarter one window at
        // 20 times the latency (a burst of arrivals queued): the two or
        // three blocks that pool it fail, then every block passes.
        let healthy = Window {
            arrivals: 20,
            queue: 5,
            ..w(20, 0, 5.0)
        };
        let burst = Window {
            latency_sum_ns: 20 * 100_000_000,
            judged_latency_sum_ns: 20 * 100_000_000,
            ..healthy
        };
        let mut after = vec![healthy; 40];
        after[34] = burst;
        assert_eq!(
            long(&after, Goodput::FromArrivals).verdict,
            Verdict::Recovered(Nanos::ZERO)
        );
        // A second burst, apart from the first, is a service that flaps.
        after[30] = burst;
        assert_eq!(long(&after, Goodput::FromArrivals).verdict, Verdict::Stuck);
        // One burst at the very end, with no healthy block after it, is
        // no recovery held.
        let mut late = vec![healthy; 40];
        late[39] = burst;
        assert_eq!(long(&late, Goodput::FromArrivals).verdict, Verdict::Stuck);
    }
}
