//! `linear`: a delay growing by a fixed step.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = min(cap, base + (k−1)·step)` (seed 003's linear backoff: 5 s, 7 s, 9 s…
/// for base 5 s, step 2 s). Saturating, so no retry number overflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linear {
    /// First retry's delay, µs.
    pub base: Micros,
    /// Growth per retry, µs.
    pub step: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for Linear {
    type Walk = ();

    const JITTERED: bool = false;

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), _: &mut D) -> Micros {
        let growth = self.step.saturating_mul(u64::from(retry.saturating_sub(1)));
        self.base.saturating_add(growth).min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn seed_003_linear_sequence() {
        // initial_delay 5s, increment 2s: 5s, 7s, 9s, 11s, 13s.
        let p = Linear {
            base: Micros::from_s(5),
            step: Micros::from_s(2),
            cap: Micros::from_s(60),
        };
        let mut none = ScriptedDraws::new(&[]);
        let got: Vec<_> = (1..=5).map(|k| p.delay(k, &mut (), &mut none)).collect();
        assert_eq!(
            got,
            [5_000_000, 7_000_000, 9_000_000, 11_000_000, 13_000_000].map(Micros::from_ticks)
        );
        assert_eq!(p.delay(u32::MAX, &mut (), &mut none), Micros::from_s(60));
    }
}
