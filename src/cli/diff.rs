//! `herdsim diff A B`: am I affected? One service assessed twice, under
//! configuration A and under B (any two files `herdsim import` reads, or
//! one file read two ways with `--select-a`/`--select-b`), with the same
//! stalls, seeds and maps, and the figures set side by side.

use std::path::{Path, PathBuf};

use clap::Args;

use super::assess::{assess_seeds, check_service, parse_share, stall_kinds};
use super::import::ImportFlags;
use super::progress::runs_bar;
use super::sweep::{GridArgs, read_scenario};
use super::{CliError, write_stdout};
use crate::experiment::assess::{
    AssessSettings, DEFAULT_BLIP_US, DEFAULT_PARTIAL, DEFAULT_ROUNDS, assess,
};
use crate::experiment::scenario::Scenario;
use crate::import::parse_select;
use crate::report::assessment::answer;
use crate::report::diff::{diff_json, diff_rows, diff_text, settings_that_differ, summary};

/// The heading of diff's own flags.
const DIFF: &str = "Diff";

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Configuration A (any file `herdsim import` reads)
    #[arg(value_name = "A")]
    a: PathBuf,

    /// Configuration B (or A again, read another way with --select-b)
    #[arg(value_name = "B")]
    b: PathBuf,

    /// Scenario file (TOML) of the service both are assessed on (server
    /// model, one point, no trigger); or give it by the flags
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    grid: GridArgs,

    /// A choice of what A's file offers, KIND=NAME (as --select); repeat for several
    #[arg(long = "select-a", value_name = "KIND=NAME", value_parser = parse_select, help_heading = DIFF)]
    select_a: Vec<(String, String)>,

    /// A choice of what B's file offers, KIND=NAME (as --select); repeat for several
    #[arg(long = "select-b", value_name = "KIND=NAME", value_parser = parse_select, help_heading = DIFF)]
    select_b: Vec<(String, String)>,

    /// A stall kind to compare margins of; repeat for several [default: outage, capacity:0, slow:2]
    #[arg(long = "stall", value_name = "KIND", value_parser = super::assess::parse_kind, allow_hyphen_values = true, help_heading = DIFF)]
    kinds: Vec<String>,

    /// The share of attempts failing in the partial failure (0 to 1, not 0)
    #[arg(long, value_name = "P", default_value_t = DEFAULT_PARTIAL, value_parser = parse_share, allow_hyphen_values = true, help_heading = DIFF)]
    partial: f64,

    /// Refinement rounds of each map (0 to 10)
    #[arg(long, value_name = "ROUNDS", default_value_t = DEFAULT_ROUNDS, value_parser = super::assess::parse_rounds, allow_hyphen_values = true, help_heading = DIFF)]
    refine: u32,

    /// Print the comparison as one JSON object instead of text
    #[arg(long, help_heading = super::run::OUTPUTS)]
    json: bool,

    /// Hide the progress bar
    #[arg(long, short, help_heading = super::run::OUTPUTS)]
    quiet: bool,
}

/// What the long help adds before the examples.
pub fn diff_help() -> String {
    "Both are assessed as `herdsim assess` assesses one (the margins and headroom by maps, the \
     failure figures by runs), with the same stalls, seeds and master seed, so a difference is \
     the configurations' and not the draws'. Means are compared by the z-score of their \
     difference (their 95% intervals' spread), stuck shares by a two-proportion z-score, and \
     boundaries by whether their surely-survived and surely-down places overlap. The summary \
     names the figure that moved most (|z| ≥ 3) and every setting that differs."
        .to_string()
}

/// The service with configuration `file` and `select`'s choices (with the
/// shared `--import` files and `--select`s).
fn service_with(
    args: &DiffArgs,
    file: &Path,
    select: &[(String, String)],
) -> Result<Scenario, CliError> {
    let scenario = match &args.scenario {
        Some(path) => read_scenario(path)?,
        None => Scenario::default(),
    };
    let shared = args.grid.import_flags();
    let mut import: ImportFlags = shared.clone();
    import.files.push(file.to_path_buf());
    import.choices.select.extend(select.iter().cloned());
    let scenario = super::sweep::with_imports(scenario, &import)?;
    check_service(scenario, &args.grid, "diff")
}

pub fn diff_command(args: &DiffArgs) -> Result<(), CliError> {
    let sides = [
        service_with(args, &args.a, &args.select_a)?,
        service_with(args, &args.b, &args.select_b)?,
    ];
    let settings: Vec<AssessSettings> = sides
        .iter()
        .map(|scenario| AssessSettings {
            base: scenario.grid.point(0),
            kinds: stall_kinds(&args.kinds),
            blips: vec![DEFAULT_BLIP_US],
            partial: args.partial,
            suggest: None,
            seeds: assess_seeds(&args.grid, scenario),
            rounds: args.refine,
            master_seed: scenario.master_seed,
            splitting: None,
        })
        .collect();
    let bar = runs_bar(0, args.quiet);
    let mut answers = Vec::new();
    for (side, s) in ["A", "B"].iter().zip(&settings) {
        let made = assess(
            s,
            args.grid.max_events().unwrap_or(u64::MAX),
            |stage, jobs| {
                bar.set_length(jobs as u64);
                bar.set_position(0);
                bar.set_message(format!("{side}: {stage}"));
            },
            || bar.inc(1),
        )
        .map_err(|stop| {
            CliError::Limit(format!(
                "a run of {side}'s {} reached --max-events: nothing is written",
                stop.stage
            ))
        })?;
        answers.push(answer(&made, &[]));
    }
    bar.finish_and_clear();
    let rows = diff_rows(&answers[0], &answers[1]);
    let differ = settings_that_differ(&settings[0].base, &settings[1].base);
    let line = summary(&rows, &differ);
    let name = |file: &Path, select: &[(String, String)]| {
        let mut text = file.display().to_string();
        if !select.is_empty() {
            let choices: Vec<String> = select.iter().map(|(k, v)| format!("{k}={v}")).collect();
            text += &format!(" ({})", choices.join(", "));
        }
        text
    };
    let mut heading = vec![format!(
        "herdsim diff: A is {}, B is {}",
        name(&args.a, &args.select_a),
        name(&args.b, &args.select_b)
    )];
    // The service (its first two lines, the same for both), then each
    // side's clients.
    heading.extend(answers[0].workload.iter().take(2).cloned());
    for (side, answer) in ["A", "B"].iter().zip(&answers) {
        for line in answer.workload.iter().skip(2) {
            heading.push(format!("{side}: {line}"));
        }
    }
    heading.push(answers[0].method.clone());
    write_stdout(&if args.json {
        diff_json(&heading, &rows, &differ, &line)
    } else {
        diff_text(&heading, &rows, &line)
    })
}
