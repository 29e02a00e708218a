//! Envoy's retry budget (cluster circuit breakers, `retry_budget`).
//!
//! A concurrency budget, not a rate: a retry may start while the retries
//! outstanding are fewer than max(`min_retry_concurrency` (3),
//! ⌊`budget_percent` (20%) × active requests⌋). Active requests are the
//! attempts in flight (sent, not yet answered or timed out).
//!
//! As Envoy's code has it (envoyproxy/envoy,
//! `source/common/upstream/resource_manager_impl.h`, `RetryBudgetImpl::max`:
//! `std::max<uint64_t>(budget_percent / 100.0 * current_active,
//! min_retry_concurrency)` with `current_active = requests_.count() +
//! pending_requests_.count()`, truncated to a whole number): the share of
//! the cluster's active and pending upstream requests. herdsim has no
//! connection pool, so no attempt is ever pending: the active requests are
//! the attempts in flight. A request waiting in its backoff has no upstream
//! request, so it is in neither count.
//!
//! The retries counted are the `retries()` resource, which
//! `RetryStateImpl::shouldRetry` (`source/common/router/retry_state_impl.cc`)
//! increments when it decides the retry, before it arms the backoff timer,
//! and `resetRetry` decrements at the next `shouldRetry` (when the retried
//! attempt ends) or when the request is destroyed: **a retry counts from its
//! decision, through its backoff, until its attempt ends** (`backoff:counted`,
//! the default). DESIGN.md's table says retries in backoff are not counted;
//! the code counts them. What envoyproxy/envoy#30205 reports is the mismatch
//! between the two counts: the retries include those in backoff while the
//! active requests they are a share of do not (PR #30738, which would have
//! counted scheduled retries in the active requests too, was closed
//! unmerged). `backoff:uncounted` counts a retry only while its attempt is in
//! flight: the budget its issue's discussion warns against, where every
//! failure of a burst may enter backoff at once and the retries overshoot
//! the share when they come out.
//!
//! A retry taken but never sent (its request's deadline passes in the
//! backoff, or another control refuses its attempt) stops counting then, as
//! Envoy's `resetRetry` does when a request is destroyed in its backoff.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "envoy",
    family: Family::Budget,
    syntax: "envoy:P,min:N[,backoff:counted|uncounted] (Envoy defaults: envoy:0.2,min:3; \
             backoff counted, as Envoy's code does)",
    source: "Envoy cluster circuit breakers, retry_budget (resource_manager_impl.h)",
    rule: "retry iff outstanding retries < max(min, ⌊P × attempts in flight⌋); a retry is \
           outstanding from its decision until its attempt ends (backoff:uncounted: only while \
           its attempt is in flight)",
    scope: "per Envoy (client-side proxy): --fleet N for N sources behind one",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "envoy:0.2,min:3",
        knobs: &[
            Knob {
                field: "envoy",
                what: "budget_percent (as a share)",
                values: &["0.01", "0.05", "0.1", "0.2", "0.5", "1"],
            },
            Knob {
                field: "min",
                what: "min_retry_concurrency",
                values: &["0", "1", "3", "10", "30", "100"],
            },
        ],
    }),
};

/// When a retry starts to count against Envoy's retry limits (the budget
/// and `max_retries`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackoffCounting {
    /// From its decision, through its backoff (Envoy's code).
    #[default]
    Counted,
    /// Only once its attempt is sent.
    Uncounted,
}

impl BackoffCounting {
    /// Reads the optional `backoff` field of `rule`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        match rule.fields.iter().find(|(k, _)| k == "backoff") {
            None => Ok(BackoffCounting::Counted),
            Some((_, v)) if v == "counted" => Ok(BackoffCounting::Counted),
            Some((_, v)) if v == "uncounted" => Ok(BackoffCounting::Uncounted),
            Some(_) => Err(ControlError {
                key: rule.key,
                text: rule.text.clone(),
                why: "backoff must be counted or uncounted".to_string(),
            }),
        }
    }

    /// The field as a rule writes it: nothing for the default.
    pub fn suffix(self) -> &'static str {
        match self {
            BackoffCounting::Counted => "",
            BackoffCounting::Uncounted => ",backoff:uncounted",
        }
    }
}

/// Envoy's count of a cluster's retries and active requests, shared by the
/// budget and [`super::envoy_max_retries`].
#[derive(Debug, Clone)]
pub struct EnvoyRetryCount {
    counting: BackoffCounting,
    /// Attempts sent and not yet ended.
    pub in_flight: u64,
    /// Retries counted against the limit.
    pub retries: u64,
}

impl EnvoyRetryCount {
    /// Nothing in flight.
    pub fn new(counting: BackoffCounting) -> Self {
        EnvoyRetryCount {
            counting,
            in_flight: 0,
            retries: 0,
        }
    }

    /// An attempt was sent.
    pub fn sent(&mut self, retry_of: Option<Outcome>) {
        self.in_flight += 1;
        if retry_of.is_some() && self.counting == BackoffCounting::Uncounted {
            self.retries += 1;
        }
    }

    /// An attempt ended.
    pub fn ended(&mut self, retry_of: Option<Outcome>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if retry_of.is_some() {
            self.retries = self.retries.saturating_sub(1);
        }
    }

    /// A retry was decided.
    pub fn taken(&mut self) {
        if self.counting == BackoffCounting::Counted {
            self.retries += 1;
        }
    }

    /// A retry decided is not sent after all.
    pub fn dropped(&mut self) {
        if self.counting == BackoffCounting::Counted {
            self.retries = self.retries.saturating_sub(1);
        }
    }
}

/// The budget's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyBudgetSpec {
    /// `budget_percent` as a fraction.
    pub share: f64,
    /// `min_retry_concurrency`.
    pub min: u64,
    /// Whether retries in backoff count.
    pub backoff: BackoffCounting,
}

impl EnvoyBudgetSpec {
    /// Reads `envoy:P,min:N[,backoff:counted|uncounted]`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["min"], &["backoff"], ABOUT.syntax)?;
        Ok(EnvoyBudgetSpec {
            share: rule.number("envoy", 0.0, 1_000.0)?,
            min: rule.count("min", 0, 1 << 40)?,
            backoff: BackoffCounting::parse(rule)?,
        })
    }
}

impl fmt::Display for EnvoyBudgetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "envoy:{},min:{}{}",
            self.share,
            self.min,
            self.backoff.suffix()
        )
    }
}

/// One scope's counts.
#[derive(Debug, Clone)]
pub struct EnvoyBudget {
    spec: EnvoyBudgetSpec,
    count: EnvoyRetryCount,
}

impl EnvoyBudget {
    /// Nothing in flight.
    pub fn new(spec: &EnvoyBudgetSpec) -> Self {
        EnvoyBudget {
            spec: *spec,
            count: EnvoyRetryCount::new(spec.backoff),
        }
    }

    /// `RetryBudgetImpl::max`: the share of the active requests, truncated,
    /// and never below the minimum.
    fn limit(&self) -> u64 {
        ((self.spec.share * self.count.in_flight as f64) as u64).max(self.spec.min)
    }
}

impl RetryControl for EnvoyBudget {
    fn attempt_sent(&mut self, _now: Nanos, retry_of: Option<Outcome>) {
        self.count.sent(retry_of);
    }

    fn attempt_ended(&mut self, _now: Nanos, _outcome: Outcome, retry_of: Option<Outcome>) {
        self.count.ended(retry_of);
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        self.count.retries < self.limit()
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

    #[test]
    fn pr_9069_a_fifth_with_a_minimum_of_3_allows_5_retries_at_25_active_requests() {
        // envoyproxy/envoy PR 9069: "a budget of 20% with a minimum retry
        // concurrency of 3 will allow 5 active retries while there are 25
        // active requests. If there are 2 active requests, there are still 3
        // active retries allowed because of the minimum retry concurrency."
        let f = Outcome::Failure;
        for (active, allowed) in [(25, 5), (2, 3), (0, 3), (24, 4), (30, 6)] {
            let mut b = budget("envoy:0.2,min:3");
            for _ in 0..active {
                walk(&mut b, &[Step::Sent(None)]);
            }
            for _ in 0..allowed {
                walk(&mut b, &[Step::Retry(f, true)]);
            }
            walk(&mut b, &[Step::Retry(f, false)]);
        }
    }

    #[test]
    fn retries_in_backoff_count_unless_told_otherwise() {
        let f = Outcome::Failure;
        // A floor of 1 and no share: one retry outstanding at a time.
        let mut counted = budget("envoy:0,min:1");
        assert_eq!(counted.spec, budget("envoy:0,min:1,backoff:counted").spec);
        // The first retry waits in its backoff: it counts, so a second is refused.
        walk(&mut counted, &[Step::Retry(f, true), Step::Retry(f, false)]);
        // Sent and ended: it no longer counts.
        walk(
            &mut counted,
            &[
                Step::Sent(Some(f)),
                Step::End(f, Some(f)),
                Step::Retry(f, true),
            ],
        );
        // Uncounted: every failure of a burst enters its backoff (#30205's
        // overshoot), and the limit binds only on retries in flight.
        let mut uncounted = budget("envoy:0,min:1,backoff:uncounted");
        walk(
            &mut uncounted,
            &[
                Step::Retry(f, true),
                Step::Retry(f, true),
                Step::Retry(f, true),
            ],
        );
        walk(
            &mut uncounted,
            &[Step::Sent(Some(f)), Step::Retry(f, false)],
        );
        walk(
            &mut uncounted,
            &[Step::End(f, Some(f)), Step::Retry(f, true)],
        );
    }

    #[test]
    fn a_retry_dropped_in_its_backoff_stops_counting() {
        let f = Outcome::Failure;
        let mut b = budget("envoy:0,min:1");
        walk(&mut b, &[Step::Retry(f, true), Step::Retry(f, false)]);
        b.retry_dropped(Nanos::ZERO);
        walk(&mut b, &[Step::Retry(f, true)]);
        // Dropping does nothing where backoff is not counted.
        let mut u = budget("envoy:0,min:1,backoff:uncounted");
        walk(&mut u, &[Step::Retry(f, true), Step::Sent(Some(f))]);
        u.retry_dropped(Nanos::ZERO);
        walk(&mut u, &[Step::Retry(f, false)]);
    }

    #[test]
    fn the_old_syntax_reads_as_before_and_the_new_field_shows_only_when_set() {
        let rule = |t| Rule::read("budget", t).unwrap();
        let old = EnvoyBudgetSpec::parse(&rule("envoy:0.2,min:3")).unwrap();
        assert_eq!(old.backoff, BackoffCounting::Counted);
        assert_eq!(old.to_string(), "envoy:0.2,min:3");
        let new = EnvoyBudgetSpec::parse(&rule("envoy:0.2,min:3,backoff:uncounted")).unwrap();
        assert_eq!(new.to_string(), "envoy:0.2,min:3,backoff:uncounted");
        let err = EnvoyBudgetSpec::parse(&rule("envoy:0.2,min:3,backoff:maybe"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("backoff must be counted or uncounted"),
            "{err}"
        );
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
                    0 => { b.attempt_sent(Nanos::ZERO, None); firsts_in_flight += 1; }
                    1 if firsts_in_flight > 0 => { b.attempt_ended(Nanos::ZERO, Outcome::Success, None); firsts_in_flight -= 1; }
                    2 if b.may_retry(Nanos::ZERO, Outcome::Failure) => {
                        let limit = b.limit();
                        b.take_retry(Nanos::ZERO, Outcome::Failure);
                        prop_assert!(b.count.retries <= limit);
                        b.attempt_sent(Nanos::ZERO, Some(Outcome::Failure));
                        retries_in_flight += 1;
                    }
                    3 if retries_in_flight > 0 => {
                        b.attempt_ended(Nanos::ZERO, Outcome::Failure, Some(Outcome::Failure));
                        retries_in_flight -= 1;
                    }
                    _ => {}
                }
                prop_assert_eq!(b.count.retries, retries_in_flight);
            }
        }
    }
}
