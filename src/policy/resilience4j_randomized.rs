//! `resilience4j-randomized`: resilience4j's `IntervalFunction.
//! ofRandomized(interval, randomizationFactor)`, what Spring's
//! `enableRandomizedWait: true` (without exponential backoff) builds.

use super::Backoff;
use super::resilience4j_interval::{capped_us, millis, randomized_ms};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = min(cap, ⌊max(1, base − f·base + U·(2f·base + 1))⌋)` ms, U in [0, 1)
/// (resilience4j's `randomize`): uniform on `[(1−f)·base, (1+f)·base + 1)`
/// ms, the same range at every retry. resilience4j has no cap here; the cap
/// (herdsim's bound on every policy) applies after the draw. One draw per
/// retry, from the run's generator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resilience4jRandomized {
    /// interval, µs (used in whole ms).
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
    /// randomizationFactor f in [0, 1].
    pub factor: f64,
}

impl Backoff for Resilience4jRandomized {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _: u32, _: &mut (), draws: &mut D) -> Micros {
        capped_us(
            randomized_ms(millis(self.base), self.factor, draws),
            self.cap,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;
    use crate::base::time::US_PER_MS;

    const P: Resilience4jRandomized = Resilience4jRandomized {
        base: Micros::from_ms(500),
        cap: Micros::from_ticks(u64::MAX),
        factor: 0.5,
    };

    #[test]
    fn the_range_is_one_minus_f_to_one_plus_f_plus_a_millisecond() {
        // 500 ms, f 0.5 (resilience4j's defaults): min 250, max 750, the draw
        // 250 + U·501: U = 0 gives 250 ms, U just under 1 gives 750 ms.
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.5]);
        assert_eq!(P.delay(1, &mut (), &mut d), Micros::from_ms(250));
        // The script's 1.0 is the 53-bit draw's top, 1 − 2^−53: 250 +
        // (1 − 2^−53)·501 rounds to 751.0 in doubles (the shortfall is under
        // half an ulp), in Java as here (the same operations in the same
        // order), so the very top draw waits 751 ms: (1+f)·d + 1.
        assert_eq!(P.delay(2, &mut (), &mut d), Micros::from_ms(751));
        // U = 0.5 (to 53 bits): 250 + 250.5 = 500.5 → 500.
        assert_eq!(P.delay(7, &mut (), &mut d), Micros::from_ms(500));
        // Never below 1 ms: 1 ms with f = 1 draws from [0, 3) and floors at 1.
        let tiny = Resilience4jRandomized {
            base: Micros::from_ms(1),
            cap: Micros::from_ticks(u64::MAX),
            factor: 1.0,
        };
        assert_eq!(
            tiny.delay(1, &mut (), &mut ScriptedDraws::new(&[0.0])),
            Micros::from_ms(1)
        );
    }

    #[test]
    fn whole_milliseconds_spread_evenly_over_the_range() {
        // 501 whole values 250..=750 ms, each with probability 1/501: over
        // 50,100 draws each expects 100 (sd 10); the mean expects 500 ms
        // with a standard error of 144.6/√50100 = 0.65 ms; 4 SE is 2.6 ms.
        let mut rng = job_rng(36);
        let draws: Vec<_> = (0..50_100).map(|_| P.delay(1, &mut (), &mut rng)).collect();
        assert!(
            draws
                .iter()
                .all(|&d| (250_000..=751_000).contains(&d.ticks()) && d.is_multiple_of(US_PER_MS))
        );
        assert!(draws.contains(&Micros::from_ms(250)) && draws.contains(&Micros::from_ms(750)));
        let mean = draws.iter().sum::<Micros>().ticks() as f64 / draws.len() as f64 / 1_000.0;
        assert!((mean - 500.0).abs() < 2.6, "{mean}");
    }
}
