//! Special functions the layers above need: ln Γ for Student's t (the
//! confidence intervals) and for a Weibull's scale from its mean; the
//! normal's upper tail and its inverse for a lognormal given by a quantile
//! (`lognormal:80ms@p99=400ms`).

/// ln Γ(z) for z > 0 (Lanczos, g = 7, n = 9; relative error below 1e-15).
pub fn ln_gamma(z: f64) -> f64 {
    const G: f64 = 7.0;
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if z < 0.5 {
        // Reflection: Γ(z)Γ(1−z) = π / sin(πz).
        return (std::f64::consts::PI / (std::f64::consts::PI * z).sin()).ln() - ln_gamma(1.0 - z);
    }
    let z = z - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, &c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (z + i as f64);
    }
    let t = z + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (z + 0.5) * t.ln() - t + sum.ln()
}

/// The standard normal's density φ(x).
fn normal_density(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Q(x) = P(Z > x) for a standard normal Z, to about 1e-15 relative error
/// for every x from −∞ up to where it underflows. Near the middle from
/// the series Φ(x) − ½ = φ(x)·Σ x^(2n+1)/(2n+1)!! (all terms positive, so no
/// cancellation inside the sum); in the tail from Laplace's continued
/// fraction Q(x) = φ(x)/(x + 1/(x + 2/(x + 3/…))), where 1 − Φ would lose
/// the digits the tail has.
pub fn normal_upper_tail(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 1.0 - normal_upper_tail(-x);
    }
    if x < 3.0 {
        let (mut term, mut sum, mut n) = (x, x, 0.0);
        while term > sum * 1e-17 {
            n += 1.0;
            term *= x * x / (2.0 * n + 1.0);
            sum += term;
        }
        return 0.5 - normal_density(x) * sum;
    }
    // From x = 3 the fraction has settled to f64 precision well before
    // 300 levels (it converges faster as x grows).
    let mut fraction = x;
    for k in (1..=300).rev() {
        fraction = x + f64::from(k) / fraction;
    }
    normal_density(x) / fraction
}

/// The standard normal's quantile at upper-tail probability `tail`
/// (0 < tail < 1): the x with P(Z > x) = `tail`, so Φ⁻¹(0.99) is
/// `normal_upper_quantile(0.01)`. Taking the tail rather than p keeps the
/// digits of a small tail (1 − 0.9999 loses four of them). Newton's method
/// on ln Q from Abramowitz and Stegun's 26.2.23 (within 4.5e-4), to f64
/// precision.
pub fn normal_upper_quantile(tail: f64) -> f64 {
    assert!(
        tail > 0.0 && tail < 1.0,
        "an upper tail strictly between 0 and 1, not {tail}"
    );
    if tail > 0.5 {
        return -normal_upper_quantile(1.0 - tail);
    }
    let t = (-2.0 * tail.ln()).sqrt();
    let mut x = t
        - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
            / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t);
    for _ in 0..50 {
        let q = normal_upper_tail(x);
        // d ln Q / dx = −φ/Q.
        let step = (q.ln() - tail.ln()) * q / normal_density(x);
        x += step;
        if step.abs() <= 1e-15 * x.abs().max(1.0) {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published values (to 16 digits): Q at whole x, and Φ⁻¹ at the
    /// percentiles users give. The tolerances are a few units of f64's
    /// last place at these magnitudes.
    #[test]
    fn normal_tail_and_quantile_match_tables() {
        for (x, q) in [
            (0.0, 0.5),
            (1.0, 0.158_655_253_931_457_07),
            (2.0, 0.022_750_131_948_179_21),
            (3.0, 0.001_349_898_031_630_095_7),
            (4.0, 3.167_124_183_311_998e-5),
            (6.0, 9.865_876_450_377_012e-10),
            (-1.0, 0.841_344_746_068_542_9),
        ] {
            let got = normal_upper_tail(x);
            assert!(((got - q) / q).abs() < 1e-13, "Q({x}) = {got}, not {q}");
        }
        for (tail, z) in [
            (0.5, 0.0),
            (0.1, 1.281_551_565_544_600_8),
            (0.05, 1.644_853_626_951_471_5),
            (0.025, 1.959_963_984_540_053_6),
            (0.01, 2.326_347_874_040_840_8),
            (0.001, 3.090_232_306_167_813),
            (0.0001, 3.719_016_485_455_708_4),
            (0.9, -1.281_551_565_544_600_8),
        ] {
            let got = normal_upper_quantile(tail);
            assert!((got - z).abs() < 1e-12, "Φ⁻¹(1 − {tail}) = {got}, not {z}");
        }
    }

    #[test]
    fn ln_gamma_at_known_points() {
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    }
}
