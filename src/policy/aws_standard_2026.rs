//! `aws-2026`: the AWS SDKs' standard backoff of 2026, whose base depends on
//! why the attempt failed.

use super::{Backoff, Cause, exponential_ceiling};
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// botocore 1.43.67's `ExponentialBackoff.delay_amount` with the 2026
/// behaviour on (`AWS_NEW_RETRIES_2026=true`, `botocore/retries/standard.py`,
/// boto/botocore at commit 0e6e240):
///
/// `t = rand() · min(scale · 2^(n−1), _MAX_BACKOFF)` seconds before retry n,
///
/// where `scale` is `throttling_base_scale` (1 s) after a throttling error
/// and `non_throttling_base_scale` (0.05 s; 0.025 s for `dynamodb` and
/// `dynamodb-streams`, `_SERVICE_BACKOFF_CONFIG`) after any other, and
/// `_MAX_BACKOFF` is 20 s. Here `scale` is `throttle_base` after a throttle
/// ([`Cause::Throttle`], the server's refusal at a full queue) and `base`
/// otherwise (a failed reply or a timeout: botocore's read and connect
/// timeouts are not throttling errors); the cap bounds the ceiling before
/// the draw, as botocore's `min` does, so `0 ≤ d ≤ cap`. DynamoDB's own
/// scale is for the non-throttling base only: its throttles wait on the 1 s
/// base too.
///
/// Called without a cause ([`Backoff::delay`]: the herd models, whose
/// failures are all the resource's, and `herdsim schedule`) it is the
/// non-throttling schedule. The `x-amz-retry-after` header, which clamps
/// `t` into `[t, t + 5 s]`, comes from a server reply: on the slot resource
/// it is `--retry-after aws` on the slot's hint; herdsim's server model
/// gives none, so there the delay is `t`, as for a reply without the header.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aws2026 {
    /// The non-throttling base scale, µs (botocore: 50 ms, DynamoDB 25 ms).
    pub base: Micros,
    /// The throttling base scale, µs (botocore: 1 s).
    pub throttle_base: Micros,
    /// The largest ceiling, µs (botocore: 20 s).
    pub cap: Micros,
}

impl Backoff for Aws2026 {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, walk: &mut (), draws: &mut D) -> Micros {
        self.delay_after(retry, Cause::Other, walk, draws)
    }

    #[inline]
    fn delay_after<D: Draws + ?Sized>(
        &self,
        retry: u32,
        cause: Cause,
        _: &mut (),
        draws: &mut D,
    ) -> Micros {
        let base = match cause {
            Cause::Throttle => self.throttle_base,
            Cause::Other => self.base,
        };
        draws.uniform_us(Micros::ZERO, exponential_ceiling(base, self.cap, retry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    /// botocore's defaults: `non_throttling_base_scale` 0.05 s,
    /// `throttling_base_scale` 1 s, `_MAX_BACKOFF` 20 s.
    const BOTOCORE: Aws2026 = Aws2026 {
        base: Micros::from_ms(50),
        throttle_base: Micros::from_s(1),
        cap: Micros::from_s(20),
    };

    /// The delays of retries 1..=n after `cause`, each with the same draw.
    fn delays(p: Aws2026, cause: Cause, draw: f64, n: u32) -> Vec<Micros> {
        let script = vec![draw; n as usize];
        let mut d = ScriptedDraws::new(&script);
        (1..=n)
            .map(|k| p.delay_after(k, cause, &mut (), &mut d))
            .collect()
    }

    #[test]
    fn the_non_throttling_ceilings_are_botocores_test_vector() {
        // test_standard_retry_v2_1.py, test_range_of_exponential_backoff:
        // random() = 1, attempts 1..=11 →
        // [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 20, 20] s.
        assert_eq!(
            delays(BOTOCORE, Cause::Other, 1.0, 11),
            [
                50_000, 100_000, 200_000, 400_000, 800_000, 1_600_000, 3_200_000, 6_400_000,
                12_800_000, 20_000_000, 20_000_000
            ]
            .map(Micros::from_ticks)
        );
        // Without a cause it is the same schedule.
        let mut d = ScriptedDraws::new(&[1.0]);
        assert_eq!(BOTOCORE.delay(3, &mut (), &mut d), Micros::from_ms(200));
    }

    #[test]
    fn a_throttle_waits_on_the_1s_base() {
        // throttling_base_scale 1: 1, 2, 4, 8, 16, then the 20 s cap.
        assert_eq!(
            delays(BOTOCORE, Cause::Throttle, 1.0, 7),
            [
                1_000_000, 2_000_000, 4_000_000, 8_000_000, 16_000_000, 20_000_000, 20_000_000
            ]
            .map(Micros::from_ticks)
        );
        // Full jitter below the ceiling: a draw of 0 retries at once, of
        // 0.5 at half the ceiling (the cap before the draw, not after).
        assert_eq!(
            delays(BOTOCORE, Cause::Throttle, 0.0, 3),
            [0, 0, 0].map(Micros::from_ticks)
        );
        assert_eq!(
            delays(BOTOCORE, Cause::Throttle, 0.5, 7)[5..],
            [10_000_000, 10_000_000].map(Micros::from_ticks)
        );
    }

    #[test]
    fn dynamodb_halves_the_non_throttling_base_only() {
        // _SERVICE_BACKOFF_CONFIG dynamodb: non_throttling_base_scale 0.025.
        let ddb = Aws2026 {
            base: Micros::from_ms(25),
            ..BOTOCORE
        };
        assert_eq!(
            delays(ddb, Cause::Other, 1.0, 4),
            [25_000, 50_000, 100_000, 200_000].map(Micros::from_ticks)
        );
        assert_eq!(
            delays(ddb, Cause::Throttle, 1.0, 4),
            delays(BOTOCORE, Cause::Throttle, 1.0, 4)
        );
    }

    #[test]
    fn huge_retry_numbers_are_the_cap() {
        for cause in [Cause::Throttle, Cause::Other] {
            let mut d = ScriptedDraws::new(&[1.0, 1.0]);
            for k in [100, u32::MAX] {
                assert_eq!(
                    BOTOCORE.delay_after(k, cause, &mut (), &mut d),
                    Micros::from_s(20)
                );
            }
        }
    }
}
