//! Timelines of simulated runs: one run binned as it goes, and the runs of a
//! comparison on shared axes (re-simulating only a run whose bins grew too
//! coarse).

use crate::base::seeding::Seeds;
use crate::base::time::{Micros, human_duration};
use crate::measure::observer::{NoObserver, Observer};
use crate::measure::timeline::{Binning, Timeline, nice_width};
use crate::sim::engine::{simulate_observed, simulate_with};
use crate::sim::queue::QueueKind;
use crate::spec::RunSpec;

/// The retries of one run of `spec` with `seeds`, in bins of a width `w·2^k`
/// (w the 1-2-5 width at least the spec's peak window), at most `2·max_bins`
/// of them, spanning the run up to its last success.
pub fn run_timeline(spec: &RunSpec, seeds: Seeds, max_bins: usize) -> Timeline {
    run_timeline_observed(
        spec,
        seeds,
        nice_width(spec.window()),
        max_bins,
        &mut NoObserver,
        QueueKind::default(),
    )
}

/// [`run_timeline`] from a first bin width, reporting to `observer` too (the
/// run is simulated once, for both), on the event queue `queue`.
pub fn run_timeline_observed<O: Observer>(
    spec: &RunSpec,
    seeds: Seeds,
    first_bin_us: Micros,
    max_bins: usize,
    observer: &mut O,
    queue: QueueKind,
) -> Timeline {
    let mut binning = Binning::growing(observer, first_bin_us, max_bins);
    let metrics = simulate_with(spec, seeds, &mut binning, queue);
    binning.finish(metrics)
}

/// The retries of one run in bins of `bin_us` up to `end` (later retries are
/// left out): timelines that share axes share their bins.
pub fn run_binned(spec: &RunSpec, seeds: Seeds, bin_us: Micros, end: Micros) -> Timeline {
    let mut none = NoObserver;
    let mut binning = Binning::fixed(&mut none, bin_us, end);
    let metrics = simulate_observed(spec, seeds, &mut binning);
    binning.finish(metrics)
}

/// One labelled run of a comparison: its workload and seeds.
pub struct LabelledRun<'a> {
    /// What the panel is called.
    pub label: String,
    /// The workload.
    pub spec: &'a RunSpec,
    /// The run's seeds.
    pub seeds: Seeds,
}

/// The timelines of `runs` on shared bins, at most `max_bins` of them: each
/// run is simulated once in growing bins, then merged into the shared ones.
/// The shared end is at most twice the median run's length; a run that lasts
/// longer says so in its label, and a run whose bins grew coarser than the
/// shared ones is simulated again, finely.
pub fn shared_timelines(runs: &[LabelledRun<'_>], max_bins: usize) -> Vec<(String, Timeline)> {
    let window = runs
        .iter()
        .map(|r| r.spec.window())
        .max()
        .unwrap_or(Micros::from_us(1));
    let first_bin = nice_width(window);
    let whole: Vec<Timeline> = runs
        .iter()
        .map(|r| {
            run_timeline_observed(
                r.spec,
                r.seeds,
                first_bin,
                max_bins,
                &mut NoObserver,
                QueueKind::default(),
            )
        })
        .collect();
    let spans: Vec<_> = whole
        .iter()
        .map(|t| t.metrics.last_success_us + Micros::from_us(1))
        .collect();
    let (bin, end) = Timeline::shared_bins(&spans, first_bin, max_bins);
    runs.iter()
        .zip(&whole)
        .map(|(r, timeline)| {
            let span = timeline.metrics.last_success_us + Micros::from_us(1);
            let mut label = r.label.clone();
            if span > end {
                label += &format!(
                    " (runs {}; the first {} shown)",
                    human_duration(span - Micros::from_us(1)),
                    human_duration(end)
                );
            }
            let shared = timeline
                .rebinned(bin, end)
                .unwrap_or_else(|| run_binned(r.spec, r.seeds, bin, end));
            (label, shared)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKind;
    use crate::base::time::US_PER_MS;

    #[test]
    fn bins_count_every_retry_and_success() {
        let spec = RunSpec::seed_002(PolicyKind::Full, 300);
        let t = run_timeline(&spec, Seeds::for_job(1, 0, 0), 200);
        assert_eq!(t.retries.iter().sum::<u64>(), t.metrics.retries);
        assert_eq!(t.successes.iter().sum::<u64>(), t.metrics.successes);
        assert_eq!(t.successes.len(), t.retries.len());
        // Every client succeeds here, the last in the last bin.
        assert_eq!(t.metrics.successes, 300);
        assert_eq!(t.succeeded_shares().last(), Some(&1.0));
        assert!(t.successes.last().is_some_and(|&n| n > 0));
        assert!(t.retries.len() <= 400, "at most twice max_bins");
        assert!(
            (t.bin_us / US_PER_MS).is_power_of_two(),
            "1 ms doubled: {:?}",
            t.bin_us
        );
    }

    #[test]
    fn no_jitter_is_a_row_of_spikes() {
        // Waves at 100, 300, 700 ms ... each a spike in one bin.
        let spec = RunSpec::seed_002(PolicyKind::None, 4);
        let t = run_timeline(&spec, Seeds::for_job(1, 0, 0), 1_000);
        assert_eq!(t.bin_us, Micros::from_ms(1));
        assert_eq!(t.retries.len(), 701, "up to the last success at 700 ms");
        let spikes: Vec<(usize, u64)> = t
            .retries
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .collect();
        assert_eq!(spikes, [(100, 3), (300, 2), (700, 1)]);
        // One client succeeds at 0 and one on each wave.
        let done: Vec<(usize, u64)> = t
            .successes
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .collect();
        assert_eq!(done, [(0, 1), (100, 1), (300, 1), (700, 1)]);
    }

    #[test]
    fn a_growing_timeline_equals_a_fixed_one_rebinned() {
        // Streaming, doubling bins lose nothing: merged to the fixed width they
        // give exactly the fixed timeline.
        let spec = RunSpec::seed_002(PolicyKind::Decorrelated, 2_000);
        let seeds = Seeds::for_job(4, 0, 0);
        let grown = run_timeline(&spec, seeds, 50);
        let end = grown.bin_us * grown.retries.len() as u64;
        let fixed = run_binned(&spec, seeds, grown.bin_us * 2, end);
        let rebinned = grown.rebinned(grown.bin_us * 2, end).unwrap();
        assert_eq!(rebinned.retries, fixed.retries);
        assert_eq!(rebinned.successes, fixed.successes);
        assert_eq!(fixed.retries.iter().sum::<u64>(), grown.metrics.retries);
        assert!(
            grown
                .rebinned(grown.bin_us + Micros::from_us(1), end)
                .is_none()
        );
    }

    #[test]
    fn shared_timelines_share_bins_and_say_when_a_run_is_cut() {
        // No jitter at 60 clients runs ~100× longer than full jitter: its
        // panel is cut at twice the median span and says how long it runs.
        let specs = [
            RunSpec::seed_002(PolicyKind::Full, 60),
            RunSpec::seed_002(PolicyKind::Equal, 60),
            RunSpec::seed_002(PolicyKind::None, 60),
        ];
        let runs: Vec<_> = specs
            .iter()
            .map(|spec| LabelledRun {
                label: spec.policy.kind.name().to_string(),
                spec,
                seeds: Seeds::for_job(2, 0, 0),
            })
            .collect();
        let shared = shared_timelines(&runs, 100);
        let bins: Vec<_> = shared
            .iter()
            .map(|(_, t)| (t.bin_us, t.retries.len()))
            .collect();
        assert!(bins.windows(2).all(|w| w[0] == w[1]), "{bins:?}");
        assert!(bins[0].1 <= 100);
        assert_eq!(shared[0].0, "full");
        assert!(shared[2].0.starts_with("none (runs "), "{}", shared[2].0);
        for ((_, t), spec) in shared.iter().zip(&specs).take(2) {
            let whole = simulate_observed(spec, Seeds::for_job(2, 0, 0), &mut NoObserver);
            assert_eq!(
                t.retries.iter().sum::<u64>(),
                whole.retries,
                "{}",
                spec.policy.kind
            );
        }
    }
}
