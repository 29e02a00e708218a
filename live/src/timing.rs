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
