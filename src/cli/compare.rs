//! `herdsim compare`: a scenario's results beside the published figures.

use std::path::PathBuf;

use clap::Args;

use super::plot::write_svg;
use super::progress::runs_bar;
use super::sweep::{GridArgs, check_output, read_scenario, write_whole};
use super::{CliError, write_stdout};
use crate::compare::Comparison;
use crate::engine::{NoObserver, Seeds};
use crate::published::Published;
use crate::queue::QueueKind;
use crate::report::svg::timelines;
use crate::report::{compare_markdown, compare_table, csv as sweep_csv};
use crate::resource::ResourceKind;
use crate::scenario::Scenario;
use crate::sweep::{Shard, SweepPlan, run_sweep};
use crate::timeline::{Timeline, nice_width};

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

    /// Also draw each point's retries over time (replicate 0), one panel per
    /// point on shared axes, as SVG
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,

    /// Replace the CSV and SVG files if they exist
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
    for path in args.csv.iter().chain(&args.plot) {
        check_output(path, args.force)?;
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
    if let Some(path) = &args.plot {
        let seeds = |p: &crate::compare::ComparedPoint| {
            Seeds::for_job(scenario.master_seed, p.point as u64, 0)
        };
        let window = comparison
            .points
            .iter()
            .map(|p| p.spec.window())
            .max()
            .unwrap_or(1);
        let first_bin = nice_width(window);
        // Each point's replicate 0 once, in growing bins; then shared bins.
        let whole: Vec<Timeline> = comparison
            .points
            .iter()
            .map(|p| {
                Timeline::of_run_observed(
                    &p.spec,
                    seeds(p),
                    first_bin,
                    400,
                    &mut NoObserver,
                    QueueKind::default(),
                )
            })
            .collect();
        let spans: Vec<_> = whole
            .iter()
            .map(|t| t.metrics.last_success_us + 1)
            .collect();
        let (bin, end) = Timeline::shared_bins(&spans, first_bin, 400);
        let runs: Vec<(String, Timeline)> = comparison
            .points
            .iter()
            .zip(&whole)
            .map(|(p, timeline)| {
                let span = timeline.metrics.last_success_us + 1;
                let mut label = p.label.clone();
                if span > end {
                    label += &format!(
                        " (runs {}; the first {} shown)",
                        human_duration(span - 1),
                        human_duration(end)
                    );
                }
                // A run far longer than the rest grew coarser bins than the
                // shared ones: only that one is simulated again, finely.
                let shared = timeline
                    .rebinned(bin, end)
                    .unwrap_or_else(|| Timeline::of_run_binned(&p.spec, seeds(p), bin, end));
                (label, shared)
            })
            .collect();
        let panels: Vec<(String, &Timeline)> = runs.iter().map(|(l, t)| (l.clone(), t)).collect();
        let capacity = scenario
            .grid
            .resource
            .iter()
            .all(|r| *r == ResourceKind::Slot)
            .then(|| scenario.grid.capacity[0]);
        let title = format!(
            "{}: retries per ms over time, replicate 0 of each point",
            scenario.name
        );
        let figure = timelines(&title, &panels, capacity).map_err(CliError::Usage)?;
        write_svg(path, args.force, &figure)?;
    }
    let text = if args.markdown {
        compare_markdown(&comparison, &command_line())
    } else {
        compare_table(&comparison)
    };
    write_stdout(&text)
}

/// `5.5 h`, `20.3 min`, `12.7 s`, `250 ms`.
fn human_duration(us: u64) -> String {
    let s = us as f64 / 1e6;
    if s >= 3_600.0 {
        format!("{:.1} h", s / 3_600.0)
    } else if s >= 60.0 {
        format!("{:.1} min", s / 60.0)
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.0} ms", s * 1e3)
    }
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
