//! `constant`: the same delay every retry.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = min(cap, base)`. The cap applies here too, so that every policy keeps
/// its delays in `[0, cap]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constant {
    /// The delay, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for Constant {
    type Walk = ();

    const JITTERED: bool = false;

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _: u32, _: &mut (), _: &mut D) -> Micros {
        self.base.min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn the_delay_never_changes_and_respects_the_cap() {
        let mut none = ScriptedDraws::new(&[]);
        let p = Constant {
            base: Micros::from_us(250),
            cap: Micros::from_ms(20),
        };
        assert!((1..100).all(|k| p.delay(k, &mut (), &mut none) == Micros::from_us(250)));
        let low_cap = Constant {
            base: Micros::from_us(250),
            cap: Micros::from_us(100),
        };
        assert_eq!(low_cap.delay(1, &mut (), &mut none), Micros::from_us(100));
    }
}
