//! Published figures herdsim's results are set beside, and the verdict on each.
//!
//! The figures are other people's, transcribed in `reference/` and embedded at
//! build time. A figure applies to a workload point only when the point is
//! the workload it was measured with, in every registry parameter.

use std::fmt;

use crate::base::time::Micros;
use crate::base::time::Nanos;
use crate::measure::metrics::Metric;
use crate::measure::stats::Summary;
use crate::model::ResourceKind;
use crate::policy::PolicyKind;
use crate::spec::RunSpec;
use crate::spec::params::PARAMS;
use crate::study::error::StudyError;

/// Seed 002's four-strategy table.
const FOUR_STRATEGIES: &str = include_str!("../../reference/four-strategies-published.csv");
/// The policybook project's outage-30s benchmark.
const OUTAGE_30S: &str = include_str!("../../reference/outage-30s-published.csv");
/// The AWS Architecture Blog simulator's own output.
const AWS_OCC: &str = include_str!("../../reference/aws-occ-sim-results.csv");
/// backoff-simulator (PyPI 0.1.1) at its defaults, run here.
const BACKOFF_SIMULATOR: &str = include_str!("../../reference/backoff-simulator.csv");

/// One published number, in herdsim's units.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedFigure {
    /// Where it was published.
    pub source: String,
    /// The metric.
    pub metric: Metric,
    /// The published value, in the metric's unit.
    pub value: f64,
    /// The range the exact figure lay in, given how it was rounded or
    /// truncated (`~3,400` is 3,350 to 3,450; a truncated 51 is 51 to 52).
    pub range: (f64, f64),
    /// How many runs the published value is the mean of, when known: its own
    /// sampling error is then that of such a mean in herdsim's model.
    pub runs: Option<u32>,
    /// The value as published (`~3,400`, `~12 s`).
    pub shown: String,
    workload: Workload,
}

/// A published qualitative remark on one workload point.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedRemark {
    /// Where it was published.
    pub source: String,
    /// What it says (seed 002's "server-side contention").
    pub text: String,
    workload: Workload,
}

/// The workload a published figure was measured with: every parameter of
/// a run, and the policies whose runs it describes.
#[derive(Debug, Clone, PartialEq)]
struct Workload {
    /// The workload, the policy aside.
    spec: RunSpec,
    /// Policies whose runs the figure describes.
    policies: Vec<PolicyKind>,
}

impl Workload {
    /// The workload `spec` is under one of `policies`.
    fn new(spec: RunSpec, policies: Vec<PolicyKind>) -> Self {
        Workload { spec, policies }
    }

    /// True if `spec` is this workload: one of its policies, and every other
    /// parameter in the registry equal. A figure measured with 8 attempts
    /// says nothing of a run with 50.
    fn describes(&self, spec: &RunSpec) -> bool {
        self.policies.contains(&spec.policy.kind)
            && PARAMS
                .iter()
                .filter(|p| p.key != "policy")
                .all(|p| (p.show)(&self.spec) == (p.show)(spec))
    }
}

/// Half a unit of the last decimal written in `text`: `0.40` is ± 0.005.
fn last_digit_rounding(text: &str) -> f64 {
    let decimals = text.split_once('.').map_or(0, |(_, f)| f.len());
    0.5 * 10f64.powi(-(decimals as i32))
}

/// Every published figure and remark herdsim knows.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// Numbers.
    pub figures: Vec<PublishedFigure>,
    /// Words.
    pub remarks: Vec<PublishedRemark>,
}

/// Half the unit of the second significant figure of `v`: `~3,400` is
/// `3,400 ± 50`, `~12` is `12 ± 0.5`.
fn two_figure_rounding(v: f64) -> f64 {
    0.5 * 10f64.powi(v.abs().log10().floor() as i32 - 1)
}

impl Published {
    /// The figures embedded in herdsim.
    pub fn embedded() -> Published {
        let mut published =
            Self::from_four_strategies_csv(FOUR_STRATEGIES).expect("the embedded table parses");
        let outage = Self::from_outage_csv(OUTAGE_30S).expect("the embedded table parses");
        let occ = Self::from_aws_occ_csv(AWS_OCC).expect("the embedded table parses");
        let backoff_simulator =
            Self::from_backoff_simulator_csv(BACKOFF_SIMULATOR).expect("the embedded table parses");
        for other in [outage, occ, backoff_simulator] {
            published.figures.extend(other.figures);
            published.remarks.extend(other.remarks);
        }
        published
    }

    /// Reads the policybook benchmark: `source, episodes, base_ms, cap_ms,
    /// max_attempts, deadline_ms, herd_window_ms, policy, peak_retry_share,
    /// success_rate`. Each figure is one run of `episodes` episodes.
    pub fn from_outage_csv(text: &str) -> Result<Published, StudyError> {
        let mut published = Published::default();
        for r in rows(text)? {
            let policy: PolicyKind = r.text(7)?.parse()?;
            let mut spec = RunSpec::seed_002(policy, r.number(1)? as u32);
            spec.resource = ResourceKind::Outage;
            spec.policy.base_us = r.micros(2)?;
            spec.policy.cap_us = r.micros(3)?;
            spec.max_attempts = Some(r.number(4)? as u32);
            spec.deadline_us = Some(r.micros(5)?);
            spec.window_us = Some(r.micros(6)?);
            let workload = Workload::new(spec, vec![policy]);
            for (column, metric) in [(8, Metric::PeakRetryShare), (9, Metric::SuccessRate)] {
                let value = r.number(column)?;
                let half = last_digit_rounding(r.text(column)?);
                published.figures.push(PublishedFigure {
                    source: r.text(0)?.to_string(),
                    metric,
                    value,
                    range: (value - half, value + half),
                    runs: Some(1),
                    shown: r.text(column)?.to_string(),
                    workload: workload.clone(),
                });
            }
        }
        Ok(published)
    }

    /// Reads the AWS simulator's output: `clients, time, calls, Algorithm`,
    /// each a mean over 100 runs truncated to an integer; base 5 ms, cap 2 s,
    /// first exponent 1.
    pub fn from_aws_occ_csv(text: &str) -> Result<Published, StudyError> {
        let mut published = Published::default();
        for r in rows(text)? {
            let policy = match r.text(3)? {
                "Exponential" => PolicyKind::None,
                "Decorr" => PolicyKind::Decorrelated,
                "EqualJitter" => PolicyKind::Equal,
                "FullJitter" => PolicyKind::Full,
                "None" => PolicyKind::NoBackoff,
                other => {
                    return Err(StudyError::UnknownAlgorithm {
                        line: r.line,
                        name: other.to_string(),
                    });
                }
            };
            let mut spec = RunSpec::seed_002(policy, r.number(0)? as u32);
            spec.resource = ResourceKind::Occ;
            spec.policy.base_us = Micros::from_ms(5);
            spec.policy.cap_us = Micros::from_s(2);
            spec.policy.first_exponent = 1;
            let workload = Workload::new(spec, vec![policy]);
            for (column, metric) in [(1, Metric::LastSuccessMs), (2, Metric::Calls)] {
                let value = r.number(column)?;
                // Times are compared in seconds, as herdsim shows them.
                let shown = match metric {
                    Metric::LastSuccessMs => format!("{} s", value / 1e3),
                    _ => r.text(column)?.to_string(),
                };
                published.figures.push(PublishedFigure {
                    source: "AWS simulator output".to_string(),
                    metric,
                    value,
                    range: (value, value + 1.0),
                    runs: Some(100),
                    shown,
                    workload: workload.clone(),
                });
            }
        }
        Ok(published)
    }

    /// Reads backoff-simulator's figures (`reference/backoff-simulator.csv`:
    /// `control, strategy, clients, runs, requests_mean, requests_sd,
    /// duration_ms_mean, duration_ms_sd`), made by
    /// `results/scripts/backoff_simulator_rerun.py`: its defaults (network
    /// N(10 ms, 2 ms) a hop, writes |N(2 ms, 1 ms)|, Constant(0.5 ms) and
    /// the exponentials at base 2 ms, cap 1 s, the first ceiling the base),
    /// a run done at its last commit.
    pub fn from_backoff_simulator_csv(text: &str) -> Result<Published, StudyError> {
        let mut published = Published::default();
        for r in rows(text)? {
            let server: crate::model::occ::OccServer =
                r.text(0)?
                    .parse()
                    .map_err(|_| StudyError::UnknownAlgorithm {
                        line: r.line,
                        name: r.text(0).unwrap_or_default().to_string(),
                    })?;
            let (policy, base_us) = match r.text(1)? {
                "Constant" => (PolicyKind::Constant, Micros::from_us(500)),
                "Expo" => (PolicyKind::None, Micros::from_ms(2)),
                "FullJitteredExpo" => (PolicyKind::Full, Micros::from_ms(2)),
                "EqualJitteredExpo" => (PolicyKind::Equal, Micros::from_ms(2)),
                other => {
                    return Err(StudyError::UnknownAlgorithm {
                        line: r.line,
                        name: other.to_string(),
                    });
                }
            };
            let mut spec = RunSpec::seed_002(policy, r.number(2)? as u32);
            spec.resource = ResourceKind::Occ;
            spec.policy.base_us = base_us;
            spec.policy.cap_us = Micros::from_s(1);
            spec.occ = crate::model::occ::OccParams {
                server,
                write_time: crate::model::server::Dist::FoldedNormal {
                    mean: Nanos::from_ms(2),
                    sd: Nanos::from_ms(1),
                },
                done: crate::model::occ::OccDone::Commit,
            };
            let runs = r.number(3)? as u32;
            let workload = Workload::new(spec, vec![policy]);
            for (column, metric) in [(6, Metric::LastSuccessMs), (4, Metric::Calls)] {
                let value = r.number(column)?;
                // Times are compared in seconds, as herdsim shows them.
                let shown = match metric {
                    Metric::LastSuccessMs => format!("{:.4} s", value / 1e3),
                    _ => format!("{value:.2}"),
                };
                published.figures.push(PublishedFigure {
                    source: "backoff-simulator run here".to_string(),
                    metric,
                    value,
                    range: (value, value),
                    runs: Some(runs),
                    shown,
                    workload: workload.clone(),
                });
            }
        }
        Ok(published)
    }

    /// Reads seed 002's table: `source, clients, capacity_per_ms, base_ms,
    /// cap_ms, policy, total_calls, time_to_last_success_s, server_contention`.
    pub fn from_four_strategies_csv(text: &str) -> Result<Published, StudyError> {
        let mut published = Published::default();
        for r in rows(text)? {
            let policy: PolicyKind = r.text(5)?.parse()?;
            // Seed 002 made its "decorrelated" row, it says, with its simulate(),
            // which calls decorrelated jitter with the attempt number: the
            // figure describes both the intended walk and the code as written.
            let mut policies = vec![policy];
            if policy == PolicyKind::Decorrelated {
                policies.push(PolicyKind::DecorrelatedAttempt);
            }
            let mut spec = RunSpec::seed_002(policy, r.number(1)? as u32);
            spec.capacity_per_ms = r.number(2)?;
            spec.policy.base_us = r.micros(3)?;
            spec.policy.cap_us = r.micros(4)?;
            let workload = Workload::new(spec, policies);
            let source = r.text(0)?.to_string();
            let calls = r.number(6)?;
            let seconds = r.number(7)?;
            published.figures.push(PublishedFigure {
                source: source.clone(),
                metric: Metric::Calls,
                value: calls,
                range: (
                    calls - two_figure_rounding(calls),
                    calls + two_figure_rounding(calls),
                ),
                runs: None,
                shown: format!("~{}", crate::base::format::group_thousands(calls as u64)),
                workload: workload.clone(),
            });
            published.figures.push(PublishedFigure {
                source: source.clone(),
                metric: Metric::LastSuccessMs,
                value: seconds * 1e3,
                range: (
                    (seconds - two_figure_rounding(seconds)) * 1e3,
                    (seconds + two_figure_rounding(seconds)) * 1e3,
                ),
                runs: None,
                shown: format!("~{seconds} s"),
                workload: workload.clone(),
            });
            published.remarks.push(PublishedRemark {
                source,
                text: r.text(8)?.to_string(),
                workload,
            });
        }
        Ok(published)
    }

    /// The published figure of `metric` for the workload `spec`, if any.
    pub fn figure(&self, spec: &RunSpec, metric: Metric) -> Option<&PublishedFigure> {
        self.figures
            .iter()
            .find(|f| f.metric == metric && f.workload.describes(spec))
    }

    /// The published remark on the workload `spec`, if any.
    pub fn remark(&self, spec: &RunSpec) -> Option<&PublishedRemark> {
        self.remarks.iter().find(|r| r.workload.describes(spec))
    }
}

/// One row of a published table, with its line for error messages.
struct Row {
    record: csv::StringRecord,
    line: usize,
}

impl Row {
    /// Field `n` as text.
    fn text(&self, n: usize) -> Result<&str, StudyError> {
        self.record
            .get(n)
            .ok_or(StudyError::TooFewFields { line: self.line })
    }

    /// Field `n`, in ms, as µs.
    fn micros(&self, n: usize) -> Result<Micros, StudyError> {
        Ok(Micros::from_ticks((self.number(n)? * 1e3).round() as u64))
    }

    /// Field `n` as a number.
    fn number(&self, n: usize) -> Result<f64, StudyError> {
        self.text(n)?
            .parse()
            .map_err(|e: std::num::ParseFloatError| StudyError::NotANumber {
                line: self.line,
                why: e.to_string(),
            })
    }
}

/// A CSV text's rows, header skipped.
fn rows(text: &str) -> Result<Vec<Row>, StudyError> {
    csv::Reader::from_reader(text.as_bytes())
        .records()
        .enumerate()
        .map(|(i, r)| {
            r.map(|record| Row {
                record,
                line: i + 2,
            })
            .map_err(|e| StudyError::Csv(e.to_string()))
        })
        .collect()
}

/// How herdsim's mean compares with a published figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Within sampling error: the distance from herdsim's mean to the range
    /// the published figure allows is at most 1.96 standard errors of the
    /// difference (herdsim's SE, plus the published figure's own when it is a
    /// mean of known runs, estimated from herdsim's sd).
    Agrees,
    /// herdsim's mean is this many times the published figure, and outside it.
    Differs {
        /// herdsim's mean over the published value.
        ratio: f64,
        /// The distance from the mean to the published range, in standard
        /// errors of the difference (where herdsim has replicates).
        z: Option<f64>,
    },
}

impl Verdict {
    /// The verdict on herdsim's `summary` against `figure`. A figure of
    /// unknown provenance (seed 002's "representative output") has only its
    /// rounding: herdsim's 95% CI must reach its range. A single replicate has
    /// no CI; its value must then fall in the range itself.
    pub fn of(summary: &Summary, figure: &PublishedFigure) -> Verdict {
        let (low, high) = figure.range;
        let gap = if summary.mean < low {
            low - summary.mean
        } else if summary.mean > high {
            summary.mean - high
        } else {
            0.0
        };
        let se_difference = match (figure.runs, summary.sd, summary.standard_error()) {
            (Some(runs), Some(sd), Some(se)) => {
                let theirs = sd / f64::from(runs).sqrt();
                Some((se * se + theirs * theirs).sqrt())
            }
            (_, _, se) => se,
        };
        let tolerance = match figure.runs {
            Some(_) => 1.96 * se_difference.unwrap_or(0.0),
            None => summary.ci95.unwrap_or(0.0),
        };
        if gap <= tolerance {
            Verdict::Agrees
        } else {
            Verdict::Differs {
                ratio: summary.mean / figure.value,
                z: se_difference.filter(|&se| se > 0.0).map(|se| gap / se),
            }
        }
    }
}

impl fmt::Display for Verdict {
    /// `agrees`, `39% higher`, `18% lower`, `17.9× higher`, `14.2× lower`; a
    /// difference of fewer than 10 standard errors also says how many
    /// (`1% lower, 2.3 SE`): at 95%, one comparison in twenty of two identical
    /// models lands past 1.96.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Verdict::Differs { ratio, z } = *self else {
            return f.write_str("agrees");
        };
        if ratio >= 2.0 {
            write!(f, "{}× higher", times(ratio))?;
        } else if ratio <= 0.5 {
            write!(f, "{}× lower", times(1.0 / ratio))?;
        } else if ratio > 1.0 {
            write!(f, "{:.0}% higher", (ratio - 1.0) * 100.0)?;
        } else {
            write!(f, "{:.0}% lower", (1.0 - ratio) * 100.0)?;
        }
        match z {
            Some(z) if z < 10.0 => write!(f, ", {z:.1} SE"),
            _ => Ok(()),
        }
    }
}

/// A ratio to three significant figures: `17.9`, `640`, `2.25`.
fn times(r: f64) -> String {
    let decimals = (2 - r.log10().floor() as i32).max(0) as usize;
    crate::base::format::format_number(r, decimals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(mean: f64, ci95: f64) -> Summary {
        Summary {
            n: 100,
            mean,
            sd: Some(ci95 * 5.0),
            ci95: Some(ci95),
            min: mean,
            max: mean,
            quartiles: None,
        }
    }

    #[test]
    fn the_embedded_table_applies_to_seed_002s_workload() {
        let published = Published::embedded();
        let spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
        let calls = published.figure(&spec, Metric::Calls).unwrap();
        assert_eq!(
            (calls.value, calls.range, calls.shown.as_str()),
            (3_400.0, (3_350.0, 3_450.0), "~3,400")
        );
        let time = published.figure(&spec, Metric::LastSuccessMs).unwrap();
        assert_eq!(
            (time.value, time.range, time.shown.as_str()),
            (12_000.0, (11_500.0, 12_500.0), "~12 s")
        );
        assert_eq!(published.remark(&spec).unwrap().text, "Lowest");
        assert!(
            published
                .figure(&RunSpec::seed_002(PolicyKind::Full, 999), Metric::Calls)
                .is_none()
        );
        let attempt = RunSpec::seed_002(PolicyKind::DecorrelatedAttempt, 1_000);
        assert_eq!(
            published.figure(&attempt, Metric::Calls).unwrap().value,
            3_900.0
        );
        assert!(
            published
                .figure(&RunSpec::seed_002(PolicyKind::Linear, 1_000), Metric::Calls)
                .is_none()
        );
    }

    #[test]
    fn the_outage_and_occ_tables_apply_to_their_models() {
        let published = Published::embedded();
        let mut outage = RunSpec::seed_002(PolicyKind::Decorrelated, 1_000);
        outage.resource = ResourceKind::Outage;
        outage.policy.cap_us = Micros::from_s(10);
        outage.max_attempts = Some(8);
        outage.deadline_us = Some(Micros::from_s(60));
        outage.window_us = Some(Micros::from_ms(10));
        let share = published.figure(&outage, Metric::PeakRetryShare).unwrap();
        assert_eq!((share.value, share.runs), (0.0106, Some(1)));
        assert!((share.range.1 - 0.01065).abs() < 1e-12);
        // Measured with 8 attempts and a 60 s deadline: another workload.
        for change in [
            |s: &mut RunSpec| s.max_attempts = Some(50),
            |s: &mut RunSpec| s.deadline_us = Some(Micros::from_s(600)),
            |s: &mut RunSpec| s.window_us = None,
            |s: &mut RunSpec| {
                s.arrivals = crate::model::arrivals::Arrivals::Uniform {
                    window_us: Micros::from_us(10),
                }
            },
        ] {
            let mut other = outage.clone();
            change(&mut other);
            assert!(
                published.figure(&other, Metric::PeakRetryShare).is_none(),
                "{other:?}"
            );
        }
        let mut occ = RunSpec::seed_002(PolicyKind::NoBackoff, 190);
        occ.resource = ResourceKind::Occ;
        occ.policy.base_us = Micros::from_ms(5);
        occ.policy.cap_us = Micros::from_s(2);
        occ.policy.first_exponent = 1;
        let calls = published.figure(&occ, Metric::Calls).unwrap();
        assert_eq!(
            (calls.value, calls.range, calls.runs),
            (8_001.0, (8_001.0, 8_002.0), Some(100))
        );
        occ.policy.first_exponent = 0;
        assert!(published.figure(&occ, Metric::Calls).is_none());
        assert_eq!(
            published
                .figures
                .iter()
                .filter(|f| f.metric == Metric::Calls)
                .count(),
            4 + 95 + 240
        );
        // backoff-simulator's rows are its own workloads: write-only OCC,
        // writes |N(2 ms, 1 ms)|, done at the commit.
        occ.occ.server = crate::model::occ::OccServer::WriteOnly;
        occ.occ.write_time = "normal:2ms/1ms".parse().unwrap();
        occ.occ.done = crate::model::occ::OccDone::Commit;
        occ.policy = RunSpec::seed_002(PolicyKind::Full, 50).policy;
        occ.policy.base_us = Micros::from_ms(2);
        occ.policy.cap_us = Micros::from_s(1);
        occ.clients = 50;
        let calls = published.figure(&occ, Metric::Calls).unwrap();
        assert_eq!((calls.runs, calls.shown.as_str()), (Some(100), "173.36"));
    }

    #[test]
    fn a_mean_of_known_runs_is_judged_with_both_sampling_errors() {
        let mut occ = RunSpec::seed_002(PolicyKind::Full, 50);
        occ.resource = ResourceKind::Occ;
        occ.policy.base_us = Micros::from_ms(5);
        occ.policy.cap_us = Micros::from_s(2);
        occ.policy.first_exponent = 1;
        let figure = Published::embedded()
            .figure(&occ, Metric::LastSuccessMs)
            .unwrap()
            .clone();
        // 2,997 ms over 100 runs. herdsim sd 489 over 100 runs: SE 48.9 each,
        // 1.96·√2·48.9 = 135.6 ms of tolerance beyond the truncation range.
        let near = Summary {
            n: 100,
            mean: 2_997.0 - 135.0,
            sd: Some(489.0),
            ci95: Some(97.0),
            min: 0.0,
            max: 0.0,
            quartiles: None,
        };
        assert_eq!(Verdict::of(&near, &figure), Verdict::Agrees);
        let far = Summary {
            mean: 2_997.0 - 137.0,
            ..near
        };
        assert_ne!(Verdict::of(&far, &figure), Verdict::Agrees);
    }

    #[test]
    fn rounding_is_half_the_second_significant_figure() {
        assert_eq!(two_figure_rounding(28_000.0), 500.0);
        assert_eq!(two_figure_rounding(3_400.0), 50.0);
        assert_eq!(two_figure_rounding(31.0), 0.5);
        assert_eq!(two_figure_rounding(10.0), 0.5);
    }

    #[test]
    fn verdicts() {
        let figure = Published::embedded()
            .figure(&RunSpec::seed_002(PolicyKind::Full, 1_000), Metric::Calls)
            .unwrap()
            .clone();
        // 3,400 ± 50 published.
        assert_eq!(
            Verdict::of(&summary(3_460.0, 20.0), &figure),
            Verdict::Agrees
        );
        assert_eq!(
            Verdict::of(&summary(3_340.0, 20.0), &figure),
            Verdict::Agrees
        );
        assert_eq!(
            Verdict::of(&summary(4_725.0, 3.6), &figure).to_string(),
            "39% higher"
        );
        assert_eq!(
            Verdict::of(&summary(2_000.0, 3.6), &figure).to_string(),
            "41% lower"
        );
        assert_eq!(
            Verdict::of(&summary(500_500.0, 0.0), &figure).to_string(),
            "147× higher"
        );
        assert_eq!(
            Verdict::of(&summary(340.0, 1.0), &figure).to_string(),
            "10.0× lower"
        );
    }
}
