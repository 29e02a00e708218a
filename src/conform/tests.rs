//! Conform on traces whose truth is known: drawn by a policy, then held
//! to it and to others. Every statistical test here has a fixed seed; the
//! delay tests' family-wise error is at most `alpha` by construction (the
//! bootstrap and Holm's correction), so a conforming trace passing at one
//! seed is not luck of a loose tolerance.

use super::*;
use crate::control::{ControlSpec, Family};
use crate::policy::PolicyKind;
use crate::spec::RunSpec;

fn policy(kind: PolicyKind, base_ms: u64, cap_ms: u64) -> PolicySpec {
    let mut spec = RunSpec::seed_002(kind, 1).policy;
    spec.base_us = crate::base::time::Micros::from_ticks(base_ms * 1000);
    spec.cap_us = crate::base::time::Micros::from_ticks(cap_ms * 1000);
    spec
}

fn side(policy: PolicySpec, max_attempts: Option<u32>) -> RetrySide {
    RetrySide {
        policy,
        max_attempts,
        controls: Vec::new(),
        retry_on: RetryOn::ALL,
        deadline: None,
    }
}

const OPTIONS: Options = Options {
    alpha: 0.05,
    resolution_ms: 1.0,
    max_shift_ms: 10.0,
    // p-values in steps of 1/100: Holm's smallest threshold here, 0.05/4,
    // is still reachable.
    resamples: 99,
    seed: 7,
};

#[test]
fn a_policys_own_trace_conforms_to_it() {
    for kind in [
        PolicyKind::Full,
        PolicyKind::Equal,
        PolicyKind::Decorrelated,
        PolicyKind::None,
    ] {
        let p = policy(kind, 100, 2_000);
        let trace = synthetic(&p, 5, 200, 2.0, 50.0, 11);
        let c = conform(&trace, &side(p, Some(5)), &OPTIONS, &|| {});
        assert!(c.conforms(), "{kind:?}: {:?}", c.failures);
        assert_eq!(c.delays.len(), 4);
        assert!(c.delays.iter().all(|d| d.p_value.is_some()));
        // Outcome times are in the trace: the gaps are the delays, and the
        // shift (the delay's rounding to µs aside) is none.
        assert!(c.shift_ms < 0.01, "{kind:?}: {}", c.shift_ms);
        assert_eq!(c.decisions.retried_as_predicted, 200 * 4);
        assert_eq!(c.decisions.stopped_as_predicted, 200);
        assert_eq!(c.attempts_per_call, vec![0, 0, 0, 0, 200]);
    }
}

#[test]
fn another_policys_trace_is_refused() {
    // Full jitter's delays against equal jitter's, and the reverse; and
    // the capped exponential without jitter against full jitter.
    for (drawn, held_to) in [
        (PolicyKind::Full, PolicyKind::Equal),
        (PolicyKind::Equal, PolicyKind::Full),
        (PolicyKind::None, PolicyKind::Full),
        (PolicyKind::Full, PolicyKind::Decorrelated),
    ] {
        let trace = synthetic(&policy(drawn, 100, 2_000), 4, 200, 2.0, 50.0, 3);
        let c = conform(
            &trace,
            &side(policy(held_to, 100, 2_000), Some(4)),
            &OPTIONS,
            &|| {},
        );
        assert!(!c.conforms(), "{drawn:?} held to {held_to:?}");
        assert!(c.delays.iter().any(|d| d.rejected), "{:?}", c.failures);
    }
}

#[test]
fn a_slower_base_is_not_absorbed_by_the_shift() {
    // A constant delay of 150 ms held to 100 ms: a shift of 50 ms would
    // match every gap, but it is above the largest overhead allowed.
    let trace = synthetic(&policy(PolicyKind::Constant, 150, 150), 3, 50, 0.0, 10.0, 1);
    let c = conform(
        &trace,
        &side(policy(PolicyKind::Constant, 100, 100), Some(3)),
        &OPTIONS,
        &|| {},
    );
    // Every shift within the resolution (1 ms) of 50 ms matches as well.
    assert!((c.shift_ms - 50.0).abs() <= 1.0, "{}", c.shift_ms);
    assert!(!c.conforms());
    assert!(
        c.failures.iter().any(|f| f.contains("--max-shift")),
        "{:?}",
        c.failures
    );
}

#[test]
fn an_overhead_within_the_bound_is_estimated_and_allowed() {
    // Without outcome times, each gap holds the 3 ms attempt itself.
    let p = policy(PolicyKind::Full, 100, 2_000);
    let mut trace = synthetic(&p, 4, 300, 3.0, 50.0, 5);
    trace.has_done = false;
    trace
        .calls
        .iter_mut()
        .flat_map(|c| &mut c.attempts)
        .for_each(|a| a.done = None);
    let c = conform(&trace, &side(p, Some(4)), &OPTIONS, &|| {});
    assert!(c.conforms(), "{:?}", c.failures);
    // The shift's own error: the distances' sampling noise (about 1/√300)
    // over the density of full jitter's first delays (1 per 100 ms) is
    // about ±3 ms at 300 calls.
    assert!((c.shift_ms - 3.0).abs() < 3.0, "{}", c.shift_ms);
}

#[test]
fn attempts_beyond_the_limit_are_decisions_against_it() {
    let p = policy(PolicyKind::Full, 100, 2_000);
    let trace = synthetic(&p, 5, 100, 2.0, 50.0, 9);
    let c = conform(&trace, &side(p, Some(3)), &OPTIONS, &|| {});
    // Attempts 3 and 4 of every call retried where the limit stops.
    assert_eq!(c.decisions.retried_against, 200);
    assert_eq!(c.decisions.retried_as_predicted, 200);
    assert!(!c.conforms());
    // And a limit above the trace's: its last failures stop early, but so
    // near the trace's end only for the last calls.
    let c = conform(&trace, &side(p, Some(8)), &OPTIONS, &|| {});
    assert!(c.decisions.stopped_against > 0, "{:?}", c.decisions);
    assert!(c.decisions.censored > 0, "{:?}", c.decisions);
    assert!(!c.conforms());
}

#[test]
fn a_retry_budget_is_replayed_over_the_traces_outcomes() {
    // gRPC's throttle at 10 tokens: a failed attempt takes one, and no
    // retry while tokens ≤ 5. Calls one at a time, every attempt failing:
    // the first call retries until the sixth failure leaves 4 tokens.
    let spec = ControlSpec::parse(Family::Budget, "grpc:10,ratio:0.1")
        .unwrap()
        .unwrap();
    let p = policy(PolicyKind::Full, 100, 1_000);
    let mut held = side(p, Some(5));
    held.controls = vec![spec];
    // What the throttle lets through, drawn as the trace: 4 retries for
    // the first call (tokens 10 → 6 after four failures... the fifth
    // failure leaves 5: no retry), then none.
    let mut trace = synthetic(&p, 5, 6, 1.0, 20_000.0, 2);
    for call in trace.calls.iter_mut().skip(1) {
        call.attempts.truncate(1);
    }
    let c = conform(&trace, &held, &OPTIONS, &|| {});
    assert_eq!(
        c.decisions.predicted_retries(),
        c.decisions.observed_retries(),
        "{:?}",
        c.decisions
    );
    assert_eq!(c.decisions.mismatches(), 0, "{:?}", c.decisions);
    // The same trace with every call retrying is more than it allows.
    let trace = synthetic(&p, 5, 6, 1.0, 20_000.0, 2);
    let c = conform(&trace, &held, &OPTIONS, &|| {});
    assert!(c.decisions.retried_against >= 20, "{:?}", c.decisions);
    assert!(
        c.failures.iter().any(|f| f.contains("allows")),
        "{:?}",
        c.failures
    );
}

#[test]
fn controls_that_hold_attempts_back_are_refused() {
    let mut held = side(policy(PolicyKind::Full, 100, 1_000), None);
    held.controls = vec![
        ControlSpec::parse(Family::Throttle, "sre:2,window:2m")
            .unwrap()
            .unwrap(),
    ];
    let error = held.check().unwrap_err();
    assert!(error.contains("budgets and quotas only"), "{error}");
}

#[test]
fn the_test_is_the_same_at_any_thread_count() {
    let p = policy(PolicyKind::Decorrelated, 50, 1_000);
    let trace = synthetic(&p, 4, 60, 1.0, 20.0, 4);
    let held = side(p, Some(4));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let a = one.install(|| conform(&trace, &held, &OPTIONS, &|| {}));
    let b = conform(&trace, &held, &OPTIONS, &|| {});
    assert_eq!(a, b);
}
