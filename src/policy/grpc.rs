//! `grpc`: gRPC's connection backoff.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// gRPC's connection backoff (its "Connection Backoff" protocol document):
/// the first retry waits the initial backoff `base`; after that
/// `b = min(b·1.6, cap)` and `d = b·U[0.8, 1.2]`. In whole µs: `b·1.6` is
/// `⌊8b/5⌋` and the draw is `U[⌊4b/5⌋, ⌊6b/5⌋]`, so no float enters. gRPC's
/// defaults are base 1 s, cap 120 s. As in gRPC, the cap bounds the backoff
/// before its jitter, so a delay may reach 1.2·cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grpc {
    /// The initial backoff, µs.
    pub base: Micros,
    /// The largest backoff before jitter, µs.
    pub cap: Micros,
}

impl Backoff for Grpc {
    /// The current backoff `b`, µs.
    type Walk = Micros;

    fn start(&self) -> Micros {
        self.base.min(self.cap)
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, b: &mut Micros, draws: &mut D) -> Micros {
        if retry <= 1 {
            return *b;
        }
        *b = (b.saturating_mul(8) / 5).min(self.cap);
        draws.uniform(*b / 5 * 4 + (*b % 5) * 4 / 5, *b / 5 * 6 + (*b % 5) * 6 / 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;

    const P: Grpc = Grpc {
        base: 1_000_000,
        cap: 120_000_000,
    };

    #[test]
    fn the_backoff_grows_by_1_6_with_20_percent_jitter() {
        let mut b = P.start();
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.5]);
        assert_eq!(P.delay(1, &mut b, &mut d), 1_000_000);
        assert_eq!(P.delay(2, &mut b, &mut d), 1_280_000); // 1.6 s × 0.8
        assert_eq!(P.delay(3, &mut b, &mut d), 3_072_000); // 2.56 s × 1.2
        assert_eq!(P.delay(4, &mut b, &mut d), 4_096_000); // 4.096 s
        assert_eq!(d.taken(), 3);
    }

    #[test]
    fn delays_stay_within_twenty_percent_of_the_capped_backoff() {
        let mut rng = job_rng(8);
        let mut b = P.start();
        let mut sum_late = 0.0;
        for k in 1..=40 {
            let d = P.delay(k, &mut b, &mut rng);
            assert!(d >= b * 4 / 5 && d <= b * 6 / 5, "retry {k}: {d} for {b}");
            if k > 20 {
                assert_eq!(b, P.cap);
                sum_late += d as f64;
            }
        }
        // 20 draws of U[96 s, 144 s]: mean 120 s, SE 13.9 s/√20 = 3.1 s; 4 SE.
        assert!((sum_late / 20.0 - 120e6).abs() < 12.4e6);
    }
}
