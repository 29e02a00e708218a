//! `grpc-connection`: gRPC's connection backoff.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// gRPC's connection backoff (its "Connection Backoff" protocol document,
/// `doc/connection-backoff.md` in grpc/grpc; not its retry policy, which is
/// [`super::GrpcRetry`]):
/// the first retry waits the initial backoff `min(base, cap)`; after that
/// `b = min(b·1.6, cap)` and `d = b·U[0.8, 1.2]`, drawn as the whole µs
/// `U[⌊0.8·b⌋, ⌊1.2·b⌋]`. gRPC's defaults are base 1 s, cap 120 s. As in
/// gRPC, the cap bounds the backoff before its jitter, so a delay may reach
/// 1.2·cap. The first retry is not jittered: a herd that failed together
/// makes its first retry together (99.99% of a 10,000-client herd in one
/// window).
///
/// `b` is kept as gRPC keeps it, a float multiplied by 1.6 at each retry:
/// in whole µs, `⌊8b/5⌋` stays at 1 µs forever from a 1 µs base. A float
/// product is correctly rounded (IEEE 754), so the walk is the same on every
/// machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrpcConnection {
    /// The initial backoff, µs.
    pub base: Micros,
    /// The largest backoff before jitter, µs.
    pub cap: Micros,
}

impl Backoff for GrpcConnection {
    /// The current backoff `b`, µs (fractions kept).
    type Walk = f64;

    fn start(&self) -> f64 {
        self.base.min(self.cap).ticks() as f64
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, b: &mut f64, draws: &mut D) -> Micros {
        if retry <= 1 {
            return Micros::from_ticks(*b as u64);
        }
        *b = (*b * 1.6).min(self.cap.ticks() as f64);
        draws.uniform_us(
            Micros::from_ticks((*b * 0.8).floor() as u64),
            Micros::from_ticks((*b * 1.2).floor() as u64),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;

    const P: GrpcConnection = GrpcConnection {
        base: Micros::from_s(1),
        cap: Micros::from_s(120),
    };

    #[test]
    fn the_backoff_grows_by_1_6_with_20_percent_jitter() {
        let mut b = P.start();
        let mut d = ScriptedDraws::new(&[0.0, 1.0, 0.5]);
        assert_eq!(P.delay(1, &mut b, &mut d), Micros::from_s(1));
        assert_eq!(P.delay(2, &mut b, &mut d), Micros::from_ms(1280)); // 1.6 s × 0.8
        assert_eq!(P.delay(3, &mut b, &mut d), Micros::from_ms(3072)); // 2.56 s × 1.2
        assert_eq!(P.delay(4, &mut b, &mut d), Micros::from_ms(4096)); // 4.096 s
        assert_eq!(d.taken(), 3);
    }

    #[test]
    fn the_smallest_bases_grow_too() {
        // From 1 µs the backoff is 1.6^(k−1) µs: it reaches 1 s at retry 31
        // (1.6^29 = 8.5·10^5 µs, 1.6^30 = 1.36·10^6 µs, capped), where whole-µs
        // arithmetic (⌊8b/5⌋) stayed at 1 µs for ever.
        for base in [1, 2, 3] {
            let p = GrpcConnection {
                base: Micros::from_ticks(base),
                cap: Micros::from_s(1),
            };
            let mut b = p.start();
            let mut d = ScriptedDraws::new(&[0.5; 40]);
            let delays: Vec<Micros> = (1..=41).map(|k| p.delay(k, &mut b, &mut d)).collect();
            assert_eq!(delays[0], Micros::from_ticks(base));
            let expected = |k: i32| (base as f64 * 1.6f64.powi(k - 1)).min(1e6);
            for k in [5, 10, 20, 25] {
                let exact = expected(k);
                let got = delays[k as usize - 1].ticks() as f64;
                assert!(
                    (got - exact).abs() <= 0.2 * exact + 1.0,
                    "base {base}, retry {k}: {got} vs {exact}"
                );
            }
            assert_eq!(b, 1e6, "base {base} reaches the cap");
        }
    }

    #[test]
    fn delays_stay_within_twenty_percent_of_the_capped_backoff() {
        let mut rng = job_rng(8);
        let mut b = P.start();
        let mut sum_late = 0.0;
        for k in 1..=40 {
            let d = P.delay(k, &mut b, &mut rng);
            let lo = Micros::from_ticks((b * 0.8).floor() as u64);
            let hi = Micros::from_ticks((b * 1.2).floor() as u64);
            assert!(k == 1 || (lo..=hi).contains(&d), "retry {k}: {d:?} for {b}");
            if k > 20 {
                assert_eq!(b, P.cap.ticks() as f64);
                sum_late += d.ticks() as f64;
            }
        }
        // 20 draws of U[96 s, 144 s]: mean 120 s, SE 13.9 s/√20 = 3.1 s; 4 SE.
        assert!((sum_late / 20.0 - 120e6).abs() < 12.4e6);
    }
}
