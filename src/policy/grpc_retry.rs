//! `grpc-retry`: gRPC's retry policy (gRFC A6), as gRPC's code runs it.

use super::{Backoff, multiplied_ceiling};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// gRPC's retry policy (gRFC A6, "Exponential Backoff"; a service config's
/// `retryPolicy` with `initialBackoff` = base, `maxBackoff` = cap and
/// `backoffMultiplier` = m): retry k waits
/// `d = c_k·U[0.8, 1.2]` with `c_k = min(cap, base·m^(k−1))`, the first retry
/// jittered too, drawn as the whole µs `U[⌊4·c_k/5⌋, ⌊6·c_k/5⌋]`. As in
/// gRPC, the jitter comes after the cap, so a delay may reach 1.2·cap.
///
/// Written from the code, not the formula: grpc-go's
/// `csAttempt.shouldRetry` (`stream.go`, since v1.69.0, commit 4c07bca)
/// computes `cur = min(initialBackoff·math.Pow(m, n), maxBackoff)` for the
/// n-th retry since the last pushback (n from 0) and waits
/// `int64(cur·(0.8 + 0.4·rand.Float64()))` ns; grpc-java's
/// `RetriableStream.makeRetryDecision` (`core/.../RetriableStream.java`,
/// `intervalWithJitter`, since v1.80.0, commit 024fdd0; v1.71 to v1.79 drew
/// the factor from [0.4, 1.2) by mistake) waits
/// `(long)(interval·(0.4·nextDouble() + 0.8))` ns and then sets
/// `interval = min((long)(interval·m), maxBackoff)`. gRFC A6 says
/// the same since its 2024-08-23 update (grpc/proposal commit dc9fd4f:
/// `min(initialBackoff*backoffMultiplier**(n-1), maxBackoff) *
/// random(0.8, 1.2)`). gRPC's C-core (under grpcio, C++, Ruby, PHP and the
/// other wrapped languages) has drawn it so since its retries were written:
/// its retry filter's `BackOff` with `RETRY_BACKOFF_JITTER` 0.2
/// (`src/core/util/backoff.cc`: the initial backoff, then
/// `min(current·m, maxBackoff)`, each times `Uniform(0.8, 1.2)`).
///
/// Before that update A6 said, and grpc-go and grpc-java did,
/// `U(0, min(initialBackoff·m^(n−1), maxBackoff))`: that is full jitter with
/// the multiplier, `--policy full --multiplier M`, not this policy.
///
/// `c_k` is herdsim's exponential ceiling ([`multiplied_ceiling`]): whole µs,
/// m^(k−1) by repeated squaring as Go's `math.Pow` takes a whole exponent
/// (Java multiplies once per retry and truncates to whole ns each time, at
/// most a few ns apart). gRPC draws a continuous factor and truncates to the
/// ns; herdsim's draw of whole µs, both ends included, is within 1 µs of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrpcRetry {
    /// `initialBackoff`, µs.
    pub base: Micros,
    /// `maxBackoff`, µs.
    pub cap: Micros,
    /// `backoffMultiplier`, above 1.
    pub multiplier: f64,
}

impl Backoff for GrpcRetry {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        let ceiling = multiplied_ceiling(self.base, self.cap, self.multiplier, retry);
        // ⌊4c/5⌋ and ⌊6c/5⌋, exact and without overflow.
        let (fifth, rest) = (ceiling / 5, ceiling % Micros::from_us(5));
        draws.uniform_us(fifth * 4 + rest * 4 / 5, fifth * 6 + rest * 6 / 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;

    fn delays(multiplier: f64, draws: &[f64]) -> Vec<Micros> {
        let p = GrpcRetry {
            base: Micros::from_ms(100),
            cap: Micros::from_s(1),
            multiplier,
        };
        let mut d = ScriptedDraws::new(draws);
        let got = (1..=draws.len() as u32)
            .map(|k| p.delay(k, &mut (), &mut d))
            .collect();
        assert_eq!(d.taken(), draws.len(), "one draw a retry, the first too");
        got
    }

    #[test]
    fn multiplier_1_5_grows_the_ceiling_by_half_with_20_percent_jitter() {
        // Ceilings 100, 150, 225, 337.5, 506.25, 759.375 ms, then the 1 s cap
        // (1,139.0625 ms); a draw of 0 is 0.8·c_k, 1 is 1.2·c_k, 0.5 is c_k.
        assert_eq!(
            delays(1.5, &[0.0, 1.0, 0.5, 0.0, 1.0, 0.5, 0.0, 1.0]),
            [
                80_000, 180_000, 225_000, 270_000, 607_500, 759_375, 800_000, 1_200_000
            ]
            .map(Micros::from_ticks)
        );
    }

    #[test]
    fn multiplier_2_doubles_the_ceiling() {
        // Ceilings 100, 200, 400, 800 ms, then the 1 s cap.
        assert_eq!(
            delays(2.0, &[0.5, 0.0, 1.0, 0.5, 0.0, 1.0]),
            [100_000, 160_000, 480_000, 800_000, 800_000, 1_200_000].map(Micros::from_ticks)
        );
    }

    #[test]
    fn the_first_retry_is_jittered() {
        // Unlike gRPC's connection backoff: a herd does not retry together.
        let p = GrpcRetry {
            base: Micros::from_s(1),
            cap: Micros::from_s(120),
            multiplier: 1.6,
        };
        let mut rng = job_rng(11);
        let first: std::collections::BTreeSet<Micros> =
            (0..1_000).map(|_| p.delay(1, &mut (), &mut rng)).collect();
        assert!(first.len() > 990, "{} distinct first delays", first.len());
        assert!(
            first
                .iter()
                .all(|d| (800_000..=1_200_000).contains(&d.ticks()))
        );
    }

    #[test]
    fn the_bounds_are_exact_fifths() {
        // ⌊4c/5⌋ and ⌊6c/5⌋ in whole µs, with no float rounding: c = 7 µs
        // gives 5 and 8.
        let p = GrpcRetry {
            base: Micros::from_us(7),
            cap: Micros::from_ms(1),
            multiplier: 3.0,
        };
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.0, 1.0]);
        assert_eq!(p.delay(1, &mut (), &mut d), Micros::from_us(5));
        assert_eq!(p.delay(1, &mut (), &mut d), Micros::from_us(8));
        // Retry 2: c = 21 µs, so 16 and 25.
        assert_eq!(p.delay(2, &mut (), &mut d), Micros::from_us(16));
        assert_eq!(p.delay(2, &mut (), &mut d), Micros::from_us(25));
    }
}
