//! A continuous-time Markov chain on finitely many states, and the exact
//! figures herdsim reads from one: the stationary distribution, mean
//! hitting times with their spread, the distribution at a time, and the
//! slowest relaxation rate.
//!
//! Every solve is direct, since hitting times of metastable chains reach
//! 10⁹ s, where an iterative method's stopping rule would decide the
//! answer: hitting times by subtraction-free elimination
//! ([`crate::exact::absorbing`]), the rest by banded LU
//! ([`crate::exact::banded`]).

use crate::exact::absorbing::AbsorbingFactors;
use crate::exact::banded::{Banded, BandedError, BandedLu};

/// Why an exact figure could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExactError {
    /// The linear system was singular: a chain that is not irreducible.
    #[error("{what}: {source}")]
    Singular {
        /// Which figure was being solved for.
        what: &'static str,
        /// Where the factorisation stopped.
        source: BandedError,
    },
    /// Some state cannot reach the target of a hitting time.
    #[error("the target cannot be reached from every state: its hitting times are infinite")]
    Unreachable,
    /// The slowest rate's iteration did not settle.
    #[error("the slowest relaxation rate did not converge in {0} iterations")]
    NoConvergence(usize),
}

/// A generator: the rates of going from one state to another. The
/// diagonal is minus each row's sum, kept implicit.
#[derive(Debug, Clone, Default)]
pub struct Generator {
    /// Off-diagonal rates out of each state, (to, rate).
    rows: Vec<Vec<(usize, f64)>>,
}

/// Mean hitting times of a target set from every state, and their second
/// moments.
#[derive(Debug, Clone, PartialEq)]
pub struct Hitting {
    /// E[T] from each state (0 in the target).
    pub mean: Vec<f64>,
    /// E[T²] from each state.
    pub second: Vec<f64>,
}

impl Hitting {
    /// The standard deviation of T from one state.
    pub fn sd(&self, state: usize) -> f64 {
        (self.second[state] - self.mean[state].powi(2))
            .max(0.0)
            .sqrt()
    }

    /// E[T] and its standard deviation when the start is drawn from `p`:
    /// the spread of the means counts as well as each start's own.
    pub fn from_distribution(&self, p: &[f64]) -> (f64, f64) {
        let mean: f64 = p.iter().zip(&self.mean).map(|(p, t)| p * t).sum();
        let second: f64 = p.iter().zip(&self.second).map(|(p, t)| p * t).sum();
        (mean, (second - mean * mean).max(0.0).sqrt())
    }
}

impl Generator {
    /// A chain of `n` states with no transition yet.
    pub fn new(n: usize) -> Generator {
        Generator {
            rows: vec![Vec::new(); n],
        }
    }

    /// Its number of states.
    pub fn size(&self) -> usize {
        self.rows.len()
    }

    /// Adds `rate` to the transition from `from` to `to` (a zero rate or a
    /// self-loop adds nothing).
    pub fn add(&mut self, from: usize, to: usize, rate: f64) {
        if rate == 0.0 || from == to {
            return;
        }
        debug_assert!(rate > 0.0 && rate.is_finite(), "rate {rate}");
        match self.rows[from].iter_mut().find(|(j, _)| *j == to) {
            Some((_, r)) => *r += rate,
            None => self.rows[from].push((to, rate)),
        }
    }

    /// The total rate of leaving `state`.
    pub fn exit_rate(&self, state: usize) -> f64 {
        self.rows[state].iter().map(|(_, r)| r).sum()
    }

    /// The off-diagonal rates out of `state`.
    pub fn rates(&self, state: usize) -> &[(usize, f64)] {
        &self.rows[state]
    }

    /// The band of Q: how far below and above the diagonal it reaches.
    fn band(&self) -> (usize, usize) {
        let mut below = 0;
        let mut above = 0;
        for (i, row) in self.rows.iter().enumerate() {
            for &(j, _) in row {
                if j < i {
                    below = below.max(i - j);
                } else {
                    above = above.max(j - i);
                }
            }
        }
        (below, above)
    }

    /// Q (or its transpose) minus `shift` on the diagonal, banded.
    fn banded(&self, transpose: bool, shift: f64) -> Banded {
        let (below, above) = self.band();
        let (lower, upper) = if transpose {
            (above, below)
        } else {
            (below, above)
        };
        let mut m = Banded::zeros(self.size(), lower, upper);
        for (i, row) in self.rows.iter().enumerate() {
            for &(j, r) in row {
                if transpose {
                    m.add(j, i, r);
                } else {
                    m.add(i, j, r);
                }
            }
            m.add(i, i, -self.exit_rate(i) - shift);
        }
        m
    }

    /// The stationary distribution π (π Q = 0, Σ π = 1) of an irreducible
    /// chain. One state's equation is replaced by π_k = 1 and the result
    /// normalised; solved twice, the second time pinning the likeliest
    /// state, so that no tiny probability carries the scale.
    pub fn stationary(&self) -> Result<Vec<f64>, ExactError> {
        let once = |pinned: usize| -> Result<Vec<f64>, ExactError> {
            let mut a = self.banded(true, 0.0);
            a.set_identity_row(pinned, 1.0);
            let lu = a.factor().map_err(|source| ExactError::Singular {
                what: "the stationary distribution",
                source,
            })?;
            let mut pi = vec![0.0; self.size()];
            pi[pinned] = 1.0;
            lu.solve(&mut pi);
            let total: f64 = pi.iter().map(|p| p.abs()).sum();
            Ok(pi.into_iter().map(|p| p.abs() / total).collect())
        };
        let first = once(0)?;
        let likeliest = (0..first.len())
            .max_by(|&a, &b| first[a].total_cmp(&first[b]))
            .unwrap_or(0);
        once(likeliest)
    }

    /// max |(π Q)_j|: how far `pi` is from stationary.
    pub fn residual(&self, pi: &[f64]) -> f64 {
        let mut flow = vec![0.0; self.size()];
        for (i, row) in self.rows.iter().enumerate() {
            flow[i] -= pi[i] * self.exit_rate(i);
            for &(j, r) in row {
                flow[j] += pi[i] * r;
            }
        }
        flow.iter().fold(0.0, |m, f| m.max(f.abs()))
    }

    /// Mean hitting times of the states where `target` holds, and their
    /// second moments: −Q h = 1 off the target (h = 0 on it), then
    /// −Q m = 2 h likewise, by subtraction-free elimination
    /// ([`crate::exact::absorbing`]), so that times of 10⁹ s keep their
    /// digits.
    pub fn hitting(&self, target: impl Fn(usize) -> bool) -> Result<Hitting, ExactError> {
        let n = self.size();
        let factors = AbsorbingFactors::new(self, &target).ok_or(ExactError::Unreachable)?;
        let ones: Vec<f64> = (0..n).map(|i| if target(i) { 0.0 } else { 1.0 }).collect();
        let mean = factors.solve(&ones);
        let twice: Vec<f64> = mean.iter().map(|h| 2.0 * h).collect();
        let second = factors.solve(&twice);
        Ok(Hitting { mean, second })
    }

    /// How many steps [`Generator::transient`] takes over `t` seconds (its
    /// sum runs a little past this many): the fastest exit rate × t, so a
    /// caller can refuse a time too long before spending it.
    pub fn transient_steps(&self, t: f64) -> f64 {
        (0..self.size())
            .map(|i| self.exit_rate(i))
            .fold(0.0, f64::max)
            * t
    }

    /// The distribution after `t` seconds from `start`, by uniformisation:
    /// Σ_k Poisson(k; Λt) · start · (I + Q/Λ)^k, with Λ the largest exit
    /// rate, summed to where the Poisson tail is below 1e-16.
    pub fn transient(&self, start: &[f64], t: f64) -> Vec<f64> {
        let n = self.size();
        let uniform = (0..n).map(|i| self.exit_rate(i)).fold(0.0, f64::max);
        if uniform == 0.0 || t == 0.0 {
            return start.to_vec();
        }
        let mean = uniform * t;
        let last = (mean + 12.0 * mean.sqrt() + 30.0).ceil() as usize;
        let mut v = start.to_vec();
        let mut next = vec![0.0; n];
        let mut out = vec![0.0; n];
        let mut log_factorial = 0.0;
        for k in 0..=last {
            if k > 0 {
                log_factorial += (k as f64).ln();
                next.iter_mut().for_each(|x| *x = 0.0);
                for (i, row) in self.rows.iter().enumerate() {
                    let vi = v[i];
                    if vi == 0.0 {
                        continue;
                    }
                    next[i] += vi * (1.0 - self.exit_rate(i) / uniform);
                    for &(j, r) in row {
                        next[j] += vi * r / uniform;
                    }
                }
                std::mem::swap(&mut v, &mut next);
            }
            let weight = (-mean + k as f64 * mean.ln() - log_factorial).exp();
            if weight > 0.0 {
                out.iter_mut().zip(&v).for_each(|(o, x)| *o += weight * x);
            }
        }
        out
    }

    /// The slowest relaxation rate: the eigenvalue of Q nearest 0 after 0
    /// itself (negative; its magnitude sets the mixing time). Inverse
    /// iteration with the stationary mode projected out: first on
    /// (Q − σI)⁻¹ with σ a hair above 0 until the estimate holds to 1e-6,
    /// then on (Q − λ̃I)⁻¹ at that estimate, which converges in a few steps
    /// however close the next eigenvalue is.
    pub fn slowest_rate(&self, pi: &[f64]) -> Result<f64, ExactError> {
        let fastest = (0..self.size())
            .map(|i| self.exit_rate(i))
            .fold(0.0, f64::max);
        // A shift well inside the gap keeps (Q − σI) far from singular
        // and the stationary mode, 1/σ, projected out exactly.
        let rough = self.inverse_iteration(pi, 1e-7 * fastest.max(1e-300), 1e-6, 20_000)?;
        // Rounding leaves the refined estimate jittering near 1e-13.
        self.inverse_iteration(pi, rough, 1e-12, 200)
    }

    /// Inverse iteration on (Q − shift·I)⁻¹, deflated of the stationary
    /// mode, until three steps in a row move the eigenvalue's estimate by
    /// less than `settle` (relative).
    fn inverse_iteration(
        &self,
        pi: &[f64],
        shift: f64,
        settle: f64,
        most: usize,
    ) -> Result<f64, ExactError> {
        let n = self.size();
        let lu: BandedLu =
            self.banded(false, shift)
                .factor()
                .map_err(|source| ExactError::Singular {
                    what: "the slowest rate",
                    source,
                })?;
        let deflate = |x: &mut [f64]| {
            let along: f64 = x.iter().zip(pi).map(|(x, p)| x * p).sum();
            x.iter_mut().for_each(|v| *v -= along);
        };
        let mut x: Vec<f64> = (0..n)
            .map(|i| ((i as f64) * 0.618_033_988_7).fract() - 0.5)
            .collect();
        deflate(&mut x);
        let mut last = f64::NAN;
        let mut settled = 0;
        for _ in 0..most {
            let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            x.iter_mut().for_each(|v| *v /= norm);
            let mut y = x.clone();
            lu.solve(&mut y);
            deflate(&mut y);
            let theta: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            let estimate = shift + 1.0 / theta;
            x = y;
            settled = if ((estimate - last) / estimate).abs() < settle {
                settled + 1
            } else {
                0
            };
            if settled == 3 {
                return Ok(estimate);
            }
            last = estimate;
        }
        Err(ExactError::NoConvergence(most))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M/M/1/K: λ, μ, states 0..=K.
    fn mm1k(lambda: f64, mu: f64, k: usize) -> Generator {
        let mut g = Generator::new(k + 1);
        for n in 0..=k {
            if n < k {
                g.add(n, n + 1, lambda);
            }
            if n > 0 {
                g.add(n, n - 1, mu);
            }
        }
        g
    }

    #[test]
    fn the_mm1k_stationary_law_is_geometric() {
        let (lambda, mu, k) = (9.0, 10.0, 50);
        let pi = mm1k(lambda, mu, k).stationary().unwrap();
        let rho: f64 = lambda / mu;
        let norm = (1.0 - rho) / (1.0 - rho.powi(k as i32 + 1));
        for (n, p) in pi.iter().enumerate() {
            let want = norm * rho.powi(n as i32);
            assert!((p - want).abs() <= 1e-13 * want, "{n}: {p} vs {want}");
        }
    }

    #[test]
    fn the_birth_death_hitting_time_is_its_closed_form() {
        // From n to 0 in M/M/1/K: T(n) = Σ_{i=1..n} E[time from i to i−1],
        // with t_i = (1 + λ t_{i+1}) / μ from the top (t_K = 1/μ).
        let (lambda, mu, k) = (9.5, 10.0, 40);
        let g = mm1k(lambda, mu, k);
        let h = g.hitting(|i| i == 0).unwrap();
        let mut step = vec![0.0; k + 2];
        for i in (1..=k).rev() {
            step[i] = if i == k {
                1.0 / mu
            } else {
                (1.0 + lambda * step[i + 1]) / mu
            };
        }
        let mut want = 0.0;
        for (n, time) in step.iter().enumerate().take(k + 1).skip(1) {
            want += time;
            assert!((h.mean[n] - want).abs() <= 1e-10 * want, "{n}");
        }
        // One step from 1 to 0 when there is only that step: exponential,
        // so its sd equals its mean.
        let one = mm1k(0.0, 2.0, 1).hitting(|i| i == 0).unwrap();
        assert!((one.mean[1] - 0.5).abs() < 1e-15 && (one.sd(1) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_two_state_chain_relaxes_at_the_sum_of_its_rates() {
        // Eigenvalues 0 and −(a + b); the transient law is closed form.
        let (a, b) = (0.3, 1.7);
        let mut g = Generator::new(2);
        g.add(0, 1, a);
        g.add(1, 0, b);
        let pi = g.stationary().unwrap();
        let rate = g.slowest_rate(&pi).unwrap();
        assert!((rate + (a + b)).abs() < 1e-12 * (a + b), "{rate}");
        let t = 0.8;
        let p = g.transient(&[1.0, 0.0], t);
        let want = b / (a + b) + a / (a + b) * (-(a + b) * t).exp();
        assert!((p[0] - want).abs() < 1e-13, "{} vs {want}", p[0]);
        assert!(g.residual(&pi) < 1e-15);
    }

    #[test]
    fn the_mm1k_slowest_rate_is_its_closed_form() {
        // Birth-death on 0..=K: eigenvalues −(λ + μ − 2√(λμ) cos(jπ/(K+1))),
        // j = 1..K, and 0; the slowest is j = 1.
        let (lambda, mu, k) = (4.0, 10.0, 30);
        let g = mm1k(lambda, mu, k);
        let pi = g.stationary().unwrap();
        let want = -(lambda + mu
            - 2.0 * (lambda * mu).sqrt() * (std::f64::consts::PI / (k as f64 + 1.0)).cos());
        let got = g.slowest_rate(&pi).unwrap();
        assert!((got - want).abs() <= 1e-10 * want.abs(), "{got} vs {want}");
    }

    #[test]
    fn an_unreachable_target_is_refused() {
        let mut g = Generator::new(3);
        g.add(0, 1, 1.0);
        g.add(1, 0, 1.0);
        assert_eq!(g.hitting(|i| i == 2), Err(ExactError::Unreachable));
    }
}
