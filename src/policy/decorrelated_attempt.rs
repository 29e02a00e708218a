//! `decorrelated-attempt`: seed 002's decorrelated jitter as its `simulate()`
//! actually calls it.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::{Micros, US_PER_MS};

/// `d = min(cap, U between base and 3·(k−1) ms)`, for retry k.
///
/// Seed 002's `simulate()` picks its call with
/// `strategy(attempt) if strategy.__code__.co_argcount == 1 else strategy(prev)`.
/// All four of its strategies take one argument, so `decorrelated_jitter`, which
/// expects the previous delay in ms, is handed the failed attempt's number
/// (0, 1, 2, …) instead, and draws `uniform(BASE_MS, attempt·3)`. Python's
/// `uniform(a, b)` with `b < a` draws from `[b, a]`, so for the first 34
/// retries the delay lies between `3·(k−1)` ms and the base, after which it
/// grows by only 3 ms per retry. This policy reproduces that, so the
/// difference from the intended random walk can be measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecorrelatedAttempt {
    /// The fixed end of the draw, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for DecorrelatedAttempt {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        let attempt_as_ms = u64::from(retry.saturating_sub(1)) * 3 * US_PER_MS;
        let (low, high) = if attempt_as_ms < self.base {
            (attempt_as_ms, self.base)
        } else {
            (self.base, attempt_as_ms)
        };
        draws.uniform_us(low, high).min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    const P: DecorrelatedAttempt = DecorrelatedAttempt {
        base: Micros::from_ms(100),
        cap: Micros::from_s(20),
    };

    #[test]
    fn the_attempt_number_stands_in_for_the_previous_delay() {
        // Retry 1 follows attempt 0: uniform(100, 0) ms, i.e. [0, 100] ms.
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.5]);
        assert_eq!(P.delay(1, &mut (), &mut d), Micros::ZERO);
        assert_eq!(P.delay(1, &mut (), &mut d), Micros::from_ms(100));
        // Retry 11 follows attempt 10: [30, 100] ms; the middle is 65 ms.
        assert_eq!(P.delay(11, &mut (), &mut d), Micros::from_ms(65));
    }

    #[test]
    fn past_attempt_34_it_grows_three_ms_per_retry() {
        let mut d = ScriptedDraws::new(&[1.0, 1.0, 0.0]);
        assert_eq!(P.delay(35, &mut (), &mut d), Micros::from_ms(102));
        assert_eq!(P.delay(101, &mut (), &mut d), Micros::from_ms(300));
        assert_eq!(P.delay(101, &mut (), &mut d), Micros::from_ms(100));
    }

    #[test]
    fn the_cap_still_applies() {
        let mut d = ScriptedDraws::new(&[1.0]);
        assert_eq!(P.delay(100_000, &mut (), &mut d), Micros::from_s(20));
    }
}
