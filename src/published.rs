//! Published figures herdsim's results are set beside, and the verdict on each.
//!
//! The figures are other people's, transcribed in `reference/` and embedded at
//! build time. A figure applies to a workload point when its policy, clients,
//! capacity, base and cap are the point's.

use std::fmt;

use crate::policy::PolicyKind;
use crate::spec::RunSpec;
use crate::stats::Summary;
use crate::time::Micros;

/// Seed 002's four-strategy table.
const FOUR_STRATEGIES: &str = include_str!("../reference/four-strategies-published.csv");

/// One published number, in herdsim's units.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedFigure {
    /// Where it was published.
    pub source: String,
    /// The metric, by herdsim's name (`calls`, `last_success_ms`).
    pub metric: &'static str,
    /// The published value, in the metric's unit.
    pub value: f64,
    /// Half the rounding unit of the published value, in the metric's unit: the
    /// true figure lay in `value ± rounding`.
    pub rounding: f64,
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

/// The workload a published figure describes.
#[derive(Debug, Clone, PartialEq)]
struct Workload {
    /// Policies whose runs the figure describes.
    policies: Vec<PolicyKind>,
    clients: u32,
    capacity_per_ms: f64,
    base_us: Micros,
    cap_us: Micros,
}

impl Workload {
    fn describes(&self, spec: &RunSpec) -> bool {
        self.policies.contains(&spec.policy.kind)
            && self.clients == spec.clients
            && self.capacity_per_ms == spec.capacity_per_ms
            && self.base_us == spec.policy.base_us
            && self.cap_us == spec.policy.cap_us
    }
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
        Self::from_four_strategies_csv(FOUR_STRATEGIES).expect("the embedded table parses")
    }

    /// Reads seed 002's table: `source, clients, capacity_per_ms, base_ms,
    /// cap_ms, policy, total_calls, time_to_last_success_s, server_contention`.
    pub fn from_four_strategies_csv(text: &str) -> Result<Published, String> {
        let mut published = Published::default();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        for (i, record) in reader.records().enumerate() {
            let r = record.map_err(|e| e.to_string())?;
            let field = |n: usize| r.get(n).ok_or(format!("row {}: too few fields", i + 2));
            let number = |n: usize| -> Result<f64, String> {
                field(n)?
                    .parse::<f64>()
                    .map_err(|e| format!("row {}: {e}", i + 2))
            };
            let policy: PolicyKind = field(5)?.parse()?;
            // Seed 002 made its "decorrelated" row, it says, with its simulate(),
            // which calls decorrelated jitter with the attempt number: the
            // figure describes both the intended walk and the code as written.
            let mut policies = vec![policy];
            if policy == PolicyKind::Decorrelated {
                policies.push(PolicyKind::DecorrelatedAttempt);
            }
            let workload = Workload {
                policies,
                clients: number(1)? as u32,
                capacity_per_ms: number(2)?,
                base_us: (number(3)? * 1e3) as Micros,
                cap_us: (number(4)? * 1e3) as Micros,
            };
            let source = field(0)?.to_string();
            let calls = number(6)?;
            let seconds = number(7)?;
            published.figures.push(PublishedFigure {
                source: source.clone(),
                metric: "calls",
                value: calls,
                rounding: two_figure_rounding(calls),
                shown: format!("~{}", crate::spec::group_thousands(calls as u64)),
                workload: workload.clone(),
            });
            published.figures.push(PublishedFigure {
                source: source.clone(),
                metric: "last_success_ms",
                value: seconds * 1e3,
                rounding: two_figure_rounding(seconds) * 1e3,
                shown: format!("~{seconds} s"),
                workload: workload.clone(),
            });
            published.remarks.push(PublishedRemark {
                source,
                text: field(8)?.to_string(),
                workload,
            });
        }
        Ok(published)
    }

    /// The published figure of `metric` for the workload `spec`, if any.
    pub fn figure(&self, spec: &RunSpec, metric: &str) -> Option<&PublishedFigure> {
        self.figures
            .iter()
            .find(|f| f.metric == metric && f.workload.describes(spec))
    }

    /// The published remark on the workload `spec`, if any.
    pub fn remark(&self, spec: &RunSpec) -> Option<&PublishedRemark> {
        self.remarks.iter().find(|r| r.workload.describes(spec))
    }
}

/// How herdsim's mean compares with a published figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// herdsim's 95% CI overlaps the published figure's rounding interval.
    Agrees,
    /// herdsim's mean is this many times the published figure, and outside it.
    Differs {
        /// herdsim's mean over the published value.
        ratio: f64,
    },
}

impl Verdict {
    /// The verdict on herdsim's `summary` against `figure`. A single replicate
    /// has no CI; its value must then fall in the rounding interval itself.
    pub fn of(summary: &Summary, figure: &PublishedFigure) -> Verdict {
        let ci = summary.ci95.unwrap_or(0.0);
        let gap = (summary.mean - figure.value).abs();
        if gap <= ci + figure.rounding {
            Verdict::Agrees
        } else {
            Verdict::Differs {
                ratio: summary.mean / figure.value,
            }
        }
    }
}

impl fmt::Display for Verdict {
    /// `agrees`, `39% higher`, `18% lower`, `17.9× higher`, `14.2× lower`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Verdict::Agrees => f.write_str("agrees"),
            Verdict::Differs { ratio } if ratio >= 2.0 => write!(f, "{}× higher", times(ratio)),
            Verdict::Differs { ratio } if ratio <= 0.5 => {
                write!(f, "{}× lower", times(1.0 / ratio))
            }
            Verdict::Differs { ratio } if ratio > 1.0 => {
                write!(f, "{:.0}% higher", (ratio - 1.0) * 100.0)
            }
            Verdict::Differs { ratio } => write!(f, "{:.0}% lower", (1.0 - ratio) * 100.0),
        }
    }
}

/// A ratio to three significant figures: `17.9`, `640`, `2.25`.
fn times(r: f64) -> String {
    let decimals = (2 - r.log10().floor() as i32).max(0) as usize;
    crate::report::format_number(r, decimals)
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
        }
    }

    #[test]
    fn the_embedded_table_applies_to_seed_002s_workload() {
        let published = Published::embedded();
        let spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
        let calls = published.figure(&spec, "calls").unwrap();
        assert_eq!(
            (calls.value, calls.rounding, calls.shown.as_str()),
            (3_400.0, 50.0, "~3,400")
        );
        let time = published.figure(&spec, "last_success_ms").unwrap();
        assert_eq!(
            (time.value, time.rounding, time.shown.as_str()),
            (12_000.0, 500.0, "~12 s")
        );
        assert_eq!(published.remark(&spec).unwrap().text, "Lowest");
        assert!(
            published
                .figure(&RunSpec::seed_002(PolicyKind::Full, 999), "calls")
                .is_none()
        );
        let attempt = RunSpec::seed_002(PolicyKind::DecorrelatedAttempt, 1_000);
        assert_eq!(published.figure(&attempt, "calls").unwrap().value, 3_900.0);
        assert!(
            published
                .figure(&RunSpec::seed_002(PolicyKind::Linear, 1_000), "calls")
                .is_none()
        );
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
            .figure(&RunSpec::seed_002(PolicyKind::Full, 1_000), "calls")
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
