//! The figures `herdsim exact` reads from the server's chain: the
//! stationary summary, the mean time from an empty system to a storm with
//! no trigger at all, how long a storm lasts, what a trigger leaves
//! behind (its escape probability and return time), and the relaxation
//! time.
//!
//! Regions are by backlog (waiting attempts plus waiting retries): the
//! storm region is backlog ≥ `high`, the calm one backlog ≤ `low`.

use crate::exact::absorbing::AbsorbingFactors;
use crate::exact::ctmc::{ExactError, Generator, Hitting};
use crate::exact::markovian::ChainTrigger;
use crate::exact::server_chain::ServerChain;

pub use crate::model::backlog::Regions;

/// Stationary means and shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stationary {
    /// E[attempts waiting].
    pub mean_waiting: f64,
    /// E[attempts in service].
    pub mean_busy: f64,
    /// E[retries waiting out their delay].
    pub mean_orbit: f64,
    /// Attempts sent per second (first tries and retries).
    pub attempts_per_s: f64,
    /// Completions per second.
    pub throughput_per_s: f64,
    /// Successful completions per second.
    pub goodput_per_s: f64,
    /// The share of service time spent on attempts whose reply is ignored
    /// (their client timed out before it came), as the simulator's
    /// `wasted_work` counts it.
    pub wasted_share: f64,
    /// π(storm region).
    pub p_high: f64,
    /// π(calm region).
    pub p_low: f64,
    /// π(orbit at its cap).
    pub p_orbit_cap: f64,
    /// Retries lost at the cap per second.
    pub cut_per_s: f64,
    /// max |πQ|.
    pub residual: f64,
}

/// A passage time's mean and standard deviation, s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Passage {
    /// E[T].
    pub mean: f64,
    /// sd(T).
    pub sd: f64,
}

/// What one trigger leaves behind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AfterTrigger {
    /// The trigger.
    pub trigger: ChainTrigger,
    /// P(in the storm region) when it ends.
    pub p_high_at_end: f64,
    /// Mean backlog when it ends.
    pub mean_backlog_at_end: f64,
    /// P(the storm region is reached before the calm one), from the state
    /// the trigger left: the trigger's storm probability.
    pub escape: f64,
    /// Time from the trigger's end back into the calm region.
    pub return_time: Passage,
}

/// Everything `herdsim exact` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerFigures {
    /// The regions the figures use.
    pub regions: Regions,
    /// The stationary summary.
    pub stationary: Stationary,
    /// From the empty system into the storm region, with no trigger.
    pub time_to_storm: Option<Passage>,
    /// From a storm (π restricted to the storm region) back to calm.
    pub storm_length: Option<Passage>,
    /// 1/|λ₂|: how long the slowest deviation from stationarity takes to
    /// fall by e.
    pub relaxation_s: f64,
    /// The trigger's aftermath, if the run has one.
    pub after_trigger: Option<AfterTrigger>,
}

/// The passage time to a target whose hitting times are `hitting`, from
/// a start drawn from `start`.
fn passage(hitting: &Option<Hitting>, start: &[f64]) -> Option<Passage> {
    let (mean, sd) = hitting.as_ref()?.from_distribution(start);
    Some(Passage { mean, sd })
}

/// P(reach `high` before `low`) from every state: the committor, by the
/// same subtraction-free elimination as hitting times (its right side is
/// each state's rate into `high`, never negative).
pub fn committor(
    g: &Generator,
    high: impl Fn(usize) -> bool,
    low: impl Fn(usize) -> bool,
) -> Result<Vec<f64>, ExactError> {
    let n = g.size();
    let stop = |i: usize| high(i) || low(i);
    let factors = AbsorbingFactors::new(g, stop).ok_or(ExactError::Unreachable)?;
    let into_high: Vec<f64> = (0..n)
        .map(|i| {
            if stop(i) {
                0.0
            } else {
                g.rates(i)
                    .iter()
                    .filter(|(j, _)| high(*j))
                    .map(|(_, r)| r)
                    .sum()
            }
        })
        .collect();
    let mut h = factors.solve(&into_high);
    for (i, x) in h.iter_mut().enumerate() {
        if high(i) {
            *x = 1.0;
        } else if low(i) {
            *x = 0.0;
        }
    }
    Ok(h)
}

/// The stationary summary of `pi` on `chain`.
pub fn stationary_summary(
    chain: &ServerChain,
    g: &Generator,
    pi: &[f64],
    regions: Regions,
) -> Stationary {
    let m = &chain.model;
    let normal = chain.normal_conditions();
    let mut e = Stationary {
        mean_waiting: 0.0,
        mean_busy: 0.0,
        mean_orbit: 0.0,
        attempts_per_s: m.arrival_rate,
        throughput_per_s: 0.0,
        goodput_per_s: 0.0,
        wasted_share: 0.0,
        p_high: 0.0,
        p_low: 0.0,
        p_orbit_cap: 0.0,
        cut_per_s: 0.0,
        residual: g.residual(pi),
    };
    let mut live_busy = 0.0;
    let mut abandoned_busy = 0.0;
    for (s, &p) in chain.states().iter().zip(pi) {
        e.mean_waiting += p * s.waiting() as f64;
        e.mean_busy += p * s.busy() as f64;
        e.mean_orbit += p * s.orbit as f64;
        live_busy += p * s.live_busy as f64;
        abandoned_busy += p * s.abandoned_busy as f64;
        if regions.storm(s.backlog()) {
            e.p_high += p;
        }
        if regions.calm(s.backlog()) {
            e.p_low += p;
        }
        if m.orbit_cap > 0 && s.orbit == m.orbit_cap {
            e.p_orbit_cap += p;
        }
        e.cut_per_s += p * chain.cut_rate(*s, normal);
    }
    e.attempts_per_s += m.retry_rate * m.persistence * e.mean_orbit;
    e.throughput_per_s = m.service_rate * e.mean_busy;
    e.goodput_per_s = m.service_rate * (1.0 - m.fail_rate) * live_busy;
    // As the simulator counts it: the whole service of an attempt whose
    // reply will be ignored, so a live attempt in service counts by the
    // chance its timeout comes first (competing exponentials).
    if e.mean_busy > 0.0 {
        let doomed = m.timeout_rate / (m.timeout_rate + m.service_rate);
        e.wasted_share = (abandoned_busy + doomed * live_busy) / e.mean_busy;
    }
    e
}

/// Every figure of `chain` for `regions`, and the trigger's aftermath if
/// `trigger` is given (started from the stationary state); `known` is the
/// stationary distribution if it has been solved for already.
pub fn server_figures(
    chain: &ServerChain,
    regions: Regions,
    trigger: Option<ChainTrigger>,
    known: Option<Vec<f64>>,
) -> Result<ServerFigures, ExactError> {
    let g = chain.normal();
    let states = chain.states();
    let high = |i: usize| regions.storm(states[i].backlog());
    let low = |i: usize| regions.calm(states[i].backlog());
    // The factorisations are independent: two cores share them. Each is
    // deterministic, so the figures do not depend on the thread count.
    let (pi, (to_high, to_low)) = rayon::join(
        || known.map_or_else(|| g.stationary(), Ok),
        || rayon::join(|| g.hitting(high).ok(), || g.hitting(low).ok()),
    );
    let pi = pi?;
    let stationary = stationary_summary(chain, &g, &pi, regions);
    let mut empty = vec![0.0; chain.size()];
    empty[chain.empty()] = 1.0;
    let time_to_storm = passage(&to_high, &empty);
    let storm_length = (stationary.p_high > 0.0)
        .then(|| {
            let in_storm: Vec<f64> = pi
                .iter()
                .enumerate()
                .map(|(i, p)| if high(i) { p / stationary.p_high } else { 0.0 })
                .collect();
            passage(&to_low, &in_storm)
        })
        .flatten();
    let (relaxation, after_trigger) = rayon::join(
        || g.slowest_rate(&pi),
        || -> Result<Option<AfterTrigger>, ExactError> {
            let Some(trigger) = trigger else {
                return Ok(None);
            };
            let during = chain.generator(trigger.conditions);
            let end = during.transient(&pi, trigger.length_s);
            let p_high_at_end = end
                .iter()
                .enumerate()
                .filter(|(i, _)| high(*i))
                .map(|(_, p)| p)
                .sum();
            let mean_backlog_at_end = end
                .iter()
                .zip(states)
                .map(|(p, s)| p * s.backlog() as f64)
                .sum();
            let h = committor(&g, high, low)?;
            let escape = end.iter().zip(&h).map(|(p, h)| p * h).sum();
            let return_time = passage(&to_low, &end).ok_or(ExactError::Unreachable)?;
            Ok(Some(AfterTrigger {
                trigger,
                p_high_at_end,
                mean_backlog_at_end,
                escape,
                return_time,
            }))
        },
    );
    let relaxation_s = 1.0 / relaxation?.abs();
    let after_trigger = after_trigger?;
    Ok(ServerFigures {
        regions,
        stationary,
        time_to_storm,
        storm_length,
        relaxation_s,
        after_trigger,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::server_chain::ChainModel;

    /// A queue with no timeout and no retries: M/M/c/(c+K).
    fn plain(arrival: f64, service: f64, workers: usize, queue_limit: usize) -> ChainModel {
        ChainModel {
            arrival_rate: arrival,
            service_rate: service,
            workers,
            queue_limit,
            timeout_rate: 0.0,
            retry_rate: 0.0,
            persistence: 0.0,
            retry_on_failure: false,
            retry_on_rejected: false,
            retry_on_timeout: false,
            fail_rate: 0.0,
            orbit_cap: 0,
        }
    }

    fn wide() -> Regions {
        Regions {
            high: usize::MAX,
            low: 0,
        }
    }

    /// M/M/c/N's stationary probabilities of n in system, N = c + K, from
    /// the birth-death balance (a textbook closed form, summed here).
    fn mmck(arrival: f64, service: f64, c: usize, n_max: usize) -> Vec<f64> {
        let mut p = vec![1.0];
        for n in 1..=n_max {
            let prev = p[n - 1];
            p.push(prev * arrival / (service * n.min(c) as f64));
        }
        let total: f64 = p.iter().sum();
        p.iter().map(|x| x / total).collect()
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn without_timeouts_the_chain_is_mm1_and_mmck() {
        for (arrival, service, c, k) in
            [(500.0, 1000.0, 1, 40), (2.5, 1.0, 3, 10), (9.0, 1.0, 4, 25)]
        {
            let chain = ServerChain::new(plain(arrival, service, c, k), 10_000).unwrap();
            let g = chain.normal();
            let pi = g.stationary().unwrap();
            let exact = mmck(arrival, service, c, c + k);
            let waiting: f64 = exact
                .iter()
                .enumerate()
                .map(|(n, p)| p * n.saturating_sub(c) as f64)
                .sum();
            let busy: f64 = exact
                .iter()
                .enumerate()
                .map(|(n, p)| p * n.min(c) as f64)
                .sum();
            let s = stationary_summary(&chain, &g, &pi, wide());
            // Direct solves of a few dozen states: 1e-12 is rounding.
            assert!(
                close(s.mean_waiting, waiting, 1e-12),
                "{} vs {waiting}",
                s.mean_waiting
            );
            assert!(close(s.mean_busy, busy, 1e-12));
            // Throughput is what is not blocked.
            assert!(close(
                s.throughput_per_s,
                arrival * (1.0 - exact[c + k]),
                1e-12
            ));
            assert_eq!(s.wasted_share, 0.0);
        }
    }

    #[test]
    fn with_a_long_queue_the_chain_meets_erlang_c() {
        // M/M/c: P(wait) = Erlang C, E[waiting] = C·ρ/(1 − ρ). K = 400
        // leaves a truncated tail of ρ^400 ≈ 1e-39.
        let (arrival, service, c) = (8.0, 1.0, 10usize);
        let a = arrival / service;
        let rho = a / c as f64;
        let mut term = 1.0;
        let mut below = 0.0;
        for k in 0..c {
            below += term;
            term *= a / (k + 1) as f64;
        }
        let top = term / (1.0 - rho);
        let erlang_c = top / (below + top);
        let chain = ServerChain::new(plain(arrival, service, c, 400), 10_000).unwrap();
        let g = chain.normal();
        let pi = g.stationary().unwrap();
        let waits: f64 = chain
            .states()
            .iter()
            .zip(&pi)
            .filter(|(s, _)| s.busy() == c)
            .map(|(_, p)| p)
            .sum();
        assert!(close(waits, erlang_c, 1e-10), "{waits} vs {erlang_c}");
        let s = stationary_summary(&chain, &g, &pi, wide());
        assert!(close(s.mean_waiting, erlang_c * rho / (1.0 - rho), 1e-10));
    }

    #[test]
    fn mm1_first_passage_and_relaxation_meet_their_closed_forms() {
        // M/M/1/K from empty to K waiting... the mean time to first reach
        // n in system from 0 is Σ_{j<n} (1/λ)·Σ_{i≤j} (μ/λ)^(j−i).
        let (lambda, mu) = (3.0, 4.0);
        let chain = ServerChain::new(plain(lambda, mu, 1, 8), 1_000).unwrap();
        let regions = Regions { high: 5, low: 0 };
        let f = server_figures(&chain, regions, None, None).unwrap();
        // Backlog 5 waiting is 6 in system.
        let target = 6;
        let mut expected = 0.0;
        for j in 0..target {
            let mut up = 0.0;
            for i in 0..=j {
                up += (mu / lambda).powi(j - i);
            }
            expected += up / lambda;
        }
        let t = f.time_to_storm.unwrap();
        assert!(close(t.mean, expected, 1e-12), "{} vs {expected}", t.mean);
        // M/M/1/N's spectral gap: λ + μ − 2√(λμ)·cos(π/(N+1)), N = 9 in
        // system at most (Takács).
        let n = 9.0;
        let gap =
            lambda + mu - 2.0 * (lambda * mu).sqrt() * (std::f64::consts::PI / (n + 1.0)).cos();
        assert!(
            close(f.relaxation_s, 1.0 / gap, 1e-9),
            "{} vs {}",
            f.relaxation_s,
            1.0 / gap
        );
    }

    #[test]
    fn the_committor_is_the_gamblers_ruin_on_a_birth_death_queue() {
        // In system n, up at λ, down at μ: P(reach b before a | n) =
        // (1 − r^(n−a)) / (1 − r^(b−a)), r = μ/λ.
        let (lambda, mu) = (3.0, 4.0);
        let chain = ServerChain::new(plain(lambda, mu, 1, 8), 1_000).unwrap();
        let g = chain.normal();
        let states = chain.states();
        let n_of = |i: usize| states[i].busy() + states[i].waiting();
        let h = committor(&g, |i| n_of(i) >= 7, |i| n_of(i) <= 1).unwrap();
        let r: f64 = mu / lambda;
        for (i, committed) in h.iter().enumerate() {
            let n = n_of(i);
            if (2..7).contains(&n) {
                let expected = (1.0 - r.powi(n as i32 - 1)) / (1.0 - r.powi(6));
                assert!(
                    close(*committed, expected, 1e-12),
                    "n {n}: {committed} vs {expected}"
                );
            }
        }
    }
}
