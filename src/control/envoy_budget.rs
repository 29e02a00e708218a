//! Envoy's retry budget (cluster circuit breakers, `retry_budget`).
//!
//! A concurrency budget, not a rate: a retry may start while the retries
//! outstanding are fewer than max(`min_retry_concurrency` (3),
//! ⌊`budget_percent` (20%) × active requests⌋). Active requests are the
//! attempts in flight (sent, not yet answered or timed out); a retry is
//! outstanding from when it is decided, through its backoff, until its
//! attempt ends (Envoy counts retries in backoff, as its issue #30205
//! describes, but not in the active requests the limit is taken of).

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Nanos, Outcome, RetryControl};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "envoy",
    family: Family::Budget,
    syntax: "envoy:P,min:N (Envoy defaults: envoy:0.2,min:3)",
    source: "Envoy cluster circuit breakers, retry_budget",
    rule: "retry iff outstanding retries < max(min, ⌊P × attempts in flight⌋); a retry is \
           outstanding from its decision until its attempt ends",
    scope: "per Envoy (client-side proxy): --fleet N for N sources behind one",
    delays_attempts: false,
};

/// The budget's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyBudgetSpec {
    /// `budget_percent` as a fraction.
    pub share: f64,
    /// `min_retry_concurrency`.
    pub min: u64,
}

impl EnvoyBudgetSpec {
    /// Reads `envoy:P,min:N`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["min"], &[], ABOUT.syntax)?;
        Ok(EnvoyBudgetSpec {
            share: rule.number("envoy", 0.0, 1_000.0)?,
            min: rule.count("min", 0, 1 << 40)?,
        })
    }
}

impl fmt::Display for EnvoyBudgetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "envoy:{},min:{}", self.share, self.min)
    }
}

/// One scope's counts.
#[derive(Debug, Clone)]
pub struct EnvoyBudget {
    spec: EnvoyBudgetSpec,
    in_flight: u64,
    outstanding_retries: u64,
}

impl EnvoyBudget {
    /// Nothing in flight.
    pub fn new(spec: &EnvoyBudgetSpec) -> Self {
        EnvoyBudget {
            spec: *spec,
            in_flight: 0,
            outstanding_retries: 0,
        }
    }

    fn limit(&self) -> u64 {
        ((self.spec.share * self.in_flight as f64) as u64).max(self.spec.min)
    }
}

impl RetryControl for EnvoyBudget {
    fn attempt_sent(&mut self, _now: Nanos, _retry_of: Option<Outcome>) {
        self.in_flight += 1;
    }

    fn attempt_ended(&mut self, _now: Nanos, _outcome: Outcome, retry_of: Option<Outcome>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if retry_of.is_some() {
            self.outstanding_retries = self.outstanding_retries.saturating_sub(1);
        }
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        self.outstanding_retries < self.limit()
    }

    fn take_retry(&mut self, _now: Nanos, _cause: Outcome) {
        self.outstanding_retries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    fn budget(text: &str) -> EnvoyBudget {
        EnvoyBudget::new(&EnvoyBudgetSpec::parse(&Rule::read("budget", text).unwrap()).unwrap())
    }

    #[test]
    fn the_floor_then_a_fifth_of_the_attempts_in_flight() {
        let f = Outcome::Failure;
        let mut b = budget("envoy:0.2,min:1");
        walk(&mut b, &[Step::Retry(f, true), Step::Retry(f, false)]);
        for _ in 0..10 {
            walk(&mut b, &[Step::Sent(None)]);
        }
        // 10 in flight: 2 retries may be outstanding; one is.
        walk(&mut b, &[Step::Retry(f, true), Step::Retry(f, false)]);
        // The first retry is sent and ends: one fewer outstanding (and the
        // attempt is no longer in flight).
        walk(
            &mut b,
            &[
                Step::Sent(Some(f)),
                Step::End(f, Some(f)),
                Step::Retry(f, true),
            ],
        );
        // First tries end: 5 in flight, a limit of 1, 2 outstanding.
        for _ in 0..5 {
            walk(&mut b, &[Step::End(Outcome::Success, None)]);
        }
        walk(&mut b, &[Step::Retry(f, false)]);
    }

    proptest! {
        /// Outstanding retries never pass the limit they were allowed under.
        #[test]
        fn outstanding_retries_stay_within_the_budget(steps in proptest::collection::vec(0u8..4, 0..400)) {
            let mut b = budget("envoy:0.2,min:3");
            let mut retries_in_flight = 0u64;
            let mut firsts_in_flight = 0u64;
            for s in steps {
                match s {
                    0 => { b.attempt_sent(0, None); firsts_in_flight += 1; }
                    1 if firsts_in_flight > 0 => { b.attempt_ended(0, Outcome::Success, None); firsts_in_flight -= 1; }
                    2 if b.may_retry(0, Outcome::Failure) => {
                        let limit = b.limit();
                        b.take_retry(0, Outcome::Failure);
                        prop_assert!(b.outstanding_retries <= limit);
                        b.attempt_sent(0, Some(Outcome::Failure));
                        retries_in_flight += 1;
                    }
                    3 if retries_in_flight > 0 => {
                        b.attempt_ended(0, Outcome::Failure, Some(Outcome::Failure));
                        retries_in_flight -= 1;
                    }
                    _ => {}
                }
                prop_assert_eq!(b.outstanding_retries, retries_in_flight);
            }
        }
    }
}
