//! The default workload against the design's reference figures: slot resource,
//! 1000 clients, 1 per ms, base 100 ms, cap 20 s; mean ± sd over 20 seeds from
//! an independent implementation.

use herdsim::base::seeding::DEFAULT_MASTER_SEED;
use herdsim::experiment::replicates::{run_replicates, summarize};
use herdsim::{PolicyKind, RunSpec};

fn default_workload(kind: PolicyKind) -> RunSpec {
    RunSpec::seed_002(kind, 1_000)
}

/// Our replicates of `kind`: mean and standard error of `metric`.
fn measure(kind: PolicyKind, metric: &str, seeds: u32) -> (f64, f64) {
    let runs = run_replicates(
        &default_workload(kind),
        DEFAULT_MASTER_SEED,
        0,
        seeds,
        || {},
    );
    let (_, summary) = summarize(&runs)
        .into_iter()
        .find(|(m, _)| m.name() == metric)
        .unwrap();
    (summary.mean, summary.standard_error().unwrap())
}

/// Asserts our mean agrees with the reference's within 3 standard errors of
/// the difference of two independent means: √(SE_ours² + (sd_ref/√20)²).
/// Three SEs is the tolerance; a modelling error (say a different
/// tie-break or ceiling formula) moves these means by tens of SEs.
fn assert_agrees(kind: PolicyKind, metric: &str, ref_mean: f64, ref_sd: f64) {
    const SEEDS: u32 = 100;
    let (mean, se) = measure(kind, metric, SEEDS);
    let se_diff = (se * se + ref_sd * ref_sd / 20.0).sqrt();
    let z = (mean - ref_mean) / se_diff;
    assert!(
        z.abs() <= 3.0,
        "{kind} {metric}: {mean:.1} vs reference {ref_mean} ({z:+.2} SE, SE {se_diff:.2})"
    );
}

#[test]
fn no_jitter_makes_exactly_500_500_calls() {
    // Each synchronised wave serves one client: 1000 + 999 + ... + 1 calls.
    let runs = run_replicates(&default_workload(PolicyKind::None), 7, 0, 20, || {});
    assert!(
        runs.iter()
            .all(|r| r.calls == 500_500 && r.successes == 1_000)
    );
}

#[test]
fn equal_jitter_matches_the_reference() {
    assert_agrees(PolicyKind::Equal, "calls", 4_844.0, 14.0);
    assert_agrees(PolicyKind::Equal, "peak_retries", 31.0, 3.0);
}

#[test]
fn full_jitter_matches_the_reference() {
    assert_agrees(PolicyKind::Full, "calls", 4_725.0, 15.0);
    assert_agrees(PolicyKind::Full, "peak_retries", 24.0, 2.0);
}

#[test]
fn decorrelated_jitter_matches_the_reference() {
    assert_agrees(PolicyKind::Decorrelated, "calls", 3_740.0, 24.0);
    assert_agrees(PolicyKind::Decorrelated, "peak_retries", 13.0, 1.0);
}
