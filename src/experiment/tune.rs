//! `herdsim tune`: the settings of one retry control that bound the load it
//! lets a full outage inflict, and what each costs under a partial failure
//! (DESIGN Part three, "Questions as commands").
//!
//! Every setting (the control's rule with its searched fields set) is
//! measured by three sets of replicate runs of the service:
//!
//! - **outage**: attempts per request at the server while every attempt
//!   fails, over a load that the failure outlasts (assess's amplification);
//! - **partial**: the share of requests that succeed while a share of
//!   attempts fails, likewise through the whole load;
//! - **stall**: whether the service recovers from a given stall (its
//!   storm verdict, as `herdsim run` gives it).
//!
//! A setting is *within* the bound when its mean amplification is at or
//! under it and it *survives* the stall when none of its decided runs ends
//! stuck. The search is a grid over the fields' values, the settings laid
//! out as a map's cells are (the first field along x, one row per value of
//! the second), then refined as a map is: each round puts a setting half
//! way along the first field between neighbours of a row where being
//! within the bound and surviving the stall changes, so the edge of what is
//! allowed is found to the coarse step over 2^R.
//!
//! Determinism: a setting's runs are seeded from the master seed, its rule
//! and the measure (not its place in the grid, which refinement changes)
//! and the replicate, the environment's seed from the replicate alone, so
//! every setting meets the same arrivals and failures, the same inputs give
//! the same settings and runs at any thread count, and an interrupted
//! search continues to the same end. Rows are refined on their own, so a
//! shard of rows makes the same settings as the whole search.

use crate::base::fingerprint::Fingerprint;
use crate::base::format::trimmed;
use crate::base::seeding::Seeds;
use crate::base::time::{Micros, format_duration, parse_duration};
use crate::control::rule::Rule;
use crate::control::{ControlSpec, Family, Knob};
use crate::experiment::assess::{FAILURE_LOAD_US, seconds};
use crate::experiment::server_runs::server_parts;
use crate::experiment::sweep::for_each_ordered;
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{ServerMetrics, Storm};
use crate::measure::stats::Summary;
use crate::sim::queue::QueueKind;
use crate::sim::server_loop::simulate_server_watched;
use crate::spec::RunSpec;
use crate::spec::params::{param, parameter_fields};

/// The amplification bound unless `--bound` says otherwise: a full outage
/// may add a fifth to the attempts the server sees.
pub const DEFAULT_BOUND: f64 = 1.2;
/// The stall each setting must survive unless `--stall` names another: a
/// 2 s full outage from t = 2 s.
pub const DEFAULT_STALL: &str = "outage@2s..4s";
/// Refinement rounds unless `--refine` says otherwise.
pub const DEFAULT_ROUNDS: u32 = 2;
/// The most fields one search varies: a grid of two is a table a reader
/// holds in mind; more is a sweep.
pub const MAX_VARIED: usize = 2;

/// The three run sets that measure a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Attempts per request in a full outage.
    Outage,
    /// Success while a share of attempts fails.
    Partial,
    /// Recovery from the stall.
    Stall,
}

impl Measure {
    /// Every measure, in the order a setting's runs are made.
    pub const ALL: [Measure; 3] = [Measure::Outage, Measure::Partial, Measure::Stall];

    /// Its name in the journal and the seeds.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Outage => "outage",
            Measure::Partial => "partial",
            Measure::Stall => "stall",
        }
    }

    /// The measure named `name`.
    pub fn named(name: &str) -> Option<Measure> {
        Measure::ALL.into_iter().find(|m| m.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One searched field of the rule and its coarse values.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Its name in the rule.
    pub name: String,
    /// What it is, in the source's words.
    pub what: String,
    /// Its coarse values, ascending, as the rule takes them.
    pub values: Vec<String>,
}

impl Field {
    /// The field of a control's declared knob.
    pub fn of_knob(knob: &Knob) -> Field {
        Field {
            name: knob.field.to_string(),
            what: knob.what.to_string(),
            values: knob.values.iter().map(|v| v.to_string()).collect(),
        }
    }

    /// True if it has more than one value.
    pub fn varies(&self) -> bool {
        self.values.len() > 1
    }
}

/// A value's place on its field's axis: the number, or a duration in ms.
pub fn position(value: &str) -> Option<f64> {
    value
        .parse::<f64>()
        .ok()
        .or_else(|| {
            parse_duration(value)
                .ok()
                .map(|us| us.ticks() as f64 / 1_000.0)
        })
        .filter(|v| v.is_finite())
}

/// A value between `a` and `b` (geometric where both are above zero, as
/// the coarse values are spaced; else arithmetic), to two significant
/// figures: a whole number where both are whole, a duration where they are
/// durations. `None` where none is strictly between at that precision.
pub fn midpoint(a: &str, b: &str) -> Option<String> {
    let (x, y) = (position(a)?, position(b)?);
    let mid = if x > 0.0 && y > 0.0 {
        (x * y).sqrt()
    } else {
        (x + y) / 2.0
    };
    let round = |v: f64| {
        if v == 0.0 {
            return 0.0;
        }
        let scale = 10f64.powi(1 - v.abs().log10().floor() as i32);
        (v * scale).round() / scale
    };
    let whole = |t: &str| t.parse::<u64>().is_ok();
    let duration = a.parse::<f64>().is_err();
    let (value, text) = if duration {
        let us = Micros::from_ticks((round(mid) * 1_000.0).round() as u64);
        (us.ticks() as f64 / 1_000.0, format_duration(us))
    } else if whole(a) && whole(b) {
        let n = round(mid).round();
        (n, trimmed(n, 0))
    } else {
        let v = round(mid);
        (v, trimmed(v, 12))
    };
    let (low, high) = (x.min(y), x.max(y));
    (low < value && value < high).then_some(text)
}

/// What to search and how precisely.
#[derive(Debug, Clone)]
pub struct TuneSettings {
    /// The service and its clients, with no trigger.
    pub base: RunSpec,
    /// The key the control is given by.
    pub family: Family,
    /// The rule the search varies, as given (its fields not searched keep
    /// their values).
    pub start: String,
    /// The fields searched: one or two varying (the first along x, the
    /// second's values the rows), and any fixed at one value.
    pub fields: Vec<Field>,
    /// The amplification bound: attempts per request in a full outage.
    pub bound: f64,
    /// The share of attempts failing in the partial failure.
    pub partial: f64,
    /// The stall each setting must survive: a trigger.
    pub stall: String,
    /// Replicate runs of each measure of each setting.
    pub seeds: u32,
    /// Refinement rounds after the coarse grid.
    pub rounds: u32,
    /// The rows this search makes (a shard's, or all).
    pub rows: std::ops::Range<usize>,
    /// The master seed.
    pub master_seed: u64,
}

/// The rule `start` with `values` given to `fields`, as its control writes
/// it (so two spellings of one setting are one setting), or why not.
pub fn rule_with(
    family: Family,
    start: &str,
    fields: &[Field],
    values: &[&str],
) -> Result<String, String> {
    let mut rule = Rule::read(family.key(), start).map_err(|e| e.to_string())?;
    for (field, value) in fields.iter().zip(values) {
        if field.name == rule.name {
            rule.first = value.to_string();
        } else if let Some(slot) = rule.fields.iter_mut().find(|(k, _)| *k == field.name) {
            slot.1 = value.to_string();
        } else {
            rule.fields.push((field.name.clone(), value.to_string()));
        }
    }
    let mut text = format!("{}:{}", rule.name, rule.first);
    for (k, v) in &rule.fields {
        text.push_str(&format!(",{k}:{v}"));
    }
    match ControlSpec::parse(family, &text) {
        Ok(Some(spec)) => Ok(spec.to_string()),
        Ok(None) => Err(format!("'{text}' is no control")),
        Err(e) => Err(e.to_string()),
    }
}

impl TuneSettings {
    /// The field along x: the first that varies (or the first).
    pub fn x(&self) -> &Field {
        self.fields
            .iter()
            .find(|f| f.varies())
            .unwrap_or(&self.fields[0])
    }

    /// The index of [`Self::x`] among the fields.
    pub fn x_index(&self) -> usize {
        self.fields.iter().position(|f| f.varies()).unwrap_or(0)
    }

    /// The field whose values are the rows: the second that varies.
    pub fn y(&self) -> Option<&Field> {
        self.fields.iter().filter(|f| f.varies()).nth(1)
    }

    /// Rows: the second varying field's values, or one.
    pub fn row_count(&self) -> usize {
        self.y().map_or(1, |y| y.values.len())
    }

    /// The fields' values of the setting at `x` in row `row`, in field
    /// order.
    pub fn values_at(&self, x: &str, row: usize) -> Vec<String> {
        let (x_name, y) = (self.x().name.clone(), self.y().cloned());
        self.fields
            .iter()
            .map(|f| {
                if f.name == x_name {
                    x.to_string()
                } else if let Some(y) = y.as_ref().filter(|y| y.name == f.name) {
                    y.values[row].clone()
                } else {
                    f.values[0].clone()
                }
            })
            .collect()
    }

    /// The canonical rule of `values`, or why not (naming the field).
    pub fn rule(&self, values: &[String]) -> Result<String, String> {
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        rule_with(self.family, &self.start, &self.fields, &values)
    }

    /// The run spec of `rule`'s `measure`.
    pub fn spec(&self, rule: &str, measure: Measure) -> Result<RunSpec, String> {
        let mut spec = self.base.clone();
        let set = |spec: &mut RunSpec, key: &str, value: &str| {
            let p = param(key).expect("tune sets registry keys");
            (p.set)(spec, value).map_err(|e| e.to_string())
        };
        set(&mut spec, self.family.key(), rule)?;
        let whole = format!("{}..1h", seconds(Micros::ZERO));
        match measure {
            Measure::Outage | Measure::Partial => {
                let trigger = if measure == Measure::Outage {
                    format!("outage@{whole}")
                } else {
                    format!("fail:{}@{whole}", trimmed(self.partial, 6))
                };
                set(&mut spec, "trigger", &trigger)?;
                set(&mut spec, "duration", &seconds(FAILURE_LOAD_US))?;
                set(&mut spec, "patience", &seconds(FAILURE_LOAD_US))?;
            }
            Measure::Stall => set(&mut spec, "trigger", &self.stall)?,
        }
        spec.validate().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    /// The seeds of replicate `replicate` of `rule`'s `measure`.
    pub fn seeds(&self, rule: &str, measure: Measure, replicate: u32) -> Seeds {
        let point = Fingerprint::default()
            .field(rule)
            .field(measure.name())
            .value();
        Seeds::for_job(self.master_seed, point, u64::from(replicate))
    }

    /// Checks every coarse setting reads and runs on this service: the
    /// first error, naming the setting.
    pub fn check(&self) -> Result<(), String> {
        for row in 0..self.row_count() {
            for x in &self.x().values {
                let values = self.values_at(x, row);
                let rule = self.rule(&values)?;
                for measure in Measure::ALL {
                    self.spec(&rule, measure)
                        .map_err(|e| format!("the setting {rule}: {e}"))?;
                }
            }
        }
        Ok(())
    }

    /// Ties a search's files to what made it: every setting but the shard.
    pub fn fingerprint(&self) -> String {
        let mut print = Fingerprint::default().field("tune");
        for field in parameter_fields(&self.base) {
            print = print.field(&field);
        }
        print = print.field(self.family.key()).field(&self.start);
        for f in &self.fields {
            print = print.field(&f.name);
            for v in &f.values {
                print = print.field(v);
            }
        }
        for text in [
            self.bound.to_string(),
            self.partial.to_string(),
            self.stall.clone(),
            self.seeds.to_string(),
            self.rounds.to_string(),
            self.master_seed.to_string(),
        ] {
            print = print.field(&text);
        }
        print.hex()
    }
}

/// What the search keeps of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TuneRun {
    /// Attempts per request.
    pub amplification: f64,
    /// Successes per request.
    pub success: f64,
    /// The run ended stuck.
    pub stuck: bool,
    /// The run's load ended too soon after its trigger to tell.
    pub unresolved: bool,
}

impl TuneRun {
    /// What the search keeps of `metrics`.
    pub fn of(metrics: &ServerMetrics) -> TuneRun {
        TuneRun {
            amplification: metrics.amplification(),
            success: metrics.success_rate(),
            stuck: metrics.stuck(),
            unresolved: metrics.verdict == Some(crate::measure::verdict::Verdict::Unresolved),
        }
    }
}

/// One setting and its runs so far.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The fields' values, in field order.
    pub values: Vec<String>,
    /// The rule, as its control writes it.
    pub rule: String,
    /// Its row.
    pub row: usize,
    /// Where it sits along x.
    pub x_at: f64,
    /// The round that made it (0: the coarse grid).
    pub round: u32,
    /// Its runs, per measure, in replicate order.
    pub runs: [Vec<TuneRun>; 3],
}

/// A setting as its figures: all the front, the knee and the files need
/// (a search read back from its CSV has these, not its runs).
#[derive(Debug, Clone, PartialEq)]
pub struct SettingFigures {
    /// The fields' values, in field order.
    pub values: Vec<String>,
    /// The rule.
    pub rule: String,
    /// Its row.
    pub row: usize,
    /// Where it sits along x.
    pub x_at: f64,
    /// The round that made it.
    pub round: u32,
    /// Runs of each measure.
    pub seeds: u32,
    /// Mean attempts per request in the full outage and its 95% half-width.
    pub amplification: (f64, f64),
    /// Mean success under the partial failure and its 95% half-width.
    pub success: (f64, f64),
    /// The stall's storm counts.
    pub storm: Storm,
}

impl SettingFigures {
    /// Mean amplification at or under `bound`.
    pub fn within(&self, bound: f64) -> bool {
        self.amplification.0 <= bound
    }

    /// No decided run of the stall ended stuck (and one was decided).
    pub fn survives(&self) -> bool {
        self.storm.stuck == 0 && self.storm.runs > 0
    }

    /// Within `bound` and surviving the stall.
    pub fn allowed(&self, bound: f64) -> bool {
        self.within(bound) && self.survives()
    }

    /// Some run of the stall was decided (a setting whose every stall run
    /// ended before its patience window did is neither surviving nor
    /// stormed: not known).
    pub fn decided(&self) -> bool {
        self.storm.runs > 0
    }

    /// Whether it is allowed, if that is known: a setting beyond the bound
    /// is not, whatever its stall; one within it is known only if its
    /// stall was decided.
    pub fn allowed_known(&self, bound: f64) -> Option<bool> {
        if !self.within(bound) {
            Some(false)
        } else if self.decided() {
            Some(self.survives())
        } else {
            None
        }
    }
}

impl Setting {
    /// Its figures (its runs all made).
    pub fn figures(&self) -> SettingFigures {
        let mean_ci = |values: Vec<f64>| {
            let s = Summary::of(&values);
            (s.mean, s.ci95.unwrap_or(0.0))
        };
        let [outage, partial, stall] = &self.runs;
        let stuck = stall.iter().filter(|r| r.stuck).count() as u64;
        let unresolved = stall.iter().filter(|r| r.unresolved).count() as u64;
        SettingFigures {
            values: self.values.clone(),
            rule: self.rule.clone(),
            row: self.row,
            x_at: self.x_at,
            round: self.round,
            seeds: outage.len() as u32,
            amplification: mean_ci(outage.iter().map(|r| r.amplification).collect()),
            success: mean_ci(partial.iter().map(|r| r.success).collect()),
            storm: Storm::of_counts(stuck, stall.len() as u64 - unresolved, unresolved),
        }
    }
}

/// One run to make: replicate `replicate` of `measure` of setting
/// `setting`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The setting's index in [`Tune::settings`].
    pub setting: usize,
    /// The measure.
    pub measure: Measure,
    /// The replicate.
    pub replicate: u32,
}

/// A search being made: its settings so far.
#[derive(Debug, Clone)]
pub struct Tune {
    /// What it searches.
    pub settings: TuneSettings,
    /// Every setting, in the order made.
    pub made: Vec<Setting>,
    /// Rounds planned so far (the coarse grid is round 0).
    pub rounds_done: u32,
}

impl Tune {
    /// A search of `settings` (checked), nothing made yet.
    pub fn new(settings: TuneSettings) -> Tune {
        Tune {
            settings,
            made: Vec::new(),
            rounds_done: 0,
        }
    }

    /// Every setting's figures, in the order made.
    pub fn figures(&self) -> Vec<SettingFigures> {
        self.made.iter().map(Setting::figures).collect()
    }

    /// Runs made.
    pub fn runs(&self) -> u64 {
        self.made
            .iter()
            .map(|s| s.runs.iter().map(Vec::len).sum::<usize>() as u64)
            .sum()
    }

    fn add(&mut self, x: &str, row: usize, round: u32) -> Option<usize> {
        let values = self.settings.values_at(x, row);
        let rule = self.settings.rule(&values).ok()?;
        if self.made.iter().any(|s| s.rule == rule) {
            return None;
        }
        self.made.push(Setting {
            x_at: position(x).unwrap_or(f64::NAN),
            values,
            rule,
            row,
            round,
            runs: [Vec::new(), Vec::new(), Vec::new()],
        });
        Some(self.made.len() - 1)
    }

    /// The next round's runs: the coarse grid first, then a setting half
    /// way along x between each pair of neighbours in a row of which one
    /// is allowed and the other not (both known: a setting within the bound
    /// whose stall runs were all unresolved is neither). Empty when the
    /// search is done.
    pub fn plan_round(&mut self) -> Vec<Job> {
        let round = self.rounds_done;
        if round > self.settings.rounds {
            return Vec::new();
        }
        let mut new = Vec::new();
        if round == 0 {
            let xs = self.settings.x().values.clone();
            for row in self.settings.rows.clone() {
                for x in &xs {
                    new.extend(self.add(x, row, 0));
                }
            }
        } else {
            let bound = self.settings.bound;
            let x_index = self.settings.x_index();
            for row in self.settings.rows.clone() {
                let in_row: Vec<(f64, &str, Option<bool>)> = self
                    .made
                    .iter()
                    .filter(|s| s.row == row)
                    .map(|s| {
                        let known = s.figures().allowed_known(bound);
                        (s.x_at, s.values[x_index].as_str(), known)
                    })
                    .collect();
                for x in row_midpoints(in_row) {
                    new.extend(self.add(&x, row, round));
                }
            }
        }
        self.rounds_done += 1;
        if new.is_empty() && round > 0 {
            return Vec::new();
        }
        let seeds = self.settings.seeds;
        new.into_iter()
            .flat_map(|setting| {
                Measure::ALL.into_iter().flat_map(move |measure| {
                    (0..seeds).map(move |replicate| Job {
                        setting,
                        measure,
                        replicate,
                    })
                })
            })
            .collect()
    }

    /// Keeps one run's outcome.
    pub fn record(&mut self, job: Job, run: TuneRun) {
        self.made[job.setting].runs[job.measure.index()].push(run);
    }
}

/// The x values a refinement round puts in one row of settings given as
/// (place along x, x value, whether allowed if known), in the order made:
/// half way between neighbours along x of which one is allowed and the
/// other not. Where being allowed is not known, its edge is not either.
fn row_midpoints(mut in_row: Vec<(f64, &str, Option<bool>)>) -> Vec<String> {
    in_row.sort_by(|a, b| a.0.total_cmp(&b.0));
    in_row
        .windows(2)
        .filter(|w| matches!((w[0].2, w[1].2), (Some(a), Some(b)) if a != b))
        .filter_map(|w| midpoint(w[0].1, w[1].1))
        .collect()
}

/// The settings the search of `settings` makes that `figures` (read back
/// from its files) lack, as their rules with their row and round: the
/// coarse grid, then each refinement round replayed from the figures of
/// the settings before it, as [`Tune::plan_round`] plans it. A round is
/// replayed only once every setting before it is there (what it adds
/// follows from their figures). Empty when the files hold the whole
/// search.
pub fn missing_settings(settings: &TuneSettings, figures: &[SettingFigures]) -> Vec<String> {
    let bound = settings.bound;
    let x_index = settings.x_index();
    let found = |rule: &str| figures.iter().find(|f| f.rule == rule);
    // (row, x_at, x value, rule), in the order made.
    let mut made: Vec<(usize, f64, String, String)> = Vec::new();
    let mut missing = Vec::new();
    for round in 0..=settings.rounds {
        let mut wanted: Vec<(usize, String)> = Vec::new();
        if round == 0 {
            for row in settings.rows.clone() {
                for x in &settings.x().values {
                    wanted.push((row, x.clone()));
                }
            }
        } else {
            for row in settings.rows.clone() {
                let in_row: Vec<(f64, &str, Option<bool>)> = made
                    .iter()
                    .filter(|m| m.0 == row)
                    .map(|m| {
                        let known = found(&m.3).and_then(|f| f.allowed_known(bound));
                        (m.1, m.2.as_str(), known)
                    })
                    .collect();
                wanted.extend(row_midpoints(in_row).into_iter().map(|x| (row, x)));
            }
        }
        let before = made.len();
        for (row, x) in wanted {
            let values = settings.values_at(&x, row);
            let Ok(rule) = settings.rule(&values) else {
                continue;
            };
            if made.iter().any(|m| m.3 == rule) {
                continue;
            }
            if found(&rule).is_none() {
                missing.push(format!(
                    "{rule} (row {row}, {})",
                    if round == 0 {
                        "the grid".to_string()
                    } else {
                        format!("refinement {round}")
                    }
                ));
            }
            made.push((row, position(&values[x_index]).unwrap_or(f64::NAN), x, rule));
        }
        if !missing.is_empty() || (round > 0 && made.len() == before) {
            break;
        }
    }
    missing
}

/// Why a search stopped before its end.
#[derive(Debug)]
pub enum TuneStop<E> {
    /// A run reached the event limit or a memory bound.
    Limit {
        /// The setting's rule.
        rule: String,
        /// The measure.
        measure: Measure,
        /// The replicate.
        replicate: u32,
    },
    /// The sink failed.
    Sink(E),
}

/// Makes `tune` to its end: each round planned, its runs made on rayon's
/// pool (or taken from `known`, the runs of an interrupted search, by rule,
/// measure and replicate), every new run handed to `sink` in plan order as
/// it completes (so an interruption keeps every run before it), then
/// recorded. `on_round` hears each round's number and runs before they
/// start, `on_run_done` each run's end.
pub fn run_tune<E: Send>(
    tune: &mut Tune,
    max_events: u64,
    known: &(dyn Fn(&str, Measure, u32) -> Option<TuneRun> + Sync),
    mut on_round: impl FnMut(u32, usize),
    on_run_done: impl Fn() + Sync,
    mut sink: impl FnMut(&str, Measure, u32, &TuneRun) -> Result<(), E> + Send,
) -> Result<(), TuneStop<E>> {
    let watch = Watch {
        max_events,
        on_progress: &|_: Micros, _: u64| {},
        window_latencies: false,
    };
    loop {
        let jobs = tune.plan_round();
        if jobs.is_empty() {
            return Ok(());
        }
        on_round(tune.rounds_done - 1, jobs.len());
        let settings = &tune.settings;
        let made = &tune.made;
        let mut parts = std::collections::HashMap::new();
        for job in &jobs {
            parts.entry((job.setting, job.measure)).or_insert_with(|| {
                let spec = settings
                    .spec(&made[job.setting].rule, job.measure)
                    .expect("a search's settings are checked when made");
                server_parts(&spec)
            });
        }
        let mut outcomes = Vec::with_capacity(jobs.len());
        for_each_ordered(
            0..jobs.len(),
            |i| {
                let job = jobs[i];
                let rule = &made[job.setting].rule;
                let outcome = match known(rule, job.measure, job.replicate) {
                    Some(run) => Ok((run, false)),
                    None => {
                        let (server, retry) = &parts[&(job.setting, job.measure)];
                        let seeds = settings.seeds(rule, job.measure, job.replicate);
                        let metrics = simulate_server_watched(
                            server,
                            retry,
                            seeds,
                            &watch,
                            QueueKind::default(),
                        );
                        if metrics.hit_event_limit || metrics.cut.is_some() {
                            Err(())
                        } else {
                            Ok((TuneRun::of(&metrics), true))
                        }
                    }
                };
                on_run_done();
                outcome
            },
            |i, outcome| {
                let job = jobs[i];
                let rule = &made[job.setting].rule;
                match outcome {
                    Ok((run, fresh)) => {
                        if fresh {
                            sink(rule, job.measure, job.replicate, &run).map_err(TuneStop::Sink)?;
                        }
                        outcomes.push(run);
                        Ok(())
                    }
                    Err(()) => Err(TuneStop::Limit {
                        rule: rule.clone(),
                        measure: job.measure,
                        replicate: job.replicate,
                    }),
                }
            },
        )?;
        for (job, run) in jobs.into_iter().zip(outcomes) {
            tune.record(job, run);
        }
    }
}

/// The Pareto front of a search and what it recommends.
#[derive(Debug, Clone, PartialEq)]
pub struct Front {
    /// The settings that survive the stall and that no other surviving
    /// setting beats on both amplification (lower) and success (higher),
    /// by amplification: indices into the figures given.
    pub points: Vec<usize>,
    /// Of the front's settings within the bound, the one with the most
    /// success (the least amplification among equals).
    pub best: Option<usize>,
    /// Where the whole front bends: the point farthest above the chord
    /// between its ends, both axes scaled to the ends' span, where more
    /// amplification stops buying success (`None` for a front of one or
    /// two points, which does not bend).
    pub bend: Option<usize>,
    /// The recommendation: the bend where it is within the bound, else
    /// (the bound binds first) the best within it.
    pub knee: Option<usize>,
}

/// The point of `curve` (front indices, by amplification) farthest above
/// the chord between its ends, on axes scaled to their span.
fn bend_of(figures: &[SettingFigures], curve: &[usize]) -> Option<usize> {
    let (&first, &last) = (curve.first()?, curve.last()?);
    let span = |v: f64, lo: f64, hi: f64| (v - lo) / (hi - lo).max(f64::MIN_POSITIVE);
    let (a0, a1) = (
        figures[first].amplification.0,
        figures[last].amplification.0,
    );
    let (s0, s1) = (figures[first].success.0, figures[last].success.0);
    let lift =
        |i: usize| span(figures[i].success.0, s0, s1) - span(figures[i].amplification.0, a0, a1);
    let mut bend = None;
    let mut most = 0.0;
    for &i in curve {
        if lift(i) > most {
            most = lift(i);
            bend = Some(i);
        }
    }
    bend
}

/// The front of `figures` under `bound`.
pub fn front(figures: &[SettingFigures], bound: f64) -> Front {
    let mut order: Vec<usize> = (0..figures.len())
        .filter(|&i| figures[i].survives())
        .collect();
    // By amplification, then most success first, then rule: a fixed order.
    order.sort_by(|&a, &b| {
        let (fa, fb) = (&figures[a], &figures[b]);
        fa.amplification
            .0
            .total_cmp(&fb.amplification.0)
            .then(fb.success.0.total_cmp(&fa.success.0))
            .then(fa.rule.cmp(&fb.rule))
    });
    let mut points = Vec::new();
    let mut best_success = f64::NEG_INFINITY;
    for i in order {
        if figures[i].success.0 > best_success {
            best_success = figures[i].success.0;
            points.push(i);
        }
    }
    let best = points.iter().copied().rfind(|&i| figures[i].within(bound));
    let bend = bend_of(figures, &points);
    let knee = match bend {
        Some(i) if figures[i].within(bound) => Some(i),
        _ => best,
    };
    Front {
        points,
        best,
        bend,
        knee,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    fn figures(rule: &str, amp: f64, success: f64, stuck: u64) -> SettingFigures {
        SettingFigures {
            values: vec![],
            rule: rule.to_string(),
            row: 0,
            x_at: 0.0,
            round: 0,
            seeds: 16,
            amplification: (amp, 0.0),
            success: (success, 0.0),
            storm: Storm::of_counts(stuck, 16, 0),
        }
    }

    #[test]
    fn midpoints_are_geometric_to_two_figures_and_keep_their_kind() {
        assert_eq!(midpoint("10", "100").as_deref(), Some("32"));
        assert_eq!(midpoint("0.01", "0.1").as_deref(), Some("0.032"));
        assert_eq!(midpoint("0", "4").as_deref(), Some("2"));
        assert_eq!(midpoint("100ms", "400ms").as_deref(), Some("200ms"));
        // Nothing whole lies strictly between 2 and 3.
        assert_eq!(midpoint("2", "3"), None);
        assert_eq!(midpoint("1", "2").as_deref(), None);
    }

    #[test]
    fn a_rule_with_its_fields_set_is_its_controls_own_spelling() {
        let fields = vec![
            Field {
                name: "grpc".into(),
                what: String::new(),
                values: vec![],
            },
            Field {
                name: "ratio".into(),
                what: String::new(),
                values: vec![],
            },
        ];
        let rule = rule_with(
            Family::Budget,
            "grpc:10,ratio:0.1",
            &fields,
            &["20", "0.50"],
        );
        assert_eq!(rule.unwrap(), "grpc:20,ratio:0.5");
        let bad = rule_with(Family::Budget, "grpc:10,ratio:0.1", &fields, &["20", "-1"]);
        assert!(bad.unwrap_err().contains("ratio"));
    }

    #[test]
    fn the_front_drops_the_dominated_and_the_stormed_and_finds_the_knee() {
        let all = vec![
            figures("a", 1.0, 0.50, 0),
            figures("b", 1.05, 0.90, 0),
            figures("c", 1.1, 0.92, 0),
            figures("d", 1.15, 0.91, 0), // dominated by c
            figures("e", 1.18, 0.95, 0),
            figures("f", 1.12, 0.99, 3), // stormed: off the front
            figures("g", 1.5, 0.999, 0), // beyond the bound
        ];
        let front = front(&all, 1.2);
        assert_eq!(front.points, vec![0, 1, 2, 4, 6]);
        assert_eq!(front.best, Some(4));
        // b buys 0.4 of 0.45 success for 0.05 of 0.18 amplification.
        assert_eq!(front.knee, Some(1));
        assert_eq!(front.bend, Some(1));
        // Under a bound below the bend, the bound binds: its best is
        // recommended.
        let tight = super::front(&all, 1.02);
        assert_eq!(
            (tight.bend, tight.knee, tight.best),
            (Some(1), Some(0), Some(0))
        );
    }

    #[test]
    fn a_grid_of_two_fields_lays_rows_along_the_second() {
        let base = RunSpec {
            resource: ResourceKind::Server,
            ..RunSpec::default()
        };
        let settings = TuneSettings {
            base,
            family: Family::Budget,
            start: "grpc:10,ratio:0.1".to_string(),
            fields: vec![
                Field {
                    name: "grpc".into(),
                    what: "maxTokens".into(),
                    values: vec!["5".into(), "10".into()],
                },
                Field {
                    name: "ratio".into(),
                    what: "tokenRatio".into(),
                    values: vec!["0.1".into(), "0.5".into(), "1".into()],
                },
            ],
            bound: 1.2,
            partial: 0.1,
            stall: DEFAULT_STALL.to_string(),
            seeds: 2,
            rounds: 1,
            rows: 0..3,
            master_seed: 42,
        };
        assert_eq!(settings.row_count(), 3);
        assert_eq!(settings.values_at("5", 2), vec!["5", "1"]);
        let mut tune = Tune::new(settings.clone());
        let jobs = tune.plan_round();
        assert_eq!(tune.made.len(), 6);
        assert_eq!(jobs.len(), 6 * 3 * 2);
        assert_eq!(tune.made[5].rule, "grpc:10,ratio:1");
        // Seeds follow the rule and measure, not the place.
        let a = settings.seeds("grpc:10,ratio:1", Measure::Stall, 1);
        assert_eq!(a, settings.seeds("grpc:10,ratio:1", Measure::Stall, 1));
        assert_ne!(a, settings.seeds("grpc:10,ratio:1", Measure::Outage, 1));
        assert_eq!(
            a.environment,
            settings
                .seeds("grpc:5,ratio:1", Measure::Outage, 1)
                .environment
        );
    }
}
