//! `none`: plain capped exponential backoff, no jitter.

use super::{Backoff, multiplied_ceiling};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = c_k = min(cap, base·m^(k−1))`, m the multiplier (2 by default:
/// doubling). Draws nothing: every client that failed
/// at the same instant retries at the same instant, so on the slot resource each
/// wave is served one client and the rest re-synchronise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoJitter {
    /// First retry's delay, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
    /// Added to every retry's exponent: 1 makes the first ceiling `2·base`,
    /// as the AWS Architecture Blog simulator does.
    pub first_exponent: u32,
    /// The ceiling's growth per retry (2: doubling).
    pub multiplier: f64,
}

impl Backoff for NoJitter {
    type Walk = ();

    const JITTERED: bool = false;

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), _: &mut D) -> Micros {
        multiplied_ceiling(
            self.base,
            self.cap,
            self.multiplier,
            retry.saturating_add(self.first_exponent),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn doubles_to_the_cap_and_reaches_it_at_retry_8() {
        // Seed 000: from 100 ms to a 10 s cap, plain exponential reaches the cap
        // at attempt 8, every time.
        let p = NoJitter {
            base: Micros::from_ms(100),
            cap: Micros::from_s(10),
            first_exponent: 0,
            multiplier: 2.0,
        };
        let mut none = ScriptedDraws::new(&[]);
        let delays: Vec<_> = (1..=9).map(|k| p.delay(k, &mut (), &mut none)).collect();
        assert_eq!(
            delays,
            [
                100_000, 200_000, 400_000, 800_000, 1_600_000, 3_200_000, 6_400_000, 10_000_000,
                10_000_000
            ]
            .map(Micros::from_ticks)
        );
        assert_eq!(delays.iter().position(|&d| d == p.cap), Some(7), "retry 8");
    }
}

#[cfg(test)]
mod multiplier_tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn a_multiplier_of_1_5_grows_the_delay_by_half() {
        // 100 ms · 1.5^(k−1): 100, 150, 225, 337.5, 506.25, 759.375 ms (each
        // exact in binary, floored to whole µs), then the 1 s cap.
        let p = NoJitter {
            base: Micros::from_ms(100),
            cap: Micros::from_s(1),
            first_exponent: 0,
            multiplier: 1.5,
        };
        let mut none = ScriptedDraws::new(&[]);
        let delays: Vec<_> = (1..=8).map(|k| p.delay(k, &mut (), &mut none)).collect();
        assert_eq!(
            delays,
            [
                100_000, 150_000, 225_000, 337_500, 506_250, 759_375, 1_000_000, 1_000_000
            ]
            .map(Micros::from_ticks)
        );
        // The first exponent adds to k − 1 as it does for doubling.
        let shifted = NoJitter {
            first_exponent: 1,
            ..p
        };
        assert_eq!(shifted.delay(1, &mut (), &mut none), Micros::from_ms(150));
    }
}
