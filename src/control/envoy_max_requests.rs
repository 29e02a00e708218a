//! Envoy's request circuit breaker (cluster `circuit_breakers.thresholds[]`
//! `max_requests`, default 1024): at most N upstream requests at once; one
//! more fails at once, locally, and is not retried.
//!
//! In Envoy's code (envoyproxy/envoy, `source/common/conn_pool/conn_pool_base.cc`,
//! `ConnPoolImplBase::attachStreamToClient`): when the cluster's
//! `requests()` resource cannot create another (`current_ < max()` fails),
//! the pool fails the stream with `PoolFailureReason::Overflow` and counts
//! `upstream_rq_pending_overflow`; the router sees a reset of reason
//! `Overflow`, which `RetryStateImpl::wouldRetryFromReset`
//! (`source/common/router/retry_state_impl.cc`) never retries ("we never
//! retry if the reset reason is overflow"), and answers the client a local
//! 503 flagged `UO` (upstream overflow). herdsim's throttle does the same: an
//! attempt, first or retry, that finds N attempts in flight is not sent and
//! its request ends (counted as refused).
//!
//! Envoy checks when the stream is attached to a connection; herdsim has no
//! connection pool, so it checks when the attempt is sent. `max_pending_requests`
//! (the requests waiting in that pool for a connection) has nothing to
//! count in herdsim and is not modelled.

use std::fmt;

use crate::base::draws::Draws;
use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "envoy-max-requests",
    family: Family::Throttle,
    syntax: "envoy-max-requests:N (Envoy's default: envoy-max-requests:1024)",
    source: "Envoy cluster circuit breakers, max_requests (conn_pool_base.cc)",
    rule: "send iff attempts in flight < N; else the request ends at once, not retried \
           (Envoy's local 503, upstream_rq_pending_overflow)",
    scope: "per Envoy (client-side proxy): --fleet N for N sources behind one",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "envoy-max-requests:1024",
        knobs: &[Knob {
            field: "envoy-max-requests",
            what: "max_requests",
            values: &["4", "8", "16", "32", "64", "128", "1024"],
        }],
    }),
};

/// The breaker's parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyMaxRequestsSpec {
    /// `max_requests`.
    pub max: u64,
}

impl EnvoyMaxRequestsSpec {
    /// Reads `envoy-max-requests:N`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&[], &[], ABOUT.syntax)?;
        Ok(EnvoyMaxRequestsSpec {
            // A UInt32Value in Envoy's proto.
            max: rule.count(ABOUT.name, 0, u64::from(u32::MAX))?,
        })
    }
}

impl fmt::Display for EnvoyMaxRequestsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", ABOUT.name, self.max)
    }
}

/// One scope's count of attempts in flight.
#[derive(Debug, Clone)]
pub struct EnvoyMaxRequests {
    max: u64,
    in_flight: u64,
}

impl EnvoyMaxRequests {
    /// Nothing in flight.
    pub fn new(spec: &EnvoyMaxRequestsSpec) -> Self {
        EnvoyMaxRequests {
            max: spec.max,
            in_flight: 0,
        }
    }
}

impl RetryControl for EnvoyMaxRequests {
    fn attempt_sent(&mut self, _now: Nanos, _retry_of: Option<Outcome>) {
        self.in_flight += 1;
    }

    fn attempt_ended(&mut self, _now: Nanos, _outcome: Outcome, _retry_of: Option<Outcome>) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn admit(&mut self, _now: Nanos, _retry: bool, _draws: &mut dyn Draws) -> bool {
        self.in_flight < self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};

    fn breaker(text: &str) -> EnvoyMaxRequests {
        EnvoyMaxRequests::new(
            &EnvoyMaxRequestsSpec::parse(&Rule::read("throttle", text).unwrap()).unwrap(),
        )
    }

    #[test]
    fn the_attempt_past_the_limit_is_refused_first_try_or_retry() {
        let f = Outcome::Failure;
        let mut b = breaker("envoy-max-requests:2");
        walk(
            &mut b,
            &[
                Step::Admit(false, 0.0, true),
                Step::Sent(None),
                Step::Admit(true, 0.0, true),
                Step::Sent(Some(f)),
                // Two in flight: neither a first try nor a retry goes.
                Step::Admit(false, 0.0, false),
                Step::Admit(true, 0.0, false),
                // One ends (a timeout too frees its place: Envoy resets the stream).
                Step::End(Outcome::Timeout, None),
                Step::Admit(false, 0.0, true),
            ],
        );
    }

    #[test]
    fn the_rule_reads_back() {
        let spec = EnvoyMaxRequestsSpec::parse(
            &Rule::read("throttle", "envoy-max-requests:1024").unwrap(),
        )
        .unwrap();
        assert_eq!(spec.to_string(), "envoy-max-requests:1024");
        assert!(
            EnvoyMaxRequestsSpec::parse(&Rule::read("throttle", "envoy-max-requests:-1").unwrap())
                .is_err()
        );
    }
}
