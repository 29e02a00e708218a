//! Production retry controls: budgets, server hints, shared seeding, and the
//! `herdsim policy` report.

use crate::common::usage_error;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::base::seeding::Seeds;
use herdsim::base::seeding::job_rng;
use herdsim::base::time::{Micros, Nanos};
use herdsim::control::aws_quota::AwsQuotaSpec;
use herdsim::control::ratio_budget::RatioBudgetSpec;
use herdsim::control::retry_after::RetryAfter;
use herdsim::control::{ControlSpec, Controls, Family, Outcome};
use herdsim::policy::{Backoff, DecorrelatedCeiling, DecorrelatedV2};
use herdsim::sim::engine::simulate;
use herdsim::spec::Seeding;
use herdsim::{PolicyKind, RunSpec};
use proptest::prelude::*;

/// One thing a fleet's clients do: make a first call, ask to retry, succeed.
#[derive(Debug, Clone, Copy)]
enum Event {
    Request,
    Retry,
    Success { on_retry: bool },
}

fn events() -> impl Strategy<Value = Vec<Event>> {
    prop::collection::vec(
        prop_oneof![
            Just(Event::Request),
            Just(Event::Retry),
            any::<bool>().prop_map(|on_retry| Event::Success { on_retry }),
        ],
        0..400,
    )
}

proptest! {
    #[test]
    fn a_token_budget_never_grants_more_than_its_tokens(
        capacity in 1u64..200, cost in 1u64..20, refund in 0u64..5, events in events(),
    ) {
        // Every grant takes `cost` from a bucket that starts at `capacity` and
        // is credited at most `cost` per successful retry and `refund` per
        // first-try success: grants·cost ≤ capacity + credits, at all times.
        let spec = ControlSpec::AwsQuota(AwsQuotaSpec { capacity, cost, refund, timeout_cost: None, throttle_cost: None });
        let mut budget = Controls::new(&[spec], 1, Some(1), 0).unwrap();
        let (mut granted, mut credits) = (0u64, 0u64);
        for event in events {
            match event {
                Event::Request => budget.request_started(0, Nanos::ZERO),
                Event::Retry => granted += u64::from(budget.allow_retry(0, Nanos::ZERO, Outcome::Failure)),
                Event::Success { on_retry } => {
                    budget.attempt_ended(0, Nanos::ZERO, Nanos::ZERO, Outcome::Success, on_retry.then_some(Outcome::Failure));
                    credits += if on_retry { cost } else { refund };
                }
            }
            prop_assert!(granted * cost <= capacity + credits);
        }
    }

    #[test]
    fn a_ratio_budget_never_grants_more_than_its_share(
        ratio in 0.0f64..2.0, min in 0u64..20, events in events(),
    ) {
        let spec = ControlSpec::Ratio(RatioBudgetSpec { ratio, min });
        let mut budget = Controls::new(&[spec], 1, Some(1), 0).unwrap();
        let (mut granted, mut requests) = (0u64, 0u64);
        for event in events {
            match event {
                Event::Request => { budget.request_started(0, Nanos::ZERO); requests += 1; }
                Event::Retry => granted += u64::from(budget.allow_retry(0, Nanos::ZERO, Outcome::Failure)),
                Event::Success { on_retry } => {
                    budget.attempt_ended(0, Nanos::ZERO, Nanos::ZERO, Outcome::Success, on_retry.then_some(Outcome::Failure));
                }
            }
            prop_assert!(granted as f64 <= min as f64 + ratio * requests as f64 + 1e-9);
        }
    }

    #[test]
    fn a_fleet_never_retries_past_its_ratio(
        clients in 1u32..400, fleet in 1u32..100, ratio in 0.0f64..1.0, min in 0u64..10, master in any::<u64>(),
    ) {
        let mut spec = RunSpec::seed_002(PolicyKind::Full, clients);
        spec.budget = Some(ControlSpec::Ratio(RatioBudgetSpec { ratio, min }));
        spec.fleet = Some(fleet);
        let m = simulate(&spec, Seeds::for_job(master, 0, 0));
        // Each fleet retries at most min + ratio·(its clients).
        let fleets = clients.div_ceil(fleet);
        let bound: f64 = (0..fleets)
            .map(|f| min as f64 + ratio * f64::from(fleet.min(clients - f * fleet)))
            .sum();
        prop_assert!(m.retries as f64 <= bound + 1e-9, "{} retries, bound {bound}", m.retries);
        prop_assert_eq!(m.successes + m.gave_up, u64::from(clients));
    }
}

#[test]
fn the_aws_quota_ends_a_storm_early() {
    // 1,000 clients, one 500-token bucket, 5 per retry: about 100 retries
    // before it runs dry; successes refill it only slowly.
    let mut spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
    spec.budget = ControlSpec::parse(Family::Budget, "tokens:500,cost:5,refund:1").unwrap();
    let m = simulate(&spec, Seeds::for_job(1, 0, 0));
    assert!(m.gave_up > 800, "{m:?}");
    assert!(m.retries < 200, "{m:?}");
}

#[test]
fn shared_seeding_keeps_the_herd_together() {
    // Full jitter with every client's generator seeded alike: clients that
    // failed together draw the same delay and retry together, so the peak
    // retries in one slot is every surviving client (999 of 1,000).
    let run = |seeding| {
        let mut spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
        spec.seeding = seeding;
        simulate(&spec, Seeds::for_job(2, 0, 0))
    };
    let shared = run(Seeding::Shared);
    let independent = run(Seeding::Independent);
    assert!(shared.peak_retries >= 990, "{}", shared.peak_retries);
    assert!(
        independent.peak_retries < 50,
        "{}",
        independent.peak_retries
    );
}

#[test]
fn retry_hints_as_a_floor_spread_the_herd() {
    let run = |mode| {
        let mut spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
        spec.retry_after = mode;
        simulate(&spec, Seeds::for_job(3, 0, 0))
    };
    let ignore = run(RetryAfter::Ignore);
    let floor = run(RetryAfter::Floor);
    let jitter = run(RetryAfter::FloorJitter);
    let aws = run(RetryAfter::Aws);
    // A backlog of at most 1,000 clients × 1 ms is under the 5 s AWS's
    // clamp allows above the delay: the AWS SDKs' rule is the floor here.
    assert_eq!(
        (aws.calls, aws.last_success_us),
        (floor.calls, floor.last_success_us)
    );
    // Waiting out the backlog makes far fewer calls than guessing.
    assert!(
        floor.calls * 2 < ignore.calls,
        "{} vs {}",
        floor.calls,
        ignore.calls
    );
    assert!(
        jitter.calls < ignore.calls,
        "{} vs {}",
        jitter.calls,
        ignore.calls
    );
}

#[test]
fn decorrelated_ceiling_first_draw_is_uniform_on_base_to_three_base() {
    // U[100, 300] ms: mean 200 ms; SE = 57.7 ms/√100,000 = 0.18 ms; 4 SE.
    let p = DecorrelatedCeiling {
        base: Micros::from_ms(100),
        cap: Micros::from_s(20),
    };
    let mut rng = job_rng(9);
    let mean = (0..100_000)
        .map(|_| (p.delay(1, &mut p.start(), &mut rng)).ticks() as f64)
        .sum::<f64>()
        / 1e5;
    assert!((mean - 200_000.0).abs() < 730.0, "{mean}");
}

#[test]
fn decorrelated_v2_first_delay_has_the_formulas_mean() {
    // E[f(U)]·base/1.4 with f(t) = 2^t·tanh(√(4t)), by Simpson's rule.
    let f = |t: f64| 2f64.powf(t) * (4.0 * t).sqrt().tanh();
    let n = 10_000;
    let h = 1.0 / n as f64;
    let integral = (0..=n)
        .map(|i| {
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * f(i as f64 * h)
        })
        .sum::<f64>()
        * h
        / 3.0;
    let expected = integral / 1.4 * 100_000.0;
    let p = DecorrelatedV2 {
        base: Micros::from_ms(100),
        cap: Micros::from_ticks(u64::MAX),
    };
    let mut rng = job_rng(10);
    let draws: Vec<f64> = (0..100_000)
        .map(|_| (p.delay(1, &mut p.start(), &mut rng)).ticks() as f64)
        .collect();
    let mean = draws.iter().sum::<f64>() / 1e5;
    let sd = (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / 1e5).sqrt();
    // Four standard errors of the mean.
    assert!(
        (mean - expected).abs() < 4.0 * sd / 1e5f64.sqrt(),
        "{mean} vs {expected}"
    );
}

#[test]
fn herdsim_policy_reports_seed_000s_walk_and_the_exponential_cap() {
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "policy",
            "decorrelated",
            "--base",
            "100ms",
            "--cap",
            "10s",
            "--samples",
            "100000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let walk = text
        .lines()
        .find(|l| l.starts_with("Walks to the cap"))
        .unwrap();
    assert!(walk.contains("median 14 draws"), "{walk}");
    let ratio: f64 = walk
        .rsplit("step ratio ")
        .next()
        .unwrap()
        .trim_end_matches('.')
        .parse()
        .unwrap();
    assert!((ratio - 1.53).abs() <= 0.02, "{ratio}");

    let out = cargo_bin_cmd!("herdsim")
        .args(["policy", "none", "--cap", "10s"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Every delay is the cap from retry 8."),
        "{text}"
    );
}

#[test]
fn herdsim_policy_writes_csv_and_rejects_bad_input() {
    let dir = std::env::temp_dir().join(format!("herdsim-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("p.csv");
    let _ = std::fs::remove_file(&csv);
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "policy",
            "full,grpc-connection,grpc-retry,fibonacci",
            "--retries",
            "5",
            "--csv",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 1 + 4 * 5);
    assert!(text.starts_with(
        "policy,retry,delay_p1_ms,delay_p50_ms,delay_p99_ms,at_cap_share,wait_p50_ms\n"
    ));
    for args in [
        &["policy", "jittery"][..],
        &["policy", "full", "--samples", "0"][..],
        &["policy"][..],
    ] {
        usage_error(args);
    }
}

#[test]
fn budgets_and_hints_are_validated() {
    for (args, says) in [
        (&["--budget", "tokens:500"][..], "--budget"),
        (&["--budget", "ratio:x,min:1"][..], "--budget"),
        (&["--fleet", "0"][..], "--fleet"),
        (&["--retry-after", "sometimes"][..], "--retry-after"),
        (
            &[
                "--retry-after",
                "floor",
                "--resource",
                "outage",
                "--max-attempts",
                "3",
            ][..],
            "retry-after",
        ),
        (&["--seeding", "fixed"][..], "--seeding"),
        (&["--cap-mode", "during"][..], "--cap-mode"),
    ] {
        let err = usage_error(&[&["run"][..], args].concat());
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_schedule_too_big_to_keep_is_refused_before_any_work() {
    // 10,000,000 samples × 100 retries would keep 10^9 delays (8 GB) per
    // policy; each limit alone is accepted.
    let err = usage_error(&[
        "policy",
        "full",
        "--samples",
        "10000000",
        "--retries",
        "100",
    ]);
    assert!(
        err.contains("--samples") && err.contains("--retries"),
        "{err}"
    );
    assert!(err.contains("1,000,000,000 delays"), "{err}");
}
