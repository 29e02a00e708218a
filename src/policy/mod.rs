//! Backoff policies: given the retry number, how long a failed client waits.
//!
//! Each policy is a small value type implementing [`Backoff`], one file each.
//! A policy draws from a [`Draws`] it is handed, so a run's generator is the
//! engine's and a test can script the draws. Per-client memory between retries
//! (the decorrelated walk) is the policy's associated [`Backoff::Walk`] type,
//! kept by the engine in one array, so stateless policies cost no memory.
//!
//! Every policy's delay lies in `[0, cap]`. The proportional jitter factor of
//! seed 003 ([`ProportionalJitter`]) wraps any policy and is applied after the
//! cap, so it may overshoot the cap by at most `factor·cap/2`.

mod constant;
mod decorrelated;
mod decorrelated_attempt;
mod equal;
mod full;
mod jitter_factor;
mod linear;
mod no_backoff;
mod none;

pub use constant::Constant;
pub use decorrelated::{CapWalk, DecorrelatedJitter};
pub use decorrelated_attempt::DecorrelatedAttempt;
pub use equal::EqualJitter;
pub use full::FullJitter;
pub use jitter_factor::ProportionalJitter;
pub use linear::Linear;
pub use no_backoff::NoBackoff;
pub use none::NoJitter;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::draws::Draws;
use crate::time::Micros;

/// A backoff policy: the delay before each retry of one client.
pub trait Backoff {
    /// What a client remembers between retries under this policy (`()` when
    /// the delay depends on the retry number alone).
    type Walk: Copy;

    /// The memory of a client that has not retried yet.
    fn start(&self) -> Self::Walk;

    /// The delay before retry `retry` (1 for the first retry, after the first
    /// call failed), updating the client's `walk`.
    fn delay<D: Draws + ?Sized>(&self, retry: u32, walk: &mut Self::Walk, draws: &mut D) -> Micros;
}

/// The capped exponential ceiling of retry `retry` (≥ 1):
/// `min(cap, base·2^(retry−1))`, computed without overflow at any retry number
/// (the doubling stops at the cap; seed 004's edge case).
#[inline]
pub fn exponential_ceiling(base: Micros, cap: Micros, retry: u32) -> Micros {
    let doublings = retry.saturating_sub(1);
    if doublings < 64 && base <= cap >> doublings {
        base << doublings
    } else {
        cap
    }
}

/// The policies herdsim knows, by their command-line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Plain capped exponential, no jitter.
    None,
    /// Equal jitter: half the ceiling fixed, half drawn.
    Equal,
    /// Full jitter: the whole ceiling drawn.
    Full,
    /// Decorrelated jitter: a random walk from the previous delay.
    Decorrelated,
    /// Seed 002's decorrelated jitter as its `simulate()` calls it: with the
    /// attempt number where the previous delay belongs.
    DecorrelatedAttempt,
    /// No delay at all (the AWS simulator's baseline).
    NoBackoff,
    /// The same delay every time.
    Constant,
    /// A delay growing by a fixed step.
    Linear,
}

impl PolicyKind {
    /// Every policy, in the order `herdsim policies` lists them.
    pub const ALL: [PolicyKind; 8] = [
        PolicyKind::None,
        PolicyKind::Equal,
        PolicyKind::Full,
        PolicyKind::Decorrelated,
        PolicyKind::DecorrelatedAttempt,
        PolicyKind::NoBackoff,
        PolicyKind::Constant,
        PolicyKind::Linear,
    ];

    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::None => "none",
            PolicyKind::Equal => "equal",
            PolicyKind::Full => "full",
            PolicyKind::Decorrelated => "decorrelated",
            PolicyKind::DecorrelatedAttempt => "decorrelated-attempt",
            PolicyKind::NoBackoff => "no-backoff",
            PolicyKind::Constant => "constant",
            PolicyKind::Linear => "linear",
        }
    }

    /// The delay formula for retry k, with c_k = min(cap, base·2^(k−1)).
    pub fn formula(self) -> &'static str {
        match self {
            PolicyKind::None => "d = c_k",
            PolicyKind::Equal => "d = U[c_k/2, c_k]  (c_k/2 fixed, c_k/2 drawn)",
            PolicyKind::Full => "d = U[0, c_k]",
            PolicyKind::Decorrelated => {
                "d = min(cap, U[base, max(base, 3·prev)]); prev starts at base, then is d"
            }
            PolicyKind::DecorrelatedAttempt => {
                "d = min(cap, U between base and 3·(k−1) ms)  (prev replaced by the attempt number)"
            }
            PolicyKind::NoBackoff => "d = 0",
            PolicyKind::Constant => "d = min(cap, base)",
            PolicyKind::Linear => "d = min(cap, base + (k−1)·step)",
        }
    }

    /// The parameters the policy reads.
    pub fn parameters(self) -> &'static str {
        match self {
            PolicyKind::Linear => "base, step, cap",
            PolicyKind::None | PolicyKind::Equal | PolicyKind::Full => "base, cap, first-exponent",
            PolicyKind::NoBackoff => "none",
            _ => "base, cap",
        }
    }

    /// Where the policy comes from, briefly.
    pub fn summary(self) -> &'static str {
        match self {
            PolicyKind::None => {
                "plain capped exponential; every client that failed together retries together"
            }
            PolicyKind::Equal => {
                "equal jitter: a guaranteed wait of half the ceiling, half the spread of full"
            }
            PolicyKind::Full => "full jitter: uniform over the whole window (the AWS SDK default)",
            PolicyKind::Decorrelated => {
                "decorrelated jitter: a random walk from the previous delay (Brooker, 2015)"
            }
            PolicyKind::DecorrelatedAttempt => {
                "seed 002's simulate() as written: decorrelated jitter handed the attempt number, not the previous delay"
            }
            PolicyKind::NoBackoff => {
                "retry at once (the AWS simulator's None); needs --max-attempts or --resource occ"
            }
            PolicyKind::Constant => "a fixed delay; no backoff",
            PolicyKind::Linear => "a delay that grows by a fixed step each retry",
        }
    }

    /// Every name, for error messages and `--help`.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|k| k.name()).collect()
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown policy '{name}': expected one of {}",
                    Self::names().join(", ")
                )
            })
    }
}

/// A fully parameterised policy, as a run uses it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PolicySpec {
    /// Which policy.
    pub kind: PolicyKind,
    /// The first retry's delay (and the decorrelated walk's floor), µs.
    pub base_us: Micros,
    /// The largest delay before the jitter factor, µs.
    pub cap_us: Micros,
    /// The linear policy's growth per retry, µs.
    pub step_us: Micros,
    /// Seed 003's proportional jitter factor in `[0, 1]`; 0 is off.
    pub jitter_factor: f64,
    /// Added to the exponent of every retry of the exponential family
    /// (none, equal, full): `c_k = min(cap, base·2^(k−1+first_exponent))`.
    pub first_exponent: u32,
}

/// Something to do with a concrete policy type: the way a [`PolicySpec`] chosen
/// at run time reaches code that is generic (and so fast) over [`Backoff`].
pub trait PolicyVisitor {
    /// What the visit returns.
    type Output;
    /// Called once with the concrete policy.
    fn visit<P: Backoff>(self, policy: P) -> Self::Output;
}

impl PolicySpec {
    /// Calls `visitor` with the concrete policy this spec describes, wrapped in
    /// the proportional jitter when the factor is not zero.
    pub fn visit<V: PolicyVisitor>(&self, visitor: V) -> V::Output {
        let (base, cap, step) = (self.base_us, self.cap_us, self.step_us);
        let first_exponent = self.first_exponent;
        match self.kind {
            PolicyKind::None => self.with_factor(
                NoJitter {
                    base,
                    cap,
                    first_exponent,
                },
                visitor,
            ),
            PolicyKind::Equal => self.with_factor(
                EqualJitter {
                    base,
                    cap,
                    first_exponent,
                },
                visitor,
            ),
            PolicyKind::Full => self.with_factor(
                FullJitter {
                    base,
                    cap,
                    first_exponent,
                },
                visitor,
            ),
            PolicyKind::Decorrelated => self.with_factor(DecorrelatedJitter { base, cap }, visitor),
            PolicyKind::DecorrelatedAttempt => {
                self.with_factor(DecorrelatedAttempt { base, cap }, visitor)
            }
            PolicyKind::NoBackoff => self.with_factor(NoBackoff, visitor),
            PolicyKind::Constant => self.with_factor(Constant { base, cap }, visitor),
            PolicyKind::Linear => self.with_factor(Linear { base, step, cap }, visitor),
        }
    }

    fn with_factor<P: Backoff, V: PolicyVisitor>(&self, policy: P, visitor: V) -> V::Output {
        if self.jitter_factor > 0.0 {
            visitor.visit(ProportionalJitter::new(policy, self.jitter_factor))
        } else {
            visitor.visit(policy)
        }
    }

    /// The largest delay this spec can produce: the cap, plus the jitter
    /// factor's documented overshoot.
    pub fn max_delay_us(&self) -> Micros {
        self.cap_us + jitter_factor::half_width(self.cap_us, self.jitter_factor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_doubles_then_stops_at_the_cap() {
        let got: Vec<_> = (1..=10)
            .map(|k| exponential_ceiling(100, 20_000, k))
            .collect();
        assert_eq!(
            got,
            [
                100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 20_000, 20_000
            ]
        );
    }

    #[test]
    fn ceiling_never_overflows() {
        for k in [63, 64, 65, 1_000, 10_000, 100_000, u32::MAX] {
            assert_eq!(exponential_ceiling(100, 20_000_000, k), 20_000_000);
        }
        assert_eq!(exponential_ceiling(1, u64::MAX, 64), 1 << 63);
        assert_eq!(exponential_ceiling(1, u64::MAX, 65), u64::MAX);
        assert_eq!(exponential_ceiling(u64::MAX, u64::MAX, 2), u64::MAX);
    }

    #[test]
    fn a_cap_below_the_base_is_every_ceiling() {
        for k in 1..20 {
            assert_eq!(exponential_ceiling(10_000, 3_000, k), 3_000);
        }
    }

    #[test]
    fn names_parse_back() {
        for kind in PolicyKind::ALL {
            assert_eq!(kind.name().parse::<PolicyKind>(), Ok(kind));
        }
        let err = "jittery".parse::<PolicyKind>().unwrap_err();
        assert!(err.contains(
            "none, equal, full, decorrelated, decorrelated-attempt, no-backoff, constant, linear"
        ));
    }
}
