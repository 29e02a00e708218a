//! Reports of results, one exporter per format. Exporters build strings; the
//! command line decides where they go.

pub mod csv;
mod json;
mod table;

pub use json::run_json;
pub use table::{policies_table, run_table};

use serde::Serialize;

use crate::metrics::Metric;
use crate::spec::{RunSpec, group_thousands};
use crate::stats::Summary;
use crate::time::{format_duration, us_to_ms};

/// A workload's results over replicate seeds: what `herdsim run` reports.
#[derive(Debug, Clone)]
pub struct RunReport<'a> {
    /// The workload.
    pub spec: &'a RunSpec,
    /// The master seed every job seed was mixed from.
    pub master_seed: u64,
    /// Each metric's summary over the replicates, in report order.
    pub summaries: Vec<(Metric, Summary)>,
}

impl RunReport<'_> {
    /// How many replicates were run.
    pub fn replicates(&self) -> usize {
        self.summaries.first().map_or(0, |(_, s)| s.n)
    }
}

/// The workload as reported: every parameter, in reported units (ms).
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSummary {
    /// Resource model.
    pub resource: &'static str,
    /// How first calls arrive.
    pub arrivals: &'static str,
    /// Clients.
    pub clients: u32,
    /// Requests served per ms.
    pub capacity_per_ms: f64,
    /// One service time, ms.
    pub service_ms: f64,
    /// Policy name.
    pub policy: &'static str,
    /// Policy base, ms.
    pub base_ms: f64,
    /// Policy cap, ms.
    pub cap_ms: f64,
    /// Linear step, ms (linear only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_ms: Option<f64>,
    /// Proportional jitter factor (0 is off).
    pub jitter_factor: f64,
    /// Peak-retries window, ms.
    pub window_ms: f64,
}

impl WorkloadSummary {
    /// The summary of `spec`.
    pub fn of(spec: &RunSpec) -> Self {
        let p = &spec.policy;
        WorkloadSummary {
            resource: "slot",
            arrivals: "herd",
            clients: spec.clients,
            capacity_per_ms: spec.capacity_per_ms,
            service_ms: spec.service_ns() as f64 / 1e6,
            policy: p.kind.name(),
            base_ms: us_to_ms(p.base_us),
            cap_ms: us_to_ms(p.cap_us),
            step_ms: (p.kind == crate::PolicyKind::Linear).then(|| us_to_ms(p.step_us)),
            jitter_factor: p.jitter_factor,
            window_ms: us_to_ms(spec.window()),
        }
    }

    /// One line a parameter group, for human output.
    pub fn lines(spec: &RunSpec) -> [String; 2] {
        let p = &spec.policy;
        let service = spec.service_ns();
        let service = if service.is_multiple_of(1_000) {
            format_duration(service / 1_000)
        } else {
            format!("{:.3}us", service as f64 / 1e3)
        };
        let mut policy = format!(
            "{} (base {}, cap {}",
            p.kind.name(),
            format_duration(p.base_us),
            format_duration(p.cap_us)
        );
        if p.kind == crate::PolicyKind::Linear {
            policy += &format!(", step {}", format_duration(p.step_us));
        }
        if p.jitter_factor > 0.0 {
            policy += &format!(", jitter factor {}", p.jitter_factor);
        }
        policy.push(')');
        [
            format!(
                "{} clients, all first calls at t = 0, against a slot resource serving {}/ms (one call per {service})",
                group_thousands(u64::from(spec.clients)),
                spec.capacity_per_ms
            ),
            format!("policy {policy}: {}", p.kind.formula()),
        ]
    }
}

/// `v` with `decimals` decimals and thousands separators: `3,740.25`.
pub fn format_number(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    out += &group_thousands(whole.parse().unwrap_or(0));
    if !fraction.is_empty() {
        out.push('.');
        out += fraction;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_rounded() {
        assert_eq!(format_number(3_740.25, 1), "3,740.2");
        assert_eq!(format_number(500_500.0, 0), "500,500");
        assert_eq!(format_number(0.01234, 4), "0.0123");
        assert_eq!(format_number(-1_234.5, 1), "-1,234.5");
        assert_eq!(format_number(-0.0001, 2), "0.00");
    }
}
