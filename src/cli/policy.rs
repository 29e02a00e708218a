//! `herdsim policy`: one or more policies' schedules without contention.

use std::path::PathBuf;

use clap::Args;

use super::output::{check_distinct, check_output, warn_extensions, write_svg, write_whole};
use super::params::{ParamFlags, PolicyShape};
use super::run::OUTPUTS;
use super::{CliError, policy_parser, write_stdout};
use crate::base::format::group_thousands;
use crate::base::seeding::DEFAULT_MASTER_SEED;
use crate::base::time::format_duration;
use crate::experiment::grid::Grid;
use crate::experiment::schedule::schedule;
use crate::policy::{PolicyKind, PolicySpec};
use crate::report::svg::delay_bands;
use crate::report::{csv as sweep_csv, schedule_table};
use crate::spec::{self, ParamError};

#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Policies, comma-separated (see `herdsim policies`)
    #[arg(value_name = "NAME[,NAME…]", value_delimiter = ',', required = true, value_parser = policy_parser())]
    policies: Vec<PolicyKind>,

    #[command(flatten)]
    params: ParamFlags<PolicyShape>,

    /// Retry numbers to show
    #[arg(long, value_name = "K", default_value = "12", value_parser = parse_retries, allow_hyphen_values = true, help_heading = SAMPLING)]
    retries: u32,

    /// Sampled clients
    #[arg(long, value_name = "N", default_value = "10000", value_parser = parse_samples, allow_hyphen_values = true, help_heading = SAMPLING)]
    samples: u32,

    /// Master seed
    #[arg(long, value_name = "SEED", default_value_t = DEFAULT_MASTER_SEED, value_parser = spec::parse_master_seed, allow_hyphen_values = true, help_heading = SAMPLING)]
    seed: u64,

    /// Also write the table as CSV (one row per policy and retry)
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = OUTPUTS)]
    csv: Option<PathBuf>,

    /// Also draw each policy's delay band per retry as SVG
    ///
    /// p1 to p99, median marked, on a log axis, one row per policy.
    #[arg(long, value_name = "FILE.svg", allow_hyphen_values = true, help_heading = OUTPUTS)]
    plot: Option<PathBuf>,

    /// Also write a synthetic retry trace of one policy: --samples calls of --retries retries
    ///
    /// What `herdsim conform` reads: one row per attempt (call, sent_ms,
    /// done_ms, outcome), every attempt failing and taking 1 ms, calls 10 ms
    /// apart. A conforming trace to compare a library's with, or to check
    /// conform itself.
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = OUTPUTS)]
    trace: Option<PathBuf>,

    /// Replace the CSV, SVG and trace files if they exist
    #[arg(long, help_heading = OUTPUTS)]
    force: bool,
}

/// The most attempts a synthetic trace has (about 25 MB of CSV).
const MAX_TRACE_ATTEMPTS: u64 = 1_000_000;

/// How long each attempt of a synthetic trace takes, ms.
const TRACE_ATTEMPT_MS: f64 = 1.0;
/// How far apart a synthetic trace's calls start, ms.
const TRACE_SPACING_MS: f64 = 10.0;

/// The heading of the flags that choose how the schedule is sampled.
const SAMPLING: &str = "Sampling";

fn parse_retries(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 1, 1_000).map(|n| n as u32)
}

fn parse_samples(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 1, 10_000_000).map(|n| n as u32)
}

/// The most delays one policy's schedule keeps for its percentiles
/// (`--samples` × `--retries`, 8 bytes each: 400 MB).
const MAX_DELAYS: u64 = 50_000_000;

pub fn policy(args: &PolicyArgs) -> Result<(), CliError> {
    warn_extensions(&[
        ("--csv", args.csv.as_deref(), "csv"),
        ("--plot", args.plot.as_deref(), "svg"),
        ("--trace", args.trace.as_deref(), "csv"),
    ]);
    let delays = u64::from(args.samples) * u64::from(args.retries);
    if delays > MAX_DELAYS {
        return Err(CliError::Usage(format!(
            "--samples {} × --retries {} is {} delays per policy; at most {} are kept for the \
             percentiles: lower --samples or --retries",
            group_thousands(u64::from(args.samples)),
            args.retries,
            group_thousands(delays),
            group_thousands(MAX_DELAYS)
        )));
    }
    let mut grid = Grid::default();
    args.params.apply_to(&mut grid);
    let shape = grid.point(0).policy;
    let specs: Vec<PolicySpec> = args
        .policies
        .iter()
        .map(|&kind| PolicySpec { kind, ..shape })
        .collect();
    let attempts = u64::from(args.samples) * u64::from(args.retries + 1);
    if args.trace.is_some() && attempts > MAX_TRACE_ATTEMPTS {
        return Err(CliError::Usage(format!(
            "--trace: --samples {} × (--retries {} + 1) is {} attempts; a synthetic trace has at \
             most {}: lower --samples",
            group_thousands(u64::from(args.samples)),
            args.retries,
            group_thousands(attempts),
            group_thousands(MAX_TRACE_ATTEMPTS)
        )));
    }
    if args.trace.is_some() && specs.len() > 1 {
        return Err(CliError::Usage(format!(
            "--trace writes one policy's trace; {} policies were given",
            specs.len()
        )));
    }
    for path in args.csv.iter().chain(&args.plot).chain(&args.trace) {
        check_output(path, args.force)?;
    }
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("--csv", args.csv.as_deref()),
        ("--plot", args.plot.as_deref()),
        ("--trace", args.trace.as_deref()),
    ]
    .into_iter()
    .filter_map(|(flag, path)| path.map(|p| (flag, p)))
    .collect();
    check_distinct(&outputs)?;
    let schedules: Vec<_> = specs
        .iter()
        .map(|p| schedule(p, args.retries, args.samples, args.seed))
        .collect();
    if let Some(path) = &args.csv {
        let mut text = sweep_csv::line(&sweep_csv::SCHEDULE_HEADER);
        for s in &schedules {
            for record in sweep_csv::schedule_records(s) {
                text += &sweep_csv::line(&record);
            }
        }
        write_whole(path, args.force, &text)?;
    }
    if let Some(path) = &args.trace {
        let trace = crate::conform::synthetic(
            &specs[0],
            args.retries + 1,
            args.samples,
            TRACE_ATTEMPT_MS,
            TRACE_SPACING_MS,
            args.seed,
        );
        write_whole(path, args.force, &trace.to_csv())?;
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "Delay per retry without contention (base {}, cap {}; {} clients sampled)",
            format_duration(shape.base_us),
            format_duration(shape.cap_us),
            crate::base::format::group_thousands(u64::from(args.samples))
        );
        let figure = delay_bands(&title, &schedules)?;
        write_svg(path, args.force, &figure)?;
    }
    let tables: Vec<String> = schedules.iter().map(schedule_table).collect();
    write_stdout(&tables.join("\n"))
}
