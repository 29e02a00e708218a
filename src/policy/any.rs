//! Any policy chosen at run time, for a run whose callers back off by
//! different policies (a chain whose services each have their own): one
//! type for all of them, so their requests share the event loop's slab.
//!
//! Each delay builds the concrete policy from its spec and hands it the
//! caller's memory as the concrete type, so a caller backs off exactly as
//! the concrete policy would, draw for draw.

use std::sync::Arc;

use rand_pcg::Pcg64Mcg;

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

impl WalkBits for (u64, u64) {
    fn to_bits(self) -> [u64; 2] {
        [self.0, self.1]
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        (bits[0], bits[1])
    }
}

impl WalkBits for Micros {
    fn to_bits(self) -> [u64; 2] {
        [self.ticks(), 0]
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        Micros::from_ticks(bits[0])
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

impl WalkBits for (Micros, Micros) {
    fn to_bits(self) -> [u64; 2] {
        [self.0.ticks(), self.1.ticks()]
    }
    fn from_bits(bits: [u64; 2]) -> Self {
        (Micros::from_ticks(bits[0]), Micros::from_ticks(bits[1]))
    }
}

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

/// The policy a spec describes, chosen at run time: built once, then each
/// delay calls the concrete policy's own code through one pointer, draw for
/// draw as the concrete policy would. Loops that hold it are compiled once
/// for every policy; a delay is drawn once per retry, not per event, so the
/// indirect call costs what the herd's loops measured as within noise
/// (docs/src/performance/history.md), where a dispatch on the spec at every
/// call cost 47 instructions a retry.
#[derive(Clone)]
pub struct AnyPolicy(Arc<dyn Erased>);

impl std::fmt::Debug for AnyPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnyPolicy")
    }
}

/// A concrete policy with its memory as bits and the run's generator.
trait Erased: Send + Sync {
    fn start(&self) -> AnyWalk;
    fn remembers(&self) -> bool;
    fn delay_after(
        &self,
        retry: u32,
        cause: Cause,
        walk: &mut AnyWalk,
        draws: &mut Pcg64Mcg,
    ) -> Micros;
}

impl<P: Backoff + 'static> Erased for P {
    fn start(&self) -> AnyWalk {
        AnyWalk(Backoff::start(self).to_bits())
    }

    fn remembers(&self) -> bool {
        size_of::<P::Walk>() > 0
    }

    fn delay_after(
        &self,
        retry: u32,
        cause: Cause,
        walk: &mut AnyWalk,
        draws: &mut Pcg64Mcg,
    ) -> Micros {
        let mut memory = P::Walk::from_bits(walk.0);
        let delay = Backoff::delay_after(self, retry, cause, &mut memory, draws);
        *walk = AnyWalk(memory.to_bits());
        delay
    }
}

/// Builds the concrete policy behind the pointer.
struct Build;

impl PolicyVisitor for Build {
    type Output = AnyPolicy;
    fn visit<P: Backoff>(self, policy: P) -> AnyPolicy {
        AnyPolicy(Arc::new(policy))
    }
}

impl AnyPolicy {
    /// The policy `spec` describes.
    pub fn new(spec: &PolicySpec) -> Self {
        spec.visit(Build)
    }

    /// The memory of a caller that has not retried yet.
    #[inline]
    pub fn start(&self) -> AnyWalk {
        self.0.start()
    }

    /// False if the policy keeps no memory between retries (its delay
    /// depends on the retry number alone): a caller need not keep any.
    pub fn remembers(&self) -> bool {
        self.0.remembers()
    }

    /// The delay before retry `retry` after an attempt that failed by
    /// `cause` ([`Backoff::delay_after`]; [`Cause::Other`] is
    /// [`Backoff::delay`] for every policy), updating the caller's `walk`.
    #[inline]
    pub fn delay_after(
        &self,
        retry: u32,
        cause: Cause,
        walk: &mut AnyWalk,
        draws: &mut Pcg64Mcg,
    ) -> Micros {
        self.0.delay_after(retry, cause, walk, draws)
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
                    base_us: Micros::from_ms(1),
                    cap_us: Micros::from_ms(300),
                    step_us: None,
                    jitter_factor,
                    first_exponent: 0,
                    multiplier: 1.5,
                    cap_mode: CapMode::Before,
                    randomization_factor: 0.5,
                    throttle_base_us: Micros::from_s(1),
                };
                let concrete = spec.visit(Concrete {
                    retries: 12,
                    seed: 7,
                });
                let any = AnyPolicy::new(&spec);
                let mut draws = job_rng(7);
                let mut walk = any.start();
                // Without a cause, as the concrete `delay` is called.
                let erased: Vec<Micros> = (1..=12)
                    .map(|r| any.delay_after(r, Cause::Other, &mut walk, &mut draws))
                    .collect();
                assert_eq!(erased, concrete, "{kind}, factor {jitter_factor}");
                // The walks matter: the decorrelated ones move.
                assert!(
                    concrete.iter().any(|&d| d > Micros::ZERO) || kind == PolicyKind::NoBackoff
                );
            }
        }
    }

    #[test]
    fn the_cause_reaches_the_concrete_policy_through_the_jitter_factor() {
        use crate::base::draws::ScriptedDraws;
        use crate::policy::Aws2026;
        let spec = PolicySpec {
            throttle_base_us: Micros::from_ms(40),
            jitter_factor: 0.5,
            ..crate::RunSpec::seed_002(PolicyKind::Aws2026, 1).policy
        };
        let concrete = crate::policy::ProportionalJitter::new(
            Aws2026 {
                base: Micros::from_ms(100),
                throttle_base: Micros::from_ms(40),
                cap: Micros::from_s(20),
            },
            0.5,
        );
        let any = AnyPolicy::new(&spec);
        for cause in [Cause::Throttle, Cause::Other] {
            let (mut erased_draws, mut concrete_draws) = (job_rng(3), job_rng(3));
            let erased = any.delay_after(3, cause, &mut AnyWalk::default(), &mut erased_draws);
            let expected = Backoff::delay_after(&concrete, 3, cause, &mut (), &mut concrete_draws);
            assert_eq!(erased, expected, "{cause:?}");
        }
        // With a jitter factor, the factor's draw comes after the policy's:
        // seed 002's base 100 ms, cap 20 s; after a throttle the 40 ms base.
        let mut d = ScriptedDraws::new(&[1.0, 0.0]);
        assert_eq!(
            Backoff::delay_after(&concrete, 3, Cause::Throttle, &mut (), &mut d),
            Micros::from_ms(120)
        );
    }
}
