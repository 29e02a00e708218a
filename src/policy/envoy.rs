//! `envoy`: Envoy's fully jittered exponential backoff, as its router runs it.

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::{Micros, US_PER_MS};

/// Envoy's route `retry_policy.retry_back_off` (`base_interval` = base,
/// `max_interval` = cap), computed as Envoy's code computes it, in whole
/// milliseconds:
///
/// - Envoy reads both durations to whole ms, truncating, and raises a value
///   under 1 ms to 1 ms (`RetryPolicyImpl`, `source/common/router/config_impl.cc`:
///   `PROTOBUF_GET_MS_REQUIRED`, then `if (count() < 1) … milliseconds(1)`).
///   herdsim does the same to `--base` and `--cap` (so `--base 1500us` is
///   1 ms). A cap below the base is refused, as Envoy refuses it.
/// - Each request's backoff starts with `next = base`; retry k waits
///   `random() % next` ms, a whole number in `[0, next − 1]`, and then
///   `next` doubles while it is below `⌊max/2⌋`, else becomes `max`
///   (`JitteredExponentialBackOffStrategy::nextBackOffMs`,
///   `source/common/common/backoff_strategy.cc`; envoyproxy/envoy at commit
///   4280ef7 and later, where `doubling_limit_ = max_interval_ / 2`). So the
///   ceilings are `base, 2·base, 4·base, …`, the last doubling replaced by
///   the cap itself: with the defaults 25 ms and 250 ms, 25, 50, 100, 200,
///   then 250 ms for every later retry. The cap bounds the ceiling, never
///   the draw, and the draw stays below the ceiling: no delay reaches the cap.
///
/// Envoy's own docs (router filter, `x-envoy-max-retries`) still give the
/// older formula, `[0, (2^N − 1)·B)` ("0-24ms, … 0-74ms, … 0-174ms"), which
/// is what the code did before that change (`(1 << current_retry_) - 1`
/// times the base, capped after the draw, commit 18a4509); the code is
/// followed here. Envoy's modulo of a 64-bit draw has a bias below 2^−50 for
/// any ceiling a config can give; herdsim's draw is exactly uniform.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyBackoff {
    /// `base_interval`, µs (used in whole ms, as Envoy does).
    pub base: Micros,
    /// `max_interval`, µs (used in whole ms, as Envoy does).
    pub cap: Micros,
}

/// A duration as Envoy keeps a backoff interval: whole ms, truncated, at
/// least 1.
pub fn envoy_ms(us: Micros) -> u64 {
    (us / US_PER_MS).max(1)
}

/// Retry `retry`'s ceiling `next` in ms (retry ≥ 1; 0 reads as 1): Envoy's
/// doubling from `base_ms` until the step that would pass `⌊max_ms/2⌋`,
/// which lands on `max_ms`.
pub fn interval_ms(base_ms: u64, max_ms: u64, retry: u32) -> u64 {
    let mut next = base_ms;
    for _ in 1..retry {
        if next >= max_ms {
            break;
        }
        next = if next < max_ms / 2 { next * 2 } else { max_ms };
    }
    next
}

impl Backoff for EnvoyBackoff {
    type Walk = ();

    fn start(&self) {}

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, retry: u32, _: &mut (), draws: &mut D) -> Micros {
        let next = interval_ms(envoy_ms(self.base), envoy_ms(self.cap), retry);
        US_PER_MS * draws.uniform(0, next - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::base::seeding::job_rng;

    const MS: Micros = Micros::from_ms(1);

    /// Envoy's defaults: base_interval 25 ms (`upstream.base_retry_backoff_ms`
    /// in `RetryStateImpl`), max_interval 10 × base.
    const DEFAULTS: EnvoyBackoff = EnvoyBackoff {
        base: Micros::from_ms(25),
        cap: Micros::from_ms(250),
    };

    #[test]
    fn ceilings_double_from_the_base_and_the_last_step_lands_on_the_cap() {
        let got: Vec<u64> = (1..=8).map(|k| interval_ms(25, 250, k)).collect();
        assert_eq!(got, [25, 50, 100, 200, 250, 250, 250, 250]);
        // 30 < 50 doubles to 60; 60 ≥ ⌊100/2⌋ goes straight to the cap.
        let got: Vec<u64> = (1..=4).map(|k| interval_ms(30, 100, k)).collect();
        assert_eq!(got, [30, 60, 100, 100]);
        // Exactly half: 50 is not below ⌊100/2⌋, so the next is the cap.
        assert_eq!(interval_ms(50, 100, 2), 100);
        // An odd cap: ⌊101/2⌋ = 50, so 25 → 50 → 101.
        let got: Vec<u64> = (1..=3).map(|k| interval_ms(25, 101, k)).collect();
        assert_eq!(got, [25, 50, 101]);
        // base = max: every ceiling is the cap.
        assert!((1..=5).all(|k| interval_ms(40, 40, k) == 40));
        // No overflow at any retry number.
        assert_eq!(interval_ms(1, u64::MAX / 1_000, u32::MAX), u64::MAX / 1_000);
    }

    #[test]
    fn retry_k_draws_whole_ms_below_its_ceiling() {
        // A draw of 1 is the ceiling less 1 ms, 0 is no wait at all.
        let mut d = ScriptedDraws::new(&[1.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        let got: Vec<Micros> = (1..=6)
            .map(|k| DEFAULTS.delay(k, &mut (), &mut d))
            .collect();
        assert_eq!(
            got,
            [24 * MS, Micros::ZERO, 99 * MS, 199 * MS, 249 * MS, 249 * MS],
            "the cap is never reached"
        );
    }

    #[test]
    fn the_first_retry_waits_0_to_24_ms_under_the_defaults_each_equally_often() {
        // 25 outcomes, 25,000 draws: each is expected 1,000 times with a
        // standard deviation of √(1000·24/25) ≈ 31; 6 σ is 186.
        let mut rng = job_rng(36);
        let mut counts = [0u32; 25];
        for _ in 0..25_000 {
            let d = DEFAULTS.delay(1, &mut (), &mut rng);
            assert_eq!(d % MS, Micros::ZERO, "whole ms");
            counts[(d / MS) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (814..=1_186).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn durations_are_whole_ms_as_envoy_reads_them() {
        assert_eq!(envoy_ms(Micros::from_us(25_999)), 25, "truncated");
        assert_eq!(envoy_ms(Micros::from_us(400)), 1, "below 1 ms is 1 ms");
        // A 1 ms ceiling leaves one value: no wait.
        let p = EnvoyBackoff {
            base: Micros::from_us(400),
            cap: Micros::from_us(900),
        };
        let mut rng = job_rng(1);
        assert!((1..=10).all(|k| p.delay(k, &mut (), &mut rng) == Micros::ZERO));
    }
}
