//! Brooker's retry circuit breaker (2022, "Fixing retries with token buckets
//! and circuit breakers"; mbrooker/simulator_example's
//! `CircuitBreakerRetryStrategy`).
//!
//! Per client, two counters that never reset or decay: `calls` += 1 at each
//! call start (first tries only), `failures` += 1 at every failed attempt,
//! retries included. After a failure (counted first), a retry may follow iff
//! failures / calls ≤ `ratio` (0.1); the per-call cap is `--max-attempts`
//! (Brooker: 3 retries). It only breaks retries: first tries always go.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "cumulative",
    family: Family::Breaker,
    syntax: "cumulative:RATIO (Brooker: cumulative:0.1, with --max-attempts 4)",
    source: "Brooker 2022, \"Fixing retries with token buckets and circuit breakers\" (its code)",
    rule: "calls += 1 per first try, failures += 1 per failed attempt, never reset; \
           retry iff failures / calls ≤ RATIO",
    scope: "per client (--fleet 1 reproduces it)",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "cumulative:0.1",
        knobs: &[Knob {
            field: "cumulative",
            what: "the retries-per-request ratio that opens it",
            values: &["0.01", "0.03", "0.1", "0.3", "1"],
        }],
    }),
};

/// The breaker's parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CumulativeBreakerSpec {
    /// The most failures per call that still allows retries.
    pub ratio: f64,
}

impl CumulativeBreakerSpec {
    /// Reads `cumulative:RATIO`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&[], &[], ABOUT.syntax)?;
        Ok(CumulativeBreakerSpec {
            ratio: rule.number("cumulative", 0.0, 1_000.0)?,
        })
    }
}

impl fmt::Display for CumulativeBreakerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cumulative:{}", self.ratio)
    }
}

/// One scope's counters.
#[derive(Debug, Clone)]
pub struct CumulativeBreaker {
    spec: CumulativeBreakerSpec,
    calls: u64,
    failures: u64,
}

impl CumulativeBreaker {
    /// Nothing counted.
    pub fn new(spec: &CumulativeBreakerSpec) -> Self {
        CumulativeBreaker {
            spec: *spec,
            calls: 0,
            failures: 0,
        }
    }
}

impl RetryControl for CumulativeBreaker {
    fn request_started(&mut self, _now: Nanos) {
        self.calls += 1;
    }

    fn attempt_ended(&mut self, _now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        self.failures += u64::from(outcome.failed());
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        // As the original: a float ratio (no calls: NaN, no retry).
        self.failures as f64 / self.calls as f64 <= self.spec.ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    #[test]
    fn retries_stop_above_one_failure_in_ten_calls_and_come_back() {
        let (f, s) = (Outcome::Failure, Outcome::Success);
        let spec = CumulativeBreakerSpec::parse(&Rule::read("breaker", "cumulative:0.1").unwrap());
        let mut b = CumulativeBreaker::new(&spec.unwrap());
        // The first failure of a new client: 1/1 > 0.1.
        walk(
            &mut b,
            &[Step::Start, Step::End(f, None), Step::Retry(f, false)],
        );
        // Nine more calls succeed: 1/10 ≤ 0.1, retries come back (closed).
        for _ in 0..9 {
            walk(&mut b, &[Step::Start, Step::End(s, None)]);
        }
        walk(&mut b, &[Step::Retry(f, true)]);
        // Another failure: 2/10, open again until ten more calls.
        walk(&mut b, &[Step::End(f, Some(f)), Step::Retry(f, false)]);
        for _ in 0..10 {
            walk(&mut b, &[Step::Start, Step::End(s, None)]);
        }
        walk(&mut b, &[Step::Retry(f, true)]);
    }

    proptest! {
        /// A retry is allowed only while failures ≤ ratio × calls.
        #[test]
        fn retries_only_below_the_ratio(steps in proptest::collection::vec(0u8..3, 0..300)) {
            let mut b = CumulativeBreaker::new(&CumulativeBreakerSpec { ratio: 0.1 });
            for s in steps {
                match s {
                    0 => b.request_started(Nanos::ZERO),
                    1 => b.attempt_ended(Nanos::ZERO, Outcome::Failure, None),
                    _ => prop_assert_eq!(
                        b.may_retry(Nanos::ZERO, Outcome::Failure),
                        b.calls > 0 && b.failures as f64 <= 0.1 * b.calls as f64 + 1e-12
                    ),
                }
            }
        }
    }
}
