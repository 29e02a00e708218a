//! Does a recorded retry trace behave as a policy and its controls say?
//! (`herdsim conform`.) Pure: the trace and the retry side of a spec in,
//! the tests' figures and a verdict out.
//!
//! Three checks, each from the trace alone:
//! - **Delays**, per retry number: the gaps between an attempt's outcome
//!   (or, without outcome times, its send) and the next attempt, less one
//!   overhead shift estimated from the whole trace, against the policy's
//!   own delays drawn for the same retry numbers after the same kinds of
//!   failure ([`ks::distance`], with the trace's timing resolution as
//!   tolerance). Each retry number's p-value comes from a parametric
//!   bootstrap of the whole procedure (the shift estimated anew in every
//!   resample), so estimating the shift does not make the test lenient;
//!   Holm's correction keeps the family-wise error at `alpha`.
//! - **Decisions**: every failed attempt either retried or not; the
//!   configuration's attempt limit, retryable outcomes and retry budget or
//!   quota (replayed over the trace's own outcomes, in time order) say
//!   which it should have. A stop too near the trace's end to be sure of is
//!   censored.
//! - **The shift** itself: a constant longer than `max_shift` is a policy
//!   slower than configured (or attempt durations in the gaps), not
//!   overhead.

pub mod ks;
pub mod trace;

use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;

use crate::base::seeding::{job_rng, splitmix64};
use crate::control::{Controls, Family, Outcome};
use crate::model::retry_on::RetryOn;
use crate::model::server::Nanos;
use crate::policy::{AnyPolicy, Cause, PolicySpec};
use crate::sim::retry_decision::cause_of;
use trace::Trace;

/// What the trace is held to: the retry side of a spec.
#[derive(Debug, Clone)]
pub struct RetrySide {
    pub policy: PolicySpec,
    pub max_attempts: Option<u32>,
    /// Budget-family controls only (retry budgets, token buckets, quotas):
    /// replayed over the trace.
    pub controls: Vec<crate::control::ControlSpec>,
    pub retry_on: RetryOn,
    /// The users' deadline (a gRPC call's timeout): a call may stop short
    /// of its attempts when the next would start after it.
    pub deadline: Option<Nanos>,
}

impl RetrySide {
    /// Refuses what conform cannot replay: controls that hold attempts
    /// back or refuse calls (their waits would be in the gaps).
    pub fn check(&self) -> Result<(), String> {
        match self.controls.iter().find(|c| c.family() != Family::Budget) {
            Some(c) => Err(format!(
                "conform replays retry budgets and quotas only; the {} control `{}` holds \
                 attempts back or refuses them, and its waits would be in the trace's gaps",
                c.family().key(),
                c.about().name
            )),
            None => Ok(()),
        }
    }
}

/// How strictly the trace is tested.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Family-wise significance level of the delay tests.
    pub alpha: f64,
    /// The trace's timing resolution, ms: a gap within it of the policy's
    /// delay matches it.
    pub resolution_ms: f64,
    /// The largest overhead shift, ms, that is overhead.
    pub max_shift_ms: f64,
    /// Bootstrap resamples per test.
    pub resamples: u32,
    /// Seed of the policy's reference draws and the resamples.
    pub seed: u64,
}

/// Fewest gaps at a retry number for its delays to be tested.
pub const MIN_TESTED: usize = 5;

/// Policy delays drawn per tested retry number for the reference (its own
/// noise is then small beside any trace's, and the resamples carry it).
const REFERENCE_DRAWS: usize = 20_000;

/// Most policy delays drawn for the reference in all.
const MAX_REFERENCE_DRAWS: usize = 4_000_000;

/// One retry number's delay test.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DelayTest {
    /// 1 is the first retry.
    pub retry: u32,
    /// Gaps at this retry number.
    pub gaps: usize,
    /// The trace's gaps less the shift, ms: 10th, 50th and 90th percentiles.
    pub trace_ms: [f64; 3],
    /// The policy's delays, ms: the same percentiles.
    pub policy_ms: [f64; 3],
    /// The distance between them ([`ks::distance`]); `None` below
    /// [`MIN_TESTED`] gaps.
    pub distance: Option<f64>,
    /// The bootstrap p-value.
    pub p_value: Option<f64>,
    /// Rejected after Holm's correction.
    pub rejected: bool,
}

/// How the failed attempts' retry decisions compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Decisions {
    /// Retried, as the configuration says.
    pub retried_as_predicted: u64,
    /// Not retried, as the configuration says.
    pub stopped_as_predicted: u64,
    /// Retried where the configuration stops (its limit, a non-retryable
    /// outcome, or its budget).
    pub retried_against: u64,
    /// Not retried where the configuration retries.
    pub stopped_against: u64,
    /// Not retried, but too near the trace's end (or the call's deadline)
    /// to say whether it would have.
    pub censored: u64,
}

impl Decisions {
    /// Retries the trace made, of the decisions not censored.
    pub fn observed_retries(&self) -> u64 {
        self.retried_as_predicted + self.retried_against
    }
    /// Retries the configuration allows over the same decisions.
    pub fn predicted_retries(&self) -> u64 {
        self.retried_as_predicted + self.stopped_against
    }
    /// Decisions that differ.
    pub fn mismatches(&self) -> u64 {
        self.retried_against + self.stopped_against
    }
}

/// The whole test.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Conformance {
    pub calls: usize,
    pub attempts: usize,
    /// Attempts by outcome: success, failure, throttled, timeout.
    pub outcomes: [usize; 4],
    /// Calls by their attempts (index 0: one attempt).
    pub attempts_per_call: Vec<usize>,
    /// True if gaps start at outcomes (the trace has done times).
    pub from_outcomes: bool,
    /// The overhead shift, ms.
    pub shift_ms: f64,
    pub delays: Vec<DelayTest>,
    pub decisions: Decisions,
    /// Retries allowed by a budget or quota may differ by this many in
    /// total (the replay orders outcomes of overlapping calls by the
    /// trace's times, which a client may have seen in another order).
    pub decision_tolerance: u64,
    /// Why the trace does not conform; empty if it does.
    pub failures: Vec<String>,
}

impl Conformance {
    pub fn conforms(&self) -> bool {
        self.failures.is_empty()
    }
}

/// One call's retries as the tests need them.
struct Retries {
    /// Each retry's gap, ms.
    gaps: Vec<f64>,
    /// The kind of failure each retry followed.
    causes: Vec<Cause>,
}

/// The gaps of `trace`'s retries after failures, call by call (a retry
/// after a success is the decisions' to count, and ends the call's gaps).
fn retries_of(trace: &Trace) -> Vec<Retries> {
    let ms = |t: Nanos| t.ticks() as f64 / 1e6;
    trace
        .calls
        .iter()
        .map(|call| {
            let mut r = Retries {
                gaps: Vec::new(),
                causes: Vec::new(),
            };
            for pair in call.attempts.windows(2) {
                let (before, next) = (pair[0], pair[1]);
                if before.outcome == Outcome::Success {
                    break;
                }
                let from = before.done.unwrap_or(before.sent);
                r.gaps.push(ms(next.sent) - ms(from));
                r.causes.push(cause_of(before.outcome));
            }
            r
        })
        .collect()
}

/// A caller's delays, ms, for retries after `causes`, from a fresh walk.
fn draw(
    policy: &AnyPolicy,
    causes: &[Cause],
    rng: &mut Pcg64Mcg,
    mut each: impl FnMut(usize, f64),
) {
    let mut walk = policy.start();
    for (i, &cause) in causes.iter().enumerate() {
        let delay = policy.delay_after(i as u32 + 1, cause, &mut walk, rng);
        each(i, delay.ticks() as f64 / 1e3);
    }
}

/// Sorts each list of `lists`.
fn sort_each(lists: &mut [Vec<f64>]) {
    lists.iter_mut().for_each(|l| l.sort_by(f64::total_cmp));
}

/// Tests `trace` against `side`, calling `on_resample` as each bootstrap
/// resample is done (for progress: a trace of many retries takes a while).
pub fn conform(
    trace: &Trace,
    side: &RetrySide,
    options: &Options,
    on_resample: &(dyn Fn() + Sync),
) -> Conformance {
    let policy = AnyPolicy::new(&side.policy);
    let retries = retries_of(trace);
    let deepest = retries.iter().map(|r| r.gaps.len()).max().unwrap_or(0);
    let mut gaps: Vec<Vec<f64>> = vec![Vec::new(); deepest];
    for r in &retries {
        for (k, &g) in r.gaps.iter().enumerate() {
            gaps[k].push(g);
        }
    }
    sort_each(&mut gaps);
    let tested: Vec<bool> = gaps.iter().map(|g| g.len() >= MIN_TESTED).collect();
    let with_retries: Vec<&Retries> = retries.iter().filter(|r| !r.gaps.is_empty()).collect();

    // The policy's delays for the same retry numbers after the same causes:
    // the trace's calls' cause sequences, drawn again and again.
    let fewest = gaps
        .iter()
        .map(Vec::len)
        .filter(|&n| n >= MIN_TESTED)
        .min()
        .unwrap_or(1);
    let per_round: usize = with_retries.iter().map(|r| r.gaps.len()).sum();
    let rounds = REFERENCE_DRAWS
        .div_ceil(fewest)
        .min(MAX_REFERENCE_DRAWS / per_round.max(1))
        .max(1);
    let mut references: Vec<Vec<f64>> = vec![Vec::new(); deepest];
    let mut rng = job_rng(splitmix64(options.seed));
    for _ in 0..rounds {
        for r in &with_retries {
            draw(&policy, &r.causes, &mut rng, |k, d| references[k].push(d));
        }
    }
    sort_each(&mut references);

    let tolerance = options.resolution_ms;
    let shift = ks::shift(&gaps, &references, tolerance);
    let observed: Vec<Option<f64>> = (0..deepest)
        .map(|k| tested[k].then(|| ks::distance(&gaps[k], shift, &references[k], tolerance)))
        .collect();

    // The parametric bootstrap: the trace's calls with the policy's own
    // delays plus the shift, the shift estimated again, each retry
    // number's distance.
    let resampled: Vec<Vec<f64>> = (0..options.resamples)
        .into_par_iter()
        .map(|b| {
            let mut rng = job_rng(splitmix64(options.seed ^ splitmix64(u64::from(b) + 1)));
            let mut fake: Vec<Vec<f64>> = vec![Vec::new(); deepest];
            for r in &with_retries {
                draw(&policy, &r.causes, &mut rng, |k, d| fake[k].push(d + shift));
            }
            sort_each(&mut fake);
            let fake_shift = ks::shift(&fake, &references, tolerance);
            on_resample();
            (0..deepest)
                .map(|k| {
                    if tested[k] {
                        ks::distance(&fake[k], fake_shift, &references[k], tolerance)
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    let p_values: Vec<Option<f64>> = observed
        .iter()
        .enumerate()
        .map(|(k, d)| {
            d.map(|d| {
                // A resample at least as far counts (ties included, with a
                // hair for rounding).
                let beyond = resampled.iter().filter(|r| r[k] >= d - 1e-12).count();
                (1 + beyond) as f64 / (1 + resampled.len()) as f64
            })
        })
        .collect();
    let tested_p: Vec<f64> = p_values.iter().flatten().copied().collect();
    let mut rejected = ks::holm(&tested_p, options.alpha).into_iter();
    let quartet = |values: &[f64], less: f64| {
        if values.is_empty() {
            [f64::NAN; 3]
        } else {
            [0.1, 0.5, 0.9].map(|q| ks::quantile(values, q) - less)
        }
    };
    let delays: Vec<DelayTest> = (0..deepest)
        .map(|k| DelayTest {
            retry: k as u32 + 1,
            gaps: gaps[k].len(),
            trace_ms: quartet(&gaps[k], shift),
            policy_ms: quartet(&references[k], 0.0),
            distance: observed[k],
            p_value: p_values[k],
            rejected: p_values[k].is_some() && rejected.next().unwrap_or(false),
        })
        .collect();

    let horizon_ms = references
        .iter()
        .filter_map(|r| r.last())
        .fold(side.policy.cap_us.ticks() as f64 / 1e3, |a, &b| a.max(b));
    let decisions = replay(trace, side, horizon_ms + shift + tolerance, options.seed);
    let controls = !side.controls.is_empty();
    let decision_tolerance = if controls {
        (decisions.predicted_retries() as f64 * 0.02)
            .ceil()
            .max(1.0) as u64
    } else {
        0
    };

    let mut outcomes = [0; 4];
    let mut attempts_per_call = Vec::new();
    for call in &trace.calls {
        for a in &call.attempts {
            outcomes[outcome_index(a.outcome)] += 1;
        }
        let n = call.attempts.len();
        if attempts_per_call.len() < n {
            attempts_per_call.resize(n, 0);
        }
        attempts_per_call[n - 1] += 1;
    }

    let mut failures = Vec::new();
    let rejected_retries: Vec<String> = delays
        .iter()
        .filter(|d| d.rejected)
        .map(|d| d.retry.to_string())
        .collect();
    if !rejected_retries.is_empty() {
        failures.push(format!(
            "the delays of retry {} differ from the policy's (Holm-corrected at α = {})",
            rejected_retries.join(", "),
            options.alpha
        ));
    }
    if shift > options.max_shift_ms {
        failures.push(format!(
            "the overhead shift {shift:.2} ms is above --max-shift {} ms: the delays are longer \
             than the policy's by a constant{}",
            options.max_shift_ms,
            if trace.has_done {
                ""
            } else {
                " (or the attempts' own durations are in the gaps: record done times)"
            }
        ));
    }
    let (observed_retries, predicted_retries) =
        (decisions.observed_retries(), decisions.predicted_retries());
    if controls {
        if observed_retries.abs_diff(predicted_retries) > decision_tolerance {
            failures.push(format!(
                "the trace retried {observed_retries} times where the configuration allows \
                 {predicted_retries} (±{decision_tolerance})"
            ));
        }
    } else if decisions.mismatches() > 0 {
        failures.push(format!(
            "{} retry decisions differ from the configuration's ({} retried where it stops, {} \
             stopped where it retries)",
            decisions.mismatches(),
            decisions.retried_against,
            decisions.stopped_against
        ));
    }
    if !delays.iter().any(|d| d.distance.is_some()) {
        failures.push(format!(
            "no retry number has {MIN_TESTED} gaps to test: the trace shows too few retries"
        ));
    }
    Conformance {
        calls: trace.calls.len(),
        attempts: trace.attempts(),
        outcomes,
        attempts_per_call,
        from_outcomes: trace.has_done,
        shift_ms: shift,
        delays,
        decisions,
        decision_tolerance,
        failures,
    }
}

/// The index of `outcome` in [`Conformance::outcomes`].
pub fn outcome_index(outcome: Outcome) -> usize {
    match outcome {
        Outcome::Success => 0,
        Outcome::Failure => 1,
        Outcome::Rejected => 2,
        Outcome::Timeout => 3,
    }
}

/// One moment of the replay: an attempt sent, or its outcome known.
#[derive(Clone, Copy)]
struct Moment {
    at: Nanos,
    /// Outcomes before sends at one instant (a retry sent at its failure's
    /// instant follows it).
    is_send: bool,
    call: usize,
    attempt: usize,
}

/// Replays the trace's attempts and outcomes in time order through the
/// configuration's limits and budget, deciding each failed attempt's retry
/// as the simulator would, and compares it with what the trace did. A stop
/// with the trace ending within `horizon_ms` of its outcome is censored.
fn replay(trace: &Trace, side: &RetrySide, horizon_ms: f64, seed: u64) -> Decisions {
    let mut controls = Controls::new(&side.controls, 1, None, splitmix64(seed ^ 0xC0F0));
    let mut moments: Vec<Moment> = Vec::with_capacity(trace.attempts() * 2);
    for (call, c) in trace.calls.iter().enumerate() {
        for (attempt, a) in c.attempts.iter().enumerate() {
            let base = Moment {
                at: a.sent,
                is_send: true,
                call,
                attempt,
            };
            moments.push(base);
            moments.push(Moment {
                at: a.done.unwrap_or(a.sent),
                is_send: false,
                ..base
            });
        }
    }
    moments.sort_by_key(|m| (m.at, m.is_send));
    let horizon = Nanos::from_ticks((horizon_ms * 1e6) as u64);
    let mut decisions = Decisions::default();
    for m in moments {
        let call = &trace.calls[m.call];
        let a = call.attempts[m.attempt];
        let retry_of = (m.attempt > 0).then(|| call.attempts[m.attempt - 1].outcome);
        if m.is_send {
            if let Some(controls) = controls.as_mut() {
                if m.attempt == 0 {
                    controls.request_started(0, m.at);
                }
                controls.attempt_sent(0, m.at, retry_of);
            }
            continue;
        }
        if let Some(controls) = controls.as_mut() {
            controls.attempt_ended(0, m.at, a.sent, a.outcome, retry_of);
        }
        let retried = m.attempt + 1 < call.attempts.len();
        let tries = m.attempt as u32 + 1;
        let limits_allow = a.outcome.failed()
            && side.retry_on.retries(a.outcome)
            && side.max_attempts.is_none_or(|max| tries < max);
        let allowed = limits_allow
            && controls
                .as_mut()
                .is_none_or(|c| c.allow_retry(0, m.at, a.outcome));
        match (allowed, retried) {
            (true, true) => decisions.retried_as_predicted += 1,
            (false, false) => decisions.stopped_as_predicted += 1,
            (false, true) => decisions.retried_against += 1,
            (true, false) => {
                let near_end = m.at.saturating_add(horizon) > trace.end;
                let started = call.attempts[0].sent;
                let near_deadline = side
                    .deadline
                    .is_some_and(|d| m.at.saturating_add(horizon) >= started.saturating_add(d));
                if near_end || near_deadline {
                    decisions.censored += 1;
                } else {
                    decisions.stopped_against += 1;
                }
                if let Some(controls) = controls.as_mut() {
                    controls.retry_dropped(0, m.at);
                }
            }
        }
    }
    decisions
}

/// A synthetic trace of `calls` calls by `side`'s policy, each failing
/// every attempt (as `herdsim policy` samples), its attempts taking
/// `attempt_ms` each and its outcome known when they end; calls start
/// `spacing_ms` apart. For checking conform itself, and for a library's
/// author to see what a conforming trace looks like.
pub fn synthetic(
    policy: &PolicySpec,
    attempts: u32,
    calls: u32,
    attempt_ms: f64,
    spacing_ms: f64,
    seed: u64,
) -> Trace {
    let any = AnyPolicy::new(policy);
    let mut rng = job_rng(splitmix64(seed));
    let ns = |ms: f64| Nanos::from_ticks((ms * 1e6).round() as u64);
    let causes = vec![Cause::Other; attempts.saturating_sub(1) as usize];
    let mut end = Nanos::ZERO;
    let calls = (0..calls)
        .map(|i| {
            let mut t = f64::from(i) * spacing_ms;
            let mut list = vec![trace::Attempt {
                sent: ns(t),
                done: Some(ns(t + attempt_ms)),
                outcome: Outcome::Failure,
            }];
            draw(&any, &causes, &mut rng, |_, d| {
                t += attempt_ms + d;
                list.push(trace::Attempt {
                    sent: ns(t),
                    done: Some(ns(t + attempt_ms)),
                    outcome: Outcome::Failure,
                });
            });
            end = end.max(ns(t + attempt_ms));
            trace::Call {
                id: format!("c{i}"),
                attempts: list,
            }
        })
        .collect();
    Trace {
        calls,
        has_done: true,
        end,
    }
}

#[cfg(test)]
mod tests;
