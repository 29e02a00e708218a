//! The slot resource's retry hints, and what a client does with them.

use crate::base::names::named;
use crate::base::time::Micros;

/// What a client does with the slot resource's retry hint (its estimate of
/// how long its backlog takes to drain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryAfter {
    /// Wait the policy's delay.
    #[default]
    Ignore,
    /// Wait `max(hint, delay)`: the hint as a floor.
    Floor,
    /// Wait `hint + delay`: the hint as a floor with the policy's jitter on top
    /// (seed 004: `retry_after + rand·ceiling`).
    FloorJitter,
    /// Wait `max(delay, min(hint, delay + 5 s))`: the AWS SDKs' 2026
    /// `x-amz-retry-after` (botocore 1.43.67, `ExponentialBackoff.delay_amount`,
    /// `_RETRY_AFTER_MAX_ADDITIONAL = 5`), which lets a server lengthen the
    /// drawn delay by at most 5 s and never shorten it.
    Aws,
}

/// `x-amz-retry-after`'s most a hint adds to the drawn delay, µs.
pub const AWS_RETRY_AFTER_MAX_ADDITIONAL_US: Micros = Micros::from_s(5);

impl RetryAfter {
    /// The wait for a policy `delay` and a server `hint`.
    #[inline]
    pub fn wait(self, delay: Micros, hint: Micros) -> Micros {
        match self {
            RetryAfter::Ignore => delay,
            RetryAfter::Floor => delay.max(hint),
            RetryAfter::FloorJitter => delay.saturating_add(hint),
            RetryAfter::Aws => {
                delay.max(hint.min(delay.saturating_add(AWS_RETRY_AFTER_MAX_ADDITIONAL_US)))
            }
        }
    }
}

named!(RetryAfter, "retry-after mode", {
    RetryAfter::Ignore => "ignore",
    RetryAfter::Floor => "floor",
    RetryAfter::FloorJitter => "floor+jitter",
    RetryAfter::Aws => "aws",
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The wait in µs for a delay and a hint in µs.
    fn wait(mode: RetryAfter, delay: u64, hint: u64) -> u64 {
        mode.wait(Micros::from_ticks(delay), Micros::from_ticks(hint))
            .ticks()
    }

    #[test]
    fn retry_after_modes() {
        assert_eq!(wait(RetryAfter::Ignore, 10, 50), 10);
        assert_eq!(wait(RetryAfter::Floor, 10, 50), 50);
        assert_eq!(wait(RetryAfter::Floor, 80, 50), 80);
        assert_eq!(wait(RetryAfter::FloorJitter, 10, 50), 60);
    }

    #[test]
    fn the_aws_hint_is_clamped_into_the_delay_and_5s_more() {
        // botocore: max(t_i, min(retry_after, 5 + t_i)).
        let t = 1_200_000;
        assert_eq!(wait(RetryAfter::Aws, t, 0), t);
        assert_eq!(wait(RetryAfter::Aws, t, 800_000), t);
        assert_eq!(wait(RetryAfter::Aws, t, 3_000_000), 3_000_000);
        assert_eq!(wait(RetryAfter::Aws, t, 6_200_000), 6_200_000);
        assert_eq!(wait(RetryAfter::Aws, t, 60_000_000), 6_200_000);
        // After the 20 s cap the wait may reach 25 s.
        assert_eq!(wait(RetryAfter::Aws, 20_000_000, u64::MAX), 25_000_000);
        assert_eq!(wait(RetryAfter::Aws, u64::MAX, u64::MAX), u64::MAX);
        for mode in ["ignore", "floor", "floor+jitter", "aws"] {
            assert_eq!(mode.parse::<RetryAfter>().unwrap().name(), mode);
        }
    }
}
