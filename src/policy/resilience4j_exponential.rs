//! `resilience4j-exponential`: resilience4j's `IntervalFunction.
//! ofExponentialBackoff(initialInterval, multiplier, maxInterval)`, what
//! Spring's `enableExponentialBackoff: true` builds.

use super::Backoff;
use super::resilience4j_interval::{capped_us, exponential_ms, millis};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d_k = min(cap, i_k)` with `i_1 = base` and `i_{k+1} = ⌊i_k·m⌋`, in whole
/// ms (resilience4j truncates at every step, so 1.5× from 500 ms gives
/// 1687 then 2530, not `500·1.5^4` = 2531.25). k is resilience4j's attempt
/// number after the failed attempt: the first retry waits the base. Without
/// a `exponentialMaxWaitDuration` resilience4j has no cap; give a cap above
/// the largest wait (the import does). No draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resilience4jExponential {
    /// initialInterval, µs (used in whole ms).
    pub base: Micros,
    /// maxInterval, µs.
    pub cap: Micros,
    /// exponentialBackoffMultiplier.
    pub multiplier: f64,
}

impl Backoff for Resilience4jExponential {
    type Walk = ();

    const JITTERED: bool = false;

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), _: &mut D) -> Micros {
        let stop = millis(self.cap).saturating_add(1);
        let ms = exponential_ms(millis(self.base), self.multiplier, retry, stop);
        capped_us(ms, self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn each_step_truncates_to_whole_milliseconds() {
        // IntervalFunction's defaults: 500 ms, 1.5. Iterated with (long):
        // 500, 750, 1125, 1687 (1687.5), 2530 (2530.5), 3795, 5692 (5692.5).
        let p = Resilience4jExponential {
            base: Micros::from_ms(500),
            cap: Micros::from_ticks(u64::MAX),
            multiplier: 1.5,
        };
        let mut none = ScriptedDraws::new(&[]);
        let got: Vec<_> = (1..=7)
            .map(|k| p.delay(k, &mut (), &mut none) / 1_000)
            .collect();
        assert_eq!(
            got,
            [500, 750, 1125, 1687, 2530, 3795, 5692].map(Micros::from_ticks)
        );
        // The cap is a min, after the growth: maxInterval 2 s.
        let capped = Resilience4jExponential {
            cap: Micros::from_s(2),
            ..p
        };
        assert_eq!(capped.delay(5, &mut (), &mut none), Micros::from_s(2));
        assert_eq!(
            capped.delay(u32::MAX, &mut (), &mut none),
            Micros::from_s(2)
        );
        // A multiplier that cannot move 1 ms (1.5 × 1 = 1.5 → 1) stands still.
        let stuck = Resilience4jExponential {
            base: Micros::from_ms(1),
            cap: Micros::from_ticks(u64::MAX),
            multiplier: 1.5,
        };
        assert_eq!(
            stuck.delay(u32::MAX, &mut (), &mut none),
            Micros::from_ms(1)
        );
        // Sub-millisecond parts are dropped, as Duration.toMillis() does.
        let ragged = Resilience4jExponential {
            base: Micros::from_us(100_900),
            cap: Micros::from_ticks(u64::MAX),
            multiplier: 2.0,
        };
        assert_eq!(ragged.delay(2, &mut (), &mut none), Micros::from_ms(200));
    }
}
