//! `equal`: equal jitter.

use super::{Backoff, exponential_ceiling};
use crate::draws::Draws;
use crate::time::Micros;

/// `d = U[⌊c_k/2⌋, c_k]`: half the ceiling is a guaranteed wait, the other half
/// is drawn (seed 004: `ceiling/2 + rand·ceiling/2`). One draw per retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EqualJitter {
    /// First retry's ceiling, µs.
    pub base: Micros,
    /// Largest ceiling, µs.
    pub cap: Micros,
    /// Added to every retry's exponent: 1 makes the first ceiling `2·base`,
    /// as the AWS Architecture Blog simulator does.
    pub first_exponent: u32,
}

impl Backoff for EqualJitter {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        let ceiling = exponential_ceiling(
            self.base,
            self.cap,
            retry.saturating_add(self.first_exponent),
        );
        draws.uniform(ceiling / 2, ceiling)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::ScriptedDraws;

    #[test]
    fn half_fixed_half_drawn() {
        // base 1 ms, cap 10 ms: ceilings 1, 2, 4, 8, 10 ms.
        let p = EqualJitter {
            base: 1_000,
            cap: 10_000,
            first_exponent: 0,
        };
        let mut d = ScriptedDraws::new(&[1.0, 0.5, 1.0, 0.5, 0.0]);
        let got: Vec<_> = (1..=5).map(|k| p.delay(k, &mut (), &mut d)).collect();
        assert_eq!(got, [1_000, 1_500, 4_000, 6_000, 5_000]);
    }
}
