//! Hedging on per-attempt timeout (server model), as Envoy's router does it
//! with `hedge_policy.hedge_on_per_try_timeout: true` (envoyproxy/envoy,
//! `source/common/router/router.cc` at commit 001b1c0 and
//! `retry_state_impl.cc` at e78906c, the commit the Envoy import cites; the
//! functions are named, as their lines move between releases):
//!
//! - A per-try timeout does not reset the attempt (`onPerTryTimeoutCommon`
//!   calls `onSoftPerTryTimeout` and returns): the attempt stays in
//!   `upstream_requests_`, and its reply may still come and win. It has no
//!   second per-try timeout; the route's timeout still ends it.
//! - The timeout asks the retry state for a retry at once
//!   (`shouldHedgeRetryPerTryTimeout`, which is `shouldRetry(true, …)`):
//!   whatever `retry_on` says, the retry is wanted. It goes through
//!   `shouldRetry` as any retry does: refused if `num_retries` are spent
//!   (`retries_remaining_ == 0`); else one is spent, then refused if the
//!   cluster's retry resource (`max_retries` or the retry budget) has no
//!   room; else it is counted there and sent after the jittered backoff
//!   (`enableBackoffTimer`). A refused retry changes nothing else: the
//!   attempt goes on, not marked retried. Without a retry policy (no
//!   `retry_state_`) nothing is asked and the attempt goes on alone.
//! - A success from any outstanding attempt wins: the response goes
//!   downstream and every other attempt is reset (`onUpstreamHeaders` →
//!   `resetOtherUpstreams`); a pending retry is dropped with the retry state
//!   (`cleanup`). herdsim's server is never told: an abandoned attempt is
//!   still served, and its reply is ignored.
//! - A failed reply of the attempt not yet retried (the latest, whose
//!   timeout has not started a retry) asks for a retry by `retry_on`
//!   (`shouldRetryHeaders`); if it is granted, the request waits for it.
//! - A failed reply that is not retried, because `retry_on` does not name it,
//!   goes downstream: the request fails with it and the others are reset
//!   (`onUpstreamHeaders`, `could_not_retry` false).
//! - A failed reply `retry_on` names that cannot be retried (its attempt was
//!   retried already, `upstream_request.retried()` and
//!   `wouldRetryFromHeaders`; or `shouldRetry` refused it) is dropped while
//!   another attempt awaits its reply or a retry is pending
//!   (`numRequestsAwaitingHeaders() > 0 || pending_retries_ > 0`); with
//!   nothing left, it goes downstream and the request fails.
//! - An attempt a control refuses to send (`max_requests`, an overflow
//!   reset that `wouldRetryFromReset` never retries) ends alone while others
//!   await their replies (`onUpstreamReset`, the same test).
//! - The retry resource counts a retry from its decision until the next
//!   `shouldRetry` of its request (`resetRetry`): the next per-try timeout,
//!   or the reply of the attempt not yet retried, or the request's end.
//! - The route's timeout (`onResponseTimeout`) resets every attempt and
//!   fails the request (504).

/// Whether a run hedges on per-attempt timeout (`hedge_on_timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HedgeOnTimeout {
    /// A timed-out attempt is given up (herdsim's and Envoy's default).
    #[default]
    Off,
    /// A timed-out attempt is kept, and a retry goes beside it.
    On,
}

crate::base::names::named!(HedgeOnTimeout, "hedge on timeout", {
    HedgeOnTimeout::Off => "off",
    HedgeOnTimeout::On => "on",
});

/// What a request does with a failed reply (a failure or a rejection) of
/// one of its attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Ask for a retry by `retry_on`: the reply is the latest attempt's,
    /// not yet retried.
    AsksRetry,
    /// Drop the reply and wait: another attempt or a retry may still answer.
    Waits,
    /// Fail the request with this reply; the others are abandoned.
    Fails,
}

/// The decision on a failed reply: `retriable` if `retry_on` names its
/// outcome; `current` if it is the latest attempt's and no retry followed
/// its timeout; `awaited` if another attempt is in flight or a retry is
/// pending (`onUpstreamHeaders`).
pub fn after_failure(retriable: bool, current: bool, awaited: bool) -> AfterFailure {
    if !retriable {
        AfterFailure::Fails
    } else if current {
        AfterFailure::AsksRetry
    } else {
        after_refusal(awaited)
    }
}

/// After a retry was wanted but refused (`could_not_retry`): wait while
/// something else may answer, else fail.
pub fn after_refusal(awaited: bool) -> AfterFailure {
    if awaited {
        AfterFailure::Waits
    } else {
        AfterFailure::Fails
    }
}

/// True if `num_retries` leaves a retry: `attempts` sent so far and `spent`
/// retries refused by a control after the count was taken (Envoy spends
/// `retries_remaining_` before it asks the retry resource), under `max`
/// attempts (`num_retries + 1`; `None`: unlimited).
pub fn retries_left(attempts: u32, spent: u32, max: Option<u32>) -> bool {
    max.is_none_or(|max| attempts.saturating_add(spent) < max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AfterFailure::{AsksRetry, Fails, Waits};

    #[test]
    fn a_failure_retry_on_does_not_name_fails_the_request_whatever_else_is_in_flight() {
        for current in [false, true] {
            for awaited in [false, true] {
                assert_eq!(after_failure(false, current, awaited), Fails);
            }
        }
    }

    #[test]
    fn the_latest_attempt_asks_for_a_retry_and_a_retried_one_waits_while_it_can() {
        assert_eq!(after_failure(true, true, false), AsksRetry);
        assert_eq!(after_failure(true, true, true), AsksRetry);
        assert_eq!(after_failure(true, false, true), Waits);
        assert_eq!(after_failure(true, false, false), Fails);
        assert_eq!(after_refusal(true), Waits);
        assert_eq!(after_refusal(false), Fails);
    }

    #[test]
    fn a_retry_refused_by_a_control_still_spends_a_num_retries() {
        // num_retries 2: max_attempts 3.
        assert!(retries_left(1, 0, Some(3)));
        assert!(retries_left(2, 0, Some(3)));
        assert!(!retries_left(3, 0, Some(3)));
        // One retry refused by the budget after its count was taken.
        assert!(!retries_left(2, 1, Some(3)));
        assert!(retries_left(u32::MAX, 5, None));
    }
}
