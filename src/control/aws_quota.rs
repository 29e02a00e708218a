//! The AWS SDK's retry quota ("standard" retry mode; botocore's
//! `RetryQuotaChecker`, the SDKs' `RetryQuota`).
//!
//! A bucket of `capacity` tokens (500), full at the start. A retry takes
//! `cost` tokens (5), or `timeout_cost` (10) when the attempt it retries
//! timed out, and is refused when fewer remain. When a request succeeds, a
//! retry gives back what it took (the cost of the cause that attempt
//! retried), a first try adds `refund` (1); never above the capacity. The
//! quota is consulted when the retry is decided, before its backoff.
//! Without `timeout-cost`, a timeout costs `cost`, as before timeouts
//! existed in herdsim.
//!
//! `throttle-cost` is the 2026 behaviour's charge for retrying a throttling
//! error (botocore 1.43.67, `botocore/retries/standard.py`,
//! `RetryQuotaChecker`: `_THROTTLING_RETRY_COST = 5` beside
//! `_RETRY_COST_V2 = 14`, and no separate timeout cost). herdsim's
//! throttling error is [`Outcome::Rejected`], a refusal at a full queue
//! (an AWS service's `ThrottlingException` or 429). Without it a rejection
//! costs `cost`.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "tokens",
    family: Family::Budget,
    syntax: "tokens:CAPACITY,cost:N,refund:N[,timeout-cost:N][,throttle-cost:N] (AWS 2.0: \
             tokens:500,cost:5,refund:1,timeout-cost:10; 2026: tokens:500,cost:14,refund:1,throttle-cost:5)",
    source: "AWS SDKs, standard retry mode (retry quota)",
    rule: "retry iff tokens ≥ cost (timeout-cost after a timeout, throttle-cost after a \
           rejection), taking it; a success returns a retry's cost, or adds refund after a first \
           try; tokens ≤ capacity",
    scope: "per client (SDK client); shared when clients share one",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "tokens:500,cost:5,refund:1,timeout-cost:10",
        knobs: &[
            Knob {
                field: "tokens",
                what: "the quota's capacity",
                values: &["10", "50", "100", "500", "1000", "5000"],
            },
            Knob {
                field: "cost",
                what: "a retry's cost",
                values: &["1", "2", "5", "10", "14", "25", "50"],
            },
        ],
    }),
};

/// The quota's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwsQuotaSpec {
    /// The bucket's size.
    pub capacity: u64,
    /// Tokens a retry takes.
    pub cost: u64,
    /// Tokens a first-try success adds.
    pub refund: u64,
    /// Tokens a retry after a timeout takes; `None` is `cost`.
    pub timeout_cost: Option<u64>,
    /// Tokens a retry after a rejection (a throttle) takes; `None` is `cost`.
    pub throttle_cost: Option<u64>,
}

impl AwsQuotaSpec {
    /// Reads `tokens:C,cost:N,refund:N[,timeout-cost:N][,throttle-cost:N]`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(
            &["cost", "refund"],
            &["timeout-cost", "throttle-cost"],
            ABOUT.syntax,
        )?;
        Ok(AwsQuotaSpec {
            capacity: rule.count("tokens", 1, 1 << 40)?,
            cost: rule.count("cost", 1, 1 << 40)?,
            refund: rule.count("refund", 0, 1 << 40)?,
            timeout_cost: rule.count_or("timeout-cost", 1, 1 << 40)?,
            throttle_cost: rule.count_or("throttle-cost", 1, 1 << 40)?,
        })
    }

    /// Tokens a retry after `cause` takes.
    fn cost_of(&self, cause: Outcome) -> u64 {
        match cause {
            Outcome::Timeout => self.timeout_cost.unwrap_or(self.cost),
            Outcome::Rejected => self.throttle_cost.unwrap_or(self.cost),
            _ => self.cost,
        }
    }
}

impl fmt::Display for AwsQuotaSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tokens:{},cost:{},refund:{}",
            self.capacity, self.cost, self.refund
        )?;
        if let Some(t) = self.timeout_cost {
            write!(f, ",timeout-cost:{t}")?;
        }
        if let Some(t) = self.throttle_cost {
            write!(f, ",throttle-cost:{t}")?;
        }
        Ok(())
    }
}

/// One scope's quota.
#[derive(Debug, Clone)]
pub struct AwsQuota {
    spec: AwsQuotaSpec,
    tokens: u64,
}

impl AwsQuota {
    /// Full.
    pub fn new(spec: &AwsQuotaSpec) -> Self {
        AwsQuota {
            spec: *spec,
            tokens: spec.capacity,
        }
    }

    /// Tokens left.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }
}

impl RetryControl for AwsQuota {
    fn attempt_ended(&mut self, _now: Nanos, outcome: Outcome, retry_of: Option<Outcome>) {
        if outcome == Outcome::Success {
            let credit = retry_of.map_or(self.spec.refund, |cause| self.spec.cost_of(cause));
            self.tokens = (self.tokens + credit).min(self.spec.capacity);
        }
    }

    fn may_retry(&self, _now: Nanos, cause: Outcome) -> bool {
        self.tokens >= self.spec.cost_of(cause)
    }

    fn take_retry(&mut self, _now: Nanos, cause: Outcome) {
        self.tokens -= self.spec.cost_of(cause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    fn quota(text: &str) -> AwsQuota {
        AwsQuota::new(&AwsQuotaSpec::parse(&Rule::read("budget", text).unwrap()).unwrap())
    }

    #[test]
    fn retries_drain_by_cost_timeouts_by_more_and_successes_refill() {
        let mut q = quota("tokens:20,cost:5,refund:1,timeout-cost:10");
        walk(
            &mut q,
            &[
                Step::Retry(Outcome::Timeout, true),  // 20 → 10
                Step::Retry(Outcome::Failure, true),  // 10 → 5
                Step::Retry(Outcome::Timeout, false), // 5 < 10
                Step::Retry(Outcome::Failure, true),  // 5 → 0
                Step::Retry(Outcome::Failure, false),
                // A retry after a timeout succeeds: its 10 come back.
                Step::End(Outcome::Success, Some(Outcome::Timeout)),
                Step::Retry(Outcome::Timeout, true), // 10 → 0
                Step::End(Outcome::Success, None),   // +1
                Step::Retry(Outcome::Failure, false),
            ],
        );
        assert_eq!(q.tokens(), 1);
        // Without timeout-cost a timeout costs as much as a failure.
        let mut plain = quota("tokens:10,cost:5,refund:1");
        walk(
            &mut plain,
            &[
                Step::Retry(Outcome::Timeout, true),
                Step::Retry(Outcome::Timeout, true),
                Step::Retry(Outcome::Failure, false),
            ],
        );
    }

    #[test]
    fn the_2026_quota_charges_a_throttle_5_and_any_other_retry_14() {
        // botocore RetryQuotaChecker under NEW_RETRIES_ENABLED: a throttling
        // error takes _THROTTLING_RETRY_COST 5, anything else (a timeout
        // too) _RETRY_COST_V2 14; a success returns what its retry took.
        let mut q = quota("tokens:500,cost:14,refund:1,throttle-cost:5");
        let mut steps = vec![Step::Retry(Outcome::Rejected, true)]; // 495
        steps.extend([Step::Retry(Outcome::Timeout, true); 35]); // 495 − 490 = 5
        steps.extend([
            Step::Retry(Outcome::Failure, false), // 5 < 14
            Step::Retry(Outcome::Rejected, true), // 0
            Step::Retry(Outcome::Rejected, false),
            Step::End(Outcome::Success, Some(Outcome::Rejected)), // +5
            Step::Retry(Outcome::Rejected, true),
        ]);
        walk(&mut q, &steps);
        assert_eq!(q.tokens(), 0);
        let spec = AwsQuotaSpec::parse(
            &Rule::read("budget", "tokens:500,cost:14,refund:1,throttle-cost:5").unwrap(),
        )
        .unwrap();
        assert_eq!(
            spec.to_string(),
            "tokens:500,cost:14,refund:1,throttle-cost:5"
        );
        // Without throttle-cost a rejection costs `cost`, as before.
        let mut plain = quota("tokens:10,cost:5,refund:1,timeout-cost:10");
        walk(
            &mut plain,
            &[
                Step::Retry(Outcome::Rejected, true),
                Step::Retry(Outcome::Rejected, true),
                Step::Retry(Outcome::Rejected, false),
            ],
        );
    }

    proptest! {
        /// Tokens stay within 0..=capacity whatever happens.
        #[test]
        fn tokens_stay_within_the_bucket(steps in proptest::collection::vec(0u8..6, 0..300)) {
            let mut q = quota("tokens:50,cost:5,refund:3,timeout-cost:10");
            for s in steps {
                let outcome = [Outcome::Success, Outcome::Failure, Outcome::Timeout][usize::from(s % 3)];
                if s < 3 {
                    if q.may_retry(Nanos::ZERO, outcome) { q.take_retry(Nanos::ZERO, outcome); }
                } else {
                    q.attempt_ended(Nanos::ZERO, Outcome::Success, (s == 4).then_some(outcome));
                }
                prop_assert!(q.tokens() <= 50);
            }
        }
    }
}
