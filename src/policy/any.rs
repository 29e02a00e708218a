//! Any policy chosen at run time, for a run whose callers back off by
//! different policies (a chain whose services each have their own): one
//! type for all of them, so their requests share the event loop's slab.
//!
//! Each delay builds the concrete policy from its spec and hands it the
//! caller's memory as the concrete type, so a caller backs off exactly as
//! the concrete policy would, draw for draw.

use crate::base::draws::Draws;
use crate::base::time::Micros;
use crate::policy::{Backoff, Cause, PolicySpec, PolicyVisitor};

/// A policy's per-caller memory as plain bits, so callers of different
/// policies can keep it in one field.
pub trait WalkBits: Copy + Send + Sync {
    /// The memory as bits.
    fn to_bits(self) -> [u64; 2];
    /// The memory from [`WalkBits::to_bits`]'s bits.
    fn from_bits(bits: [u64; 2]) -> Self;
}

impl WalkBits for () {
    fn to_bits(self) -> [u64; 2] {
        [0, 0]
    }
    fn from_bits(_: [u64; 2]) -> Self {}
}

impl WalkBits for u64 {
    fn to_bits(self) -> [u64; 2] {
        [self, 0]
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        bits[0]
    }
}

impl WalkBits for f64 {
    fn to_bits(self) -> [u64; 2] {
        [self.to_bits(), 0]
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        f64::from_bits(bits[0])
    }
}

impl WalkBits for (u64, u64) {
    fn to_bits(self) -> [u64; 2] {
        [self.0, self.1]
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        (bits[0], bits[1])
    }
}

/// The policy a spec describes, dispatched on every call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnyPolicy(pub PolicySpec);

/// [`AnyPolicy`]'s memory: the concrete policy's, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnyWalk([u64; 2]);

impl WalkBits for AnyWalk {
    fn to_bits(self) -> [u64; 2] {
        self.0
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        AnyWalk(bits)
    }
}

struct Start;

impl PolicyVisitor for Start {
    type Output = AnyWalk;
    fn visit<P: Backoff>(self, policy: P) -> AnyWalk {
        AnyWalk(policy.start().to_bits())
    }
}

struct Delay<'a, D: Draws + ?Sized> {
    retry: u32,
    /// `None` for [`Backoff::delay`], so a policy is called as it was.
    cause: Option<Cause>,
    walk: &'a mut AnyWalk,
    draws: &'a mut D,
}

impl<D: Draws + ?Sized> PolicyVisitor for Delay<'_, D> {
    type Output = Micros;
    fn visit<P: Backoff>(self, policy: P) -> Micros {
        let mut walk = P::Walk::from_bits(self.walk.0);
        let delay = match self.cause {
            Some(cause) => policy.delay_after(self.retry, cause, &mut walk, self.draws),
            None => policy.delay(self.retry, &mut walk, self.draws),
        };
        *self.walk = AnyWalk(walk.to_bits());
        delay
    }
}

impl Backoff for AnyPolicy {
    type Walk = AnyWalk;

    fn start(&self) -> AnyWalk {
        self.0.visit(Start)
    }

    fn delay<D: Draws + ?Sized>(&self, retry: u32, walk: &mut AnyWalk, draws: &mut D) -> Micros {
        self.0.visit(Delay {
            retry,
            cause: None,
            walk,
            draws,
        })
    }

    fn delay_after<D: Draws + ?Sized>(
        &self,
        retry: u32,
        cause: Cause,
        walk: &mut AnyWalk,
        draws: &mut D,
    ) -> Micros {
        self.0.visit(Delay {
            retry,
            cause: Some(cause),
            walk,
            draws,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;
    use crate::policy::{CapMode, PolicyKind};

    /// A caller's first `retries` delays by the spec's concrete policy,
    /// drawing from a generator seeded with `seed`.
    struct Concrete {
        retries: u32,
        seed: u64,
    }

    impl PolicyVisitor for Concrete {
        type Output = Vec<Micros>;
        fn visit<P: Backoff>(self, policy: P) -> Vec<Micros> {
            let mut draws = job_rng(self.seed);
            let mut walk = policy.start();
            (1..=self.retries)
                .map(|r| policy.delay(r, &mut walk, &mut draws))
                .collect()
        }
    }

    #[test]
    fn any_policy_delays_as_the_concrete_one_draw_for_draw() {
        for kind in PolicyKind::ALL {
            for jitter_factor in [0.0, 0.5] {
                let spec = PolicySpec {
                    kind,
                    base_us: 1_000,
                    cap_us: 300_000,
                    step_us: None,
                    jitter_factor,
                    first_exponent: 0,
                    multiplier: 1.5,
                    cap_mode: CapMode::Before,
                    randomization_factor: 0.5,
                    throttle_base_us: 1_000_000,
                };
                let concrete = spec.visit(Concrete {
                    retries: 12,
                    seed: 7,
                });
                let any = AnyPolicy(spec);
                let mut draws = job_rng(7);
                let mut walk = any.start();
                let erased: Vec<Micros> = (1..=12)
                    .map(|r| any.delay(r, &mut walk, &mut draws))
                    .collect();
                assert_eq!(erased, concrete, "{kind}, factor {jitter_factor}");
                // The walks matter: the decorrelated ones move.
                assert!(concrete.iter().any(|&d| d > 0) || kind == PolicyKind::NoBackoff);
            }
        }
    }

    #[test]
    fn the_cause_reaches_the_concrete_policy_through_the_jitter_factor() {
        use crate::base::draws::ScriptedDraws;
        use crate::policy::Aws2026;
        let spec = PolicySpec {
            throttle_base_us: 40_000,
            ..crate::RunSpec::seed_002(PolicyKind::Aws2026, 1).policy
        };
        let (any, mut walk) = (AnyPolicy(spec), AnyWalk::default());
        let mut d = ScriptedDraws::new(&[1.0, 1.0, 1.0]);
        // seed 002's base 100 ms, cap 20 s; after a throttle the 40 ms base.
        assert_eq!(
            any.delay_after(3, Cause::Throttle, &mut walk, &mut d),
            160_000
        );
        assert_eq!(any.delay_after(3, Cause::Other, &mut walk, &mut d), 400_000);
        assert_eq!(any.delay(3, &mut walk, &mut d), 400_000);
        // With a jitter factor, the factor's draw comes after the policy's.
        let wrapped = crate::policy::ProportionalJitter::new(
            Aws2026 {
                base: 100_000,
                throttle_base: 40_000,
                cap: 20_000_000,
            },
            0.5,
        );
        let mut d = ScriptedDraws::new(&[1.0, 0.0]);
        assert_eq!(
            wrapped.delay_after(3, Cause::Throttle, &mut (), &mut d),
            120_000
        );
    }
}
