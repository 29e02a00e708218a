//! Brooker 2022, "Fixing retries with token buckets and circuit breakers"
//! (mbrooker/simulator_example's `retry_sim`), on the server model.
//!
//! The code's model (reference/brooker-models.md §1): clients that are each
//! a Poisson process of calls with a guaranteed first call at Exp(10 ms)
//! (`first_call`); every hop an Exp(10 ms) delay; an infinitely parallel
//! server with no service time whose every attempt fails with probability p;
//! retries at once (backoff 0); new calls for 10 s, then a drain that lets
//! every call finish. The strategies keep their state per client (`fleet` 1):
//! up to three retries, Brooker's adaptive bucket (deposit on every call
//! start, `> 1`, no cap of its own) and his cumulative breaker.
//!
//! Where herdsim's load differs: the code lets at most one more call start
//! when the first event after 10 s comes (one call in 10,000; herdsim starts
//! none after 10 s), and Poisson arrivals split at random among the sources
//! stand for the code's independent Poisson process per client (the same
//! process: a sum of independent Poisson processes is one, split at random).

use crate::measure::server_metrics::{ServerMetrics, Window};
use crate::model::server::ServerSpec;
use crate::study::error::StudyError;
use crate::study::overload::{Study, StudyMetric};
use crate::study::reference::{ReferenceRow, Table, spec_from};

/// The study.
pub static STUDY: Study = Study {
    name: "brooker-2022-retries",
    title: "Brooker 2022, \"Fixing retries with token buckets and circuit breakers\"",
    reference_file: "brooker-2022-retries.csv",
    embedded: include_str!("../../reference/brooker-2022-retries.csv"),
    metrics: &METRICS,
    wide_table: true,
    read,
};

/// Success and load, as the post's charts draw them (percent of calls).
static METRICS: [StudyMetric; 2] = [
    StudyMetric {
        name: "success",
        title: "success %",
        decimals: 2,
        value: success_percent,
    },
    StudyMetric {
        name: "load",
        title: "load %",
        decimals: 1,
        value: load_percent,
    },
];

/// 100 × successful calls / calls.
fn success_percent(m: &ServerMetrics, _: &ServerSpec, _: Option<&Window>) -> Option<f64> {
    (m.requests > 0).then(|| 100.0 * m.successes as f64 / m.requests as f64)
}

/// 100 × attempts / calls: the server's load relative to the calls.
fn load_percent(m: &ServerMetrics, _: &ServerSpec, _: Option<&Window>) -> Option<f64> {
    (m.requests > 0).then(|| 100.0 * m.attempts as f64 / m.requests as f64)
}

/// The model every configuration shares, as scenario settings.
pub const BASE: [(&str, &str); 9] = [
    ("resource", "server"),
    ("workers", "inf"),
    ("service", "const:0"),
    ("request_delay", "exp:10ms"),
    ("reply_delay", "exp:10ms"),
    ("first_call", "exp:10ms"),
    ("duration", "10s"),
    ("policy", "no-backoff"),
    ("fleet", "1"),
];

/// Each strategy of the post as settings over [`BASE`].
pub const STRATEGIES: [(&str, &[(&str, &str)]); 4] = [
    ("no_retries", &[("max_attempts", "1")]),
    ("three_retries", &[("max_attempts", "4")]),
    ("adaptive_10pct", &[("budget", "adaptive:5,deposit:0.1")]),
    (
        "breaker_10pct",
        &[("breaker", "cumulative:0.1"), ("max_attempts", "4")],
    ),
];

/// The columns read.
const COLUMNS: [&str; 10] = [
    "study",
    "p",
    "strategy",
    "clients",
    "rate_per_client",
    "seeds",
    "success_mean",
    "success_sd",
    "load_mean",
    "load_sd",
];

/// The highest total rate a reference row may ask for (the registry's).
const MAX_RATE: f64 = 1e9;

/// Reads `brooker-2022-retries.csv` (or a rerun of the same shape). A
/// configuration two studies share (the 100-client rows of `main` and
/// `clients_total1000`) is kept once, as it first appears.
pub fn read(text: &str) -> Result<Vec<ReferenceRow>, StudyError> {
    let table = Table::read(text, &COLUMNS)?;
    let mut rows: Vec<ReferenceRow> = Vec::new();
    for r in table.rows() {
        let strategy = r.text("strategy")?;
        let Some((_, settings)) = STRATEGIES.iter().find(|(name, _)| *name == strategy) else {
            let known: Vec<&str> = STRATEGIES.iter().map(|(n, _)| *n).collect();
            return Err(r.invalid(
                "strategy",
                format!(
                    "unknown strategy '{strategy}': expected {}",
                    known.join(", ")
                ),
            ));
        };
        let p = r.number("p")?;
        if !(0.0..=1.0).contains(&p) {
            return Err(r.invalid("p", format!("{p} is not a probability")));
        }
        let clients = r.number("clients")?;
        if clients < 1.0 || clients.fract() != 0.0 || clients > 1e7 {
            return Err(r.invalid("clients", "expected a whole number from 1".into()));
        }
        let rate_per_client = r.number("rate_per_client")?;
        let rate = (clients * rate_per_client * 1e6).round() / 1e6;
        if !(rate > 0.0 && rate <= MAX_RATE) {
            return Err(r.invalid(
                "rate_per_client",
                format!(
                    "expected a rate above 0, at most {} requests/s over the row's clients",
                    crate::base::format::group_thousands(MAX_RATE as u64)
                ),
            ));
        }
        let seeds = r.count("seeds", 1)?;
        let (p_text, clients_text, rate_text) =
            (p.to_string(), clients.to_string(), rate.to_string());
        let mut settings_all: Vec<(&str, &str)> = BASE.to_vec();
        settings_all.extend_from_slice(settings);
        settings_all.extend([
            ("fail_rate", p_text.as_str()),
            ("sources", clients_text.as_str()),
            ("rate", rate_text.as_str()),
        ]);
        // p and clients are checked above: what the registry refuses is
        // the rate they make.
        let spec = spec_from(&settings_all).map_err(|why| r.invalid("rate_per_client", why))?;
        if rows.iter().any(|row| row.spec == spec) {
            continue;
        }
        let n = seeds;
        rows.push(ReferenceRow {
            key: vec![
                ("study", r.text("study")?.to_string()),
                ("p", p_text),
                ("clients", clients_text),
                ("rate_per_client", r.text("rate_per_client")?.to_string()),
                ("strategy", strategy.to_string()),
            ],
            spec,
            window: None,
            figures: vec![
                ("success", r.estimate("success_mean", "success_sd", n)?),
                ("load", r.estimate("load_mean", "load_sd", n)?),
            ],
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::Seeds;
    use crate::experiment::server_runs::server_parts;
    use crate::sim::server_loop::simulate_server;

    #[test]
    fn the_embedded_reference_reads_with_each_configuration_once() {
        let rows = STUDY.embedded_rows();
        // 40 main + 120 clients_total1000 (40 of them main's again) + 60.
        assert_eq!(rows.len(), 180);
        let row = &rows[0];
        assert_eq!(
            row.label(),
            "study=main p=0 clients=100 rate_per_client=10 strategy=no_retries"
        );
        assert_eq!(row.spec.server.sources, 100);
        assert_eq!(row.spec.server.rate_per_s, Some(1000.0));
        assert_eq!(row.figure("success").unwrap().n, 20);
    }

    #[test]
    fn a_reference_of_another_shape_is_refused_by_its_column() {
        let err = read("study,p\nmain,0.1\n").unwrap_err().to_string();
        assert!(err.starts_with("no column 'strategy'"), "{err}");
        let header = COLUMNS.join(",");
        let err = read(&format!(
            "{header}\nmain,0.1,four_retries,10,1,20,1,1,1,1\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("line 2: column 'strategy': unknown strategy 'four_retries'"),
            "{err}"
        );
        let err = read(&format!("{header}\nmain,1.5,no_retries,10,1,20,1,1,1,1\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "line 2: column 'p': 1.5 is not a probability");
    }

    /// Three immediate retries on attempts that fail with probability p,
    /// independently: success 1 − p⁴ and load 1 + p + p² + p³ per call,
    /// whatever the delays (the post's model has no capacity, so nothing
    /// feeds back). Over R runs of ~10,000 calls the success share's
    /// standard error is √(p⁴(1 − p⁴) / (10,000 R)); the test allows 4 of
    /// them (and as many of the load's, whose per-call variance is below
    /// 3² = 9, the most attempts a call adds).
    #[test]
    fn three_retries_give_the_exact_figures() {
        let rows = STUDY.embedded_rows();
        for p in [0.3, 0.5, 0.9] {
            let row = rows
                .iter()
                .find(|r| {
                    r.label()
                        == format!(
                            "study=main p={p} clients=100 rate_per_client=10 strategy=three_retries"
                        )
                })
                .unwrap();
            let (server, retry) = server_parts(&row.spec);
            let runs = 8;
            let (mut calls, mut successes, mut attempts) = (0u64, 0u64, 0u64);
            for replicate in 0..runs {
                let m = simulate_server(&server, &retry, Seeds::for_job(7, 0, replicate), u64::MAX);
                calls += m.requests;
                successes += m.successes;
                attempts += m.attempts;
            }
            let n = calls as f64;
            let p4 = f64::powi(p, 4);
            let success = successes as f64 / n;
            let se = (p4 * (1.0 - p4) / n).sqrt();
            assert!(
                (success - (1.0 - p4)).abs() < 4.0 * se,
                "p {p}: success {success}"
            );
            let load = attempts as f64 / n;
            let exact = 1.0 + p + p * p + p * p * p;
            assert!(
                (load - exact).abs() < 4.0 * (9.0 / n).sqrt(),
                "p {p}: load {load}"
            );
        }
    }

    /// The post's client-count finding, as the code gives it: 1,000 clients
    /// of 0.1 calls/s make about two calls each, so the breaker (failures
    /// per call ≤ 10% after the first failure) never allows a retry, and each
    /// client's full bucket (four retries) outlasts its calls, so the bucket
    /// retries like three retries: success 1 − p⁴ within 1.5 points (the
    /// fifth attempt a full bucket allows adds p⁴(1 − p) = 3 points at most;
    /// a run's success share has a standard error of 0.25 points at ~2,000
    /// calls).
    #[test]
    fn many_small_clients_make_the_breaker_no_retries_and_the_bucket_three_retries() {
        let rows = STUDY.embedded_rows();
        let find = |strategy: &str| {
            rows.iter()
                .find(|r| {
                    r.label()
                        == format!("study=author_clients_total100 p=0.5 clients=1000 rate_per_client=0.1 strategy={strategy}")
                })
                .unwrap()
        };
        for replicate in 0..3 {
            let seeds = Seeds::for_job(7, 0, replicate);
            let (server, retry) = server_parts(&find("breaker_10pct").spec);
            let m = simulate_server(&server, &retry, seeds, u64::MAX);
            assert_eq!(m.attempts, m.requests, "the breaker let a retry through");
            let (server, retry) = server_parts(&find("adaptive_10pct").spec);
            let m = simulate_server(&server, &retry, seeds, u64::MAX);
            let success = 100.0 * m.successes as f64 / m.requests as f64;
            assert!((success - 93.75).abs() < 1.5, "bucket success {success}");
        }
    }

    #[test]
    fn no_retries_send_one_attempt_a_call() {
        let rows = STUDY.embedded_rows();
        let row = rows
            .iter()
            .find(|r| {
                r.label() == "study=main p=0.5 clients=100 rate_per_client=10 strategy=no_retries"
            })
            .unwrap();
        let (server, retry) = server_parts(&row.spec);
        let m = simulate_server(&server, &retry, Seeds::for_job(7, 0, 0), u64::MAX);
        assert_eq!(m.attempts, m.requests);
        // Every client's guaranteed first call comes on top of ~10,000
        // Poisson arrivals (sd 100): 10,100 ± 5 sd.
        assert!(
            (m.requests as f64 - 10_100.0).abs() < 500.0,
            "{}",
            m.requests
        );
    }
}
