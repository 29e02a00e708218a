//! Yandex 2024, "Good retry, bad retry: an incident story" (jirfag/
//! simulations, SimPy), on the server model.
//!
//! The code's model (reference/yandex-2024-model.md): open-loop Poisson
//! calls at `rps`, each attempt an Exp(5 ms) trip to the server and no trip
//! back, `int(4 · coef · rps · 10.317 ms)` CPUs behind one unbounded FIFO
//! queue, lognormal service (median 10 ms, σ 0.25), 0.5% of attempts failing
//! at random, a 100 ms client timeout that does not cancel the server's
//! work, and a failure injected over [0.5 s, 1 s) (or to 1.5 s): every
//! attempt completing inside fails, or 30% of them, or 20% of the calls on
//! every attempt, each in place of the 0.5%. Each scenario runs its
//! strategies side by side; herdsim's scenario files in
//! `scenarios/yandex-2024/` are those scenarios, one `[[variant]]` a
//! strategy, and the reader below builds the same workloads from the
//! reference's rows.
//!
//! Kept from the code: the per-attempt RTT before the server and none after,
//! the call-start deadline of deadline propagation (so every retry after a
//! timeout is already late), the classic breaker gating first tries only,
//! the budget's full bucket at the start, the failure keyed to service
//! completion and dropped only when a request starts service after it
//! (`failure_end = "next-start"`: a request in service when the failure ends
//! still fails, and one failed call in a 50 ms bucket of fifty holds its
//! success under the 99% that recovery needs), exactly `int(rps · D)` calls (`requests`), the last ones
//! landing up to a few tens of ms either side of D (its static clients call
//! at t = 0 and then while the clock is under D instead). Not kept: the shared SimPy clock
//! that breaks runs sharing a process (the reference avoids it too),
//! unseeded numpy. A call's timeout drawn from {100, 200, 300} ms
//! (`any_retries_are_slowing_down_recovery`) is `timeout_choices`.

use crate::measure::server_metrics::{ServerMetrics, Window};
use crate::model::server::{NS_PER_MS, Nanos, ServerSpec};
use crate::study::error::StudyError;
use crate::study::overload::{Study, StudyMetric};
use crate::study::reference::{Estimate, ReferenceRow, Table, spec_of};

/// The study.
pub static STUDY: Study = Study {
    name: "yandex-2024",
    title: "Yandex 2024, \"Good retry, bad retry: an incident story\"",
    reference_file: "yandex-2024.csv",
    embedded: include_str!("../../reference/yandex-2024.csv"),
    metrics: &METRICS,
    wide_table: false,
    read,
};

/// The time-series window the metrics are read from: the reference's
/// 50 ms buckets.
pub const WINDOW_MS: u64 = 50;

/// The figures compared, as the reference's metric file defines them.
static METRICS: [StudyMetric; 10] = [
    StudyMetric {
        name: "client_success_all_calls",
        title: "success, all calls",
        decimals: 4,
        value: |m, _, _| (m.requests > 0).then(|| m.successes as f64 / m.requests as f64),
    },
    StudyMetric {
        name: "client_success_overall",
        title: "success, calls ending before D",
        decimals: 4,
        value: |m, s, _| success_between(m, s, Nanos::ZERO, s.duration),
    },
    StudyMetric {
        name: "client_success_outage_win",
        title: "success in the failure window",
        decimals: 4,
        value: |m, s, _| {
            let (from, to) = failure(s)?;
            success_between(m, s, from, (to + 500 * NS_PER_MS).min(s.duration))
        },
    },
    StudyMetric {
        name: "pre_outage_success",
        title: "success before the failure",
        decimals: 4,
        value: |m, s, _| success_between(m, s, Nanos::ZERO, failure(s)?.0),
    },
    StudyMetric {
        name: "recovery_s",
        title: "recovery (s)",
        decimals: 3,
        value: recovery_s,
    },
    StudyMetric {
        name: "amp_all",
        title: "attempts per call",
        decimals: 3,
        value: |m, _, _| (m.requests > 0).then(|| m.attempts as f64 / m.requests as f64),
    },
    StudyMetric {
        name: "amp_overall",
        title: "attempts per call before D",
        decimals: 3,
        value: |m, s, _| {
            let (mut attempts, mut calls) = (0, 0);
            for w in windows_between(m, s, Nanos::ZERO, s.duration) {
                attempts += w.attempts;
                calls += w.arrivals;
            }
            (calls > 0).then(|| attempts as f64 / calls as f64)
        },
    },
    StudyMetric {
        name: "amp_max_50ms",
        title: "peak attempts / nominal (50 ms)",
        decimals: 2,
        value: |m, s, _| {
            let nominal = s.load.rate_per_s()? * s.window.ticks() as f64 / 1e9;
            windows_between(m, s, Nanos::ZERO, s.duration)
                .map(|w| w.attempts as f64 / nominal)
                .reduce(f64::max)
        },
    },
    StudyMetric {
        name: "queue_mean",
        title: "mean queue",
        decimals: 1,
        value: |m, s, _| Some(m.queue_area as f64 / s.duration.ticks() as f64),
    },
    StudyMetric {
        name: "cpu_util_mean",
        title: "CPU utilisation",
        decimals: 3,
        value: |m, s, _| {
            let workers = f64::from(s.workers?);
            Some(m.busy_area as f64 / (workers * s.duration.ticks() as f64))
        },
    },
];

/// The injected failure's window `[from, to)`, ns: the first trigger's.
fn failure(spec: &ServerSpec) -> Option<(Nanos, Nanos)> {
    spec.triggers.first().map(|t| (t.from, t.to))
}

/// The windows of the run that lie inside `[from, to)`.
fn windows_between<'a>(
    m: &'a ServerMetrics,
    spec: &ServerSpec,
    from: Nanos,
    to: Nanos,
) -> impl Iterator<Item = &'a Window> {
    let w = spec.window;
    m.windows
        .iter()
        .enumerate()
        .filter(move |(i, _)| {
            let start = *i as u64 * w;
            from <= start && start + w <= to
        })
        .map(|(_, window)| window)
}

/// Successes among the calls that ended in `[from, to)`, if any did.
fn success_between(m: &ServerMetrics, spec: &ServerSpec, from: Nanos, to: Nanos) -> Option<f64> {
    let (mut ok, mut ended) = (0, 0);
    for w in windows_between(m, spec, from, to) {
        ok += w.successes;
        ended += w.successes + w.gave_up;
    }
    (ended > 0).then(|| ok as f64 / ended as f64)
}

/// The reference's recovery time: from the failure's end, the first 50 ms
/// bucket (ending by D) whose calls succeed at 99% of the level before the
/// failure, in seconds; `None` if none does (an empty bucket does not).
fn recovery_s(m: &ServerMetrics, spec: &ServerSpec, _: Option<&Window>) -> Option<f64> {
    let (from, to) = failure(spec)?;
    let before = success_between(m, spec, Nanos::ZERO, from)?;
    windows_between(m, spec, to, spec.duration)
        .position(|w| w.success_rate().is_some_and(|r| r >= 0.99 * before))
        .map(|k| k as f64 * spec.window.ticks() as f64 / 1e9)
}

/// How a scenario's calls come.
#[derive(Debug, Clone, Copy)]
enum Calls {
    /// Open-loop Poisson arrivals.
    Open,
    /// The same, each call holding one of `share × rps` client slots.
    Limited(f64),
    /// `rps / 200` static clients, each calling at t = 0 and then at its own
    /// Poisson gaps while the clock is under D.
    Static,
}

/// One scenario of the study: its CPU coefficient, duration, injected
/// failure and calls.
struct YandexScenario {
    name: &'static str,
    coef: f64,
    duration: &'static str,
    trigger: &'static str,
    calls: Calls,
    /// The client's timeout, as a setting: one for every call, or each
    /// call's drawn from a set.
    timeout: (&'static str, &'static str),
}

/// The client's 100 ms timeout.
const ONE_TIMEOUT: (&str, &str) = ("timeout", "100ms");
/// A full outage on [0.5 s, 1 s).
const OUTAGE: &str = "outage@500ms..1s";
/// A full outage on [0.5 s, 1.5 s).
const LONG_OUTAGE: &str = "outage@500ms..1.5s";
/// 30% of attempts failing on [0.5 s, 1 s).
const PARTIAL: &str = "fail:0.3@500ms..1s";
/// 20% of calls failing on every attempt on [0.5 s, 1 s).
const PER_USER: &str = "user-fail:0.2@500ms..1s";

/// The scenarios of the study (the model file's §8 table).
const SCENARIOS: [YandexScenario; 17] = [
    YandexScenario {
        name: "any_retries_are_slowing_down_recovery",
        coef: 0.54,
        duration: "2.5s",
        trigger: LONG_OUTAGE,
        calls: Calls::Open,
        timeout: ("timeout_choices", "100ms/200ms/300ms"),
    },
    YandexScenario {
        name: "simple_retry_only",
        coef: 1.0,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "simple_retry_vs_backoff",
        coef: 1.0,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "simple_retry_vs_backoff_closed_loop",
        coef: 1.0,
        duration: "1.75s",
        trigger: OUTAGE,
        calls: Calls::Limited(0.1),
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "jitter_vs_no_jitter",
        coef: 1.0,
        duration: "1.75s",
        trigger: OUTAGE,
        calls: Calls::Limited(0.1),
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "jitter_vs_no_jitter_cpu_half",
        coef: 0.5,
        duration: "2.2s",
        trigger: OUTAGE,
        calls: Calls::Limited(0.1),
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "mfs",
        coef: 0.5,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "exponential_backoff_just_delays_problem_open_loop",
        coef: 1.0,
        duration: "2s",
        trigger: LONG_OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "exponential_backoff_just_delays_problem_good_closed_loop",
        coef: 1.0,
        duration: "2s",
        trigger: LONG_OUTAGE,
        calls: Calls::Limited(0.3),
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "exponential_backoff_just_delays_problem_bad_closed_loop",
        coef: 1.0,
        duration: "2s",
        trigger: LONG_OUTAGE,
        calls: Calls::Limited(0.4),
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "retry_cb_or_budget_vs_exp_backoff",
        coef: 0.54,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "retry_cb_or_budget_vs_exp_backoff_partial_failure",
        coef: 0.54,
        duration: "1.5s",
        trigger: PARTIAL,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "retry_cb_vs_budget",
        coef: 0.54,
        duration: "1.5s",
        trigger: PARTIAL,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "retry_budget_over_what",
        coef: 0.54,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "retry_cb_budget_global_vs_local",
        coef: 1.0,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Static,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "circuit_breaker_vs_retry_budget",
        coef: 0.5,
        duration: "1.5s",
        trigger: PER_USER,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
    YandexScenario {
        name: "dp_vs_retry_budget",
        coef: 0.58,
        duration: "1.5s",
        trigger: OUTAGE,
        calls: Calls::Open,
        timeout: ONE_TIMEOUT,
    },
];

/// The model every scenario shares, as scenario settings.
pub const BASE: [(&str, &str); 9] = [
    ("resource", "server"),
    ("failure_end", "next-start"),
    ("request_delay", "exp:5ms"),
    ("service", "lognormal:10ms/0.25"),
    ("fail_rate", "0.005"),
    ("window", "50ms"),
    ("base", "100ms"),
    ("cap", "1s"),
    ("policy", "no-backoff"),
];

/// Up to two retries at once.
const RETRY_2X: &[(&str, &str)] = &[("max_attempts", "3")];
/// Up to two retries after full-jitter delays of U(0, 100 ms), U(0, 200 ms).
const EXP_BACKOFF_2X: &[(&str, &str)] = &[("max_attempts", "3"), ("policy", "full")];
/// The retry budget: a full bucket of 3,000, +10 per successful first try,
/// 100 a retry.
const BUDGET: (&str, &str) = ("budget", "earned:3000,cost:100,deposit:10");
/// The retry breaker: retries while under 10% of the last 200 ms of
/// attempts failed.
const RETRY_BREAKER: (&str, &str) = ("breaker", "windowed:0.1,window:200ms");

/// A strategy's settings over [`BASE`] in scenario `scenario` (the label
/// `retry-budget-10%` is the budget over retries at once in most scenarios,
/// over jittered backoff in two), or `None` for a label the study does not
/// have.
fn strategy(scenario: &str, label: &str) -> Option<Vec<(&'static str, &'static str)>> {
    let over_backoff =
        scenario == "dp_vs_retry_budget" || scenario.starts_with("circuit_breaker_vs_retry_budget");
    let with = |base: &[(&'static str, &'static str)], extra: &[(&'static str, &'static str)]| {
        let mut settings = base.to_vec();
        settings.extend_from_slice(extra);
        settings
    };
    Some(match label {
        "no-retries" => vec![("max_attempts", "1")],
        "retry-2x" => RETRY_2X.to_vec(),
        "retry-3x" => vec![("max_attempts", "4")],
        "retry-3x-with-exp-backoff" => vec![("max_attempts", "4"), ("policy", "none")],
        "retry-3x-with-exp-backoff+jitter" => vec![("max_attempts", "4"), ("policy", "full")],
        "retry-2x-with-exp-backoff+jitter" | "exp-backoff-2x" => EXP_BACKOFF_2X.to_vec(),
        "retry-cb-10%" | "retry-cb-10%-global" => with(RETRY_2X, &[RETRY_BREAKER]),
        "retry-cb-10%-local" => with(RETRY_2X, &[RETRY_BREAKER, ("fleet", "1")]),
        "retry-budget-10%" if over_backoff => with(EXP_BACKOFF_2X, &[BUDGET]),
        "retry-budget-10%" | "retry-budget-10%+retry-2x" | "retry-budget-10%-global" => {
            with(RETRY_2X, &[BUDGET])
        }
        "retry-budget-10%-local" => with(RETRY_2X, &[BUDGET, ("fleet", "1")]),
        "retry-budget-10%+exp-backoff-2x" => with(EXP_BACKOFF_2X, &[BUDGET]),
        "retry-2x-circuit-breaker-10%" => with(
            RETRY_2X,
            &[("breaker", "classic:0.1,window:200ms,calls:100,open:100ms")],
        ),
        "retry-2x-circuit-breaker-50%" => with(
            RETRY_2X,
            &[("breaker", "classic:0.5,window:200ms,calls:100,open:100ms")],
        ),
        "retry-2x-deadline-propagation" => with(RETRY_2X, &[("deadline_propagation", "call")]),
        _ => return None,
    })
}

/// A scenario's duration (`"1.5s"`), in seconds.
fn seconds(duration: &str) -> f64 {
    duration
        .trim_end_matches('s')
        .parse()
        .expect("the scenarios' durations are seconds")
}

/// The mean service time of the code's lognormal, s: 10 ms · e^(σ²/2).
fn mean_service_s() -> f64 {
    0.010 * (0.25f64 * 0.25 / 2.0).exp()
}

/// The scenario of a reference name (`circuit_breaker_vs_retry_budget/
/// cb_threshold=10%/fail_rate=20%` is `circuit_breaker_vs_retry_budget`).
fn scenario_of(name: &str) -> Option<&'static YandexScenario> {
    let base = name.split('/').next().unwrap_or(name);
    SCENARIOS.iter().find(|s| s.name == base)
}

/// The herdsim workload of `strategy` in scenario `name` at `rps`, as
/// scenario settings; `None` for a scenario or strategy herdsim does not
/// reproduce.
pub fn settings(name: &str, label: &str, rps: f64) -> Option<Vec<(&'static str, String)>> {
    let scenario = scenario_of(name)?;
    let mut settings: Vec<(&'static str, String)> =
        BASE.iter().map(|(k, v)| (*k, v.to_string())).collect();
    let trigger = if scenario.trigger == PER_USER {
        // The share of calls that fail is the scenario's fail_rate.
        let share = name
            .split("fail_rate=")
            .nth(1)
            .and_then(|t| t.trim_end_matches('%').parse::<f64>().ok())
            .map_or(0.2, |percent| percent / 100.0);
        format!("user-fail:{share}@500ms..1s")
    } else {
        scenario.trigger.to_string()
    };
    let workers = (4.0 * scenario.coef * rps * mean_service_s()) as u64;
    settings.extend([
        (scenario.timeout.0, scenario.timeout.1.to_string()),
        ("rate", rps.to_string()),
        ("duration", scenario.duration.to_string()),
        ("trigger", trigger),
        ("workers", workers.max(1).to_string()),
    ]);
    // The code makes exactly int(rps · D) calls, but its static clients call
    // while the clock is under D, each first at t = 0 (`Client.run` calls
    // before its first sleep), then at Poisson gaps.
    let calls = (rps * seconds(scenario.duration)) as u64;
    match scenario.calls {
        Calls::Open => settings.push(("requests", calls.to_string())),
        Calls::Limited(share) => settings.extend([
            ("requests", calls.to_string()),
            ("concurrency", ((share * rps) as u64).to_string()),
        ]),
        Calls::Static => settings.extend([
            ("sources", ((rps as u64) / 200).max(1).to_string()),
            ("first_call", "const:0".to_string()),
        ]),
    }
    for (k, v) in strategy(name, label)? {
        match settings.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => slot.1 = v.to_string(),
            None => settings.push((k, v.to_string())),
        }
    }
    Some(settings)
}

/// The columns read.
const COLUMNS: [&str; 8] = [
    "scenario", "strategy", "rps", "metric", "n_seeds", "n_valid", "mean", "sd",
];

/// Reads `yandex-2024.csv` (or a rerun of the same shape): one row per
/// (scenario, strategy, rps) with every compared metric's mean and sd over
/// the seeds that have it; a strategy the study does not have is an error.
pub fn read(text: &str) -> Result<Vec<ReferenceRow>, StudyError> {
    let table = Table::read(text, &COLUMNS)?;
    let mut rows: Vec<ReferenceRow> = Vec::new();
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for r in table.rows() {
        let metric = r.text("metric")?;
        let Some(m) = METRICS.iter().find(|m| m.name == metric) else {
            continue;
        };
        let (name, label, rps_text) = (r.text("scenario")?, r.text("strategy")?, r.text("rps")?);
        if scenario_of(name).is_none() {
            let known: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
            return Err(r.invalid(
                "scenario",
                format!(
                    "unknown scenario '{name}': expected one of {}",
                    known.join(", ")
                ),
            ));
        }
        let rps = r.number("rps")?;
        if !(1.0..=1e7).contains(&rps) {
            return Err(r.invalid("rps", format!("{rps} is not a rate from 1 to 10,000,000")));
        }
        let key = (name.to_string(), label.to_string(), rps_text.to_string());
        let index = match keys.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                let Some(settings) = settings(name, label, rps) else {
                    return Err(r.invalid(
                        "strategy",
                        format!("unknown strategy '{label}' in scenario '{name}'"),
                    ));
                };
                let pairs: Vec<(&str, &str)> =
                    settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
                keys.push(key);
                rows.push(ReferenceRow {
                    key: vec![
                        ("scenario", name.to_string()),
                        ("strategy", label.to_string()),
                        ("rps", rps_text.to_string()),
                    ],
                    spec: spec_of(&pairs),
                    window: None,
                    figures: Vec::new(),
                });
                rows.len() - 1
            }
        };
        let valid = r.count("n_valid", 0)?;
        if valid > r.count("n_seeds", 1)? {
            return Err(r.invalid(
                "n_valid",
                format!("{valid} seeds of the {} the row ran", r.text("n_seeds")?),
            ));
        }
        if valid > 0 {
            // One seed's spread is undefined: pandas writes it as nan.
            let sd = r.text("sd")?;
            let estimate = Estimate {
                mean: r.number("mean")?,
                sd: if valid == 1 && (sd.is_empty() || sd == "nan") {
                    0.0
                } else {
                    r.number("sd")?
                },
                n: valid,
            };
            rows[index]
                .figures
                .push((m.name, r.checked(estimate, "sd")?));
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;

    #[test]
    fn the_embedded_reference_reads_every_scenario() {
        let rows = STUDY.embedded_rows();
        // 46 (scenario, strategy) pairs.
        assert_eq!(rows.len(), 46);
        let drawn = rows
            .iter()
            .find(|r| {
                r.label()
                    == "scenario=any_retries_are_slowing_down_recovery strategy=retry-2x rps=1000"
            })
            .unwrap();
        assert_eq!(drawn.spec.server.timeout_us, None);
        assert_eq!(
            drawn.spec.server.timeout_choices,
            [100_000, 200_000, 300_000].map(Micros::from_ticks)
        );
        let mfs = rows
            .iter()
            .find(|r| r.label() == "scenario=mfs strategy=retry-3x rps=1000")
            .unwrap();
        assert_eq!(mfs.spec.server.workers, Some(20));
        assert_eq!(mfs.spec.max_attempts, Some(4));
        // Every metric but the recovery time: no seed of mfs recovers.
        assert_eq!(mfs.figures.len(), METRICS.len() - 1);
        assert!(mfs.figure("recovery_s").is_none());
        let dp = rows
            .iter()
            .find(|r| r.label() == "scenario=dp_vs_retry_budget strategy=retry-budget-10% rps=1000")
            .unwrap();
        assert_eq!(dp.spec.server.workers, Some(23));
        assert_eq!(dp.spec.policy.kind.name(), "full");
    }

    #[test]
    fn each_static_client_calls_at_t_0_before_its_first_gap() {
        use crate::experiment::server_runs::run_server_replicates;
        use crate::measure::observer::Watch;
        use crate::sim::queue::QueueKind;
        // retry_cb_budget_global_vs_local: the code's rps/200 static clients
        // each call at t = 0, then at their own Poisson gaps while the clock
        // is under D (Client.run). At 1,000 calls/s that is 5 calls at t = 0
        // on top of the Poisson ones; at 0.001 calls/s a run of 1.5 s draws
        // a Poisson call with probability 0.0015, so these runs make exactly
        // the 5 calls at t = 0, all in the first window (0 without them).
        for label in ["retry-cb-10%-global", "retry-budget-10%-local"] {
            let mut pairs = settings("retry_cb_budget_global_vs_local", label, 1000.0).unwrap();
            assert!(pairs.contains(&("sources", "5".to_string())), "{pairs:?}");
            assert!(pairs.contains(&("first_call", "const:0".to_string())));
            pairs.iter_mut().find(|(k, _)| *k == "rate").unwrap().1 = "0.001".into();
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let runs = run_server_replicates(
                &spec_of(&pairs),
                42,
                0,
                8,
                &Watch::UNLIMITED,
                QueueKind::Auto,
                || {},
            );
            for run in runs {
                assert_eq!(run.requests, 5, "{label}");
                assert_eq!(run.windows[0].arrivals, 5, "{label}");
                assert_eq!(run.successes + run.gave_up, 5, "{label}");
            }
        }
        // Open-loop scenarios make exactly int(rps · D) calls, none extra.
        let open = settings("mfs", "retry-3x", 1000.0).unwrap();
        assert!(!open.iter().any(|(k, _)| *k == "first_call"));
    }

    #[test]
    fn cpus_follow_the_codes_formula() {
        // int(4 · coef · rps · 10.3174 ms) at 1,000 and 10,000 calls/s.
        for (coef, rps, cpus) in [
            (1.0, 1000.0, "41"),
            (0.5, 1000.0, "20"),
            (0.54, 1000.0, "22"),
            (0.58, 1000.0, "23"),
            (1.0, 10000.0, "412"),
            (0.5, 10000.0, "206"),
            (0.54, 10000.0, "222"),
            (0.58, 10000.0, "239"),
        ] {
            let name = SCENARIOS.iter().find(|s| s.coef == coef).unwrap().name;
            let settings = settings(name, "retry-2x", rps).unwrap();
            let workers = &settings.iter().find(|(k, _)| *k == "workers").unwrap().1;
            assert_eq!(workers, cpus, "coef {coef} at {rps}");
        }
    }
}
