//! `memoryless`: every retry waits an exponential time of mean `base`. The
//! retrial queue's orbit: no retry remembers the ones before it, so a Markov
//! chain counts the waiting retries instead of tracking each (`herdsim
//! exact` needs it).

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = min(cap, base · E)`, E a standard exponential draw, rounded to the
/// µs. With the cap 40 bases or more above the mean the cut is below e⁻⁴⁰.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memoryless {
    /// The mean delay, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for Memoryless {
    type Walk = ();

    const JITTERED: bool = true;

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _: u32, _: &mut (), draws: &mut D) -> Micros {
        let drawn = (self.base.ticks() as f64 * draws.exp1()).round();
        if drawn >= self.cap.ticks() as f64 {
            self.cap
        } else {
            Micros::from_ticks(drawn as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;

    #[test]
    fn delays_are_exponential_of_mean_base_whatever_the_retry() {
        let p = Memoryless {
            base: Micros::from_ms(10),
            cap: Micros::from_ticks(u64::MAX),
        };
        let mut rng = job_rng(7);
        let n = 200_000;
        let delays: Vec<f64> = (0..n)
            .map(|k| (p.delay(1 + k % 9, &mut (), &mut rng)).ticks() as f64)
            .collect();
        let mean = delays.iter().sum::<f64>() / n as f64;
        // The sample mean's sd is base/√n = 22 µs; 5 sd is 112 µs.
        assert!((mean - 10_000.0).abs() < 112.0, "mean {mean}");
        // P(d > 2·base) = e⁻² = 0.1353, sd √(p(1−p)/n) = 7.6e-4; 5 sd.
        let beyond = delays.iter().filter(|&&d| d > 20_000.0).count() as f64 / n as f64;
        assert!((beyond - (-2.0f64).exp()).abs() < 3.8e-3, "tail {beyond}");
    }

    #[test]
    fn the_cap_bounds_every_delay() {
        let p = Memoryless {
            base: Micros::from_ms(10),
            cap: Micros::from_ms(5),
        };
        let mut rng = job_rng(3);
        assert!((0..1000).all(|k| p.delay(k, &mut (), &mut rng) <= Micros::from_ms(5)));
    }
}
