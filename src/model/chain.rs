//! Layered services: a chain of services in front of the server model's
//! server, each retrying its calls to the one below.
//!
//! A user's request goes to service 1. A worker of service i (i < depth)
//! does its own work, then calls service i + 1 and waits for that call
//! (holding the worker) through the call's attempts and back-offs; its
//! attempt then replies to its caller: success if the call succeeded, a
//! failure *from below* if the call gave up. The bottom service is the
//! server itself (workers, queue, service time, failures, triggers). Every
//! caller times out and retries on its own: the users by the client
//! parameters, each upper service by the users' policy and controls with
//! its own timeout and attempt limit, or by a policy and controls of its
//! own ([`LayerSpec`]). A timeout at an upper caller cancels nothing below
//! (the server model's rule), which is how amplification and wasted work
//! compound down the chain.

use crate::base::names::named;
use crate::base::time::Micros;
use crate::control::{ControlSpec, Family};
use crate::model::server::{Dist, Nanos};
use crate::policy::{PolicyKind, PolicySpec};

/// Most services in a chain.
pub const MAX_DEPTH: u32 = 10;

/// Which callers retry a failure that came from below the service they
/// called (a service's call gave up, so its attempt failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryScope {
    /// Every caller retries every failure (each layer on its own).
    #[default]
    Every,
    /// Only the caller directly above the failing service retries; a
    /// failure that came from below passes up without retries (the Google
    /// SRE book's advice).
    Adjacent,
}

named!(RetryScope, "retry scope", {
    RetryScope::Every => "every",
    RetryScope::Adjacent => "adjacent",
});

/// One upper service's own settings where it differs from the chain's
/// (`None`: the chain's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerSpec {
    /// Its workers (`Some(None)`: unbounded).
    pub workers: Option<Option<u32>>,
    /// Its own work on an attempt.
    pub service: Option<Dist>,
    /// The timeout of its calls below, in place of the one above times the
    /// ratio (the services below it scale from this one).
    pub timeout: Option<Nanos>,
    /// Most attempts of its calls below.
    pub max_attempts: Option<u32>,
    /// The backoff policy of its calls below, in place of the users'.
    pub policy: Option<PolicyKind>,
    /// Its policy's base, µs, in place of the users'.
    pub base_us: Option<Micros>,
    /// Its policy's cap, µs, in place of the users'.
    pub cap_us: Option<Micros>,
    /// Its retry budget, breaker and throttle, in place of the users' (each
    /// `Some(None)`: none).
    pub controls: [Option<Option<ControlSpec>>; 3],
}

impl LayerSpec {
    /// No setting of its own: the chain's for all.
    pub const NONE: LayerSpec = LayerSpec {
        workers: None,
        service: None,
        timeout: None,
        max_attempts: None,
        policy: None,
        base_us: None,
        cap_us: None,
        controls: [None; 3],
    };
}

/// No setting of its own ([`LayerSpec::NONE`]).
impl Default for LayerSpec {
    fn default() -> Self {
        LayerSpec::NONE
    }
}

/// The controls' families in [`LayerSpec::controls`] order.
pub const CONTROL_FAMILIES: [Family; 3] = [Family::Budget, Family::Breaker, Family::Throttle];

/// The services above the server: alike, or each with its own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Services in the chain, the server at its bottom included: 1 is the
    /// server alone.
    pub depth: u32,
    /// Workers of each upper service; `None` is unbounded.
    pub workers: Option<u32>,
    /// Each upper service's own work on an attempt, before it calls below.
    pub service: Dist,
    /// An upper service's calls time out after the timeout of the calls
    /// made to it times this (the users' timeout at the top): below 1,
    /// inner timeouts are shorter.
    pub timeout_ratio: f64,
    /// Most attempts of an upper service's call; `None`: the users'.
    pub max_attempts: Option<u32>,
    /// Who retries failures from below.
    pub retry_scope: RetryScope,
    /// Each upper service's own settings, top first: empty, or one per
    /// service above the server.
    pub layers: Vec<LayerSpec>,
}

impl Default for Chain {
    /// The server alone.
    fn default() -> Self {
        Chain {
            depth: 1,
            workers: None,
            service: Dist::Const(Nanos::ZERO),
            timeout_ratio: 1.0,
            max_attempts: None,
            retry_scope: RetryScope::Every,
            layers: Vec::new(),
        }
    }
}

impl Chain {
    /// True if there are services above the server.
    pub fn is_layered(&self) -> bool {
        self.depth > 1
    }

    /// Upper service `i`'s own settings (0 is the one users call).
    fn own(&self, i: usize) -> &LayerSpec {
        self.layers.get(i).unwrap_or(&LayerSpec::NONE)
    }

    /// Upper service `i`'s workers; `None` is unbounded.
    pub fn workers_of(&self, i: usize) -> Option<u32> {
        self.own(i).workers.unwrap_or(self.workers)
    }

    /// Upper service `i`'s own work on an attempt.
    pub fn service_of(&self, i: usize) -> Dist {
        self.own(i).service.unwrap_or(self.service)
    }

    /// Most attempts of upper service `i`'s calls; `None`: the users'.
    pub fn max_attempts_of(&self, i: usize) -> Option<u32> {
        self.own(i).max_attempts.or(self.max_attempts)
    }

    /// The attempt limit of calls to each service, top first (index 0: the
    /// users' calls to service 1), given the users' `users`: each calling
    /// upper service's own, or the chain's, or the users'.
    pub fn attempt_limits(&self, users: Option<u32>) -> Vec<Option<u32>> {
        std::iter::once(users)
            .chain((0..self.depth as usize - 1).map(|i| self.max_attempts_of(i).or(users)))
            .collect()
    }

    /// True if some upper service backs off by a policy of its own.
    pub fn has_own_policy(&self) -> bool {
        self.layers
            .iter()
            .any(|l| l.policy.is_some() || l.base_us.is_some() || l.cap_us.is_some())
    }

    /// Upper service `i`'s backoff policy: the users' `users`, with its own
    /// kind, base and cap where it has them.
    pub fn policy_of(&self, i: usize, users: &PolicySpec) -> PolicySpec {
        let own = *self.own(i);
        PolicySpec {
            kind: own.policy.unwrap_or(users.kind),
            base_us: own.base_us.unwrap_or(users.base_us),
            cap_us: own.cap_us.unwrap_or(users.cap_us),
            ..*users
        }
    }

    /// Upper service `i`'s controls: the users' `users` (budget, breaker,
    /// throttle), each replaced where it has its own.
    pub fn controls_of(&self, i: usize, users: [Option<ControlSpec>; 3]) -> Vec<ControlSpec> {
        self.own_controls(i, users).into_iter().flatten().collect()
    }

    /// Upper service `i`'s budget, breaker and throttle, in
    /// [`CONTROL_FAMILIES`] order: its own, or the users' `users`.
    pub fn own_controls(
        &self,
        i: usize,
        users: [Option<ControlSpec>; 3],
    ) -> [Option<ControlSpec>; 3] {
        let own = self.own(i).controls;
        std::array::from_fn(|c| own[c].unwrap_or(users[c]))
    }

    /// True if some call in the chain times out, given the users' timeout.
    pub fn times_out(&self, users: Option<Nanos>) -> bool {
        self.timeouts(users).iter().any(Option::is_some)
    }

    /// The timeout of calls to each service, top first (index 0: the
    /// users' calls to service 1), given the users' timeout: each an upper
    /// service's own, or the one above times the ratio, rounded to whole
    /// ns; `None` where neither gives one.
    pub fn timeouts(&self, users: Option<Nanos>) -> Vec<Option<Nanos>> {
        let mut timeouts = Vec::with_capacity(self.depth as usize);
        let mut t = users.map(|t| t.ticks() as f64);
        for i in 0..self.depth as usize {
            if i > 0
                && let Some(own) = self.own(i - 1).timeout
            {
                t = Some(own.ticks() as f64);
            }
            timeouts.push(t.map(|t| Nanos::from_ticks((t.round() as u64).max(1))));
            t = t.map(|t| t * self.timeout_ratio);
        }
        timeouts
    }

    /// Bottom attempts per user request when every bottom attempt fails
    /// with probability `p` on its own and every caller (users included)
    /// makes up to `attempts` attempts and retries any failure at once, no
    /// timeouts: the product over the chain of each caller's expected
    /// attempts, (1 − qᵢ^a)/(1 − qᵢ), where q₁ = p is the bottom's failure
    /// probability and q_{i+1} = qᵢ^a the probability that a call of a
    /// attempts fails. The product telescopes to (1 − p^(a^depth))/(1 − p):
    /// the chain is one caller with a^depth attempts, stopping at the first
    /// success (so it never passes 1/(1 − p), however deep). With p = 1 it
    /// is a^depth.
    pub fn expected_bottom_attempts(depth: u32, attempts: u32, p: f64) -> f64 {
        let mut q = p;
        let mut product = 1.0;
        for _ in 0..depth {
            let per_call = if q >= 1.0 {
                f64::from(attempts)
            } else {
                (1.0 - q.powi(attempts as i32)) / (1.0 - q)
            };
            product *= per_call;
            q = q.powi(attempts as i32);
        }
        product
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_upper_timeout_is_the_one_above_times_the_ratio() {
        let chain = Chain {
            depth: 3,
            timeout_ratio: 0.5,
            ..Chain::default()
        };
        assert_eq!(
            chain.timeouts(Some(Nanos::from_us(1))),
            [1_000, 500, 250].map(|t| Some(Nanos::from_ticks(t)))
        );
        assert_eq!(chain.timeouts(None), vec![None, None, None]);
    }

    #[test]
    fn an_upper_service_of_its_own_replaces_the_chains_settings() {
        let chain = Chain {
            depth: 4,
            timeout_ratio: 0.5,
            workers: Some(8),
            max_attempts: Some(3),
            layers: vec![
                LayerSpec::default(),
                LayerSpec {
                    workers: Some(None),
                    timeout: Some(Nanos::from_ticks(900)),
                    max_attempts: Some(2),
                    ..LayerSpec::default()
                },
                LayerSpec::default(),
            ],
            ..Chain::default()
        };
        // Service 2's calls (to service 3) wait 900 ns; service 3's scale
        // from them.
        assert_eq!(
            chain.timeouts(Some(Nanos::from_us(1))),
            [1_000, 500, 900, 450].map(|t| Some(Nanos::from_ticks(t)))
        );
        assert_eq!(
            chain.timeouts(None),
            vec![
                None,
                None,
                Some(Nanos::from_ticks(900)),
                Some(Nanos::from_ticks(450))
            ]
        );
        assert!(chain.times_out(None));
        assert_eq!((chain.workers_of(0), chain.workers_of(1)), (Some(8), None));
        assert_eq!(
            (chain.max_attempts_of(0), chain.max_attempts_of(1)),
            (Some(3), Some(2))
        );
    }

    #[test]
    fn the_expected_bottom_attempts_compound_per_caller() {
        // A full outage: (r + 1)^k, 4³ = 64 and 3⁵ = 243.
        assert_eq!(Chain::expected_bottom_attempts(3, 4, 1.0), 64.0);
        assert_eq!(Chain::expected_bottom_attempts(5, 3, 1.0), 243.0);
        // One caller: the server model's (1 − p^a)/(1 − p).
        assert!((Chain::expected_bottom_attempts(1, 2, 0.5) - 1.5).abs() < 1e-12);
        // Two callers at p = 0.5, two attempts each: the inner call fails
        // with probability 0.25, so the outer caller makes 1.25 attempts of
        // 1.5 bottom attempts each: 1.875, not 1.5² = 2.25 (the issue's
        // ((1 − p^a)/(1 − p))^k, which holds only if every layer failed on
        // its own with probability p).
        assert!((Chain::expected_bottom_attempts(2, 2, 0.5) - 1.875).abs() < 1e-12);
        assert_eq!(Chain::expected_bottom_attempts(3, 4, 0.0), 1.0);
        // The telescoped form: one caller of a^depth attempts.
        for (depth, attempts, p) in [(2, 2, 0.5), (5, 3, 0.98), (3, 4, 0.9)] {
            let one_caller = (1.0 - f64::powi(p, (attempts as i32).pow(depth))) / (1.0 - p);
            let product = Chain::expected_bottom_attempts(depth, attempts, p);
            assert!(
                (product - one_caller).abs() < 1e-9 * one_caller,
                "{product} {one_caller}"
            );
        }
    }
}
