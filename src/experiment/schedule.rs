//! A policy's schedule without contention: what `herdsim policy` reports.
//!
//! Many independent clients each fail every attempt; for each retry number the
//! distribution of its delay and of the total wait so far. Nothing contends,
//! so this is the policy alone, as its library would produce it.

use crate::base::seeding::job_rng;
use crate::base::time::Micros;
use crate::measure::metrics::{nearest_rank, nearest_ranks};
use crate::policy::{Backoff, CapWalk, DecorrelatedJitter, PolicyKind, PolicySpec, PolicyVisitor};

/// One retry number's delays over all samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryDelays {
    /// The retry number (1 is the first retry).
    pub retry: u32,
    /// 1st percentile of the delay, µs.
    pub p1: Micros,
    /// Median delay, µs.
    pub p50: Micros,
    /// 99th percentile of the delay, µs.
    pub p99: Micros,
    /// Share of delays exactly at the cap.
    pub at_cap: f64,
    /// Median of the total wait up to this retry, µs.
    pub wait_p50: Micros,
}

/// How decorrelated walks reach the cap (seed 000's figures).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkToCap {
    /// Median draws until a delay equals the cap.
    pub median: u32,
    /// 1st percentile.
    pub p1: u32,
    /// 99th percentile.
    pub p99: u32,
    /// Most draws any walk took.
    pub max: u32,
    /// Mean draw over mean previous delay, over every draw of every walk.
    pub step_ratio: f64,
}

/// A policy's schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// The policy.
    pub policy: PolicySpec,
    /// Clients sampled.
    pub samples: u32,
    /// Each retry number's delays.
    pub retries: Vec<RetryDelays>,
    /// The first retry from which every sampled delay is the cap, if any.
    pub all_at_cap_from: Option<u32>,
    /// For `decorrelated`: how its walks reach the cap.
    pub walk: Option<WalkToCap>,
}

/// The schedule of `policy` over `retries` retries for `samples` clients,
/// drawn from the generator of `seed`.
pub fn schedule(policy: &PolicySpec, retries: u32, samples: u32, seed: u64) -> Schedule {
    assert!(
        retries >= 1 && samples >= 1,
        "at least one retry and one sample"
    );
    let mut delays = policy.visit(Sample {
        retries,
        samples,
        seed,
    });
    let mut table = Vec::with_capacity(retries as usize);
    let mut waits = vec![Micros::ZERO; samples as usize];
    for (k, column) in delays.iter_mut().enumerate() {
        for (wait, &d) in waits.iter_mut().zip(column.iter()) {
            *wait += d;
        }
        let at_cap =
            column.iter().filter(|&&d| d == policy.cap_us).count() as f64 / f64::from(samples);
        let mut wait_copy = waits.clone();
        let [p1, p50, p99] = nearest_ranks(column, [1.0, 50.0, 99.0]);
        table.push(RetryDelays {
            retry: k as u32 + 1,
            p1,
            p50,
            p99,
            at_cap,
            wait_p50: nearest_rank(&mut wait_copy, 50.0),
        });
    }
    let all_at_cap_from = table
        .iter()
        .position(|r| r.at_cap == 1.0)
        .filter(|&i| table[i..].iter().all(|r| r.at_cap == 1.0))
        .map(|i| i as u32 + 1);
    let walk = (policy.kind == PolicyKind::Decorrelated
        && policy.jitter_factor == 0.0
        && policy.cap_us >= policy.base_us)
        .then(|| walk_to_cap(policy, samples, seed));
    Schedule {
        policy: *policy,
        samples,
        retries: table,
        all_at_cap_from,
        walk,
    }
}

/// `samples` decorrelated walks from the base to the cap.
fn walk_to_cap(policy: &PolicySpec, samples: u32, seed: u64) -> WalkToCap {
    let walker = DecorrelatedJitter {
        base: policy.base_us,
        cap: policy.cap_us,
    };
    let mut draws = job_rng(seed ^ 0x5A5A_5A5A);
    let walks: Vec<CapWalk> = (0..samples)
        .map(|_| walker.walk_to_cap(&mut draws))
        .collect();
    let mut counts: Vec<u64> = walks.iter().map(|w| u64::from(w.draws)).collect();
    let pooled = walks
        .into_iter()
        .reduce(CapWalk::pool)
        .expect("at least one walk");
    let [p1, median, p99] = nearest_ranks(&mut counts, [1.0, 50.0, 99.0]);
    WalkToCap {
        median: median as u32,
        p1: p1 as u32,
        p99: p99 as u32,
        max: counts.iter().copied().max().unwrap_or(0) as u32,
        step_ratio: pooled.step_ratio(),
    }
}

/// Samples every client's delays, retry by retry: `[retry][client]`.
struct Sample {
    retries: u32,
    samples: u32,
    seed: u64,
}

impl PolicyVisitor for Sample {
    type Output = Vec<Vec<Micros>>;

    fn visit<P: Backoff>(self, policy: P) -> Vec<Vec<Micros>> {
        let mut draws = job_rng(self.seed);
        let mut delays = vec![Vec::with_capacity(self.samples as usize); self.retries as usize];
        for _ in 0..self.samples {
            let mut walk = policy.start();
            for (k, column) in (1..=self.retries).zip(delays.iter_mut()) {
                column.push(policy.delay(k, &mut walk, &mut draws));
            }
        }
        delays
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RunSpec;

    #[test]
    fn plain_exponential_reaches_the_cap_at_retry_8_for_everyone() {
        let mut policy = RunSpec::seed_002(PolicyKind::None, 1).policy;
        policy.cap_us = Micros::from_s(10);
        let s = schedule(&policy, 12, 100, 1);
        assert_eq!(s.all_at_cap_from, Some(8));
        assert_eq!(s.retries[0].p50, Micros::from_ms(100));
        assert_eq!(s.retries[2].wait_p50, Micros::from_ms(700));
        assert!(s.walk.is_none());
    }

    #[test]
    fn full_jitter_spreads_each_retry_over_its_window() {
        let policy = RunSpec::seed_002(PolicyKind::Full, 1).policy;
        let s = schedule(&policy, 4, 10_000, 2);
        let r4 = s.retries[3];
        // U[0, 800 ms]: p1 ≈ 8 ms, median ≈ 400 ms, p99 ≈ 792 ms.
        assert!(
            r4.p1 < Micros::from_ms(16)
                && r4.p99 > Micros::from_ms(780)
                && r4.p99 <= Micros::from_ms(800),
            "{r4:?}"
        );
        assert!(
            (r4.p50.ticks() as f64 - 400_000.0).abs() < 16_000.0,
            "{r4:?}"
        );
        assert_eq!(s.all_at_cap_from, None);
    }
}
