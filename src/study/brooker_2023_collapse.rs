//! Brooker 2023, "Open and closed, omission and collapse": its simple
//! collapse model (mbrooker/simulator_example's `simple_collapse_sim/sim.py`)
//! on the server model, judged second by second.
//!
//! The code's model (reference/brooker-models.md §3): a server with no queue
//! and no limit (`workers = "inf"`) whose every request takes 1 s + 10 ms ×
//! the requests in service when it arrives, itself included, fixed then
//! (`service = "const:1s"`, `service_per_busy = "10ms"`); Exp(100 ms) each
//! way; a 3 s timeout from the send that covers both hops and does not stop
//! the server's work; at most 3 attempts (the comments say 3 retries, the
//! code makes 2), sent at once, or with the code's backoff (U(0, 20 s), then
//! U(0, 40 s): full jitter, base 20 s, cap 40 s). The load is one Poisson
//! arrival after another with each gap drawn at the rate in force at the
//! arrival before it (`rate_changes = "at-arrival"`): 40/s with a spike to
//! 80/s from 20 s to 25 s, or a ramp 40/s → 80/s at 25 s → 0 at 75 s (after
//! which the code makes no more arrivals: `ramp:0/0@75s..80s` keeps the rate
//! at 0 until the horizon). The code stops at 80 s with no drain.
//!
//! Figures are per second: requests started, successes (at the client),
//! retries decided (at a timeout, even when backoff sends them later:
//! timeouts less give-ups, as the code's give-ups are timeouts less
//! retries), timeouts and the requests in service at the second's end (the
//! reference records these; the author's own CSV prints run 0's final
//! concurrency on every row). The reference's give-ups are not judged: they
//! are timeouts less retries, both judged.
//!
//! Where herdsim's load differs: the code's first arrival is at exactly
//! 10 ms, herdsim's after a first gap (0.6 requests fewer in the first
//! second, on average).

use crate::measure::server_metrics::Window;
use crate::model::server::ServerSpec;
use crate::study::error::StudyError;
use crate::study::overload::{Study, StudyMetric};
use crate::study::reference::{ReferenceRow, Table, spec_of};

/// The study.
pub static STUDY: Study = Study {
    name: "brooker-2023-collapse",
    title: "Brooker 2023, \"Open and closed, omission and collapse\" (simple collapse)",
    reference_file: "brooker-2023-collapse.csv",
    embedded: include_str!("../../reference/brooker-2023-collapse.csv"),
    metrics: &METRICS,
    wide_table: true,
    read,
};

/// A count of the row's second.
fn in_window(w: Option<&Window>, count: fn(&Window) -> u64) -> Option<f64> {
    w.map(|w| count(w) as f64)
}

/// The code's per-second figures.
static METRICS: [StudyMetric; 5] = [
    StudyMetric {
        name: "starts",
        title: "started",
        decimals: 1,
        value: |_, _, w| in_window(w, |w| w.arrivals),
    },
    StudyMetric {
        name: "successes",
        title: "successes",
        decimals: 1,
        value: |_, _, w| in_window(w, |w| w.successes),
    },
    StudyMetric {
        name: "retries",
        title: "retries",
        decimals: 1,
        value: |_, _, w| in_window(w, |w| w.timeouts - w.gave_up),
    },
    StudyMetric {
        name: "timeouts",
        title: "timeouts",
        decimals: 1,
        value: |_, _, w| in_window(w, |w| w.timeouts),
    },
    StudyMetric {
        name: "concurrency_at_bin_end",
        title: "in service at end",
        decimals: 1,
        value: |_, _, w| in_window(w, |w| w.busy),
    },
];

/// The columns read.
const COLUMNS: [&str; 13] = [
    "scenario",
    "t_bin_start_s",
    "seeds",
    "starts_mean",
    "starts_sd",
    "successes_mean",
    "successes_sd",
    "retries_mean",
    "retries_sd",
    "timeouts_mean",
    "timeouts_sd",
    "concurrency_at_bin_end_mean",
    "concurrency_at_bin_end_sd",
];

/// What every scenario shares.
const COMMON: [(&str, &str); 13] = [
    ("resource", "server"),
    ("workers", "inf"),
    ("service", "const:1s"),
    ("service_per_busy", "10ms"),
    ("request_delay", "exp:100ms"),
    ("reply_delay", "exp:100ms"),
    ("timeout", "3s"),
    ("max_attempts", "3"),
    ("rate", "40"),
    ("rate_changes", "at-arrival"),
    ("duration", "80s"),
    ("horizon", "80s"),
    ("window", "1s"),
];

/// The ramp: 40/s → 80/s at 25 s → 0 at 75 s, and no arrivals after.
const RAMP: &str = "ramp:1/2@0s..25s+ramp:2/0@25s..75s+ramp:0/0@75s..80s";
/// The spike: 80/s from 20 s to 25 s.
const SPIKE: &str = "spike:2@20s..25s";

/// The settings of a scenario of the code, by its name.
fn scenario(name: &str) -> Option<Vec<(&'static str, &'static str)>> {
    let (load, backoff) = name.split_once('_')?;
    let trigger = match load {
        "ramp" => RAMP,
        "spike" => SPIKE,
        _ => return None,
    };
    let mut settings = COMMON.to_vec();
    settings.push(("trigger", trigger));
    match backoff {
        "no_backoff" => settings.push(("policy", "no-backoff")),
        "backoff_and_jitter" => {
            settings.extend([("policy", "full"), ("base", "20s"), ("cap", "40s")]);
        }
        _ => return None,
    }
    Some(settings)
}

/// Reads `brooker-2023-collapse.csv` (or a rerun of the same shape): a row
/// per scenario and second.
pub fn read(text: &str) -> Result<Vec<ReferenceRow>, StudyError> {
    let table = Table::read(text, &COLUMNS)?;
    let mut rows = Vec::new();
    for r in table.rows() {
        let name = r.text("scenario")?;
        let settings = scenario(name).ok_or_else(|| {
            r.invalid(
                "scenario",
                format!(
                    "unknown scenario '{name}': expected ramp or spike, then _no_backoff or \
                     _backoff_and_jitter"
                ),
            )
        })?;
        let second = r.number("t_bin_start_s")?;
        if !(0.0..80.0).contains(&second) || second.fract() != 0.0 {
            return Err(r.invalid(
                "t_bin_start_s",
                "expected a whole second from 0 to 79".into(),
            ));
        }
        let n = r.count("seeds", 1)?;
        let mut figures = Vec::new();
        for m in &METRICS {
            figures.push((
                m.name,
                r.estimate(&format!("{}_mean", m.name), &format!("{}_sd", m.name), n)?,
            ));
        }
        rows.push(ReferenceRow {
            key: vec![("scenario", name.to_string()), ("t_s", format!("{second}"))],
            spec: spec_of(&settings),
            window: Some(second as usize),
            figures,
        });
    }
    Ok(rows)
}

/// The workload of a scenario of the code (for tests).
pub fn scenario_spec(name: &str) -> Option<ServerSpec> {
    let spec = spec_of(&scenario(name)?);
    Some(crate::experiment::server_runs::server_parts(&spec).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Nanos;

    #[test]
    fn the_embedded_reference_reads_eighty_seconds_of_four_scenarios() {
        let rows = STUDY.embedded_rows();
        assert_eq!(rows.len(), 320);
        let spike = rows
            .iter()
            .find(|r| r.label() == "scenario=spike_no_backoff t_s=79")
            .unwrap();
        assert_eq!(spike.window, Some(79));
        assert_eq!(spike.spec.server.triggers.to_string(), SPIKE);
        let successes = spike.figure("successes").unwrap();
        assert_eq!((successes.mean, successes.n), (17.5, 10));
    }

    #[test]
    fn the_ramp_goes_from_40_to_80_per_second_and_down_to_nothing() {
        let s = scenario_spec("ramp_backoff_and_jitter").unwrap();
        let rate = |t_s: f64| 40.0 * s.load_factor_at(Nanos::from_ticks((t_s * 1e9) as u64));
        // The code's rate(t) = 80 − 1.6·|t − 25|, and 0 from 75 s.
        for t in [0.0, 10.0, 25.0, 50.0, 74.0, 76.0] {
            let code = (80.0 - 1.6 * f64::abs(t - 25.0)).max(0.0);
            assert!(
                (rate(t) - code).abs() < 1e-9,
                "t = {t}: {} against {code}",
                rate(t)
            );
        }
    }
}
