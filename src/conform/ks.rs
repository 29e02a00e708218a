//! The statistics of `conform`: a Kolmogorov–Smirnov distance with a
//! timing tolerance, the overhead shift, and Holm's correction.

/// The largest vertical distance between the sample `gaps` (sorted, ms)
/// shifted down by `shift` and the reference `reference` (sorted, ms),
/// allowing each gap to sit `tolerance` ms either side of the reference (a
/// Lévy-type tolerance: the trace's timing resolution). With no tolerance
/// it is the two-sample Kolmogorov–Smirnov statistic. A delay the policy
/// makes constant then matches gaps within the tolerance, where the plain
/// statistic would be about 1 for any timing noise at all.
pub fn distance(gaps: &[f64], shift: f64, reference: &[f64], tolerance: f64) -> f64 {
    let (n, m) = (gaps.len() as f64, reference.len() as f64);
    // The gaps are sorted, so each count only moves up: searched in what
    // is left of the reference, not all of it.
    let (mut at_most, mut below) = (0, 0);
    let mut d: f64 = 0.0;
    for (i, &gap) in gaps.iter().enumerate() {
        let x = gap - shift;
        at_most += reference[at_most..].partition_point(|&r| r <= x + tolerance);
        below += reference[below..].partition_point(|&r| r < x - tolerance);
        // The sample's step at x: F_n is i/n just before and (i+1)/n at x.
        let above = (i + 1) as f64 / n - at_most as f64 / m;
        let under = below as f64 / m - i as f64 / n;
        d = d.max(above).max(under);
    }
    d
}

/// The overhead shift of a trace: the constant that, taken from every
/// gap, brings the gaps nearest the policy's delays: the minimum over
/// shifts of the retry numbers' distances, each scaled by the square root
/// of its gaps (the statistic's own scale). Searched from zero (a client
/// cannot send before its policy's delay ends: a shorter delay is the
/// test's to find, not the shift's to absorb) to the most that keeps every
/// gap above the policy's least delay, on a grid and then around its best.
/// Edges are what pin it: a jittered policy's lowest delays, or a constant
/// one, fix the shift to the trace's resolution, where a median difference
/// wanders by tens of ms with full jitter. `gaps[k]` and `references[k]`
/// are sorted.
pub fn shift(gaps: &[Vec<f64>], references: &[Vec<f64>], tolerance: f64) -> f64 {
    let pairs: Vec<(&[f64], &[f64])> = gaps
        .iter()
        .zip(references)
        .filter(|(g, r)| !g.is_empty() && !r.is_empty())
        .map(|(g, r)| (g.as_slice(), r.as_slice()))
        .collect();
    let most = pairs
        .iter()
        .map(|(g, r)| g[0] - r[0] + tolerance)
        .fold(f64::INFINITY, f64::min);
    if pairs.is_empty() || most <= 0.0 {
        return 0.0;
    }
    let cost = |s: f64| -> f64 {
        pairs
            .iter()
            .map(|(g, r)| (g.len() as f64).sqrt() * distance(g, s, r, tolerance))
            .sum()
    };
    let search = |from: f64, to: f64, points: u32| -> f64 {
        let step = (to - from) / f64::from(points);
        (0..=points)
            .map(|i| from + step * f64::from(i))
            .map(|s| (cost(s), s))
            .fold(
                (f64::INFINITY, 0.0),
                |best, c| if c.0 < best.0 { c } else { best },
            )
            .1
    };
    let step = most / f64::from(SHIFT_GRID);
    let coarse = search(0.0, most, SHIFT_GRID);
    search(
        (coarse - step).max(0.0),
        (coarse + step).min(most),
        SHIFT_GRID,
    )
}

/// Points of each of the shift's two searches.
const SHIFT_GRID: u32 = 24;

/// Holm's step-down correction: which of `p_values` are rejected at
/// family-wise level `alpha`.
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut rejected = vec![false; p_values.len()];
    let tests = p_values.len();
    for (rank, &i) in order.iter().enumerate() {
        if p_values[i] <= alpha / (tests - rank) as f64 {
            rejected[i] = true;
        } else {
            break;
        }
    }
    rejected
}

/// The nearest-rank quantile `q` (0 to 1) of sorted `values`.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn the_distance_is_the_two_sample_statistic_without_tolerance() {
        let reference: Vec<f64> = (0..1000).map(|i| f64::from(i) / 10.0).collect();
        // The sample is the reference's lower half: F_n reaches 1 at 50,
        // where the reference is at 0.5.
        let half: Vec<f64> = (0..500).map(|i| f64::from(i) / 10.0).collect();
        assert!((distance(&half, 0.0, &reference, 0.0) - 0.5).abs() < 1e-9);
        // Itself: no distance but the steps' own.
        assert!(distance(&reference, 0.0, &reference, 0.0) <= 1e-3 + 1e-12);
        // Shifted up by 25 and shifted back: as good as itself.
        let up: Vec<f64> = reference.iter().map(|x| x + 25.0).collect();
        assert!(distance(&up, 25.0, &reference, 0.0) <= 1e-3 + 1e-12);
        assert!(distance(&up, 0.0, &reference, 0.0) > 0.24);
    }

    #[test]
    fn a_constant_delay_matches_gaps_within_the_tolerance_only() {
        let reference = vec![100.0; 100];
        let gaps = sorted(vec![99.7, 100.2, 100.9, 100.4]);
        assert!(distance(&gaps, 0.0, &reference, 0.0) >= 0.5);
        assert_eq!(distance(&gaps, 0.0, &reference, 1.0), 0.0);
        let late = sorted(vec![99.7, 100.2, 102.5, 100.4]);
        assert!((distance(&late, 0.0, &reference, 1.0) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn the_shift_brings_the_gaps_to_the_policy_and_is_never_negative() {
        let references: Vec<Vec<f64>> = vec![
            (0..100).map(f64::from).collect(),
            (0..100).map(|i| f64::from(i) * 3.0).collect(),
        ];
        let gaps = vec![
            (0..100).step_by(7).map(|i| f64::from(i) + 3.0).collect(),
            (0..100)
                .step_by(9)
                .map(|i| f64::from(i) * 3.0 + 3.0)
                .collect(),
        ];
        // Within the search's second grid step of the true 3.
        assert!((shift(&gaps, &references, 0.0) - 3.0).abs() < 0.01);
        let early = vec![vec![0.0, 5.0, 15.0, 25.0], vec![]];
        assert_eq!(shift(&early, &references, 0.0), 0.0);
    }

    #[test]
    fn holm_steps_down_and_stops_at_the_first_kept() {
        // Sorted 0.001, 0.012, 0.02, 0.5 against 0.05/4, /3, /2, /1.
        let rejected = holm(&[0.5, 0.012, 0.001, 0.02], 0.05);
        assert_eq!(rejected, vec![false, true, true, true]);
        // 0.02 > 0.05/3: it and everything after are kept.
        let rejected = holm(&[0.5, 0.02, 0.001, 0.03], 0.05);
        assert_eq!(rejected, vec![false, false, true, false]);
    }
}
