//! The server loop against exact queueing results (here), call chains
//! ([`chains`]), and its windows, limits and draws ([`runs`]).

use super::*;
use crate::base::time::Micros;
use crate::measure::server_metrics::Window;
use crate::model::chain::RetryScope;
use crate::model::chain::{Chain, LayerSpec};
use crate::model::server::{Dist, NS_PER_MS, Service};
use crate::model::server::{FailureEnd, Load, NS_PER_S, RateChanges, TimeoutNoticed, TriggerKind};
use crate::policy::PolicySpec;
use crate::policy::{CapMode, PolicyKind};

pub(super) fn retry(kind: PolicyKind, max_attempts: Option<u32>) -> ServerRetry {
    ServerRetry {
        policy: PolicySpec {
            kind,
            base_us: Micros::from_ms(100),
            cap_us: Micros::from_s(20),
            step_us: None,
            jitter_factor: 0.0,
            first_exponent: 0,
            multiplier: 2.0,
            cap_mode: CapMode::Before,
            randomization_factor: 0.5,
            throttle_base_us: Micros::from_s(1),
        },
        max_attempts,
        controls: Vec::new(),
        fleet: None,
        deadline: None,
        retry_on: crate::model::retry_on::RetryOn::ALL,
        hedge: None,
        hedge_on_timeout: false,
    }
}

/// `value` of `replicates` runs of `spec`: their mean and its standard
/// error (the runs are independent, so the error is sd/√n).
pub(super) fn replicated(
    spec: &ServerSpec,
    retry: &ServerRetry,
    replicates: u64,
    value: impl Fn(&ServerMetrics) -> f64,
) -> (f64, f64) {
    let values: Vec<f64> = (0..replicates)
        .map(|r| {
            let m = simulate_server(spec, retry, Seeds::for_job(11, 0, r), u64::MAX);
            assert!(m.complete);
            value(&m)
        })
        .collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Asserts `got` (mean, standard error) is within 4 standard errors of
/// `exact`: a correct model fails such a check about once in 16,000.
pub(super) fn assert_near(what: &str, got: (f64, f64), exact: f64) {
    let (mean, se) = got;
    assert!(se > 0.0, "{what}: no spread between replicates");
    assert!(
        (mean - exact).abs() <= 4.0 * se,
        "{what}: {mean} ± {se} (se), exact {exact}: z = {:.2}",
        (mean - exact) / se
    );
}

/// M/M/c/K (K in system) with arrival rate `lambda` and service rate
/// `mu` (per ms): blocking probability, L and W (ms) of admitted
/// requests, from the birth–death chain's stationary distribution.
fn mmck(lambda: f64, mu: f64, c: u32, k: u32) -> (f64, f64, f64) {
    let mut p = vec![1.0f64];
    for n in 1..=k {
        let rate_out = mu * f64::from(n.min(c));
        p.push(p[n as usize - 1] * lambda / rate_out);
    }
    let total: f64 = p.iter().sum();
    let p: Vec<f64> = p.iter().map(|x| x / total).collect();
    let block = p[k as usize];
    let l: f64 = p.iter().enumerate().map(|(n, x)| n as f64 * x).sum();
    let w = l / (lambda * (1.0 - block));
    (block, l, w)
}

/// Erlang C: L and W (ms) of an M/M/c queue with no limit.
fn erlang_c(lambda: f64, mu: f64, c: u32) -> (f64, f64) {
    let a = lambda / mu;
    let rho = a / f64::from(c);
    let mut term = 1.0;
    let mut sum = 1.0;
    for n in 1..c {
        term *= a / f64::from(n);
        sum += term;
    }
    let last = term * a / f64::from(c) / (1.0 - rho);
    let wait_probability = last / (sum + last);
    let lq = wait_probability * rho / (1.0 - rho);
    let l = lq + a;
    (l, l / lambda)
}

pub(super) fn mm_spec(
    lambda_per_ms: f64,
    workers: Option<u32>,
    queue_limit: Option<u32>,
) -> ServerSpec {
    ServerSpec {
        load: Load::Open {
            rate_per_s: lambda_per_ms * 1_000.0,
            sources: 1,
            concurrency: None,
        },
        duration: 20 * NS_PER_S,
        workers,
        queue_limit,
        service: Service::One(Dist::Exp { mean: NS_PER_MS }),
        ..ServerSpec::default()
    }
}

#[test]
fn erlang_formulas_match_design_values() {
    let (block, l, w) = mmck(3.5, 1.0, 4, 20);
    assert!((block - 0.011788).abs() < 5e-7, "{block}");
    assert!((l - 7.06955).abs() < 5e-6, "{l}");
    assert!((w - 2.04397).abs() < 5e-6, "{w}");
}

#[test]
fn without_timeouts_and_retries_the_server_is_an_mmck_queue() {
    let no_retry = retry(PolicyKind::None, Some(1));
    // (λ per ms, c, K): the design's case, and one at ρ = 1.
    for (lambda, c, k) in [(3.5, 4, 20), (1.0, 1, 5)] {
        let spec = mm_spec(lambda, Some(c), Some(k - c));
        let (block, l, w) = mmck(lambda, 1.0, c, k);
        let case = format!("M/M/{c}/{k} at λ = {lambda}");
        assert_near(
            &format!("{case}: blocking"),
            replicated(&spec, &no_retry, 20, ServerMetrics::rejected_share),
            block,
        );
        assert_near(
            &format!("{case}: L"),
            replicated(&spec, &no_retry, 20, ServerMetrics::mean_in_system),
            l,
        );
        assert_near(
            &format!("{case}: W"),
            replicated(&spec, &no_retry, 20, ServerMetrics::mean_sojourn_ms),
            w,
        );
    }
    // Unbounded: Erlang C at ρ = 0.8.
    let spec = mm_spec(1.6, Some(2), None);
    let (l, w) = erlang_c(1.6, 1.0, 2);
    assert_near(
        "M/M/2: L",
        replicated(&spec, &no_retry, 20, ServerMetrics::mean_in_system),
        l,
    );
    assert_near(
        "M/M/2: W",
        replicated(&spec, &no_retry, 20, ServerMetrics::mean_sojourn_ms),
        w,
    );
}

#[test]
fn an_mm1_server_times_out_its_share_without_cancelling_work() {
    // λ = 0.5/ms, μ = 1/ms, T = 2 ms: the sojourn is Exp(μ − λ), so a
    // share e^{−(μ−λ)T} = e^{−1} of attempts time out; the queue does not
    // see them (work not cancelled), so utilisation stays λ/μ.
    let mut spec = mm_spec(0.5, Some(1), None);
    spec.timeout = Some(2 * NS_PER_MS);
    let no_retry = retry(PolicyKind::None, Some(1));
    let share = |m: &ServerMetrics| m.timeouts as f64 / m.attempts as f64;
    assert_near(
        "timeout share",
        replicated(&spec, &no_retry, 20, share),
        (-1.0f64).exp(),
    );
    assert_near(
        "utilisation",
        replicated(&spec, &no_retry, 20, ServerMetrics::utilisation),
        0.5,
    );
}

#[test]
fn an_infinite_server_with_immediate_retries_gives_the_geometric_figures() {
    // p = 0.3, N = 3 immediate retries: success 1 − p⁴, attempts per
    // request (1 − p⁴)/(1 − p).
    let spec = ServerSpec {
        workers: None,
        fail_rate: 0.3,
        service: Service::One(Dist::Const(NS_PER_MS)),
        duration: 10 * NS_PER_S,
        ..mm_spec(2.0, None, None)
    };
    let immediate = retry(PolicyKind::NoBackoff, Some(4));
    let p4 = 0.3f64.powi(4);
    assert_near(
        "success rate",
        replicated(&spec, &immediate, 20, ServerMetrics::success_rate),
        1.0 - p4,
    );
    assert_near(
        "attempts per request",
        replicated(&spec, &immediate, 20, ServerMetrics::amplification),
        (1.0 - p4) / 0.7,
    );
}

mod chains;
mod runs;
