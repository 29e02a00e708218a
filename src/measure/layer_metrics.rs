//! What each service of a chain saw (layered services,
//! [`crate::model::chain`]), and the per-service metrics reported from it.

use crate::measure::histogram::Histogram;
use crate::measure::server_metrics::ServerMetrics;

/// What one service of a chain saw (layered services: service 1 is the one
/// the users call, the last is the server).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LayerMetrics {
    /// Calls made to it (user requests for service 1).
    pub calls: u64,
    /// Attempts that reached it.
    pub attempts: u64,
    /// Calls to it that succeeded.
    pub successes: u64,
    /// Calls to it whose caller gave up.
    pub gave_up: u64,
    /// Attempts to it that its caller timed out.
    pub timeouts: u64,
    /// Attempts it refused (the server's full queue, shedding, drops).
    pub rejected: u64,
    /// Worker time it spent (an upper service's worker is busy from taking
    /// an attempt until its call below ends), ns.
    pub busy_ns: u128,
    /// The part of it on attempts whose caller had timed out, ns.
    pub wasted_ns: u128,
    /// Latency of its successful calls, as its caller saw them (first
    /// attempt sent to success, retries and back-off included), ns.
    pub latency: Histogram,
}

impl LayerMetrics {
    /// Share of its worker time spent on attempts whose caller had timed
    /// out; `None` if it did no work.
    pub fn wasted_work(&self) -> Option<f64> {
        (self.busy_ns > 0).then(|| self.wasted_ns as f64 / self.busy_ns as f64)
    }
}

/// A per-service metric of a chain, read from a run for service `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerMetric {
    /// Calls made to it.
    Calls,
    /// Attempts that reached it.
    Attempts,
    /// Attempts that reached it per user request.
    Amplification,
    /// Its successful calls per call.
    SuccessRate,
    /// Attempts to it its caller timed out.
    Timeouts,
    /// Calls to it given up.
    GaveUp,
    /// Attempts it refused.
    Rejected,
    /// Share of its worker time on attempts whose caller had timed out.
    WastedWork,
    /// Median latency of its successful calls.
    LatencyP50Ms,
    /// 99th percentile of the same.
    LatencyP99Ms,
}

/// (name, decimals, description, value of service `i` in a run).
type LayerMetricInfo = (
    &'static str,
    usize,
    &'static str,
    fn(&ServerMetrics, usize) -> Option<f64>,
);

impl LayerMetric {
    /// Every per-service metric, in report order.
    pub const ALL: [LayerMetric; 10] = [
        LayerMetric::Calls,
        LayerMetric::Attempts,
        LayerMetric::Amplification,
        LayerMetric::SuccessRate,
        LayerMetric::Timeouts,
        LayerMetric::GaveUp,
        LayerMetric::Rejected,
        LayerMetric::WastedWork,
        LayerMetric::LatencyP50Ms,
        LayerMetric::LatencyP99Ms,
    ];

    fn info(self) -> LayerMetricInfo {
        match self {
            LayerMetric::Calls => ("calls", 0, "calls made to the service", |m, i| {
                Some(m.layers[i].calls as f64)
            }),
            LayerMetric::Attempts => ("attempts", 0, "attempts that reached it", |m, i| {
                Some(m.layers[i].attempts as f64)
            }),
            LayerMetric::Amplification => (
                "amplification",
                3,
                "attempts that reached it per user request",
                |m, i| Some(m.layers[i].attempts as f64 / m.requests.max(1) as f64),
            ),
            LayerMetric::SuccessRate => (
                "success_rate",
                4,
                "its calls that succeeded, per call",
                |m, i| {
                    let l = &m.layers[i];
                    (l.calls > 0).then(|| l.successes as f64 / l.calls as f64)
                },
            ),
            LayerMetric::Timeouts => (
                "timeouts",
                0,
                "attempts to it that its caller timed out",
                |m, i| Some(m.layers[i].timeouts as f64),
            ),
            LayerMetric::GaveUp => ("gave_up", 0, "calls to it given up", |m, i| {
                Some(m.layers[i].gave_up as f64)
            }),
            LayerMetric::Rejected => ("rejected", 0, "attempts it refused", |m, i| {
                Some(m.layers[i].rejected as f64)
            }),
            LayerMetric::WastedWork => (
                "wasted_work",
                4,
                "share of its worker time on attempts whose caller had timed out",
                |m, i| m.layers[i].wasted_work(),
            ),
            LayerMetric::LatencyP50Ms => (
                "latency_p50_ms",
                3,
                "median latency of its successful calls, as their callers saw them",
                |m, i| m.layers[i].latency.quantile_ms(0.5),
            ),
            LayerMetric::LatencyP99Ms => (
                "latency_p99_ms",
                3,
                "99th percentile of the same",
                |m, i| m.layers[i].latency.quantile_ms(0.99),
            ),
        }
    }

    /// The per-service metrics a sweep file has columns for (service `i`'s
    /// as `service{i}_{name}`): what the issue of layered services asks per
    /// layer, without the counts a rate or amplification already gives.
    pub const IN_SWEEPS: [LayerMetric; 7] = [
        LayerMetric::Attempts,
        LayerMetric::Amplification,
        LayerMetric::SuccessRate,
        LayerMetric::Timeouts,
        LayerMetric::WastedWork,
        LayerMetric::LatencyP50Ms,
        LayerMetric::LatencyP99Ms,
    ];

    /// snake_case name with its unit.
    pub fn name(self) -> &'static str {
        self.info().0
    }

    /// Its column in a sweep file for service `service` (1 is the one users
    /// call).
    pub fn column(self, service: usize) -> String {
        format!("service{service}_{}", self.name())
    }

    /// Decimals shown in human output.
    pub fn decimals(self) -> usize {
        self.info().1
    }

    /// What it is.
    pub fn description(self) -> &'static str {
        self.info().2
    }

    /// Its value for service `i` (0 is the one users call) of `metrics`, if
    /// the run has one.
    pub fn value(self, metrics: &ServerMetrics, i: usize) -> Option<f64> {
        if i >= metrics.layers.len() {
            return None;
        }
        (self.info().3)(metrics, i)
    }
}
