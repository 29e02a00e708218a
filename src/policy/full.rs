//! `full`: full jitter.

use super::{Backoff, CapMode, ceiling_for};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = U[0, c_k]`: clamp the window first, then pick a point inside it (seed
/// 004's order of operations), so `0 ≤ d ≤ c_k ≤ cap` on every retry. A zero
/// delay is allowed: full jitter may retry at once. [`CapMode::After`] is seed
/// 004's brute-force draft, `min(cap, U[0, base·2^(k−1)])`, kept to measure
/// the bunching it causes.
///
/// With a multiplier m, `c_k = min(cap, base·m^(k−1))`: then this is gRFC
/// A6's retry backoff as written before its 2024-08-23 update,
/// `random(0, min(initialBackoff·backoffMultiplier^(n−1), maxBackoff))`, as
/// grpc-go ran it before v1.69.0 (`rand.Int64N(int64(cur))`, `stream.go`)
/// and grpc-java before v1.71.0 (`(long)(interval·random.nextDouble())`,
/// `RetriableStream.java`); gRPC's retry policy now is
/// [`super::GrpcRetry`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FullJitter {
    /// First retry's ceiling, µs.
    pub base: Micros,
    /// Largest ceiling, µs.
    pub cap: Micros,
    /// Added to every retry's exponent: 1 makes the first ceiling `2·base`,
    /// as the AWS Architecture Blog simulator does.
    pub first_exponent: u32,
    /// The ceiling's growth per retry (2: doubling).
    pub multiplier: f64,
    /// Cap the ceiling before the draw, or clamp the draw after.
    pub cap_mode: CapMode,
}

impl Backoff for FullJitter {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        let retry = retry.saturating_add(self.first_exponent);
        let ceiling = ceiling_for(self.base, self.cap, self.multiplier, retry, self.cap_mode);
        draws.uniform_us(Micros::ZERO, ceiling).min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    /// Seed 004's delays for `draws` under `base`, `cap` (in ms, as the seed
    /// states them), returned in µs.
    fn seed_004(base_ms: f64, cap_ms: f64, draws: &[f64]) -> Vec<Micros> {
        let p = FullJitter {
            base: Micros::from_ticks((base_ms * 1e3) as u64),
            cap: Micros::from_ticks((cap_ms * 1e3) as u64),
            first_exponent: 0,
            multiplier: 2.0,
            cap_mode: CapMode::Before,
        };
        let mut d = ScriptedDraws::new(draws);
        (1..=draws.len() as u32)
            .map(|k| p.delay(k, &mut (), &mut d))
            .collect()
    }

    #[test]
    fn seed_004_worked_trace() {
        // backoff_jitter(1.0, 10.0, 5, [1.0, 0.5, 1.0, 0.5, 0.0]) -> [1, 1, 4, 4, 0]
        assert_eq!(
            seed_004(1.0, 10.0, &[1.0, 0.5, 1.0, 0.5, 0.0]),
            [1_000, 1_000, 4_000, 4_000, 0].map(Micros::from_ticks)
        );
    }

    #[test]
    fn seed_004_cap_below_base() {
        // base 10, cap 3, rand [1.0, 0.5, 0.25] -> [3.0, 1.5, 0.75]
        assert_eq!(
            seed_004(10.0, 3.0, &[1.0, 0.5, 0.25]),
            [3_000, 1_500, 750].map(Micros::from_ticks)
        );
    }

    #[test]
    fn seed_004_zero_draw_is_an_immediate_retry() {
        assert_eq!(seed_004(1.0, 10.0, &[0.0]), [0].map(Micros::from_ticks));
    }

    #[test]
    fn seed_004_float_noise_is_exact_in_integer_time() {
        // base 0.1, cap 5.0, rand [0.7, 0.7, 0.7]: raw float products such as
        // 0.06999999999999999 must come out as 0.07, 0.14, 0.28.
        assert_eq!(
            seed_004(0.1, 5.0, &[0.7, 0.7, 0.7]),
            [70, 140, 280].map(Micros::from_ticks)
        );
    }

    #[test]
    fn seed_004_huge_retry_numbers_are_the_cap() {
        let p = FullJitter {
            base: Micros::from_ms(1),
            cap: Micros::from_ms(10),
            first_exponent: 0,
            multiplier: 2.0,
            cap_mode: CapMode::Before,
        };
        for k in [10_000, 100_000] {
            let mut d = ScriptedDraws::new(&[1.0]);
            assert_eq!(p.delay(k, &mut (), &mut d), Micros::from_ms(10));
        }
    }

    #[test]
    fn the_brute_force_clamp_after_jitter_bug_is_absent() {
        // Seed 004: min(cap, rand·base·2^i) puts ~84% of draws at retry 7 exactly
        // on the cap. Clamping first puts a draw of 0.5 at half the cap.
        let p = FullJitter {
            base: Micros::from_ms(1),
            cap: Micros::from_ms(10),
            first_exponent: 0,
            multiplier: 2.0,
            cap_mode: CapMode::Before,
        };
        let mut d = ScriptedDraws::new(&[0.5]);
        assert_eq!(p.delay(7, &mut (), &mut d), Micros::from_ms(5));
    }

    #[test]
    fn cap_mode_after_is_seed_004s_brute_force_draft() {
        // At retry 7 (i = 6 in seed 004), base 1, cap 10: every draw above
        // 10/64 lands exactly on the cap, about 84% of clients.
        let p = FullJitter {
            base: Micros::from_ms(1),
            cap: Micros::from_ms(10),
            first_exponent: 0,
            multiplier: 2.0,
            cap_mode: CapMode::After,
        };
        let mut d = ScriptedDraws::new(&[0.5, 0.1]);
        assert_eq!(p.delay(7, &mut (), &mut d), Micros::from_ms(10));
        assert_eq!(p.delay(7, &mut (), &mut d), Micros::from_us(6400));
        let mut rng = crate::base::seeding::job_rng(3);
        let at_cap = (0..100_000)
            .filter(|_| p.delay(7, &mut (), &mut rng) == Micros::from_ms(10))
            .count();
        // P(U[0, 64 ms] > 10 ms) = 54,000/64,001 = 0.8437; SE 0.0011; 4 SE.
        let expected = 54_000.0 / 64_001.0;
        assert!((at_cap as f64 / 1e5 - expected).abs() < 0.0046, "{at_cap}");
    }

    #[test]
    fn a_multiplier_grows_the_window_by_it() {
        // base 1 ms, cap 10 ms, multiplier 1.5: ceilings 1, 1.5, 2.25,
        // 3.375, 5.0625 (floored to 5.062), 7.59375 (7.593) ms, then the cap
        // (11.39 ms).
        let p = FullJitter {
            base: Micros::from_ms(1),
            cap: Micros::from_ms(10),
            first_exponent: 0,
            multiplier: 1.5,
            cap_mode: CapMode::Before,
        };
        let mut d = ScriptedDraws::new(&[1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 0.0]);
        let got: Vec<_> = (1..=8).map(|k| p.delay(k, &mut (), &mut d)).collect();
        assert_eq!(
            got,
            [1_000, 1_500, 1_125, 3_375, 5_062, 7_593, 10_000, 0].map(Micros::from_ticks)
        );
        // Capped after the draw, retry 7's uncapped ceiling (11.390 ms) is
        // drawn from and clamped.
        let after = FullJitter {
            cap_mode: CapMode::After,
            ..p
        };
        let mut d = ScriptedDraws::new(&[1.0, 0.5]);
        assert_eq!(after.delay(7, &mut (), &mut d), Micros::from_ms(10));
        assert_eq!(after.delay(7, &mut (), &mut d), Micros::from_us(5695));
    }

    #[test]
    fn multiplier_2_is_the_doubling_before_the_multiplier_bit_for_bit() {
        // The delay as it was computed before the multiplier existed, drawn
        // from the same stream: equal at every retry, both cap modes.
        fn before(p: &FullJitter, retry: u32, rng: &mut impl Draws) -> Micros {
            let retry = retry.saturating_add(p.first_exponent);
            let cap = match p.cap_mode {
                CapMode::Before => p.cap,
                CapMode::After => Micros::MAX,
            };
            let ceiling = crate::policy::exponential_ceiling(p.base, cap, retry);
            rng.uniform_us(Micros::ZERO, ceiling).min(p.cap)
        }
        for (base, cap, first_exponent, cap_mode) in [
            (100_000, 20_000_000, 0, CapMode::Before),
            (1, 1 << 40, 1, CapMode::Before),
            (5_000, 2_000_000, 1, CapMode::After),
            (3, 7, 0, CapMode::After),
        ] {
            let p = FullJitter {
                base: Micros::from_ticks(base),
                cap: Micros::from_ticks(cap),
                first_exponent,
                multiplier: 2.0,
                cap_mode,
            };
            let (mut a, mut b) = (
                crate::base::seeding::job_rng(5),
                crate::base::seeding::job_rng(5),
            );
            for k in (1..=80).chain([1_000, u32::MAX]) {
                assert_eq!(
                    p.delay(k, &mut (), &mut a),
                    before(&p, k, &mut b),
                    "retry {k}"
                );
            }
        }
    }
}
