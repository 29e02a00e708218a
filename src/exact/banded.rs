//! A banded matrix and its LU factors with partial pivoting.
//!
//! The chains herdsim solves exactly are two counts (a queue and an orbit)
//! laid out row by row, so every transition moves the flat index by at most
//! one row's length: their generators are banded with a bandwidth of the
//! smaller count, and a direct banded solve costs n·b² where a dense one
//! costs n³ (2,000 states with b = 101: 4·10⁷ operations). Direct, because
//! mean hitting times reach 10⁹ s where iterative solvers stall.
//!
//! Row interchanges widen the upper band by the lower one, so each row
//! stores columns from i − lower to i + lower + upper (LAPACK's `gbtrf`
//! layout, by rows).

/// An n × n matrix that is zero outside `lower` diagonals below the main
/// one and `upper` above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Banded {
    n: usize,
    lower: usize,
    upper: usize,
    /// Row i holds columns i − lower ..= i + lower + upper.
    data: Vec<f64>,
}

/// Why a banded matrix could not be factored.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BandedError {
    /// A column had no usable pivot: the matrix is singular (to working
    /// precision).
    #[error("the matrix is singular at column {0}")]
    Singular(usize),
}

impl Banded {
    /// The zero matrix of size n with the given bandwidths.
    pub fn zeros(n: usize, lower: usize, upper: usize) -> Banded {
        let width = 2 * lower + upper + 1;
        Banded {
            n,
            lower,
            upper,
            data: vec![0.0; n * width],
        }
    }

    fn width(&self) -> usize {
        2 * self.lower + self.upper + 1
    }

    /// True if (i, j) lies in the stored band.
    fn stored(&self, i: usize, j: usize) -> bool {
        j + self.lower >= i && j <= i + self.lower + self.upper
    }

    fn at(&self, i: usize, j: usize) -> usize {
        i * self.width() + (j + self.lower - i)
    }

    /// Entry (i, j).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        if self.stored(i, j) {
            self.data[self.at(i, j)]
        } else {
            0.0
        }
    }

    /// Adds `value` to entry (i, j), which must lie within the bandwidths
    /// the matrix was made with.
    pub fn add(&mut self, i: usize, j: usize, value: f64) {
        assert!(
            j + self.lower >= i && j <= i + self.upper,
            "({i}, {j}) lies outside the band ({}, {})",
            self.lower,
            self.upper
        );
        let at = self.at(i, j);
        self.data[at] += value;
    }

    /// Sets row i to zero but for `diagonal` on the diagonal.
    pub fn set_identity_row(&mut self, i: usize, diagonal: f64) {
        let (start, width) = (i * self.width(), self.width());
        self.data[start..start + width].fill(0.0);
        let at = self.at(i, i);
        self.data[at] = diagonal;
    }

    /// Its LU factors, with partial pivoting within the band.
    pub fn factor(mut self) -> Result<BandedLu, BandedError> {
        let (n, lower) = (self.n, self.lower);
        let reach = self.lower + self.upper;
        let mut pivots = Vec::with_capacity(n);
        for k in 0..n {
            let last_row = (k + lower).min(n - 1);
            let mut pivot = k;
            let mut largest = self.get(k, k).abs();
            for i in k + 1..=last_row {
                let v = self.get(i, k).abs();
                if v > largest {
                    largest = v;
                    pivot = i;
                }
            }
            if largest == 0.0 || !largest.is_finite() {
                return Err(BandedError::Singular(k));
            }
            pivots.push(pivot);
            let last_col = (k + reach).min(n - 1);
            if pivot != k {
                for j in k..=last_col {
                    let (a, b) = (self.at(k, j), self.at(pivot, j));
                    self.data.swap(a, b);
                }
            }
            let diagonal = self.get(k, k);
            let span = last_col - k;
            for i in k + 1..=last_row {
                let at = self.at(i, k);
                let factor = self.data[at] / diagonal;
                self.data[at] = factor;
                if factor != 0.0 {
                    // Row k's columns k+1..=last_col lie before row i's in
                    // the storage, both contiguous: one fused loop.
                    let (from, to) = (self.at(k, k + 1), self.at(i, k + 1));
                    let (head, tail) = self.data.split_at_mut(to);
                    let pivot_row = &head[from..from + span];
                    for (t, f) in tail[..span].iter_mut().zip(pivot_row) {
                        *t -= factor * f;
                    }
                }
            }
        }
        Ok(BandedLu {
            factors: self,
            pivots,
        })
    }
}

/// The LU factors of a banded matrix: solves A x = b in n·b operations.
#[derive(Debug, Clone)]
pub struct BandedLu {
    factors: Banded,
    pivots: Vec<usize>,
}

impl BandedLu {
    /// Overwrites `b` with the solution x of A x = b.
    pub fn solve(&self, b: &mut [f64]) {
        let f = &self.factors;
        let (n, lower, reach) = (f.n, f.lower, f.lower + f.upper);
        assert_eq!(b.len(), n, "the right side's length");
        for k in 0..n {
            b.swap(k, self.pivots[k]);
            let bk = b[k];
            if bk != 0.0 {
                for (i, bi) in b
                    .iter_mut()
                    .enumerate()
                    .take((k + lower).min(n - 1) + 1)
                    .skip(k + 1)
                {
                    *bi -= f.data[f.at(i, k)] * bk;
                }
            }
        }
        for k in (0..n).rev() {
            let mut sum = b[k];
            for (j, bj) in b
                .iter()
                .enumerate()
                .take((k + reach).min(n - 1) + 1)
                .skip(k + 1)
            {
                sum -= f.data[f.at(k, j)] * bj;
            }
            b[k] = sum / f.data[f.at(k, k)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense reference: Gaussian elimination with partial pivoting.
    fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
        let n = b.len();
        for k in 0..n {
            let p = (k..n)
                .max_by(|&x, &y| a[x][k].abs().total_cmp(&a[y][k].abs()))
                .unwrap();
            a.swap(k, p);
            b.swap(k, p);
            let pivot_row = a[k].clone();
            for i in k + 1..n {
                let f = a[i][k] / pivot_row[k];
                for (x, p) in a[i][k..].iter_mut().zip(&pivot_row[k..]) {
                    *x -= f * p;
                }
                b[i] -= f * b[k];
            }
        }
        let mut x = vec![0.0; n];
        for k in (0..n).rev() {
            let s: f64 = (k + 1..n).map(|j| a[k][j] * x[j]).sum();
            x[k] = (b[k] - s) / a[k][k];
        }
        x
    }

    /// A fixed pseudo-random banded matrix whose pivots need interchanges
    /// (small diagonal), and its dense copy.
    fn sample(n: usize, lower: usize, upper: usize) -> (Banded, Vec<Vec<f64>>) {
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut banded = Banded::zeros(n, lower, upper);
        let mut dense = vec![vec![0.0; n]; n];
        for (i, row) in dense.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                if j + lower >= i && j <= i + upper {
                    let v = if i == j { 0.01 * next() } else { next() };
                    banded.add(i, j, v);
                    *cell = v;
                }
            }
        }
        (banded, dense)
    }

    #[test]
    fn solves_as_dense_elimination_does_with_row_interchanges() {
        for (n, lower, upper) in [(1, 0, 0), (7, 1, 1), (30, 3, 5), (40, 6, 2), (25, 24, 24)] {
            let (banded, dense) = sample(n, lower, upper);
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let want = dense_solve(dense, b.clone());
            let mut got = b.clone();
            banded.factor().unwrap().solve(&mut got);
            for (g, w) in got.iter().zip(&want) {
                // Both are backward stable; the systems are well enough
                // conditioned that 1e-9 relative separates a wrong solve
                // (errors of order 1) from rounding.
                assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{n}/{lower}/{upper}: {g} vs {w}"
                );
            }
        }
    }

    #[test]
    fn a_singular_matrix_is_refused_at_its_column() {
        let mut m = Banded::zeros(3, 1, 1);
        m.add(0, 0, 1.0);
        m.add(1, 0, 1.0);
        m.add(2, 2, 1.0);
        assert_eq!(m.factor().unwrap_err(), BandedError::Singular(1));
    }

    #[test]
    #[should_panic(expected = "outside the band")]
    fn an_entry_outside_the_band_is_a_bug_caught_at_once() {
        Banded::zeros(5, 1, 1).add(0, 3, 1.0);
    }

    #[test]
    fn an_identity_row_pins_one_unknown() {
        let (mut banded, _) = sample(10, 2, 2);
        banded.set_identity_row(4, 1.0);
        let mut b = vec![0.5; 10];
        b[4] = 3.0;
        banded.factor().unwrap().solve(&mut b);
        assert!((b[4] - 3.0).abs() < 1e-12);
    }
}
