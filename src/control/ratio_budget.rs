//! A plain ratio budget: retries at most `ratio` of the requests seen so far,
//! plus `min` retries. The simple form of Finagle's and Envoy's budgets (see
//! [`crate::control::finagle_budget`] and [`crate::control::envoy_budget`]
//! for those as their sources specify them), without expiry or concurrency.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "ratio",
    family: Family::Budget,
    syntax: "ratio:R,min:N (such as ratio:0.2,min:10)",
    source: "herdsim: the cumulative form of a ratio budget",
    rule: "retry iff retries + 1 ≤ min + R × requests, counted since the start",
    scope: "as --fleet says",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "ratio:0.2,min:10",
        knobs: &[
            Knob {
                field: "ratio",
                what: "retries per request",
                values: &["0.01", "0.05", "0.1", "0.2", "0.5", "1"],
            },
            Knob {
                field: "min",
                what: "retries always allowed",
                values: &["0", "1", "3", "10", "30", "100"],
            },
        ],
    }),
};

/// The budget's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioBudgetSpec {
    /// Retries allowed per request.
    pub ratio: f64,
    /// Retries allowed with no requests at all.
    pub min: u64,
}

impl RatioBudgetSpec {
    /// Reads `ratio:R,min:N`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["min"], &[], ABOUT.syntax)?;
        Ok(RatioBudgetSpec {
            ratio: rule.number("ratio", 0.0, 1_000.0)?,
            min: rule.count("min", 0, 1 << 40)?,
        })
    }
}

impl fmt::Display for RatioBudgetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ratio:{},min:{}", self.ratio, self.min)
    }
}

/// One scope's counts.
#[derive(Debug, Clone)]
pub struct RatioBudget {
    spec: RatioBudgetSpec,
    requests: u64,
    retries: u64,
}

impl RatioBudget {
    /// Nothing counted.
    pub fn new(spec: &RatioBudgetSpec) -> Self {
        RatioBudget {
            spec: *spec,
            requests: 0,
            retries: 0,
        }
    }
}

impl RetryControl for RatioBudget {
    fn request_started(&mut self, _now: Nanos) {
        self.requests += 1;
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        (self.retries + 1) as f64 <= self.spec.min as f64 + self.spec.ratio * self.requests as f64
    }

    fn take_retry(&mut self, _now: Nanos, _cause: Outcome) {
        self.retries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    fn budget(text: &str) -> RatioBudget {
        RatioBudget::new(&RatioBudgetSpec::parse(&Rule::read("budget", text).unwrap()).unwrap())
    }

    #[test]
    fn the_floor_then_one_retry_per_five_requests() {
        let f = Outcome::Failure;
        let mut b = budget("ratio:0.2,min:1");
        walk(&mut b, &[Step::Retry(f, true), Step::Retry(f, false)]);
        for _ in 0..5 {
            walk(&mut b, &[Step::Start]);
        }
        walk(&mut b, &[Step::Retry(f, true), Step::Retry(f, false)]);
    }

    proptest! {
        /// Retries never exceed min + ratio × requests.
        #[test]
        fn retries_stay_within_the_ratio(steps in proptest::collection::vec(any::<bool>(), 0..400)) {
            let mut b = budget("ratio:0.1,min:3");
            for start in steps {
                if start {
                    b.request_started(Nanos::ZERO);
                } else if b.may_retry(Nanos::ZERO, Outcome::Failure) {
                    b.take_retry(Nanos::ZERO, Outcome::Failure);
                }
                prop_assert!(b.retries as f64 <= 3.0 + 0.1 * b.requests as f64);
            }
        }
    }
}
