//! The command line: arguments become typed specs once, then the library runs.
//!
//! Every bad value is caught before any work starts and reported as one line
//! naming the flag (or the file, line and key) and what it accepts, with exit
//! code 2. Output files are never half-written by bad input, and never
//! clobbered unless asked.

mod bench;
pub mod bench_minimal;
pub mod bench_server;
mod compare;
mod map;
mod output;
mod params;
mod plot;
mod policy;
mod progress;
mod report;
mod run;
mod sweep;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::report::{
    ParamNames, controls_table, metrics_table, params_markdown, params_table, policies_table,
    triggers_table,
};

/// `herdsim params`'s options.
#[derive(Debug, clap::Args)]
struct ParamsArgs {
    /// Print a Markdown table (as the README holds it)
    #[arg(long)]
    markdown: bool,
    /// Name the parameters by their scenario keys rather than their flags
    #[arg(long)]
    keys: bool,
}

/// The parameter listing `args` asks for.
fn params_text(args: &ParamsArgs) -> String {
    let names = if args.keys {
        ParamNames::Keys
    } else {
        ParamNames::Flags
    };
    if args.markdown {
        params_markdown(names)
    } else {
        params_table(names)
    }
}

/// Exit code for bad input (as clap uses).
const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "herdsim",
    version,
    about = "Simulate retry storms: how backoff policies make a failing herd recover or drown its dependency",
    long_about = "Simulate retry storms.\n\n\
        N clients fail together and retry against a shared resource that serves one \
        request at a time; a backoff policy decides when each retries. herdsim reports \
        total calls, time to last success and peak simultaneous retries, over replicate \
        seeds, with 95% confidence intervals. Results are reproducible bit for bit.",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate one workload over replicate seeds and summarise every metric
    #[command(after_long_help = run::metrics_help())]
    Run(run::RunArgs),
    /// Run a grid of workloads × replicate seeds on every core, to CSV
    #[command(after_long_help = sweep::sweep_help())]
    Sweep(sweep::SweepArgs),
    /// Set a scenario's points side by side, with the published figures and
    /// verdicts where there are any
    Compare(compare::CompareArgs),
    /// Draw a sweep's curves, with their 95% CI bands, as SVG
    Plot(plot::PlotArgs),
    /// Write a scenario's (or the workload flags') comparison as one
    /// self-contained HTML report: a summary of what happened, the workload
    /// in words, the table with CIs and verdicts, each service of a chain,
    /// the pictures inline, and the command that reproduces it
    Report(report::ReportArgs),
    /// Map where a server-model service tips over as two parameters vary:
    /// storm probability per cell, refined along the boundary, to CSV and SVG
    #[command(after_long_help = map::map_help())]
    Map(map::MapArgs),
    /// Combine the shard files of a sweep (or a map) into the file the whole
    /// sweep (or map) writes
    Merge(sweep::MergeArgs),
    /// Show policies' delays retry by retry, without contention
    Policy(policy::PolicyArgs),
    /// List the backoff policies with their formulas and parameters
    Policies,
    /// List the retry controls (budgets, breakers, throttles) with their
    /// sources, rules and syntax
    Controls,
    /// List the server model's triggers (outage, failures, spikes, ramps,
    /// slowdowns, capacity drops) with their exact meaning and syntax
    Triggers,
    /// Define every metric (herd, server, each service of a chain) and the
    /// server model's verdict: recovered, stuck or unresolved
    Metrics,
    /// List every workload parameter: flag, scenario key, default, accepted
    /// values and CSV columns
    Params(ParamsArgs),
    /// Time the event loop at the standard sizes (events per second), to
    /// compare machines
    Bench(bench::BenchArgs),
}

/// Runs the command line `args` and returns the process's exit code.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => return report_clap_error(&err),
    };
    cap_threads();
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Merge(args) => sweep::merge(&args),
        Command::Map(args) => map::map(&args),
        Command::Report(args) => report::report(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Plot(args) => plot::plot(&args),
        Command::Policy(args) => policy::policy(&args),
        Command::Policies => write_stdout(&policies_table()),
        Command::Controls => write_stdout(&controls_table()),
        Command::Triggers => write_stdout(&triggers_table()),
        Command::Metrics => write_stdout(&metrics_table()),
        Command::Params(args) => write_stdout(&params_text(&args)),
        Command::Bench(args) => bench::bench(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err @ (CliError::Usage(_) | CliError::Report(_))) => {
            eprintln!("error: {err}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(CliError::Io(err)) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err @ (CliError::Io(_) | CliError::Limit(_))) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// Bad input: exit code 2.
    #[error("{0}")]
    Usage(String),
    /// Input a report refused (a column that is not there, shards that do
    /// not make a sweep): exit code 2.
    #[error(transparent)]
    Report(#[from] crate::report::error::ReportError),
    /// Reading or writing failed: exit code 1.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A run hit a limit it was given (`--max-events`): exit code 1.
    #[error("{0}")]
    Limit(String),
}

/// Sizes rayon's pool: `RAYON_NUM_THREADS` if given, but never more threads
/// than the machine runs at once (a thousand threads on two cores only add
/// start-up time). Results do not depend on it.
fn cap_threads() {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let asked = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    let threads = asked.map_or(available, |n| n.min(available));
    // Fails only if the pool already exists, which then has its own size.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
}

/// Help and version go to stdout as clap prints them; every error becomes one
/// line on stderr (clap's usage and "for more information" lines dropped).
fn report_clap_error(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Help that could not be written (a full disk) is a failure; a
            // closed pipe (`| head`) is not.
            use std::io::IsTerminal;
            let styled = err.render();
            let terminal = if err.use_stderr() {
                io::stderr().is_terminal()
            } else {
                io::stdout().is_terminal()
            };
            let rendered = if terminal {
                styled.ansi().to_string()
            } else {
                styled.to_string()
            };
            let written = if err.use_stderr() {
                io::stderr().lock().write_all(rendered.as_bytes())
            } else {
                let mut out = io::stdout().lock();
                out.write_all(rendered.as_bytes())
                    .and_then(|()| out.flush())
            };
            match written {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                    eprintln!("error: cannot write the help: {e}");
                    ExitCode::FAILURE
                }
                _ => ExitCode::from(err.exit_code() as u8),
            }
        }
        _ => {
            let rendered = err.render().to_string();
            let line = rendered
                .lines()
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with("Usage:")
                        && !l.starts_with("For more information")
                })
                .collect::<Vec<_>>()
                .join(" ");
            eprintln!("{line}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// A workload the flags describe that is out of range: one line naming the
/// flag.
fn spec_error(e: crate::spec::SpecError) -> CliError {
    CliError::Usage(spec_message(&e, false))
}

/// A refused workload in one line: the flag (and, where the value may have
/// come from a scenario file, the key too), the value and why.
fn spec_message(e: &crate::spec::SpecError, with_key: bool) -> String {
    let flag = e.key.replace('_', "-");
    let name = if with_key {
        format!("{} (--{flag})", e.key)
    } else {
        format!("'--{flag}'")
    };
    format!("invalid value '{}' for {name}: {}", e.value, e.reason)
}

/// A scenario's point `point` refused, in one line that names what the user
/// wrote where they wrote it: the file, line and key (or `[[variant]]` or
/// `[[layer]]` table) of the value at fault, and of the value it cannot go
/// with; a flag where a flag gave it, and a default as a default.
fn point_message(
    scenario: &crate::experiment::scenario::Scenario,
    point: usize,
    e: &crate::spec::SpecError,
) -> String {
    use crate::spec::ParamError;
    let together = |other: &str| match scenario.origin(other, point) {
        Some(o) => format!("together with {} at {}:{}", o.what(), o.file, o.line),
        None => format!("together with --{}", other.replace('_', "-")),
    };
    let (place, value, why) = match &e.reason {
        ParamError::Conflict { other, why } => (
            scenario.origin(e.key, point),
            e.value.clone(),
            format!("{why} ({})", together(other)),
        ),
        // A default the file wrote out is the file's.
        ParamError::ConflictWithDefault { other, why, .. }
            if scenario.origin(other, point).is_some() =>
        {
            (
                scenario.origin(e.key, point),
                e.value.clone(),
                format!("{why} ({})", together(other)),
            )
        }
        ParamError::LayerSetting { service, key, why } => {
            match scenario.layer_origin(*service, key, point) {
                Some(o) => {
                    let value = scenario
                        .layer_value(*service, key)
                        .map_or_else(|| e.value.clone(), str::to_string);
                    (Some(o), value, why.clone())
                }
                None => (None, e.value.clone(), e.reason.to_string()),
            }
        }
        reason => (
            scenario.origin(e.key, point),
            e.value.clone(),
            reason.to_string(),
        ),
    };
    match place {
        Some(o) => format!("{o}: invalid value '{value}' (point {point}): {why}"),
        None => format!(
            "point {point}: invalid value '{value}' for {} (--{}): {why}",
            e.key,
            e.key.replace('_', "-")
        ),
    }
}

fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// clap parser for a policy name, listing the names in `--help`; an
/// ambiguous name (`grpc`) says which it could mean.
fn policy_parser() -> impl clap::builder::TypedValueParser<Value = crate::PolicyKind> {
    use clap::builder::TypedValueParser;
    params::Names::new(crate::PolicyKind::names(), |text: &str| {
        params::ambiguous(text.parse::<crate::PolicyKind>())
    })
    .map(|name| {
        name.parse::<crate::PolicyKind>()
            .expect("a listed policy name")
    })
}
