//! The random source every policy draws from.
//!
//! Policies never own a generator: they are handed a [`Draws`], so the engine
//! can give each run one seeded generator, and tests can inject the exact draws
//! a published vector uses ([`ScriptedDraws`]).

use rand::{Rng, RngExt};
use rand_pcg::Pcg64Mcg;

use crate::base::time::Micros;

/// A source of uniform integer draws (counts, bits, and the ticks of times).
pub trait Draws {
    /// A uniform draw on `lo..=hi` (both ends included). Requires `lo <= hi`.
    fn uniform(&mut self, lo: u64, hi: u64) -> u64;

    /// A uniform time on `lo..=hi`: [`Self::uniform`] on the µs (every
    /// delay a policy draws).
    #[inline(always)]
    fn uniform_us(&mut self, lo: Micros, hi: Micros) -> Micros {
        Micros::from_ticks(self.uniform(lo.ticks(), hi.ticks()))
    }

    /// A uniform fraction in (0, 1] with 53 random bits: never 0, so its
    /// logarithm is finite (inverse-transform draws of exponential gaps and
    /// normal deviates).
    #[inline]
    fn unit_above_zero(&mut self) -> f64 {
        // 53 uniform bits, placed where a generator's word has them.
        unit_above_zero_of(self.uniform(0, u64::MAX >> 11) << 11)
    }

    /// A standard exponential draw, −ln U of [`Self::unit_above_zero`]
    /// (inverse transform): every exponential time a run draws.
    #[inline]
    fn exp1(&mut self) -> f64 {
        -self.unit_above_zero().ln()
    }
}

/// The fraction in [0, 1) that the top 53 of `bits` make.
#[inline]
pub fn unit_of_bits(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The generator of every simulated run: PCG-64 MCG (`rand_pcg`), pinned with
/// `rand` in `Cargo.toml` because its output is part of herdsim's results.
impl Draws for Pcg64Mcg {
    #[inline]
    fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi, "empty range {lo}..={hi}");
        self.random_range(lo..=hi)
    }

    /// The default's fraction, `uniform(0, 2^53 − 1)`, without the range
    /// arithmetic: for a range of 2^53, `rand`'s widening multiply keeps a
    /// word's top 53 bits, and its bias check never asks for a second word
    /// (the low half is a multiple of 2^53, never above 2^64 − 2^53), so
    /// the draw is `next_u64() >> 11`, bit for bit (tested).
    #[inline]
    fn unit_above_zero(&mut self) -> f64 {
        unit_above_zero_of(self.next_u64())
    }
}

/// The fraction in (0, 1] that the top 53 bits of a generator's `word` make
/// ([`Draws::unit_above_zero`]).
#[inline(always)]
pub fn unit_above_zero_of(word: u64) -> f64 {
    ((word >> 11) as f64 + 1.0) / (1u64 << 53) as f64
}

/// Draws given in advance as fractions of the range, for tests and worked
/// examples: the fraction `u` on `lo..=hi` gives `lo + round(u·(hi − lo))`, so
/// `1.0` is `hi` and `0.0` is `lo`, as in seed 004's `rand[i] * ceiling`.
///
/// Panics when the script runs out: a test that draws more than it planned
/// should fail loudly.
#[derive(Debug, Clone)]
pub struct ScriptedDraws {
    fractions: Vec<f64>,
    next: usize,
}

impl ScriptedDraws {
    /// A script of fractions, each in `[0, 1]`.
    pub fn new(fractions: &[f64]) -> Self {
        assert!(
            fractions.iter().all(|u| (0.0..=1.0).contains(u)),
            "scripted draws are fractions in [0, 1]"
        );
        ScriptedDraws {
            fractions: fractions.to_vec(),
            next: 0,
        }
    }

    /// How many draws have been taken.
    pub fn taken(&self) -> usize {
        self.next
    }
}

impl Draws for ScriptedDraws {
    fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        let u = *self
            .fractions
            .get(self.next)
            .unwrap_or_else(|| panic!("the script has only {} draws", self.fractions.len()));
        self.next += 1;
        lo + (u * (hi - lo) as f64).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn scripted_fractions_map_onto_the_range() {
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.5, 0.7]);
        assert_eq!(d.uniform(10, 20), 10);
        assert_eq!(d.uniform(10, 20), 20);
        assert_eq!(d.uniform(0, 8), 4);
        assert_eq!(d.uniform(0, 100), 70); // 0.7 * 100 = 70.00000000000001 in f64
        assert_eq!(d.taken(), 4);
    }

    #[test]
    #[should_panic(expected = "only 1 draws")]
    fn an_exhausted_script_panics() {
        let mut d = ScriptedDraws::new(&[0.5]);
        d.uniform(0, 1);
        d.uniform(0, 1);
    }

    #[test]
    fn generator_draws_stay_in_range_and_cover_both_ends() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let (mut saw_lo, mut saw_hi) = (false, false);
        for _ in 0..10_000 {
            let x = rng.uniform(3, 6);
            assert!((3..=6).contains(&x));
            saw_lo |= x == 3;
            saw_hi |= x == 6;
        }
        assert!(saw_lo && saw_hi);
        assert_eq!(rng.uniform(5, 5), 5);
    }

    /// The generator's shortcut for `unit_above_zero` must be the default's
    /// draw exactly (every committed server result rests on it): the two
    /// side by side on twin generators, a million draws over four seeds.
    #[test]
    fn the_generators_fraction_is_the_range_draw_bit_for_bit() {
        struct ByRange(Pcg64Mcg);
        impl Draws for ByRange {
            fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
                self.0.random_range(lo..=hi)
            }
        }
        for seed in [0, 1, 42, u64::MAX] {
            let mut fast = Pcg64Mcg::seed_from_u64(seed);
            let mut by_range = ByRange(Pcg64Mcg::seed_from_u64(seed));
            for _ in 0..250_000 {
                assert_eq!(
                    fast.unit_above_zero().to_bits(),
                    by_range.unit_above_zero().to_bits()
                );
            }
        }
    }
}
