//! `no-backoff`: retry at once.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = 0`: the AWS Architecture Blog simulator's `NoBackoff`, the baseline
/// every backoff is measured against. It only makes sense where a failed
/// attempt itself takes time (the OCC model's network round trips) or with a
/// cap on attempts; elsewhere a client would retry at the same instant forever,
/// so [`crate::RunSpec::validate`] refuses it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoBackoff;

impl Backoff for NoBackoff {
    type Walk = ();

    const JITTERED: bool = false;

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _: u32, _: &mut (), _: &mut D) -> Micros {
        Micros::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn every_delay_is_zero_and_draws_nothing() {
        let mut d = ScriptedDraws::new(&[]);
        assert!((1..1_000).all(|k| NoBackoff.delay(k, &mut (), &mut d) == Micros::ZERO));
        assert_eq!(d.taken(), 0);
    }
}
