//! Envoy's retry circuit breaker (cluster `circuit_breakers.thresholds[]`
//! `max_retries`, default 3): a cap on *concurrent* retries, not on the
//! retries of one request (that is the route's `num_retries`).
//!
//! In Envoy's code (envoyproxy/envoy,
//! `source/common/upstream/resource_manager_impl.h`) the cluster's
//! `retries()` resource is `RetryBudgetImpl`, which without a `retry_budget`
//! answers `canCreate()` as its nested `max_retry_resource_` does:
//! `current_ < max()`, `max()` being `max_retries`; with a budget it answers
//! by the budget's limit instead, over the same count. So a budget replaces
//! this cap, as the `retry_budget` field's doc says ("the retry budget will
//! override any configured retry circuit breaker"): in herdsim both are
//! budgets, and a run has one. Every Envoy cluster has this cap, 3, unless
//! its config says otherwise.
//!
//! The count is the budget's ([`super::envoy_budget::EnvoyRetryCount`]):
//! a retry counts from its decision in `RetryStateImpl::shouldRetry` (before
//! its backoff) until its attempt ends; `backoff:uncounted` counts it only
//! while its attempt is in flight. A retry refused here is not made and its
//! request ends with the failure it had (`upstream_rq_retry_overflow`).

use std::fmt;

use crate::control::envoy_budget::{BackoffCounting, EnvoyRetryCount};
use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "envoy-max-retries",
    family: Family::Budget,
    syntax: "envoy-max-retries:N[,backoff:counted|uncounted] (Envoy's default: \
             envoy-max-retries:3, backoff counted)",
    source: "Envoy cluster circuit breakers, max_retries (resource_manager_impl.h)",
    rule: "retry iff outstanding retries < N; a retry is outstanding from its decision until \
           its attempt ends (backoff:uncounted: only while its attempt is in flight)",
    scope: "per Envoy (client-side proxy): --fleet N for N sources behind one",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "envoy-max-retries:3",
        knobs: &[Knob {
            field: "envoy-max-retries",
            what: "max_retries",
            values: &["1", "2", "3", "5", "10", "30", "100", "1024"],
        }],
    }),
};

/// The cap's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyMaxRetriesSpec {
    /// `max_retries`.
    pub max: u64,
    /// Whether retries in backoff count.
    pub backoff: BackoffCounting,
}

impl EnvoyMaxRetriesSpec {
    /// Reads `envoy-max-retries:N[,backoff:counted|uncounted]`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&[], &["backoff"], ABOUT.syntax)?;
        Ok(EnvoyMaxRetriesSpec {
            // A UInt32Value in Envoy's proto.
            max: rule.count(ABOUT.name, 0, u64::from(u32::MAX))?,
            backoff: BackoffCounting::parse(rule)?,
        })
    }
}

impl fmt::Display for EnvoyMaxRetriesSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}{}", ABOUT.name, self.max, self.backoff.suffix())
    }
}

/// One scope's count.
#[derive(Debug, Clone)]
pub struct EnvoyMaxRetries {
    max: u64,
    count: EnvoyRetryCount,
}

impl EnvoyMaxRetries {
    /// No retries outstanding.
    pub fn new(spec: &EnvoyMaxRetriesSpec) -> Self {
        EnvoyMaxRetries {
            max: spec.max,
            count: EnvoyRetryCount::new(spec.backoff),
        }
    }
}

impl RetryControl for EnvoyMaxRetries {
    fn attempt_sent(&mut self, _now: Nanos, retry_of: Option<Outcome>) {
        self.count.sent(retry_of);
    }

    fn attempt_ended(&mut self, _now: Nanos, _outcome: Outcome, retry_of: Option<Outcome>) {
        self.count.ended(retry_of);
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        self.count.retries < self.max
    }

    fn take_retry(&mut self, _now: Nanos, _cause: Outcome) {
        self.count.taken();
    }

    fn retry_dropped(&mut self, _now: Nanos) {
        self.count.dropped();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};

    fn cap(text: &str) -> EnvoyMaxRetries {
        EnvoyMaxRetries::new(
            &EnvoyMaxRetriesSpec::parse(&Rule::read("budget", text).unwrap()).unwrap(),
        )
    }

    #[test]
    fn envoys_default_allows_three_concurrent_retries_whatever_the_load() {
        let f = Outcome::Failure;
        let mut c = cap("envoy-max-retries:3");
        // Unlike the budget, the attempts in flight do not raise it.
        for _ in 0..1_000 {
            walk(&mut c, &[Step::Sent(None)]);
        }
        walk(
            &mut c,
            &[
                Step::Retry(f, true),
                Step::Retry(f, true),
                Step::Retry(f, true),
                Step::Retry(f, false),
            ],
        );
        // One retry's attempt is sent and ends: one more may go.
        walk(
            &mut c,
            &[
                Step::Sent(Some(f)),
                Step::Retry(f, false),
                Step::End(f, Some(f)),
                Step::Retry(f, true),
            ],
        );
        // Zero allows none.
        walk(&mut cap("envoy-max-retries:0"), &[Step::Retry(f, false)]);
    }

    #[test]
    fn uncounted_backoff_lets_a_burst_into_its_backoff() {
        let f = Outcome::Failure;
        let mut c = cap("envoy-max-retries:1,backoff:uncounted");
        walk(&mut c, &[Step::Retry(f, true), Step::Retry(f, true)]);
        walk(&mut c, &[Step::Sent(Some(f)), Step::Retry(f, false)]);
        let mut counted = cap("envoy-max-retries:1");
        walk(&mut counted, &[Step::Retry(f, true), Step::Retry(f, false)]);
        counted.retry_dropped(Nanos::ZERO);
        walk(&mut counted, &[Step::Retry(f, true)]);
    }

    #[test]
    fn the_rule_reads_back_and_refuses_what_envoy_would() {
        let rule = |t| EnvoyMaxRetriesSpec::parse(&Rule::read("budget", t).unwrap());
        assert_eq!(
            rule("envoy-max-retries:3").unwrap().to_string(),
            "envoy-max-retries:3"
        );
        assert_eq!(
            rule("envoy-max-retries:7,backoff:uncounted")
                .unwrap()
                .to_string(),
            "envoy-max-retries:7,backoff:uncounted"
        );
        assert!(rule("envoy-max-retries:4294967296").is_err(), "a uint32");
        assert!(rule("envoy-max-retries:3,min:1").is_err());
    }
}
