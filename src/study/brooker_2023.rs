//! Brooker 2023, "Open and closed, omission and collapse": its omission
//! model (mbrooker/simulator_example's `omission/omission.py`) on the server
//! model.
//!
//! One FCFS server (`workers = 1`), service exponential (mean 0.1 ms),
//! bimodal (Exp(0.1 ms), or Exp(10 ms) one time in a thousand) or Weibull
//! (mean 0.1 ms, shape 2); an open loop at ρ = 0.8 (its first arrival at
//! t = 0 in the code, after one gap here), or a closed loop of 1 or 10 users
//! who all start at t = 0 (`first_call = "const:0"`) and think Exp(Z),
//! Z = (1 − ρ)·E[S] + (N − 1)·E[S]/ρ: for one user that gives ρ ≈ 0.833, not
//! 0.8, as the model file says. The run stops at 5 s (20 s for the ρ sweep)
//! with no drain (`horizon`), so jobs still queued are not counted, as in the
//! code. herdsim's durations are whole µs, so the bimodal closed loops think
//! Exp(22 µs) and Exp(1,258 µs) for the code's 21.98 and 1,258.35 µs.
//!
//! The `open_timeout_15` configuration replaces a job that took more than
//! 15 ms when it completes (`timeout = "15ms"`, `timeout_noticed = "reply"`,
//! retries at once without end): the queue then grows without bound. Its
//! latency quantiles are of every attempt completed before the horizon, not
//! measured by herdsim (whose latencies are of requests that succeeded), so
//! its queue and utilisation are judged here and its growth second by
//! second in [`crate::study::brooker_2023_queue`]. The simple collapse model
//! is [`crate::study::brooker_2023_collapse`].

use crate::measure::server_metrics::{ServerMetric, ServerMetrics, Window};
use crate::model::server::ServerSpec;
use crate::study::error::StudyError;
use crate::study::overload::{Study, StudyMetric};
use crate::study::reference::{ReferenceRow, Table, TableRow, spec_of};

/// The study.
pub static STUDY: Study = Study {
    name: "brooker-2023-omission",
    title: "Brooker 2023, \"Open and closed, omission and collapse\" (omission)",
    reference_file: "brooker-2023-omission.csv",
    embedded: include_str!("../../reference/brooker-2023-omission.csv"),
    metrics: &METRICS,
    wide_table: false,
    read,
};

/// Latency quantiles and means of the jobs completed, the queue and the
/// server's utilisation.
static METRICS: [StudyMetric; 6] = [
    StudyMetric {
        name: "p50",
        title: "p50 latency (ms)",
        decimals: 4,
        value: |m, _, _| ServerMetric::LatencyP50Ms.value(m),
    },
    StudyMetric {
        name: "p99",
        title: "p99 latency (ms)",
        decimals: 3,
        value: |m, _, _| ServerMetric::LatencyP99Ms.value(m),
    },
    StudyMetric {
        name: "p999",
        title: "p99.9 latency (ms)",
        decimals: 3,
        value: |m, _, _| ServerMetric::LatencyP999Ms.value(m),
    },
    StudyMetric {
        name: "mean_latency",
        title: "mean latency (ms)",
        decimals: 4,
        value: |m, _, _| {
            (m.successes > 0).then(|| m.latency_total_ns as f64 / m.successes as f64 / 1e6)
        },
    },
    StudyMetric {
        name: "Lq_timeavg",
        title: "mean queue (waiting)",
        decimals: 3,
        value: |m, s, _| Some(m.queue_area as f64 / s.duration.ticks() as f64),
    },
    StudyMetric {
        name: "utilization",
        title: "utilisation",
        decimals: 4,
        value: utilisation,
    },
];

/// The busy share of the one server over the run.
fn utilisation(m: &ServerMetrics, s: &ServerSpec, _: Option<&Window>) -> Option<f64> {
    Some(m.busy_area as f64 / s.duration.ticks() as f64)
}

/// The columns read.
const COLUMNS: [&str; 16] = [
    "group",
    "config",
    "max_t_ms",
    "seeds",
    "p50_mean",
    "p50_sd",
    "p99_mean",
    "p99_sd",
    "p999_mean",
    "p999_sd",
    "mean_latency_mean",
    "mean_latency_sd",
    "Lq_timeavg_mean",
    "Lq_timeavg_sd",
    "utilization_mean",
    "utilization_sd",
];

/// A service distribution of the code: its setting and mean, ms.
fn service(group: &str) -> Option<(&'static str, f64)> {
    match group {
        "exp" => Some(("exp:100us", 0.1)),
        "bimod" | "bimod_timeout" => {
            Some(("mix:0.001/exp:100us/exp:10ms", 0.999 * 0.1 + 0.001 * 10.0))
        }
        "weibull" | "rho_sweep" => Some(("weibull:100us/2", 0.1)),
        _ => None,
    }
}

/// The workload of the code's configuration `config` of `group`, as
/// registry settings; `Err` names the column at fault and why.
pub fn settings(
    group: &str,
    config: &str,
) -> Result<Vec<(&'static str, String)>, (&'static str, String)> {
    let Some((dist, mean_ms)) = service(group) else {
        return Err((
            "group",
            format!(
                "unknown group '{group}': expected exp, bimod, weibull, rho_sweep or bimod_timeout"
            ),
        ));
    };
    let rho = match config.strip_prefix("rho_sweep_rho") {
        Some(rho) => rho
            .parse::<f64>()
            .ok()
            .filter(|r| *r > 0.0 && *r < 1.0)
            .ok_or_else(|| ("config", format!("'{rho}' is not a load below 1")))?,
        None => 0.8,
    };
    let mut settings: Vec<(&str, String)> = vec![
        ("resource", "server".into()),
        ("workers", "1".into()),
        ("policy", "no-backoff".into()),
        ("service", dist.into()),
    ];
    match config.strip_suffix("_timeout_15") {
        // "Retry if latency > 15 ms": a job that took longer is replaced
        // when it completes, without end.
        Some(_) => settings.extend([
            ("timeout", "15ms".into()),
            ("timeout_noticed", "reply".into()),
        ]),
        None => settings.push(("max_attempts", "1".into())),
    }
    match config.rsplit_once("_closed_") {
        Some((_, users)) => {
            let n: f64 = users
                .parse()
                .ok()
                .filter(|n: &f64| *n >= 1.0)
                .ok_or_else(|| ("config", format!("'{users}' users")))?;
            // The code's think time, in whole µs.
            let think_us = ((1.0 - rho) * mean_ms + (n - 1.0) * mean_ms / rho) * 1e3;
            settings.extend([
                ("users", users.to_string()),
                ("think", format!("exp:{}us", think_us.round())),
                ("first_call", "const:0".into()),
            ]);
        }
        None => settings.push(("rate", (rho / mean_ms * 1e3).to_string())),
    }
    Ok(settings)
}

/// The longest run a reference row may ask for, ms (a day).
const MAX_HORIZON_MS: f64 = 86_400_000.0;

/// The run's length, from a row's `column` (whole ms).
pub fn horizon(r: &TableRow<'_>, column: &str) -> Result<String, StudyError> {
    let max_t = r.number(column)?;
    if !(1.0..=MAX_HORIZON_MS).contains(&max_t) || max_t.fract() != 0.0 {
        return Err(r.invalid(
            column,
            format!("expected a whole number of ms from 1 to {MAX_HORIZON_MS}"),
        ));
    }
    Ok(format!("{max_t}ms"))
}

/// Reads `brooker-2023-omission.csv` (or a rerun of the same shape). The
/// configuration with the completion-time replacement rule has only its
/// queue and utilisation judged: its latencies are of every attempt
/// completed before the horizon (herdsim's are of requests that succeeded).
pub fn read(text: &str) -> Result<Vec<ReferenceRow>, StudyError> {
    let table = Table::read(text, &COLUMNS)?;
    let mut rows = Vec::new();
    for r in table.rows() {
        let (group, config) = (r.text("group")?, r.text("config")?);
        let mut settings =
            settings(group, config).map_err(|(column, why)| r.invalid(column, why))?;
        let horizon = horizon(&r, "max_t_ms")?;
        settings.extend([("duration", horizon.clone()), ("horizon", horizon)]);
        let pairs: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let n = r.count("seeds", 1)?;
        let per_attempt = config.contains("timeout");
        let mut figures = Vec::new();
        for m in &METRICS {
            if per_attempt && !["Lq_timeavg", "utilization"].contains(&m.name) {
                continue;
            }
            figures.push((
                m.name,
                r.estimate(&format!("{}_mean", m.name), &format!("{}_sd", m.name), n)?,
            ));
        }
        rows.push(ReferenceRow {
            key: vec![("group", group.to_string()), ("config", config.to_string())],
            spec: spec_of(&pairs),
            window: None,
            figures,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_reference_reads_every_configuration() {
        let rows = STUDY.embedded_rows();
        assert_eq!(rows.len(), 20);
        let timeout = rows
            .iter()
            .find(|r| r.label() == "group=bimod_timeout config=open_timeout_15")
            .unwrap();
        assert_eq!(timeout.spec.max_attempts, None);
        assert_eq!(timeout.figures.len(), 2, "queue and utilisation only");
        let closed = rows
            .iter()
            .find(|r| r.label() == "group=exp config=exp_closed_10")
            .unwrap();
        assert_eq!(closed.spec.server.users, Some(10));
        assert_eq!(closed.spec.server.think.to_string(), "exp:1.145ms");
        let sweep = rows
            .iter()
            .find(|r| r.label() == "group=rho_sweep config=rho_sweep_rho0.5")
            .unwrap();
        assert_eq!(sweep.spec.server.rate_per_s, Some(5000.0));
    }
}
