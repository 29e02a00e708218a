//! `herdsim policy`: one or more policies' schedules without contention.

use std::path::PathBuf;

use clap::Args;

use super::plot::write_svg;
use super::sweep::{check_output, write_whole};
use super::{CliError, policy_parser, write_stdout};
use crate::base::seeding::DEFAULT_MASTER_SEED;
use crate::base::time::Micros;
use crate::base::time::format_duration;
use crate::experiment::schedule::schedule;
use crate::policy::{CapMode, PolicyKind, PolicySpec};
use crate::report::svg::delay_bands;
use crate::report::{csv as sweep_csv, schedule_table};
use crate::spec;

/// A policy's parameters, as `run` and `policy` take them.
#[derive(Debug, Args)]
pub struct PolicyParams {
    /// First retry's delay (decorrelated: the walk's floor); a duration such as 100ms
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = spec::parse_positive_duration, allow_hyphen_values = true)]
    base: Micros,

    /// Largest delay; may be below the base (every delay is then the cap)
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = spec::parse_positive_duration, allow_hyphen_values = true)]
    cap: Micros,

    /// Growth per retry of the linear policy [default: the base]
    #[arg(long, value_name = "DURATION", value_parser = spec::parse_step, allow_hyphen_values = true)]
    step: Option<Micros>,

    /// Proportional jitter f in [0, 1] on top of the policy: d + U[-f·d/2, +f·d/2]
    #[arg(long, value_name = "F", default_value = "0", value_parser = spec::parse_jitter_factor, allow_hyphen_values = true)]
    jitter_factor: f64,

    /// Added to every retry's exponent in none, equal and full: 1 makes the first
    /// ceiling 2·base, as the AWS simulator does
    #[arg(long, value_name = "E", default_value = "0", value_parser = spec::parse_first_exponent, allow_hyphen_values = true)]
    first_exponent: u32,

    /// Where equal and full jitter apply the cap: before the draw, or after it
    /// (clamping the draw: the bunching bug several libraries shipped)
    #[arg(long, value_name = "MODE", default_value = "before", value_parser = spec::parse_cap_mode)]
    cap_mode: CapMode,
}

impl PolicyParams {
    /// The fully parameterised `kind`.
    pub fn spec(&self, kind: PolicyKind) -> PolicySpec {
        PolicySpec {
            kind,
            base_us: self.base,
            cap_us: self.cap,
            step_us: self.step.unwrap_or(self.base),
            jitter_factor: self.jitter_factor,
            first_exponent: self.first_exponent,
            cap_mode: self.cap_mode,
        }
    }
}

#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Policies, comma-separated (see `herdsim policies`)
    #[arg(value_name = "NAME[,NAME…]", value_delimiter = ',', required = true, value_parser = policy_parser())]
    policies: Vec<PolicyKind>,

    #[command(flatten)]
    params: PolicyParams,

    /// Retry numbers to show
    #[arg(long, value_name = "K", default_value = "12", value_parser = parse_retries, allow_hyphen_values = true)]
    retries: u32,

    /// Sampled clients
    #[arg(long, value_name = "N", default_value = "10000", value_parser = parse_samples, allow_hyphen_values = true)]
    samples: u32,

    /// Master seed
    #[arg(long, value_name = "SEED", default_value_t = DEFAULT_MASTER_SEED, value_parser = spec::parse_master_seed, allow_hyphen_values = true)]
    seed: u64,

    /// Also write the table as CSV (one row per policy and retry)
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Also draw each policy's delay band per retry (p1 to p99, median marked)
    /// on a log axis, one row per policy, as SVG
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,

    /// Replace the CSV and SVG files if they exist
    #[arg(long)]
    force: bool,
}

fn parse_retries(text: &str) -> Result<u32, String> {
    spec::parse_count(text, 1, 1_000).map(|n| n as u32)
}

fn parse_samples(text: &str) -> Result<u32, String> {
    spec::parse_count(text, 1, 10_000_000).map(|n| n as u32)
}

pub fn policy(args: &PolicyArgs) -> Result<(), CliError> {
    let specs: Vec<PolicySpec> = args.policies.iter().map(|&k| args.params.spec(k)).collect();
    for path in args.csv.iter().chain(&args.plot) {
        check_output(path, args.force)?;
    }
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
    if let Some(path) = &args.plot {
        let title = format!(
            "Delay per retry without contention (base {}, cap {}; {} clients sampled)",
            format_duration(args.params.base),
            format_duration(args.params.cap),
            crate::spec::group_thousands(u64::from(args.samples))
        );
        let figure = delay_bands(&title, &schedules).map_err(CliError::Usage)?;
        write_svg(path, args.force, &figure)?;
    }
    let tables: Vec<String> = schedules.iter().map(schedule_table).collect();
    write_stdout(&tables.join("\n"))
}
