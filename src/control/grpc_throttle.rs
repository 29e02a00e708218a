//! gRPC retry throttling (gRFC A6, "gRPC Retry Design", `retryThrottling`).
//!
//! Per channel (client), `token_count` starts at `max_tokens`. Every failed
//! attempt takes 1 token (not below 0), every success adds `token_ratio`
//! (not above `max_tokens`); retries are not sent while `token_count` is at
//! or below `max_tokens / 2`. A6 keeps the count in thousandths (its
//! `token_ratio` has at most three decimals), and so does herdsim, so the
//! comparisons are exact. Every failed attempt counts: a server failure, a
//! rejection and a timeout (A6 counts the attempts that fail with a
//! retryable status; here every failure is retryable).

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "grpc",
    family: Family::Budget,
    syntax: "grpc:MAX_TOKENS,ratio:R (gRFC A6 example: grpc:10,ratio:0.1)",
    source: "gRPC retry throttling, gRFC A6",
    rule: "tokens start at max; a failed attempt takes 1, a success adds R (≤ max); \
           no retry while tokens ≤ max/2",
    scope: "per channel (client)",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "grpc:10,ratio:0.1",
        knobs: &[
            Knob {
                field: "grpc",
                what: "maxTokens",
                values: &["2", "5", "10", "20", "50", "100", "1000"],
            },
            Knob {
                field: "ratio",
                what: "tokenRatio",
                values: &["0.01", "0.03", "0.1", "0.3", "1"],
            },
        ],
    }),
};

/// Thousandths of a token.
const MILLI: u64 = 1_000;

/// The throttle's parameters, in thousandths of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrpcThrottleSpec {
    /// `maxTokens` × 1,000.
    pub max_milli: u64,
    /// `tokenRatio` × 1,000.
    pub ratio_milli: u64,
}

impl GrpcThrottleSpec {
    /// Reads `grpc:MAX,ratio:R`: MAX in 1..=1000 as A6 says, R with at most
    /// three decimals.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["ratio"], &[], ABOUT.syntax)?;
        let max = rule.number("grpc", 0.001, 1_000.0)?;
        let ratio = rule.number("ratio", 0.001, 1_000.0)?;
        let milli = |x: f64| (x * MILLI as f64).round() as u64;
        Ok(GrpcThrottleSpec {
            max_milli: milli(max),
            ratio_milli: milli(ratio),
        })
    }
}

impl fmt::Display for GrpcThrottleSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tokens = |m: u64| self::tokens(m);
        write!(
            f,
            "grpc:{},ratio:{}",
            tokens(self.max_milli),
            tokens(self.ratio_milli)
        )
    }
}

/// Thousandths as a number with no trailing zeros.
fn tokens(milli: u64) -> String {
    (milli as f64 / MILLI as f64).to_string()
}

/// One scope's token count.
#[derive(Debug, Clone)]
pub struct GrpcThrottle {
    spec: GrpcThrottleSpec,
    milli: u64,
}

impl GrpcThrottle {
    /// Full.
    pub fn new(spec: &GrpcThrottleSpec) -> Self {
        GrpcThrottle {
            spec: *spec,
            milli: spec.max_milli,
        }
    }
}

impl RetryControl for GrpcThrottle {
    fn attempt_ended(&mut self, _now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        self.milli = if outcome.failed() {
            self.milli.saturating_sub(MILLI)
        } else {
            (self.milli + self.spec.ratio_milli).min(self.spec.max_milli)
        };
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        // `token_count > max_tokens / 2`, doubled to stay in integers.
        2 * self.milli > self.spec.max_milli
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    fn throttle(text: &str) -> GrpcThrottle {
        GrpcThrottle::new(&GrpcThrottleSpec::parse(&Rule::read("budget", text).unwrap()).unwrap())
    }

    #[test]
    fn five_failures_throttle_ten_and_a_tenth_successes_release() {
        let (f, s, t) = (Outcome::Failure, Outcome::Success, Outcome::Timeout);
        let mut g = throttle("grpc:10,ratio:0.1");
        walk(
            &mut g,
            &[
                Step::End(f, None),
                Step::End(t, None),
                Step::End(Outcome::Rejected, None),
                Step::End(f, None), // 6 left: 6 > 5
                Step::Retry(f, true),
                Step::End(f, None), // 5: not above half
                Step::Retry(f, false),
            ],
        );
        // One success: 5.1 > 5, retries go; a failure: 4.1, they stop until
        // ten successes make 5.1.
        walk(&mut g, &[Step::End(s, None), Step::Retry(f, true)]);
        walk(&mut g, &[Step::End(f, None), Step::Retry(f, false)]);
        for _ in 0..9 {
            walk(&mut g, &[Step::End(s, None), Step::Retry(f, false)]);
        }
        walk(&mut g, &[Step::End(s, None), Step::Retry(f, true)]);
        assert_eq!(g.milli, 5_100);
        assert_eq!(
            throttle("grpc:10,ratio:0.1").spec.to_string(),
            "grpc:10,ratio:0.1"
        );
    }

    proptest! {
        /// The count stays within 0..=max.
        #[test]
        fn tokens_stay_within_the_bucket(steps in proptest::collection::vec(any::<bool>(), 0..400)) {
            let mut g = throttle("grpc:10,ratio:0.25");
            for ok in steps {
                let outcome = if ok { Outcome::Success } else { Outcome::Failure };
                g.attempt_ended(Nanos::ZERO, outcome, None);
                prop_assert!(g.milli <= 10_000);
            }
        }
    }
}
