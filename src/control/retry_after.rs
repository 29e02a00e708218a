//! The slot resource's retry hints, and what a client does with them.

use crate::base::names::named;

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
}

impl RetryAfter {
    /// The wait for a policy `delay` and a server `hint`.
    #[inline]
    pub fn wait(self, delay: u64, hint: u64) -> u64 {
        match self {
            RetryAfter::Ignore => delay,
            RetryAfter::Floor => delay.max(hint),
            RetryAfter::FloorJitter => delay.saturating_add(hint),
        }
    }
}

named!(RetryAfter, "retry-after mode", {
    RetryAfter::Ignore => "ignore",
    RetryAfter::Floor => "floor",
    RetryAfter::FloorJitter => "floor+jitter",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_modes() {
        assert_eq!(RetryAfter::Ignore.wait(10, 50), 10);
        assert_eq!(RetryAfter::Floor.wait(10, 50), 50);
        assert_eq!(RetryAfter::Floor.wait(80, 50), 80);
        assert_eq!(RetryAfter::FloorJitter.wait(10, 50), 60);
        for mode in ["ignore", "floor", "floor+jitter"] {
            assert_eq!(mode.parse::<RetryAfter>().unwrap().name(), mode);
        }
    }
}
