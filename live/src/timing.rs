//! Sleeping on time: the live commands' threads ask Linux for the smallest
//! timer slack, so that a sleep ends within microseconds of its deadline
//! rather than up to 50 µs late (the default), which a 1 ms service time
//! or a sub-millisecond arrival gap would feel.

/// Tightens the calling thread's timer slack (best effort: without it,
/// sleeps are only later).
pub fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer and changes only the
    // calling thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

use std::time::Duration;

use herdsim::model::server::Nanos;

/// Simulated ns as a wall-clock duration.
pub fn duration_of(t: Nanos) -> Duration {
    Duration::from_nanos(t.ticks())
}

/// A wall-clock duration as simulated ns (saturating at the clock's end).
pub fn nanos_of(d: Duration) -> Nanos {
    Nanos::from_ticks(d.as_nanos().min(u128::from(u64::MAX)) as u64)
}
