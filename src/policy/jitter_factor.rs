//! Seed 003's proportional jitter factor, wrapping any policy.

use super::{Backoff, Cause};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// Half the width of the jitter window for delay `d` and factor `f`:
/// `⌊f·d/2⌋` µs.
pub(crate) fn half_width(d: Micros, factor: f64) -> Micros {
    Micros::from_ticks((factor * d.ticks() as f64 / 2.0).floor() as u64)
}

/// `d' = d + U[−f·d/2, +f·d/2]`, applied to the inner policy's delay after its
/// cap (seed 003: "jittered delays can still exceed max_delay temporarily, but
/// only by the jitter amount"). With `f ≤ 1` the result is at least `d/2`.
///
/// The inner policy's walk sees its own delay, not the jittered one: the
/// jitter is applied on top of whatever schedule the policy keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProportionalJitter<P> {
    inner: P,
    factor: f64,
}

impl<P> ProportionalJitter<P> {
    /// Wraps `inner` with factor `factor` in `[0, 1]`.
    pub fn new(inner: P, factor: f64) -> Self {
        assert!(
            (0.0..=1.0).contains(&factor),
            "jitter factor {factor} outside [0, 1]"
        );
        ProportionalJitter { inner, factor }
    }
}

impl<P: Backoff> Backoff for ProportionalJitter<P> {
    type Walk = P::Walk;

    fn start(&self) -> P::Walk {
        self.inner.start()
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, walk: &mut P::Walk, draws: &mut D) -> Micros {
        let d = self.inner.delay(retry, walk, draws);
        self.jitter(d, draws)
    }

    #[inline]
    fn delay_after<D: Draws + ?Sized>(
        &self,
        retry: u32,
        cause: Cause,
        walk: &mut P::Walk,
        draws: &mut D,
    ) -> Micros {
        let d = self.inner.delay_after(retry, cause, walk, draws);
        self.jitter(d, draws)
    }
}

impl<P> ProportionalJitter<P> {
    /// `d` with the factor's jitter on top.
    #[inline]
    fn jitter<D: Draws + ?Sized>(&self, d: Micros, draws: &mut D) -> Micros {
        let half = half_width(d, self.factor);
        draws.uniform_us(d - half, d + half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::policy::{Constant, NoJitter};

    #[test]
    fn seed_003_worked_examples() {
        // factor 0.3 on 10 s: 8.5 s to 11.5 s; factor 0.5 on 10 s: 7.5 s to 12.5 s;
        // factor 0.5 on 20 s: 15 s to 25 s.
        for (delay, factor, lo, hi) in [
            (10_000_000, 0.3, 8_500_000, 11_500_000),
            (10_000_000, 0.5, 7_500_000, 12_500_000),
            (20_000_000, 0.5, 15_000_000, 25_000_000),
        ] {
            let t = Micros::from_ticks;
            let (delay, lo, hi) = (t(delay), t(lo), t(hi));
            let p = ProportionalJitter::new(
                Constant {
                    base: delay,
                    cap: delay,
                },
                factor,
            );
            let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.5]);
            assert_eq!(p.delay(1, &mut (), &mut d), lo);
            assert_eq!(p.delay(1, &mut (), &mut d), hi);
            assert_eq!(p.delay(1, &mut (), &mut d), delay);
        }
    }

    #[test]
    fn seed_003_exponential_ranges_apply_after_the_cap() {
        // initial 1 s, max 30 s, factor 0.3: ~0.85-1.15 s, ..., ~13.6-18.4 s, and
        // past the cap 25.5-34.5 s: over max_delay by at most the jitter amount.
        let p = ProportionalJitter::new(
            NoJitter {
                base: Micros::from_s(1),
                cap: Micros::from_s(30),
                first_exponent: 0,
                multiplier: 2.0,
            },
            0.3,
        );
        let expect = [
            (850_000, 1_150_000),
            (1_700_000, 2_300_000),
            (3_400_000, 4_600_000),
            (6_800_000, 9_200_000),
            (13_600_000, 18_400_000),
            (25_500_000, 34_500_000),
        ];
        for (k, (lo, hi)) in (1..).zip(expect) {
            let mut d = ScriptedDraws::new(&[0.0, 1.0]);
            assert_eq!(
                (p.delay(k, &mut (), &mut d), p.delay(k, &mut (), &mut d)),
                (Micros::from_ticks(lo), Micros::from_ticks(hi))
            );
        }
    }
}
