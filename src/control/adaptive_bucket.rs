//! Brooker's adaptive retry bucket (2022, "Fixing retries with token buckets
//! and circuit breakers"; mbrooker/simulator_example's
//! `AdaptiveRetryStrategy`), as its code runs it.
//!
//! Per client, a bucket of `size` (5) tokens that starts full. Every call
//! start deposits `deposit` (0.1) tokens, up to the size, whatever the call's
//! outcome; a retry needs **more than** 1 token and takes 1; there is no
//! per-call cap, so a full bucket allows four retries in a row.
//!
//! The post's prose differs from its code: it deposits on success ("each
//! success could deposit 0.1 tokens") and retries "up to N times as long as
//! there are tokens". herdsim implements the code (deposit on every start,
//! `> 1`, no cap of its own; `--max-attempts` still applies), in
//! floating point like the original, so remainders such as
//! 1.0000000000000002 may allow a retry as they do there.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "adaptive",
    family: Family::Budget,
    syntax: "adaptive:SIZE,deposit:D (Brooker: adaptive:5,deposit:0.1)",
    source: "Brooker 2022, \"Fixing retries with token buckets and circuit breakers\" (its code)",
    rule: "starts full; every call start adds deposit (≤ size); retry iff tokens > 1, taking 1 \
           (the prose deposits on success instead)",
    scope: "per client (--fleet 1 reproduces it)",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "adaptive:5,deposit:0.1",
        knobs: &[
            Knob {
                field: "adaptive",
                what: "the bucket's size",
                values: &["1", "2", "5", "10", "20", "50"],
            },
            Knob {
                field: "deposit",
                what: "tokens a success deposits",
                values: &["0.01", "0.03", "0.1", "0.3", "1"],
            },
        ],
    }),
};

/// The bucket's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveBucketSpec {
    /// The bucket's size, and its start.
    pub size: f64,
    /// Tokens each call start adds.
    pub deposit: f64,
}

impl AdaptiveBucketSpec {
    /// Reads `adaptive:SIZE,deposit:D`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["deposit"], &[], ABOUT.syntax)?;
        Ok(AdaptiveBucketSpec {
            size: rule.number("adaptive", 1.0, 1e9)?,
            deposit: rule.number("deposit", 0.0, 1e9)?,
        })
    }
}

impl fmt::Display for AdaptiveBucketSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "adaptive:{},deposit:{}", self.size, self.deposit)
    }
}

/// One scope's bucket.
#[derive(Debug, Clone)]
pub struct AdaptiveBucket {
    spec: AdaptiveBucketSpec,
    tokens: f64,
}

impl AdaptiveBucket {
    /// Full.
    pub fn new(spec: &AdaptiveBucketSpec) -> Self {
        AdaptiveBucket {
            spec: *spec,
            tokens: spec.size,
        }
    }
}

impl RetryControl for AdaptiveBucket {
    fn request_started(&mut self, _now: Nanos) {
        self.tokens = (self.tokens + self.spec.deposit).min(self.spec.size);
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        self.tokens > 1.0
    }

    fn take_retry(&mut self, _now: Nanos, _cause: Outcome) {
        self.tokens -= 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    fn bucket(text: &str) -> AdaptiveBucket {
        AdaptiveBucket::new(
            &AdaptiveBucketSpec::parse(&Rule::read("budget", text).unwrap()).unwrap(),
        )
    }

    #[test]
    fn a_full_bucket_allows_four_retries_then_ten_starts_earn_one() {
        let f = Outcome::Failure;
        let mut b = bucket("adaptive:5,deposit:0.1");
        // 5 → 4 → 3 → 2 → 1, and 1.0 > 1.0 is false.
        let four = [Step::Retry(f, true); 4];
        walk(&mut b, &four);
        walk(&mut b, &[Step::Retry(f, false)]);
        // Ten starts, whatever their outcome, earn one retry, and in
        // floating point a little more: 1 + ten deposits of 0.1 is
        // 2.0000000000000009, so the second retry leaves 1.0000000000000009,
        // still above 1, and a third goes too, as in the original.
        for _ in 0..10 {
            walk(&mut b, &[Step::Start, Step::End(f, None)]);
        }
        assert_eq!(b.tokens, 2.000_000_000_000_001);
        walk(
            &mut b,
            &[
                Step::Retry(f, true),
                Step::Retry(f, true),
                Step::Retry(f, false),
            ],
        );
        assert!(b.tokens < 1e-9, "{}", b.tokens);
    }

    proptest! {
        /// Tokens stay within (0, size]: a retry needs more than one.
        #[test]
        fn tokens_stay_within_the_bucket(steps in proptest::collection::vec(any::<bool>(), 0..400)) {
            let mut b = bucket("adaptive:5,deposit:0.1");
            for start in steps {
                if start {
                    b.request_started(Nanos::ZERO);
                } else if b.may_retry(Nanos::ZERO, Outcome::Failure) {
                    b.take_retry(Nanos::ZERO, Outcome::Failure);
                }
                prop_assert!(b.tokens > 0.0 && b.tokens <= 5.0);
            }
        }
    }
}
