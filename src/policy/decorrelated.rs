//! `decorrelated`: decorrelated jitter, a random walk (seed 000).

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

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
        let d = self.draw(*prev, draws).min(self.cap);
        *prev = d;
        d
    }
}

impl DecorrelatedJitter {
    /// The walk's draw before the cap: `U[base, max(base, 3·prev)]`.
    #[inline]
    fn draw<D: Draws + ?Sized>(&self, prev: Micros, draws: &mut D) -> Micros {
        draws.uniform_us(self.base, prev.saturating_mul(3).max(self.base))
    }

    /// Walks one client from `base` until a delay equals the cap, and reports
    /// how it went (seed 000's "draws to reach the cap" and step ratio).
    ///
    /// Requires `cap ≥ base` (otherwise every delay is the cap at once).
    pub fn walk_to_cap<D: Draws + ?Sized>(&self, draws: &mut D) -> CapWalk {
        let mut walk = CapWalk::default();
        let mut prev = self.start();
        loop {
            let drawn = self.draw(prev, draws);
            walk.draws += 1;
            walk.drawn_total += u128::from(drawn.ticks());
            walk.prev_total += u128::from(prev.ticks());
            prev = drawn.min(self.cap);
            if prev == self.cap {
                return walk;
            }
        }
    }
}

/// One decorrelated walk from the base to the cap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CapWalk {
    /// Draws taken until a delay equalled the cap (that draw included).
    pub draws: u32,
    /// Sum of the draws before the cap was applied, µs.
    pub drawn_total: u128,
    /// Sum of the previous delays each draw grew from, µs.
    pub prev_total: u128,
}

impl CapWalk {
    /// Adds another walk's totals, to pool many walks.
    pub fn pool(self, other: CapWalk) -> CapWalk {
        CapWalk {
            draws: self.draws + other.draws,
            drawn_total: self.drawn_total + other.drawn_total,
            prev_total: self.prev_total + other.prev_total,
        }
    }

    /// The mean step ratio: mean draw over mean previous delay. Its
    /// expectation per step is `(base + 3·prev)/(2·prev)`, seed 000's "expected
    /// step … about 1.5x, measured at 1.53".
    pub fn step_ratio(&self) -> f64 {
        self.drawn_total as f64 / self.prev_total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    const P: DecorrelatedJitter = DecorrelatedJitter {
        base: Micros::from_ms(100),
        cap: Micros::from_s(10),
    };

    #[test]
    fn first_draw_spans_base_to_three_base() {
        let mut d = ScriptedDraws::new(&[0.0, 1.0]);
        assert_eq!(P.delay(1, &mut P.start(), &mut d), Micros::from_ms(100));
        assert_eq!(P.delay(1, &mut P.start(), &mut d), Micros::from_ms(300));
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
            .map(Micros::from_ticks)
        );
        assert_eq!(prev, Micros::from_s(10));
        let mut half = ScriptedDraws::new(&[0.5]);
        // U[base, 3·cap] at 0.5 = 100 ms + 0.5·29.9 s = 15.05 s, capped.
        assert_eq!(P.delay(7, &mut prev, &mut half), Micros::from_s(10));
    }

    #[test]
    fn the_same_retry_number_twice_gives_two_draws_that_both_advance() {
        let mut prev = P.start();
        let mut d = ScriptedDraws::new(&[1.0, 1.0]);
        let first = P.delay(3, &mut prev, &mut d);
        let second = P.delay(3, &mut prev, &mut d);
        assert_eq!(
            (first, second),
            (Micros::from_ms(300), Micros::from_ms(900))
        );
        assert_eq!(d.taken(), 2);
    }

    #[test]
    fn a_walk_to_the_cap_counts_its_draws_and_steps() {
        // Top of the range each time: 300, 900, 2700, 8100 ms, then 24.3 s capped.
        let mut d = ScriptedDraws::new(&[1.0; 5]);
        let walk = P.walk_to_cap(&mut d);
        assert_eq!(walk.draws, 5);
        assert_eq!(
            walk.prev_total,
            100_000 + 300_000 + 900_000 + 2_700_000 + 8_100_000
        );
        assert_eq!(walk.drawn_total, 3 * walk.prev_total);
        assert_eq!(walk.step_ratio(), 3.0);
    }

    #[test]
    fn a_cap_below_the_base_pins_every_delay_to_the_cap() {
        let p = DecorrelatedJitter {
            base: Micros::from_ms(100),
            cap: Micros::from_ms(20),
        };
        let mut prev = p.start();
        let mut d = ScriptedDraws::new(&[0.0, 0.3, 1.0, 0.0]);
        for k in 1..=4 {
            assert_eq!(p.delay(k, &mut prev, &mut d), Micros::from_ms(20));
        }
    }
}
