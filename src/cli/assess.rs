//! `herdsim assess`: one service at its offered load, the questions an SRE
//! asks of it answered (margin, headroom, amplification, partial failure,
//! recovery), each figure with the command that reproduces it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::backlog::{RegionFlags, SplitFlags, splitting_of};
use super::compare::command_line;
use super::output::{check_distinct, check_output, shell_word, warn_extensions, write_whole};
use super::progress::runs_bar;
use super::sweep::{GridArgs, read_scenario};
use super::{CliError, write_stdout};
use crate::base::time::{Micros, parse_duration};
use crate::experiment::assess::{
    AssessSettings, DEFAULT_BLIP_US, DEFAULT_KINDS, DEFAULT_PARTIAL, DEFAULT_ROUNDS, DEFAULT_SEEDS,
    LENGTHS_MS, MapPurpose, STALL_START_US, assess, map_flags, rare_flags, run_flags, spec_flags,
    stall,
};
use crate::experiment::backlog::Splitting;
use crate::experiment::scenario::Scenario;
use crate::model::ResourceKind;
use crate::report::assessment::{assessment_html, assessment_text, undecided_warning};
use crate::report::assessment_json;
use crate::spec::params::param;
use crate::spec::{self, ParamError, RunSpec};

/// The heading of assess's own flags.
const ASSESS: &str = "Assess";

/// The budget the margin is compared with when the service has none:
/// Finagle's defaults, which Linkerd's proxy also ships.
const SUGGESTED_BUDGET: &str = "finagle:0.2,ttl:10s,min:10";

#[derive(Debug, Args)]
pub struct AssessArgs {
    /// Scenario file (TOML) of the server model: the service and its
    /// clients, one point, no trigger
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    grid: GridArgs,

    /// A stall kind to find the margin of (a trigger kind without its
    /// window); repeat for several [default: outage, capacity:0, slow:2]
    ///
    /// The first is also the stall of the headroom and the recovery times.
    #[arg(long = "stall", value_name = "KIND", value_parser = parse_kind, allow_hyphen_values = true, help_heading = ASSESS)]
    kinds: Vec<String>,

    /// The blip length the headroom and recovery times are read after;
    /// repeat for several [default: 500ms]
    #[arg(long = "blip", value_name = "DURATION", value_parser = parse_blip, allow_hyphen_values = true, help_heading = ASSESS)]
    blips: Vec<Micros>,

    /// The share of attempts failing in the partial failure (0 to 1, not 0)
    #[arg(long, value_name = "P", default_value_t = DEFAULT_PARTIAL, value_parser = parse_share, allow_hyphen_values = true, help_heading = ASSESS)]
    partial: f64,

    /// A retry budget to compare the first stall's margin with, or none
    /// [default: finagle:0.2,ttl:10s,min:10 if the service has no budget]
    #[arg(long, value_name = "BUDGET", allow_hyphen_values = true, help_heading = ASSESS)]
    suggest: Option<String>,

    #[command(flatten)]
    regions: RegionFlags,

    #[command(flatten)]
    split: SplitFlags,

    /// Refinement rounds of each map (0 to 10)
    #[arg(long, value_name = "ROUNDS", default_value_t = DEFAULT_ROUNDS, value_parser = parse_rounds, allow_hyphen_values = true, help_heading = ASSESS)]
    refine: u32,

    /// Also write the answer as one self-contained HTML page, with the
    /// margin and headroom curves and their Wilson bands
    #[arg(long, value_name = "FILE.html", allow_hyphen_values = true, help_heading = super::run::OUTPUTS)]
    report: Option<PathBuf>,

    /// Print the answer as one JSON object instead of text
    ///
    /// Every table as printed and as numbers, the failure figures, each map
    /// row's storm curve with its Wilson interval, the verdict and the
    /// commands.
    #[arg(long, help_heading = super::run::OUTPUTS)]
    json: bool,

    /// Replace the report if it exists
    #[arg(long, help_heading = super::run::OUTPUTS)]
    force: bool,

    /// Hide the progress bar and the closing summary
    #[arg(long, short, help_heading = super::run::OUTPUTS)]
    quiet: bool,
}

pub(super) fn parse_kind(text: &str) -> Result<String, String> {
    let trigger = param("trigger").expect("trigger is a key");
    if text.contains('@') || text.contains('+') {
        return Err(format!(
            "'{text}': give the kind alone (outage, capacity:0, slow:2); assess sets the window"
        ));
    }
    trigger
        .check(&stall(text, Micros::from_s(1)))
        .map_err(|e| format!("'{text}' is not a trigger kind: {e}"))?;
    Ok(text.to_string())
}

fn parse_blip(text: &str) -> Result<Micros, String> {
    let us = parse_duration(text).map_err(|e| e.to_string())?;
    let most = LENGTHS_MS[LENGTHS_MS.len() - 1] * 1_000;
    if us == Micros::ZERO || us > Micros::from_ticks(most) {
        return Err(format!(
            "'{text}': expected a duration above 0 and at most {}s",
            most / 1_000_000
        ));
    }
    Ok(us)
}

pub(super) fn parse_share(text: &str) -> Result<f64, String> {
    match crate::spec::server::parse_probability(text) {
        Ok(p) if p > 0.0 => Ok(p),
        _ => Err(format!(
            "'{text}': expected a share above 0 and at most 1, such as 0.1"
        )),
    }
}

pub(super) fn parse_rounds(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 0, 10).map(|n| n as u32)
}

/// The long help of `herdsim assess`.
pub fn assess_help() -> String {
    format!(
        "Every figure is made by maps and runs that the command it names reproduces, byte for \
         byte:\n\
         - margin: for each stall kind, a one-row map along the stall's length (from {} to {} \
         s, from t = {}), refined where\n  the storm probability crosses 50%: the crossing, and \
         the longest length surely below and the shortest surely above it;\n\
         - headroom: a map along the offered load (ρ from 0.3 to 0.95, the rate or the users \
         scaled), one row per blip;\n\
         - amplification and success under partial failure: runs whose whole load meets the \
         failure, beside the exact\n  value where the attempt limit alone decides it (with the \
         z-score of the difference);\n\
         - recovery: the recovery times of the runs that recovered from the first blip;\n\
         - rare storms (with --splitting): for each blip, the chance the backlog reaches the \
         storm region (--high) before\n  calm (--low), by adaptive multilevel splitting, as \
         `herdsim run --splitting` makes it: the backlog's question,\n  not the verdict's stuck, \
         and far below what the maps' seeds can see.\n\
         Each run's patience window and length are the defaults its own trigger gives \
         (`herdsim metrics`), so assess\nrefuses a service with a trigger, a duration or a \
         request count of its own.",
        LENGTHS_MS[0] as f64 / 1e3,
        LENGTHS_MS[LENGTHS_MS.len() - 1] / 1_000,
        crate::experiment::assess::seconds(STALL_START_US)
    )
}

/// The stall kinds given with `--stall`, or assess's defaults.
pub(super) fn stall_kinds(given: &[String]) -> Vec<String> {
    if given.is_empty() {
        DEFAULT_KINDS.iter().map(|k| k.to_string()).collect()
    } else {
        given.to_vec()
    }
}

/// Seeds per cell and per run: `--seeds`, else the scenario's, at least
/// [`DEFAULT_SEEDS`].
pub(super) fn assess_seeds(grid: &GridArgs, scenario: &Scenario) -> u32 {
    grid.seeds()
        .unwrap_or(DEFAULT_SEEDS.max(scenario.replicates))
}

/// The scenario at `path` (or none) with `grid`'s flags applied, checked
/// as one service `command` (assess, tune) can stall.
pub(super) fn read_service(
    path: Option<&Path>,
    grid: &GridArgs,
    command: &str,
) -> Result<Scenario, CliError> {
    let scenario = match path {
        Some(path) => read_scenario(path)?,
        None => Scenario::default(),
    };
    check_service(scenario, grid, command)
}

/// `scenario` with `grid`'s flags applied, checked as one service
/// `command` (assess, tune, diff) can stall.
pub(super) fn check_service(
    scenario: Scenario,
    grid: &GridArgs,
    command: &str,
) -> Result<Scenario, CliError> {
    let usage = CliError::Usage;
    let scenario = grid.apply(scenario)?;
    if scenario.grid.len() != 1 {
        return Err(usage(format!(
            "the scenario has {} points ({}): {command} takes one service; give each key one value",
            scenario.grid.len(),
            scenario.grid.shape()
        )));
    }
    let base = scenario.grid.point(0);
    if base.resource != ResourceKind::Server {
        return Err(usage(format!(
            "{command} needs the server model (--resource server), whose runs can end stuck; this \
             one is on {}",
            base.resource
        )));
    }
    if !base.server.triggers.0.is_empty() {
        return Err(usage(format!(
            "the service has a trigger: {command} makes its own stalls (--stall); leave \
             trigger out"
        )));
    }
    if base.server.duration_us.is_some() || base.server.requests.is_some() {
        return Err(usage(format!(
            "the service has a duration or a request count: {command} gives each run the \
             length its stall needs; leave duration and requests out"
        )));
    }
    match base.server.peak_offered_load() {
        None => {
            return Err(usage(
                "the service has unbounded workers: it never saturates, so there is no margin \
                 to find; give --workers"
                    .to_string(),
            ));
        }
        Some(rho) if rho >= 1.0 => {
            return Err(usage(format!(
                "the service's offered load is ρ = {rho:.3}: at ρ ≥ 1 it has no steady state to \
                 recover to; lower --rate (or --users)"
            )));
        }
        Some(_) => {}
    }
    Ok(scenario)
}

/// The splitting after each blip, if asked: refused if a region flag
/// comes without --splitting, or if the service has no storm region (no
/// --high, and no timeout or queue_limit to derive it from) or one not
/// above calm.
fn splitting(args: &AssessArgs, base: &RunSpec) -> Result<Option<Splitting>, CliError> {
    let how = splitting_of(&args.split, &args.regions, "assess's")?;
    if how.is_some() {
        args.regions.for_service(&base.server, "the service")?;
    }
    Ok(how)
}

pub fn assess_command(args: &AssessArgs) -> Result<(), CliError> {
    let started = Instant::now();
    if let Some(report) = &args.report {
        warn_extensions(&[("--report", Some(report), "html")]);
        check_output(report, args.force)?;
        if let Some(scenario) = &args.scenario {
            check_distinct(&[("--report", report), ("the scenario", scenario)])?;
        }
    }
    let scenario = read_service(args.scenario.as_deref(), &args.grid, "assess")?;
    let base = scenario.grid.point(0);
    let suggest = match args.suggest.as_deref() {
        Some("none") => None,
        Some(budget) => Some(budget.to_string()),
        None if base.budget.is_none() => Some(SUGGESTED_BUDGET.to_string()),
        None => None,
    };
    let settings = AssessSettings {
        kinds: stall_kinds(&args.kinds),
        blips: if args.blips.is_empty() {
            vec![DEFAULT_BLIP_US]
        } else {
            args.blips.clone()
        },
        partial: args.partial,
        suggest,
        seeds: assess_seeds(&args.grid, &scenario),
        rounds: args.refine,
        master_seed: scenario.master_seed,
        splitting: splitting(args, &base)?,
        base,
    };
    let maps = settings.maps().map_err(CliError::Usage)?;
    let runs = settings.runs().map_err(CliError::Usage)?;
    // The commands, before any run: the service as given, but the keys
    // the command's own flags set, then those flags.
    let words = |command: &str, extra: Vec<String>| {
        let set: Vec<String> = extra
            .iter()
            .filter_map(|w| w.strip_prefix("--"))
            .map(|flag| flag.replace('-', "_"))
            .collect();
        let set: Vec<&str> = set.iter().map(String::as_str).collect();
        let mut all = vec!["herdsim".to_string(), command.to_string()];
        match &args.scenario {
            // `run`'s: the service's every key as flags, so the command
            // shows every value it runs.
            Some(_) if command == "run" => all.extend(spec_flags(&settings.base, &set)),
            Some(path) => {
                all.push(path.display().to_string());
                all.extend(args.grid.flag_words(&set));
            }
            None => all.extend(args.grid.flag_words(&set)),
        }
        all.extend(extra);
        all.iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut commands = Vec::new();
    for (i, map) in maps.iter().enumerate() {
        let budget = match &map.purpose {
            MapPurpose::Margin {
                suggested: true, ..
            } => settings.suggest.as_deref(),
            _ => None,
        };
        let mut extra = map_flags(&map.settings, budget);
        extra.extend(["--out".to_string(), format!("assess-map-{}.csv", i + 1)]);
        commands.push(words("map", extra));
    }
    for run in &runs {
        commands.push(words("run", run_flags(run, &settings)));
    }
    for storm in &settings.rare_storms().map_err(CliError::Usage)? {
        commands.push(words("run", rare_flags(storm, &settings)));
    }
    let total: usize = maps.len() + runs.len() + settings.rare_storms().map_or(0, |r| r.len());
    let bar = runs_bar(0, args.quiet);
    let made = assess(
        &settings,
        args.grid.max_events().unwrap_or(u64::MAX),
        |stage, jobs| {
            bar.set_length(jobs as u64);
            bar.set_position(0);
            bar.set_message(stage.to_string());
        },
        || bar.inc(1),
    );
    bar.finish_and_clear();
    let made = made.map_err(|stop| {
        CliError::Limit(format!(
            "a run of the {} reached --max-events: nothing is written",
            stop.stage
        ))
    })?;
    if let Some(report) = &args.report {
        let title = format!("Assessment of {}", scenario.name);
        let page = assessment_html(&made, &commands, &title, &command_line())
            .map_err(|e| CliError::Usage(format!("--report: {e}")))?;
        write_whole(report, args.force, &page)?;
    }
    write_stdout(&if args.json {
        assessment_json(&made, &commands)
    } else {
        assessment_text(&made, &commands)
    })?;
    if let Some(warning) = undecided_warning(&made) {
        super::warn(&warning);
    }
    if !args.quiet {
        let runs: u64 = made.maps.iter().map(|m| m.runs).sum::<u64>()
            + made.runs.iter().map(|r| r.runs.len() as u64).sum::<u64>();
        eprintln!(
            "{total} maps and run sets, {runs} runs in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
