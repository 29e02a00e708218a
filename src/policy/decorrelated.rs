//! `decorrelated`: decorrelated jitter, a random walk (seed 000).

use super::Backoff;
use crate::draws::Draws;
use crate::time::Micros;

/// `d = min(cap, U[base, 3·prev])`, `prev` starting at `base` and becoming the
/// capped `d` (seed 000: the walk advances to the delay actually used).
///
/// The retry number is ignored: asking twice gives two draws that both advance
/// the walk. When the cap is below the base, `prev` can fall below `base/3`;
/// the upper end is then raised to `base` (as seed 002's Go version does), so
/// the range is never empty and every delay is the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecorrelatedJitter {
    /// The walk's floor and starting point, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for DecorrelatedJitter {
    /// The previous delay, µs.
    type Walk = Micros;

    fn start(&self) -> Micros {
        self.base
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _retry: u32, prev: &mut Micros, draws: &mut D) -> Micros {
        let high = prev.saturating_mul(3).max(self.base);
        let d = draws.uniform(self.base, high).min(self.cap);
        *prev = d;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::ScriptedDraws;

    const P: DecorrelatedJitter = DecorrelatedJitter {
        base: 100_000,
        cap: 10_000_000,
    };

    #[test]
    fn first_draw_spans_base_to_three_base() {
        let mut d = ScriptedDraws::new(&[0.0, 1.0]);
        assert_eq!(P.delay(1, &mut P.start(), &mut d), 100_000);
        assert_eq!(P.delay(1, &mut P.start(), &mut d), 300_000);
    }

    #[test]
    fn the_walk_advances_to_the_capped_delay() {
        // Draw the top of the range until the cap bites; the walk must hold the
        // cap, so the next range is [base, 3·cap], not the uncapped draw's.
        let mut prev = P.start();
        let mut d = ScriptedDraws::new(&[1.0; 6]);
        let got: Vec<_> = (1..=6).map(|k| P.delay(k, &mut prev, &mut d)).collect();
        assert_eq!(
            got,
            [
                300_000, 900_000, 2_700_000, 8_100_000, 10_000_000, 10_000_000
            ]
        );
        assert_eq!(prev, 10_000_000);
        let mut half = ScriptedDraws::new(&[0.5]);
        // U[base, 3·cap] at 0.5 = 100 ms + 0.5·29.9 s = 15.05 s, capped.
        assert_eq!(P.delay(7, &mut prev, &mut half), 10_000_000);
    }

    #[test]
    fn the_same_retry_number_twice_gives_two_draws_that_both_advance() {
        let mut prev = P.start();
        let mut d = ScriptedDraws::new(&[1.0, 1.0]);
        let first = P.delay(3, &mut prev, &mut d);
        let second = P.delay(3, &mut prev, &mut d);
        assert_eq!((first, second), (300_000, 900_000));
        assert_eq!(d.taken(), 2);
    }

    #[test]
    fn a_cap_below_the_base_pins_every_delay_to_the_cap() {
        let p = DecorrelatedJitter {
            base: 100_000,
            cap: 20_000,
        };
        let mut prev = p.start();
        let mut d = ScriptedDraws::new(&[0.0, 0.3, 1.0, 0.0]);
        for k in 1..=4 {
            assert_eq!(p.delay(k, &mut prev, &mut d), 20_000);
        }
    }
}
