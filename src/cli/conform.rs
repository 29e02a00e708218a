//! `herdsim conform`: a recorded retry trace held to a policy, or to an
//! imported configuration. The test is [`crate::conform`]'s; this reads
//! the files, resolves the flags as `run` does and prints the report.

use std::path::PathBuf;

use clap::Args;

use super::import::ImportFlags;
use super::output::read_input;
use super::params::{ClientRetries, ParamFlags};
use super::run::one_point;
use super::sweep::{read_scenario, with_imports};
use super::{CliError, spec_error, write_stdout};
use crate::base::time::ns_of_us;
use crate::conform::trace;
use crate::conform::{Conformance, Options, RetrySide, conform};
use crate::experiment::scenario::Scenario;
use crate::report::WorkloadSummary;
use crate::report::conform::{conform_json, conform_text};
use crate::spec::{self, ParamError, RunSpec};

/// The largest trace read: ten million attempts are about 400 MB.
const MAX_TRACE_BYTES: u64 = 1 << 30;

#[derive(Debug, Args)]
pub struct ConformArgs {
    /// The trace: CSV with columns call, sent_s (or sent_ms, sent_us, sent_ns) and outcome, optionally done_*
    ///
    /// One row per attempt: the call it belongs to (any id), when it was
    /// sent, and its outcome (success, failure, throttled, timeout, their
    /// gRPC codes or an HTTP status). A done_* column (when the outcome was
    /// known, in the same unit) takes each attempt's own duration out of
    /// the gaps; without it the gaps hold it, and the shift estimates it.
    #[arg(value_name = "TRACE.csv")]
    trace: PathBuf,

    /// Scenario file (TOML) whose policy and retry controls the trace is held to
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    params: ParamFlags<ClientRetries>,

    #[command(flatten)]
    import: ImportFlags,

    /// Family-wise significance level of the delay tests (Holm-corrected)
    #[arg(long, value_name = "A", default_value = "0.05", value_parser = parse_alpha, help_heading = TEST)]
    alpha: f64,

    /// The trace's timing resolution: a gap this near the policy's delay matches it
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_resolution, help_heading = TEST)]
    resolution: u64,

    /// The largest constant overhead taken as overhead, not as a slower policy
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = parse_max_shift, help_heading = TEST)]
    max_shift: u64,

    /// Bootstrap resamples behind each p-value
    #[arg(long, value_name = "N", default_value = "199", value_parser = parse_resamples, help_heading = TEST)]
    resamples: u32,

    /// Seed of the policy's reference draws and the resamples
    #[arg(long, value_name = "SEED", default_value = "42", value_parser = spec::parse_master_seed, help_heading = TEST)]
    seed: u64,

    /// Print the test as JSON, for machines
    #[arg(long, help_heading = super::run::OUTPUTS)]
    json: bool,

    /// Hide the progress bar
    #[arg(long, short, help_heading = super::run::OUTPUTS)]
    quiet: bool,
}

/// The heading of the test's own flags.
const TEST: &str = "Test";

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(a) if a > 0.0 && a < 0.5 => Ok(a),
        _ => Err("expected a level above 0 and below 0.5".to_string()),
    }
}

/// A duration in µs, `0` allowed, at most `most_ms`.
fn duration_up_to(text: &str, most_ms: u64) -> Result<u64, String> {
    let expected = || format!("expected a duration from 0 to {most_ms}ms");
    match crate::base::time::parse_duration(text) {
        Ok(d) if d.ticks() <= most_ms * 1000 => Ok(d.ticks()),
        _ => Err(expected()),
    }
}

fn parse_resolution(text: &str) -> Result<u64, String> {
    duration_up_to(text, 100)
}

fn parse_max_shift(text: &str) -> Result<u64, String> {
    duration_up_to(text, 60_000)
}

fn parse_resamples(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 19, 9_999).map(|n| n as u32)
}

/// What the long help adds before the examples.
pub fn conform_help() -> String {
    "The trace:\n  call,sent_ms,done_ms,outcome\n  7f3a,0.0,1.2,unavailable\n  7f3a,\
     96.4,97.5,unavailable\n  7f3a,231.0,231.9,ok\n\nIt conforms when no retry number's delays \
     differ from the policy's (Holm-corrected at --alpha), the overhead shift is at most \
     --max-shift, and its retry decisions are the configuration's: exactly, or with a retry \
     budget or quota within 2% of the retries it allows (overlapping calls' outcomes may reach \
     a client in another order than the trace's times). A stop too near the trace's end (or \
     the call's deadline) to be sure of is censored.\n"
        .to_string()
}

pub fn conform_command(args: &ConformArgs) -> Result<(), CliError> {
    let (spec, held_to) = resolve(args)?;
    let side = RetrySide {
        policy: spec.policy,
        max_attempts: spec.max_attempts,
        controls: spec.controls(),
        retry_on: spec.retry_on,
        deadline: spec.deadline_us.map(ns_of_us),
    };
    side.check().map_err(CliError::Usage)?;
    if spec.hedge_delay_us.is_some() {
        return Err(CliError::Usage(
            "conform holds one attempt at a time to a policy; --hedge-delay sends copies \
             without backing off"
                .to_string(),
        ));
    }
    // The smallest p-value a bootstrap gives is 1/(resamples + 1): below
    // it, no trace could ever be refused.
    let floor = 1.0 / f64::from(args.resamples + 1);
    if args.alpha < floor {
        return Err(CliError::Usage(format!(
            "--alpha {} is below the smallest p-value {} resamples can give (1/{}): raise \
             --resamples to at least {}",
            args.alpha,
            args.resamples,
            args.resamples + 1,
            (1.0 / args.alpha).ceil() as u64 - 1
        )));
    }
    let name = args.trace.display().to_string();
    let text = read_input(&args.trace, "the trace", MAX_TRACE_BYTES)?;
    let trace = trace::parse(&name, &text).map_err(CliError::Usage)?;
    let options = Options {
        alpha: args.alpha,
        resolution_ms: args.resolution as f64 / 1e3,
        max_shift_ms: args.max_shift as f64 / 1e3,
        resamples: args.resamples,
        seed: args.seed,
    };
    let bar = super::progress::runs_bar(u64::from(options.resamples), args.quiet);
    bar.set_message("bootstrap resamples");
    let result: Conformance = conform(&trace, &side, &options, &|| bar.inc(1));
    bar.finish_and_clear();
    let mut held = WorkloadSummary::retry_lines(&spec);
    held.insert(0, held_to);
    if args.json {
        write_stdout(&conform_json(&name, &held, &options, &result))?;
    } else {
        write_stdout(&conform_text(&name, &held, &options, &result))?;
    }
    if result.conforms() {
        Ok(())
    } else {
        Err(CliError::DoesNotConform)
    }
}

/// The spec the trace is held to, and what it came from in words.
fn resolve(args: &ConformArgs) -> Result<(RunSpec, String), CliError> {
    let given_policy = args.params.keys().contains(&"policy");
    if args.scenario.is_none() && args.import.files.is_empty() && !given_policy {
        return Err(CliError::Usage(
            "conform needs what to hold the trace to: --policy (with its --base, --cap, …), \
             --import FILE or a scenario file"
                .to_string(),
        ));
    }
    let scenario = match &args.scenario {
        Some(path) => read_scenario(path)?,
        None => Scenario::default(),
    };
    let mut scenario = with_imports(scenario, &args.import)?;
    args.params.apply_to(&mut scenario.grid);
    one_point(&scenario)?;
    let spec = scenario.grid.point(0);
    spec.validate().map_err(spec_error)?;
    let mut sources: Vec<String> = args
        .scenario
        .iter()
        .chain(&args.import.files)
        .map(|p| p.display().to_string())
        .collect();
    if !args.params.given.is_empty() {
        sources.push("the flags".to_string());
    }
    Ok((spec, format!("held to {}", sources.join(", "))))
}
