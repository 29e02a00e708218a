//! Splitting in a map (`herdsim map --splitting`): where a cell's plain runs
//! put its storm probability below a threshold, a few dozen runs cannot
//! say how rare the storm is (none stuck of 16 is anything below 20%).
//! Those cells also get an adaptive multilevel splitting estimate
//! ([`crate::experiment::backlog`]) of the backlog's question: the storm
//! region before calm after the trigger (or within the run, without one).
//! It is not the verdict's stuck: a run can pass through the storm region
//! and still recover, so the two are given side by side, never merged.
//!
//! Determinism: a cell's batches are seeded from the master seed and the
//! cell's values, as its runs are; they are made after the refinement, in
//! the map's order (row by row, along x), so the same inputs give the same
//! estimates at any thread count, and an interrupted map continues from its
//! journaled batches to the same end.

use crate::experiment::backlog::{Splitting, estimate_of, path_rules, split_batch};
use crate::experiment::map::{Map, MapStop};
use crate::experiment::server_runs::server_parts;
use crate::experiment::sweep::for_each_ordered;
use crate::model::backlog::Regions;
use crate::sim::splitting::SplitBatch;

/// Which cells of a map are split, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSplit {
    /// How each cell is split.
    pub how: Splitting,
    /// Cells whose plain storm probability is below this are split.
    pub below: f64,
}

impl MapSplit {
    /// Every setting, as text, for the map's fingerprint.
    pub fn fields(&self) -> Vec<String> {
        let mut fields = self.how.fields();
        fields.push(format!("{:e}", self.below));
        fields
    }
}

/// A cell's splitting figures: all a CSV row or a table needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitFigures {
    /// The regions it was split towards.
    pub regions: Regions,
    /// The estimate, and its 95% half-width (Student t over the batches;
    /// `None` with one batch).
    pub probability: f64,
    pub ci95: Option<f64>,
    /// Batches, paths and events spent, and paths a bound of the run cut.
    pub batches: u32,
    pub paths: u64,
    pub events: u64,
    pub cut: u64,
}

/// The cells of `map` to split, in the map's order: those with decided runs
/// whose plain storm probability is below `split.below`.
pub fn cells_to_split(map: &Map, split: &MapSplit) -> Vec<usize> {
    map.rows()
        .into_iter()
        .flatten()
        .filter(|&i| {
            let storm = map.cells[i].storm();
            storm.runs > 0 && storm.probability() < split.below
        })
        .collect()
}

/// Splits the cells of `map` that [`cells_to_split`] names, batch by batch
/// on rayon's pool (or taken from `known`, an interrupted map's batches, by
/// cell values and batch), every new batch handed to `sink` in the map's
/// order as it completes; then keeps each cell's figures in
/// [`Map::splits`]. `on_start` hears how many batches there are,
/// `on_batch_done` each one's end. Paths stop at `max_events` events (and
/// count as cut).
pub fn split_map<E: Send>(
    map: &mut Map,
    split: &MapSplit,
    max_events: u64,
    known: &(dyn Fn(&str, &str, u32) -> Option<SplitBatch> + Sync),
    on_start: impl FnOnce(usize),
    on_batch_done: impl Fn() + Sync,
    mut sink: impl FnMut(&str, &str, u32, &SplitBatch) -> Result<(), E> + Send,
) -> Result<(), MapStop<E>> {
    let how = &split.how;
    let per_cell = how.batches as usize;
    let settings = &map.settings;
    let cells = &map.cells;
    // A cell with no storm region (none given, none to derive: refused for
    // the coarse cells when the map is made) is not split.
    let (chosen, parts): (Vec<usize>, Vec<_>) = cells_to_split(map, split)
        .into_iter()
        .filter_map(|i| {
            let spec = settings
                .spec(&cells[i].x, cells[i].y)
                .expect("a map's cells are checked when made");
            let regions = how.regions(&spec)?.regions;
            let (server, retry) = server_parts(&spec);
            let rules = path_rules(&server, regions, true, max_events);
            Some((i, (server, retry, rules, regions)))
        })
        .unzip();
    on_start(chosen.len() * per_cell);
    let y_value = |i: usize| settings.y.values[cells[i].y].as_str();
    let mut done: Vec<Vec<SplitBatch>> = vec![Vec::with_capacity(per_cell); chosen.len()];
    for_each_ordered(
        0..chosen.len() * per_cell,
        |job| {
            let (at, batch) = (job / per_cell, (job % per_cell) as u32);
            let i = chosen[at];
            let made = known(&cells[i].x, y_value(i), batch).map_or_else(
                || {
                    let (server, retry, rules, _) = &parts[at];
                    let point = settings.cell_key(&cells[i].x, cells[i].y);
                    let made = split_batch(
                        (server, retry),
                        *rules,
                        (settings.master_seed, point),
                        how.particles,
                        u64::from(batch),
                    );
                    (made, true)
                },
                |made| (made, false),
            );
            on_batch_done();
            made
        },
        |job, (made, fresh)| {
            let (at, batch) = (job / per_cell, (job % per_cell) as u32);
            let i = chosen[at];
            if fresh {
                sink(&cells[i].x, y_value(i), batch, &made).map_err(MapStop::Sink)?;
            }
            done[at].push(made);
            Ok(())
        },
    )?;
    for ((&i, batches), (_, _, _, regions)) in chosen.iter().zip(done).zip(&parts) {
        let estimate = estimate_of(how.particles, batches);
        let figures = SplitFigures {
            regions: *regions,
            probability: estimate.estimate.mean,
            ci95: estimate.estimate.ci95,
            batches: how.batches,
            paths: estimate.paths,
            events: estimate.events,
            cut: estimate.cut,
        };
        map.splits.insert(i, figures);
    }
    Ok(())
}
