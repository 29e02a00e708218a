//! What commands outside this binary (`herdsim-live`'s `serve` and
//! `drill`) reuse of it: one workload point from a scenario file and the
//! flags, with the same flags, imports and checks as `run`, and output
//! files written as every command writes them (whole, replaced only with
//! `--force`); each error is the one line herdsim would print.

use std::path::{Path, PathBuf};

use clap::Args;

use super::import::ImportFlags;
use super::output::{WholeFile, check_output};
use super::params::{ParamFlags, Single};
use super::run::one_point;
use super::sweep::{read_scenario, with_imports};
use super::{point_message, printable, spec_error};
use crate::experiment::scenario::Scenario;
use crate::experiment::server_runs::{server_parts, summarize_server};
use crate::measure::server_metrics::{ServerMetric, ServerMetrics};
use crate::measure::verdict::Goodput;
use crate::report::series::{series_header, series_rows};
use crate::report::{ServerRunReport, server_run_json, server_run_table};
use crate::spec::{self, RunSpec};

/// A workload point: a scenario file (optional) and every parameter flag.
#[derive(Debug, Args)]
pub struct PointArgs {
    /// Scenario file (TOML) of one point; without one, the workload comes
    /// from the flags alone
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,

    #[command(flatten)]
    params: ParamFlags<Single>,

    #[command(flatten)]
    import: ImportFlags,

    /// Master seed of the draws [default: the scenario's, or 42]
    #[arg(long, value_name = "SEED", value_parser = spec::parse_master_seed, allow_hyphen_values = true)]
    seed: Option<u64>,
}

/// The point [`PointArgs`] describe, checked, with its master seed.
#[derive(Debug, Clone)]
pub struct Point {
    pub spec: RunSpec,
    pub seed: u64,
}

impl PointArgs {
    /// The point, or the one line `run` would print for the same input
    /// (the caller exits with code 2).
    pub fn resolve(&self) -> Result<Point, String> {
        let error = |e: super::CliError| printable(&e.to_string());
        let scenario = match &self.scenario {
            Some(path) => read_scenario(path).map_err(error)?,
            None => Scenario::default(),
        };
        let mut scenario = with_imports(scenario, &self.import).map_err(error)?;
        self.params.apply_to(&mut scenario.grid);
        one_point(&scenario).map_err(error)?;
        let spec = scenario.grid.point(0);
        spec.validate().map_err(|e| match self.scenario {
            Some(_) => point_message(&scenario, 0, &e),
            None => error(spec_error(e)),
        })?;
        Ok(Point {
            spec,
            seed: self.seed.unwrap_or(scenario.master_seed),
        })
    }
}

/// Refuses `path` as an output before any work: an existing file without
/// `force`, a directory, a missing folder.
pub fn check_output_file(path: &Path, force: bool) -> Result<(), String> {
    check_output(path, force).map_err(|e| printable(&e.to_string()))
}

/// Writes `text` to `path` whole (a temporary file put in place), replacing
/// a file there only with `force`.
pub fn write_whole_file(path: &Path, force: bool, text: &str) -> Result<(), String> {
    let error = |e: super::CliError| printable(&e.to_string());
    let mut file = WholeFile::begin(path, force).map_err(error)?;
    file.write(text).map_err(error)?;
    file.finish().map_err(error)
}

/// The metrics only the server sees: a live run's report leaves them out
/// rather than print the zeros a client would give them.
const SERVER_SIDE: [ServerMetric; 5] = [
    ServerMetric::ServerAmplification,
    ServerMetric::WastedWork,
    ServerMetric::Utilisation,
    ServerMetric::QueueMean,
    ServerMetric::QueuePeak,
];

/// What a live run writes beside its report.
#[derive(Debug, Clone, Copy)]
pub struct LiveOutputs<'a> {
    /// `--json` in place of the table.
    pub json: bool,
    pub series: Option<&'a Path>,
    pub plot: Option<&'a Path>,
    pub force: bool,
}

/// Reports a live run of `spec` (`herdsim drill`'s) as `run` reports its
/// replicates, less the server's own metrics ([`SERVER_SIDE`]): the series
/// and the plot written, then the table or the JSON returned for the
/// caller to print.
pub fn live_report(
    spec: &RunSpec,
    seed: u64,
    runs: &[ServerMetrics],
    outputs: LiveOutputs<'_>,
) -> Result<String, String> {
    let error = |e: super::CliError| printable(&e.to_string());
    let (server, _) = server_parts(spec);
    let Some(first) = runs.first() else {
        return Err("no run to report".into());
    };
    if let Some(path) = outputs.series {
        let mut text = series_header();
        for (replicate, run) in runs.iter().enumerate() {
            text += &series_rows(
                replicate as u32,
                run,
                server.window,
                server.first_trigger_start(),
                Goodput::of(&server.load),
            );
        }
        write_whole_file(path, outputs.force, &text)?;
    }
    if let Some(path) = outputs.plot {
        let plot = super::run::ServerPlot {
            path,
            force: outputs.force,
            all: false,
            master_seed: seed,
            live: true,
        };
        let recoveries = runs
            .iter()
            .filter_map(|r| ServerMetric::RecoveryMs.value(r))
            .map(|ms| ms / 1e3)
            .collect();
        super::run::plot_server_series(
            &plot,
            spec,
            &server,
            first,
            (recoveries, runs.len() as u32),
        )
        .map_err(error)?;
    }
    let report = ServerRunReport {
        spec,
        master_seed: seed,
        window_us: server.window.whole_us(),
        summaries: summarize_server(runs)
            .into_iter()
            .filter(|(metric, _)| !SERVER_SIDE.contains(metric))
            .collect(),
        layers: Vec::new(),
        backlog: None,
    };
    Ok(if outputs.json {
        server_run_json(&report, None)
    } else {
        let names: Vec<&str> = SERVER_SIDE.iter().map(|m| m.name()).collect();
        format!(
            "{}\nnot shown: {}, which are the server's (a client cannot see them; herdsim serve \
             reports its own)\n",
            server_run_table(&report),
            names.join(", ")
        )
    })
}

/// Reports a command-line error as herdsim does: help and version printed
/// whole, anything else as one line naming the flag, exit code 2.
pub fn report_clap_error(err: clap::Error, args: &[std::ffi::OsString]) -> std::process::ExitCode {
    super::report_clap_error(err, args)
}
