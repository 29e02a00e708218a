//! `herdsim compare`: a scenario's results beside the published figures.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use clap::Args;

use super::output::{check_distinct, check_output, warn_extensions, write_svg, write_whole};
use super::progress::runs_bar;
use super::run::OUTPUTS;
use super::sweep::{GridArgs, limit_error, read_scenario};
use super::{CliError, write_stdout};
use crate::base::fingerprint::Fingerprint;
use crate::base::seeding::Seeds;
use crate::base::time::format_duration;
use crate::experiment::grid::Grid;
use crate::experiment::scenario::Scenario;
use crate::experiment::server_runs::server_parts;
use crate::experiment::sweep::{SweepPlan, sweep_rows};
use crate::experiment::timelines::{LabelledRun, shared_timelines};
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{ServerMetric, ServerMetrics, Window};
use crate::measure::timeline::Timeline;
use crate::model::ResourceKind;
use crate::model::server::ServerSpec;
use crate::report::server_compare::{server_compare_markdown, server_compare_table};
use crate::report::strategies_svg::{StrategiesPicture, StrategyRun, strategies_series};
use crate::report::study_series_svg::{
    StudySeries, StudySeriesPicture, study_series as study_series_picture,
};
use crate::report::study_table::{study_markdown, study_table};
use crate::report::summary::{
    ServerPointSummary, herd_summary_markdown, server_point_summary, server_summary_markdown,
    services_markdown,
};
use crate::report::svg::{Figure, timelines};
use crate::report::{compare_markdown, compare_table, csv as sweep_csv};
use crate::sim::queue::QueueKind;
use crate::sim::server_loop::simulate_server_watched;
use crate::spec::RunSpec;
use crate::spec::params::PARAMS;
use crate::study::compare::Comparison;
use crate::study::overload::{Study, StudyComparison, StudyPoint, run_study, study};
use crate::study::published::Published;
use crate::study::server_compare::ServerComparison;

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
    #[arg(long, help_heading = OUTPUTS)]
    markdown: bool,

    /// Also write every metric of every point as CSV
    ///
    /// With the published figures and verdicts, one row per point and
    /// metric.
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = OUTPUTS)]
    csv: Option<PathBuf>,

    /// Also draw each point's replicate 0 over time as SVG
    ///
    /// Herd models: retries over time, one panel per point on shared axes;
    /// server model: the points' time series side by side.
    #[arg(long, value_name = "FILE.svg", allow_hyphen_values = true, help_heading = OUTPUTS)]
    plot: Option<PathBuf>,

    /// Judge a study scenario against this reference file, not the built-in one
    ///
    /// A rerun of the authors' code, in the same shape (see
    /// reference/README.md).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = OUTPUTS)]
    reference: Option<PathBuf>,

    /// Replace the CSV and SVG files if they exist
    #[arg(long, help_heading = OUTPUTS)]
    force: bool,

    /// Hide the progress bar
    #[arg(long, short, help_heading = OUTPUTS)]
    quiet: bool,
}

/// What a comparison gives: its tables, its long CSV and its pictures.
pub struct Compared {
    /// The text table (`compare`'s standard output).
    pub text: String,
    /// The Markdown table, after the line that says which command made it.
    pub markdown: String,
    /// Every metric of every point, one row per point and metric.
    pub csv: String,
    /// Replicate 0 of the points, as pictures (captioned); `compare --plot`
    /// writes the first.
    pub figures: Vec<(String, Figure)>,
    /// What happened at each point, as Markdown (`report`'s summary; empty
    /// unless asked).
    pub summary: String,
    /// Each service of each chain point, as Markdown tables (empty unless
    /// the summary is asked and a point has a chain).
    pub services: String,
}

/// The scenario `compare` and `report` read: the file, or the built-in
/// four-strategy table, with the flags applied.
pub fn compared_scenario(path: Option<&Path>, grid: &GridArgs) -> Result<Scenario, CliError> {
    let scenario = match path {
        Some(path) => read_scenario(path)?,
        None => built_in(),
    };
    let mut scenario = with_flags(scenario, grid)?;
    let server = SweepPlan::whole(&scenario, false).is_server();
    if server && path.is_none() {
        // The built-in scenario is seed 002's herd; on the server model the
        // flags are the whole workload, so say what it is.
        name_server_scenario(&mut scenario);
    }
    Ok(scenario)
}

/// The built-in four-strategy scenario.
fn built_in() -> Scenario {
    Scenario::from_toml(FOUR_STRATEGIES.0, FOUR_STRATEGIES.1).expect("the built-in scenario parses")
}

/// Names a server scenario made from flags after its workload.
fn name_server_scenario(scenario: &mut Scenario) {
    scenario.name = "server".to_string();
    scenario.description = Some(format!(
        "{} (as point 0 has it; what varies is in each row's label)",
        {
            let p = scenario.grid.point(0);
            p.server.describe(p.patience_us())
        }
    ));
}

/// The scenario `report` runs, and whether it is the built-in one: the
/// file with the flags applied; without a file, the workload flags alone
/// with `run`'s defaults (one point, or a grid where a flag is a list; 1
/// seed unless --seeds, master seed 42 unless --seed); with neither file
/// nor workload flag, the built-in four-strategy scenario.
pub fn reported_scenario(
    path: Option<&Path>,
    grid: &GridArgs,
) -> Result<(Scenario, bool), CliError> {
    if path.is_some() {
        return Ok((compared_scenario(path, grid)?, false));
    }
    let mut flags = grid.apply(Scenario::default())?;
    if flags.grid == Grid::default() {
        return Ok((compared_scenario(None, grid)?, true));
    }
    // The summary and the workload say what it is: no description.
    flags.name = if SweepPlan::whole(&flags, false).is_server() {
        "server workload from the command line"
    } else {
        "workload from the command line"
    }
    .to_string();
    Ok((flags, false))
}

/// `scenario` with the flags applied; its description, if it has one,
/// says which workload flags make it a workload other than the one the
/// description was written for.
fn with_flags(scenario: Scenario, grid: &GridArgs) -> Result<Scenario, CliError> {
    let mut scenario = grid.imported(scenario)?;
    let description = scenario.description.take();
    let before = scenario.clone();
    let mut scenario = grid.apply(scenario)?;
    scenario.description = description.map(|d| match changed_by_flags(&before, &scenario) {
        Some(flags) => format!("{d} (description from the scenario file; {flags})"),
        None => d,
    });
    Ok(scenario)
}

/// The flags that changed `before`'s workload into `after`'s, in words
/// ("--rate 800 and --duration 5s on the command line change its
/// workload"); `None` if none did. A flag changes it when its values make
/// other points: one that repeats the scenario's value, or sets a key the
/// scenario left out to its default, changes nothing.
pub fn changed_by_flags(before: &Scenario, after: &Scenario) -> Option<String> {
    let fingerprint = |grid: &Grid| grid.fingerprint(Fingerprint::default()).hex();
    let unchanged = fingerprint(&before.grid);
    let flags: Vec<String> = PARAMS
        .iter()
        .filter_map(|param| {
            let values = after.grid.values(param.key)?;
            if before.grid.values(param.key) == Some(values) {
                return None;
            }
            let mut alone = before.grid.clone();
            alone.set(param, values.to_vec()).ok()?;
            if alone.is_empty() || fingerprint(&alone) == unchanged {
                return None;
            }
            Some(format!(
                "--{} {}",
                param.flag(),
                values.join(&param.list_separator.to_string())
            ))
        })
        .collect();
    let (last, rest) = flags.split_last()?;
    let listed = if rest.is_empty() {
        last.clone()
    } else {
        format!("{} and {last}", rest.join(", "))
    };
    Some(format!(
        "{listed} on the command line change{} its workload",
        if rest.is_empty() { "s" } else { "" }
    ))
}

/// How a comparison is run: what judges it, its limit, what it shows.
pub struct CompareOptions<'a> {
    /// A study's reference file in place of the built-in one.
    pub reference: Option<&'a Path>,
    /// Each run's event limit.
    pub max_events: u64,
    /// No progress bar.
    pub quiet: bool,
    /// Draw replicate 0 of the points.
    pub figures: bool,
    /// Summarise each point (and each service of a chain) for a report.
    pub summary: bool,
    /// Called once every input is checked, before the first run.
    pub on_start: &'a dyn Fn(),
    /// The command line that made it, for the Markdown.
    pub command: &'a str,
}

/// Refuses `--reference` for a scenario that names no study.
fn check_reference(scenario: &Scenario, reference: Option<&Path>) -> Result<(), CliError> {
    let named = scenario.study.as_ref().and_then(|(name, _)| study(name));
    if reference.is_some() && named.is_none() {
        return Err(CliError::Usage(
            "--reference: the scenario names no study to judge against (a study scenario has \
             `study = \"NAME\"`; see scenarios/README.md)"
                .to_string(),
        ));
    }
    Ok(())
}

/// Runs `scenario`'s comparison (judged against its study's reference, or
/// the options' file, if it names a study), with pictures of replicate 0
/// if asked.
pub fn run_comparison(
    scenario: &Scenario,
    options: &CompareOptions<'_>,
) -> Result<Compared, CliError> {
    let &CompareOptions {
        reference,
        max_events,
        quiet,
        figures,
        summary,
        on_start,
        command,
    } = options;
    if let Some(study) = scenario.study.as_ref().and_then(|(name, _)| study(name)) {
        return compare_study(study, scenario, options);
    }
    check_reference(scenario, reference)?;
    // The sweep machinery, aggregated rows kept in memory: one row a point.
    let mut plan = SweepPlan::whole(scenario, false);
    plan.max_events = max_events;
    let server = plan.is_server();
    // On the server model, pictures and the summary run replicate 0 of
    // each point again, with its windows: those runs count in the bar.
    let again = if server && (figures || summary) {
        plan.points.len() as u64
    } else {
        0
    };
    on_start();
    let progress = runs_bar(plan.jobs().len() as u64 + again, quiet);
    let rows = sweep_rows(&plan, || progress.inc(1));
    if let Some(stopped) = rows.iter().find(|r| !r.complete()) {
        progress.finish_and_clear();
        return Err(limit_error(stopped.point(), plan.max_events, ""));
    }
    if server {
        let comparison = ServerComparison::new(scenario, rows);
        let zero = if again > 0 {
            replicate_zero_runs(&comparison, max_events, || progress.inc(1))
        } else {
            Vec::new()
        };
        progress.finish_and_clear();
        let pictures = if figures {
            server_series(&comparison, &zero)?
        } else {
            Vec::new()
        };
        let (summary, services) = if summary {
            server_summary(&comparison, &zero)
        } else {
            (String::new(), String::new())
        };
        return Ok(Compared {
            text: server_compare_table(&comparison),
            markdown: server_compare_markdown(&comparison, command),
            csv: sweep_csv::server_comparison_csv(&comparison),
            figures: pictures,
            summary,
            services,
        });
    }
    progress.finish_and_clear();
    let comparison = Comparison::new(scenario, rows, &Published::embedded());
    let pictures = if figures {
        vec![(
            "Retries per ms over time, replicate 0 of each point".to_string(),
            comparison_timelines(&comparison)?,
        )]
    } else {
        Vec::new()
    };
    Ok(Compared {
        text: compare_table(&comparison),
        markdown: compare_markdown(&comparison, command),
        csv: sweep_csv::comparison_csv(&comparison),
        figures: pictures,
        summary: if summary {
            herd_summary_markdown(&comparison.points)
        } else {
            String::new()
        },
        services: String::new(),
    })
}

/// The summary of a server comparison from each point's replicate 0
/// (`zero`, in point order) and its summaries; and each chain point's
/// services.
fn server_summary(
    comparison: &ServerComparison<'_>,
    zero: &[(ServerSpec, ServerMetrics)],
) -> (String, String) {
    let points: Vec<ServerPointSummary> = comparison
        .points
        .iter()
        .zip(zero)
        .map(|(p, (_, run))| server_point_summary(&p.label, &p.spec, run, Some(&p.summaries)))
        .collect();
    let services: Vec<String> = comparison
        .points
        .iter()
        .filter(|p| p.spec.server.chain.depth > 1)
        .map(|p| {
            services_markdown(
                &p.label,
                p.spec.server.chain.depth as usize,
                p.summary(ServerMetric::Requests).n,
                &p.services,
            )
        })
        .collect();
    (server_summary_markdown(&points), services.join("\n"))
}

pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    warn_extensions(&[
        ("--csv", args.csv.as_deref(), "csv"),
        ("--plot", args.plot.as_deref(), "svg"),
    ]);
    let scenario = compared_scenario(args.scenario.as_deref(), &args.grid)?;
    let is_study = scenario.study.is_some();
    if !is_study && args.plot.is_some() && SweepPlan::whole(&scenario, false).is_server() {
        return Err(CliError::Usage(
            "--plot draws herd timelines; on the server model draw one point's time series \
             with `herdsim run --plot`, or the points with `herdsim plot` on the --csv file"
                .to_string(),
        ));
    }
    for path in args.csv.iter().chain(&args.plot) {
        check_output(path, args.force)?;
    }
    if let (Some(csv), Some(plot)) = (&args.csv, &args.plot) {
        check_distinct(&[("--csv", csv), ("--plot", plot)])?;
    }
    let compared = run_comparison(
        &scenario,
        &CompareOptions {
            reference: args.reference.as_deref(),
            max_events: args.grid.max_events().unwrap_or(u64::MAX),
            quiet: args.quiet,
            figures: args.plot.is_some(),
            summary: false,
            on_start: &|| {},
            command: &command_line(),
        },
    )?;
    if let Some(path) = &args.csv {
        write_whole(path, args.force, &compared.csv)?;
    }
    if let (Some(path), Some((_, figure))) = (&args.plot, compared.figures.first()) {
        write_svg(path, args.force, figure)?;
    }
    write_stdout(if args.markdown {
        &compared.markdown
    } else {
        &compared.text
    })?;
    // After the figures, so that a refusal stays one line.
    super::sweep::warn_varying_patience(&scenario.grid);
    Ok(())
}

/// `compare` on a study scenario: every point run, then judged against the
/// study's reference (the built-in one, or `reference`).
fn compare_study(
    study: &'static Study,
    scenario: &Scenario,
    options: &CompareOptions<'_>,
) -> Result<Compared, CliError> {
    let &CompareOptions {
        reference,
        max_events,
        quiet,
        figures,
        summary,
        on_start,
        command,
    } = options;
    let (rows, reference_name) = match reference {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Usage(format!("--reference {}: {e}", path.display())))?;
            let rows = (study.read)(&text).map_err(|e| {
                CliError::Usage(format!(
                    "--reference {}: {e} (expected a reference of {} in the shape of reference/{})",
                    path.display(),
                    study.name,
                    study.reference_file
                ))
            })?;
            (rows, path.display().to_string())
        }
        None => (
            study.embedded_rows(),
            format!("reference/{}", study.reference_file),
        ),
    };
    if !SweepPlan::whole(scenario, false).is_server() {
        // Name what put a point off the server: the file's line, the flag,
        // or the default where neither gave a resource.
        let off = (0..scenario.grid.len())
            .find(|&i| scenario.grid.point(i).resource != crate::model::ResourceKind::Server)
            .unwrap_or(0);
        let resource = scenario.grid.point(off).resource;
        let given = match (
            scenario.origin("resource", off),
            scenario.grid.values("resource"),
        ) {
            (Some(o), _) => format!("{o}: resource {resource}"),
            (None, Some(_)) => format!("--resource {resource}"),
            (None, None) => format!(
                "{}: no resource given (the default is {resource})",
                if scenario.file().is_empty() {
                    "the scenario"
                } else {
                    scenario.file()
                }
            ),
        };
        return Err(CliError::Usage(format!(
            "{given}: study {} is on the server model: give resource = \"server\"",
            study.name
        )));
    }
    let watch = Watch {
        max_events,
        on_progress: &|_, _| {},
        // Replicate 0's latency over time is in the figures.
        window_latencies: figures || summary,
    };
    on_start();
    let progress = runs_bar(scenario.jobs(), quiet);
    let comparison = run_study(study, scenario, rows, reference_name, &watch, || {
        progress.inc(1)
    });
    progress.finish_and_clear();
    if max_events < u64::MAX
        && let Some(stopped) = comparison.points.iter().find(|p| !p.complete)
    {
        return Err(limit_error(stopped.point, max_events, ""));
    }
    let mut pictures = Vec::new();
    if figures {
        let windowed = comparison
            .points
            .first()
            .and_then(StudyPoint::first_row)
            .is_some_and(|i| comparison.rows[i].window.is_some());
        pictures.push(if windowed {
            (
                "Each metric per window: herdsim's mean beside the reference's".to_string(),
                study_windows(&comparison)?,
            )
        } else {
            (
                "Replicate 0 of each point over time".to_string(),
                study_series(&comparison)?,
            )
        });
    }
    let summary = if summary {
        let points: Vec<ServerPointSummary> = comparison
            .points
            .iter()
            .zip(point_labels(&comparison))
            .map(|(p, label)| server_point_summary(&label, &p.spec, &p.replicate_zero, None))
            .collect();
        server_summary_markdown(&points)
    } else {
        String::new()
    };
    Ok(Compared {
        text: study_table(&comparison),
        markdown: study_markdown(&comparison, command),
        csv: sweep_csv::study_comparison_csv(&comparison),
        figures: pictures,
        summary,
        services: String::new(),
    })
}

/// The most points a picture of replicate 0 shows side by side (the
/// palette's colours).
const POINTS_A_PICTURE: usize = 8;

/// Each point's replicate 0 on the server model (the same run as the
/// table's first replicate), with its windows, in point order; `on_done`
/// after each.
fn replicate_zero_runs(
    comparison: &ServerComparison<'_>,
    max_events: u64,
    on_done: impl Fn() + Sync,
) -> Vec<(ServerSpec, ServerMetrics)> {
    let scenario = comparison.scenario;
    let watch = Watch {
        max_events,
        on_progress: &|_, _| {},
        window_latencies: true,
    };
    comparison
        .points
        .par_iter()
        .map(|p| {
            let (server, retry) = server_parts(&p.spec);
            let seeds = Seeds::for_job(scenario.master_seed, p.point as u64, 0);
            let metrics =
                simulate_server_watched(&server, &retry, seeds, &watch, QueueKind::default());
            on_done();
            (server, metrics)
        })
        .collect()
}

/// Each point's replicate 0 (`runs`, in point order) on the server model,
/// its time series side by side, eight points a picture.
fn server_series(
    comparison: &ServerComparison<'_>,
    runs: &[(ServerSpec, ServerMetrics)],
) -> Result<Vec<(String, Figure)>, CliError> {
    let scenario = comparison.scenario;
    let groups = comparison.points.len().div_ceil(POINTS_A_PICTURE);
    let mut figures = Vec::new();
    for chunk in comparison
        .points
        .chunks(POINTS_A_PICTURE)
        .zip(runs.chunks(POINTS_A_PICTURE))
    {
        let which = if groups > 1 {
            format!(
                " (points {} to {})",
                chunk.0[0].point,
                chunk.0[chunk.0.len() - 1].point
            )
        } else {
            String::new()
        };
        let runs = chunk
            .0
            .iter()
            .zip(chunk.1)
            .map(|(point, (server, metrics))| {
                let label = if point.label.is_empty() {
                    format!("point {}", point.point)
                } else {
                    point.label.clone()
                };
                (label, server, metrics.windows.as_slice())
            })
            .collect();
        figures.push((
            format!("Replicate 0 of each point over time{which}"),
            replicate_zero_series(&scenario.name, &which, runs)?,
        ));
    }
    Ok(figures)
}

/// Each point's label: what sets it apart, its reference row's key values
/// that differ between points, or its index.
fn point_labels(comparison: &StudyComparison<'_>) -> Vec<String> {
    let keys: Vec<Vec<String>> = comparison
        .points
        .iter()
        .map(|p| match p.first_row() {
            Some(i) => comparison.rows[i]
                .key
                .iter()
                .map(|(_, v)| v.clone())
                .collect(),
            None => vec![format!("point {}", p.point)],
        })
        .collect();
    let varies = |k: usize| keys.iter().any(|key| key.get(k) != keys[0].get(k));
    let label = |key: &Vec<String>| {
        let shown: Vec<&str> = (0..key.len())
            .filter(|&k| varies(k))
            .map(|k| key[k].as_str())
            .collect();
        if shown.is_empty() {
            key.join(" ")
        } else {
            shown.join(" ")
        }
    };
    keys.iter().map(label).collect()
}

/// Points' replicate-0 windows side by side, one line each: `runs` as
/// (label, its server, its windows), the time axis and triggers from the
/// first's server; titled after `scenario` (with `which` points).
fn replicate_zero_series(
    scenario: &str,
    which: &str,
    runs: Vec<(String, &ServerSpec, &[Window])>,
) -> Result<Figure, CliError> {
    let first = runs[0].1;
    let picture = StrategiesPicture {
        title: format!(
            "{scenario}: replicate 0 of each point{which}, {} windows",
            format_duration(first.window.whole_us())
        ),
        runs: runs
            .iter()
            .map(|(label, server, windows)| StrategyRun {
                label: label.clone(),
                windows,
                workers: server.workers,
                rate_per_s: server.load.rate_per_s().unwrap_or(f64::NAN),
            })
            .collect(),
        window_ns: first.window,
        end_s: first.duration.ticks() as f64 / 1e9,
        // Each trigger shaded and labelled by its kind.
        triggers: first.triggers.iter().collect(),
    };
    Ok(strategies_series(&picture)?)
}

/// Each point's replicate 0 (kept from the comparison's runs), its time
/// series one line per point: a study's strategies side by side.
fn study_series(comparison: &StudyComparison<'_>) -> Result<Figure, CliError> {
    let scenario = comparison.scenario;
    let parts: Vec<_> = comparison
        .points
        .iter()
        .map(|p| server_parts(&p.spec))
        .collect();
    let runs = comparison
        .points
        .iter()
        .zip(&parts)
        .zip(point_labels(comparison))
        .map(|((point, (server, _)), label)| {
            (label, server, point.replicate_zero.windows.as_slice())
        })
        .collect();
    replicate_zero_series(&scenario.name, "", runs)
}

/// A study judged window by window: each metric's mean over the replicates
/// per window, beside the reference's, one colour per point.
fn study_windows(comparison: &StudyComparison<'_>) -> Result<Figure, CliError> {
    let study = comparison.study;
    let (first, _) = server_parts(&comparison.points[0].spec);
    let points = comparison
        .points
        .iter()
        .zip(point_labels(comparison))
        .map(|(point, label)| {
            let values = (0..study.metrics.len())
                .map(|m| {
                    let mut by_window = Vec::new();
                    for point_row in &point.rows {
                        let Some(row) = point_row.row.map(|i| &comparison.rows[i]) else {
                            continue;
                        };
                        let Some(k) = row.window else { continue };
                        if by_window.len() <= k {
                            by_window.resize(k + 1, (None, None));
                        }
                        by_window[k] = (
                            point_row.ours[m].map(|e| e.mean),
                            row.figure(study.metrics[m].name).map(|e| e.mean),
                        );
                    }
                    by_window
                })
                .collect();
            StudySeries { label, values }
        })
        .collect();
    let picture = StudySeriesPicture {
        title: format!(
            "{}: herdsim's mean over {} replicates (solid) beside the reference's (dashed), per {} window",
            comparison.scenario.name,
            comparison.scenario.replicates,
            format_duration(first.window.whole_us())
        ),
        panels: study
            .metrics
            .iter()
            .map(|m| (m.title.to_string(), "per window".to_string()))
            .collect(),
        points,
        window_s: first.window.ticks() as f64 / 1e9,
    };
    Ok(study_series_picture(&picture)?)
}

/// Each point's replicate 0, retries per ms over time, in panels on shared
/// axes.
fn comparison_timelines(comparison: &Comparison<'_>) -> Result<Figure, CliError> {
    let scenario = comparison.scenario;
    let runs: Vec<LabelledRun<'_>> = comparison
        .points
        .iter()
        .map(|p| LabelledRun {
            label: p.label.clone(),
            spec: &p.spec,
            seeds: Seeds::for_job(scenario.master_seed, p.point as u64, 0),
        })
        .collect();
    let runs = shared_timelines(&runs, 400);
    let panels: Vec<(String, &Timeline)> = runs.iter().map(|(l, t)| (l.clone(), t)).collect();
    let specs: Vec<&RunSpec> = comparison.points.iter().map(|p| &p.spec).collect();
    let capacity = specs
        .iter()
        .all(|s| s.resource == ResourceKind::Slot)
        .then(|| specs[0].capacity_per_ms);
    let title = format!(
        "{}: retries per ms over time, replicate 0 of each point",
        scenario.name
    );
    Ok(timelines(&title, &panels, capacity)?)
}

/// This process's command line as a user would type it again.
pub fn command_line() -> String {
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
