//! Hitting times by subtraction-free elimination (the GTH idea of
//! Grassmann, Taksar and Heyman, 1985, applied to an absorbing chain).
//!
//! The mean times h to a target solve (−Q restricted to the other states)
//! h = 1. That matrix is an M-matrix whose row sums are the rates into the
//! target; Gaussian elimination in index order keeps it one, its
//! off-diagonal entries only grow by sums of products of rates, and each
//! pivot can be formed as (rate into the target) + (rates to the states
//! still left) instead of by a subtraction. With no subtraction anywhere,
//! every h comes out to a few rounding errors relative, however
//! metastable the chain: where an LU solve of the same system loses
//! digits in proportion to its condition number (1e-5 at 7.9e9 s on
//! metafor's λ = 9.8, τ = 5 cell), this loses none. No pivoting is needed,
//! so the band of the generator is kept.

use crate::exact::ctmc::Generator;

/// The factors of −Q on the states off the target, as elimination leaves
/// them: for each kept state its multipliers below, its (positive) rates
/// above, and its pivot.
#[derive(Debug, Clone)]
pub struct AbsorbingFactors {
    /// The kept states' indices in the chain, in order.
    kept: Vec<usize>,
    /// Where each chain state sits among the kept ones.
    place: Vec<Option<usize>>,
    lower: usize,
    upper: usize,
    /// Row r holds columns r − lower ..= r + upper of the kept states.
    band: Vec<f64>,
    pivots: Vec<f64>,
}

impl AbsorbingFactors {
    fn width(&self) -> usize {
        self.lower + self.upper + 1
    }

    fn at(&self, row: usize, col: usize) -> usize {
        row * self.width() + (col + self.lower - row)
    }

    /// Factors −Q off the states where `target` holds; `None` when some
    /// state cannot reach the target (a zero pivot).
    pub fn new(g: &Generator, target: impl Fn(usize) -> bool) -> Option<AbsorbingFactors> {
        let n = g.size();
        let kept: Vec<usize> = (0..n).filter(|&i| !target(i)).collect();
        let mut place = vec![None; n];
        for (r, &i) in kept.iter().enumerate() {
            place[i] = Some(r);
        }
        let (mut lower, mut upper) = (0, 0);
        for (r, &i) in kept.iter().enumerate() {
            for &(j, _) in g.rates(i) {
                if let Some(c) = place[j] {
                    if c < r {
                        lower = lower.max(r - c);
                    } else {
                        upper = upper.max(c - r);
                    }
                }
            }
        }
        let m = kept.len();
        let mut f = AbsorbingFactors {
            kept,
            place,
            lower,
            upper,
            band: vec![0.0; m * (lower + upper + 1)],
            pivots: vec![0.0; m],
        };
        // Each kept row's rates to kept states (positive) and into the
        // target (its deficit).
        let mut deficit = vec![0.0; m];
        for (r, into_target) in deficit.iter_mut().enumerate() {
            let i = f.kept[r];
            for &(j, rate) in g.rates(i) {
                match f.place[j] {
                    Some(c) => {
                        let at = f.at(r, c);
                        f.band[at] += rate;
                    }
                    None => *into_target += rate,
                }
            }
        }
        for k in 0..m {
            // The pivot: into the target plus to the states after k.
            let last = (k + f.upper).min(m - 1);
            let pivot = deficit[k] + (k + 1..=last).map(|c| f.band[f.at(k, c)]).sum::<f64>();
            if pivot <= 0.0 || !pivot.is_finite() {
                return None;
            }
            f.pivots[k] = pivot;
            for r in k + 1..=(k + f.lower).min(m - 1) {
                let at = f.at(r, k);
                let factor = f.band[at] / pivot;
                f.band[at] = factor;
                if factor == 0.0 {
                    continue;
                }
                deficit[r] += factor * deficit[k];
                for c in k + 1..=last {
                    if c != r {
                        let (from, to) = (f.at(k, c), f.at(r, c));
                        f.band[to] += factor * f.band[from];
                    }
                }
            }
        }
        Some(f)
    }

    /// Solves (−Q) x = b off the target (b indexed by chain state; target
    /// states get 0).
    pub fn solve(&self, b: &[f64]) -> Vec<f64> {
        let m = self.kept.len();
        let mut y: Vec<f64> = self.kept.iter().map(|&i| b[i]).collect();
        for k in 0..m {
            let yk = y[k];
            for (r, yr) in y
                .iter_mut()
                .enumerate()
                .take((k + self.lower).min(m.saturating_sub(1)) + 1)
                .skip(k + 1)
            {
                *yr += self.band[self.at(r, k)] * yk;
            }
        }
        for k in (0..m).rev() {
            let mut sum = y[k];
            for (c, yc) in y
                .iter()
                .enumerate()
                .take((k + self.upper).min(m - 1) + 1)
                .skip(k + 1)
            {
                sum += self.band[self.at(k, c)] * yc;
            }
            y[k] = sum / self.pivots[k];
        }
        let mut x = vec![0.0; b.len()];
        for (r, &i) in self.kept.iter().enumerate() {
            x[i] = y[r];
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::banded::Banded;
    use crate::exact::metafor::MetaforChain;

    #[test]
    fn a_well_conditioned_system_gives_what_a_pivoting_lu_gives() {
        // metafor's nominal cell, back to q < 10: 3,853 s, a system an LU
        // solves to about 1e-12, so both must agree far below 1e-9.
        let chain = MetaforChain::nominal();
        let g = chain.generator();
        let target = |i: usize| chain.state(i).0 < 10;
        let gth = AbsorbingFactors::new(&g, target).unwrap();
        let ones: Vec<f64> = (0..g.size())
            .map(|i| if target(i) { 0.0 } else { 1.0 })
            .collect();
        let fast = gth.solve(&ones);
        let n = g.size();
        let band = chain.queue_size + 1;
        let mut a = Banded::zeros(n, band, band);
        for i in 0..n {
            if target(i) {
                a.add(i, i, 1.0);
                continue;
            }
            a.add(i, i, g.exit_rate(i));
            for &(j, r) in g.rates(i) {
                a.add(i, j, -r);
            }
        }
        let mut lu = ones.clone();
        a.factor().unwrap().solve(&mut lu);
        let start = chain.index(90, 0);
        assert!((fast[start] - 3853.2).abs() < 0.1, "{}", fast[start]);
        for (x, y) in fast.iter().zip(&lu) {
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{x} vs {y}");
        }
    }

    #[test]
    fn a_state_that_cannot_reach_the_target_has_no_factors() {
        let mut g = Generator::new(3);
        g.add(0, 1, 1.0);
        g.add(1, 0, 1.0);
        assert!(AbsorbingFactors::new(&g, |i| i == 2).is_none());
    }
}
