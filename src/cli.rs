//! The command line: arguments become typed specs once, then the library runs.
//!
//! Every bad value is caught here or by [`RunSpec::validate`] and reported as
//! one line naming the flag and what it accepts, with exit code 2.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::metrics::METRICS;
use crate::policy::{PolicyKind, PolicySpec};
use crate::replicates::{run_replicates, summarize};
use crate::report::{RunReport, policies_table, run_json, run_table};
use crate::seeding::DEFAULT_MASTER_SEED;
use crate::spec::{self, MAX_CLIENTS, MAX_SEEDS, RunSpec};
use crate::time::{Micros, parse_duration};

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
    #[command(after_long_help = metrics_help())]
    Run(RunArgs),
    /// List the backoff policies with their formulas and parameters
    Policies,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Clients in the herd; each wants one successful call
    #[arg(long, value_name = "N", default_value = "1000", value_parser = parse_clients, allow_hyphen_values = true)]
    clients: u32,

    /// Backoff policy (see `herdsim policies`)
    #[arg(long, value_name = "POLICY", default_value = "full", value_parser = policy_parser())]
    policy: PolicyKind,

    /// First retry's delay (decorrelated: the walk's floor); a duration such as 100ms
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = spec::parse_positive_duration, allow_hyphen_values = true)]
    base: Micros,

    /// Largest delay; may be below the base (every delay is then the cap)
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = spec::parse_positive_duration, allow_hyphen_values = true)]
    cap: Micros,

    /// Growth per retry of the linear policy [default: the base]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    step: Option<Micros>,

    /// Requests the resource serves per millisecond (fractions allowed)
    #[arg(long, value_name = "PER_MS", default_value = "1", value_parser = spec::parse_capacity, allow_hyphen_values = true)]
    capacity: f64,

    /// Proportional jitter f in [0, 1] on top of the policy: d + U[-f·d/2, +f·d/2]
    #[arg(long, value_name = "F", default_value = "0", value_parser = spec::parse_jitter_factor, allow_hyphen_values = true)]
    jitter_factor: f64,

    /// Master seed; every replicate's seed is mixed from it and its index
    #[arg(long, value_name = "SEED", default_value_t = DEFAULT_MASTER_SEED, value_parser = parse_seed, allow_hyphen_values = true)]
    seed: u64,

    /// Replicates (independent seeds), run in parallel
    #[arg(long, value_name = "R", default_value = "1", value_parser = parse_seeds, allow_hyphen_values = true)]
    seeds: u32,

    /// Window of the peak-retries metric [default: one service time]
    #[arg(long, value_name = "DURATION", value_parser = spec::parse_positive_duration, allow_hyphen_values = true)]
    window: Option<Micros>,

    /// Print the results as one JSON object instead of a table
    #[arg(long)]
    json: bool,

    /// Hide the progress bar (it is hidden anyway when stderr is not a terminal)
    #[arg(long, short)]
    quiet: bool,
}

/// The metrics `run` reports, for `herdsim run --help`.
fn metrics_help() -> String {
    let width = METRICS.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut text = String::from("Metrics (times in ms, from each client's first call):\n");
    for metric in METRICS {
        text += &format!("  {:<width$}  {}\n", metric.name, metric.description);
    }
    text += "\nDurations take a unit: 250us, 100ms, 1.5s, 2m, 1h; a bare number is ms.";
    text
}

fn parse_clients(text: &str) -> Result<u32, String> {
    spec::parse_count(text, 1, MAX_CLIENTS).map(|n| n as u32)
}

fn parse_seeds(text: &str) -> Result<u32, String> {
    spec::parse_count(text, 1, MAX_SEEDS).map(|n| n as u32)
}

fn parse_seed(text: &str) -> Result<u64, String> {
    spec::parse_count(text, 0, u64::MAX)
}

fn policy_parser() -> impl clap::builder::TypedValueParser<Value = PolicyKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(PolicyKind::names())
        .map(|name| name.parse::<PolicyKind>().expect("a listed policy name"))
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
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Policies => write_stdout(&policies_table()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(CliError::Io(err)) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(CliError::Io(err)) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

enum CliError {
    /// Bad input: exit code 2.
    Usage(String),
    /// Writing output failed: exit code 1.
    Io(io::Error),
}

impl From<io::Error> for CliError {
    fn from(err: io::Error) -> Self {
        CliError::Io(err)
    }
}

/// Help and version go to stdout as clap prints them; every error becomes one
/// line on stderr (clap's usage and "for more information" lines dropped).
fn report_clap_error(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::from(err.exit_code() as u8)
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

fn run(args: &RunArgs) -> Result<(), CliError> {
    let spec = RunSpec {
        clients: args.clients,
        capacity_per_ms: args.capacity,
        policy: PolicySpec {
            kind: args.policy,
            base_us: args.base,
            cap_us: args.cap,
            step_us: args.step.unwrap_or(args.base),
            jitter_factor: args.jitter_factor,
        },
        window_us: args.window,
    };
    spec.validate().map_err(|e| {
        CliError::Usage(format!(
            "invalid value '{}' for '--{}': {}",
            e.value, e.key, e.reason
        ))
    })?;

    let progress = progress_bar(u64::from(args.seeds), args.quiet);
    let runs = run_replicates(&spec, args.seed, 0, args.seeds, || progress.inc(1));
    progress.finish_and_clear();

    let report = RunReport {
        spec: &spec,
        master_seed: args.seed,
        summaries: summarize(&runs),
    };
    let text = if args.json {
        run_json(&report)
    } else {
        run_table(&report)
    };
    write_stdout(&text)
}

/// A bar on stderr (runs done of total, runs per second, ETA), hidden with
/// `--quiet` and whenever stderr is not a terminal.
fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40.cyan/blue} {pos}/{len} runs · {per_sec} · ETA {eta}")
            .expect("a valid template")
            .progress_chars("█▉▊▋▌▍▎▏ "),
    );
    bar
}

fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
