//! The one retry decision every loop makes after a failed attempt: the
//! caller's limits first, then its controls (a budget or a retry breaker is
//! asked when the retry is decided, not when it is sent), then the policy's
//! delay. It reads no clock and schedules nothing: the caller hands it the
//! time and acts on the answer, so the herd's loops, the server's, and a
//! client outside any event loop (driven by a real clock) decide alike.

use rand_pcg::Pcg64Mcg;

use crate::base::time::Micros;
use crate::control::{Controls, Nanos, Outcome};
use crate::policy::{AnyPolicy, AnyWalk, Cause};

/// What a policy learns of a failed attempt: a refusal at a full queue is
/// the server's throttling error (HTTP 429, `SlowDown`), which `aws-2026`
/// backs off from on its own base; a failed reply or a timeout is not.
#[inline]
pub fn cause_of(outcome: Outcome) -> Cause {
    match outcome {
        Outcome::Rejected => Cause::Throttle,
        Outcome::Success | Outcome::Failure | Outcome::Timeout => Cause::Other,
    }
}

/// The attempt that failed, as the decision needs it.
#[derive(Debug, Clone, Copy)]
pub struct Failed {
    /// The caller whose controls decide (a client, a source, a service).
    pub source: u32,
    /// When the caller learnt of the failure, ns.
    pub now: Nanos,
    /// How the attempt ended.
    pub cause: Outcome,
    /// The retry it would be (1 for the first, after the first try).
    pub retry: u32,
}

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Retry after this delay, µs.
    Retry { delay: Micros },
    /// The caller's limits allow no more (attempts, scope, outcome).
    Limit,
    /// A control refused the retry.
    Refused,
}

/// Decides whether `failed` is retried: not if `limits_allow` is false,
/// nor if `controls` refuse; else after the policy's delay, drawn from
/// `draws` with the caller's memory `walk`.
#[inline(always)]
pub fn decide(
    limits_allow: bool,
    controls: Option<&mut Controls>,
    failed: Failed,
    policy: &AnyPolicy,
    walk: &mut AnyWalk,
    draws: &mut Pcg64Mcg,
) -> Decision {
    if !limits_allow {
        return Decision::Limit;
    }
    if let Some(controls) = controls
        && !controls.allow_retry(failed.source, failed.now, failed.cause)
    {
        return Decision::Refused;
    }
    let delay = policy.delay_after(failed.retry, cause_of(failed.cause), walk, draws);
    Decision::Retry { delay }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;
    use crate::control::{ControlSpec, Family};
    use crate::policy::PolicyKind;
    use crate::spec::RunSpec;

    fn policy(kind: PolicyKind) -> AnyPolicy {
        AnyPolicy::new(&RunSpec::seed_002(kind, 1).policy)
    }

    fn failed(retry: u32, cause: Outcome) -> Failed {
        Failed {
            source: 0,
            now: Nanos::ZERO,
            cause,
            retry,
        }
    }

    #[test]
    fn the_limits_come_first_and_draw_nothing() {
        let (p, mut walk, mut draws) = (policy(PolicyKind::Full), AnyWalk::default(), job_rng(1));
        let limit = decide(
            false,
            None,
            failed(1, Outcome::Failure),
            &p,
            &mut walk,
            &mut draws,
        );
        assert_eq!(limit, Decision::Limit);
        // The generator is where it was: the next delay is the first one.
        let mut fresh = job_rng(1);
        let first = decide(
            true,
            None,
            failed(1, Outcome::Failure),
            &p,
            &mut walk,
            &mut draws,
        );
        let expected = p.delay_after(1, Cause::Other, &mut AnyWalk::default(), &mut fresh);
        assert_eq!(first, Decision::Retry { delay: expected });
    }

    #[test]
    fn a_control_that_refuses_ends_the_retries() {
        // The cumulative breaker at 0.1: after one call that failed, its
        // failure ratio is 1 and it refuses the retry.
        let breaker = ControlSpec::parse(Family::Breaker, "cumulative:0.1")
            .expect("a breaker")
            .expect("not off");
        let mut controls = Controls::new(&[breaker], 1, None, 7).expect("one control");
        controls.request_started(0, Nanos::ZERO);
        controls.attempt_ended(0, Nanos::ZERO, Nanos::ZERO, Outcome::Failure, None);
        let p = policy(PolicyKind::NoBackoff);
        let decision = decide(
            true,
            Some(&mut controls),
            failed(1, Outcome::Failure),
            &p,
            &mut AnyWalk::default(),
            &mut job_rng(1),
        );
        assert_eq!(decision, Decision::Refused);
    }

    #[test]
    fn a_client_outside_any_event_loop_retries_by_its_own_clock() {
        // A client against a server that fails its first four attempts,
        // driven by a plain clock (no event queue): it learns of each
        // failure 5 ms after sending, asks the decision, and waits out the
        // delay. Its attempts, the times it sends them and its last delay
        // are the concrete policy's, draw for draw, and an attempt limit of
        // 4 stops it before the fifth.
        let spec = RunSpec::seed_002(PolicyKind::Decorrelated, 1).policy;
        let any = AnyPolicy::new(&spec);
        let (mut walk, mut draws) = (any.start(), job_rng(11));
        let (mut clock, mut sent_at, mut attempts) = (0u64, Vec::new(), 0u32);
        let ended = loop {
            sent_at.push(clock);
            attempts += 1;
            clock += 5_000_000;
            let failed = Failed {
                source: 0,
                now: Nanos::from_ticks(clock),
                cause: Outcome::Failure,
                retry: attempts,
            };
            match decide(attempts < 4, None, failed, &any, &mut walk, &mut draws) {
                Decision::Retry { delay } => clock += Nanos::of_us(delay).ticks(),
                other => break other,
            }
        };
        assert_eq!((ended, attempts), (Decision::Limit, 4));
        let mut concrete = job_rng(11);
        let mut memory = any.start();
        let mut expected = vec![0u64];
        for retry in 1..4 {
            let delay = any.delay_after(retry, Cause::Other, &mut memory, &mut concrete);
            expected.push(expected[retry as usize - 1] + 5_000_000 + Nanos::of_us(delay).ticks());
        }
        assert_eq!(sent_at, expected);
        // Decorrelated jitter's delays are at least its base (100 ms).
        assert!(sent_at.windows(2).all(|w| w[1] - w[0] >= 105_000_000));
    }

    #[test]
    fn a_throttle_reaches_the_policy_as_its_cause() {
        // aws-2026 backs off from its throttle base after a refusal: with
        // the same draws, its delay after a rejection is the larger.
        let p = policy(PolicyKind::Aws2026);
        let delay = |cause| {
            let d = decide(
                true,
                None,
                failed(3, cause),
                &p,
                &mut AnyWalk::default(),
                &mut job_rng(9),
            );
            match d {
                Decision::Retry { delay } => delay,
                other => panic!("{other:?}"),
            }
        };
        assert!(delay(Outcome::Rejected) > delay(Outcome::Timeout));
        assert_eq!(cause_of(Outcome::Timeout), Cause::Other);
    }
}
