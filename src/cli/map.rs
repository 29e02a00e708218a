//! `herdsim map`: where a server-model service tips over as two parameters
//! vary, refined along the boundary, to CSV and an SVG heatmap.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::backlog::{RegionFlags, SPLITTING, SplitFlags, splitting_of};
use super::output::{
    Access, LineFile, MAX_TABLE_BYTES, check_distinct, check_output, is_regular_file, open_locked,
    read_input, warn_extensions, write_whole,
};
use super::progress::runs_bar;
use super::run::OUTPUTS;
use super::sweep::{GridArgs, read_scenario, stop_cause};
use super::{CliError, write_stdout};
use crate::base::format::{group_thousands, significant, trimmed};
use crate::experiment::map::{
    CellCounts, Crossing, Map, MapAxis, MapSettings, MapStop, RunOutcome, boundaries_of, places,
    rows_of, run_map,
};
use crate::experiment::map_split::{MapSplit, split_map};
use crate::experiment::scenario::Scenario;
use crate::experiment::sweep::Shard;
use crate::model::ResourceKind;
use crate::model::backlog::ChosenRegions;
use crate::report::aligned_text_first;
use crate::report::backlog::{calm_reason, storm_reason};
use crate::report::map_csv::{
    JournalEntry, journal_batch_line, journal_header, journal_line, map_csv, read_journal_line,
    read_map_csv,
};
use crate::report::map_svg::{axis_title, default_title, map_svg, patience_text, x_scale};
use crate::sim::splitting::SplitBatch;
use crate::spec::params::{PARAMS, Param, param};
use crate::spec::undecided::{Undecided, decided_line};
use crate::spec::{self, ParamError, RunSpec};

/// The heading of the flags that shape the map.
const MAP: &str = "Map";

/// The most refinement rounds.
const MAX_ROUNDS: u32 = 10;

/// Cells split unless --split-below says otherwise: those whose plain runs
/// put the storm below one in twenty (none stuck of 16 seeds, one of 40).
const DEFAULT_SPLIT_BELOW: f64 = 0.05;

#[derive(Debug, Args)]
pub struct MapArgs {
    /// Scenario file (TOML) of the server model; its lists for the --x and
    /// --y keys are the axes (flags replace its values, as in `sweep`)
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    /// The parameter along x (its scenario key), refined near the boundary
    ///
    /// Cells are added between its values where the boundary is.
    #[arg(long, value_name = "KEY", value_parser = parse_key, allow_hyphen_values = true, help_heading = MAP)]
    x: &'static Param,

    /// The parameter along y (its scenario key): one row per value
    #[arg(long, value_name = "KEY", value_parser = parse_key, allow_hyphen_values = true, help_heading = MAP)]
    y: &'static Param,

    /// Output CSV file: one row per cell
    #[arg(
        long,
        short,
        value_name = "FILE.csv",
        allow_hyphen_values = true,
        required_unless_present = "from",
        conflicts_with = "from",
        help_heading = OUTPUTS
    )]
    out: Option<PathBuf>,

    /// Draw and print a map already made, from its CSV, instead of running it
    ///
    /// The heatmap (--svg) and the boundaries of a map made before, such as
    /// its shards merged (`herdsim merge`); the scenario and flags must be
    /// the map's.
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true,
          conflicts_with_all = ["resume", "shard", "force"], help_heading = OUTPUTS)]
    from: Option<PathBuf>,

    /// Map only the K-th of N slices of the rows (y values), such as 2/4
    ///
    /// Rows are refined on their own, so `herdsim merge` joins the shards'
    /// files into the whole map's.
    #[arg(long, value_name = "K/N", allow_hyphen_values = true, help_heading = OUTPUTS)]
    shard: Option<Shard>,

    /// Also draw the heatmap of storm probability to this SVG file
    #[arg(long, value_name = "FILE.svg", allow_hyphen_values = true, help_heading = OUTPUTS)]
    svg: Option<PathBuf>,

    /// The heatmap's title [default: what was mapped: the axes, the retries and the workload]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true, help_heading = OUTPUTS)]
    title: Option<String>,

    #[command(flatten)]
    grid: GridArgs,

    /// Refinement rounds after the coarse grid (0 to 10)
    ///
    /// Each halves the steps along x the boundary lies in and doubles the
    /// seeds of the uncertain cells beside it.
    #[arg(long, value_name = "ROUNDS", default_value_t = 3, value_parser = parse_rounds, allow_hyphen_values = true, help_heading = MAP)]
    refine: u32,

    /// The most seeds one cell gets by refinement [default: 4 × --seeds]
    #[arg(long, value_name = "N", value_parser = spec::parse_replicates, allow_hyphen_values = true, help_heading = MAP)]
    max_seeds: Option<u32>,

    /// The run budget of each row [default: 4 × a row's coarse runs]
    ///
    /// A row's refinement stops where its next step would pass it.
    #[arg(long, value_name = "N", value_parser = parse_max_runs, allow_hyphen_values = true, help_heading = MAP)]
    max_runs: Option<u64>,

    #[command(flatten)]
    regions: RegionFlags,

    #[command(flatten)]
    split: SplitFlags,

    /// With --splitting: split the cells whose plain storm probability is
    /// below this (0 to 1, not 0)
    ///
    /// Their plain runs saw too few storms to say how rare one is.
    #[arg(long, value_name = "P", default_value_t = DEFAULT_SPLIT_BELOW, value_parser = super::assess::parse_share, allow_hyphen_values = true, requires = "splitting", help_heading = SPLITTING)]
    split_below: f64,

    /// Continue an interrupted map from its run journal (FILE.runs)
    #[arg(long, conflicts_with = "force", help_heading = OUTPUTS)]
    resume: bool,

    /// Replace FILE (and the SVG) if they exist, and start over
    #[arg(long, help_heading = OUTPUTS)]
    force: bool,

    /// Hide the progress bar and the closing summary
    #[arg(long, short, help_heading = OUTPUTS)]
    quiet: bool,
}

fn parse_key(text: &str) -> Result<&'static Param, String> {
    param(text).ok_or_else(|| {
        let keys: Vec<&str> = PARAMS.iter().map(|p| p.key).collect();
        format!(
            "unknown parameter '{text}': expected a scenario key, one of {}",
            keys.join(", ")
        )
    })
}

fn parse_rounds(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 0, u64::from(MAX_ROUNDS)).map(|n| n as u32)
}

fn parse_max_runs(text: &str) -> Result<u64, ParamError> {
    spec::parse_count(text, 1, 1_000_000_000)
}

/// The long help of `herdsim map`.
pub fn map_help() -> String {
    "Every cell (an x value in a row of y) is run over --seeds replicates; its storm probability \
     is\nthe share of the decided runs that ended stuck (not healthy again over the patience\nwindow \
     after the last trigger: `herdsim metrics` states the rule), with its Wilson 95%\ninterval. A cell whose interval straddles 50% is \
     uncertain; one with no\ndecided run (each ended before its patience window did) is \
     undecided: it has no storm\nprobability, and no crossing is stated where it could lie.\nEach refinement round puts a cell half way between neighbours along x that \
     are not both\nsurely on one side, and doubles the seeds of their uncertain cells (up to \
     --max-seeds), so\nafter R rounds the boundary's place along x is known to the coarse \
     step / 2^R, unless\n--max-runs stops it first. x values between two of yours are made \
     by halving: numbers,\ndurations, and text whose values differ in numbers only \
     (outage@2s..2.1s).\n\nColumns: map_row (the cell's row, from 0), map_x (its place on x), the \
     sweep file's\nparameter columns, map_value (its x value), round (0: the coarse grid), runs, \
     stuck,\nunresolved, storm_probability, storm_low, storm_high (Wilson 95%), side (below, \
     uncertain\nor above 50%, or undecided: the storm columns then empty), recovered, recovery_median_ms (over the runs that recovered), \
     amplification_mean,\nmap_rows, row_cells (the cells of its row), row_budget_spent (yes if the run\nbudget stopped its refinement), master_seed, map_id and row_checksum. Each run is\nappended to FILE.runs as it completes; --resume continues from \
     it to the same bytes, and the\njournal is removed when the map is written. The same \
     command gives the same bytes at any\nRAYON_NUM_THREADS.\n\nRows are refined on their own (--max-runs is a row's budget), so \
     --shard K/N maps the K-th\nslice of the rows, `herdsim merge` joins the shards' files \
     into the whole map's, byte for\nbyte, and --from FILE draws its heatmap (--svg) and \
     prints its boundaries.\n\nWith --splitting PATHS, the cells whose plain storm \
     probability is below --split-below\n(none stuck of 16 seeds is anything up to 20%) also \
     get adaptive multilevel splitting's\nestimate of a question of its own: the backlog \
     (waiting attempts + retries waiting out\ntheir delay) reaching the storm region (--high) \
     before calm (--low) after the trigger, as\n`herdsim run --splitting` answers it. It is \
     not the verdict's stuck: a run can pass\nthrough the storm region and still recover. \
     Their batches are made after the refinement\nand journaled too; the CSV gains split_high, \
     split_low, split_probability, split_ci95\n(Student t over the batches), split_batches, \
     split_paths, split_events and split_cut,\nempty in the cells not split."
        .to_string()
}

/// The map's settings from the scenario and flags, every value checked.
fn settings(args: &MapArgs, scenario: &Scenario) -> Result<MapSettings, CliError> {
    let usage = |m: String| CliError::Usage(m);
    if args.x == args.y {
        return Err(usage(format!(
            "--x and --y both name '{}': a map needs two parameters",
            args.x.key
        )));
    }
    let grid = &scenario.grid;
    if grid.variants() > 0 {
        return Err(usage(
            "the scenario has [[variant]] tables: a map varies --x and --y only; map each \
             variant apart"
                .to_string(),
        ));
    }
    for p in grid.varying() {
        if p != args.x && p != args.y {
            return Err(usage(format!(
                "key '{}' has {} values: a map varies --x ({}) and --y ({}) only; give it one",
                p.key,
                grid.values(p.key).map_or(0, <[String]>::len),
                args.x.key,
                args.y.key
            )));
        }
    }
    let values = |flag: &str, p: &'static Param, least: usize| {
        let values = grid.values(p.key).unwrap_or_default().to_vec();
        if values.len() < least {
            return Err(usage(format!(
                "--{flag} {}: {} value{} given; a map needs at least {least} (a list in the \
                 scenario, or --{} V1,V2,...)",
                p.key,
                values.len(),
                if values.len() == 1 { "" } else { "s" },
                p.flag()
            )));
        }
        Ok(values)
    };
    let x = MapAxis::new(args.x, values("x", args.x, 2)?);
    let y = MapAxis::new(args.y, values("y", args.y, 1)?);
    // A value twice would be one cell twice: its runs counted twice over.
    for (flag, axis) in [("x", &x), ("y", &y)] {
        for (i, a) in axis.values.iter().enumerate() {
            let same = |b: &String| a == b || (flag == "x" && axis.position(a) == axis.position(b));
            if let Some(b) = axis.values[..i].iter().find(|b| same(b)) {
                return Err(usage(format!(
                    "--{flag} {}: '{a}' is '{b}' again: give each value once (--{} or the \
                     scenario's list)",
                    axis.param.key,
                    axis.param.flag()
                )));
            }
        }
    }
    let base = grid.point(0);
    if base.resource != ResourceKind::Server {
        return Err(usage(format!(
            "a map needs the server model (resource = \"server\"), whose runs can end stuck; \
             this one is on {}",
            base.resource
        )));
    }
    let seeds = scenario.replicates;
    let max_seeds = args.max_seeds.unwrap_or(seeds.saturating_mul(4));
    if max_seeds < seeds {
        return Err(usage(format!(
            "--max-seeds {max_seeds} is below --seeds {seeds}: give at least {seeds}"
        )));
    }
    let coarse = x.values.len() as u64 * u64::from(seeds);
    let max_runs = args.max_runs.unwrap_or(coarse.saturating_mul(4));
    if max_runs < coarse {
        return Err(usage(format!(
            "--max-runs {} is below a row's coarse {} runs ({} cells × {seeds} seeds): give at \
             least {}",
            group_thousands(max_runs),
            group_thousands(coarse),
            x.values.len(),
            group_thousands(coarse)
        )));
    }
    let rows = args.shard.unwrap_or(Shard::WHOLE).points(y.values.len());
    let split = map_split(args, &base, &x, &y, &rows)?;
    Ok(MapSettings {
        base,
        x,
        y,
        seeds,
        max_seeds,
        rounds: args.refine,
        max_runs,
        rows,
        master_seed: scenario.master_seed,
        split,
    })
}

/// The map's splitting, if asked: refused if a region flag comes without
/// --splitting, or if a coarse cell has no storm region (no --high, and no
/// timeout or queue_limit to derive it from) or one not above calm.
fn map_split(
    args: &MapArgs,
    base: &RunSpec,
    x: &MapAxis,
    y: &MapAxis,
    rows: &std::ops::Range<usize>,
) -> Result<Option<MapSplit>, CliError> {
    let Some(how) = splitting_of(&args.split, &args.regions, "a map's")? else {
        return Ok(None);
    };
    let split = MapSplit {
        how,
        below: args.split_below,
    };
    for row in rows.clone() {
        for value in &x.values {
            let mut spec = base.clone();
            let set = (x.param.set)(&mut spec, value)
                .and_then(|()| (y.param.set)(&mut spec, &y.values[row]));
            if set.is_err() || spec.validate().is_err() {
                // Refused, naming the value, where the map's cells are made.
                continue;
            }
            let cell = format!(
                "the cell {} = {value}, {} = {}",
                x.param.key, y.param.key, y.values[row]
            );
            args.regions.for_service(&spec.server, &cell)?;
        }
    }
    Ok(Some(split))
}

/// The journal of `out`: where each run goes as it completes.
/// Where the runs of a search or map writing `out` are journaled.
pub(super) fn journal_path(out: &Path) -> PathBuf {
    let mut path = out.as_os_str().to_owned();
    path.push(".runs");
    PathBuf::from(path)
}

/// What an interrupted map left in its journal: its runs, keyed by cell
/// values and replicate, and its splitting batches, by cell values and
/// batch.
#[derive(Default)]
struct Journaled {
    runs: HashMap<(String, String, u32), RunOutcome>,
    batches: HashMap<(String, String, u32), SplitBatch>,
}

/// What an interrupted map left in `journal`; the journal is cut after its
/// last whole line (a line cut short by a kill is dropped, and its run or
/// batch made again). Every whole line must be one herdsim wrote for this
/// map, each run and batch once: a changed or foreign line would move the
/// boundary, so it is refused, naming it.
fn read_journal(journal: &Path, settings: &MapSettings) -> Result<Journaled, CliError> {
    let shown = journal.display();
    let text = read_input(journal, "map journal", MAX_TABLE_BYTES)?;
    let whole = text.rfind('\n').map_or(0, |i| i + 1);
    let refused = |line: usize, why: String| {
        CliError::Usage(format!(
            "'{shown}' line {line}: {why}: pass --force to start over"
        ))
    };
    let id = settings.fingerprint();
    // An axis that gives a value twice makes two cells of one key, whose
    // runs are the same: their lines may repeat, if equal.
    let repeats = |values: &[String]| {
        values
            .iter()
            .enumerate()
            .any(|(i, v)| values[..i].contains(v))
    };
    let may_repeat = repeats(&settings.x.values) || repeats(&settings.y.values);
    let mut runs: HashMap<(String, String, u32), (RunOutcome, usize)> = HashMap::new();
    let mut batches: HashMap<(String, String, u32), (SplitBatch, usize)> = HashMap::new();
    for (i, line) in text[..whole].lines().enumerate() {
        let line_no = i + 1;
        if i == 0 {
            if line != journal_header().trim_end() {
                return Err(CliError::Usage(format!(
                    "'{shown}' is not a map journal of this herdsim (its header differs): pass \
                     --force to start over"
                )));
            }
            continue;
        }
        let entry = read_journal_line(settings, &id, line).map_err(|why| refused(line_no, why))?;
        let (what, key, first) = match entry {
            JournalEntry::Run(run) => {
                let key = (run.x, run.y, run.replicate);
                let first = match runs.get(&key) {
                    Some((before, _)) if may_repeat && *before == run.outcome => None,
                    Some((_, first)) => Some(*first),
                    None => None,
                };
                runs.entry(key.clone()).or_insert((run.outcome, line_no));
                ("replicate", key, first)
            }
            JournalEntry::Batch(x, y, batch, made) => {
                let key = (x, y, batch);
                let first = match batches.get(&key) {
                    Some((before, _)) if may_repeat && *before == made => None,
                    Some((_, first)) => Some(*first),
                    None => None,
                };
                batches.entry(key.clone()).or_insert((made, line_no));
                ("splitting batch", key, first)
            }
        };
        if let Some(first) = first {
            return Err(refused(
                line_no,
                format!(
                    "{what} {} of the cell x = {}, y = {} is on line {first} already",
                    key.2, key.0, key.1
                ),
            ));
        }
    }
    let failed = |e: std::io::Error| CliError::Usage(format!("cannot continue '{shown}': {e}"));
    OpenOptions::new()
        .write(true)
        .open(journal)
        .and_then(|f| f.set_len(whole as u64))
        .map_err(failed)?;
    let strip = |(key, (value, _))| (key, value);
    Ok(Journaled {
        runs: runs.into_iter().map(strip).collect(),
        batches: batches
            .into_iter()
            .map(|(key, (made, _))| (key, made))
            .collect(),
    })
}

/// The heatmap's title: `--title`, or what was mapped (a scenario's
/// description may not say what the flags changed).
fn title(args: &MapArgs, settings: &MapSettings) -> String {
    args.title
        .clone()
        .unwrap_or_else(|| default_title(settings))
}

pub fn map(args: &MapArgs) -> Result<(), CliError> {
    warn_extensions(&[
        ("--out", args.out.as_deref(), "csv"),
        ("--svg", args.svg.as_deref(), "svg"),
    ]);
    let scenario_path = args.scenario.as_deref();
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(svg) = &args.svg {
        outputs.push(("--svg", svg));
    }
    if let Some(path) = scenario_path {
        outputs.push(("the scenario", path));
    }
    match (&args.out, &args.from) {
        (_, Some(from)) => {
            outputs.push(("--from", from));
            check_distinct(&outputs)?;
            draw(args, from)
        }
        (Some(out), None) => {
            let journal = journal_path(out);
            outputs.push(("--out", out));
            outputs.push(("its journal", &journal));
            check_distinct(&outputs)?;
            make(args, out, &journal)
        }
        (None, None) => unreachable!("clap requires --out or --from"),
    }
}

/// The map's settings: the scenario with the flags applied.
fn read(args: &MapArgs) -> Result<MapSettings, CliError> {
    let scenario = match &args.scenario {
        Some(path) => read_scenario(path)?,
        None => Scenario::default(),
    };
    let scenario = args.grid.apply(scenario)?;
    settings(args, &scenario)
}

/// `--from`: a made map's heatmap and boundaries, from its CSV.
fn draw(args: &MapArgs, from: &Path) -> Result<(), CliError> {
    let settings = read(args)?;
    if let Some(svg) = &args.svg
        && is_regular_file(svg)
    {
        return Err(CliError::Usage(format!(
            "'{}' (--svg) exists: remove it first (--from never replaces a file)",
            svg.display()
        )));
    }
    let text = read_input(from, "map file", MAX_TABLE_BYTES)?;
    let shown = from.display().to_string();
    let cells = read_map_csv(&shown, &text, &settings)?;
    show_map(args, &settings, &cells)
}

/// A made map's cells: its heatmap drawn to `--svg` (never replacing a
/// file), its boundaries printed.
fn show_map(args: &MapArgs, settings: &MapSettings, cells: &[CellCounts]) -> Result<(), CliError> {
    if let Some(svg) = &args.svg
        && !is_regular_file(svg)
    {
        write_whole(
            svg,
            false,
            &map_svg(settings, cells, &title(args, settings)),
        )?;
    }
    write_stdout(&boundary_table(settings, cells))?;
    if settings.split.is_some() {
        write_stdout(&split_table(settings, cells))?;
    }
    warn_undecided(settings, cells);
    warn_varying_patience(settings, cells);
    Ok(())
}

/// The cells of `path` if it is this map's whole CSV (`None` if it is any
/// other file).
fn this_map(path: &Path, settings: &MapSettings) -> Option<Vec<CellCounts>> {
    let text = read_input(path, "map file", MAX_TABLE_BYTES).ok()?;
    let shown = path.display().to_string();
    read_map_csv(&shown, &text, settings).ok()
}

/// Makes the map: each round's runs journaled as they complete, then the
/// CSV and SVG written whole.
fn make(args: &MapArgs, out: &Path, journal: &Path) -> Result<(), CliError> {
    let started = Instant::now();
    let settings = read(args)?;
    let id = settings.fingerprint();
    let outputs = [("--out", Some(out)), ("--svg", args.svg.as_deref())];
    // Checked before any run: a directory, a missing directory or a loop of
    // links as an output would waste the whole map.
    for (_, path) in outputs {
        if let Some(path) = path {
            check_output(path, true)?;
        }
    }
    // Held until the map is written and its journal gone: a second map on
    // the same output is refused while this one runs.
    let held = open_locked(journal, "the map's journal", Access::Append, false)?;
    if held.is_some() && !args.resume && !args.force {
        return Err(CliError::Usage(format!(
            "'{}' holds the runs of an interrupted map: pass --resume to continue it or --force \
             to start over",
            journal.display()
        )));
    }
    let resuming = args.resume && held.is_some();
    if !resuming {
        // A new map: nothing there is replaced without --force (not even
        // by --resume, which finds no journal to continue).
        if args.resume
            && is_regular_file(out)
            && let Some(cells) = this_map(out, &settings)
        {
            if !args.quiet {
                eprintln!(
                    "'{}' is this map, whole (and no journal to continue): nothing to run",
                    out.display()
                );
            }
            return show_map(args, &settings, &cells);
        }
        for (flag, path) in outputs {
            if let Some(path) = path
                && is_regular_file(path)
                && !args.force
            {
                let why = match (args.resume, flag) {
                    (false, _) => String::new(),
                    (true, "--out") => format!(
                        " (--resume found no journal '{}' to continue, and it is not this map)",
                        journal.display()
                    ),
                    (true, _) => format!(
                        " (--resume found no journal '{}' to continue)",
                        journal.display()
                    ),
                };
                return Err(CliError::Usage(format!(
                    "'{}' ({flag}) exists{why}: pass --force to replace it",
                    path.display()
                )));
            }
        }
    }
    let known = if resuming {
        read_journal(journal, &settings)?
    } else {
        Journaled::default()
    };
    let shown = journal.display().to_string();
    let cannot = |e: std::io::Error| CliError::Usage(format!("cannot write '{shown}': {e}"));
    let journal_file = match held {
        Some(held) => {
            if !resuming {
                // --force: started over.
                held.file.set_len(0).map_err(cannot)?;
            }
            held.file
        }
        None => match open_locked(journal, "the map's journal", Access::Append, true)? {
            Some(made) if made.created => made.file,
            _ => {
                return Err(CliError::Usage(format!(
                    "'{shown}' (the map's journal) appeared while this map started: is another \
                     map writing it?"
                )));
            }
        },
    };
    let mut file = LineFile::new(journal_file).map_err(cannot)?;
    // New, started over, or killed before its header was whole.
    if file.is_empty() {
        file.write_lines(&journal_header()).map_err(cannot)?;
    }
    let mut map = Map::new(settings);
    let bar = runs_bar(0, args.quiet);
    let ran = run_map(
        &mut map,
        args.grid.max_events().unwrap_or(u64::MAX),
        &|x: &str, y: &str, r: u32| known.runs.get(&(x.to_string(), y.to_string(), r)).copied(),
        |round, runs| {
            bar.set_length(runs as u64);
            bar.set_position(0);
            if !args.quiet {
                let what = if round == 0 {
                    "coarse grid".to_string()
                } else {
                    format!("refinement {round}")
                };
                let line = format!(
                    "round {round} ({what}): {} runs",
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
        |x, y, replicate, outcome| {
            super::still_wanted()?;
            file.write_lines(&journal_line(&id, x, y, replicate, outcome))
        },
    );
    bar.finish_and_clear();
    match ran {
        Ok(()) => {}
        Err(MapStop::Sink(e)) => return Err(super::sink_error(&e, &shown.to_string(), "run", "")),
        Err(MapStop::Limit { x, y, replicate }) => {
            let s = &map.settings;
            let kept = format!("every run before it is in '{shown}' (--resume continues); ");
            return Err(CliError::Limit(format!(
                "replicate {replicate} of the cell {} = {x}, {} = {y} {}",
                s.x.param.key,
                s.y.param.key,
                stop_cause(args.grid.max_events().unwrap_or(u64::MAX), &kept)
            )));
        }
    }
    if let Some(split) = map.settings.split.clone() {
        let bar = runs_bar(0, args.quiet);
        let ran = split_map(
            &mut map,
            &split,
            args.grid.max_events().unwrap_or(u64::MAX),
            &|x: &str, y: &str, b: u32| {
                known
                    .batches
                    .get(&(x.to_string(), y.to_string(), b))
                    .copied()
            },
            |batches| {
                bar.set_length(batches as u64);
                if !args.quiet {
                    let line = format!(
                        "splitting: {} cells × {} batches of {} paths",
                        group_thousands((batches / split.how.batches as usize) as u64),
                        split.how.batches,
                        group_thousands(split.how.particles as u64)
                    );
                    if bar.is_hidden() {
                        eprintln!("{line}");
                    } else {
                        bar.println(line);
                    }
                }
            },
            || bar.inc(1),
            |x, y, batch, made| {
                super::still_wanted()?;
                file.write_lines(&journal_batch_line(&id, x, y, batch, made))
            },
        );
        bar.finish_and_clear();
        if let Err(MapStop::Sink(e)) = ran {
            return Err(super::sink_error(&e, &shown.to_string(), "batch", ""));
        }
    }
    // The outputs are whole files, each written at once; the journal goes
    // only when both are in place (and its lock with it).
    let counts = map.counts();
    write_whole(out, true, &map_csv(&map))?;
    if let Some(svg) = &args.svg {
        write_whole(
            svg,
            true,
            &map_svg(&map.settings, &counts, &title(args, &map.settings)),
        )?;
    }
    let _ = fs::remove_file(journal);
    drop(file);
    write_stdout(&boundary_table(&map.settings, &counts))?;
    if map.settings.split.is_some() {
        write_stdout(&split_table(&map.settings, &counts))?;
    }
    warn_undecided(&map.settings, &counts);
    warn_varying_patience(&map.settings, &counts);
    if !args.quiet {
        eprintln!(
            "{} cells, {} runs{} in {:.2} s → {}",
            group_thousands(map.cells.len() as u64),
            group_thousands(map.runs()),
            if known.runs.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} from the journal)",
                    group_thousands(known.runs.len() as u64)
                )
            },
            started.elapsed().as_secs_f64(),
            out.display()
        );
    }
    Ok(())
}

/// Decimals that show a step of `step` and no finer: 0.0125 → 2, 0.1 → 1.
fn decimals_of(step: f64) -> usize {
    if step > 0.0 && step.is_finite() {
        (-step.log10() - 1e-9).ceil().clamp(0.0, 9.0) as usize
    } else {
        4
    }
}

/// Each row's boundary, for people: where the storm probability crosses
/// one half, and the surely-below and surely-above cells either side, in
/// the x axis's shown values (a trigger's length, s) with its unit in the
/// header, each row to the decimals its refinement resolves (the step
/// between the two cells the crossing lies between).
fn boundary_table(s: &MapSettings, cells: &[CellCounts]) -> String {
    let undecided = decided_of(s, cells);
    let scale = x_scale(s);
    let coarse = |v: f64| trimmed(scale.shown(v), 4);
    let positions = s.x.values.iter().map(|v| s.x.position(v));
    let first = positions.clone().fold(f64::INFINITY, f64::min);
    let last = positions.fold(f64::NEG_INFINITY, f64::max);
    // The shown first and last coarse values (a length may fall as the
    // place grows).
    let (low_end, high_end) = if scale.shown(last) >= scale.shown(first) {
        (first, last)
    } else {
        (last, first)
    };
    let rows = rows_of(places(cells), s.y.values.len());
    let table: Vec<Vec<String>> = boundaries_of(cells, s.y.values.len())
        .into_iter()
        .map(|b| {
            let (crossing, decimals) = match b.crossing {
                Crossing::At(x) => {
                    let row: Vec<f64> = rows[b.y].iter().map(|&i| cells[i].x_at).collect();
                    let step = row
                        .windows(2)
                        .find(|w| w[0] <= x && x <= w[1])
                        .map_or(f64::NAN, |w| scale.step(w[1] - w[0]));
                    let decimals = decimals_of(step);
                    (format!("{:.decimals$}", scale.shown(x)), decimals)
                }
                Crossing::AtOrBefore => (format!("at or before {}", coarse(low_end)), 4),
                Crossing::Beyond => (format!("beyond {}", coarse(high_end)), 4),
                Crossing::Unknown => ("unknown".to_string(), 4),
            };
            let cell = |v: Option<f64>| {
                v.map_or_else(
                    || "-".to_string(),
                    |v| format!("{:.decimals$}", scale.shown(v)),
                )
            };
            vec![
                s.y.values[b.y].clone(),
                crossing,
                cell(b.below),
                cell(b.above),
                if undecided.is_some() {
                    format!(
                        "{} of {}",
                        group_thousands(b.runs as u64),
                        group_thousands((b.runs + b.unresolved) as u64)
                    )
                } else {
                    group_thousands(b.runs as u64)
                },
                // A range in one word, as a trigger's window is written, so
                // that the table splits on whitespace into its columns.
                s.patience_span(rows[b.y].iter().map(|&i| &cells[i]))
                    .map_or_else(
                        || "-".to_string(),
                        |span| patience_text(span).replace(" to ", ".."),
                    ),
            ]
        })
        .collect();
    let crossing = format!("50% crossing ({})", scale.heading);
    let y_title = axis_title(&s.y);
    let header = [
        y_title.as_str(),
        crossing.as_str(),
        "surely below",
        "surely above",
        if undecided.is_some() {
            "decided runs"
        } else {
            "runs"
        },
        if s.patience_given() {
            "patience"
        } else {
            "default patience"
        },
    ];
    format!(
        "storm probability over {} (x) by {} (y): {} cells, {} runs{}\n{}{}",
        scale.title,
        y_title,
        group_thousands(cells.len() as u64),
        group_thousands(cells.iter().map(|c| c.runs + c.unresolved).sum()),
        if cells.iter().any(|c| c.row_budget_spent) {
            "; the run budget stopped the refinement of some rows"
        } else {
            ""
        },
        undecided.map_or_else(String::new, |line| format!("{line}\n")),
        aligned_text_first(&header, &table, 1)
    )
}

/// How many of the map's runs were decided and why the rest were not
/// (the lengths that would decide them), if any was left unresolved.
fn decided_of(s: &MapSettings, cells: &[CellCounts]) -> Option<String> {
    let unresolved: u64 = cells.iter().map(|c| c.unresolved).sum();
    if unresolved == 0 {
        return None;
    }
    let decided: u64 = cells.iter().map(|c| c.runs).sum();
    let specs: Vec<RunSpec> = cells
        .iter()
        .filter(|c| c.unresolved > 0)
        .filter_map(|c| s.spec(&c.x, c.y).ok())
        .collect();
    Some(decided_line(
        decided,
        decided + unresolved,
        Undecided::of_all(&specs),
    ))
}

/// Warns on standard error when the default patience window differs
/// between the map's cells: each cell's verdicts are judged over its own
/// window (a map of rates and outages spanned 10 s to 478 s), so a storm
/// probability that changes along an axis may be the patience changing.
fn warn_varying_patience(s: &MapSettings, cells: &[CellCounts]) {
    if s.patience_given() {
        return;
    }
    if let Some(span @ (least, most)) = s.patience_span(cells)
        && least != most
    {
        super::note(&format!(
            "the default patience window differs between cells ({}): each cell's verdicts are \
             judged over its own; give --patience to judge every cell over the same window",
            patience_text(span)
        ));
    }
}

/// Warns on standard error when some of the map's runs were undecided:
/// how many were decided, and how many rows' crossings are not known.
fn warn_undecided(s: &MapSettings, cells: &[CellCounts]) {
    let Some(line) = decided_of(s, cells) else {
        return;
    };
    let boundaries = boundaries_of(cells, s.y.values.len());
    let unknown = boundaries
        .iter()
        .filter(|b| b.crossing == Crossing::Unknown)
        .count();
    let rows = boundaries.len();
    let crossings = match unknown {
        0 => "every row's crossing is known from its decided runs".to_string(),
        n if n == rows => "no crossing is known".to_string(),
        n => format!("the crossing of {n} of {rows} rows is not known"),
    };
    super::warn(&format!("{line}; {crossings}"));
}

/// The split cells, for people: each one's plain count beside splitting's
/// estimate of the backlog's storm before calm, which is a question of its
/// own (a run can pass through the storm region and still recover).
fn split_table(s: &MapSettings, cells: &[CellCounts]) -> String {
    let Some(split) = &s.split else {
        return String::new();
    };
    let scale = x_scale(s);
    let rows = rows_of(places(cells), s.y.values.len());
    let table: Vec<Vec<String>> = rows
        .iter()
        .flatten()
        .filter_map(|&i| cells[i].split.map(|f| (&cells[i], f)))
        .map(|(cell, f)| {
            let interval = match f.ci95 {
                Some(ci) if f.probability > 0.0 => {
                    format!("± {:.0}%", 100.0 * ci / f.probability)
                }
                Some(ci) => format!("± {}", significant(ci)),
                None => String::new(),
            };
            vec![
                s.y.values[cell.y].clone(),
                trimmed(scale.shown(cell.x_at), 4),
                format!("{} of {}", cell.stuck, cell.runs),
                significant(f.probability),
                interval,
                format!("≥ {} / ≤ {}", f.regions.high, f.regions.low),
                group_thousands(f.paths),
            ]
        })
        .collect();
    let y_title = axis_title(&s.y);
    let x_heading = scale.heading.clone();
    let header = [
        y_title.as_str(),
        x_heading.as_str(),
        "stuck",
        "storm before calm",
        "95%",
        "backlog storm / calm",
        "paths",
    ];
    if table.is_empty() {
        return format!(
            "\nsplitting: no cell's plain storm probability is below {} (--split-below)\n",
            trimmed(split.below, 4)
        );
    }
    format!(
        "\nsplitting: {} cells whose plain storm probability is below {} (--split-below), each \
         {} batches of {} paths; the chance the backlog (waiting attempts + retries waiting out \
         their delay) reaches the storm region before calm after the trigger (within the run \
         without one), not the verdict's stuck\n{}{}",
        table.len(),
        trimmed(split.below, 4),
        split.how.batches,
        group_thousands(split.how.particles as u64),
        split_reasons(s, cells),
        aligned_text_first(&header, &table, 1)
    )
}

/// Why the split cells' default regions are where they are, a line each:
/// the reason itself where every split cell has the same, else the rule
/// each cell's comes from. Nothing for regions given.
fn split_reasons(s: &MapSettings, cells: &[CellCounts]) -> String {
    let Some(split) = &s.split else {
        return String::new();
    };
    let chosen: Vec<ChosenRegions> = cells
        .iter()
        .filter(|cell| cell.split.is_some())
        .filter_map(|cell| s.spec(&cell.x, cell.y).ok())
        .filter_map(|spec| split.how.regions(&spec))
        .collect();
    let mut out = String::new();
    let storms: BTreeSet<(usize, Option<String>)> = chosen
        .iter()
        .map(|c| (c.regions.high, storm_reason(&c.storm)))
        .collect();
    match storms.iter().next() {
        Some((high, Some(why))) if storms.len() == 1 => {
            let _ = writeln!(out, "storm ≥ {high} by default: {why}");
        }
        Some(_) if split.how.high.is_none() => out.push_str(
            "storm region by default, each cell's own: 2 × workers × timeout / mean service \
             (twice the backlog its workers clear within one timeout), or 90% of queue_limit if \
             lower\n",
        ),
        _ => {}
    }
    let calms: BTreeSet<(usize, Option<String>)> = chosen
        .iter()
        .map(|c| (c.regions.low, calm_reason(c)))
        .collect();
    match calms.iter().next() {
        Some((low, Some(why))) if calms.len() == 1 => {
            let _ = writeln!(out, "calm ≤ {low} by default: {why}");
        }
        Some(_) if split.how.low.is_none() => out.push_str(
            "calm region by default, each cell's own: 10% of queue_limit, or without one the \
             queue its steady state (M/M/c at its offered load) exceeds 5% of the time at most\n",
        ),
        _ => {}
    }
    out
}
