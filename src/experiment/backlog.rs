//! Backlog questions of a server workload, answered by the simulator: how
//! long it takes to reach the storm region, how long back to calm after a
//! trigger, and how likely a storm before calm is, by plain runs and by
//! adaptive multilevel splitting ([`crate::sim::splitting`]) where plain
//! runs would never see one.
//!
//! With a trigger, paths are scored from its (last) end: the question is the
//! exact chain's, storm before calm from the state the trigger left. Without
//! one, from the start: the first passage from an empty service into the
//! storm region, within the run's horizon.

use rayon::prelude::*;

use crate::base::seeding::{Seeds, job_seed};
use crate::base::time::Nanos;
use crate::measure::server_metrics::wilson_interval;
use crate::measure::stats::Summary;
use crate::model::backlog::{ChosenRegions, Regions, choose_regions};
use crate::model::server::{NS_PER_S, ServerSpec};
use crate::sim::server_loop::ServerRetry;
use crate::sim::server_loop::backlog_paths::{Passage, PathRules, server_passage, split_server};
use crate::sim::splitting::SplitBatch;
use crate::spec::RunSpec;

/// The rules of `server`'s backlog paths for `regions`: scored from the
/// last trigger's end (or the start), ending at calm after it; at the storm
/// region too if `end_at_storm` (splitting's paths), else going on to calm
/// (passage times). Without a trigger there is no calm to end at: a path
/// ends at the storm region or the run's end.
pub fn path_rules(
    server: &ServerSpec,
    regions: Regions,
    end_at_storm: bool,
    max_events: u64,
) -> PathRules {
    let from = server.last_trigger_end();
    PathRules {
        scored_from: server.first_trigger_start().unwrap_or(Nanos::ZERO),
        from: from.unwrap_or(Nanos::ZERO),
        storm: regions.high as u64,
        calm: from.map(|_| regions.low as u64),
        end_at_storm: end_at_storm || from.is_none(),
        until: server.duration,
        max_events,
    }
}

/// How to split a service towards its storm region: the regions given
/// (a missing one is derived from the service), and the batches.
#[derive(Debug, Clone, PartialEq)]
pub struct Splitting {
    pub high: Option<usize>,
    pub low: Option<usize>,
    /// Paths a batch keeps.
    pub particles: usize,
    /// Independent batches, whose spread gives the interval.
    pub batches: u32,
}

impl Splitting {
    /// The regions of the service `spec` describes, a missing one derived
    /// from it ([`choose_regions`]); `None` if the storm region is missing
    /// and nothing to derive it from.
    pub fn regions(&self, spec: &RunSpec) -> Option<ChosenRegions> {
        choose_regions(self.high, self.low, &spec.server.backlog_shape())
    }

    /// Every setting, as text, for a fingerprint.
    pub fn fields(&self) -> Vec<String> {
        let region = |r: Option<usize>| r.map_or_else(|| "default".to_string(), |r| r.to_string());
        vec![
            "splitting".to_string(),
            region(self.high),
            region(self.low),
            self.particles.to_string(),
            self.batches.to_string(),
        ]
    }
}

/// What plain runs saw of the backlog, replicate by replicate.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageSummary {
    /// True if scored from a trigger's end (else from the start).
    pub after_trigger: bool,
    /// Runs, and those a bound of the run (the load's end, the horizon,
    /// the event limit) cut before their end: after a trigger, before they
    /// were back to calm.
    pub runs: u64,
    pub cut: u64,
    /// The cut runs that had reached the storm region (counted as storms).
    pub cut_after_storm: u64,
    /// Runs that reached the storm region (before calm, after a trigger).
    pub storm: u64,
    /// Its share's 95% Wilson interval.
    pub storm_interval: (f64, f64),
    /// Seconds from the scoring's start to the storm region, of the runs
    /// that reached it.
    pub to_storm: Summary,
    /// Seconds from the trigger's end back to calm, of the runs that got
    /// there (after a trigger only).
    pub to_calm: Summary,
}

/// Runs replicates `0..replicates` of (`server`, `retry`) as point `point`
/// under `master` (each the same run as `run`'s replicate of that index),
/// following their backlog by `rules`, calling `on_done` after each.
pub fn passages(
    (server, retry): (&ServerSpec, &ServerRetry),
    rules: PathRules,
    (master, point): (u64, u64),
    replicates: u32,
    on_done: &(impl Fn() + Sync),
) -> Vec<Passage> {
    (0..u64::from(replicates))
        .into_par_iter()
        .map(|replicate| {
            let passage = server_passage(
                server,
                retry,
                rules,
                Seeds::for_job(master, point, replicate),
            );
            on_done();
            passage
        })
        .collect()
}

/// The summary of `runs`, scored from `rules.from`.
pub fn summarise_passages(runs: &[Passage], rules: PathRules) -> PassageSummary {
    let seconds = |ns: Nanos| ns.ticks() as f64 / NS_PER_S.ticks() as f64;
    let after_trigger = rules.calm.is_some();
    let storm = runs.iter().filter(|p| p.storm_first()).count() as u64;
    let to_storm: Vec<Option<f64>> = runs
        .iter()
        .map(|p| p.storm_at.map(|t| seconds(t - rules.from)))
        .collect();
    let to_calm: Vec<Option<f64>> = runs
        .iter()
        .map(|p| p.calm_at.map(|t| seconds(t - rules.from)))
        .collect();
    PassageSummary {
        after_trigger,
        runs: runs.len() as u64,
        cut: runs.iter().filter(|p| p.cut).count() as u64,
        cut_after_storm: runs
            .iter()
            .filter(|p| p.cut && p.storm_at.is_some())
            .count() as u64,
        storm,
        storm_interval: match wilson_interval(storm, runs.len() as u64) {
            // None seen: the interval starts at 0 exactly, not at rounding.
            (_, high) if storm == 0 => (0.0, high),
            interval => interval,
        },
        to_storm: Summary::of_present(&to_storm),
        to_calm: Summary::of_present(&to_calm),
    }
}

/// A splitting estimate of the chance of the storm region (before calm,
/// after a trigger), over independent batches.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitEstimate {
    /// Paths a batch keeps.
    pub particles: usize,
    /// Each batch's estimate and cost, in batch order.
    pub batches: Vec<SplitBatch>,
    /// The batches' estimates: mean, and the 95% half-width (Student t over
    /// the batches, each an unbiased estimate of its own).
    pub estimate: Summary,
    /// Paths and events spent in all, and by the batches' first paths alone.
    pub paths: u64,
    pub events: u64,
    pub first_events: u64,
    /// Paths a bound of the run cut (counted as not reaching the storm).
    pub cut: u64,
    /// Plain runs for an interval as narrow, p(1 − p) / se², and the ratio
    /// of their events to splitting's (`None` at an estimate of 0 or 1, or
    /// with no spread across batches).
    pub plain_runs: Option<f64>,
    pub gain: Option<f64>,
}

/// The seed key of splitting batch `batch` of point `point` under `master`.
/// A constant apart from the replicates' seeds.
fn batch_key(master: u64, point: u64, batch: u64) -> u64 {
    job_seed(master, point ^ 0x5B11_7715_A3C0_0000, batch)
}

/// Splits `batches` batches of `particles` paths of (`server`, `retry`)
/// towards the storm region of `rules` (which must end paths there), as
/// point `point` under `master`; batch `b`'s path `i` is the run of
/// replicate `b · particles + i`, so batch 0's first paths are `run`'s
/// first replicates. Calls `on_batch` after each batch.
pub fn split_estimate(
    (server, retry): (&ServerSpec, &ServerRetry),
    rules: PathRules,
    (master, point): (u64, u64),
    particles: usize,
    batches: u32,
    on_batch: &(impl Fn() + Sync),
) -> SplitEstimate {
    let done: Vec<SplitBatch> = (0..u64::from(batches))
        .into_par_iter()
        .map(|b| {
            let batch = split_batch((server, retry), rules, (master, point), particles, b);
            on_batch();
            batch
        })
        .collect();
    estimate_of(particles, done)
}

/// Batch `batch` of [`split_estimate`]'s: its paths are the runs of
/// replicates `batch · particles ..`, its copies keyed by the batch.
pub fn split_batch(
    (server, retry): (&ServerSpec, &ServerRetry),
    rules: PathRules,
    (master, point): (u64, u64),
    particles: usize,
    batch: u64,
) -> SplitBatch {
    assert!(
        rules.end_at_storm,
        "splitting's paths end at the storm region"
    );
    let first = batch * particles as u64;
    let seeds_of = |i: u64| Seeds::for_job(master, point, first + i);
    split_server(
        server,
        retry,
        rules,
        particles,
        &seeds_of,
        batch_key(master, point, batch),
    )
}

/// The estimate of `batches` of `particles` paths each.
pub fn estimate_of(particles: usize, batches: Vec<SplitBatch>) -> SplitEstimate {
    let values: Vec<f64> = batches.iter().map(|b| b.estimate).collect();
    let estimate = Summary::of(&values);
    let paths = batches.iter().map(|b| b.paths).sum();
    let events = batches.iter().map(|b| b.events).sum();
    let first_events: u64 = batches.iter().map(|b| b.first_events).sum();
    let cut = batches.iter().map(|b| b.cut).sum();
    let p = estimate.mean;
    let plain_runs = estimate
        .standard_error()
        .filter(|se| *se > 0.0 && p > 0.0 && p < 1.0)
        .map(|se| p * (1.0 - p) / (se * se));
    // A plain run costs what a first path cost: it too runs until the storm
    // or calm decides it.
    let per_plain_run = first_events as f64 / (particles * batches.len()) as f64;
    let gain = plain_runs.map(|n| n * per_plain_run / events as f64);
    SplitEstimate {
        particles,
        batches,
        estimate,
        paths,
        events,
        first_events,
        cut,
        plain_runs,
        gain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::scenario::Scenario;
    use crate::experiment::server_runs::server_parts;

    /// One worker at ρ 0.4 with exponential timeouts and memoryless
    /// retries (the exact chain's service), for 1 s, with `extra` keys.
    fn service(extra: &str) -> (ServerSpec, ServerRetry) {
        let text = format!(
            "resource = \"server\"\nrate = 400\nworkers = 1\nqueue_limit = 10\n\
             service = \"exp:1ms\"\ndiscipline = \"random\"\ntimeout = \"10ms\"\n\
             timeout_law = \"exponential\"\npolicy = \"memoryless\"\nbase = \"20ms\"\n\
             cap = \"10s\"\nbudget = \"persistence:0.75\"\nduration = \"1s\"\n{extra}"
        );
        let scenario = Scenario::from_toml("s.toml", &text).unwrap();
        server_parts(&scenario.grid.point(0))
    }

    const REGIONS: Regions = Regions { high: 12, low: 1 };

    #[test]
    fn paths_are_judged_from_the_triggers_end_and_scored_from_its_start() {
        let (server, _) = service("trigger = \"outage@500ms..520ms\"");
        let rules = path_rules(&server, REGIONS, true, u64::MAX);
        assert_eq!(
            (rules.scored_from, rules.from, rules.calm, rules.until),
            (
                Nanos::from_ms(500),
                Nanos::from_ms(520),
                Some(1),
                Nanos::from_s(1)
            )
        );
        assert!(rules.end_at_storm);
        // Without a trigger: from the start, with no calm to end at, so a
        // path ends at the storm even when asked to go on.
        let (server, _) = service("");
        let rules = path_rules(&server, REGIONS, false, u64::MAX);
        assert_eq!(
            (
                rules.scored_from,
                rules.from,
                rules.calm,
                rules.end_at_storm
            ),
            (Nanos::ZERO, Nanos::ZERO, None, true)
        );
    }

    #[test]
    fn passages_are_decided_after_the_trigger_and_the_same_from_the_same_seeds() {
        let (server, retry) = service("trigger = \"outage@500ms..520ms\"");
        let rules = path_rules(&server, REGIONS, false, u64::MAX);
        let runs = passages((&server, &retry), rules, (7, 0), 200, &|| {});
        assert_eq!(
            runs,
            passages((&server, &retry), rules, (7, 0), 200, &|| {})
        );
        for p in &runs {
            // Every run is back to calm within its load, judged only from
            // the trigger's end; a storm, if any, came before the calm.
            assert!(!p.cut, "{p:?}");
            let calm = p.calm_at.expect("back to calm");
            assert!(calm >= rules.from && calm <= rules.until, "{p:?}");
            if let Some(storm) = p.storm_at {
                assert!(storm >= rules.from && storm <= calm, "{p:?}");
            }
        }
        // The chain's storm probability here is 0.356: of 200 runs, 71 on
        // average with sd 6.8; 40 to 102 is ±4.5 sd at this fixed seed.
        let storms = runs.iter().filter(|p| p.storm_first()).count();
        assert!((40..=102).contains(&storms), "{storms}");
        let summary = summarise_passages(&runs, rules);
        assert_eq!(summary.storm, storms as u64);
        assert_eq!(summary.to_calm.n, 200);
    }
}
