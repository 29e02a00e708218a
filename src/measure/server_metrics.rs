//! What one run of the server model measured (DESIGN Part two), and the
//! per-window time series that recovery is read from.

use crate::measure::histogram::Histogram;
use crate::measure::layer_metrics::LayerMetrics;
use crate::model::server::{NS_PER_MS, Nanos};

/// One window of the time series.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Window {
    /// Requests that arrived (open loop) or started (closed loop).
    pub arrivals: u64,
    /// Attempts sent, first tries included.
    pub attempts: u64,
    /// Requests that succeeded.
    pub successes: u64,
    /// Requests that gave up.
    pub gave_up: u64,
    /// Attempts the client timed out.
    pub timeouts: u64,
    /// Attempts the server refused (a full queue, shedding, CoDel's drops).
    pub rejected: u64,
    /// Attempts waiting in the server's queue at the window's end.
    pub queue: u64,
    /// Busy workers at the window's end.
    pub busy: u64,
    /// The median end-to-end latency of the requests that succeeded in the
    /// window (nearest rank, exact), ns; `None` if none did.
    pub latency_p50_ns: Option<Nanos>,
    /// Their 99th percentile, ns.
    pub latency_p99_ns: Option<Nanos>,
}

impl Window {
    /// Adds `other`'s counts (arrivals to rejections) to this window's.
    pub fn add_counts(&mut self, other: &Window) {
        self.arrivals += other.arrivals;
        self.attempts += other.attempts;
        self.successes += other.successes;
        self.gave_up += other.gave_up;
        self.timeouts += other.timeouts;
        self.rejected += other.rejected;
    }

    /// Successes among the requests that ended in the window, if any did.
    pub fn success_rate(&self) -> Option<f64> {
        let ended = self.successes + self.gave_up;
        (ended > 0).then(|| self.successes as f64 / ended as f64)
    }
}

/// A server run's counts and times.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerMetrics {
    /// Requests made.
    pub requests: u64,
    /// Attempts sent, first tries included.
    pub attempts: u64,
    /// Requests that succeeded.
    pub successes: u64,
    /// Requests that stopped without success.
    pub gave_up: u64,
    /// Attempts the client timed out.
    pub timeouts: u64,
    /// Attempts the server refused (a full queue, shedding, CoDel's drops).
    pub rejected: u64,
    /// The users' attempts a breaker or throttle refused to send (each
    /// ended its request, which counts as given up; an upper service's
    /// refusals end its call, in its [`LayerMetrics::gave_up`]).
    pub refused: u64,
    /// Attempts that reached the server (admitted or rejected).
    pub arrived_at_server: u64,
    /// Worker time spent, ns (the sum over workers).
    pub busy_ns: u128,
    /// Worker time spent on attempts whose reply the client ignores (it timed
    /// out first), ns.
    pub wasted_ns: u128,
    /// The integral of the queue length over the load's duration, ns.
    pub queue_area: u128,
    /// The integral of busy workers over the load's duration, ns.
    pub busy_area: u128,
    /// The most attempts ever waiting in the queue.
    pub queue_peak: u64,
    /// Admitted attempts served, and the sum of their sojourns (arrival at
    /// the server to the end of service), ns.
    pub served: u64,
    /// Sum of sojourns, ns.
    pub sojourn_ns: u128,
    /// End-to-end latency of successful requests (from start, or from getting
    /// a client slot, to the successful reply), ns.
    pub latency: Histogram,
    /// Sum of those latencies, ns.
    pub latency_total_ns: u128,
    /// The load's duration, ns (time averages are over it).
    pub duration_ns: Nanos,
    /// The time of the last event, ns.
    pub end_ns: Nanos,
    /// Workers (`u32::MAX` when unbounded).
    pub workers: u32,
    /// Time from the end of the last trigger to recovery, ns; `None` with no
    /// trigger ending inside the load, or when stuck.
    pub recovery_ns: Option<Nanos>,
    /// Successes per request ended in the windows the triggers span (from
    /// the first's start to the last's end); `None` without a trigger.
    pub success_during_trigger: Option<f64>,
    /// Successes per request ended in the windows after the last trigger,
    /// until the load's end; `None` without a trigger or such a window.
    pub success_after_trigger: Option<f64>,
    /// The run ended metastable: after the last trigger, the success rate
    /// never stayed within 1% of its level before the first trigger.
    pub stuck: bool,
    /// False if the run was cut at its horizon or event limit with requests
    /// still in flight.
    pub complete: bool,
    /// True if the event limit cut it (a horizon is the workload's own end;
    /// the event limit is a guard, and reaching it is an error).
    pub hit_event_limit: bool,
    /// The time series, one entry per window from t = 0.
    pub windows: Vec<Window>,
    /// Each service of a chain, top first; empty for the server alone.
    /// The run's other counts are the users' (requests, attempts,
    /// timeouts, successes, latency) and the server's (rejections, work,
    /// queue).
    pub layers: Vec<LayerMetrics>,
    /// Events handled.
    pub events: u64,
    /// The most requests ever in flight at once (the request slab's size).
    pub peak_in_flight: u64,
    /// Bytes the loop's per-request state held at its largest: the request
    /// slab, the server's queue and the pending events (not the windows,
    /// which follow the run's length, nor the fixed latency histogram).
    pub state_bytes: u64,
}

impl ServerMetrics {
    /// Attempts per request.
    pub fn amplification(&self) -> f64 {
        ratio(self.attempts as f64, self.requests as f64)
    }

    /// Successes per request.
    pub fn success_rate(&self) -> f64 {
        ratio(self.successes as f64, self.requests as f64)
    }

    /// Share of worker time spent on work no client waits for.
    pub fn wasted_work(&self) -> f64 {
        ratio(self.wasted_ns as f64, self.busy_ns as f64)
    }

    /// Attempts refused as a share of those that reached the server.
    pub fn rejected_share(&self) -> f64 {
        ratio(self.rejected as f64, self.arrived_at_server as f64)
    }

    /// Mean busy workers over the load's duration.
    pub fn mean_busy(&self) -> f64 {
        ratio(self.busy_area as f64, self.duration_ns as f64)
    }

    /// Mean busy share of the workers over the load's duration (0 with
    /// unbounded workers, where it has no meaning).
    pub fn utilisation(&self) -> f64 {
        if self.workers == u32::MAX {
            0.0
        } else {
            self.mean_busy() / f64::from(self.workers)
        }
    }

    /// Mean attempts waiting in the queue over the load's duration.
    pub fn mean_queue(&self) -> f64 {
        ratio(self.queue_area as f64, self.duration_ns as f64)
    }

    /// Mean attempts at the server (waiting or served) over the load's
    /// duration: L of queueing theory.
    pub fn mean_in_system(&self) -> f64 {
        self.mean_queue() + self.mean_busy()
    }

    /// Mean sojourn of admitted attempts at the server, ms: W.
    pub fn mean_sojourn_ms(&self) -> f64 {
        ratio(self.sojourn_ns as f64, self.served as f64) / NS_PER_MS as f64
    }

    /// A latency quantile of successful requests, ms; `None` without one.
    pub fn latency_ms(&self, q: f64) -> Option<f64> {
        self.latency.quantile_ms(q)
    }
}

/// `a / b`, 0 when `b` is 0.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// Successes per request ended in windows `from..to` (indices), if any
/// request ended there.
pub fn success_over(windows: &[Window], from: usize, to: usize) -> Option<f64> {
    let span = windows.get(from..to.min(windows.len()))?;
    let (ok, ended) = span.iter().fold((0, 0), |(ok, ended), w| {
        (ok + w.successes, ended + w.successes + w.gave_up)
    });
    (ended > 0).then(|| ok as f64 / ended as f64)
}

/// Recovery from the windows: the first window starting at or after
/// `last_trigger_end` from which every window up to the load's end has a
/// success rate at least `level − 0.01` (windows where no request ended are
/// passed over). Returns (recovery, stuck); `level` is the rate before the
/// first trigger.
pub fn recovery(
    windows: &[Window],
    window: Nanos,
    level: f64,
    last_trigger_end: Nanos,
    load_end: Nanos,
) -> (Option<Nanos>, bool) {
    if last_trigger_end >= load_end {
        return (None, false);
    }
    let first = last_trigger_end.div_ceil(window) as usize;
    let last = (load_end.div_ceil(window) as usize).min(windows.len());
    let mut recovered_from = None;
    for (i, w) in windows.iter().enumerate().take(last).skip(first) {
        match w.success_rate() {
            Some(rate) if rate < level - 0.01 => recovered_from = None,
            Some(_) => {
                recovered_from.get_or_insert(i);
            }
            None => {}
        }
    }
    match recovered_from {
        Some(i) => (Some(i as Nanos * window - last_trigger_end), false),
        None => (None, true),
    }
}

/// The success rate over the windows wholly before `first_trigger` (1 if no
/// request ended there).
pub fn level_before(windows: &[Window], window: Nanos, first_trigger: Nanos) -> f64 {
    let whole = (first_trigger / window) as usize;
    let (ok, ended) = windows.iter().take(whole).fold((0, 0), |(s, e), w| {
        (s + w.successes, e + w.successes + w.gave_up)
    });
    if ended == 0 {
        1.0
    } else {
        ok as f64 / ended as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(successes: u64, gave_up: u64) -> Window {
        Window {
            successes,
            gave_up,
            ..Window::default()
        }
    }

    #[test]
    fn recovery_is_the_first_window_after_which_every_window_holds_the_level() {
        // Windows of 10 ns; the trigger ends at 25; the load at 80.
        let windows = [
            w(10, 0),
            w(10, 0),
            w(2, 8),
            w(5, 5),
            w(10, 0),
            w(8, 2),
            w(10, 0),
            w(0, 0),
        ];
        assert_eq!(level_before(&windows, 10, 20), 1.0);
        // Window 5 falls short, so recovery starts at window 6 (t = 60).
        assert_eq!(recovery(&windows, 10, 1.0, 25, 80), (Some(35), false));
        let stuck = [w(10, 0), w(1, 9), w(1, 9), w(2, 8)];
        assert_eq!(recovery(&stuck, 10, 1.0, 10, 40), (None, true));
        assert_eq!(recovery(&stuck, 10, 1.0, 40, 40), (None, false));
    }
}

/// One reported metric of the server model: name with unit (CSV headers,
/// JSON keys), description, decimals shown, and how it is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerMetric {
    /// Requests made.
    Requests,
    /// Attempts sent, first tries included.
    Attempts,
    /// Attempts per request.
    Amplification,
    /// Attempts that reached the server per request.
    ServerAmplification,
    /// Requests that succeeded.
    Successes,
    /// Successes per request.
    SuccessRate,
    /// Attempts timed out by their client.
    Timeouts,
    /// Attempts refused at a full queue.
    Rejected,
    /// Requests that stopped without success.
    GaveUp,
    /// Attempts a breaker or throttle refused to send.
    Refused,
    /// Success rate of the requests ended while the triggers ran.
    SuccessDuringTrigger,
    /// Success rate of the requests ended after the last trigger.
    SuccessAfterTrigger,
    /// Share of worker time spent on attempts whose client had timed out.
    WastedWork,
    /// Median end-to-end latency of successful requests.
    LatencyP50Ms,
    /// 99th percentile of the same.
    LatencyP99Ms,
    /// 99.9th percentile of the same.
    LatencyP999Ms,
    /// Mean busy share of the workers during the load.
    Utilisation,
    /// Mean attempts waiting in the queue during the load.
    QueueMean,
    /// Most attempts ever waiting.
    QueuePeak,
    /// From the end of the last trigger to recovery.
    RecoveryMs,
    /// 1 if the run ended metastable.
    Stuck,
}

impl ServerMetric {
    /// Every metric, in report order.
    pub const ALL: [ServerMetric; 21] = [
        ServerMetric::Requests,
        ServerMetric::Attempts,
        ServerMetric::Amplification,
        ServerMetric::ServerAmplification,
        ServerMetric::Successes,
        ServerMetric::SuccessRate,
        ServerMetric::Timeouts,
        ServerMetric::Rejected,
        ServerMetric::GaveUp,
        ServerMetric::Refused,
        ServerMetric::WastedWork,
        ServerMetric::LatencyP50Ms,
        ServerMetric::LatencyP99Ms,
        ServerMetric::LatencyP999Ms,
        ServerMetric::Utilisation,
        ServerMetric::QueueMean,
        ServerMetric::QueuePeak,
        ServerMetric::SuccessDuringTrigger,
        ServerMetric::SuccessAfterTrigger,
        ServerMetric::RecoveryMs,
        ServerMetric::Stuck,
    ];

    /// (name, decimals, description, value).
    #[allow(clippy::type_complexity)]
    fn info(
        self,
    ) -> (
        &'static str,
        usize,
        &'static str,
        fn(&ServerMetrics) -> Option<f64>,
    ) {
        match self {
            ServerMetric::Requests => ("requests", 0, "requests made", |m| Some(m.requests as f64)),
            ServerMetric::Attempts => ("attempts", 0, "attempts sent, first tries included", |m| {
                Some(m.attempts as f64)
            }),
            ServerMetric::Amplification => ("amplification", 3, "attempts per request", |m| {
                Some(m.amplification())
            }),
            ServerMetric::ServerAmplification => (
                "server_amplification",
                3,
                "attempts that reached the server per request (a chain's amplification at its bottom)",
                |m| Some(m.arrived_at_server as f64 / m.requests.max(1) as f64),
            ),
            ServerMetric::Successes => ("successes", 0, "requests that succeeded", |m| {
                Some(m.successes as f64)
            }),
            ServerMetric::SuccessRate => ("success_rate", 4, "successes per request", |m| {
                Some(m.success_rate())
            }),
            ServerMetric::Timeouts => ("timeouts", 0, "attempts timed out by their client", |m| {
                Some(m.timeouts as f64)
            }),
            ServerMetric::Rejected => (
                "rejected",
                0,
                "attempts the server refused: a full queue, shedding by expected wait, CoDel's drops",
                |m| Some(m.rejected as f64),
            ),
            ServerMetric::GaveUp => ("gave_up", 0, "requests that stopped without success", |m| {
                Some(m.gave_up as f64)
            }),
            ServerMetric::Refused => (
                "refused",
                0,
                "attempts a breaker or throttle refused to send (their requests gave up)",
                |m| Some(m.refused as f64),
            ),
            ServerMetric::WastedWork => (
                "wasted_work",
                4,
                "share of worker time spent on attempts whose client had timed out",
                |m| Some(m.wasted_work()),
            ),
            ServerMetric::LatencyP50Ms => (
                "latency_p50_ms",
                2,
                "median end-to-end latency of successful requests (retries and backoff \
                 included; empty without a success)",
                |m| m.latency_ms(0.5),
            ),
            ServerMetric::LatencyP99Ms => (
                "latency_p99_ms",
                2,
                "99th percentile end-to-end latency of successful requests",
                |m| m.latency_ms(0.99),
            ),
            ServerMetric::LatencyP999Ms => (
                "latency_p999_ms",
                2,
                "99.9th percentile end-to-end latency of successful requests",
                |m| m.latency_ms(0.999),
            ),
            ServerMetric::Utilisation => (
                "utilisation",
                4,
                "mean busy share of the workers during the load (0 when unbounded)",
                |m| Some(m.utilisation()),
            ),
            ServerMetric::QueueMean => (
                "queue_mean",
                2,
                "mean attempts waiting in the queue during the load",
                |m| Some(m.mean_queue()),
            ),
            ServerMetric::QueuePeak => ("queue_peak", 0, "most attempts ever waiting", |m| {
                Some(m.queue_peak as f64)
            }),
            ServerMetric::SuccessDuringTrigger => (
                "success_during_trigger",
                4,
                "successes per request ended in the windows the triggers span (empty without \
                 a trigger)",
                |m| m.success_during_trigger,
            ),
            ServerMetric::SuccessAfterTrigger => (
                "success_after_trigger",
                4,
                "successes per request ended in the windows after the last trigger, until \
                 the load ends",
                |m| m.success_after_trigger,
            ),
            ServerMetric::RecoveryMs => (
                "recovery_ms",
                1,
                "from the end of the last trigger until every later window's success rate \
                 stays within 1% of its level before the first trigger; empty without a \
                 trigger or when stuck, so its mean is over the runs that recovered",
                |m| m.recovery_ns.map(|ns| ns as f64 / NS_PER_MS as f64),
            ),
            ServerMetric::Stuck => (
                "stuck",
                0,
                "1 if the run never recovered (metastable); its mean over replicates is the \
                 storm probability",
                |m| Some(f64::from(u8::from(m.stuck))),
            ),
        }
    }

    /// snake_case name with its unit.
    pub fn name(self) -> &'static str {
        self.info().0
    }

    /// Decimals shown in human output.
    pub fn decimals(self) -> usize {
        self.info().1
    }

    /// What it is.
    pub fn description(self) -> &'static str {
        self.info().2
    }

    /// Its value in `metrics`, if the run has one: no recovery time for a
    /// run that never recovered or had no trigger, no latency for a run
    /// without a success (a 0 there would pull a mean over runs down).
    pub fn value(self, metrics: &ServerMetrics) -> Option<f64> {
        (self.info().3)(metrics)
    }
}

/// The storm probability of some runs: how many ended stuck, of how many,
/// and the Wilson 95% interval of their share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Storm {
    /// Runs that ended stuck.
    pub stuck: u64,
    /// Runs.
    pub runs: u64,
    /// The interval's low end.
    pub low: f64,
    /// The interval's high end.
    pub high: f64,
}

impl Storm {
    /// From the summary of the `stuck` metric (0 or 1 a run), which every
    /// report already has: its mean times its count is the stuck runs.
    pub fn of(stuck: &crate::measure::stats::Summary) -> Storm {
        let runs = stuck.n as u64;
        Storm::of_counts((stuck.mean * runs as f64).round() as u64, runs)
    }

    /// `stuck` of `runs`, with its interval.
    pub fn of_counts(stuck: u64, runs: u64) -> Storm {
        let (low, high) = wilson_interval(stuck, runs);
        Storm {
            stuck,
            runs,
            low,
            high,
        }
    }

    /// The share of runs stuck (0 with no runs).
    pub fn probability(&self) -> f64 {
        self.stuck as f64 / self.runs.max(1) as f64
    }
}

/// The Wilson score 95% interval of a proportion: `k` of `n` (the storm
/// probability's interval; sound at k = 0 and k = n, where the normal
/// approximation collapses to a point).
pub fn wilson_interval(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denominator = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod metric_tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_published_values() {
        // Newcombe (1998), Table I: 0/10 → (0, 0.2775); 1/29 → (0.0061,
        // 0.1718); 81/263 → (0.2553, 0.3662).
        let close =
            |(a, b): (f64, f64), (x, y): (f64, f64)| (a - x).abs() < 5e-5 && (b - y).abs() < 5e-5;
        assert!(close(wilson_interval(0, 10), (0.0, 0.2775)));
        assert!(close(wilson_interval(1, 29), (0.0061, 0.1718)));
        assert!(close(wilson_interval(81, 263), (0.2553, 0.3662)));
    }

    #[test]
    fn metric_names_are_unique_and_snake_case() {
        let names: Vec<_> = ServerMetric::ALL.iter().map(|m| m.name()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert!(names.iter().all(|n| {
            n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        }));
    }
}
