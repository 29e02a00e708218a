//! `decorrelated-v2`: Polly's `DecorrelatedJitterBackoffV2`.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// Polly's constant `pFactor`.
const P_FACTOR: f64 = 4.0;
/// Polly's `rpScalingFactor`, 1/1.4: makes the median first delay `base`.
const RP_SCALING: f64 = 1.0 / 1.4;

/// For retry k: `t = (k−1) + U[0, 1)`, `next = 2^t·tanh(√(4t))`,
/// `d = min(cap, (next − prev)·base/1.4)`, `prev = next` (Polly.Contrib's
/// DecorrelatedJitterBackoffV2; base is what Polly calls the "median first
/// retry delay", though the formula's own median first delay is 0.897·base).
///
/// The formula grows exponentially on average, like capped exponential
/// backoff, but its draws are spread so that retries neither synchronise nor
/// cluster; `prev` is the formula's previous value, not the previous delay.
/// The fraction `U[0, 1)` is a 53-bit draw. Each delay is the formula's value
/// rounded to the nearest µs, where Polly truncates to its 100 ns tick: at
/// herdsim's 1 µs resolution truncation would shorten every delay by half a
/// µs on average, rounding by nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecorrelatedV2 {
    /// The median first delay, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl DecorrelatedV2 {
    /// The formula's value at `t`.
    fn formula(t: f64) -> f64 {
        2f64.powf(t) * (P_FACTOR * t).sqrt().tanh()
    }
}

impl Backoff for DecorrelatedV2 {
    /// The formula's previous value.
    type Walk = f64;

    fn start(&self) -> f64 {
        0.0
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, prev: &mut f64, draws: &mut D) -> Micros {
        const UNIT: u64 = 1 << 53;
        let fraction = draws.uniform(0, UNIT - 1) as f64 / UNIT as f64;
        let t = f64::from(retry.saturating_sub(1)) + fraction;
        let next = Self::formula(t);
        let d = (next - *prev) * RP_SCALING * self.base.ticks() as f64;
        *prev = next;
        // Past ~2^1000 the formula is infinite: the cap, as Polly's clamp does.
        if d.is_finite() {
            Micros::from_ticks(d.max(0.0).round() as u64).min(self.cap)
        } else {
            self.cap
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;

    const P: DecorrelatedV2 = DecorrelatedV2 {
        base: Micros::from_ms(100),
        cap: Micros::from_ticks(u64::MAX),
    };

    #[test]
    fn injected_draws_follow_the_formula() {
        // t = 0.5: 2^0.5·tanh(√2) = 1.2556…; × 100 ms / 1.4 = 89.69 ms.
        // t = 1.5 (prev 1.2556…): 2^1.5·tanh(√6) − 1.2556… = 1.5470…; 110.50 ms.
        let mut prev = P.start();
        let mut d = ScriptedDraws::new(&[0.5, 0.5, 0.0]);
        let first = P.delay(1, &mut prev, &mut d);
        let second = P.delay(2, &mut prev, &mut d);
        let f = DecorrelatedV2::formula;
        assert_eq!(
            first,
            Micros::from_ticks((f(0.5) / 1.4 * 1e5).round() as u64)
        );
        assert_eq!(
            second,
            Micros::from_ticks(((f(1.5) - f(0.5)) / 1.4 * 1e5).round() as u64)
        );
        assert!((89_600..89_800).contains(&first.ticks()), "{first:?}");
        // t = 2.0 exactly: 4·tanh(√8) − f(1.5).
        assert_eq!(
            P.delay(3, &mut prev, &mut d),
            Micros::from_ticks(((f(2.0) - f(1.5)) / 1.4 * 1e5).round() as u64)
        );
    }

    #[test]
    fn the_first_delay_follows_the_formula_and_the_cap_holds() {
        // The first delay is f(U[0, 1))/1.4·base, increasing in the draw: its
        // median is f(0.5)/1.4·base = 0.897·base (Polly calls base the "median
        // first retry delay"; the formula's median sits 10% below it), its
        // largest value f(1)/1.4·base = 1.376·base.
        let mut rng = job_rng(6);
        let mut first: Vec<Micros> = (0..20_001)
            .map(|_| P.delay(1, &mut P.start(), &mut rng))
            .collect();
        first.sort_unstable();
        let median = first[10_000].ticks() as f64;
        let expected = DecorrelatedV2::formula(0.5) / 1.4 * 1e5;
        // The sample median's SE is about 0.3 ms here (density ~0.9 per ms at
        // the median, 20,001 draws); 4 SE is 1.2 ms.
        assert!(
            (median - expected).abs() < 1_200.0,
            "{median} vs {expected}"
        );
        let top = DecorrelatedV2::formula(1.0) / 1.4 * 1e5;
        assert!((*first.last().unwrap()).ticks() as f64 <= top + 1.0);
        let capped = DecorrelatedV2 {
            base: Micros::from_ms(100),
            cap: Micros::from_s(5),
        };
        let mut prev = capped.start();
        for k in 1..2_000 {
            assert!(capped.delay(k, &mut prev, &mut rng) <= Micros::from_s(5));
        }
    }
}
