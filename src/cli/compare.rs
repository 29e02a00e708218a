//! `herdsim compare`: a scenario's results beside the published figures.

use std::path::PathBuf;

use clap::Args;

use super::progress::runs_bar;
use super::sweep::{GridArgs, read_scenario, write_whole};
use super::{CliError, write_stdout};
use crate::compare::Comparison;
use crate::published::Published;
use crate::report::{compare_markdown, compare_table, csv as sweep_csv};
use crate::scenario::Scenario;
use crate::sweep::{Shard, SweepPlan, run_sweep};

/// The default scenario, built in so `compare` works from any directory.
const FOUR_STRATEGIES: (&str, &str) = (
    "scenarios/four-strategies.toml",
    include_str!("../../scenarios/four-strategies.toml"),
);

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Scenario file [default: scenarios/four-strategies.toml, built in]
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    grid: GridArgs,

    /// Print a Markdown table instead of a text one
    #[arg(long)]
    markdown: bool,

    /// Also write every metric of every point, with the published figures and
    /// verdicts, as CSV (one row per point and metric)
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Replace the CSV file if it exists
    #[arg(long)]
    force: bool,

    /// Hide the progress bar
    #[arg(long, short)]
    quiet: bool,
}

pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    let scenario = match &args.scenario {
        Some(path) => read_scenario(path)?,
        None => Scenario::from_toml(FOUR_STRATEGIES.0, FOUR_STRATEGIES.1)
            .expect("the built-in scenario parses"),
    };
    let scenario = args.grid.apply(scenario)?;
    if let Some(path) = &args.csv
        && path.exists()
        && !args.force
    {
        return Err(CliError::Usage(format!(
            "'{}' exists: pass --force to replace it",
            path.display()
        )));
    }

    // The sweep machinery, aggregated rows kept in memory: one row a point.
    let plan = SweepPlan {
        scenario: &scenario,
        points: Shard::WHOLE.points(scenario.grid.len()),
        per_run: false,
        rows_done: 0,
    };
    let progress = runs_bar(plan.jobs().len() as u64, args.quiet);
    let mut rows = Vec::with_capacity(plan.total_rows());
    run_sweep(
        &plan,
        || progress.inc(1),
        |row| {
            rows.push(row);
            Ok::<_, CliError>(())
        },
    )?;
    progress.finish_and_clear();

    let comparison = Comparison::new(&scenario, rows, &Published::embedded());
    if let Some(path) = &args.csv {
        let mut text = sweep_csv::line(&sweep_csv::comparison_header());
        for record in sweep_csv::comparison_records(&comparison) {
            text += &sweep_csv::line(&record);
        }
        write_whole(path, args.force, &text)?;
    }
    let text = if args.markdown {
        compare_markdown(&comparison, &command_line())
    } else {
        compare_table(&comparison)
    };
    write_stdout(&text)
}

/// This process's command line as a user would type it again.
fn command_line() -> String {
    let mut words = vec!["herdsim".to_string()];
    for arg in std::env::args().skip(1) {
        if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
            words.push(format!("'{}'", arg.replace('\'', r"'\''")));
        } else {
            words.push(arg);
        }
    }
    words.join(" ")
}
