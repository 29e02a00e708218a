//! `herdsim sweep` and `herdsim merge`: grids to CSV, streamed, resumable and
//! shardable.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::import::{ImportFlags, apply_imported, read_configs};
use super::output::{
    Access, LineFile, Locked, MAX_SCENARIO_BYTES, MAX_TABLE_BYTES, check_distinct, line_target,
    open_locked, open_stream, read_input, warn_extensions, with_suffix, write_whole,
};
use super::params::{Lists, ParamFlags};
use super::progress::runs_bar;
use super::run::{OUTPUTS, SEEDS};
use super::{CliError, point_message};
use crate::base::format::{counted, group_thousands};
use crate::base::time::{Micros, format_duration};
use crate::experiment::grid::Grid;
use crate::experiment::scenario::Scenario;
use crate::experiment::sweep::{Shard, SweepPlan, run_sweep};
use crate::model::ResourceKind;
use crate::report::csv::{self as sweep_csv, SweepColumns};
use crate::report::map_csv::merge_map_shards;
use crate::report::sweep_file::{check_finished_rows, merge_shards};
use crate::spec::params::{PARAMS, parameter_columns};
use crate::spec::{self, ParamError};
use crate::study::overload::{study, study_names};

/// The long help of `herdsim sweep`: the axes and columns from the registry.
pub fn sweep_help() -> String {
    let keys: Vec<&str> = PARAMS.iter().map(|p| p.key).collect();
    let wrap = |words: &[&str]| -> String {
        let mut lines = vec![String::new()];
        for word in words {
            let line = lines.last_mut().expect("one line at least");
            if !line.is_empty() && line.len() + word.len() + 2 > 90 {
                lines.push(String::new());
            }
            let line = lines.last_mut().expect("one line at least");
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.join("\n")
    };
    let list = |names: &[&str]| {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i + 1 < names.len() {
                    format!("{n},")
                } else {
                    n.to_string()
                }
            })
            .collect::<Vec<_>>()
    };
    let axes = list(&keys);
    let mut columns = list(&parameter_columns());
    // The closing parenthesis stays on its word's line.
    if let Some(last) = columns.last_mut() {
        last.push_str("),");
    }
    let mut axes_text: Vec<&str> = "Any parameter given as a list (in the scenario file, or as a \
        list flag) is a grid axis; the points are their cartesian product, numbered with the \
        last axis varying fastest in the order"
        .split(' ')
        .collect();
    axes_text.extend(axes.iter().map(String::as_str));
    axes_text.extend(". Flags replace the scenario's values for their keys.".split(' '));
    let mut columns_text: Vec<&str> = "Columns: point, the parameters (".split(' ').collect();
    columns_text.extend(columns.iter().map(String::as_str));
    columns_text.extend(
        "replicates, master_seed, sweep_id (the sweep's fingerprint) and sweep_points (its \
         size), then for every metric its _mean, _sd, _ci95, _min and _max, and row_checksum \
         (shows a row edited since). With --per-run: point, replicate, policy_seed, \
         environment_seed, then the same columns with each metric once. On the server model the \
         metrics are its own (see `herdsim run --resource server`); a grid with call chains \
         (depth above 1) adds, for services 1 (the one users call) to its deepest chain's last \
         (the server), service{i}_attempts, _amplification, _success_rate, _timeouts, \
         _wasted_work, _latency_p50_ms and _latency_p99_ms, one row per point still (empty \
         past a point's depth, and at depth 1, where the server's columns say it)."
            .split(' '),
    );
    format!(
        "{}\n\n\
         Rows are written in grid order as they complete, one line at a time, so an interrupted \
         sweep\nleaves every finished row readable; --resume continues it to the file an \
         uninterrupted sweep\nwrites, byte for byte. --force replaces an existing FILE whole: \
         the rows go to FILE.new beside\nit, renamed over FILE when every row is in, so an \
         interrupted sweep leaves FILE as it was;\n--resume then continues FILE.new (not FILE) \
         and replaces FILE when it is whole. While a sweep\nwrites, it holds a lock on its \
         files: a second sweep on the same output is refused.\n--shard K/N runs the K-th of N \
         contiguous slices of the points; `herdsim merge` joins the\nshard files into the \
         unsharded file, and refuses files that do not make exactly one whole\nsweep.\n\n{}",
        wrap(&axes_text).replace(" .", "."),
        wrap(&columns_text).replace("( ", "(")
    )
}

/// The most points one sweep or comparison runs: each is checked before any
/// work, and each is at least one run.
const MAX_POINTS: usize = 1_000_000;

/// The grid of a sweep or comparison: a scenario file, and flags that replace
/// its values.
#[derive(Debug, Args)]
pub struct GridArgs {
    #[command(flatten)]
    params: ParamFlags<Lists>,

    /// Replicate seeds per point [default: the scenario's, or 1]
    #[arg(long, value_name = "R", value_parser = spec::parse_replicates, allow_hyphen_values = true, help_heading = SEEDS)]
    seeds: Option<u32>,

    /// Master seed [default: the scenario's, or 42]
    #[arg(long, value_name = "SEED", value_parser = spec::parse_master_seed, allow_hyphen_values = true, help_heading = SEEDS)]
    seed: Option<u64>,

    #[command(flatten)]
    import: ImportFlags,

    /// Stop at the first run that reaches this many calls [default: no limit]
    ///
    /// Checked every 1,048,576 calls; every row before it is kept, and the
    /// command says so and exits with code 1.
    #[arg(long, value_name = "N", value_parser = parse_max_events, allow_hyphen_values = true, help_heading = OUTPUTS)]
    max_events: Option<u64>,
}

/// Parses a call limit (as `--max-events` does).
pub fn parse_max_events(text: &str) -> Result<u64, ParamError> {
    spec::parse_count(text, 1, u64::MAX)
}

/// Why a sweep stopped early.
enum Stopped {
    /// A run reached `--max-events`: the row's point.
    Limit(usize),
    /// Writing failed.
    Io(std::io::Error),
}

/// The error of a run stopped at `--max-events` in point `point`.
pub fn limit_error(point: usize, max_events: u64, kept: &str) -> CliError {
    CliError::Limit(format!(
        "a run of point {point} {}",
        stop_cause(max_events, kept)
    ))
}

/// Why a run of a sweep or map stopped short, given the event limit in
/// force: `--max-events`, or one of a server run's bounds (which `run`
/// names exactly, with its figure); `kept` says what is safe meanwhile.
pub fn stop_cause(max_events: u64, kept: &str) -> String {
    let bounds = format!(
        "one of a server run's bounds (a time series past {} windows, more than {} requests \
         in flight, or an event past the clock's end at 292 years; `herdsim run` with its \
         values names which)",
        group_thousands(crate::spec::bounds::MAX_WINDOWS),
        group_thousands(crate::spec::bounds::MAX_IN_FLIGHT),
    );
    if max_events == u64::MAX {
        format!("was cut by {bounds}; {kept}widen --window or give --horizon to let it finish")
    } else {
        format!(
            "reached --max-events {} or was cut by {bounds}; {kept}raise --max-events (or \
             give --horizon) to let it finish",
            group_thousands(max_events)
        )
    }
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario file (TOML); without one, the grid comes from the flags alone
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    /// Output CSV file
    #[arg(long, short, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = OUTPUTS)]
    out: PathBuf,

    #[command(flatten)]
    grid: GridArgs,

    /// One row per run (with its seed) instead of one per point
    #[arg(long, help_heading = OUTPUTS)]
    per_run: bool,

    /// Run only the K-th of N slices of the points, such as 2/8
    #[arg(long, value_name = "K/N", allow_hyphen_values = true, help_heading = OUTPUTS)]
    shard: Option<Shard>,

    /// Continue an interrupted sweep in FILE
    ///
    /// Or in FILE.new, left by an interrupted --force, which then replaces
    /// FILE when whole.
    #[arg(long, conflicts_with = "force", help_heading = OUTPUTS)]
    resume: bool,

    /// Replace FILE if it exists, whole
    ///
    /// The rows go to FILE.new, renamed over FILE when every row is in.
    #[arg(long, help_heading = OUTPUTS)]
    force: bool,

    /// Hide the progress bar and the closing summary
    #[arg(long, short, help_heading = OUTPUTS)]
    quiet: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard files of one sweep, in any order
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,

    /// Output CSV file
    #[arg(long, short, value_name = "FILE", allow_hyphen_values = true)]
    out: PathBuf,

    /// Replace the output file if it exists
    #[arg(long)]
    force: bool,
}

/// Reads a scenario file, with errors that name it (and the line and key).
pub fn read_scenario(path: &Path) -> Result<Scenario, CliError> {
    let shown = path.display().to_string();
    let text = read_input(path, "scenario", MAX_SCENARIO_BYTES)?;
    let mut scenario =
        Scenario::from_toml(&shown, &text).map_err(|e| CliError::Usage(e.to_string()))?;
    // Imported files are named relative to the scenario's directory.
    let dir = path.parent().unwrap_or(Path::new(""));
    for (file, _) in &mut scenario.imports {
        if Path::new(file.as_str()).is_relative() {
            *file = dir.join(&*file).display().to_string();
        }
    }
    if let Some((name, line)) = &scenario.study
        && study(name).is_none()
    {
        return Err(CliError::Usage(format!(
            "{shown}:{line}: key 'study': unknown study '{name}': expected one of {}",
            study_names()
        )));
    }
    Ok(scenario)
}

/// `scenario` with the settings of its imported files and of `import`'s
/// (`--import`) in place where it has none of its own (once): the
/// scenario's `import_select` choices first, then `--select`'s.
pub fn with_imports(mut scenario: Scenario, import: &ImportFlags) -> Result<Scenario, CliError> {
    if scenario.imports_applied {
        return Ok(scenario);
    }
    scenario.imports_applied = true;
    let mut files: Vec<PathBuf> = scenario
        .imports
        .iter()
        .map(|(f, _)| PathBuf::from(f))
        .collect();
    files.extend(import.files.iter().cloned());
    if files.is_empty() {
        return Ok(scenario);
    }
    // A flag's choice of a kind replaces the scenario's, as flags override
    // the scenario's keys; two of one kind among the flags are refused.
    let mut choices = import.choices.clone();
    let from_scenario: Vec<_> = scenario
        .import_select
        .iter()
        .filter(|(kind, _)| !choices.select.iter().any(|(k, _)| k == kind))
        .cloned()
        .collect();
    choices.select.splice(0..0, from_scenario);
    let imported = read_configs(&files, &choices)?;
    apply_imported(&imported, &mut scenario.grid)?;
    Ok(scenario)
}

impl GridArgs {
    /// True if no flag of the grid was given.
    pub fn is_empty(&self) -> bool {
        self.params.keys().is_empty()
            && self.import.files.is_empty()
            && self.import.choices.is_empty()
            && self.seeds.is_none()
            && self.seed.is_none()
            && self.max_events.is_none()
    }

    /// The call limit of every run, if given.
    pub fn max_events(&self) -> Option<u64> {
        self.max_events
    }

    /// The master seed flag, if given.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// The seeds flag, if given.
    pub fn seeds(&self) -> Option<u32> {
        self.seeds
    }

    /// The flags given, as a user would type them again: the parameters
    /// (but `except`'s keys), the imported files and their choices; not the
    /// seeds or the call limit.
    pub fn flag_words(&self, except: &[&str]) -> Vec<String> {
        let mut words = Vec::new();
        for (param, values) in &self.params.given {
            if !except.contains(&param.key) {
                words.push(format!("--{}", param.flag()));
                words.push(values.join(&param.list_separator.to_string()));
            }
        }
        for file in &self.import.files {
            words.push("--import".to_string());
            words.push(file.display().to_string());
        }
        for (kind, name) in &self.import.choices.select {
            words.push("--select".to_string());
            words.push(format!("{kind}={name}"));
        }
        if self.import.choices.warn_unknown {
            words.push("--warn-unknown".to_string());
        }
        words
    }

    /// The import flags given (`--import`, `--select`).
    pub fn import_flags(&self) -> &ImportFlags {
        &self.import
    }

    /// `scenario` with the settings of its imported files and of `--import`
    /// in place where it has none of its own (once).
    pub fn imported(&self, scenario: Scenario) -> Result<Scenario, CliError> {
        with_imports(scenario, &self.import)
    }

    /// `scenario` with its imports, then the flags' values replacing its own,
    /// every point checked.
    pub fn apply(&self, scenario: Scenario) -> Result<Scenario, CliError> {
        let mut scenario = self.imported(scenario)?;
        self.params.apply_to(&mut scenario.grid);
        let mut changed = self.params.keys();
        if let Some(r) = self.seeds {
            scenario.replicates = r;
            changed.push("seeds");
        }
        if let Some(seed) = self.seed {
            scenario.master_seed = seed;
            changed.push("seed");
        }
        if let Some(description) = scenario.description.as_mut()
            && !changed.is_empty()
        {
            *description += &format!(" (changed on the command line: {})", changed.join(", "));
        }
        let points = scenario.grid.checked_len().filter(|&n| n <= MAX_POINTS);
        if points.is_none() {
            return Err(CliError::Usage(format!(
                "the grid has {} points ({}); at most {} are run in one sweep: give fewer values",
                scenario.grid.checked_len().map_or_else(
                    || "more than 18,446,744,073,709,551,615".to_string(),
                    |n| group_thousands(n as u64)
                ),
                scenario.grid.shape(),
                group_thousands(MAX_POINTS as u64)
            )));
        }
        for i in 0..scenario.grid.len() {
            let point = scenario.grid.point(i);
            point
                .validate()
                .map_err(|e| CliError::Usage(point_message(&scenario, i, &e)))?;
            let first = scenario.grid.point(0).resource;
            if (point.resource == ResourceKind::Server) != (first == ResourceKind::Server) {
                // Where the two resources were given: the file's line, or
                // the flag.
                let place = |at: usize| {
                    scenario
                        .origin("resource", at)
                        .map_or_else(|| "--resource".to_string(), |o| o.to_string())
                };
                return Err(CliError::Usage(format!(
                    "{}: resource {} (point {i}) in a grid whose point 0 is on {first} ({}): the \
                     server model's metrics are its own, so sweep it apart from the other models",
                    place(i),
                    point.resource,
                    place(0)
                )));
            }
        }
        Ok(scenario)
    }
}

/// Warns when the default patience window differs between a grid's server
/// points with triggers: each verdict is judged over its own window, so a
/// storm probability that changes along an axis may be the patience
/// changing (a map's cells spanned 10 s to 478 s).
pub(super) fn warn_varying_patience(grid: &Grid) {
    let defaults: Vec<(usize, Micros)> = (0..grid.len())
        .map(|i| (i, grid.point(i)))
        .filter(|(_, p)| {
            p.resource == ResourceKind::Server
                && p.server.patience_us.is_none()
                && !p.server.triggers.0.is_empty()
        })
        .map(|(i, p)| (i, p.patience_us()))
        .collect();
    let least = defaults.iter().min_by_key(|(_, p)| *p);
    let most = defaults.iter().max_by_key(|(_, p)| *p);
    if let (Some(&(i, low)), Some(&(j, high))) = (least, most)
        && low != high
    {
        super::note(&format!(
            "the default patience window differs between points ({} at point {i} to {} at \
             point {j}): each verdict is judged over its own; give --patience to judge every \
             point over the same window",
            format_duration(low),
            format_duration(high)
        ));
    }
}

pub fn sweep(args: &SweepArgs) -> Result<(), CliError> {
    let started = Instant::now();
    warn_extensions(&[("--out", Some(&args.out), "csv")]);
    if let Some(path) = &args.scenario {
        check_distinct(&[("the scenario", path), ("--out", &args.out)])?;
    }
    let scenario = match &args.scenario {
        Some(path) => read_scenario(path)?,
        None => Scenario::default(),
    };
    let scenario = args.grid.apply(scenario)?;
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let mut plan = SweepPlan {
        scenario: &scenario,
        points: shard.points(scenario.grid.len()),
        per_run: args.per_run,
        rows_done: 0,
        max_events: args.grid.max_events().unwrap_or(u64::MAX),
    };
    let header = sweep_csv::line(&sweep_csv::header(args.per_run, plan.metric_columns()));
    let mut output = open_output(&args.out, args, &plan, &header)?;
    let rows_done = output.rows_done;
    plan.rows_done = rows_done;
    let jobs = plan.jobs();
    if !args.quiet {
        announce(&plan, shard, args);
    }
    write_rows(&plan, &mut output, args)?;
    finish_output(output)?;
    // After the rows, so that a refusal stays one line.
    warn_varying_patience(&scenario.grid);
    if !args.quiet {
        eprintln!(
            "{} rows ({} runs{}) in {:.2} s → {}",
            group_thousands(plan.total_rows() as u64),
            group_thousands(jobs.len() as u64),
            if rows_done > 0 {
                format!(", resumed after {rows_done} rows")
            } else {
                String::new()
            },
            started.elapsed().as_secs_f64(),
            args.out.display()
        );
    }
    Ok(())
}

/// Says how many runs the plan will make, and warns of a shard with none.
fn announce(plan: &SweepPlan<'_>, shard: Shard, args: &SweepArgs) {
    if plan.points.is_empty() {
        super::warn(&format!(
            "shard {shard} of a {}-point grid has no points: '{}' holds the header only",
            plan.scenario.grid.len(),
            args.out.display()
        ));
    }
    eprintln!(
        "{} × {}: {} to go",
        counted(plan.points.len() as u64, "point", "points"),
        counted(
            u64::from(plan.scenario.replicates),
            "replicate",
            "replicates"
        ),
        counted(plan.jobs().len() as u64, "run", "runs")
    );
}

/// Where a sweep's rows go, and the locks held while they are written.
struct Output {
    rows: LineFile,
    /// The file the rows are written to: the output, or (`--force` over an
    /// existing file) its replacement beside it.
    written: PathBuf,
    /// With `--force` over an existing file: that file, replaced by
    /// `written` (renamed over it) once every row is in.
    replaces: Option<PathBuf>,
    /// The replaced file, locked until it is replaced.
    _held: Option<File>,
    /// Rows already there (`--resume`).
    rows_done: usize,
}

/// Runs the plan, writing each row as it completes; stops at the first run
/// that reaches `--max-events`, and at the first failed write, with the
/// file cut back to its last whole row.
fn write_rows(plan: &SweepPlan<'_>, output: &mut Output, args: &SweepArgs) -> Result<(), CliError> {
    let progress = runs_bar(plan.jobs().len() as u64, args.quiet);
    let sweep = SweepColumns::of(plan);
    let rows = &mut output.rows;
    let written = run_sweep(
        plan,
        || progress.inc(1),
        |row| {
            if !row.complete() {
                return Err(Stopped::Limit(row.point()));
            }
            super::still_wanted().map_err(Stopped::Io)?;
            let line = sweep_csv::row_line(&row, &sweep);
            rows.write_lines(&line).map_err(Stopped::Io)
        },
    );
    progress.finish_and_clear();
    let shown = output.written.display();
    let replacing = match &output.replaces {
        Some(old) => format!(", which replaces '{}' when whole", old.display()),
        None => String::new(),
    };
    match written {
        Ok(()) => Ok(()),
        Err(Stopped::Limit(point)) => {
            let kept =
                format!("every row before it is in '{shown}'{replacing} (--resume continues); ");
            Err(limit_error(point, plan.max_events, &kept))
        }
        Err(Stopped::Io(e)) => Err(super::sink_error(&e, &shown.to_string(), "row", &replacing)),
    }
}

/// Once every row is in: a replacement is renamed over the file it
/// replaces.
fn finish_output(output: Output) -> Result<(), CliError> {
    let Some(old) = &output.replaces else {
        return Ok(());
    };
    let shown = output.written.display();
    let failed = |e: std::io::Error| {
        CliError::Usage(format!(
            "cannot replace '{}' with '{shown}': {e}",
            old.display()
        ))
    };
    output.rows.sync().map_err(failed)?;
    std::fs::rename(&output.written, old).map_err(failed)
}

/// The name a file's replacement has beside it while `sweep --force` writes
/// it: `FILE.new`.
fn replacement_of(file: &Path) -> PathBuf {
    with_suffix(file, ".new")
}

/// Opens the output for writing rows, with the header in place, and locked
/// so no other sweep writes it meanwhile: a new file; a replacement beside
/// an existing one (`--force`: renamed over it when whole, so an
/// interrupted sweep leaves the old file as it was); or an interrupted file
/// to continue (`--resume`: the replacement of an interrupted `--force`
/// sweep if there is one, else the file), whose finished rows are checked
/// to belong to this sweep.
fn open_output(
    path: &Path,
    args: &SweepArgs,
    plan: &SweepPlan<'_>,
    header: &str,
) -> Result<Output, CliError> {
    let shown = path.display();
    let header_failed = |e: std::io::Error| CliError::Usage(format!("cannot write '{shown}': {e}"));
    let Some(file) = line_target(path)? else {
        // A device or a pipe: written in place, nothing to continue.
        if args.resume {
            read_input(path, "sweep file", MAX_TABLE_BYTES)?;
        }
        let mut rows = open_stream(path)?;
        rows.write_lines(header).map_err(header_failed)?;
        return Ok(Output {
            rows,
            written: path.to_path_buf(),
            replaces: None,
            _held: None,
            rows_done: 0,
        });
    };
    let replacement = replacement_of(&file);
    if let Some(scenario) = &args.scenario {
        check_distinct(&[
            ("the scenario", scenario),
            ("the replacement of --out", &replacement),
        ])?;
    }
    let what = "--out";
    let replacing = "the rows replacing --out";
    let access = if args.resume {
        Access::Append
    } else {
        Access::Hold
    };
    let existing = open_locked(&file, what, access, false)?;
    let unfinished = open_locked(&replacement, replacing, Access::Append, false)?;
    let shown_new = replacement.display();
    if let Some(new) = &unfinished {
        let mut start = [0u8; 6];
        let n = (&new.file).read(&mut start).unwrap_or(0);
        if !b"point,".starts_with(&start[..n]) {
            return Err(CliError::Usage(format!(
                "'{shown_new}' exists and is not a sweep's rows: `sweep --force` writes the rows \
                 replacing '{shown}' there; move it away"
            )));
        }
    }
    if args.resume {
        if let Some(new) = unfinished {
            if !args.quiet {
                eprintln!(
                    "continuing the interrupted `sweep --force` in '{shown_new}': it replaces \
                     '{shown}' when whole"
                );
            }
            let (rows, rows_done) = resume(&replacement, new.file, plan, header)?;
            return Ok(Output {
                rows,
                written: replacement,
                replaces: Some(file),
                _held: existing.map(|l| l.file),
                rows_done,
            });
        }
        if let Some(old) = existing {
            let (rows, rows_done) = resume(path, old.file, plan, header)?;
            return Ok(Output {
                rows,
                written: path.to_path_buf(),
                replaces: None,
                _held: None,
                rows_done,
            });
        }
        if !args.quiet {
            // A requeued array task's first start: nothing to continue yet.
            eprintln!("'{shown}' does not exist yet: --resume starts it from the first row");
        }
    } else if let Some(old) = existing {
        if !args.force {
            let unfinished = if unfinished.is_some() {
                format!(
                    " ('{shown_new}' holds the rows of an interrupted `sweep --force`: --resume \
                     continues them)"
                )
            } else {
                String::new()
            };
            return Err(CliError::Usage(format!(
                "'{shown}' exists: pass --force to replace it or --resume to continue it{unfinished}"
            )));
        }
        // Written beside, renamed over it when whole.
        let new = match unfinished {
            Some(new) => {
                new.file.set_len(0).map_err(header_failed)?;
                new
            }
            None => create_locked(&replacement, replacing)?,
        };
        let mut rows = LineFile::new(new.file).map_err(header_failed)?;
        rows.write_lines(header).map_err(header_failed)?;
        return Ok(Output {
            rows,
            written: replacement,
            replaces: Some(file),
            _held: Some(old.file),
            rows_done: 0,
        });
    } else if let Some(_new) = unfinished {
        if !args.force {
            return Err(CliError::Usage(format!(
                "'{shown_new}' holds the rows of an interrupted `sweep --force` of '{shown}': pass \
                 --resume to continue them or --force to start over"
            )));
        }
        std::fs::remove_file(&replacement)
            .map_err(|e| CliError::Usage(format!("cannot remove '{shown_new}': {e}")))?;
    }
    let new = create_locked(&file, what)?;
    let mut rows = LineFile::new(new.file).map_err(header_failed)?;
    rows.write_lines(header).map_err(header_failed)?;
    Ok(Output {
        rows,
        written: path.to_path_buf(),
        replaces: None,
        _held: None,
        rows_done: 0,
    })
}

/// Creates `path` (exclusively) and locks it; refused if another process
/// made it meanwhile.
fn create_locked(path: &Path, what: &str) -> Result<Locked, CliError> {
    match open_locked(path, what, Access::Append, true)? {
        Some(locked) if locked.created => Ok(locked),
        _ => Err(CliError::Usage(format!(
            "'{}' ({what}) appeared while this sweep started: is another sweep writing it?",
            path.display()
        ))),
    }
}

/// Continues the interrupted sweep file `path`, open (and locked) as
/// `file`: its finished rows checked, a line cut short by the interruption
/// dropped. The file to append to, and how many rows it holds.
fn resume(
    path: &Path,
    file: File,
    plan: &SweepPlan<'_>,
    header: &str,
) -> Result<(LineFile, usize), CliError> {
    let shown = path.display();
    let text = read_input(path, "sweep file", MAX_TABLE_BYTES)?;
    if text.contains('\r') {
        return Err(CliError::Usage(format!(
            "'{shown}' has CR line endings: herdsim writes LF only, so it was changed since \
             (pass --force to start over)"
        )));
    }
    // A line cut short by the interruption is dropped: it is written again.
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    let mut lines = text[..complete].lines();
    // Checked before the file is touched.
    let rows_done = match lines.next() {
        None => 0,
        Some(first) if first == header.trim_end() => {
            let rows: Vec<&str> = lines.collect();
            check_finished_rows(&rows, plan).map_err(|(row, why)| {
                CliError::Usage(format!(
                    "'{shown}' line {}: {why}, so it cannot be continued (pass --force to start over)",
                    row + 2
                ))
            })?;
            rows.len()
        }
        Some(_) => {
            return Err(CliError::Usage(format!(
                "'{shown}' has another header: it is not from this sweep (pass --force to start over)"
            )));
        }
    };
    let failed = |e: std::io::Error| CliError::Usage(format!("cannot continue '{shown}': {e}"));
    // Appends go to the end as it is after the cut.
    file.set_len(complete as u64).map_err(failed)?;
    let mut rows = LineFile::new(file).map_err(failed)?;
    if complete == 0 {
        rows.write_lines(header).map_err(failed)?;
    }
    Ok((rows, rows_done))
}

pub fn merge(args: &MergeArgs) -> Result<(), CliError> {
    warn_extensions(&[("--out", Some(&args.out), "csv")]);
    for input in &args.files {
        check_distinct(&[("a shard", input), ("--out", &args.out)])?;
    }
    let files = args
        .files
        .iter()
        .map(|path| {
            let shown = path.display().to_string();
            read_input(path, "shard", MAX_TABLE_BYTES).map(|text| (shown.clone(), text))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // A map's shards (`herdsim map --shard`) or a sweep's.
    let is_map = files.iter().any(|(_, text)| text.starts_with("map_row,"));
    let text = if is_map {
        merge_map_shards(&files)?
    } else {
        merge_shards(&files)?
    };
    write_whole(&args.out, args.force, &text)
}
