//! Replicate summaries: mean, standard deviation, 95% confidence half-width
//! (Student t), min and max.

use serde::Serialize;

use crate::base::special::ln_gamma;

/// The summary of one metric over R replicates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Replicates.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` for a single replicate.
    pub sd: Option<f64>,
    /// Half-width of the 95% confidence interval of the mean,
    /// `t(0.975, n−1)·sd/√n`; `None` for a single replicate.
    pub ci95: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// The lower quartile, the median and the upper quartile (linear
    /// between order statistics, as R's and NumPy's defaults): a mean hides
    /// a spread of two clusters (runs that recover at once or one breaker
    /// cycle later), these show it. `None` with no value.
    pub quartiles: Option<[f64; 3]>,
}

impl Summary {
    /// The values that are there of `values` (a metric some runs do not
    /// have, such as a recovery time of a run that never recovered),
    /// summarised; with none there, `n` is 0, the mean, min and max are NaN
    /// and the exporters show them as empty (`null` in JSON).
    pub fn of_present(values: &[Option<f64>]) -> Summary {
        let present: Vec<f64> = values.iter().flatten().copied().collect();
        if present.is_empty() {
            return Summary {
                n: 0,
                mean: f64::NAN,
                sd: None,
                ci95: None,
                min: f64::NAN,
                max: f64::NAN,
                quartiles: None,
            };
        }
        Summary::of(&present)
    }

    /// Summarises `values` (at least one), summing in the order given so the
    /// result is the same on every machine and thread count. Sums are taken
    /// relative to the first value, so identical values give exactly their
    /// value as the mean and exactly 0 as the sd, with no rounding noise.
    pub fn of(values: &[f64]) -> Summary {
        assert!(!values.is_empty(), "a summary needs at least one value");
        let n = values.len();
        let shift = values[0];
        let mean = shift + values.iter().map(|v| v - shift).sum::<f64>() / n as f64;
        let (sd, ci95) = if n > 1 {
            let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            let sd = (ss / (n - 1) as f64).sqrt();
            (
                Some(sd),
                Some(student_t_975(n - 1) * sd / (n as f64).sqrt()),
            )
        } else {
            (None, None)
        };
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Summary {
            n,
            mean,
            sd,
            ci95,
            min,
            max,
            quartiles: Some([0.25, 0.5, 0.75].map(|p| quantile_of_sorted(&sorted, p))),
        }
    }

    /// The standard error of the mean, `sd/√n`.
    pub fn standard_error(&self) -> Option<f64> {
        self.sd.map(|sd| sd / (self.n as f64).sqrt())
    }
}

/// The `p` quantile of `sorted` (ascending, not empty), linear between the
/// order statistics at `(n − 1)·p` (Hyndman and Fan's type 7).
pub fn quantile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let (low, frac) = (h.floor() as usize, h - h.floor());
    match sorted.get(low + 1) {
        Some(&next) if frac > 0.0 => sorted[low] + frac * (next - sorted[low]),
        _ => sorted[low],
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (≥ 1): the
/// multiplier of a two-sided 95% interval. Found by bisection on the t CDF, so
/// it is exact to double precision rather than a table lookup.
pub fn student_t_975(df: usize) -> f64 {
    assert!(df >= 1, "Student t needs at least one degree of freedom");
    let (mut lo, mut hi) = (0.0_f64, 64.0_f64);
    // t(0.975, 1) = 12.7: 64 brackets every df. 100 halvings reach f64 resolution.
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df as f64) < 0.975 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom, `t ≥ 0`:
/// `1 − I_x(df/2, 1/2)/2` with `x = df/(df + t²)`.
fn student_t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    1.0 - 0.5 * regularized_incomplete_beta(x, df / 2.0, 0.5)
}

/// The regularised incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz), using the symmetry relation where that converges
/// faster.
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_continued_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_continued_fraction(1.0 - x, b, a) / b
    }
}

fn beta_continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        for coefficient in [
            even,
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ] {
            d = 1.0 + coefficient * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + coefficient / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_published_tables() {
        // Standard two-sided 95% critical values.
        for (df, t) in [
            (1, 12.7062),
            (2, 4.3027),
            (5, 2.5706),
            (10, 2.2281),
            (19, 2.0930),
            (30, 2.0423),
            (99, 1.9842),
            (1_000, 1.9623),
        ] {
            let got = student_t_975(df);
            assert!((got - t).abs() < 5e-5, "df {df}: {got} vs {t}");
        }
        assert!((student_t_975(1_000_000) - 1.959_964).abs() < 1e-5);
    }

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        let sd = (32.0f64 / 7.0).sqrt();
        assert!((s.sd.unwrap() - sd).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 2.364_624 * sd / 8f64.sqrt()).abs() < 1e-5);
        assert_eq!((s.min, s.max), (2.0, 9.0));
    }

    #[test]
    fn identical_values_have_exactly_no_spread() {
        let s = Summary::of(&[9_856_040.7; 10]);
        assert_eq!((s.mean, s.sd, s.ci95), (9_856_040.7, Some(0.0), Some(0.0)));
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = Summary::of(&[3.5]);
        assert_eq!(
            (s.mean, s.sd, s.ci95, s.min, s.max),
            (3.5, None, None, 3.5, 3.5)
        );
    }

    #[test]
    fn missing_values_are_left_out_of_a_summary() {
        let s = Summary::of_present(&[Some(2.0), None, Some(4.0)]);
        assert_eq!((s.n, s.mean, s.min, s.max), (2, 3.0, 2.0, 4.0));
        let none = Summary::of_present(&[None, None]);
        assert_eq!((none.n, none.sd, none.ci95), (0, None, None));
        assert!(none.mean.is_nan() && none.min.is_nan() && none.max.is_nan());
    }

    #[test]
    fn quartiles_show_two_clusters_a_mean_hides() {
        // Runs recovering at about 6 s or one breaker cycle later, 18 s.
        let s = Summary::of(&[6.0, 5.9, 18.1, 6.1, 6.0, 17.9, 6.2, 5.8]);
        let [q1, median, q3] = s.quartiles.unwrap();
        assert!((s.mean - 9.0).abs() < 1e-12);
        assert!((median - 6.05).abs() < 1e-12, "{median}");
        // Positions 1.75 and 5.25 of 5.8, 5.9, 6.0, 6.0, 6.1, 6.2, 17.9, 18.1.
        assert!((q1 - 5.975).abs() < 1e-12, "{q1}");
        assert!((q3 - 9.125).abs() < 1e-12, "{q3}");
        assert_eq!(Summary::of(&[4.0]).quartiles, Some([4.0; 3]));
        assert_eq!(Summary::of_present(&[None]).quartiles, None);
    }
}
