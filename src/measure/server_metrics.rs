//! What one run of the server model measured (DESIGN Part two), and the
//! per-window time series that recovery is read from.

use crate::measure::histogram::Histogram;
use crate::measure::layer_metrics::LayerMetrics;
use crate::measure::verdict::Verdict;
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
    /// Retries waiting out their backoff delay at the window's end.
    pub retries_waiting: u64,
    /// The median end-to-end latency of the requests that succeeded in the
    /// window (nearest rank, exact), ns; `None` if none did.
    pub latency_p50_ns: Option<Nanos>,
    /// Their 99th percentile, ns.
    pub latency_p99_ns: Option<Nanos>,
    /// The sum of those requests' latencies, ns (the window's mean).
    pub latency_sum_ns: u64,
    /// Of the requests that succeeded, those the verdict judges: every one
    /// before the first trigger starts, and after it only those made after
    /// the last trigger ended (the service's fresh traffic; an incident's
    /// stragglers, finishing late from their backoff, are not its health).
    pub judged_successes: u64,
    /// Of the requests that gave up, those the verdict judges.
    pub judged_gave_up: u64,
    /// The sum of the judged successes' latencies, ns.
    pub judged_latency_sum_ns: u64,
    /// The sum of their squares, ms² (the baseline's spread).
    pub judged_latency_squares_ms2: f64,
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
        self.latency_sum_ns += other.latency_sum_ns;
        self.judged_successes += other.judged_successes;
        self.judged_gave_up += other.judged_gave_up;
        self.judged_latency_sum_ns += other.judged_latency_sum_ns;
        self.judged_latency_squares_ms2 += other.judged_latency_squares_ms2;
    }

    /// The mean latency of the window's judged successes, ms, if it had
    /// any.
    pub fn judged_latency_mean_ms(&self) -> Option<f64> {
        (self.judged_successes > 0)
            .then(|| self.judged_latency_sum_ns as f64 / 1e6 / self.judged_successes as f64)
    }

    /// The mean latency of the window's successes, ms, if it had any.
    pub fn latency_mean_ms(&self) -> Option<f64> {
        (self.successes > 0).then(|| self.latency_sum_ns as f64 / 1e6 / self.successes as f64)
    }

    /// The backlog at the window's end: attempts waiting in the queue,
    /// attempts in service and retries waiting out their delay (the work
    /// the service still owes, whether or not anyone waits for it).
    pub fn backlog(&self) -> u64 {
        self.queue + self.busy + self.retries_waiting
    }

    /// Successes among the requests that ended in the window, if any did.
    pub fn success_rate(&self) -> Option<f64> {
        let ended = self.successes + self.gave_up;
        (ended > 0).then(|| self.successes as f64 / ended as f64)
    }
}

pub use crate::spec::bounds::{MAX_IN_FLIGHT, MAX_WINDOWS, WINDOW_BYTES};

/// A bound that cut a server run while it ran, each a guard of memory or of
/// the clock: what cannot be known before the run (how long its drain
/// lasts, how many requests pile up) is bounded here, and a cut run is an
/// error that says which bound and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Its next event lay at or past the clock's end
    /// ([`crate::model::server::CLOCK_END_NS`], 292 years); the times the
    /// loop adds saturate rather than wrap to 0.
    ClockEnd,
    /// Its time series would have passed [`MAX_WINDOWS`] windows, at the
    /// event at `at_ns`.
    Windows {
        /// The time of the event whose window lies past the bound, ns.
        at_ns: Nanos,
    },
    /// Its open loop had more than [`MAX_IN_FLIGHT`] requests in flight.
    InFlight,
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
    /// The integral of the retries waiting out their delay over the load's
    /// duration, ns.
    pub retries_waiting_area: u128,
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
    /// How the run ended after its triggers ([`crate::measure::verdict`]);
    /// `None` without a trigger.
    pub verdict: Option<Verdict>,
    /// The backlog's course late in the patience window, for a run that
    /// did not recover ([`crate::measure::verdict::Trend`]).
    pub backlog_trend: Option<crate::measure::verdict::Trend>,
    /// When new requests stopped, ns: the duration, or with a fixed request
    /// count the last one's arrival (the verdict needs the load on through
    /// its patience window).
    pub load_end_ns: Nanos,
    /// Requests that ended (succeeded or gave up) in the windows the
    /// triggers span; `None` without a trigger.
    pub ended_during_trigger: Option<u64>,
    /// Successes per request ended in the windows the triggers span (from
    /// the first's start to the last's end); `None` without a trigger, or
    /// when fewer than [`MIN_ENDED_FOR_A_RATE`] requests ended there.
    pub success_during_trigger: Option<f64>,
    /// Successes per request ended in the patience window after the last
    /// trigger; `None` without a trigger, when the load ended before the
    /// window did, or when fewer than [`MIN_ENDED_FOR_A_RATE`] ended there.
    pub success_after_trigger: Option<f64>,
    /// False if the run was cut at its horizon or event limit with requests
    /// still in flight.
    pub complete: bool,
    /// True if the event limit cut it (a horizon is the workload's own end;
    /// the event limit is a guard, and reaching it is an error).
    pub hit_event_limit: bool,
    /// Which bound of memory or of the clock cut the run, if one did (like
    /// the event limit, a guard: reaching one is an error).
    pub cut: Option<Cut>,
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
    /// Successes won by an attempt kept past its per-attempt timeout
    /// (hedging on timeout); 0 without it.
    pub kept_wins: u64,
}

impl ServerMetrics {
    /// Time from the end of the last trigger to recovery, ns; `None`
    /// without a trigger, or when the run did not recover.
    pub fn recovery_ns(&self) -> Option<Nanos> {
        match self.verdict {
            Some(Verdict::Recovered(ns)) => Some(ns),
            _ => None,
        }
    }

    /// True if the run ended stuck.
    pub fn stuck(&self) -> bool {
        self.verdict == Some(Verdict::Stuck)
    }

    /// Mean end-to-end latency of successful requests, ms; `None` without
    /// one.
    pub fn latency_mean_ms(&self) -> Option<f64> {
        (self.successes > 0).then(|| {
            self.latency_total_ns as f64 / self.successes as f64 / NS_PER_MS.ticks() as f64
        })
    }

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
        ratio(self.busy_area as f64, self.duration_ns.ticks() as f64)
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
        ratio(self.queue_area as f64, self.duration_ns.ticks() as f64)
    }

    /// Mean retries waiting out their backoff delay over the load's
    /// duration: with the queue, the backlog.
    pub fn mean_retries_waiting(&self) -> f64 {
        ratio(
            self.retries_waiting_area as f64,
            self.duration_ns.ticks() as f64,
        )
    }

    /// Mean attempts at the server (waiting or served) over the load's
    /// duration: L of queueing theory.
    pub fn mean_in_system(&self) -> f64 {
        self.mean_queue() + self.mean_busy()
    }

    /// Mean sojourn of admitted attempts at the server, ms: W.
    pub fn mean_sojourn_ms(&self) -> f64 {
        ratio(self.sojourn_ns as f64, self.served as f64) / NS_PER_MS.ticks() as f64
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

/// The fewest requests a success rate is reported over: below it the share
/// is too coarse to read (1 of 1 would say 1.000 of a stuck run).
pub const MIN_ENDED_FOR_A_RATE: u64 = 10;

/// Successes per request ended in windows `from..to` (indices), and how many
/// ended there; the rate is `None` when fewer than [`MIN_ENDED_FOR_A_RATE`]
/// did.
pub fn success_over(windows: &[Window], from: usize, to: usize) -> (Option<f64>, u64) {
    let span = windows
        .get(from.min(windows.len())..to.min(windows.len()))
        .unwrap_or(&[]);
    let (ok, ended) = span.iter().fold((0, 0), |(ok, ended), w| {
        (ok + w.successes, ended + w.successes + w.gave_up)
    });
    (
        (ended >= MIN_ENDED_FOR_A_RATE).then(|| ok as f64 / ended as f64),
        ended,
    )
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
    /// Requests ended while the triggers ran.
    EndedDuringTrigger,
    /// Success rate of the requests ended while the triggers ran.
    SuccessDuringTrigger,
    /// Success rate of the requests ended after the last trigger.
    SuccessAfterTrigger,
    /// Share of worker time spent on attempts whose client had timed out.
    WastedWork,
    /// Mean end-to-end latency of successful requests.
    LatencyMeanMs,
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
    /// Mean retries waiting out their backoff delay during the load.
    RetriesWaitingMean,
    /// From the end of the last trigger to recovery.
    RecoveryMs,
    /// A draining run's projected recovery.
    ProjectedRecoveryMs,
    /// The t statistic of the backlog's slope late in the patience window.
    BacklogTrendT,
    /// 1 if the run was still draining at the patience window's end.
    Draining,
    /// 1 if the run ended stuck, 0 if it recovered (empty if unresolved).
    Stuck,
    /// 1 if the load ended too soon after the triggers to tell.
    Unresolved,
}

impl ServerMetric {
    /// Every metric, in report order.
    pub const ALL: [ServerMetric; 28] = [
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
        ServerMetric::LatencyMeanMs,
        ServerMetric::LatencyP50Ms,
        ServerMetric::LatencyP99Ms,
        ServerMetric::LatencyP999Ms,
        ServerMetric::Utilisation,
        ServerMetric::QueueMean,
        ServerMetric::QueuePeak,
        ServerMetric::RetriesWaitingMean,
        ServerMetric::EndedDuringTrigger,
        ServerMetric::SuccessDuringTrigger,
        ServerMetric::SuccessAfterTrigger,
        ServerMetric::RecoveryMs,
        ServerMetric::ProjectedRecoveryMs,
        ServerMetric::BacklogTrendT,
        ServerMetric::Draining,
        ServerMetric::Stuck,
        ServerMetric::Unresolved,
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
            ServerMetric::LatencyMeanMs => (
                "latency_mean_ms",
                2,
                "mean end-to-end latency of successful requests (retries and backoff included; \
                 empty without a success)",
                ServerMetrics::latency_mean_ms,
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
            ServerMetric::RetriesWaitingMean => (
                "retries_waiting_mean",
                2,
                "mean retries waiting out their backoff delay during the load (with queue_mean, \
                 the backlog)",
                |m| Some(m.mean_retries_waiting()),
            ),
            ServerMetric::EndedDuringTrigger => (
                "ended_during_trigger",
                0,
                "requests that ended (succeeded or gave up) in the windows the triggers span \
                 (empty without a trigger): what success_during_trigger is over",
                |m| m.ended_during_trigger.map(|n| n as f64),
            ),
            ServerMetric::SuccessDuringTrigger => (
                "success_during_trigger",
                4,
                "successes per request ended in the windows the triggers span, from the first's \
                 start to the last's end (empty without a trigger, or when fewer than 10 ended \
                 there)",
                |m| m.success_during_trigger,
            ),
            ServerMetric::SuccessAfterTrigger => (
                "success_after_trigger",
                4,
                "successes per request ended in the patience window after the last trigger \
                 (empty when unresolved, or when fewer than 10 ended there)",
                |m| m.success_after_trigger,
            ),
            ServerMetric::RecoveryMs => (
                "recovery_ms",
                1,
                "from the end of the last trigger until every later window of the patience \
                 window is healthy (success rate, goodput and mean latency back at their levels \
                 before the first trigger); empty unless recovered, so its mean is over the runs \
                 that recovered",
                |m| {
                    m.recovery_ns()
                        .map(|ns| ns.ticks() as f64 / NS_PER_MS.ticks() as f64)
                },
            ),
            ServerMetric::ProjectedRecoveryMs => (
                "projected_recovery_ms",
                1,
                "for a run still draining at the patience window's end, when its backlog's \
                 fitted line reaches the level it had before the first trigger, from the end of \
                 the last trigger (at least the patience); empty otherwise",
                |m| match m.verdict {
                    Some(Verdict::Draining(ns)) => {
                        Some(ns.ticks() as f64 / NS_PER_MS.ticks() as f64)
                    }
                    _ => None,
                },
            ),
            ServerMetric::BacklogTrendT => (
                "backlog_trend_t",
                1,
                "the t statistic of the backlog's least-squares slope (queue, attempts in \
                 service and retries waiting) over ten segment means of the patience window's \
                 second half, for a run not recovered: -4 or below with a fall of a fifth or \
                 more is a drain, otherwise stuck; empty when recovered or unresolved",
                |m| m.backlog_trend.map(|t| t.t.clamp(-1e9, 1e9)),
            ),
            ServerMetric::Draining => (
                "draining",
                0,
                "1 if the run was not yet healthy at the patience window's end but its backlog \
                 was still falling steadily (a slow recovery, not a storm), 0 if it recovered or \
                 stuck, empty if unresolved or without a trigger",
                |m| {
                    m.verdict
                        .filter(|&v| v != Verdict::Unresolved)
                        .map(|v| f64::from(u8::from(matches!(v, Verdict::Draining(_)))))
                },
            ),
            ServerMetric::Stuck => (
                "stuck",
                0,
                "1 if the run was still (or again) unhealthy in the last quarter of the patience \
                 window with the load on and its backlog not falling, 0 if it recovered or was \
                 draining, empty if unresolved or without a trigger; its mean is the storm \
                 probability over decided runs",
                |m| match m.verdict {
                    Some(Verdict::Stuck) => Some(1.0),
                    Some(Verdict::Recovered(_) | Verdict::Draining(_)) => Some(0.0),
                    _ => None,
                },
            ),
            ServerMetric::Unresolved => (
                "unresolved",
                0,
                "1 if the load (or the horizon) ended before the patience window after the last \
                 trigger did, so the run cannot tell (empty without a trigger)",
                |m| {
                    m.verdict
                        .map(|v| f64::from(u8::from(v == Verdict::Unresolved)))
                },
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

/// The storm probability of some runs: how many ended stuck, of how many
/// decided (stuck or recovered), the Wilson 95% interval of their share, and
/// how many were left unresolved beside them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Storm {
    /// Runs that ended stuck.
    pub stuck: u64,
    /// Runs decided: stuck or recovered.
    pub runs: u64,
    /// Runs unresolved (not in `runs`).
    pub unresolved: u64,
    /// Of the decided runs not stuck, those still draining at the patience
    /// window's end (a slow recovery, not a storm).
    pub draining: u64,
    /// The interval's low end.
    pub low: f64,
    /// The interval's high end.
    pub high: f64,
}

impl Storm {
    /// From the summaries of the `stuck` and `unresolved` metrics (0 or 1 a
    /// run, `stuck` empty for unresolved runs), which every report already
    /// has: a mean times its count is the runs it counts.
    pub fn of(summaries: &[(ServerMetric, crate::measure::stats::Summary)]) -> Storm {
        let count = |metric: ServerMetric| {
            summaries
                .iter()
                .find(|(m, _)| *m == metric)
                .map_or(0, |(_, s)| {
                    if s.n == 0 {
                        0
                    } else {
                        (s.mean * s.n as f64).round() as u64
                    }
                })
        };
        let runs = summaries
            .iter()
            .find(|(m, _)| *m == ServerMetric::Stuck)
            .map_or(0, |(_, s)| s.n as u64);
        Storm {
            draining: count(ServerMetric::Draining),
            ..Storm::of_counts(
                count(ServerMetric::Stuck),
                runs,
                count(ServerMetric::Unresolved),
            )
        }
    }

    /// `stuck` of `runs` decided, with its interval, and `unresolved` more.
    pub fn of_counts(stuck: u64, runs: u64, unresolved: u64) -> Storm {
        let (low, high) = wilson_interval(stuck, runs);
        Storm {
            stuck,
            runs,
            unresolved,
            draining: 0,
            low,
            high,
        }
    }

    /// "3 of 10 (95% CI 0.11–0.60), 2 unresolved": what every table says.
    pub fn describe(&self) -> String {
        let mut text = if self.runs == 0 {
            "no run decided".to_string()
        } else {
            format!(
                "{} of {} ({:.3}, 95% CI {:.3}–{:.3})",
                self.stuck,
                self.runs,
                self.probability(),
                self.low,
                self.high
            )
        };
        if self.draining > 0 {
            text += &format!(
                ", {} more still draining at the patience window's end (not stuck)",
                self.draining
            );
        }
        if self.unresolved > 0 {
            text += &format!(
                ", {} unresolved (the load ended before the patience window did)",
                self.unresolved
            );
        }
        text
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_bounds_state_a_windows_size_as_it_is() {
        assert_eq!(super::WINDOW_BYTES, size_of::<super::Window>());
    }
}
