//! `herdsim assess`: the questions an SRE brings about one service at its
//! offered load, each answered by maps and runs that a `herdsim map` or
//! `herdsim run` command reproduces (DESIGN Part three, "Questions as
//! commands").
//!
//! - **Margin**: for each stall kind, the longest stall the service
//!   survives before its storm probability passes one half: a one-row map
//!   along the stall's length ([`crate::experiment::map`]), refined where
//!   the probability crosses one half, so the answer is the crossing and
//!   the surely-below and surely-above lengths either side, not a grid step.
//! - **Headroom**: for each blip length, the highest offered load at which
//!   the blip is survived: a map along the offered rate, one row per blip.
//! - **Amplification**: attempts per request when every attempt fails, in
//!   a full outage that outlasts the load, and its exact value where the
//!   retry rules alone fix it.
//! - **Partial failure**: success while a share of attempts fails, through
//!   the whole load, with its exact value where one exists; and whether
//!   the service recovers after such a failure.
//! - **Recovery**: the recovery times of the runs that recovered from a
//!   blip: median and 90th percentile.
//! - **Rare storms** (with splitting): each blip's chance that the backlog
//!   reaches the storm region before calm, by adaptive multilevel splitting
//!   with `herdsim run --splitting`'s seeds, so its command gives the same
//!   figure: the backlog's question, not the verdict's stuck.
//!
//! Each stall starts at [`STALL_START_US`] (the verdict's baseline is the
//! windows before it); its patience window and the load's length are the
//! defaults each run's own trigger gives (`herdsim metrics` states the
//! rule), so no verdict depends on a length assess chose.

use crate::base::format::trimmed;
use crate::base::time::Micros;
use crate::experiment::backlog::{SplitEstimate, Splitting, path_rules, split_estimate};
use crate::experiment::map::{Map, MapAxis, MapSettings, RowBoundary, boundaries_of, run_map};
use crate::experiment::server_runs::{run_server_replicates, server_parts};
use crate::measure::observer::Watch;
use crate::measure::server_metrics::ServerMetrics;
use crate::model::backlog::ChosenRegions;
use crate::sim::queue::QueueKind;
use crate::spec::RunSpec;
use crate::spec::params::{Param, param};
use crate::spec::undecided::Undecided;

/// The stall kinds assessed unless `--stall` names others: a full outage
/// (every attempt fails at once), the service stopping (no worker serves:
/// a database stall), and the service at half speed.
pub const DEFAULT_KINDS: [&str; 3] = ["outage", "capacity:0", "slow:2"];
/// The blip the headroom and the recovery times are read after, µs: a
/// typical half-second hiccup (a failover, a GC pause, a deploy).
pub const DEFAULT_BLIP_US: Micros = Micros::from_ms(500);
/// The share of attempts failing in the partial failure.
pub const DEFAULT_PARTIAL: f64 = 0.1;
/// When every stall starts, µs: 20 of the verdict's 100 ms windows of
/// undisturbed service before it, its baseline.
pub const STALL_START_US: Micros = Micros::from_s(2);
/// The stall lengths of a margin map's coarse grid, ms: doublings from a
/// quarter second to 16 s, which refinement then halves where the storm
/// probability crosses one half.
pub const LENGTHS_MS: [u64; 7] = [250, 500, 1_000, 2_000, 4_000, 8_000, 16_000];
/// The offered loads ρ of a headroom map's coarse grid.
pub const LOADS: [f64; 7] = [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];
/// The load of the amplification and partial-failure runs, µs: 10 s of
/// requests, every one of them inside the failure.
pub const FAILURE_LOAD_US: Micros = Micros::from_s(10);
/// How long the partial failure the recovery is judged after lasts, µs.
pub const PARTIAL_LENGTH_US: Micros = Micros::from_s(10);
/// Seeds per cell and per run unless `--seeds` says more.
pub const DEFAULT_SEEDS: u32 = 16;
/// Refinement rounds of each map.
pub const DEFAULT_ROUNDS: u32 = 4;

/// What to assess and how precisely.
#[derive(Debug, Clone)]
pub struct AssessSettings {
    /// The service and its clients, with no trigger.
    pub base: RunSpec,
    /// The stall kinds (trigger kinds without their window: `outage`,
    /// `capacity:0`, `slow:2`).
    pub kinds: Vec<String>,
    /// The blip lengths, µs.
    pub blips: Vec<Micros>,
    /// The share of attempts failing in the partial failure.
    pub partial: f64,
    /// A retry budget to compare the first kind's margin with (`None`: no
    /// comparison).
    pub suggest: Option<String>,
    /// Seeds per cell and per run.
    pub seeds: u32,
    /// Refinement rounds of each map.
    pub rounds: u32,
    /// The master seed.
    pub master_seed: u64,
    /// Splitting after each blip (`None`: no rare-storm figures).
    pub splitting: Option<Splitting>,
}

/// A seconds figure as a trigger window reads it (`2.25s`).
pub fn seconds(us: Micros) -> String {
    format!("{}s", trimmed(us.ticks() as f64 / 1e6, 6))
}

/// The trigger of a stall of `kind` lasting `length_us` from
/// [`STALL_START_US`].
pub fn stall(kind: &str, length_us: Micros) -> String {
    format!(
        "{kind}@{}..{}",
        seconds(STALL_START_US),
        seconds(STALL_START_US + length_us)
    )
}

/// A registry parameter assess sets, by key.
fn key(name: &str) -> &'static Param {
    param(name).expect("assess names registry keys")
}

/// `spec`'s value of `p`, as the parameter shows it.
fn shown(spec: &RunSpec, p: &Param) -> String {
    (p.show)(spec).unwrap_or_default()
}

/// What a map of assess is for.
#[derive(Debug, Clone, PartialEq)]
pub enum MapPurpose {
    /// The margin of one stall kind (with the suggested budget, if
    /// `suggested`).
    Margin { kind: String, suggested: bool },
    /// The headroom of every blip.
    Headroom,
}

/// One map assess makes, and what it found.
#[derive(Debug, Clone)]
pub struct AssessMap {
    /// What it answers.
    pub purpose: MapPurpose,
    /// Its settings: what `herdsim map` reproduces.
    pub settings: MapSettings,
    /// Each row's boundary, once made.
    pub boundaries: Vec<RowBoundary>,
    /// Runs made.
    pub runs: u64,
    /// Of them, the runs decided (not unresolved).
    pub decided: u64,
    /// What left the others unresolved (`None`: every run was decided).
    pub undecided: Option<Undecided>,
    /// Per row, the cells' (place, stuck, decided runs), in x order, for
    /// the margin curve.
    pub curves: Vec<Vec<(f64, u64, u64)>>,
}

/// One set of replicate runs assess makes: what `herdsim run` reproduces.
#[derive(Debug, Clone)]
pub struct AssessRun {
    /// What it measures.
    pub what: RunPurpose,
    /// Its spec.
    pub spec: RunSpec,
    /// Its runs, in replicate order, once made.
    pub runs: Vec<ServerMetrics>,
}

/// What an [`AssessRun`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPurpose {
    /// Attempts per request in a full outage.
    Amplification,
    /// Success while a share of attempts fails.
    PartialDuring,
    /// Recovery after a partial failure.
    PartialAfter,
    /// Recovery times after the first blip.
    Recovery,
}

impl AssessSettings {
    /// The map settings shared by assess's maps: `base` with `x` and `y`.
    fn map(&self, base: RunSpec, x: MapAxis, y: MapAxis) -> MapSettings {
        let coarse = x.values.len() as u64 * u64::from(self.seeds);
        MapSettings {
            rows: 0..y.values.len(),
            base,
            x,
            y,
            seeds: self.seeds,
            max_seeds: self.seeds.saturating_mul(4),
            rounds: self.rounds,
            max_runs: coarse.saturating_mul(6),
            master_seed: self.master_seed,
            split: None,
        }
    }

    /// The margin map of stall `kind`: along the stall's length, one row
    /// (the service's workers, as it is). With `budget`, the same service
    /// under that retry budget.
    pub fn margin_map(&self, kind: &str, budget: Option<&str>) -> Result<MapSettings, String> {
        let mut base = self.base.clone();
        if let Some(budget) = budget {
            (key("budget").set)(&mut base, budget).map_err(|e| format!("--suggest: {e}"))?;
        }
        let trigger = key("trigger");
        let values = LENGTHS_MS
            .iter()
            .map(|&ms| stall(kind, Micros::from_ms(ms)))
            .collect();
        let workers = key("workers");
        let y = MapAxis::new(workers, vec![shown(&base, workers)]);
        Ok(self.map(base, MapAxis::new(trigger, values), y))
    }

    /// The offered-load parameter of the headroom map: the open loop's rate,
    /// or a closed loop's users.
    pub fn load_param(&self) -> &'static Param {
        if self.base.server.users.is_some() {
            key("users")
        } else {
            key("rate")
        }
    }

    /// The value of [`Self::load_param`] that offers load `rho`, scaled
    /// from the service's own (a closed loop's users rounded, at least 1).
    pub fn load_value(&self, rho: f64) -> String {
        let base_rho = self.base.server.peak_offered_load().unwrap_or(1.0);
        match self.base.server.users {
            Some(users) => {
                ((f64::from(users) * rho / base_rho).round().max(1.0) as u64).to_string()
            }
            None => {
                let rate = self.base.server.offered_rate_per_s() * rho / base_rho;
                trimmed(rate, 2)
            }
        }
    }

    /// The offered load ρ at a place on the headroom map's axis.
    pub fn load_at(&self, place: f64) -> f64 {
        let base_rho = self.base.server.peak_offered_load().unwrap_or(1.0);
        let base = match self.base.server.users {
            Some(users) => f64::from(users),
            None => self.base.server.offered_rate_per_s(),
        };
        place / base * base_rho
    }

    /// The headroom map: along the offered load, one row per blip of the
    /// first stall kind.
    pub fn headroom_map(&self) -> MapSettings {
        let load = self.load_param();
        let mut values: Vec<String> = LOADS.iter().map(|&rho| self.load_value(rho)).collect();
        values.dedup();
        let blips = self
            .blips
            .iter()
            .map(|&us| stall(&self.kinds[0], us))
            .collect();
        self.map(
            self.base.clone(),
            MapAxis::new(load, values),
            MapAxis::new(key("trigger"), blips),
        )
    }

    /// Every map assess makes, in the order it reports them.
    pub fn maps(&self) -> Result<Vec<AssessMap>, String> {
        let mut maps = Vec::new();
        let made = |purpose, settings| AssessMap {
            purpose,
            settings,
            boundaries: Vec::new(),
            runs: 0,
            decided: 0,
            undecided: None,
            curves: Vec::new(),
        };
        for kind in &self.kinds {
            let purpose = MapPurpose::Margin {
                kind: kind.clone(),
                suggested: false,
            };
            maps.push(made(purpose, self.margin_map(kind, None)?));
        }
        if let Some(budget) = &self.suggest {
            let purpose = MapPurpose::Margin {
                kind: self.kinds[0].clone(),
                suggested: true,
            };
            maps.push(made(
                purpose,
                self.margin_map(&self.kinds[0], Some(budget))?,
            ));
        }
        maps.push(made(MapPurpose::Headroom, self.headroom_map()));
        Ok(maps)
    }

    /// `base` with `trigger` and, where given, the load's length and
    /// patience.
    fn with(&self, trigger: &str, load_patience: Option<Micros>) -> Result<RunSpec, String> {
        let mut spec = self.base.clone();
        (key("trigger").set)(&mut spec, trigger).map_err(|e| e.to_string())?;
        if let Some(us) = load_patience {
            let d = seconds(us);
            (key("duration").set)(&mut spec, &d).map_err(|e| e.to_string())?;
            (key("patience").set)(&mut spec, &d).map_err(|e| e.to_string())?;
        }
        spec.validate().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    /// Every set of runs assess makes, in the order it reports them. The
    /// failures of the amplification and the success under partial failure
    /// outlast the load by an hour, so every request meets them; their
    /// verdicts are not read.
    pub fn runs(&self) -> Result<Vec<AssessRun>, String> {
        let whole = format!("{}..1h", seconds(Micros::ZERO));
        let share = trimmed(self.partial, 6);
        let plan = [
            (
                RunPurpose::Amplification,
                format!("outage@{whole}"),
                Some(FAILURE_LOAD_US),
            ),
            (
                RunPurpose::PartialDuring,
                format!("fail:{share}@{whole}"),
                Some(FAILURE_LOAD_US),
            ),
            (
                RunPurpose::PartialAfter,
                stall(&format!("fail:{share}"), PARTIAL_LENGTH_US),
                None,
            ),
            (
                RunPurpose::Recovery,
                stall(&self.kinds[0], self.blips[0]),
                None,
            ),
        ];
        plan.into_iter()
            .map(|(what, trigger, load)| {
                Ok(AssessRun {
                    what,
                    spec: self.with(&trigger, load)?,
                    runs: Vec::new(),
                })
            })
            .collect()
    }
}

impl AssessSettings {
    /// The rare-storm estimates assess makes, one per blip of the first
    /// stall kind, none made yet (none without splitting).
    pub fn rare_storms(&self) -> Result<Vec<RareStorm>, String> {
        let Some(how) = &self.splitting else {
            return Ok(Vec::new());
        };
        self.blips
            .iter()
            .map(|&blip_us| {
                let spec = self.with(&stall(&self.kinds[0], blip_us), None)?;
                let chosen = how.regions(&spec).ok_or_else(|| {
                    "--high: give the storm region's backlog (the service has neither a \
                     timeout on bounded workers nor a queue_limit to derive it from)"
                        .to_string()
                })?;
                Ok(RareStorm {
                    blip_us,
                    chosen,
                    spec,
                    estimate: None,
                })
            })
            .collect()
    }
}

impl AssessMap {
    /// Keeps what `map`, made to its end, found.
    pub fn record(&mut self, map: &Map) {
        let counts = map.counts();
        self.boundaries = boundaries_of(&counts, map.settings.y.values.len());
        self.runs = map.runs();
        self.decided = counts.iter().map(|c| c.runs).sum();
        let specs: Vec<RunSpec> = counts
            .iter()
            .filter(|c| c.unresolved > 0)
            .filter_map(|c| map.settings.spec(&c.x, c.y).ok())
            .collect();
        self.undecided = Undecided::of_all(&specs);
        self.curves = map
            .rows()
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|i| {
                        let storm = counts[i].storm();
                        (counts[i].x_at, storm.stuck, storm.runs)
                    })
                    .collect()
            })
            .collect();
    }
}

/// What assess found: its maps and runs, made.
#[derive(Debug, Clone)]
pub struct Assessment {
    /// What was assessed.
    pub settings: AssessSettings,
    /// The maps, in [`AssessSettings::maps`] order.
    pub maps: Vec<AssessMap>,
    /// The runs, in [`AssessSettings::runs`] order.
    pub runs: Vec<AssessRun>,
    /// The rare-storm estimates, in [`AssessSettings::rare_storms`] order.
    pub rare: Vec<RareStorm>,
}

/// How likely a blip is to tip the service into a storm: splitting's
/// estimate of the backlog reaching the storm region before calm after it,
/// as `herdsim run --splitting` makes it (the same seeds, so the same
/// figure).
#[derive(Debug, Clone)]
pub struct RareStorm {
    /// The blip's length, µs.
    pub blip_us: Micros,
    /// The run's spec: the service with the blip.
    pub spec: RunSpec,
    /// The regions split towards, and how each was chosen.
    pub chosen: ChosenRegions,
    /// The estimate, once made.
    pub estimate: Option<SplitEstimate>,
}

/// Why an assessment stopped: a run reached the event limit, in the map
/// or runs named.
#[derive(Debug, Clone, PartialEq)]
pub struct AssessStop {
    /// What the run was for, in words.
    pub stage: String,
}

/// Makes every map and run of `settings` on rayon's pool, in order;
/// `on_stage` hears each stage's name and its first round's runs,
/// `on_run_done` each run's end. Stops at a run that reaches `max_events`.
pub fn assess(
    settings: &AssessSettings,
    max_events: u64,
    mut on_stage: impl FnMut(&str, usize),
    on_run_done: impl Fn() + Sync,
) -> Result<Assessment, AssessStop> {
    let mut maps = settings.maps().map_err(|stage| AssessStop { stage })?;
    let mut runs = settings.runs().map_err(|stage| AssessStop { stage })?;
    for made in &mut maps {
        let stage = made.purpose.title();
        let mut map = Map::new(made.settings.clone());
        let none = |_: &str, _: &str, _: u32| None;
        let ran = run_map(
            &mut map,
            max_events,
            &none,
            |round, jobs| on_stage(&format!("{stage}, round {round}"), jobs),
            &on_run_done,
            |_, _, _, _| Ok::<(), std::convert::Infallible>(()),
        );
        if ran.is_err() {
            return Err(AssessStop { stage });
        }
        made.record(&map);
    }
    let watch = Watch {
        max_events,
        on_progress: &|_: Micros, _: u64| {},
        window_latencies: false,
    };
    for run in &mut runs {
        on_stage(run.what.title(), settings.seeds as usize);
        run.runs = run_server_replicates(
            &run.spec,
            settings.master_seed,
            0,
            settings.seeds,
            &watch,
            QueueKind::default(),
            &on_run_done,
        );
        // A horizon may cut the requests still in flight when a failure
        // outlasts the load; only the guards (the event limit, a memory
        // bound) stop an assessment.
        if run
            .runs
            .iter()
            .any(|m| m.hit_event_limit || m.cut.is_some())
        {
            return Err(AssessStop {
                stage: run.what.title().to_string(),
            });
        }
    }
    let mut rare = settings
        .rare_storms()
        .map_err(|stage| AssessStop { stage })?;
    if let Some(how) = &settings.splitting {
        for storm in &mut rare {
            on_stage(RARE_STAGE, how.batches as usize);
            let (server, retry) = server_parts(&storm.spec);
            let rules = path_rules(&server, storm.chosen.regions, true, max_events);
            storm.estimate = Some(split_estimate(
                (&server, &retry),
                rules,
                (settings.master_seed, 0),
                how.particles,
                how.batches,
                &on_run_done,
            ));
        }
    }
    Ok(Assessment {
        settings: settings.clone(),
        maps,
        runs,
        rare,
    })
}

impl MapPurpose {
    /// In words, for progress and tables.
    pub fn title(&self) -> String {
        match self {
            MapPurpose::Margin {
                kind,
                suggested: false,
            } => format!("margin of {kind}"),
            MapPurpose::Margin { kind, .. } => format!("margin of {kind} with the budget"),
            MapPurpose::Headroom => "headroom".to_string(),
        }
    }
}

impl RunPurpose {
    /// In words, for progress and tables.
    pub fn title(self) -> &'static str {
        match self {
            RunPurpose::Amplification => "amplification in a full outage",
            RunPurpose::PartialDuring => "success under partial failure",
            RunPurpose::PartialAfter => "recovery after partial failure",
            RunPurpose::Recovery => "recovery after the blip",
        }
    }
}

/// A parameter's values as its flag takes them (a list joined by its
/// separator).
fn flag_value(p: &Param, values: &[String]) -> String {
    values.join(&p.list_separator.to_string())
}

/// The flags that make `herdsim map` make this map, after the service's
/// own flags: the axes, their values, the seeds and the refinement.
pub fn map_flags(s: &MapSettings, base_budget: Option<&str>) -> Vec<String> {
    let mut flags = vec![
        "--x".to_string(),
        s.x.param.key.to_string(),
        "--y".to_string(),
        s.y.param.key.to_string(),
        format!("--{}", s.x.param.flag()),
        flag_value(s.x.param, &s.x.values),
        format!("--{}", s.y.param.flag()),
        flag_value(s.y.param, &s.y.values),
    ];
    if let Some(budget) = base_budget {
        flags.extend(["--budget".to_string(), budget.to_string()]);
    }
    flags.extend([
        "--seeds".to_string(),
        s.seeds.to_string(),
        "--max-seeds".to_string(),
        s.max_seeds.to_string(),
        "--refine".to_string(),
        s.rounds.to_string(),
        "--max-runs".to_string(),
        s.max_runs.to_string(),
        "--seed".to_string(),
        s.master_seed.to_string(),
    ]);
    flags
}

/// The flags that make `herdsim run` make these runs, after the
/// service's own flags.
pub fn run_flags(run: &AssessRun, settings: &AssessSettings) -> Vec<String> {
    let mut flags = Vec::new();
    for name in ["trigger", "duration", "patience"] {
        let p = key(name);
        if name == "trigger" || (p.show)(&run.spec) != (p.show)(&settings.base) {
            flags.extend([format!("--{}", p.flag()), shown(&run.spec, p)]);
        }
    }
    flags.extend([
        "--seeds".to_string(),
        settings.seeds.to_string(),
        "--seed".to_string(),
        settings.master_seed.to_string(),
    ]);
    flags
}

/// The stage of the rare-storm estimates, for progress.
pub const RARE_STAGE: &str = "rare storm after the blip, by splitting";

/// The flags that make `herdsim run` make a rare-storm estimate, after the
/// service's own flags: the blip, the regions and the splitting.
pub fn rare_flags(storm: &RareStorm, settings: &AssessSettings) -> Vec<String> {
    let how = settings
        .splitting
        .as_ref()
        .expect("rare storms come from splitting");
    vec![
        "--trigger".to_string(),
        shown(&storm.spec, key("trigger")),
        "--high".to_string(),
        storm.chosen.regions.high.to_string(),
        "--low".to_string(),
        storm.chosen.regions.low.to_string(),
        "--splitting".to_string(),
        how.particles.to_string(),
        "--batches".to_string(),
        how.batches.to_string(),
        "--seeds".to_string(),
        settings.seeds.to_string(),
        "--seed".to_string(),
        settings.master_seed.to_string(),
    ]
}

/// The flags that make `herdsim run` run `spec` without its scenario file,
/// but for the keys in `except`: every parameter whose shown value
/// differs from the default's, as its flag takes it (each shown value
/// reads back through its parser, so the run is the same).
pub fn spec_flags(spec: &RunSpec, except: &[&str]) -> Vec<String> {
    let default = RunSpec::default();
    let mut flags = Vec::new();
    for p in crate::spec::params::PARAMS.iter() {
        if except.contains(&p.key) {
            continue;
        }
        if let Some(value) = (p.show)(spec)
            && (p.show)(&default).as_deref() != Some(value.as_str())
        {
            flags.extend([format!("--{}", p.flag()), value]);
        }
    }
    flags
}

/// A stall's length at a place on a margin map's axis (its end, s), µs.
pub fn length_at(place: f64) -> f64 {
    place * 1e6 - STALL_START_US.ticks() as f64
}

/// The exact attempts per request and success share of a request whose
/// every attempt fails with probability `p`, independently, when nothing
/// but `max_attempts` limits its retries: `(1 − pⁿ)/(1 − p)` and `1 − pⁿ`
/// (`None` where something else decides: a control, a deadline, hedging,
/// retries not of failures, a chain, or no attempt limit).
pub fn exact_under_failure(spec: &RunSpec, p: f64) -> Option<(f64, f64)> {
    let n = spec.max_attempts?;
    let plain = spec.budget.is_none()
        && spec.breaker.is_none()
        && spec.throttle.is_none()
        && spec.deadline_us.is_none()
        && spec.hedge_delay_us.is_none()
        && spec.server.chain.depth == 1
        && spec.retry_on.retries(crate::control::Outcome::Failure);
    if !plain {
        return None;
    }
    let n = i32::try_from(n).ok()?;
    let attempts = if p >= 1.0 {
        f64::from(n)
    } else {
        (1.0 - p.powi(n)) / (1.0 - p)
    };
    Some((attempts, 1.0 - p.powi(n)))
}

/// The value at quantile `q` of `values` (nearest rank), if any.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    (n > 0).then(|| sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    fn service(flags: &[(&str, &str)]) -> AssessSettings {
        let mut base = RunSpec {
            resource: ResourceKind::Server,
            ..RunSpec::default()
        };
        for (k, v) in flags {
            (key(k).set)(&mut base, v).unwrap();
        }
        AssessSettings {
            base,
            kinds: DEFAULT_KINDS.iter().map(|k| k.to_string()).collect(),
            blips: vec![DEFAULT_BLIP_US],
            partial: DEFAULT_PARTIAL,
            suggest: None,
            seeds: DEFAULT_SEEDS,
            rounds: DEFAULT_ROUNDS,
            master_seed: 42,
            splitting: None,
        }
    }

    #[test]
    fn stalls_start_at_two_seconds_and_last_their_length() {
        assert_eq!(stall("outage", Micros::from_ms(250)), "outage@2s..2.25s");
        assert_eq!(
            stall("capacity:0", Micros::from_s(16)),
            "capacity:0@2s..18s"
        );
        assert!((length_at(2.25) - 250_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_margin_map_is_one_row_along_the_stall_length() {
        let s = service(&[("rate", "600"), ("workers", "16"), ("service", "20ms")]);
        let map = s.margin_map("slow:2", None).unwrap();
        assert_eq!(map.x.param.key, "trigger");
        assert_eq!(map.x.values.len(), LENGTHS_MS.len());
        assert_eq!(map.x.values[0], "slow:2@2s..2.25s");
        assert_eq!(map.y.values, vec!["16".to_string()]);
        assert!(map.base.budget.is_none());
        let budgeted = s
            .margin_map("outage", Some("finagle:0.2,ttl:10s,min:10"))
            .unwrap();
        assert!(budgeted.base.budget.is_some());
        assert!(s.margin_map("outage", Some("nonsense")).is_err());
    }

    #[test]
    fn the_headroom_map_scales_the_rate_to_each_load() {
        // 600/s on 16 workers of 20 ms: ρ = 0.75; ρ = 0.3 is 240/s.
        let s = service(&[("rate", "600"), ("workers", "16"), ("service", "20ms")]);
        let map = s.headroom_map();
        assert_eq!(map.x.param.key, "rate");
        assert_eq!(map.x.values[0], "240");
        assert_eq!(map.x.values[6], "760");
        assert!((s.load_at(760.0) - 0.95).abs() < 1e-12);
        assert_eq!(map.y.values, vec!["outage@2s..2.5s".to_string()]);
    }

    #[test]
    fn exact_failure_figures_are_the_geometric_series_of_the_attempts() {
        let s = service(&[("max_attempts", "5")]);
        let (attempts, success) = exact_under_failure(&s.base, 0.1).unwrap();
        assert!((attempts - 1.1111).abs() < 1e-12);
        assert!((success - 0.99999).abs() < 1e-12);
        assert_eq!(exact_under_failure(&s.base, 1.0).unwrap().0, 5.0);
        let budgeted = service(&[("max_attempts", "5"), ("budget", "ratio:0.1,min:1")]);
        assert!(exact_under_failure(&budgeted.base, 1.0).is_none());
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&v, 0.5), Some(3.0));
        assert_eq!(quantile(&v, 0.9), Some(5.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
