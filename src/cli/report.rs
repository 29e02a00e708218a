//! `herdsim report`: a scenario's comparison as one self-contained HTML
//! file, to share in a postmortem or a design review.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::CliError;
use super::compare::{CompareOptions, command_line, reported_scenario, run_comparison};
use super::output::{
    MAX_TABLE_BYTES, check_distinct, check_output, read_input, warn_extensions, write_whole,
};
use super::run::OUTPUTS;
use super::sweep::GridArgs;
use crate::base::format::group_thousands;
use crate::experiment::scenario::Scenario;
use crate::experiment::sweep::SweepPlan;
use crate::report::WorkloadSummary;
use crate::report::compare_file::read_compare_file;
use crate::report::html::{ReportPage, report_html};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Scenario file [default: the workload flags, or the built-in four strategies]
    ///
    /// Without one, the workload flags alone, with `run`'s defaults (one
    /// point, a grid where a flag is a list; 1 seed unless --seeds, master
    /// seed 42 unless --seed); with no workload flag either, the built-in
    /// scenarios/four-strategies.toml (4 points × 100 seeds).
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    /// Report on an existing `herdsim compare --csv` file instead of running
    ///
    /// Its table only: no time series, since its runs are not redone.
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true,
          conflicts_with_all = ["scenario", "csv", "reference"], help_heading = OUTPUTS)]
    from: Option<PathBuf>,

    /// The HTML file to write
    #[arg(long, short, value_name = "FILE.html", allow_hyphen_values = true, help_heading = OUTPUTS)]
    out: PathBuf,

    #[command(flatten)]
    grid: GridArgs,

    /// Also write the table's figures as CSV (`compare --csv`'s long format)
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = OUTPUTS)]
    csv: Option<PathBuf>,

    /// Judge a study scenario against this reference file (as `compare --reference`)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = OUTPUTS)]
    reference: Option<PathBuf>,

    /// Replace the output files if they exist
    #[arg(long, help_heading = OUTPUTS)]
    force: bool,

    /// Hide the progress bar and the lines that say what runs and where
    ///
    /// The progress bar is shown only when stderr is a terminal.
    #[arg(long, short, help_heading = OUTPUTS)]
    quiet: bool,
}

/// The workload in words: point 0's, then what varies and the seeds.
fn workload_lines(scenario: &Scenario) -> Vec<String> {
    let grid = &scenario.grid;
    let mut lines = WorkloadSummary::lines(&grid.point(0));
    if let Some(first) = lines.first_mut() {
        *first = format!("Point 0: {first}");
    }
    for param in grid.varying() {
        if let Some(values) = grid.values(param.key).filter(|v| v.len() > 1) {
            lines.push(format!(
                "Varies: `{}` over {}",
                param.key,
                values.join(", ")
            ));
        }
    }
    if grid.variants() > 0 {
        lines.push(format!(
            "{} variants (each a few settings together; each row's label names them)",
            grid.variants()
        ));
    }
    lines.push(format!(
        "{} point{} × {} replicate seed{} from master seed {}",
        group_thousands(grid.len() as u64),
        if grid.len() == 1 { "" } else { "s" },
        group_thousands(u64::from(scenario.replicates)),
        if scenario.replicates == 1 { "" } else { "s" },
        scenario.master_seed
    ));
    lines
}

pub fn report(args: &ReportArgs) -> Result<(), CliError> {
    warn_extensions(&[
        ("--out", Some(&args.out), "html"),
        ("--csv", args.csv.as_deref(), "csv"),
    ]);
    check_output(&args.out, args.force)?;
    let mut outputs = vec![("--out", args.out.as_path())];
    if let Some(csv) = &args.csv {
        check_output(csv, args.force)?;
        outputs.push(("--csv", csv));
    }
    if let Some(path) = &args.scenario {
        outputs.push(("the scenario", path));
    }
    if let Some(from) = &args.from {
        outputs.push(("--from", from));
        check_distinct(&outputs)?;
        return report_from(args, from);
    }
    check_distinct(&outputs)?;
    let started = Instant::now();
    let (scenario, built_in) = reported_scenario(args.scenario.as_deref(), &args.grid)?;
    let command = command_line();
    let compared = run_comparison(
        &scenario,
        &CompareOptions {
            reference: args.reference.as_deref(),
            max_events: args.grid.max_events().unwrap_or(u64::MAX),
            quiet: args.quiet,
            figures: true,
            summary: true,
            // Said once every input is checked, so bad input is one line.
            on_start: &|| {
                if !args.quiet {
                    announce(&scenario, built_in);
                }
            },
            command: &command,
        },
    )?;
    // The Markdown's first paragraph names the command; the report says it
    // at its end.
    let markdown = compared
        .markdown
        .split_once("\n\n")
        .map_or(compared.markdown.as_str(), |(_, rest)| rest);
    let figures: Vec<(&str, &str)> = compared
        .figures
        .iter()
        .map(|(caption, figure)| (caption.as_str(), figure.svg.as_str()))
        .collect();
    let page = ReportPage {
        title: &scenario.name,
        description: scenario.description.as_deref(),
        summary: &compared.summary,
        workload: workload_lines(&scenario),
        markdown,
        services: &compared.services,
        figures,
        command: &command,
        version: env!("CARGO_PKG_VERSION"),
    };
    if let Some(csv) = &args.csv {
        write_whole(csv, args.force, &compared.csv)?;
    }
    write_page(args, &page)?;
    if !args.quiet {
        eprintln!(
            "report of {} in {:.2} s → {}",
            runs_text(&scenario),
            started.elapsed().as_secs_f64(),
            args.out.display()
        );
    }
    Ok(())
}

/// Says what the report runs (on stderr, as `sweep` does, whether or not
/// the bar shows): the built-in scenario when nothing chose another, and
/// the runs to go.
fn announce(scenario: &Scenario, built_in: bool) {
    if built_in {
        eprintln!(
            "no scenario and no workload flag: reporting the built-in \
             scenarios/four-strategies.toml (give a scenario file or workload flags to report \
             your own)"
        );
    }
    let (points, runs) = (scenario.grid.len() as u64, scenario.jobs());
    // On the server model (a study's excepted, which keeps its replicate 0)
    // each point's replicate 0 is run again for its time series.
    let again = scenario.study.is_none() && SweepPlan::whole(scenario, false).is_server();
    eprintln!(
        "{} point{} × {} replicate{}: {} run{} to go{}",
        group_thousands(points),
        if points == 1 { "" } else { "s" },
        group_thousands(u64::from(scenario.replicates)),
        if scenario.replicates == 1 { "" } else { "s" },
        group_thousands(runs),
        if runs == 1 { "" } else { "s" },
        if again {
            ", then replicate 0 of each point again for its time series"
        } else {
            ""
        }
    );
}

/// "4 points (400 runs)".
fn runs_text(scenario: &Scenario) -> String {
    let (points, runs) = (scenario.grid.len() as u64, scenario.jobs());
    format!(
        "{} point{} ({} run{})",
        group_thousands(points),
        if points == 1 { "" } else { "s" },
        group_thousands(runs),
        if runs == 1 { "" } else { "s" }
    )
}

/// Writes the page to `--out`.
fn write_page(args: &ReportArgs, page: &ReportPage<'_>) -> Result<(), CliError> {
    write_whole(&args.out, args.force, &report_html(page))
}

/// `--from`: a report of a compare file made earlier.
fn report_from(args: &ReportArgs, from: &Path) -> Result<(), CliError> {
    if !args.grid.is_empty() {
        return Err(CliError::Usage(
            "--from reports a compare file as it is: workload flags, --seeds and --seed cannot \
             change it (run the scenario instead)"
                .to_string(),
        ));
    }
    let shown = from.display().to_string();
    let text = read_input(from, "compare file", MAX_TABLE_BYTES)?;
    let read = read_compare_file(&shown, &text)?;
    let title = from
        .file_stem()
        .map_or_else(|| shown.clone(), |s| s.to_string_lossy().into_owned());
    let description = format!(
        "{} points from the comparison in {shown}",
        group_thousands(read.points as u64)
    );
    let command = command_line();
    let page = ReportPage {
        title: &title,
        description: Some(&description),
        summary: "",
        workload: read.workload,
        markdown: &read.markdown,
        services: "",
        figures: Vec::new(),
        command: &command,
        version: env!("CARGO_PKG_VERSION"),
    };
    write_page(args, &page)?;
    if !args.quiet {
        eprintln!("report → {}", args.out.display());
    }
    Ok(())
}
