//! Metastability maps: where a server-model service tips over as two
//! parameters vary (`herdsim map`).
//!
//! A map is a grid of cells, one per (x, y) value pair, each run over
//! replicate seeds; a cell's storm probability is the share of its runs that
//! ended stuck, with its Wilson 95% interval. Onset is stochastic, so the
//! boundary is a band: a cell whose interval straddles one half is
//! *uncertain*. Refinement works where the boundary is: each round doubles
//! the seeds of the uncertain cells next to it (up to a ceiling) and puts a
//! new cell half way between each pair of neighbours along x that the
//! boundary passes between, so after `R` rounds its position along x is
//! known to the coarse step over 2^R (or the run budget stopped it first).
//! Refinement is along x only, row by row: y is the given grid.
//!
//! Determinism: a cell's runs are seeded from the master seed, the cell's
//! values (not its place in the grid, which refinement changes) and the
//! replicate; every round's plan is a function of the results so far, taken
//! in a fixed order, so the same inputs give the same cells and runs at any
//! thread count, and an interrupted map continues to the same end.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::base::fingerprint::Fingerprint;
use crate::base::format::trimmed;
use crate::base::seeding::Seeds;
use crate::base::time::{Micros, format_duration, parse_duration};
use crate::experiment::map_split::{MapSplit, SplitFigures};
use crate::experiment::server_runs::server_parts;
use crate::experiment::sweep::for_each_ordered;
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{ServerMetric, ServerMetrics, Storm};
use crate::sim::queue::QueueKind;
use crate::sim::server_loop::simulate_server_watched;
use crate::spec::RunSpec;
use crate::spec::params::{Kind, Param, parameter_fields};

/// One axis of a map: a parameter and its values, in the order given.
#[derive(Debug, Clone)]
pub struct MapAxis {
    /// The parameter.
    pub param: &'static Param,
    /// Its coarse values, as given.
    pub values: Vec<String>,
    scale: Scale,
}

/// How an axis's values are placed and interpolated.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    /// Durations, placed in ms.
    Duration,
    /// Numbers (`integer`: counts, whose midpoints are whole).
    Number { integer: bool },
    /// Text whose values differ in numbers only (`outage@2s..2.1s`): placed
    /// by the first number that varies (`index` among the text's numbers),
    /// every differing number interpolated.
    Template { index: usize },
    /// Anything else (policy names): placed by position, never refined.
    Ordinal,
}

/// A text's pieces: the text between numbers, and the numbers.
fn pieces(text: &str) -> (Vec<&str>, Vec<&str>) {
    let bytes = text.as_bytes();
    let (mut words, mut numbers) = (Vec::new(), Vec::new());
    let (mut i, mut word_start) = (0, 0);
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
            }
            words.push(&text[word_start..start]);
            numbers.push(&text[start..i]);
            word_start = i;
        } else {
            i += 1;
        }
    }
    words.push(&text[word_start..]);
    (words, numbers)
}

impl MapAxis {
    /// An axis of `param` over `values` (at least one, each already checked
    /// by the parameter).
    pub fn new(param: &'static Param, values: Vec<String>) -> MapAxis {
        let numeric =
            |parse: &dyn Fn(&str) -> Option<f64>| values.iter().all(|v| parse(v).is_some());
        let scale = match param.kind {
            Kind::Duration if numeric(&|v| parse_duration(v).ok().map(|us| us.ticks() as f64)) => {
                Scale::Duration
            }
            Kind::Count | Kind::Number if numeric(&|v| v.parse::<f64>().ok()) => Scale::Number {
                integer: param.kind == Kind::Count,
            },
            _ => template_index(&values).map_or(Scale::Ordinal, |index| Scale::Template { index }),
        };
        MapAxis {
            param,
            values,
            scale,
        }
    }

    /// True if new values can be made between two of this axis's.
    pub fn refinable(&self) -> bool {
        !self.categorical()
    }

    /// True if the values are categories (policy names, budget rules that
    /// differ in more than a number): placed in the order given, with
    /// nothing between two of them, so nothing is interpolated across them.
    pub fn categorical(&self) -> bool {
        self.scale == Scale::Ordinal
    }

    /// Where `value` sits on the axis (for an ordinal axis, its place among
    /// the coarse values).
    pub fn position(&self, value: &str) -> f64 {
        let ordinal = || {
            self.values
                .iter()
                .position(|v| v == value)
                .map_or(f64::NAN, |i| i as f64)
        };
        match self.scale {
            Scale::Duration => {
                parse_duration(value).map_or(f64::NAN, |us| us.ticks() as f64 / 1000.0)
            }
            Scale::Number { .. } => value.parse().unwrap_or(f64::NAN),
            Scale::Template { index } => pieces(value)
                .1
                .get(index)
                .and_then(|n| n.parse().ok())
                .unwrap_or(f64::NAN),
            Scale::Ordinal => ordinal(),
        }
    }

    /// What the position measures, for axis titles: `trigger (outage@2s..X s)`.
    pub fn title(&self) -> String {
        match self.scale {
            Scale::Duration => format!("{} (ms)", self.param.key),
            Scale::Template { index } => {
                let (words, numbers) = pieces(&self.values[0]);
                let mut shown = String::new();
                for (i, word) in words.iter().enumerate() {
                    shown.push_str(word);
                    if let Some(n) = numbers.get(i) {
                        shown.push_str(if i == index { "X" } else { n });
                    }
                }
                format!("{} ({shown})", self.param.key)
            }
            _ => self.param.key.to_string(),
        }
    }

    /// The value half way between `a` and `b`, if the axis has one that
    /// differs from both.
    pub fn midpoint(&self, a: &str, b: &str) -> Option<String> {
        let value = match self.scale {
            Scale::Duration => {
                let (x, y) = (parse_duration(a).ok()?, parse_duration(b).ok()?);
                format_duration(x.min(y) + x.abs_diff(y) / 2)
            }
            Scale::Number { integer: true } => {
                let (x, y): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
                (x.min(y) + x.abs_diff(y) / 2).to_string()
            }
            Scale::Number { integer: false } => {
                let (x, y): (f64, f64) = (a.parse().ok()?, b.parse().ok()?);
                trimmed((x + y) / 2.0, 9)
            }
            Scale::Template { .. } => {
                let ((words_a, numbers_a), (words_b, numbers_b)) = (pieces(a), pieces(b));
                if words_a != words_b || numbers_a.len() != numbers_b.len() {
                    return None;
                }
                let mut value = String::new();
                for (i, word) in words_a.iter().enumerate() {
                    value.push_str(word);
                    if let (Some(x), Some(y)) = (numbers_a.get(i), numbers_b.get(i)) {
                        if x == y {
                            value.push_str(x);
                        } else {
                            let (x, y): (f64, f64) = (x.parse().ok()?, y.parse().ok()?);
                            value.push_str(&trimmed((x + y) / 2.0, 9));
                        }
                    }
                }
                value
            }
            Scale::Ordinal => return None,
        };
        (value != a && value != b).then_some(value)
    }
}

/// The index among the values' numbers of the first that varies, if every
/// value has the same text around its numbers.
fn template_index(values: &[String]) -> Option<usize> {
    let split: Vec<_> = values.iter().map(|v| pieces(v)).collect();
    let (words, numbers) = split.first()?;
    if split
        .iter()
        .any(|(w, n)| w != words || n.len() != numbers.len())
    {
        return None;
    }
    (0..numbers.len()).find(|&i| split.iter().any(|(_, n)| n[i] != numbers[i]))
}

/// What a map keeps of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOutcome {
    /// The run ended stuck.
    pub stuck: bool,
    /// The run's load ended too soon after its trigger to tell.
    pub unresolved: bool,
    /// Its recovery time, ms, if it recovered from a trigger.
    pub recovery_ms: Option<f64>,
    /// Attempts per request.
    pub amplification: f64,
}

impl RunOutcome {
    /// What a map keeps of `metrics`.
    pub fn of(metrics: &ServerMetrics) -> RunOutcome {
        RunOutcome {
            stuck: metrics.stuck(),
            unresolved: metrics.verdict == Some(crate::measure::verdict::Verdict::Unresolved),
            recovery_ms: ServerMetric::RecoveryMs.value(metrics),
            amplification: metrics.amplification(),
        }
    }
}

/// Which side of one half a cell's storm probability is on, by its Wilson
/// interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The interval is below one half: the service recovers, mostly.
    Below,
    /// The interval straddles one half.
    Uncertain,
    /// The interval is above one half: it stays down, mostly.
    Above,
    /// No run was decided: every one ended before its patience window did,
    /// so there is no storm probability (more seeds would not decide it).
    Undecided,
}

impl Side {
    /// The side `storm`'s interval is on.
    pub fn of(storm: &Storm) -> Side {
        if storm.runs == 0 {
            Side::Undecided
        } else if storm.high < 0.5 {
            Side::Below
        } else if storm.low > 0.5 {
            Side::Above
        } else {
            Side::Uncertain
        }
    }

    /// The name in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Side::Below => "below",
            Side::Uncertain => "uncertain",
            Side::Above => "above",
            Side::Undecided => "undecided",
        }
    }
}

/// One cell of a map: an x value in row `y`, and its runs so far.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The x value, as the parameter reads it.
    pub x: String,
    /// The row: an index into the y axis's values.
    pub y: usize,
    /// Where `x` sits on the x axis.
    pub x_at: f64,
    /// The round that made it (0: the coarse grid).
    pub round: u32,
    /// Its runs, in replicate order.
    pub runs: Vec<RunOutcome>,
}

impl Cell {
    /// Its storm counts.
    pub fn counts(&self) -> CellCounts {
        CellCounts {
            x: self.x.clone(),
            y: self.y,
            x_at: self.x_at,
            stuck: self.storm().stuck,
            runs: self.storm().runs,
            unresolved: self.storm().unresolved,
            split: None,
            row_budget_spent: false,
        }
    }

    /// Its storm probability and interval, over its decided runs.
    pub fn storm(&self) -> Storm {
        let stuck = self.runs.iter().filter(|r| r.stuck).count() as u64;
        let unresolved = self.runs.iter().filter(|r| r.unresolved).count() as u64;
        Storm::of_counts(stuck, self.runs.len() as u64 - unresolved, unresolved)
    }

    /// Which side of one half it is on.
    pub fn side(&self) -> Side {
        Side::of(&self.storm())
    }

    /// The median recovery time of the runs that recovered, ms.
    pub fn recovery_median_ms(&self) -> Option<f64> {
        let mut times: Vec<f64> = self.runs.iter().filter_map(|r| r.recovery_ms).collect();
        if times.is_empty() {
            return None;
        }
        times.sort_by(f64::total_cmp);
        let n = times.len();
        Some(if n % 2 == 1 {
            times[n / 2]
        } else {
            (times[n / 2 - 1] + times[n / 2]) / 2.0
        })
    }

    /// Runs that recovered from the trigger.
    pub fn recovered(&self) -> usize {
        self.runs.iter().filter(|r| r.recovery_ms.is_some()).count()
    }

    /// The mean attempts per request.
    pub fn amplification_mean(&self) -> f64 {
        self.runs.iter().map(|r| r.amplification).sum::<f64>() / self.runs.len().max(1) as f64
    }
}

/// A cell as its storm counts: all a picture or a boundary needs (a map
/// read back from its CSV has these, not its runs).
#[derive(Debug, Clone, PartialEq)]
pub struct CellCounts {
    /// The x value (as the CSV shows it, for a map read back).
    pub x: String,
    /// The row.
    pub y: usize,
    /// Where it sits on the x axis.
    pub x_at: f64,
    /// Runs that ended stuck.
    pub stuck: u64,
    /// Runs decided (stuck or recovered).
    pub runs: u64,
    /// Runs unresolved (not in `runs`).
    pub unresolved: u64,
    /// Its splitting estimate, if it was split.
    pub split: Option<SplitFigures>,
    /// Whether the run budget stopped the refinement of its row (kept in
    /// the map file, so a map read back says what the one made said).
    pub row_budget_spent: bool,
}

impl CellCounts {
    /// Its storm probability and Wilson interval.
    pub fn storm(&self) -> Storm {
        Storm::of_counts(self.stuck, self.runs, self.unresolved)
    }

    /// Which side of one half it is on.
    pub fn side(&self) -> Side {
        Side::of(&self.storm())
    }
}

/// Each of `rows` rows' cells in x order, as indices into the cells whose
/// places (row, x) are `places`.
pub fn rows_of(places: impl Iterator<Item = (usize, f64)>, rows: usize) -> Vec<Vec<usize>> {
    let mut by_row: Vec<Vec<(usize, f64)>> = vec![Vec::new(); rows];
    for (i, (y, x_at)) in places.enumerate() {
        by_row[y].push((i, x_at));
    }
    by_row
        .into_iter()
        .map(|mut row| {
            row.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(Ordering::Equal));
            row.into_iter().map(|(i, _)| i).collect()
        })
        .collect()
}

/// The places (row, x) of `cells`, for [`rows_of`].
pub fn places(cells: &[CellCounts]) -> impl Iterator<Item = (usize, f64)> + '_ {
    cells.iter().map(|c| (c.y, c.x_at))
}

/// Where each row's boundary lies (rows without cells, such as another
/// shard's, left out). The crossing is the first place along x where the
/// storm probability passes one half; a cell with no decided run has no
/// probability, so it is stated only where no undecided cell could hide
/// an earlier one (see [`crossing_of`]).
pub fn boundaries_of(cells: &[CellCounts], rows: usize) -> Vec<RowBoundary> {
    rows_of(places(cells), rows)
        .into_iter()
        .enumerate()
        .filter(|(_, row)| !row.is_empty())
        .map(|(y, row)| {
            let cells: Vec<&CellCounts> = row.iter().map(|&i| &cells[i]).collect();
            let p: Vec<Option<f64>> = cells
                .iter()
                .map(|c| (c.runs > 0).then(|| c.storm().probability()))
                .collect();
            let places: Vec<f64> = cells.iter().map(|c| c.x_at).collect();
            let crossing = crossing_of(&places, &p);
            let (below, above) = match crossing {
                Crossing::At(at) => (
                    cells
                        .iter()
                        .filter(|c| c.x_at <= at && c.side() == Side::Below)
                        .map(|c| c.x_at)
                        .reduce(f64::max),
                    cells
                        .iter()
                        .filter(|c| c.x_at >= at && c.side() == Side::Above)
                        .map(|c| c.x_at)
                        .reduce(f64::min),
                ),
                _ => (None, None),
            };
            RowBoundary {
                y,
                crossing,
                below,
                above,
                runs: cells.iter().map(|c| c.runs as usize).sum(),
                unresolved: cells.iter().map(|c| c.unresolved as usize).sum(),
            }
        })
        .collect()
}

/// Where a row's storm probability first passes one half, its cells at
/// `places` (in x order) with probabilities `p` (`None`: no run decided).
/// Each pair of neighbours either could be that passage (the first below
/// one half or undecided, the second at or above it or undecided) or not;
/// the first pair that could is it, and it is known only if both its cells
/// are decided. Where no pair could, the row is above one half from its
/// first cell on, or below it throughout, if its first cell is decided.
pub fn crossing_of(places: &[f64], p: &[Option<f64>]) -> Crossing {
    let could =
        |a: Option<f64>, b: Option<f64>| a.is_none_or(|a| a < 0.5) && b.is_none_or(|b| b >= 0.5);
    let first = (0..p.len().saturating_sub(1)).find(|&i| could(p[i], p[i + 1]));
    match first {
        Some(i) => match (p[i], p[i + 1]) {
            (Some(a), Some(b)) => {
                let (x0, x1) = (places[i], places[i + 1]);
                Crossing::At(x0 + (0.5 - a) / (b - a) * (x1 - x0))
            }
            _ => Crossing::Unknown,
        },
        None => match p.first().copied().flatten() {
            Some(first) if first >= 0.5 => Crossing::AtOrBefore,
            Some(_) => Crossing::Beyond,
            None => Crossing::Unknown,
        },
    }
}

/// What a map covers and how far it refines.
#[derive(Debug, Clone)]
pub struct MapSettings {
    /// Every parameter but the two axes.
    pub base: RunSpec,
    /// The axis refined (columns).
    pub x: MapAxis,
    /// The rows.
    pub y: MapAxis,
    /// Runs of a new cell.
    pub seeds: u32,
    /// The most runs one cell gets.
    pub max_seeds: u32,
    /// Refinement rounds after the coarse grid.
    pub rounds: u32,
    /// The most runs in each row (rows are refined on their own, so a
    /// shard of rows makes the same cells as the whole map).
    pub max_runs: u64,
    /// The rows this map makes (a shard's, or all).
    pub rows: std::ops::Range<usize>,
    /// The master seed.
    pub master_seed: u64,
    /// Splitting of the cells whose storm is rare (`None`: no splitting).
    pub split: Option<MapSplit>,
}

impl MapSettings {
    /// The run spec of the cell at (`x`, row `y`).
    pub fn spec(&self, x: &str, y: usize) -> Result<RunSpec, String> {
        let mut spec = self.base.clone();
        (self.x.param.set)(&mut spec, x).map_err(|e| e.to_string())?;
        (self.y.param.set)(&mut spec, &self.y.values[y]).map_err(|e| e.to_string())?;
        spec.validate().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    /// The patience window the verdicts of the cell at (`x`, row `y`) are
    /// judged over, µs (`None` if its values do not make a run).
    pub fn patience_us(&self, x: &str, y: usize) -> Option<Micros> {
        self.spec(x, y).ok().map(|spec| spec.patience_us())
    }

    /// The least and most patience windows over `cells` (`None` if none
    /// makes a run): one window where `--patience` was given, or where the
    /// default comes out the same for every cell.
    pub fn patience_span<'a>(
        &self,
        cells: impl IntoIterator<Item = &'a CellCounts>,
    ) -> Option<(Micros, Micros)> {
        cells
            .into_iter()
            .filter_map(|c| self.patience_us(&c.x, c.y))
            .fold(None, |span, p| match span {
                None => Some((p, p)),
                Some((least, most)) => Some((least.min(p), most.max(p))),
            })
    }

    /// Whether the patience window was given (`--patience`, the
    /// scenario's key or an axis) rather than each cell's default.
    pub fn patience_given(&self) -> bool {
        self.base.server.patience_us.is_some()
            || [&self.x, &self.y]
                .iter()
                .any(|axis| axis.param.key == "patience")
    }

    /// The seeds of replicate `replicate` of the cell at (`x`, row `y`):
    /// the environment's is the replicate's, as in a sweep, so every cell
    /// meets the same arrivals and triggers; the policy's comes from the
    /// cell's values, which refinement does not change.
    pub fn seeds(&self, x: &str, y: usize, replicate: u32) -> Seeds {
        Seeds::for_job(self.master_seed, self.cell_key(x, y), u64::from(replicate))
    }

    /// The seed key of the cell at (`x`, row `y`): its values.
    pub fn cell_key(&self, x: &str, y: usize) -> u64 {
        Fingerprint::default()
            .field(x)
            .field(&self.y.values[y])
            .value()
    }

    /// Ties a map's files to what made them: every setting and value.
    pub fn fingerprint(&self) -> String {
        let mut print = Fingerprint::default().field("map");
        for field in parameter_fields(&self.base) {
            print = print.field(&field);
        }
        for axis in [&self.x, &self.y] {
            print = print.field(axis.param.key);
            for value in &axis.values {
                print = print.field(value);
            }
        }
        for n in [
            u64::from(self.seeds),
            u64::from(self.max_seeds),
            u64::from(self.rounds),
            self.max_runs,
            self.master_seed,
        ] {
            print = print.field(&n.to_string());
        }
        // A map without splitting keeps the fingerprint it always had.
        for field in self.split.iter().flat_map(MapSplit::fields) {
            print = print.field(&field);
        }
        print.hex()
    }
}

/// One run to make: replicate `replicate` of cell `cell`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The cell's index in [`Map::cells`].
    pub cell: usize,
    /// The replicate.
    pub replicate: u32,
}

/// A map being made: its cells so far.
#[derive(Debug, Clone)]
pub struct Map {
    /// Its settings.
    pub settings: MapSettings,
    /// Every cell, in the order made.
    pub cells: Vec<Cell>,
    /// The rounds planned so far (the coarse grid is round 0).
    pub rounds_done: u32,
    /// Per row: true once the run budget cut its plan short (it is then
    /// refined no further).
    pub spent: Vec<bool>,
    /// The splitting figures of the cells split, by index into
    /// [`Map::cells`] (made after the refinement).
    pub splits: BTreeMap<usize, SplitFigures>,
}

/// Where one row's storm probability passes one half, as far as its
/// decided runs tell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Crossing {
    /// Here, interpolated between the two decided cells it passes between.
    At(f64),
    /// At or before the row's first cell: it is at one half or more, and
    /// nothing after it passes back up.
    AtOrBefore,
    /// Beyond the row's last cell: every cell is decided and below one half.
    Beyond,
    /// Not known: it could lie at a cell with no decided run (or the row
    /// has none).
    Unknown,
}

impl Crossing {
    /// The place, if it is one.
    pub fn at(self) -> Option<f64> {
        match self {
            Crossing::At(x) => Some(x),
            _ => None,
        }
    }
}

/// Where one row's boundary lies.
#[derive(Debug, Clone, PartialEq)]
pub struct RowBoundary {
    /// The row.
    pub y: usize,
    /// Where the storm probability crosses one half.
    pub crossing: Crossing,
    /// The nearest cells either side that are surely below and surely
    /// above one half: the boundary lies between (none unless the
    /// crossing is known).
    pub below: Option<f64>,
    /// See `below`.
    pub above: Option<f64>,
    /// Decided runs in the row.
    pub runs: usize,
    /// Unresolved runs in the row (not in `runs`).
    pub unresolved: usize,
}

impl Map {
    /// The coarse grid's cells, none run yet.
    pub fn new(settings: MapSettings) -> Map {
        let cells = settings
            .rows
            .clone()
            .flat_map(|y| settings.x.values.iter().map(move |x| (x.clone(), y)))
            .map(|(x, y)| Cell {
                x_at: settings.x.position(&x),
                x,
                y,
                round: 0,
                runs: Vec::new(),
            })
            .collect();
        let rows = settings.y.values.len();
        Map {
            settings,
            cells,
            rounds_done: 0,
            spent: vec![false; rows],
            splits: BTreeMap::new(),
        }
    }

    /// True if the run budget stopped the refinement of some row.
    pub fn budget_spent(&self) -> bool {
        self.spent.iter().any(|&s| s)
    }

    /// Every cell's storm counts and splitting figures, in the order made.
    pub fn counts(&self) -> Vec<CellCounts> {
        let with_split = |(i, cell): (usize, &Cell)| CellCounts {
            split: self.splits.get(&i).copied(),
            row_budget_spent: self.spent[cell.y],
            ..cell.counts()
        };
        self.cells.iter().enumerate().map(with_split).collect()
    }

    /// Runs made so far.
    pub fn runs(&self) -> u64 {
        self.cells.iter().map(|c| c.runs.len() as u64).sum()
    }

    /// Each row's cells in x order, as indices into [`Map::cells`].
    pub fn rows(&self) -> Vec<Vec<usize>> {
        let places = self.cells.iter().map(|c| (c.y, c.x_at));
        rows_of(places, self.settings.y.values.len())
    }

    /// The next round's runs (new cells added, none of them run), or none
    /// when the map is done: round 0 runs the coarse grid; each later round
    /// works on the pairs of neighbours along x that are not both surely
    /// on one side, doubling the seeds of their uncertain cells (up to the
    /// ceiling) and adding the cell half way between them. A cell with no
    /// decided run gets no more seeds (its runs end before their patience
    /// window whatever their seed), and two such neighbours no cell between
    /// them. Within the run budget: the plan is cut, in its order, at the
    /// first item that would pass it.
    pub fn plan_round(&mut self) -> Vec<Job> {
        let s = &self.settings;
        let mut budgets = vec![s.max_runs; s.y.values.len()];
        for cell in &self.cells {
            budgets[cell.y] = budgets[cell.y].saturating_sub(cell.runs.len() as u64);
        }
        let mut jobs = Vec::new();
        // Takes runs `from..to` of `cell` in row `y`, if its budget allows.
        let mut take = |jobs: &mut Vec<Job>, y: usize, cell: usize, from: u32, to: u32| {
            let n = u64::from(to - from);
            if n > budgets[y] {
                return false;
            }
            budgets[y] -= n;
            jobs.extend((from..to).map(|replicate| Job { cell, replicate }));
            true
        };
        if self.rounds_done == 0 && self.cells.iter().all(|c| c.runs.is_empty()) {
            self.rounds_done = 1;
            for (i, cell) in self.cells.iter().enumerate() {
                if !self.spent[cell.y] && !take(&mut jobs, cell.y, i, 0, s.seeds) {
                    self.spent[cell.y] = true;
                }
            }
            return jobs;
        }
        if self.rounds_done > s.rounds {
            return jobs;
        }
        let round = self.rounds_done;
        self.rounds_done += 1;
        let mut doubled = vec![false; self.cells.len()];
        let mut new_cells = Vec::new();
        'rows: for row in self.rows() {
            let Some(&first) = row.first() else { continue };
            let y = self.cells[first].y;
            if self.spent[y] {
                continue;
            }
            for pair in row.windows(2) {
                let (a, b) = (&self.cells[pair[0]], &self.cells[pair[1]]);
                let (side_a, side_b) = (a.side(), b.side());
                if side_a == side_b && side_a != Side::Uncertain {
                    continue;
                }
                for (&i, side) in pair.iter().zip([side_a, side_b]) {
                    let runs = self.cells[i].runs.len() as u32;
                    if side == Side::Uncertain && !doubled[i] && runs < s.max_seeds {
                        doubled[i] = true;
                        if !take(&mut jobs, y, i, runs, (2 * runs).min(s.max_seeds)) {
                            self.spent[y] = true;
                            continue 'rows;
                        }
                    }
                }
                let Some(x) = s.x.midpoint(&a.x, &b.x) else {
                    continue;
                };
                if s.spec(&x, y).is_err() {
                    continue;
                }
                let cell = self.cells.len() + new_cells.len();
                if !take(&mut jobs, y, cell, 0, s.seeds) {
                    self.spent[y] = true;
                    continue 'rows;
                }
                new_cells.push(Cell {
                    x_at: s.x.position(&x),
                    x,
                    y,
                    round,
                    runs: Vec::new(),
                });
            }
        }
        self.cells.extend(new_cells);
        jobs
    }

    /// Adds a run's outcome to its cell (runs of a cell come in replicate
    /// order).
    pub fn record(&mut self, job: Job, outcome: RunOutcome) {
        let cell = &mut self.cells[job.cell];
        debug_assert_eq!(cell.runs.len(), job.replicate as usize);
        cell.runs.push(outcome);
    }

    /// Where each of its rows' boundary lies.
    pub fn boundaries(&self) -> Vec<RowBoundary> {
        boundaries_of(&self.counts(), self.settings.y.values.len())
    }
}

/// Why a map stopped before its end.
#[derive(Debug)]
pub enum MapStop<E> {
    /// A run reached the event limit: its cell's values and replicate.
    Limit {
        /// The x value.
        x: String,
        /// The y value.
        y: String,
        /// The replicate.
        replicate: u32,
    },
    /// The sink failed.
    Sink(E),
}

/// Makes `map` to its end: each round planned, its runs made on rayon's
/// pool (or taken from `known`, the runs of an interrupted map, by cell
/// values and replicate), every new run handed to `sink` in plan order as
/// it completes (so an interruption keeps every run before it), then
/// recorded. `on_round` hears each round's number and runs before they
/// start, `on_run_done` each run's end. Stops at a run that reaches
/// `max_events` events, or at the sink's first error.
pub fn run_map<E: Send>(
    map: &mut Map,
    max_events: u64,
    known: &(dyn Fn(&str, &str, u32) -> Option<RunOutcome> + Sync),
    mut on_round: impl FnMut(u32, usize),
    on_run_done: impl Fn() + Sync,
    mut sink: impl FnMut(&str, &str, u32, &RunOutcome) -> Result<(), E> + Send,
) -> Result<(), MapStop<E>> {
    let watch = Watch {
        max_events,
        on_progress: &|_: Micros, _: u64| {},
        window_latencies: false,
    };
    loop {
        let jobs = map.plan_round();
        if jobs.is_empty() {
            return Ok(());
        }
        on_round(map.rounds_done - 1, jobs.len());
        let settings = &map.settings;
        let cells = &map.cells;
        let mut parts = vec![None; cells.len()];
        for job in &jobs {
            if parts[job.cell].is_none() {
                let cell = &cells[job.cell];
                let spec = settings
                    .spec(&cell.x, cell.y)
                    .expect("a map's cells are checked when made");
                parts[job.cell] = Some(server_parts(&spec));
            }
        }
        let mut outcomes = Vec::with_capacity(jobs.len());
        let y_value = |cell: &Cell| settings.y.values[cell.y].as_str();
        for_each_ordered(
            0..jobs.len(),
            |i| {
                let job = jobs[i];
                let cell = &cells[job.cell];
                let outcome = match known(&cell.x, y_value(cell), job.replicate) {
                    Some(outcome) => Ok((outcome, false)),
                    None => {
                        let (server, retry) = parts[job.cell].as_ref().expect("parts made");
                        let seeds = settings.seeds(&cell.x, cell.y, job.replicate);
                        let metrics = simulate_server_watched(
                            server,
                            retry,
                            seeds,
                            &watch,
                            QueueKind::default(),
                        );
                        if metrics.complete || (!metrics.hit_event_limit && metrics.cut.is_none()) {
                            Ok((RunOutcome::of(&metrics), true))
                        } else {
                            Err(())
                        }
                    }
                };
                on_run_done();
                outcome
            },
            |i, outcome| {
                let job = jobs[i];
                let cell = &cells[job.cell];
                match outcome {
                    Ok((outcome, fresh)) => {
                        if fresh {
                            sink(&cell.x, y_value(cell), job.replicate, &outcome)
                                .map_err(MapStop::Sink)?;
                        }
                        outcomes.push(outcome);
                        Ok(())
                    }
                    Err(()) => Err(MapStop::Limit {
                        x: cell.x.clone(),
                        y: y_value(cell).to_string(),
                        replicate: job.replicate,
                    }),
                }
            },
        )?;
        for (job, outcome) in jobs.into_iter().zip(outcomes) {
            map.record(job, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::params::param;

    fn axis(key: &str, values: &[&str]) -> MapAxis {
        MapAxis::new(
            param(key).expect("a parameter"),
            values.iter().map(|v| v.to_string()).collect(),
        )
    }

    #[test]
    fn axes_place_and_halve_their_values() {
        let trigger = axis("trigger", &["outage@2s..2.1s", "outage@2s..2.3s"]);
        assert!(trigger.refinable());
        assert_eq!(trigger.position("outage@2s..2.3s"), 2.3);
        assert_eq!(
            trigger
                .midpoint("outage@2s..2.1s", "outage@2s..2.3s")
                .as_deref(),
            Some("outage@2s..2.2s")
        );
        assert_eq!(trigger.title(), "trigger (outage@2s..Xs)");
        // Text around the numbers must agree.
        assert_eq!(trigger.midpoint("outage@2s..2.1s", "slow:2@2s..2.3s"), None);

        let timeout = axis("timeout", &["100ms", "1s"]);
        assert_eq!(timeout.position("1s"), 1000.0);
        assert_eq!(timeout.midpoint("100ms", "1s").as_deref(), Some("550ms"));

        let rate = axis("rate", &["500", "600"]);
        assert_eq!(rate.midpoint("500", "525").as_deref(), Some("512.5"));

        let attempts = axis("max_attempts", &["1", "4"]);
        assert_eq!(attempts.midpoint("1", "4").as_deref(), Some("2"));
        // No whole number between neighbours.
        assert_eq!(attempts.midpoint("2", "3"), None);

        let policy = axis("policy", &["no-backoff", "full"]);
        assert!(!policy.refinable());
        assert_eq!(policy.position("full"), 1.0);
        assert_eq!(policy.midpoint("no-backoff", "full"), None);
    }

    fn settings(seeds: u32, max_seeds: u32, rounds: u32, max_runs: u64) -> MapSettings {
        MapSettings {
            base: RunSpec::default(),
            x: axis("rate", &["100", "200", "300", "400"]),
            y: axis("timeout", &["100ms", "200ms"]),
            seeds,
            max_seeds,
            rounds,
            max_runs,
            rows: 0..2,
            master_seed: 42,
            split: None,
        }
    }

    /// A synthetic service: stuck when the rate passes a threshold that
    /// depends on the row, with a band of coin flips around it.
    fn outcome(map: &Map, job: Job) -> RunOutcome {
        let cell = &map.cells[job.cell];
        let threshold = 250.0 + 50.0 * cell.y as f64;
        let stuck = if (cell.x_at - threshold).abs() < 10.0 {
            job.replicate.is_multiple_of(2)
        } else {
            cell.x_at > threshold
        };
        RunOutcome {
            stuck,
            unresolved: false,
            recovery_ms: (!stuck).then_some(100.0 + f64::from(job.replicate)),
            amplification: 1.0,
        }
    }

    fn run(map: &mut Map) -> Vec<Vec<Job>> {
        let mut rounds = Vec::new();
        loop {
            let jobs = map.plan_round();
            if jobs.is_empty() {
                return rounds;
            }
            for &job in &jobs {
                let o = outcome(map, job);
                map.record(job, o);
            }
            rounds.push(jobs);
        }
    }

    #[test]
    fn refinement_halves_the_gap_the_boundary_is_in_each_round() {
        let mut map = Map::new(settings(20, 80, 3, u64::MAX));
        let rounds = run(&mut map);
        // The coarse round and three refinements, then nothing left to do.
        assert_eq!(rounds.len(), 4);
        assert_eq!(rounds[0].len(), 8 * 20);
        let boundaries = map.boundaries();
        // Row 0 tips at 250 and row 1 at 300, each inside a band of coin
        // flips 20 wide: the step of 100 halved three times (12.5) puts a
        // cell in the band (uncertain, with every extra seed) and the
        // surely-below and surely-above cells one step either side.
        for (row, tip) in [(0, 250.0), (1, 300.0)] {
            let b = &boundaries[row];
            assert_eq!((b.below, b.above), (Some(tip - 12.5), Some(tip + 12.5)));
            assert_eq!(b.crossing, Crossing::At(tip), "{b:?}");
            let coin = map
                .cells
                .iter()
                .find(|c| c.y == row && c.x_at == tip)
                .unwrap();
            assert_eq!(coin.side(), Side::Uncertain);
            assert_eq!(coin.runs.len(), 80, "seeds doubled to the ceiling");
        }
        // Cells far from the boundary got the coarse seeds only.
        let far = map.cells.iter().find(|c| c.y == 0 && c.x == "100").unwrap();
        assert_eq!(far.runs.len(), 20);
        assert_eq!(far.recovery_median_ms(), Some(109.5));
    }

    #[test]
    fn the_run_budget_cuts_a_rows_round_in_its_order() {
        let mut whole = Map::new(settings(20, 80, 3, u64::MAX));
        run(&mut whole);
        // Each row's coarse cells take 4 × 20 runs; 25 more are left.
        let budget = 4 * 20 + 25;
        let mut cut = Map::new(settings(20, 80, 3, budget));
        run(&mut cut);
        assert!(cut.budget_spent() && !whole.budget_spent());
        for y in 0..2 {
            let runs: u64 = cut
                .cells
                .iter()
                .filter(|c| c.y == y)
                .map(|c| c.runs.len() as u64)
                .sum();
            assert!(runs <= budget && runs > 4 * 20, "row {y}: {runs}");
        }
        // What the cut map ran is what the whole one ran first.
        for cell in &cut.cells {
            let same = whole
                .cells
                .iter()
                .find(|c| c.x == cell.x && c.y == cell.y)
                .unwrap();
            assert_eq!(cell.runs[..], same.runs[..cell.runs.len()]);
        }
    }

    #[test]
    fn a_shard_of_rows_makes_the_same_cells_as_the_whole_map() {
        let mut whole = Map::new(settings(20, 80, 3, 4 * 20 + 25));
        run(&mut whole);
        for rows in [0..1, 1..2] {
            let mut shard = Map::new(MapSettings {
                rows: rows.clone(),
                ..settings(20, 80, 3, 4 * 20 + 25)
            });
            run(&mut shard);
            let mine: Vec<_> = whole
                .counts()
                .into_iter()
                .filter(|c| rows.contains(&c.y))
                .collect();
            let mut theirs = shard.counts();
            theirs.sort_by(|a, b| (a.y, a.x_at).partial_cmp(&(b.y, b.x_at)).unwrap());
            let mut mine = mine;
            mine.sort_by(|a, b| (a.y, a.x_at).partial_cmp(&(b.y, b.x_at)).unwrap());
            assert_eq!(mine, theirs, "rows {rows:?}");
        }
    }

    #[test]
    fn a_crossing_is_stated_only_where_no_undecided_cell_could_hide_it() {
        let at = [0.0, 1.0, 2.0, 3.0];
        // Every cell decided: the interpolated passage, or which end.
        let decided = [Some(0.0), Some(0.25), Some(0.75), Some(1.0)];
        assert_eq!(crossing_of(&at, &decided), Crossing::At(1.5));
        let low = [Some(0.0), Some(0.1), Some(0.2), Some(0.3)];
        assert_eq!(crossing_of(&at, &low), Crossing::Beyond);
        let high = [Some(0.6), Some(0.9), Some(0.2), Some(0.4)];
        assert_eq!(crossing_of(&at, &high), Crossing::AtOrBefore);
        // Nothing decided: nothing known.
        assert_eq!(crossing_of(&at, &[None; 4]), Crossing::Unknown);
        // Undecided past the crossing: it stands.
        let tail = [Some(0.0), Some(0.25), Some(0.75), None];
        assert_eq!(crossing_of(&at, &tail), Crossing::At(1.5));
        // Between a decided cell and an undecided one: not known, nor is
        // "beyond" when the last cell is undecided.
        let edge = [Some(0.0), Some(0.25), None, Some(1.0)];
        assert_eq!(crossing_of(&at, &edge), Crossing::Unknown);
        let open = [Some(0.0), Some(0.1), Some(0.2), None];
        assert_eq!(crossing_of(&at, &open), Crossing::Unknown);
        // An undecided cell before it could hide an earlier passage.
        let hidden = [Some(0.1), None, Some(0.2), Some(0.8)];
        assert_eq!(crossing_of(&at, &hidden), Crossing::Unknown);
        // An undecided first cell cannot, when the next is below one half;
        // but then where the row starts is not known either.
        let start = [None, Some(0.1), Some(0.2), Some(0.8)];
        assert_eq!(crossing_of(&at, &start), Crossing::At(2.5));
        let start_low = [None, Some(0.1), Some(0.2), Some(0.3)];
        assert_eq!(crossing_of(&at, &start_low), Crossing::Unknown);
    }

    #[test]
    fn undecided_cells_get_no_more_seeds_and_no_cell_between_them() {
        let mut map = Map::new(settings(4, 16, 2, u64::MAX));
        loop {
            let jobs = map.plan_round();
            if jobs.is_empty() {
                break;
            }
            for job in jobs {
                map.record(
                    job,
                    RunOutcome {
                        stuck: false,
                        unresolved: true,
                        recovery_ms: None,
                        amplification: 1.0,
                    },
                );
            }
        }
        assert_eq!(map.cells.len(), 8, "no cell added");
        assert!(map.cells.iter().all(|c| c.runs.len() == 4));
        assert!(map.cells.iter().all(|c| c.side() == Side::Undecided));
        assert!(
            map.boundaries()
                .iter()
                .all(|b| b.crossing == Crossing::Unknown && b.runs == 0 && b.unresolved == 16)
        );
    }

    #[test]
    fn a_cells_seeds_follow_its_values_not_its_place() {
        let s = settings(1, 1, 0, 10);
        assert_eq!(s.seeds("200", 1, 3), s.seeds("200", 1, 3));
        assert_ne!(s.seeds("200", 1, 3).policy, s.seeds("300", 1, 3).policy);
        assert_ne!(s.seeds("200", 1, 3).policy, s.seeds("200", 0, 3).policy);
        // Every cell meets the same environment in one replicate.
        assert_eq!(
            s.seeds("200", 1, 3).environment,
            s.seeds("300", 0, 3).environment
        );
    }
}
