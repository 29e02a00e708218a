//! Hedged requests (server model), as grpc-java's `RetriableStream` makes
//! them (grpc/grpc-java `core/src/main/java/io/grpc/internal/`, commit
//! 5fda0c7; line numbers are `RetriableStream.java`'s):
//!
//! - A request sends its first copy; while it is not committed, another copy
//!   goes every `delay`, up to `copies` in all (`hasPotentialHedging`,
//!   811–821: `hedgingAttemptCount < maxAttempts`). Each next copy is
//!   scheduled when the one before it is sent (`start`, 410–428;
//!   `HedgingRunnable.run`, 472–522).
//! - The first success commits: the request succeeds and every other copy
//!   is abandoned (`commit`, 155–222, cancels them and the scheduled hedge).
//!   herdsim's server is never told: an abandoned copy keeps its place and
//!   is served, as a timed-out attempt is, and its reply is ignored.
//! - A failure whose status is not in `nonFatalStatusCodes` (herdsim's
//!   [`RetryOn`](super::retry_on::RetryOn): the outcomes not retried) is
//!   fatal: it commits, and the request fails with it (`Sublistener.closed`,
//!   987–1004, then `commitAndRun`, 1054).
//! - A non-fatal failure ends that copy only. The request waits for its other
//!   copies and its next hedge at the time it was scheduled for; if none is
//!   left in flight and no hedge can come, it commits with that failure.
//!   gRFC A6 says the next hedge goes at once after a non-fatal status;
//!   grpc-java sends it early only when the status carries a
//!   `grpc-retry-pushback-ms` (`makeHedgingDecision`, 1099–1113, zeroes a
//!   positive pushback; `pushbackHedging`, 434–461, does nothing without
//!   one). herdsim's server sends no pushback, so no hedge goes early.
//! - The retry throttle (`retryThrottling`, herdsim's `grpc` budget): a
//!   non-fatal failure takes a token and, if the count is then at or below
//!   half, commits with that failure (`onQualifiedFailureThenCheckIsAboveThreshold`,
//!   1103–1107; `isHedgeable` false); the winner's success adds the token
//!   ratio (`headersRead`, 887–897); a fatal failure and the abandoned copies
//!   change nothing. The next hedge is scheduled only while the count is
//!   above half, checked when the copy before it is sent. When that check
//!   refuses in `HedgingRunnable` hedging is frozen (497–502); at the
//!   request's start it is not (415–419), so a request whose first copy
//!   then fails non-fatally, with the throttle recovered, waits with nothing
//!   in flight and nothing scheduled until its deadline.
//! - There is no per-copy timeout (A6's `hedgingPolicy` has none, and
//!   grpc-java's `HedgingPolicy` keeps only `maxAttempts`, `hedgingDelay`
//!   and `nonFatalStatusCodes`); the call's deadline ends the request and
//!   every copy in flight (`cancel`, 525–529, commits a no-op stream: the
//!   throttle is not touched).

use crate::model::server::Nanos;

/// Hedging's parameters: gRPC's `hedgingPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hedge {
    /// Between one copy and the next, ns (`hedgingDelay`; 0 sends every copy
    /// at once).
    pub delay: Nanos,
    /// Most copies per request, the first included (`maxAttempts`).
    pub copies: u32,
}

/// What a request does after one of its copies failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// It goes on: other copies are in flight or a hedge may still come.
    Waits,
    /// It commits with this failure: it fails, and its other copies are
    /// abandoned.
    Fails,
}

/// The decision after a copy failed. `fatal`: its outcome is not among the
/// non-fatal ones; `throttled`: the throttle, having taken its token, is at
/// or below half; `in_flight`: the request's other copies still awaited;
/// `hedge_may_come`: fewer than the most copies were sent and hedging is not
/// frozen (`hasPotentialHedging`). A fatal or throttled failure commits;
/// else the request waits while a copy is in flight or a hedge may come
/// (`RetriableStream.java` 987–1004).
pub fn after_failure(
    fatal: bool,
    throttled: bool,
    in_flight: u32,
    hedge_may_come: bool,
) -> AfterFailure {
    if fatal || throttled || (in_flight == 0 && !hedge_may_come) {
        AfterFailure::Fails
    } else {
        AfterFailure::Waits
    }
}

/// What a request does once a copy of it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextCopy {
    /// Its next copy is scheduled, `delay` on.
    Scheduled,
    /// None is scheduled, and hedging freezes: no copy will come.
    Frozen,
    /// None is scheduled, but hedging is not frozen (after the first copy,
    /// as grpc-java's `start` leaves it): a non-fatal failure then waits.
    NotScheduled,
}

/// The next copy after one was sent: `sent` copies so far of `copies` at
/// most, `frozen` already, `throttle_allows` (the throttle above half, or
/// none), `first` (the copy sent was the first). Scheduled while a copy may
/// come and the throttle allows it (`hasPotentialHedging` and
/// `isAboveThreshold`); else frozen, except after the first copy
/// (`RetriableStream.java` 415–419 against 496–502).
pub fn next_copy(
    sent: u32,
    copies: u32,
    frozen: bool,
    throttle_allows: bool,
    first: bool,
) -> NextCopy {
    if sent < copies && !frozen && throttle_allows {
        NextCopy::Scheduled
    } else if first {
        NextCopy::NotScheduled
    } else {
        NextCopy::Frozen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_copy_waits_on_the_count_and_the_throttle_and_the_first_never_freezes() {
        use NextCopy::{Frozen, NotScheduled, Scheduled};
        assert_eq!(next_copy(1, 3, false, true, true), Scheduled);
        assert_eq!(next_copy(2, 3, false, true, false), Scheduled);
        // The most copies sent: frozen.
        assert_eq!(next_copy(3, 3, false, true, false), Frozen);
        // The throttle at or below half: frozen, but not at the start.
        assert_eq!(next_copy(2, 3, false, false, false), Frozen);
        assert_eq!(next_copy(1, 3, false, false, true), NotScheduled);
        // Frozen stays frozen.
        assert_eq!(next_copy(2, 3, true, true, false), Frozen);
    }

    #[test]
    fn a_fatal_or_throttled_failure_commits_and_a_non_fatal_one_waits_while_it_can() {
        use AfterFailure::{Fails, Waits};
        // Fatal: whatever else is in flight.
        assert_eq!(after_failure(true, false, 3, true), Fails);
        // Throttled: the same (isHedgeable is false).
        assert_eq!(after_failure(false, true, 3, true), Fails);
        // Non-fatal: waits for a copy in flight, or for a hedge to come.
        assert_eq!(after_failure(false, false, 1, false), Waits);
        assert_eq!(after_failure(false, false, 0, true), Waits);
        // Nothing in flight and nothing to come: commits with this failure.
        assert_eq!(after_failure(false, false, 0, false), Fails);
    }
}
