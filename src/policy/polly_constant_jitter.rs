//! `polly-constant-jitter`: Polly v8's `DelayBackoffType.Constant` with
//! `UseJitter = true`.

use super::Backoff;
use super::polly_jitter::jittered;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = min(cap, base·U[0.75, 1.25))` at every retry (Polly's `ApplyJitter`
/// on the constant `Delay`, then `MaxDelay`). Without jitter Polly's
/// constant backoff is herdsim's `constant`. One draw per retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollyConstantJitter {
    /// Delay, µs.
    pub base: Micros,
    /// MaxDelay, µs.
    pub cap: Micros,
}

impl Backoff for PollyConstantJitter {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _: u32, _: &mut (), draws: &mut D) -> Micros {
        jittered(self.base.ticks() as f64, self.cap, draws)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn plus_or_minus_a_quarter_then_the_cap() {
        // Polly's default Delay, 2 s: 1.5 s at U = 0, 2 s at U = 0.5, just
        // under 2.5 s at the top draw.
        let p = PollyConstantJitter {
            base: Micros::from_s(2),
            cap: Micros::from_ticks(u64::MAX),
        };
        let mut d = ScriptedDraws::new(&[0.0, 0.5, 1.0]);
        assert_eq!(p.delay(1, &mut (), &mut d), Micros::from_ms(1500));
        assert_eq!(p.delay(2, &mut (), &mut d), Micros::from_s(2));
        assert_eq!(
            p.delay(3, &mut (), &mut d),
            Micros::from_ms(2500),
            "2.5 s less 2^-53 of 1 s, rounded"
        );
        // MaxDelay 2.2 s clamps the jittered value, not the base.
        let capped = PollyConstantJitter {
            base: Micros::from_s(2),
            cap: Micros::from_ms(2200),
        };
        let mut d = ScriptedDraws::new(&[1.0, 0.0]);
        assert_eq!(capped.delay(1, &mut (), &mut d), Micros::from_ms(2200));
        assert_eq!(capped.delay(1, &mut (), &mut d), Micros::from_ms(1500));
    }
}
