//! metafor's single-server chain (HotOS 2025; mpi-sws-rse/metafor at
//! 5355c17, `ctmc_model/single_server/ctmc.py`), rebuilt from what its code
//! does (`../shared/reference/metafor-model.md`), and the figures its
//! analysis script reports.
//!
//! It is an abstraction of a service with timeouts and retries, not the
//! exact chain of one: a state is (q, o), q jobs at the server (at most
//! N − 1) and o pending retries in an orbit (at most M − 1); whether an
//! arrival will time out is a two-sided Chebyshev bound p(q) at the queue
//! it finds; an arrival predicted to time out adds a pending retry at a
//! hidden rate α (0.25, never set by metafor's DSL) on top of λ; each orbit
//! job leaves at 1/τ, a share R/(R + 1) of those as retries, so R splits a
//! rate and does not cap anything; a full queue turns every arrival away
//! without trace (metafor's default; with `retry_when_full` the orbit keeps
//! growing there instead).

use crate::exact::ctmc::{ExactError, Generator};

/// The settings of one chain, in metafor's units (rates per second, τ in
/// seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetaforChain {
    /// λ: the source's arrival rate.
    pub arrival_rate: f64,
    /// μ: one thread's service rate.
    pub service_rate: f64,
    /// τ: the source's timeout.
    pub timeout: f64,
    /// R: the source's retries.
    pub retries: u32,
    /// N: `qsize`; q runs from 0 to N − 1.
    pub queue_size: usize,
    /// M: `orbit_size`; o runs from 0 to M − 1.
    pub orbit_size: usize,
    /// c: `thread_pool`.
    pub threads: usize,
    /// α: the constructor's default, 0.25.
    pub alpha: f64,
    /// `retry_when_full`: at a full queue the orbit still grows, at
    /// α (λ + o · r_ret), and drains at o · r_drop only (metafor's default,
    /// and every figure it published, is false).
    pub retry_when_full: bool,
}

/// The figures metafor's analysis reads from a chain
/// (`metafor-model.md`, "Reported quantities").
#[derive(Debug, Clone, PartialEq)]
pub struct MetaforFigures {
    /// E[q] under π.
    pub mean_queue: f64,
    /// √Var[q] under π.
    pub sd_queue: f64,
    /// E[o] under π.
    pub mean_orbit: f64,
    /// π(q < ⌈0.1 N⌉).
    pub p_low: f64,
    /// π(⌈0.1 N⌉ ≤ q < ⌈0.9 N⌉): between the two.
    pub p_mid: f64,
    /// π(q ≥ ⌈0.9 N⌉).
    pub p_high: f64,
    /// π(q = N − 1).
    pub p_full: f64,
    /// μ (1 − π(q = 0)).
    pub throughput: f64,
    /// E[o] · the orbit's drop rate.
    pub orbit_drop_rate: f64,
    /// (1 + E[q]) / μ, metafor's formula.
    pub mean_latency: f64,
    /// max |π Q|.
    pub residual: f64,
    /// The slowest relaxation rate (negative).
    pub lambda2: f64,
    /// log₂(100) / |λ₂|, as metafor codes it.
    pub mixing_time: f64,
    /// Mean and sd of the time from (⌊0.9 N⌋, 0) to q < ⌊0.1 N⌋.
    pub return_time: (f64, f64),
    /// Mean time from (⌊0.1 N⌋, M − 1) to q ≥ ⌊0.9 N⌋.
    pub entry_time_from_low: f64,
    /// Mean and sd of the time from (0, 0) to q ≥ ⌊0.9 N⌋.
    pub entry_time_from_empty: (f64, f64),
}

/// The fault scenario of metafor's analysis: from empty, `start` seconds
/// at λ, then `length` seconds at the fault's λ, then back.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultFigures {
    /// E[q] when the fault starts.
    pub prefault_mean_queue: f64,
    /// E[q], E[o], P(q ≥ ⌊0.9 N⌋) and P(q < ⌈0.1 N⌉) when it ends.
    pub postfault_mean_queue: f64,
    /// E[o] when it ends.
    pub postfault_mean_orbit: f64,
    /// P(high) when it ends.
    pub postfault_p_high: f64,
    /// P(low) when it ends.
    pub postfault_p_low: f64,
    /// Mean and sd of the time from the fault's end to q < ⌊0.1 N⌋.
    pub return_time: (f64, f64),
}

impl MetaforChain {
    /// metafor's nominal cell: N = 100, M = 20, c = 1, μ = 10, λ = 9.5,
    /// τ = 9, R = 3, α = 0.25.
    pub fn nominal() -> MetaforChain {
        MetaforChain {
            arrival_rate: 9.5,
            service_rate: 10.0,
            timeout: 9.0,
            retries: 3,
            queue_size: 100,
            orbit_size: 20,
            threads: 1,
            alpha: 0.25,
            retry_when_full: false,
        }
    }

    /// Its number of states, N · M.
    pub fn states(&self) -> usize {
        self.queue_size * self.orbit_size
    }

    /// The most bytes its solves hold at once, to refuse a chain too large
    /// before building it: a step between orbit counts moves the flat index
    /// by about N, so every factorisation is a band of about N on each
    /// side; the two hitting-time factorisations [`MetaforChain::figures`]
    /// keeps together hold 2 · (2N + 2) numbers per state, more than a
    /// banded LU's 3N + 2 (saturating: a count past `u64` is too large).
    pub fn solve_bytes(&self) -> u64 {
        let per_state = (self.queue_size as u64)
            .saturating_mul(4)
            .saturating_add(4)
            .saturating_mul(8);
        (self.queue_size as u64)
            .saturating_mul(self.orbit_size as u64)
            .saturating_mul(per_state)
    }

    /// The flat index of (q, o): o · N + q.
    pub fn index(&self, q: usize, o: usize) -> usize {
        o * self.queue_size + q
    }

    /// (q, o) of a flat index.
    pub fn state(&self, index: usize) -> (usize, usize) {
        (index % self.queue_size, index / self.queue_size)
    }

    /// The rate at which one orbit job retries.
    pub fn retry_rate(&self) -> f64 {
        f64::from(self.retries) / ((f64::from(self.retries) + 1.0) * self.timeout)
    }

    /// The rate at which one orbit job is abandoned.
    pub fn drop_rate(&self) -> f64 {
        1.0 / ((f64::from(self.retries) + 1.0) * self.timeout)
    }

    /// metafor's "timeout probability" of an arrival that finds q jobs: a
    /// two-sided Chebyshev bound on the sojourn, s²/(τ − m)² if τ − m > s,
    /// else 1, with m = q/e and s = √q/e at the service rate e = min(q, c)μ.
    pub fn timeout_probability(&self, q: usize) -> f64 {
        if q == 0 {
            return 0.0;
        }
        let e = q.min(self.threads) as f64 * self.service_rate;
        let m = q as f64 / e;
        let s = (q as f64).sqrt() / e;
        if self.timeout - m > s {
            (s / (self.timeout - m)).powi(2)
        } else {
            1.0
        }
    }

    /// Its generator, transition by transition as metafor's
    /// `generator_mat_exact()` builds it. Needs N ≥ 2 (q = 0 and the full
    /// queue are different rows).
    pub fn generator(&self) -> Generator {
        let (n, m) = (self.queue_size, self.orbit_size);
        let (lambda, mu) = (self.arrival_rate, self.service_rate);
        let (retry, drop) = (self.retry_rate(), self.drop_rate());
        let mut g = Generator::new(self.states());
        for o in 0..m {
            let of = o as f64;
            for q in 0..n {
                let here = self.index(q, o);
                if q == n - 1 {
                    // Full: metafor serves at min(N, c) μ here.
                    g.add(here, self.index(q - 1, o), n.min(self.threads) as f64 * mu);
                    if !self.retry_when_full {
                        // Arrivals and retries are lost without trace;
                        // the orbit drains at 1/τ per job.
                        if o >= 1 {
                            g.add(here, self.index(q, o - 1), of * (retry + drop));
                        }
                    } else {
                        // Retries only drop; the orbit grows by α of the
                        // arrivals and retries turned away.
                        if o >= 1 {
                            g.add(here, self.index(q, o - 1), of * drop);
                        }
                        if o + 2 <= m {
                            g.add(
                                here,
                                self.index(q, o + 1),
                                self.alpha * (lambda + of * retry),
                            );
                        }
                    }
                    continue;
                }
                let p = self.timeout_probability(q);
                g.add(here, self.index(q + 1, o), lambda + of * retry * p);
                if o + 2 <= m {
                    g.add(here, self.index(q + 1, o + 1), self.alpha * lambda * p);
                }
                if o >= 1 {
                    g.add(here, self.index(q + 1, o - 1), of * retry * (1.0 - p));
                    g.add(here, self.index(q, o - 1), of * drop);
                }
                if q >= 1 {
                    g.add(here, self.index(q - 1, o), q.min(self.threads) as f64 * mu);
                }
            }
        }
        g
    }

    /// The same chain with another arrival rate (the fault's).
    pub fn with_arrival_rate(&self, arrival_rate: f64) -> MetaforChain {
        MetaforChain {
            arrival_rate,
            ..*self
        }
    }

    /// q below which the queue is low in π's regimes: ⌈0.1 N⌉.
    pub fn low_regime(&self) -> usize {
        (0.1 * self.queue_size as f64).ceil() as usize
    }

    /// q from which the queue is high in π's regimes: ⌈0.9 N⌉.
    pub fn high_regime(&self) -> usize {
        (0.9 * self.queue_size as f64).ceil() as usize
    }

    /// ⌊0.1 N⌋ and ⌊0.9 N⌋: the hitting times' thresholds and start states.
    pub fn thresholds(&self) -> (usize, usize) {
        (
            (0.1 * self.queue_size as f64).floor() as usize,
            (0.9 * self.queue_size as f64).floor() as usize,
        )
    }

    /// Every figure of metafor's analysis but the fault scenario's.
    pub fn figures(&self) -> Result<MetaforFigures, ExactError> {
        let g = self.generator();
        let pi = g.stationary()?;
        let mut mean_queue = 0.0;
        let mut second_queue = 0.0;
        let mut mean_orbit = 0.0;
        let (mut p_low, mut p_mid, mut p_high) = (0.0, 0.0, 0.0);
        let (mut p_full, mut p_empty) = (0.0, 0.0);
        for (i, p) in pi.iter().enumerate() {
            let (q, o) = self.state(i);
            mean_queue += p * q as f64;
            second_queue += p * (q * q) as f64;
            mean_orbit += p * o as f64;
            if q < self.low_regime() {
                p_low += p;
            } else if q < self.high_regime() {
                p_mid += p;
            } else {
                p_high += p;
            }
            if q == self.queue_size - 1 {
                p_full += p;
            }
            if q == 0 {
                p_empty += p;
            }
        }
        let lambda2 = g.slowest_rate(&pi)?;
        let (low, high) = self.thresholds();
        let back = g.hitting(|i| self.state(i).0 < low)?;
        let up = g.hitting(|i| self.state(i).0 >= high)?;
        let from_high = self.index(high, 0);
        let from_empty = self.index(0, 0);
        Ok(MetaforFigures {
            mean_queue,
            sd_queue: (second_queue - mean_queue * mean_queue).max(0.0).sqrt(),
            mean_orbit,
            p_low,
            p_mid,
            p_high,
            p_full,
            throughput: self.service_rate * (1.0 - p_empty),
            orbit_drop_rate: mean_orbit * self.drop_rate(),
            mean_latency: (1.0 + mean_queue) / self.service_rate,
            residual: g.residual(&pi),
            lambda2,
            mixing_time: 100f64.log2() / lambda2.abs(),
            return_time: (back.mean[from_high], back.sd(from_high)),
            entry_time_from_low: up.mean[self.index(low, self.orbit_size - 1)],
            entry_time_from_empty: (up.mean[from_empty], up.sd(from_empty)),
        })
    }

    /// The steps of [`MetaforChain::fault`]'s two transient phases
    /// ([`Generator::transient_steps`]), the measure of its time.
    pub fn fault_steps(&self, fault_rate: f64, start: f64, length: f64) -> f64 {
        self.generator().transient_steps(start)
            + self
                .with_arrival_rate(fault_rate)
                .generator()
                .transient_steps(length)
    }

    /// The fault scenario: from (0, 0), `start` seconds under this chain,
    /// `length` under `fault_rate` arrivals, then the mean time back to
    /// q < ⌊0.1 N⌋ under this chain from the distribution it left.
    pub fn fault(
        &self,
        fault_rate: f64,
        start: f64,
        length: f64,
    ) -> Result<FaultFigures, ExactError> {
        let g = self.generator();
        let mut p = vec![0.0; self.states()];
        p[self.index(0, 0)] = 1.0;
        let before = g.transient(&p, start);
        let after = self
            .with_arrival_rate(fault_rate)
            .generator()
            .transient(&before, length);
        let moment = |dist: &[f64], f: &dyn Fn(usize, usize) -> f64| -> f64 {
            dist.iter()
                .enumerate()
                .map(|(i, p)| {
                    let (q, o) = self.state(i);
                    p * f(q, o)
                })
                .sum()
        };
        let (low, _) = self.thresholds();
        let high = self.high_regime();
        let low_regime = self.low_regime();
        let back = g.hitting(|i| self.state(i).0 < low)?;
        Ok(FaultFigures {
            prefault_mean_queue: moment(&before, &|q, _| q as f64),
            postfault_mean_queue: moment(&after, &|q, _| q as f64),
            postfault_mean_orbit: moment(&after, &|_, o| o as f64),
            postfault_p_high: moment(&after, &|q, _| f64::from(u8::from(q >= high))),
            postfault_p_low: moment(&after, &|q, _| f64::from(u8::from(q < low_regime))),
            return_time: back.from_distribution(&after),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chebyshev_predictor_gives_the_models_nominal_values() {
        // metafor-model.md: p(10) = 0.0016, p(50) = 0.031, p(70) = 0.175,
        // p(80) = 0.8, p(q ≥ 81) = 1 at the nominal cell.
        let chain = MetaforChain::nominal();
        for (q, want) in [(10, 0.0016), (50, 0.031), (70, 0.175), (80, 0.8)] {
            let got = chain.timeout_probability(q);
            // The model file rounds to two significant figures.
            assert!(
                (got - want).abs() <= 0.005 * want.max(0.1),
                "p({q}) = {got}"
            );
        }
        // At q = 81 the bound's test τ − m > s is 0.9 > 0.9 on paper, and
        // 9 − 8.1 rounds above 0.9 in floating point (in metafor's Python
        // too), so p(81) is 1 less a rounding; from 82 on it is 1.
        assert!((chain.timeout_probability(81) - 1.0).abs() < 1e-12);
        assert_eq!(chain.timeout_probability(82), 1.0);
        assert_eq!(chain.timeout_probability(0), 0.0);
    }

    #[test]
    fn every_row_of_the_generator_follows_the_rules() {
        let chain = MetaforChain::nominal();
        let g = chain.generator();
        assert_eq!(g.size(), 2000);
        // (0, 0): only a fresh arrival.
        assert_eq!(g.rates(chain.index(0, 0)), &[(chain.index(1, 0), 9.5)]);
        // Full with an orbit: service and the orbit's drain at o/τ.
        let full = g.rates(chain.index(99, 4));
        assert_eq!(full.len(), 2);
        assert!((g.exit_rate(chain.index(99, 4)) - (10.0 + 4.0 / 9.0)).abs() < 1e-12);
        // The orbit's top row adds no pending retry.
        let top = chain.index(85, 19);
        assert!(g.rates(top).iter().all(|&(j, _)| chain.state(j).1 <= 19));
    }
}
