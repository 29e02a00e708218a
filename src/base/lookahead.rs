//! The server model's environment generator, drawn ahead: the next
//! [`AHEAD`] words of the PCG stream, each with its exponential draw
//! computed beside it, so a run's exponential times (arrival gaps, service
//! times, delays) cost a load instead of a call to libm's `log`.
//!
//! Why: `log` was a fifth of the M/M/c benchmark's time, and more than its
//! instructions, because each call sat on the event loop's critical path
//! (the drawn time decides where the event goes in the queue) and spilled
//! the loop's registers around it. Computed [`AHEAD`] at a time, the calls
//! are independent and overlap. The stream is unchanged: every consumer
//! takes the next word in order, whatever it makes of it (a uniform, a
//! fraction, an exponential), and each value is computed by the same
//! expression as from the generator itself, so every run is the same bit
//! for bit (tested, and every committed result regenerated). A word taken
//! for anything but an exponential wastes its `log`; the server model's
//! draws are mostly exponential.

use std::convert::Infallible;

use rand::rand_core::utils::fill_bytes_via_next_word;
use rand::{Rng, RngExt, TryRng};
use rand_pcg::Pcg64Mcg;

use crate::base::draws::{Draws, unit_above_zero_of};
/// Words drawn ahead: their exponentials are computed together, 1 KB of
/// state in all.
pub const AHEAD: usize = 64;

/// A generator whose next [`AHEAD`] words and their exponential draws are
/// computed ahead (see the module's text).
#[derive(Debug, Clone)]
pub struct Lookahead {
    rng: Pcg64Mcg,
    words: [u64; AHEAD],
    exponentials: [f64; AHEAD],
    /// The index of the next word to hand out; [`AHEAD`] when all are used.
    next: usize,
}

impl Lookahead {
    pub fn new(rng: Pcg64Mcg) -> Self {
        Lookahead {
            rng,
            words: [0; AHEAD],
            exponentials: [0.0; AHEAD],
            next: AHEAD,
        }
    }

    /// Draws the next [`AHEAD`] words and their exponentials.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        for (word, exponential) in self.words.iter_mut().zip(&mut self.exponentials) {
            *word = self.rng.next_u64();
            *exponential = -unit_above_zero_of(*word).ln();
        }
        self.next = 0;
    }

    /// The index of the next word, which is then used.
    #[inline(always)]
    fn take(&mut self) -> usize {
        if self.next == AHEAD {
            self.refill();
        }
        let at = self.next;
        self.next += 1;
        // The mask proves the index in range (no bounds check).
        at % AHEAD
    }
}

impl TryRng for Lookahead {
    type Error = Infallible;

    /// As the PCG generator: the low half of the next word.
    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.try_next_u64().map(|word| word as u32)
    }

    #[inline(always)]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let at = self.take();
        Ok(self.words[at])
    }

    /// As the PCG generator: whole words, little-endian.
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        fill_bytes_via_next_word(dest, || self.try_next_u64())
    }
}

impl Draws for Lookahead {
    #[inline]
    fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi, "empty range {lo}..={hi}");
        self.random_range(lo..=hi)
    }

    #[inline(always)]
    fn unit_above_zero(&mut self) -> f64 {
        unit_above_zero_of(self.next_u64())
    }

    #[inline(always)]
    fn exp1(&mut self) -> f64 {
        let at = self.take();
        self.exponentials[at]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;

    /// Every kind of draw, in a mixed order that crosses many refills,
    /// is the generator's own draw bit for bit: the stream and every value
    /// made from it are unchanged.
    #[test]
    fn every_draw_is_the_generators_own() {
        for seed in [0, 7, u64::MAX] {
            let (mut plain, mut ahead) = (job_rng(seed), Lookahead::new(job_rng(seed)));
            for i in 0u64..50_000 {
                match i % 7 {
                    0 | 3 => assert_eq!(plain.exp1().to_bits(), ahead.exp1().to_bits()),
                    1 => assert_eq!(plain.uniform(0, i), ahead.uniform(0, i)),
                    2 => assert_eq!(
                        plain.unit_above_zero().to_bits(),
                        ahead.unit_above_zero().to_bits()
                    ),
                    4 => assert_eq!(plain.next_u32(), ahead.next_u32()),
                    5 => {
                        // An odd length: a partial word at the end.
                        let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
                        plain.fill_bytes(&mut a);
                        ahead.fill_bytes(&mut b);
                        assert_eq!(a, b);
                    }
                    _ => assert_eq!(plain.random::<f64>(), ahead.random::<f64>()),
                }
            }
        }
    }

    /// The exponential draw is −ln of the fraction: mean 1 over a million
    /// draws (standard error 0.001; 5 standard errors allowed).
    #[test]
    fn exponential_draws_have_mean_one() {
        let mut ahead = Lookahead::new(job_rng(3));
        let n = 1_000_000;
        let mean = (0..n).map(|_| ahead.exp1()).sum::<f64>() / f64::from(n);
        assert!((mean - 1.0).abs() < 0.005, "{mean}");
    }
}
