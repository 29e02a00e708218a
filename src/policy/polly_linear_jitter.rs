//! `polly-linear-jitter`: Polly v8's `DelayBackoffType.Linear` with
//! `UseJitter = true`.

use super::Backoff;
use super::polly_jitter::jittered;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d_k = min(cap, k·base·U[0.75, 1.25))`: Polly's linear delay
/// `(attempt + 1)·Delay`, its attempt counting retries from 0, so retry k
/// waits k·base before the jitter (`ApplyJitter`), then `MaxDelay`. Without
/// jitter Polly's linear backoff is herdsim's `linear` with the step equal
/// to the base. One draw per retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollyLinearJitter {
    /// Delay, µs.
    pub base: Micros,
    /// MaxDelay, µs.
    pub cap: Micros,
}

impl Backoff for PollyLinearJitter {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        jittered(f64::from(retry) * self.base.ticks() as f64, self.cap, draws)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn the_kth_retry_jitters_k_times_the_base() {
        // Delay 2 s: retry 1 around 2 s, retry 3 around 6 s (4.5 to 7.5 s).
        let p = PollyLinearJitter {
            base: Micros::from_s(2),
            cap: Micros::from_ticks(u64::MAX),
        };
        let mut d = ScriptedDraws::new(&[0.5, 0.0, 1.0]);
        assert_eq!(p.delay(1, &mut (), &mut d), Micros::from_s(2));
        assert_eq!(p.delay(3, &mut (), &mut d), Micros::from_ms(4500));
        assert_eq!(p.delay(3, &mut (), &mut d), Micros::from_ms(7500));
        // MaxDelay 5 s: retry 3's upper draws are clamped; retry 10 always.
        let capped = PollyLinearJitter {
            base: Micros::from_s(2),
            cap: Micros::from_s(5),
        };
        let mut d = ScriptedDraws::new(&[1.0, 0.0]);
        assert_eq!(capped.delay(3, &mut (), &mut d), Micros::from_s(5));
        assert_eq!(
            capped.delay(10, &mut (), &mut d),
            Micros::from_s(5),
            "15 s × 0.75 > 5 s"
        );
        let mut none = ScriptedDraws::new(&[0.0]);
        assert_eq!(
            capped.delay(u32::MAX, &mut (), &mut none),
            Micros::from_s(5)
        );
    }
}
