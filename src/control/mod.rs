//! Retry controls: what may stop a retry, or an attempt, besides the backoff
//! policy; and the server's own controls ([`deadline_propagation`],
//! [`queue_discipline`] with [`adaptive_lifo`] and [`codel`], [`shed_wait`]),
//! which the server model's parameters select.
//!
//! Each control is a file of its own, implemented as its source specifies
//! (the source and its formula are in the file's doc comment and in
//! `herdsim controls`), behind one trait, [`RetryControl`]. Controls come in
//! three families, one scenario key each, so a run may combine one of each:
//! **budgets** (`budget`: whether a retry may happen, by tokens or ratios),
//! **breakers** (`breaker`: retry circuit breakers, which stop retries, and
//! the classic circuit breaker, which stops calls) and **throttles**
//! (`throttle`: client-side rejection of attempts).
//!
//! A control's state belongs to a scope: sources `0..N` form scope 0, `N..2N`
//! scope 1, and so on (`--fleet N`); without `--fleet`, one scope of all
//! sources (a fleet-wide, "global" state). `--fleet 1` gives every source
//! (client) its own state, as Brooker's simulations and the Yandex study's
//! "local" variants keep it.
//!
//! The event loops tell every control of a scope what happens there
//! ([`RetryControl::request_started`], [`RetryControl::attempt_sent`],
//! [`RetryControl::attempt_ended`]); a retry is decided when the attempt
//! before it fails, and goes only if every control may let it
//! ([`RetryControl::may_retry`]), after which each takes its cost
//! ([`RetryControl::take_retry`]); an attempt is sent only if every control
//! admits it ([`RetryControl::admit`]).

pub mod adaptive_bucket;
pub mod adaptive_lifo;
pub mod aws_adaptive;
pub mod aws_quota;
pub mod classic_breaker;
pub mod codel;
pub mod cumulative_breaker;
pub mod deadline_propagation;
pub mod earned_tokens;
pub mod envoy_budget;
pub mod envoy_max_requests;
pub mod envoy_max_retries;
pub mod error;
pub mod finagle_budget;
pub mod grpc_throttle;
pub mod outcome_window;
pub mod persistence;
pub mod polly_breaker;
pub mod queue_discipline;
pub mod ratio_budget;
pub mod resilience4j_breaker;
pub mod retry_after;
pub mod rule;
pub mod shed_wait;
pub mod sliced_window;
pub mod sre_throttle;
#[cfg(test)]
mod tests_support;
pub mod tower_budget;
pub mod windowed_breaker;

use std::fmt;

use rand_pcg::Pcg64Mcg;

use crate::base::draws::Draws;
use crate::base::seeding::job_rng;
use crate::control::error::ControlError;
use crate::control::rule::Rule;

/// Time as the controls keep it, in ns (the slot model's µs are scaled).
pub use crate::base::time::Nanos;

/// What became of one attempt, as its client learns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded.
    Success,
    /// The server failed it (an error reply, or the slot was busy).
    Failure,
    /// The server refused it at a full queue (a throttling error).
    Rejected,
    /// The client stopped waiting for it.
    Timeout,
}

impl Outcome {
    /// True for every outcome but success.
    pub fn failed(self) -> bool {
        self != Outcome::Success
    }
}

/// A retry control's state for one scope.
///
/// `retry_of` names what the attempt retried (the outcome of the attempt
/// before it), `None` for a first try: the AWS quota refunds a retry's cost
/// by its cause.
pub trait RetryControl {
    /// A request starts; its first try is about to be sent.
    fn request_started(&mut self, _now: Nanos) {}
    /// An attempt was sent.
    fn attempt_sent(&mut self, _now: Nanos, _retry_of: Option<Outcome>) {}
    /// An attempt ended with `outcome` (once per attempt: its reply, its
    /// rejection or its timeout, whichever the client learns first).
    fn attempt_ended(&mut self, _now: Nanos, _outcome: Outcome, _retry_of: Option<Outcome>) {}
    /// The same end, with the time `sent` the attempt went: what a control
    /// judging an attempt by its duration needs (resilience4j's slow calls).
    /// The event loops call this one; by default it is
    /// [`RetryControl::attempt_ended`], so other controls need not know it.
    fn attempt_timed(
        &mut self,
        now: Nanos,
        sent: Nanos,
        outcome: Outcome,
        retry_of: Option<Outcome>,
    ) {
        let _ = sent;
        self.attempt_ended(now, outcome, retry_of);
    }
    /// May a retry follow an attempt that ended with `cause`? Changes
    /// nothing: [`RetryControl::take_retry`] takes its cost once every
    /// control agrees.
    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        true
    }
    /// The retry goes: takes its cost.
    fn take_retry(&mut self, _now: Nanos, _cause: Outcome) {}
    /// A retry taken ([`RetryControl::take_retry`]) is not sent after all:
    /// its request ended in the backoff (a deadline) or a control refused
    /// its attempt. Envoy's retry limits stop counting it then.
    fn retry_dropped(&mut self, _now: Nanos) {}
    /// May this attempt be sent? A control that decides at random draws
    /// from `draws` (the controls' own stream) when it needs a draw. A
    /// refused attempt is not sent and ends its request.
    fn admit(&mut self, _now: Nanos, _retry: bool, _draws: &mut dyn Draws) -> bool {
        true
    }
    /// An admitted attempt is about to go: how long it must wait first (a
    /// rate limiter's token), 0 to go now. Asked once per attempt, after
    /// every control admitted it.
    fn send_delay(&mut self, _now: Nanos) -> Nanos {
        Nanos::ZERO
    }
    /// True if an attempt this control refuses fails as a retryable error
    /// (resilience4j's `CallNotPermittedException`, Polly's
    /// `BrokenCircuitException`: their retry, outside the breaker, retries
    /// it by default) rather than ending its request.
    fn retries_refusal(&self) -> bool {
        false
    }
}

/// Which key a control is given by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `budget`: whether a retry may happen, by tokens or ratios.
    Budget,
    /// `breaker`: circuit breakers on retries or on calls.
    Breaker,
    /// `throttle`: client-side rejection of attempts.
    Throttle,
}

impl Family {
    /// The scenario key.
    pub fn key(self) -> &'static str {
        match self {
            Family::Budget => "budget",
            Family::Breaker => "breaker",
            Family::Throttle => "throttle",
        }
    }
}

/// A control as `herdsim controls` lists it.
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// The rule's first word.
    pub name: &'static str,
    /// Its key.
    pub family: Family,
    /// Its syntax, with the source's values as the example.
    pub syntax: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// What it does, as a formula.
    pub rule: &'static str,
    /// Whose state it is in its source.
    pub scope: &'static str,
    /// True if it may hold attempts back (a rate limiter), which only the
    /// server model's loop can do.
    pub delays_attempts: bool,
    /// What `herdsim tune` searches of it (`None`: nothing to tune).
    pub tuning: Option<Tuning>,
}

/// How `herdsim tune` searches a control: the rule it starts from when the
/// service has none of its own, and the fields it varies.
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// The rule the search varies (its source's defaults).
    pub start: &'static str,
    /// The fields varied, each with its coarse values.
    pub knobs: &'static [Knob],
}

/// One field of a rule that `herdsim tune` varies.
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    /// The field's name in the rule (the rule's own name for its first
    /// value: `grpc` in `grpc:10,ratio:0.1`).
    pub field: &'static str,
    /// What it is, in the source's words (`maxTokens`).
    pub what: &'static str,
    /// Its coarse values, ascending, as the rule takes them.
    pub values: &'static [&'static str],
}

/// A server-side control as `herdsim controls` lists it: a server-model key
/// of its own.
#[derive(Debug, Clone, Copy)]
pub struct ServerAbout {
    /// Its scenario key.
    pub key: &'static str,
    /// Its syntax, with the source's values as the example.
    pub syntax: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// What it does.
    pub rule: &'static str,
}

/// The server's controls, in listing order.
pub const SERVER_ABOUT: &[ServerAbout] = &[
    deadline_propagation::ABOUT,
    queue_discipline::LIFO_ABOUT,
    queue_discipline::RANDOM_ABOUT,
    adaptive_lifo::ABOUT,
    codel::ABOUT,
    shed_wait::ABOUT,
];

/// Declares every control once: its spec type, its state type and its
/// [`About`]; gives [`ControlSpec`], [`ControlState`] and the dispatch.
macro_rules! controls {
    ($($variant:ident => $module:ident :: { $spec:ident, $state:ident }),+ $(,)?) => {
        /// A control and its parameters.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum ControlSpec {
            $(
                #[doc = concat!("See [`", stringify!($module), "`].")]
                $variant($module::$spec),
            )+
        }

        /// One scope's state of a control.
        #[derive(Debug, Clone)]
        pub enum ControlState {
            $(
                #[doc = concat!("See [`", stringify!($module), "`].")]
                $variant($module::$state),
            )+
        }

        /// Every control, in listing order.
        pub const ABOUT: &[About] = &[$($module::ABOUT),+];

        impl ControlSpec {
            /// Its listing entry.
            pub fn about(&self) -> &'static About {
                match self {
                    $(ControlSpec::$variant(_) => &$module::ABOUT,)+
                }
            }

            /// A scope's state at the start of a run.
            pub fn state(&self) -> ControlState {
                match self {
                    $(ControlSpec::$variant(spec) => ControlState::$variant($module::$state::new(spec)),)+
                }
            }

            /// Reads a rule whose name is `rule.name`, of any family.
            fn parse_named(rule: &Rule) -> Option<Result<ControlSpec, ControlError>> {
                $(
                    if rule.name == $module::ABOUT.name {
                        return Some($module::$spec::parse(rule).map(ControlSpec::$variant));
                    }
                )+
                None
            }
        }

        impl fmt::Display for ControlSpec {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(ControlSpec::$variant(spec) => fmt::Display::fmt(spec, f),)+
                }
            }
        }

        impl RetryControl for ControlState {
            fn request_started(&mut self, now: Nanos) {
                match self {
                    $(ControlState::$variant(s) => s.request_started(now),)+
                }
            }
            fn attempt_sent(&mut self, now: Nanos, retry_of: Option<Outcome>) {
                match self {
                    $(ControlState::$variant(s) => s.attempt_sent(now, retry_of),)+
                }
            }
            fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, retry_of: Option<Outcome>) {
                match self {
                    $(ControlState::$variant(s) => s.attempt_ended(now, outcome, retry_of),)+
                }
            }
            fn attempt_timed(&mut self, now: Nanos, sent: Nanos, outcome: Outcome, retry_of: Option<Outcome>) {
                match self {
                    $(ControlState::$variant(s) => s.attempt_timed(now, sent, outcome, retry_of),)+
                }
            }
            fn may_retry(&self, now: Nanos, cause: Outcome) -> bool {
                match self {
                    $(ControlState::$variant(s) => s.may_retry(now, cause),)+
                }
            }
            fn take_retry(&mut self, now: Nanos, cause: Outcome) {
                match self {
                    $(ControlState::$variant(s) => s.take_retry(now, cause),)+
                }
            }
            fn retry_dropped(&mut self, now: Nanos) {
                match self {
                    $(ControlState::$variant(s) => s.retry_dropped(now),)+
                }
            }
            fn admit(&mut self, now: Nanos, retry: bool, draws: &mut dyn Draws) -> bool {
                match self {
                    $(ControlState::$variant(s) => s.admit(now, retry, draws),)+
                }
            }
            fn send_delay(&mut self, now: Nanos) -> Nanos {
                match self {
                    $(ControlState::$variant(s) => s.send_delay(now),)+
                }
            }
            fn retries_refusal(&self) -> bool {
                match self {
                    $(ControlState::$variant(s) => s.retries_refusal(),)+
                }
            }
        }
    };
}

controls! {
    AwsQuota => aws_quota::{AwsQuotaSpec, AwsQuota},
    Ratio => ratio_budget::{RatioBudgetSpec, RatioBudget},
    Persistence => persistence::{PersistenceSpec, Persistence},
    Earned => earned_tokens::{EarnedTokensSpec, EarnedTokens},
    Adaptive => adaptive_bucket::{AdaptiveBucketSpec, AdaptiveBucket},
    Grpc => grpc_throttle::{GrpcThrottleSpec, GrpcThrottle},
    Finagle => finagle_budget::{FinagleBudgetSpec, FinagleBudget},
    Tower => tower_budget::{TowerBudgetSpec, TowerBudget},
    Envoy => envoy_budget::{EnvoyBudgetSpec, EnvoyBudget},
    EnvoyMaxRetries => envoy_max_retries::{EnvoyMaxRetriesSpec, EnvoyMaxRetries},
    Cumulative => cumulative_breaker::{CumulativeBreakerSpec, CumulativeBreaker},
    Windowed => windowed_breaker::{WindowedBreakerSpec, WindowedBreaker},
    Classic => classic_breaker::{ClassicBreakerSpec, ClassicBreaker},
    Sre => sre_throttle::{SreThrottleSpec, SreThrottle},
    AwsAdaptive => aws_adaptive::{AwsAdaptiveSpec, AwsAdaptive},
    EnvoyMaxRequests => envoy_max_requests::{EnvoyMaxRequestsSpec, EnvoyMaxRequests},
    Resilience4j => resilience4j_breaker::{Resilience4jBreakerSpec, Resilience4jBreaker},
    Polly => polly_breaker::{PollyBreakerSpec, PollyBreaker},
}

impl ControlSpec {
    /// Reads a rule of `family` (`none` is no control).
    pub fn parse(family: Family, text: &str) -> Result<Option<ControlSpec>, ControlError> {
        if text.trim() == "none" {
            return Ok(None);
        }
        let rule = Rule::read(family.key(), text)?;
        let names = names_of(family);
        if !names.contains(&rule.name.as_str()) {
            return Err(rule.unknown(&names));
        }
        ControlSpec::parse_named(&rule)
            .expect("every listed name has a parser")
            .map(Some)
    }

    /// The key it is given by.
    pub fn family(&self) -> Family {
        self.about().family
    }
}

/// The rule names of `family`.
pub fn names_of(family: Family) -> Vec<&'static str> {
    ABOUT
        .iter()
        .filter(|a| a.family == family)
        .map(|a| a.name)
        .collect()
}

/// The controls of a run, each with its state per scope, and the generator
/// of their draws (its own, so a control's draws shift no other stream).
#[derive(Debug, Clone)]
pub struct Controls {
    scope_size: u32,
    /// Controls per scope.
    per_scope: usize,
    /// Scope `s`'s states are `states[s·per_scope..(s+1)·per_scope]`.
    states: Vec<ControlState>,
    draws: Pcg64Mcg,
    /// True if the last refused attempt is to be retried
    /// ([`RetryControl::retries_refusal`] of every control that refused it).
    refusal_retried: bool,
}

impl Controls {
    /// The controls `specs` for `sources` sources in scopes of `scope_size`
    /// (`None`: one scope of all), drawing from a generator seeded by `seed`;
    /// `None` if there are none (the loops then skip every call).
    pub fn new(
        specs: &[ControlSpec],
        sources: u32,
        scope_size: Option<u32>,
        seed: u64,
    ) -> Option<Controls> {
        if specs.is_empty() {
            return None;
        }
        let scope_size = scope_size.unwrap_or(sources).max(1);
        let scopes = sources.div_ceil(scope_size).max(1) as usize;
        let states = (0..scopes)
            .flat_map(|_| specs.iter().map(ControlSpec::state))
            .collect();
        Some(Controls {
            scope_size,
            per_scope: specs.len(),
            states,
            draws: job_rng(seed),
            refusal_retried: false,
        })
    }

    /// Draws from a generator seeded by `seed` from here on (a splitting
    /// copy's fresh draws); the controls' states stay.
    pub fn reseed(&mut self, seed: u64) {
        self.draws = job_rng(seed);
    }

    #[inline]
    fn scope(&mut self, source: u32) -> &mut [ControlState] {
        let first = (source / self.scope_size) as usize * self.per_scope;
        &mut self.states[first..first + self.per_scope]
    }

    /// `source` starts a request.
    pub fn request_started(&mut self, source: u32, now: Nanos) {
        self.scope(source)
            .iter_mut()
            .for_each(|c| c.request_started(now));
    }

    /// `source` sent an attempt.
    pub fn attempt_sent(&mut self, source: u32, now: Nanos, retry_of: Option<Outcome>) {
        self.scope(source)
            .iter_mut()
            .for_each(|c| c.attempt_sent(now, retry_of));
    }

    /// An attempt of `source`, sent at `sent`, ended at `now`.
    pub fn attempt_ended(
        &mut self,
        source: u32,
        now: Nanos,
        sent: Nanos,
        outcome: Outcome,
        retry_of: Option<Outcome>,
    ) {
        self.scope(source)
            .iter_mut()
            .for_each(|c| c.attempt_timed(now, sent, outcome, retry_of));
    }

    /// May `source` retry after an attempt that ended with `cause`? If every
    /// control agrees, each takes the retry's cost.
    pub fn allow_retry(&mut self, source: u32, now: Nanos, cause: Outcome) -> bool {
        let scope = self.scope(source);
        let allowed = scope.iter().all(|c| c.may_retry(now, cause));
        if allowed {
            scope.iter_mut().for_each(|c| c.take_retry(now, cause));
        }
        allowed
    }

    /// A retry of `source` that every control allowed is not sent after all.
    pub fn retry_dropped(&mut self, source: u32, now: Nanos) {
        self.scope(source)
            .iter_mut()
            .for_each(|c| c.retry_dropped(now));
    }

    /// True if the attempt [`Controls::admit`] last refused fails as a
    /// retryable error (every control that refused it says so,
    /// [`RetryControl::retries_refusal`]); false if it ends its request.
    pub fn refusal_retried(&self) -> bool {
        self.refusal_retried
    }

    /// May `source` send this attempt, and after how long? `None` if a
    /// control refuses it (every control sees it: a throttle counts the
    /// attempts it refuses too); else the longest wait any control asks
    /// (a rate limiter's), 0 to send now.
    pub fn admit(&mut self, source: u32, now: Nanos, retry: bool) -> Option<Nanos> {
        // Not short-circuited: every control sees the attempt.
        let first = (source / self.scope_size) as usize * self.per_scope;
        let scope = &mut self.states[first..first + self.per_scope];
        let (mut admitted, mut retried) = (true, true);
        for control in scope.iter_mut() {
            let admits = control.admit(now, retry, &mut self.draws);
            admitted &= admits;
            retried &= admits || control.retries_refusal();
        }
        self.refusal_retried = !admitted && retried;
        admitted.then(|| {
            scope
                .iter_mut()
                .map(|c| c.send_delay(now))
                .max()
                .unwrap_or(Nanos::ZERO)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_reads_back_its_own_display_under_its_own_key() {
        let examples = [
            (Family::Budget, "tokens:500,cost:5,refund:1,timeout-cost:10"),
            (Family::Budget, "ratio:0.2,min:10"),
            (Family::Budget, "persistence:0.75"),
            (Family::Budget, "earned:3000,cost:100,deposit:10"),
            (Family::Budget, "adaptive:5,deposit:0.1"),
            (Family::Budget, "grpc:10,ratio:0.1"),
            (Family::Budget, "finagle:0.2,ttl:10s,min:10"),
            (Family::Budget, "tower:0.2,ttl:10s,min:10"),
            (Family::Budget, "envoy:0.2,min:3"),
            (Family::Budget, "envoy-max-retries:3"),
            (Family::Breaker, "cumulative:0.1"),
            (Family::Breaker, "windowed:0.1,window:200ms"),
            (
                Family::Breaker,
                "classic:0.1,window:200ms,calls:100,open:100ms,jitter:0",
            ),
            (Family::Throttle, "sre:2,window:2m"),
            (Family::Throttle, "aws-adaptive:0.4,beta:0.7"),
            (Family::Throttle, "envoy-max-requests:1024"),
            (
                Family::Breaker,
                "resilience4j:50,window:60s,min:100,slow:100,slow-call:1m,open:1m,\
                 permits:10,auto:off,half-open-max:0us,then:open,refused:retry",
            ),
            (
                Family::Breaker,
                "polly:0.1,throughput:100,sampling:30s,break:5s,refused:retry",
            ),
        ];
        assert_eq!(examples.len(), ABOUT.len(), "one example per control");
        for (family, text) in examples {
            let spec = ControlSpec::parse(family, text).unwrap().unwrap();
            assert_eq!(spec.family(), family, "{text}");
            assert_eq!(spec.to_string(), text);
            assert_eq!(
                ControlSpec::parse(family, &spec.to_string()),
                Ok(Some(spec))
            );
            assert!(spec.about().syntax.starts_with(spec.about().name));
            for other in [Family::Budget, Family::Breaker, Family::Throttle] {
                if other != family {
                    let err = ControlSpec::parse(other, text).unwrap_err().to_string();
                    assert!(err.contains(other.key()), "{err}");
                }
            }
        }
    }

    #[test]
    fn scopes_keep_their_own_state() {
        let spec = ControlSpec::parse(Family::Budget, "earned:100,cost:100,deposit:10")
            .unwrap()
            .unwrap();
        let mut controls = Controls::new(&[spec], 4, Some(2), 1).unwrap();
        assert!(controls.allow_retry(0, Nanos::ZERO, Outcome::Failure));
        assert!(
            !controls.allow_retry(1, Nanos::ZERO, Outcome::Failure),
            "scope 0 spent"
        );
        assert!(
            controls.allow_retry(2, Nanos::ZERO, Outcome::Failure),
            "scope 1 untouched"
        );
        let mut shared = Controls::new(&[spec], 4, None, 1).unwrap();
        assert!(shared.allow_retry(0, Nanos::ZERO, Outcome::Failure));
        assert!(
            !shared.allow_retry(3, Nanos::ZERO, Outcome::Failure),
            "one scope of all"
        );
    }

    #[test]
    fn a_breakers_jitter_draws_from_the_controls_stream_alone() {
        // A classic breaker with jitter and no other control: each opening
        // draws its own stretch (before, only a throttle beside it made the
        // controls draw, and every period came out the longest).
        let spec = ControlSpec::parse(
            Family::Breaker,
            "classic:0.5,window:200ms,calls:1,open:100ms,jitter:0.9",
        )
        .unwrap()
        .unwrap();
        let mut controls = Controls::new(&[spec], 1, None, 7).unwrap();
        let ms = Nanos::from_ms(1);
        let mut periods = Vec::new();
        for i in 0..8u64 {
            let now = i * 1_000 * ms;
            controls.attempt_ended(0, now, now, Outcome::Failure, None);
            assert_eq!(controls.admit(0, now, false), None, "opens");
            let ControlState::Classic(breaker) = &controls.states[0] else {
                unreachable!("one classic breaker")
            };
            let classic_breaker::BreakerState::Open { until } = breaker.state() else {
                panic!("open after a failure: {breaker:?}")
            };
            periods.push(until - now);
            // Half-open a second later, then its probe's failure reopens it.
            assert_eq!(controls.admit(0, now + 500 * ms, false), Some(Nanos::ZERO));
        }
        assert!(
            periods.iter().all(|p| (10 * ms..=190 * ms).contains(p)),
            "{periods:?}"
        );
        periods.sort_unstable();
        periods.dedup();
        assert!(periods.len() > 4, "{periods:?}");
    }

    #[test]
    fn a_retry_refused_by_one_control_costs_no_other() {
        let budget = ControlSpec::parse(Family::Budget, "earned:200,cost:100,deposit:10")
            .unwrap()
            .unwrap();
        let breaker = ControlSpec::parse(Family::Breaker, "cumulative:0.1")
            .unwrap()
            .unwrap();
        let mut controls = Controls::new(&[budget, breaker], 1, None, 1).unwrap();
        // One call, one failure: the breaker's ratio is 1 > 0.1, so it
        // refuses, and the budget keeps both of its retries.
        controls.request_started(0, Nanos::ZERO);
        controls.attempt_ended(
            0,
            Nanos::from_ticks(1),
            Nanos::from_ticks(1),
            Outcome::Failure,
            None,
        );
        assert!(!controls.allow_retry(0, Nanos::from_ticks(1), Outcome::Failure));
        for _ in 0..20 {
            controls.request_started(0, Nanos::from_ticks(2));
        }
        assert!(
            controls.allow_retry(0, Nanos::from_ticks(2), Outcome::Failure),
            "1/21 ≤ 0.1"
        );
        assert!(controls.allow_retry(0, Nanos::from_ticks(2), Outcome::Failure));
        assert!(
            !controls.allow_retry(0, Nanos::from_ticks(2), Outcome::Failure),
            "budget spent"
        );
    }
}
