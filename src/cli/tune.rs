//! `herdsim tune`: the settings of one retry control that keep a full
//! outage's amplification under a bound, their cost under a partial
//! failure, the Pareto front and its knee.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::assess::read_service;
use super::map::journal_path;
use super::output::{
    Access, LineFile, MAX_TABLE_BYTES, check_distinct, check_output, is_regular_file, open_locked,
    read_input, shell_word, warn_extensions, write_whole,
};
use super::progress::runs_bar;
use super::sweep::{GridArgs, stop_cause};
use super::{CliError, write_stdout};
use crate::base::format::{group_thousands, trimmed};
use crate::base::time::Micros;
use crate::base::time::format_duration;
use crate::control::{ABOUT, About, Family};
use crate::experiment::assess::{DEFAULT_PARTIAL, FAILURE_LOAD_US};
use crate::experiment::scenario::Scenario;
use crate::experiment::sweep::Shard;
use crate::experiment::tune::{
    DEFAULT_BOUND, DEFAULT_ROUNDS, DEFAULT_STALL, Field, MAX_VARIED, Measure, SettingFigures, Tune,
    TuneSettings, TuneStop, front, missing_settings, position, rule_with, run_tune,
};
use crate::report::tune_file::{
    read_tune_csv, read_tune_journal, tune_csv, tune_journal_header, tune_journal_line,
};
use crate::report::tune_svg::tune_svg;
use crate::report::tune_table::{tune_text, tune_undecided_warning};
use crate::spec::params::param;
use crate::spec::{self, ParamError};

/// The heading of tune's own flags.
const TUNE: &str = "Tune";

/// Seeds per measure of a setting unless `--seeds` says more.
const DEFAULT_SEEDS: u32 = 16;

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Scenario file (TOML) of the server model: the service and its
    /// clients, one point, no trigger
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    grid: GridArgs,

    /// The control to tune, by its rule's name in `herdsim controls`: grpc,
    /// envoy, tokens, ratio, finagle, tower, earned, adaptive,
    /// envoy-max-retries, cumulative, windowed, classic, sre, resilience4j,
    /// polly or envoy-max-requests
    ///
    /// The search starts from the service's own rule of that name if it has
    /// one, else from the control's source defaults, and varies the fields
    /// `herdsim controls` names unless --param says which.
    #[arg(long, value_name = "NAME", value_parser = parse_control, allow_hyphen_values = true, help_heading = TUNE)]
    control: &'static About,

    /// A field of the control's rule and its values, FIELD=V1,V2,… (such as
    /// ratio=0.05,0.1,0.2); repeat for a second; a field given one value is
    /// fixed at it [default: the control's own fields and values]
    ///
    /// At most two fields vary: the first is refined, the second's values
    /// are the rows.
    #[arg(long = "param", value_name = "FIELD=VALUES", allow_hyphen_values = true, help_heading = TUNE)]
    params: Vec<String>,

    /// The most attempts per request a full outage may cause (at least 1)
    #[arg(long, value_name = "X", default_value_t = DEFAULT_BOUND, value_parser = parse_bound, allow_hyphen_values = true, help_heading = TUNE)]
    bound: f64,

    /// The share of attempts failing in the partial failure (0 to 1, not 0)
    #[arg(long, value_name = "P", default_value_t = DEFAULT_PARTIAL, value_parser = super::assess::parse_share, allow_hyphen_values = true, help_heading = TUNE)]
    partial: f64,

    /// The stall every allowed setting must survive: a trigger (see
    /// `herdsim triggers`)
    #[arg(long, value_name = "TRIGGER", default_value = DEFAULT_STALL, value_parser = parse_stall, allow_hyphen_values = true, help_heading = TUNE)]
    stall: String,

    /// Refinement rounds after the coarse grid (0 to 6)
    ///
    /// Each puts a setting half way along the first field between
    /// neighbours of a row where being allowed changes.
    #[arg(long, value_name = "ROUNDS", default_value_t = DEFAULT_ROUNDS, value_parser = parse_rounds, allow_hyphen_values = true, help_heading = TUNE)]
    refine: u32,

    /// Also write every setting's figures to this CSV file (its runs are
    /// journaled to FILE.runs while the search runs)
    #[arg(long, short, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = super::run::OUTPUTS)]
    out: Option<PathBuf>,

    /// Also draw the settings and the Pareto front to this SVG file
    #[arg(long, value_name = "FILE.svg", allow_hyphen_values = true, help_heading = super::run::OUTPUTS)]
    svg: Option<PathBuf>,

    /// Search only the K-th of N slices of the rows (the second field's
    /// values), such as 2/4; --from joins the shards' files
    #[arg(long, value_name = "K/N", requires = "out", allow_hyphen_values = true, help_heading = super::run::OUTPUTS)]
    shard: Option<Shard>,

    /// Print and draw a search already made, from its CSV files (a whole
    /// search's, or its shards'), instead of running it; the scenario and
    /// flags must be the search's
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true,
          conflicts_with_all = ["out", "resume", "shard", "force"], help_heading = super::run::OUTPUTS)]
    from: Vec<PathBuf>,

    /// Continue an interrupted search from its run journal (FILE.runs)
    #[arg(long, requires = "out", conflicts_with = "force", help_heading = super::run::OUTPUTS)]
    resume: bool,

    /// Replace FILE (and the SVG) if they exist, and start over
    #[arg(long, help_heading = super::run::OUTPUTS)]
    force: bool,

    /// Hide the progress bar and the closing summary
    #[arg(long, short, help_heading = super::run::OUTPUTS)]
    quiet: bool,
}

/// The controls tune knows how to search.
fn tunable() -> Vec<&'static str> {
    ABOUT
        .iter()
        .filter(|a| a.tuning.is_some())
        .map(|a| a.name)
        .collect()
}

fn parse_control(text: &str) -> Result<&'static About, String> {
    ABOUT
        .iter()
        .find(|a| a.name == text && a.tuning.is_some())
        .ok_or_else(|| {
            format!(
                "'{text}': expected a control tune searches, one of {}",
                tunable().join(", ")
            )
        })
}

fn parse_bound(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (1.0..=1_000.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "'{text}': expected attempts per request from 1 to 1000, such as 1.2 (1 allows no \
             retry in a full outage)"
        )),
    }
}

fn parse_stall(text: &str) -> Result<String, String> {
    let trigger = param("trigger").expect("trigger is a key");
    trigger
        .check(text)
        .map_err(|e| format!("'{text}' is not a trigger: {e}"))?;
    Ok(text.to_string())
}

fn parse_rounds(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 0, 6).map(|n| n as u32)
}

/// The long help of `herdsim tune`.
pub fn tune_help() -> String {
    format!(
        "Every setting (the control's rule with its searched fields set) is measured by three sets \
     of --seeds runs:\n\
     - outage: attempts per request at the server while every attempt fails, over {} of \
     requests all inside the failure;\n\
     - partial: the share of requests that succeed while --partial of attempts fail, \
     likewise;\n\
     - stall: whether the service recovers from --stall (its storm verdict; `herdsim metrics` \
     states the rule).\n\
     A setting is allowed when its mean amplification is at most --bound and no run of the \
     stall ends stuck; where\nevery stall run ends before its patience window does \
     (unresolved), whether it survives is not known:\nit is on no front, and no setting is \
     recommended from such runs.\n\
     The Pareto front is the settings that survive the stall and that none beats on both \
     amplification (lower)\nand success (higher); its knee is the setting farthest above the \
     chord between its ends, both axes scaled\nto the ends' span: where more amplification \
     stops buying success. The knee is recommended where it is within\nthe bound; where it is \
     not, the bound binds first and the front's best within the bound is recommended.\n\n\
     The search is a grid of the fields' values (the first field along x, a row per value of \
     the second), refined\nas a map is: each round puts a setting half way along the first \
     field between neighbours of a row of which\none is allowed and the other not. A setting's \
     runs are seeded from its rule, the measure and the replicate\n(every setting meets the \
     same arrivals and failures), so the same command gives the same bytes at any\n\
     RAYON_NUM_THREADS; --resume continues an interrupted search from FILE.runs to the same \
     bytes; --shard K/N\nsearches a slice of the rows and --from joins the shards' CSVs.\n\n\
     Columns of --out: tune_row, round, rule, one column per field, seeds, amplification_mean, \
     amplification_ci95,\nsuccess_mean, success_ci95 (Student t 95% half-widths over the \
     seeds), stall_runs, stall_stuck,\nstall_unresolved, storm_low, storm_high (Wilson 95%), \
     within_bound, survives_stall (unknown where no stall run\nwas decided), on_front, best, \
     knee, bound, partial, stall, control, \
     master_seed, tune_id and row_checksum.",
        format_duration(FAILURE_LOAD_US)
    )
}

/// A `--param` as its field and values, or why not.
fn read_param(text: &str) -> Result<(String, Vec<String>), CliError> {
    let usage = |m: String| CliError::Usage(m);
    let (field, values) = text.split_once('=').ok_or_else(|| {
        usage(format!(
            "--param '{text}': expected FIELD=V1,V2,… (such as ratio=0.05,0.1,0.2)"
        ))
    })?;
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(usage(format!("--param '{text}': give at least one value")));
    }
    Ok((field.trim().to_string(), values))
}

/// The search's settings from the scenario and flags, every value checked.
fn settings(args: &TuneArgs, scenario: &Scenario) -> Result<TuneSettings, CliError> {
    let usage = |m: String| CliError::Usage(m);
    let about = args.control;
    let tuning = about.tuning.expect("--control takes tunable controls");
    let family = about.family;
    let base = scenario.grid.point(0);
    let own = match family {
        Family::Budget => base.budget,
        Family::Breaker => base.breaker,
        Family::Throttle => base.throttle,
    };
    // The service's own rule of this control, if it has one.
    let start = own
        .filter(|c| c.about().name == about.name)
        .map_or_else(|| tuning.start.to_string(), |c| c.to_string());
    let rule =
        crate::control::rule::Rule::read(family.key(), &start).map_err(|e| usage(e.to_string()))?;
    let mut known: Vec<String> = vec![rule.name.clone()];
    known.extend(rule.fields.iter().map(|(k, _)| k.clone()));
    for knob in tuning.knobs {
        if !known.iter().any(|k| k == knob.field) {
            known.push(knob.field.to_string());
        }
    }
    let fields: Vec<Field> = if args.params.is_empty() {
        tuning.knobs.iter().map(Field::of_knob).collect()
    } else {
        let mut fields: Vec<Field> = Vec::new();
        for text in &args.params {
            let (name, mut values) = read_param(text)?;
            if fields.iter().any(|f| f.name == name) {
                return Err(usage(format!("--param gives '{name}' twice")));
            }
            let what = tuning
                .knobs
                .iter()
                .find(|k| k.field == name)
                .map_or_else(|| name.clone(), |k| k.what.to_string());
            let field = Field {
                name: name.clone(),
                what,
                values: values.clone(),
            };
            // A field the rule does not name reads only if the control
            // takes it.
            if !known.contains(&name)
                && rule_with(family, &start, std::slice::from_ref(&field), &[&values[0]]).is_err()
            {
                return Err(usage(format!(
                    "--param '{text}': {} has no field '{name}'; its fields are {} (syntax: {})",
                    about.name,
                    known.join(", "),
                    about.syntax
                )));
            }
            if values.len() > 1 {
                for v in &values {
                    if position(v).is_none() {
                        return Err(usage(format!(
                            "--param '{text}': '{v}' is not a number or a duration; a field \
                             searched over several values takes numbers or durations"
                        )));
                    }
                }
                values.sort_by(|a, b| position(a).unwrap().total_cmp(&position(b).unwrap()));
                values.dedup();
            }
            fields.push(Field { values, ..field });
        }
        fields
    };
    let varied = fields.iter().filter(|f| f.varies()).count();
    if varied > MAX_VARIED {
        return Err(usage(format!(
            "--param: {varied} fields have several values; tune varies at most {MAX_VARIED} (give \
             the others one value)"
        )));
    }
    let seeds = args
        .grid
        .seeds()
        .unwrap_or(DEFAULT_SEEDS.max(scenario.replicates));
    let mut settings = TuneSettings {
        base,
        family,
        start,
        fields,
        bound: args.bound,
        partial: args.partial,
        stall: args.stall.clone(),
        seeds,
        rounds: args.refine,
        rows: 0..0,
        master_seed: scenario.master_seed,
    };
    settings.rows = args
        .shard
        .unwrap_or(Shard::WHOLE)
        .points(settings.row_count());
    check_stall(&settings)?;
    settings.check().map_err(|e| {
        let flag = if args.params.is_empty() {
            "--control"
        } else {
            "--param"
        };
        usage(format!("{flag}: {e}"))
    })?;
    Ok(settings)
}

/// Refuses a `--stall` whose run does not fit the service's load (a stall
/// of a year at 600 requests/s brings 1.9·10¹⁰ requests), naming --stall
/// and the latest end the load's bounds allow, before the settings' own
/// checks would blame --param.
fn check_stall(settings: &TuneSettings) -> Result<(), CliError> {
    let x = &settings.x().values[0];
    let Ok(rule) = settings.rule(&settings.values_at(x, 0)) else {
        return Ok(());
    };
    let Err(e) = settings.spec(&rule, Measure::Stall) else {
        return Ok(());
    };
    if settings.spec(&rule, Measure::Outage).is_err() {
        // Not the stall's own fault: the settings' check names it.
        return Ok(());
    }
    let mut spec = settings.base.clone();
    let trigger = param("trigger").expect("trigger is a key");
    let range = match (trigger.set)(&mut spec, &settings.stall) {
        Ok(()) => stall_range(&spec),
        Err(_) => None,
    };
    Err(CliError::Usage(format!(
        "--stall {}: its runs do not fit the service: {e}{}",
        settings.stall,
        range.map_or_else(String::new, |end| format!(
            "; a stall of this service must end by {}",
            format_duration(end)
        ))
    )))
}

/// The latest end of a stall `spec` (with the stall as its trigger) could
/// have within the load's bounds: the requests an open loop brings and the
/// windows of the series, less the load's time after the stall ends.
fn stall_range(spec: &crate::spec::RunSpec) -> Option<Micros> {
    use crate::spec::bounds::{MAX_LOAD_REQUESTS, MAX_WINDOWS};
    let end_us = spec
        .server
        .triggers
        .0
        .iter()
        .map(|t| t.to.whole_us())
        .max()?;
    let tail_us = spec.duration_us().checked_sub(end_us)?;
    let by_windows = spec.window().saturating_mul(MAX_WINDOWS);
    let longest = match spec.server.users {
        Some(_) => by_windows,
        None => {
            let rate = spec
                .server
                .rate_per_s
                .unwrap_or(crate::spec::server::DEFAULT_RATE_PER_S);
            by_windows.min(Micros::from_ticks((MAX_LOAD_REQUESTS / rate * 1e6) as u64))
        }
    };
    longest.checked_sub(tail_us)
}

/// What the service is, before any figure: its offered load and size.
fn service_line(scenario: &Scenario, settings: &TuneSettings) -> String {
    let s = &settings.base.server;
    format!(
        "the service{}: offered load ρ = {}, {} requests/s{}",
        if scenario.name.is_empty() {
            String::new()
        } else {
            format!(" {}", scenario.name)
        },
        s.peak_offered_load()
            .map_or_else(|| "unbounded".to_string(), |r| trimmed(r, 3)),
        trimmed(s.offered_rate_per_s(), 2),
        settings
            .base
            .fleet
            .map_or_else(String::new, |n| format!(", control state per {n} clients"))
    )
}

/// The command that measures `rule` alone, to the same bytes: this one
/// with each field fixed at the setting's value and no refinement.
fn reproduce(args: &TuneArgs, settings: &TuneSettings, values: &[String]) -> String {
    let mut words = vec!["herdsim".to_string(), "tune".to_string()];
    if let Some(path) = &args.scenario {
        words.push(path.display().to_string());
    }
    words.extend(args.grid.flag_words(&[]));
    words.extend(["--control".to_string(), args.control.name.to_string()]);
    for (f, v) in settings.fields.iter().zip(values) {
        words.extend(["--param".to_string(), format!("{}={v}", f.name)]);
    }
    words.extend([
        "--bound".to_string(),
        trimmed(settings.bound, 6),
        "--partial".to_string(),
        trimmed(settings.partial, 6),
        "--stall".to_string(),
        settings.stall.clone(),
        "--seeds".to_string(),
        settings.seeds.to_string(),
        "--refine".to_string(),
        "0".to_string(),
    ]);
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints a made (or read back) search, and draws it to `--svg`.
fn show(
    args: &TuneArgs,
    scenario: &Scenario,
    settings: &TuneSettings,
    figures: &[SettingFigures],
    svg_force: Option<bool>,
) -> Result<(), CliError> {
    let front = front(figures, settings.bound);
    if let (Some(svg), Some(svg_force)) = (&args.svg, svg_force) {
        let title = format!(
            "{} of {}: amplification against success",
            args.control.name,
            if scenario.name.is_empty() {
                "the service"
            } else {
                &scenario.name
            }
        );
        write_whole(svg, svg_force, &tune_svg(settings, figures, &front, &title))?;
    }
    let single = settings.fields.iter().all(|f| !f.varies()) && args.refine == 0;
    let commands = match front.knee {
        Some(k) if !single => vec![reproduce(args, settings, &figures[k].values)],
        _ => Vec::new(),
    };
    let mut text = tune_text(
        settings,
        figures,
        &front,
        &service_line(scenario, settings),
        &commands,
    );
    if let Some(shard) = args.shard.filter(|s| s.count > 1) {
        text.push_str(&format!(
            "(shard {}/{}: this front is the shard's rows'; join the shards with --from)\n",
            shard.index, shard.count
        ));
    }
    write_stdout(&text)?;
    if let Some(warning) = tune_undecided_warning(settings, figures) {
        super::warn(&warning);
    }
    Ok(())
}

pub fn tune_command(args: &TuneArgs) -> Result<(), CliError> {
    warn_extensions(&[
        ("--out", args.out.as_deref(), "csv"),
        ("--svg", args.svg.as_deref(), "svg"),
    ]);
    let mut named: Vec<(&str, &Path)> = Vec::new();
    if let Some(path) = args.scenario.as_deref() {
        named.push(("the scenario", path));
    }
    if let Some(svg) = &args.svg {
        named.push(("--svg", svg));
    }
    for from in &args.from {
        named.push(("--from", from));
    }
    let journal = args.out.as_deref().map(journal_path);
    if let (Some(out), Some(journal)) = (args.out.as_deref(), journal.as_deref()) {
        named.push(("--out", out));
        named.push(("its journal", journal));
    }
    check_distinct(&named)?;
    let scenario = read_service(args.scenario.as_deref(), &args.grid, "tune")?;
    let settings = settings(args, &scenario)?;
    if !args.from.is_empty() {
        return draw(args, &scenario, &settings);
    }
    match (args.out.as_deref(), journal.as_deref()) {
        (Some(out), Some(journal)) => make(args, &scenario, settings, Some((out, journal))),
        _ => make(args, &scenario, settings, None),
    }
}

/// `--from`: the settings of made searches (shards joined).
fn draw(args: &TuneArgs, scenario: &Scenario, settings: &TuneSettings) -> Result<(), CliError> {
    if let Some(svg) = &args.svg
        && is_regular_file(svg)
    {
        return Err(CliError::Usage(format!(
            "'{}' (--svg) exists: remove it first (--from never replaces a file)",
            svg.display()
        )));
    }
    let mut figures: Vec<SettingFigures> = Vec::new();
    for from in &args.from {
        let text = read_input(from, "settings file", MAX_TABLE_BYTES)?;
        let shown = from.display().to_string();
        for f in read_tune_csv(&shown, &text, settings).map_err(CliError::Usage)? {
            if figures.iter().any(|g| g.rule == f.rule) {
                return Err(CliError::Usage(format!(
                    "--from: the setting {} is in two files (give each shard once)",
                    f.rule
                )));
            }
            figures.push(f);
        }
    }
    let missing = missing_settings(settings, &figures);
    if !missing.is_empty() {
        let files: Vec<String> = args
            .from
            .iter()
            .map(|f| format!("'{}'", f.display()))
            .collect();
        let shown: Vec<&str> = missing.iter().take(4).map(String::as_str).collect();
        return Err(CliError::Usage(format!(
            "--from {}: not the whole search: {} of its settings {} missing ({}{}): give every \
             shard's file, or make the search again",
            files.join(", "),
            missing.len(),
            if missing.len() == 1 { "is" } else { "are" },
            shown.join("; "),
            if missing.len() > shown.len() {
                format!("; and {} more", missing.len() - shown.len())
            } else {
                String::new()
            }
        )));
    }
    // Rows in order, as the whole search writes them.
    figures.sort_by_key(|f| f.row);
    show(args, scenario, settings, &figures, Some(false))
}

/// The settings of `path` if it is this search's whole CSV (`None` if it
/// is any other file, or a part of it).
fn this_search(path: &Path, settings: &TuneSettings) -> Option<Vec<SettingFigures>> {
    let text = read_input(path, "settings file", MAX_TABLE_BYTES).ok()?;
    let shown = path.display().to_string();
    let mut figures = read_tune_csv(&shown, &text, settings).ok()?;
    if !missing_settings(settings, &figures).is_empty() {
        return None;
    }
    figures.sort_by_key(|f| f.row);
    Some(figures)
}

/// Runs the search: with `files` (the CSV and its journal), each run
/// journaled as it completes and the CSV written whole at the end.
fn make(
    args: &TuneArgs,
    scenario: &Scenario,
    settings: TuneSettings,
    files: Option<(&Path, &Path)>,
) -> Result<(), CliError> {
    let started = Instant::now();
    let id = settings.fingerprint();
    let mut known = std::collections::HashMap::new();
    let mut file = None;
    if let Some((out, journal)) = files {
        for path in [Some(out), args.svg.as_deref()].into_iter().flatten() {
            check_output(path, true)?;
        }
        let held = open_locked(journal, "the search's journal", Access::Append, false)?;
        if held.is_some() && !args.resume && !args.force {
            return Err(CliError::Usage(format!(
                "'{}' holds the runs of an interrupted search: pass --resume to continue it or \
                 --force to start over",
                journal.display()
            )));
        }
        let resuming = args.resume && held.is_some();
        if args.resume
            && !resuming
            && is_regular_file(out)
            && let Some(figures) = this_search(out, &settings)
        {
            if !args.quiet {
                eprintln!(
                    "'{}' is this search, whole (and no journal to continue): nothing to run",
                    out.display()
                );
            }
            // The picture is drawn only where it is missing.
            let draw = args.svg.as_deref().is_some_and(|svg| !is_regular_file(svg));
            return show(args, scenario, &settings, &figures, draw.then_some(false));
        }
        if !resuming {
            for (flag, path) in [("--out", Some(out)), ("--svg", args.svg.as_deref())] {
                if let Some(path) = path
                    && is_regular_file(path)
                    && !args.force
                {
                    return Err(CliError::Usage(format!(
                        "'{}' ({flag}) exists{}: pass --force to replace it",
                        path.display(),
                        if args.resume {
                            " (--resume found no journal to continue)"
                        } else {
                            ""
                        }
                    )));
                }
            }
        }
        let shown = journal.display().to_string();
        if resuming {
            let text = read_input(journal, "tune journal", MAX_TABLE_BYTES)?;
            known = read_tune_journal(&text, &id, settings.seeds).map_err(|why| {
                CliError::Usage(format!("'{shown}' {why}: pass --force to start over"))
            })?;
        }
        let cannot = |e: std::io::Error| CliError::Usage(format!("cannot write '{shown}': {e}"));
        let journal_file = match held {
            Some(held) => {
                if !resuming {
                    held.file.set_len(0).map_err(cannot)?;
                }
                held.file
            }
            None => match open_locked(journal, "the search's journal", Access::Append, true)? {
                Some(made) if made.created => made.file,
                _ => {
                    return Err(CliError::Usage(format!(
                        "'{shown}' (the search's journal) appeared while this search started: \
                         is another search writing it?"
                    )));
                }
            },
        };
        let mut lines = LineFile::new(journal_file).map_err(cannot)?;
        if lines.is_empty() {
            lines.write_lines(&tune_journal_header()).map_err(cannot)?;
        }
        file = Some(lines);
    }
    if files.is_none()
        && let Some(svg) = &args.svg
    {
        check_output(svg, args.force)?;
    }
    let mut tune = Tune::new(settings);
    let bar = runs_bar(0, args.quiet);
    let ran = run_tune(
        &mut tune,
        args.grid.max_events().unwrap_or(u64::MAX),
        &|rule, measure, r| known.get(&(rule.to_string(), measure, r)).copied(),
        |round, runs| {
            bar.set_length(runs as u64);
            bar.set_position(0);
            if !args.quiet {
                let line = format!(
                    "round {round} ({}): {} runs",
                    if round == 0 {
                        "the grid".to_string()
                    } else {
                        format!("refinement {round}")
                    },
                    group_thousands(runs as u64)
                );
                if bar.is_hidden() {
                    eprintln!("{line}");
                } else {
                    bar.println(line);
                }
            }
        },
        || bar.inc(1),
        |rule, measure, replicate, run| {
            super::still_wanted()?;
            match file.as_mut() {
                Some(f) => f.write_lines(&tune_journal_line(&id, rule, measure, replicate, run)),
                None => Ok(()),
            }
        },
    );
    bar.finish_and_clear();
    let kept = match files {
        Some((_, journal)) => format!(
            "every run before it is in '{}' (--resume continues); ",
            journal.display()
        ),
        None => "nothing is written; ".to_string(),
    };
    match ran {
        Ok(()) => {}
        Err(TuneStop::Sink(e)) if e.kind() == std::io::ErrorKind::Interrupted => {
            return Err(CliError::Limit(format!(
                "interrupted: {}",
                kept.trim_end_matches("; ")
            )));
        }
        Err(TuneStop::Sink(e)) => {
            return Err(CliError::Usage(format!(
                "cannot write the journal: {e}; it is cut back to its last whole run (--resume \
                 continues)"
            )));
        }
        Err(TuneStop::Limit {
            rule,
            measure,
            replicate,
        }) => {
            return Err(CliError::Limit(format!(
                "replicate {replicate} of the {} runs of {rule} {}",
                measure.name(),
                stop_cause(args.grid.max_events().unwrap_or(u64::MAX), &kept)
            )));
        }
    }
    let figures = tune.figures();
    if let Some((out, journal)) = files {
        let front = front(&figures, tune.settings.bound);
        write_whole(out, true, &tune_csv(&tune.settings, &figures, &front))?;
        show(args, scenario, &tune.settings, &figures, Some(true))?;
        let _ = fs::remove_file(journal);
        drop(file);
    } else {
        show(args, scenario, &tune.settings, &figures, Some(args.force))?;
    }
    if !args.quiet {
        eprintln!(
            "{} settings, {} runs{} in {:.2} s{}",
            figures.len(),
            group_thousands(tune.runs()),
            if known.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} from the journal)",
                    group_thousands(known.len() as u64)
                )
            },
            started.elapsed().as_secs_f64(),
            files.map_or_else(String::new, |(out, _)| format!(" → {}", out.display()))
        );
    }
    Ok(())
}
