//! `resilience4j-exponential-randomized`: resilience4j's `IntervalFunction.
//! ofExponentialRandomBackoff(initialInterval, multiplier,
//! randomizationFactor, maxInterval)`, what Spring builds from
//! `enableExponentialBackoff` and `enableRandomizedWait` together.

use super::Backoff;
use super::resilience4j_interval::{capped_us, exponential_ms, millis, randomized_ms};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d_k = min(cap, randomize(i_k, f))`, `i_k` the truncated exponential
/// interval of [`super::Resilience4jExponential`] *uncapped*: the draw is
/// uniform on `[(1−f)·i_k, (1+f)·i_k + 1)` ms, and only then is the cap
/// applied (`Math.min(interval, maxIntervalMillis)` after `randomize`), so
/// once `(1−f)·i_k` passes the cap every retry waits exactly the cap: the
/// jitter is gone where the herd is largest. One draw per retry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resilience4jExponentialRandomized {
    /// initialInterval, µs (used in whole ms).
    pub base: Micros,
    /// maxInterval, µs.
    pub cap: Micros,
    /// exponentialBackoffMultiplier.
    pub multiplier: f64,
    /// randomizationFactor f in [0, 1].
    pub factor: f64,
}

impl Backoff for Resilience4jExponentialRandomized {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        // The interval needs to grow only until even its lowest draw,
        // (1 − f)·i, is past the cap (with f = 1 it never is: walk on).
        let cap_ms = millis(self.cap);
        let stop = if self.factor < 1.0 {
            ((cap_ms as f64 + 1.0) / (1.0 - self.factor)).min(i64::MAX as f64) as i64
        } else {
            i64::MAX
        };
        let interval = exponential_ms(millis(self.base), self.multiplier, retry, stop.max(cap_ms));
        capped_us(randomized_ms(interval, self.factor, draws), self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn the_draw_is_around_the_truncated_interval_and_the_cap_comes_after() {
        // 500 ms, 1.5, f 0.5, max 2 s. Retry 4: i = 1687 ms; the draw spans
        // [843.5, 2531.5) → U = 0 gives 843 ms; the largest draws pass 2 s
        // and are cut to it.
        let p = Resilience4jExponentialRandomized {
            base: Micros::from_ms(500),
            cap: Micros::from_s(2),
            multiplier: 1.5,
            factor: 0.5,
        };
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.0, 0.0]);
        assert_eq!(p.delay(4, &mut (), &mut d), Micros::from_ms(843));
        assert_eq!(p.delay(4, &mut (), &mut d), Micros::from_s(2));
        // Retry 1: [250, 751) → 250 ms at U = 0.
        assert_eq!(p.delay(1, &mut (), &mut d), Micros::from_ms(250));
        // Retry 8: i = 8538 ms (500, 750, 1125, 1687, 2530, 3795, 5692,
        // 8538); its lowest draw, 4269 ms, is past the cap: always 2 s.
        assert_eq!(p.delay(8, &mut (), &mut d), Micros::from_s(2));
        // Huge retry numbers stop growing past the cap, and stay capped.
        let mut u = ScriptedDraws::new(&[0.0]);
        assert_eq!(p.delay(u32::MAX, &mut (), &mut u), Micros::from_s(2));
    }
}
