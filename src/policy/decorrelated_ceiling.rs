//! `decorrelated-ceiling`: decorrelated jitter with the cap inside the draw.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = U[base, min(cap, 3·prev)]`, `prev` starting at `base` and becoming `d`
/// (Polly.Contrib.WaitAndRetry's AWS variant of decorrelated jitter).
///
/// Capping the range rather than the draw means a walk near the cap keeps
/// drawing across `[base, cap]` instead of landing on the cap two times in
/// three, so delays do not bunch at the cap. When the cap is below the base
/// every delay is the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecorrelatedCeiling {
    /// The walk's floor and starting point, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for DecorrelatedCeiling {
    /// The previous delay, µs.
    type Walk = Micros;

    fn start(&self) -> Micros {
        self.base
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _retry: u32, prev: &mut Micros, draws: &mut D) -> Micros {
        if self.cap <= self.base {
            return self.cap;
        }
        let high = prev.saturating_mul(3).min(self.cap).max(self.base);
        let d = draws.uniform_us(self.base, high);
        *prev = d;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;

    const P: DecorrelatedCeiling = DecorrelatedCeiling {
        base: Micros::from_ms(100),
        cap: Micros::from_s(1),
    };

    #[test]
    fn the_cap_bounds_the_range_not_the_draw() {
        let mut prev = P.start();
        let mut d = ScriptedDraws::new(&[1.0, 1.0, 1.0, 0.5]);
        assert_eq!(P.delay(1, &mut prev, &mut d), Micros::from_ms(300));
        assert_eq!(P.delay(2, &mut prev, &mut d), Micros::from_ms(900));
        assert_eq!(P.delay(3, &mut prev, &mut d), Micros::from_s(1));
        // Now the range is [base, cap]: the middle, not the cap.
        assert_eq!(P.delay(4, &mut prev, &mut d), Micros::from_ms(550));
    }

    #[test]
    fn delays_do_not_bunch_at_the_cap() {
        // Walks held at the cap draw uniformly over [base, cap]: about one draw
        // in (cap − base + 1) is exactly the cap; `decorrelated` puts two in
        // three there.
        let mut rng = job_rng(4);
        let (mut at_cap, mut total, mut sum) = (0, 0, Micros::ZERO);
        for _ in 0..2_000 {
            let mut prev = P.start();
            for k in 1..=30 {
                let d = P.delay(k, &mut prev, &mut rng);
                assert!((P.base..=P.cap).contains(&d));
                if k > 10 {
                    at_cap += u32::from(d == P.cap);
                    total += 1;
                    sum += d;
                }
            }
        }
        assert!(at_cap < 10, "{at_cap} of {total} at the cap");
        // Late in the walk the mean sits well inside the range, not at the cap.
        let mean = sum.ticks() as f64 / total as f64;
        assert!(mean < 800_000.0, "{mean}");
    }

    #[test]
    fn a_cap_below_the_base_is_every_delay() {
        let p = DecorrelatedCeiling {
            base: Micros::from_ms(100),
            cap: Micros::from_ms(20),
        };
        let mut prev = p.start();
        let mut none = ScriptedDraws::new(&[]);
        assert_eq!(p.delay(1, &mut prev, &mut none), Micros::from_ms(20));
    }
}
