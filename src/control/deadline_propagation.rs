//! Deadline propagation (the Yandex study, 2024, "Good retry, bad retry":
//! its server's `deadline propagation` flag).
//!
//! Each attempt carries its deadline to the server. A worker that takes an
//! attempt compares what is left of it with the service time S it drew:
//! already expired, it rejects the attempt fast, holding the worker for 5% of
//! S (S/20, in whole ns) and failing it; less time left than S, it holds the
//! worker for min(left + 20% of S, S) and fails it; otherwise it serves it.
//!
//! The study's deadline is the **call's**: its start plus the per-attempt
//! timeout, so a retry sent after a timeout always arrives past it and is
//! rejected fast (its client still waits up to the timeout for the reply).
//! `attempt` gives each attempt its own deadline, its send time plus the
//! timeout, as a server that propagates per-attempt deadlines would.

use crate::base::names::named;
use crate::control::{Nanos, ServerAbout};

/// Listed by `herdsim controls`.
pub const ABOUT: ServerAbout = ServerAbout {
    key: "deadline_propagation",
    syntax: "call | attempt (the study: call)",
    source: "Yandex 2024, \"Good retry, bad retry\" (deadline propagation)",
    rule: "expired at a worker: held S/20 and failed; less than S left: held \
           min(left + S/5, S) and failed; deadline = call start (or attempt send) + timeout",
};

/// Whose deadline an attempt carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeadlinePropagation {
    /// None: the server serves every attempt in full.
    #[default]
    Off,
    /// The request's: its start plus the timeout (the Yandex study's).
    Call,
    /// The attempt's: its send time plus the timeout.
    Attempt,
}

named!(DeadlinePropagation, "deadline propagation", {
    DeadlinePropagation::Off => "none",
    DeadlinePropagation::Call => "call",
    DeadlinePropagation::Attempt => "attempt",
});

/// What a worker does with an attempt whose deadline is `deadline`, taken
/// at `now` with service time `service`: how long it holds the worker, and
/// whether the attempt fails for its deadline.
pub fn hold(deadline: Nanos, now: Nanos, service: Nanos) -> (Nanos, bool) {
    if deadline < now {
        (service / 20, true)
    } else if deadline - now < service {
        ((deadline - now + service / 5).min(service), true)
    } else {
        (service, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_attempts_are_rejected_fast_and_short_ones_cut() {
        // 10 ms of service.
        let t = Nanos::from_ticks;
        let s = t(10_000_000);
        assert_eq!(hold(t(99), t(100), s), (t(500_000), true), "expired: S/20");
        assert_eq!(
            hold(t(100), t(100), s),
            (t(2_000_000), true),
            "none left: S/5"
        );
        assert_eq!(
            hold(t(104_000_100), t(100_000_000), s),
            (t(6_000_100), true)
        );
        assert_eq!(
            hold(t(109_000_000), t(100_000_000), s),
            (s, true),
            "capped at S"
        );
        assert_eq!(
            hold(t(110_000_000), t(100_000_000), s),
            (s, false),
            "in time"
        );
        for name in ["none", "call", "attempt"] {
            assert_eq!(name.parse::<DeadlinePropagation>().unwrap().name(), name);
        }
    }

    proptest::proptest! {
        /// A worker never holds an attempt longer than its service, fails it
        /// exactly when too little time is left, and holds an in-time one
        /// for all of its service.
        #[test]
        fn the_hold_is_at_most_the_service(
            deadline in 0u64..1_000_000, now in 0u64..1_000_000, service in 0u64..500_000,
        ) {
            let t = Nanos::from_ticks;
            let (deadline, now, service) = (t(deadline), t(now), t(service));
            let (held, fails) = hold(deadline, now, service);
            proptest::prop_assert!(held <= service);
            proptest::prop_assert_eq!(fails, deadline < now || deadline - now < service);
            if !fails {
                proptest::prop_assert_eq!(held, service);
            }
        }
    }
}
