//! `equal`: equal jitter.

use super::{Backoff, CapMode, ceiling_for};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = U[⌊c_k/2⌋, c_k]`: half the ceiling is a guaranteed wait, the other half
/// is drawn (seed 004: `ceiling/2 + rand·ceiling/2`). One draw per retry. With
/// [`CapMode::After`] the draw uses the uncapped ceiling and is then clamped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EqualJitter {
    /// First retry's ceiling, µs.
    pub base: Micros,
    /// Largest ceiling, µs.
    pub cap: Micros,
    /// Added to every retry's exponent: 1 makes the first ceiling `2·base`,
    /// as the AWS Architecture Blog simulator does.
    pub first_exponent: u32,
    /// The ceiling's growth per retry (2: doubling).
    pub multiplier: f64,
    /// Cap the ceiling before the draw, or clamp the draw after.
    pub cap_mode: CapMode,
}

impl Backoff for EqualJitter {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        let retry = retry.saturating_add(self.first_exponent);
        let ceiling = ceiling_for(self.base, self.cap, self.multiplier, retry, self.cap_mode);
        // With the cap after the draw, the clamp puts every draw above the cap
        // on it.
        draws.uniform_us(ceiling / 2, ceiling).min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    const P: EqualJitter = EqualJitter {
        base: Micros::from_ms(1),
        cap: Micros::from_ms(10),
        first_exponent: 0,
        multiplier: 2.0,
        cap_mode: CapMode::Before,
    };

    #[test]
    fn half_fixed_half_drawn() {
        // base 1 ms, cap 10 ms: ceilings 1, 2, 4, 8, 10 ms.
        let p = P;
        let mut d = ScriptedDraws::new(&[1.0, 0.5, 1.0, 0.5, 0.0]);
        let got: Vec<_> = (1..=5).map(|k| p.delay(k, &mut (), &mut d)).collect();
        assert_eq!(
            got,
            [1_000, 1_500, 4_000, 6_000, 5_000].map(Micros::from_ticks)
        );
    }

    #[test]
    fn capping_after_the_draw_lands_on_the_cap() {
        // Retry 6, base 1 ms: uncapped ceiling 32 ms, so U[16, 32] ms clamped
        // to a 10 ms cap is always the cap; capped first it is U[5, 10] ms.
        let after = EqualJitter {
            cap_mode: CapMode::After,
            ..P
        };
        let mut d = ScriptedDraws::new(&[0.0, 0.0]);
        assert_eq!(after.delay(6, &mut (), &mut d), Micros::from_ms(10));
        assert_eq!(P.delay(6, &mut (), &mut d), Micros::from_ms(5));
    }
}
