//! The Yandex study's retry budget (2024, "Good retry, bad retry", its code's
//! `RetryBudget`): tokens earned by successful first tries.
//!
//! The bucket starts full at `capacity` (3,000) and never holds more; each
//! successful first try adds `deposit` (10); a retry needs at least `cost`
//! (100) and takes it. Failures and successful retries add nothing. In the
//! long run retries are at most deposit/cost (10%) of the successful first
//! tries, plus a burst of capacity/cost (30) retries at the start of any
//! outage. Consulted when the retry is decided.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "earned",
    family: Family::Budget,
    syntax: "earned:CAPACITY,cost:N,deposit:N (Yandex: earned:3000,cost:100,deposit:10)",
    source: "Yandex 2024, \"Good retry, bad retry\" (retry budget, 10%)",
    rule: "starts full; a successful first try adds deposit (≤ capacity); retry iff \
           tokens ≥ cost, taking it",
    scope: "global (one for all clients) or local (per client): the study compares both",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "earned:3000,cost:100,deposit:10",
        knobs: &[
            Knob {
                field: "earned",
                what: "the budget's capacity",
                values: &["300", "1000", "3000", "10000", "30000"],
            },
            Knob {
                field: "deposit",
                what: "tokens a success earns (a retry costs 100)",
                values: &["1", "3", "10", "20", "50"],
            },
        ],
    }),
};

/// The budget's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EarnedTokensSpec {
    /// The bucket's size, and its start.
    pub capacity: u64,
    /// Tokens a retry needs and takes.
    pub cost: u64,
    /// Tokens a successful first try adds.
    pub deposit: u64,
}

impl EarnedTokensSpec {
    /// Reads `earned:C,cost:N,deposit:N`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["cost", "deposit"], &[], ABOUT.syntax)?;
        Ok(EarnedTokensSpec {
            capacity: rule.count("earned", 1, 1 << 40)?,
            cost: rule.count("cost", 1, 1 << 40)?,
            deposit: rule.count("deposit", 0, 1 << 40)?,
        })
    }
}

impl fmt::Display for EarnedTokensSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "earned:{},cost:{},deposit:{}",
            self.capacity, self.cost, self.deposit
        )
    }
}

/// One scope's bucket.
#[derive(Debug, Clone)]
pub struct EarnedTokens {
    spec: EarnedTokensSpec,
    tokens: u64,
}

impl EarnedTokens {
    /// Full.
    pub fn new(spec: &EarnedTokensSpec) -> Self {
        EarnedTokens {
            spec: *spec,
            tokens: spec.capacity,
        }
    }
}

impl RetryControl for EarnedTokens {
    fn attempt_ended(&mut self, _now: Nanos, outcome: Outcome, retry_of: Option<Outcome>) {
        if outcome == Outcome::Success && retry_of.is_none() {
            self.tokens = (self.tokens + self.spec.deposit).min(self.spec.capacity);
        }
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        self.tokens >= self.spec.cost
    }

    fn take_retry(&mut self, _now: Nanos, _cause: Outcome) {
        self.tokens -= self.spec.cost;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    fn budget(text: &str) -> EarnedTokens {
        EarnedTokens::new(&EarnedTokensSpec::parse(&Rule::read("budget", text).unwrap()).unwrap())
    }

    #[test]
    fn a_burst_then_one_retry_per_ten_successful_first_tries() {
        let (f, s) = (Outcome::Failure, Outcome::Success);
        let mut b = budget("earned:300,cost:100,deposit:10");
        walk(
            &mut b,
            &[
                Step::Retry(f, true),
                Step::Retry(f, true),
                Step::Retry(f, true),
                Step::Retry(f, false),
                // A successful retry and failures earn nothing.
                Step::End(s, Some(f)),
                Step::End(f, None),
                Step::Retry(f, false),
            ],
        );
        for _ in 0..9 {
            walk(&mut b, &[Step::End(s, None)]);
        }
        walk(&mut b, &[Step::Retry(f, false), Step::End(s, None)]);
        walk(&mut b, &[Step::Retry(f, true), Step::Retry(f, false)]);
    }

    proptest! {
        /// Tokens stay within 0..=capacity.
        #[test]
        fn tokens_stay_within_the_bucket(steps in proptest::collection::vec(0u8..3, 0..400)) {
            let mut b = budget("earned:3000,cost:100,deposit:10");
            for s in steps {
                match s {
                    0 => if b.may_retry(Nanos::ZERO, Outcome::Failure) { b.take_retry(Nanos::ZERO, Outcome::Failure) },
                    1 => b.attempt_ended(Nanos::ZERO, Outcome::Success, None),
                    _ => b.attempt_ended(Nanos::ZERO, Outcome::Success, Some(Outcome::Timeout)),
                }
                prop_assert!(b.tokens <= 3000);
            }
        }
    }
}
