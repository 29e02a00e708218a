//! The command line: arguments become typed specs once, then the library runs.
//!
//! Every bad value is caught before any work starts and reported as one line
//! naming the flag (or the file, line and key) and what it accepts, with exit
//! code 2. Output files are never half-written by bad input, and never
//! clobbered unless asked.

mod assess;
mod backlog;
mod bench;
pub mod bench_minimal;
pub mod bench_server;
mod compare;
mod conform;
mod diff;
mod exact;
mod exact_metafor;
mod examples;
pub mod external;
mod import;
mod in_process;
mod live;
mod map;
mod output;
mod params;
mod plot;
mod policy;
mod progress;
mod report;
mod run;
mod sweep;
mod tune;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::base::format::printable;
pub use in_process::{Called, call, call_progress, interrupt};
use in_process::{capturing, note, sink_error, still_wanted, warn, write_stdout};

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

/// Where the docs are, after every `--help` of the whole tool.
const DOCS: &str = "Each command's -h lists its flags, and its --help says what each accepts, which models \
     read it, and ends with examples. The book (tutorials, the model, every command and \
     parameter): docs/ in the repository, `mdbook serve docs` to read it.";

#[derive(Debug, Parser)]
#[command(
    name = "herdsim",
    version = env!("HERDSIM_VERSION"),
    about = "Simulate retry storms: how backoff policies make a failing herd recover or drown its dependency",
    long_about = "Simulate retry storms.\n\n\
        N clients fail together and retry against a shared resource that serves one \
        request at a time; a backoff policy decides when each retries. herdsim reports \
        total calls, time to last success and peak simultaneous retries, over replicate \
        seeds, with 95% confidence intervals. Besides that contended slot (the default \
        model), --resource picks independent outages (outage), an optimistic-concurrency \
        row (occ), or a server: open- or closed-loop load against workers behind a queue, \
        with timeouts, triggers and call chains, judged recovered, draining, stuck or \
        unresolved. \
        Results are reproducible bit for bit.",
    after_help = DOCS,
    after_long_help = examples::with_examples(DOCS, &examples::TOP),
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate one workload over replicate seeds and summarise every metric
    #[command(after_long_help = examples::with_examples(&run::metrics_help(), &examples::RUN))]
    Run(run::RunArgs),
    /// Set a scenario's points side by side, with published figures and verdicts
    ///
    /// Set a scenario's points side by side, with the published figures and
    /// verdicts where there are any.
    #[command(after_long_help = examples::with_examples("", &examples::COMPARE))]
    Compare(compare::CompareArgs),
    /// Run a grid of workloads × replicate seeds on every core, to CSV
    #[command(after_long_help = examples::with_examples(&sweep::sweep_help(), &examples::SWEEP))]
    Sweep(sweep::SweepArgs),
    /// Read gRPC, Envoy, AWS, resilience4j, Polly or Linkerd settings as a scenario
    ///
    /// Read configuration files (a gRPC service config, an Envoy route and
    /// cluster, an AWS config file, resilience4j or Polly settings, a
    /// Linkerd or Gateway API retry budget) and print the scenario TOML they
    /// amount to, every key commented with the field it came from and the
    /// rule applied. `--import FILE` on run, sweep, compare, map and report
    /// (or `import = [...]` in a scenario) runs them directly.
    Import(import::ImportArgs),
    /// Draw a sweep's curves, with their 95% CI bands, as SVG
    #[command(after_long_help = examples::with_examples("", &examples::PLOT))]
    Plot(plot::PlotArgs),
    /// Write a comparison as one self-contained HTML report
    ///
    /// Write a scenario's (or the workload flags') comparison as one
    /// self-contained HTML report: a summary of what happened, the workload
    /// in words, the table with CIs and verdicts, each service of a chain,
    /// the pictures inline, and the command that reproduces it.
    #[command(after_long_help = examples::with_examples("", &examples::REPORT))]
    Report(report::ReportArgs),
    /// Will this service recover? Its margin, headroom, amplification and recovery
    ///
    /// One service at its offered load: the longest stall of each kind it
    /// survives, the highest load at which a blip is survived, the
    /// amplification of a full outage, success under partial failure and
    /// the recovery times, with a verdict in words and the command behind
    /// every figure.
    #[command(after_long_help = examples::with_examples(&assess::assess_help(), &examples::ASSESS))]
    Assess(assess::AssessArgs),
    /// How do I set this budget? A control's settings, its Pareto front and knee
    ///
    /// Searches one retry control's fields for the settings that keep a
    /// full outage's amplification under --bound and the service out of a
    /// storm after --stall, with the most success under a partial failure:
    /// the Pareto front as a table (and --svg), its knee recommended.
    #[command(after_long_help = examples::with_examples(&tune::tune_help(), &examples::TUNE))]
    Tune(tune::TuneArgs),
    /// Am I affected? One service assessed under two configurations, side by side
    ///
    /// Two configuration files (or one read two ways, `--select-a` and
    /// `--select-b`) on one service, through assess's stalls, a partial
    /// failure and a full outage with the same seeds: margin, headroom,
    /// amplification, success and recovery side by side, the z-score of
    /// every difference, and one summary line naming what moved and the
    /// settings behind it.
    #[command(after_long_help = examples::with_examples(&diff::diff_help(), &examples::DIFF))]
    Diff(diff::DiffArgs),
    /// Solve a Markovian service exactly: stationary figures, time to a storm, storm probability
    ///
    /// The service as a continuous-time Markov chain, with no seeds: its
    /// stationary figures, the mean time from an empty system into a storm
    /// with no trigger at all, how long a storm lasts, the relaxation time,
    /// and after a trigger the probability of a storm and the time back to
    /// calm.
    #[command(after_long_help = examples::with_examples(&exact::exact_help(), &examples::EXACT))]
    Exact(exact::ExactArgs),
    /// Map where a server-model service tips over as two parameters vary
    ///
    /// Map where a server-model service tips over as two parameters vary:
    /// storm probability per cell, refined along the boundary, to CSV and
    /// SVG.
    #[command(after_long_help = examples::with_examples(&map::map_help(), &examples::MAP))]
    Map(map::MapArgs),
    /// Serve the server model on a real socket, in wall-clock time (herdsim-live)
    ///
    /// The spec's server as a real network server: its workers, queue,
    /// service time and triggers in wall time, HTTP/1.1 and gRPC on one
    /// port, counts at /metrics. It is in the herdsim-live package
    /// (`cargo install --path live`); `herdsim serve --help` shows its
    /// flags.
    Serve(live::LiveArgs),
    /// Drive a real endpoint with the client model, in wall-clock time (herdsim-live)
    ///
    /// The spec's load and clients (arrivals, timeouts, deadline, backoff
    /// policy, attempt limit, retry controls) against a real HTTP/1.1 or
    /// gRPC endpoint, reported as `run` reports. It is in the herdsim-live
    /// package (`cargo install --path live`); `herdsim drill --help` shows
    /// its flags.
    Drill(live::LiveArgs),
    /// Join the shard files of a sweep (or a map) into the whole one's file
    ///
    /// Combine the shard files of a sweep (or a map) into the file the whole
    /// sweep (or map) writes, byte for byte.
    #[command(after_long_help = examples::with_examples("", &examples::MERGE))]
    Merge(sweep::MergeArgs),
    /// Show policies' delays retry by retry, without contention
    #[command(after_long_help = examples::with_examples("", &examples::POLICY))]
    Policy(policy::PolicyArgs),
    /// Test a recorded retry trace against a policy or an imported configuration
    ///
    /// Does a client retry as its policy and configuration say? From a trace
    /// anyone can log (a call id, each attempt's send time and outcome), per
    /// retry number its delays against the policy's (quantiles side by side,
    /// a Kolmogorov–Smirnov distance with the overhead shift estimated, a
    /// bootstrap p-value, Holm-corrected), and every retry decision against
    /// the attempt limit and the retry budget or quota replayed over the
    /// trace. One verdict line; exit code 0 if the trace conforms, 1 if not.
    #[command(after_long_help = examples::with_examples(&conform::conform_help(), &examples::CONFORM))]
    Conform(conform::ConformArgs),
    /// List the backoff policies with their formulas and parameters
    Policies,
    /// List the retry controls (budgets, breakers, throttles) and their syntax
    ///
    /// List the retry controls (budgets, breakers, throttles) with their
    /// sources, rules and syntax.
    Controls,
    /// List the server model's triggers with their meaning and syntax
    ///
    /// List the server model's triggers (outage, failures, spikes, ramps,
    /// slowdowns, capacity drops) with their exact meaning and syntax.
    Triggers,
    /// Define every metric and the server model's verdict
    ///
    /// Define every metric (herd, server, each service of a chain) and the
    /// server model's verdict: recovered, draining, stuck or unresolved.
    Metrics,
    /// List every workload parameter: flag, key, default, values, columns
    ///
    /// List every workload parameter: flag, scenario key, default, accepted
    /// values and CSV columns.
    Params(ParamsArgs),
    /// Time the event loop at the standard sizes, to compare machines
    ///
    /// Time the event loop at the standard sizes (events per second), to
    /// compare machines.
    Bench(bench::BenchArgs),
    /// Print a shell's completion script (bash, zsh, fish, powershell, elvish)
    ///
    /// Print the completion script of SHELL to stdout. For example, bash:
    /// `herdsim completions bash > ~/.local/share/bash-completion/completions/herdsim`;
    /// zsh: into a directory of your $fpath as `_herdsim`; fish:
    /// `herdsim completions fish > ~/.config/fish/completions/herdsim.fish`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) of herdsim, or of one of its commands
    ///
    /// Print the man page of herdsim (or, given a command, of that command:
    /// `herdsim man run`) as roff to stdout; read it with
    /// `herdsim man | man -l -`.
    Man(ManArgs),
}

/// `herdsim completions`'s argument.
#[derive(Debug, clap::Args)]
struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// `herdsim man`'s argument.
#[derive(Debug, clap::Args)]
struct ManArgs {
    /// The command whose page to print [default: herdsim's own]
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
}

/// The whole command line's definition (for completions and man pages).
fn cli_command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command()
}

/// The completion script of `shell`.
fn completions(args: &CompletionsArgs) -> Result<(), CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli_command(), "herdsim", &mut script);
    write_stdout(&String::from_utf8_lossy(&script))
}

/// The man page of herdsim, or of the command `args` names.
fn man_page(args: &ManArgs) -> Result<(), CliError> {
    let mut cli = cli_command();
    cli.build();
    let page = match &args.command {
        None => cli,
        Some(name) => {
            let names: Vec<String> = cli
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let Some(sub) = cli.find_subcommand(name) else {
                return Err(CliError::Usage(format!(
                    "invalid value '{name}' for '[COMMAND]': expected one of {}",
                    names.join(", ")
                )));
            };
            let full = format!("herdsim-{name}");
            sub.clone().name(full.clone()).bin_name(full)
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    write_stdout(&String::from_utf8_lossy(&roff))
}

/// Runs the command line `args` and returns the process's exit code.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => return report_clap_error(err, &args),
    };
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err @ (CliError::Usage(_) | CliError::Report(_))) => {
            eprintln!("error: {}", printable(&err.to_string()));
            ExitCode::from(EXIT_USAGE)
        }
        Err(CliError::Io(err)) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(CliError::DoesNotConform) => ExitCode::FAILURE,
        Err(err @ (CliError::Io(_) | CliError::Limit(_))) => {
            eprintln!("error: {}", printable(&err.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// Runs the parsed command line `cli`.
fn execute(cli: Cli) -> Result<(), CliError> {
    cap_threads();
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Import(args) => import::import_command(&args),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Merge(args) => sweep::merge(&args),
        Command::Map(args) => map::map(&args),
        Command::Serve(args) => live::run_live("serve", &args),
        Command::Drill(args) => live::run_live("drill", &args),
        Command::Assess(args) => assess::assess_command(&args),
        Command::Tune(args) => tune::tune_command(&args),
        Command::Diff(args) => diff::diff_command(&args),
        Command::Exact(args) => exact::exact_command(&args),
        Command::Report(args) => report::report(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Plot(args) => plot::plot(&args),
        Command::Policy(args) => policy::policy(&args),
        Command::Conform(args) => conform::conform_command(&args),
        Command::Policies => write_stdout(&policies_table()),
        Command::Controls => write_stdout(&controls_table()),
        Command::Triggers => write_stdout(&triggers_table()),
        Command::Metrics => write_stdout(&metrics_table()),
        Command::Params(args) => write_stdout(&params_text(&args)),
        Command::Bench(args) => bench::bench(&args),
        Command::Completions(args) => completions(&args),
        Command::Man(args) => man_page(&args),
    };
    output::release_warnings(!matches!(
        result,
        Err(CliError::Usage(_) | CliError::Report(_))
    ));
    result
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
    /// A trace does not conform (its report said why): exit code 1.
    #[error("the trace does not conform")]
    DoesNotConform,
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

/// True if colour is wanted on a stream that is a terminal: not when
/// `NO_COLOR` is set to anything but the empty string (no-color.org).
fn colour_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Where the word clap found no place for (`stray`) follows a flag-like
/// word that the flag before it took as its value (`--seeds --write-time 1`:
/// `--seeds` took `--write-time`, and `1` is left over), that flag and that
/// value, so the one-line error names the flag the user meant.
fn swallowed_flag(args: &[std::ffi::OsString], stray: &str) -> Option<(String, String)> {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command = cli_command();
    let sub = command.find_subcommand(words.get(1)?)?;
    // clap names a word that starts with one dash by its first letters
    // (`-1` of `-1s..5s`, read as short flags).
    let short = !stray.starts_with("--");
    let at = words
        .iter()
        .rposition(|w| w == stray || (short && w.starts_with(stray)))?;
    let (flag, value) = (words.get(at.checked_sub(2)?)?, &words[at - 1]);
    let takes_value = sub
        .get_arguments()
        .find(|a| {
            a.get_long()
                .is_some_and(|long| flag.strip_prefix("--") == Some(long))
        })
        .is_some_and(|a| a.get_action().takes_values());
    (takes_value && value.starts_with('-')).then(|| (flag.clone(), value.clone()))
}

/// Help and version go to stdout as clap prints them (coloured only on a
/// terminal, and never with `NO_COLOR`); every error becomes one line on
/// stderr (clap's usage and "for more information" lines dropped, a tip kept
/// after a semicolon).
fn report_clap_error(err: clap::Error, args: &[std::ffi::OsString]) -> ExitCode {
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
            let rendered = if terminal && colour_allowed() {
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
            eprintln!("{}", clap_error_line(err, args));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// A clap error as one line, naming the flag that swallowed a value where
/// one did (`--rate --import x`: `--import` read as the rate).
fn clap_error_line(err: clap::Error, args: &[std::ffi::OsString]) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let stray_value = match (err.kind(), err.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(stray))) => {
            swallowed_flag(args, stray)
        }
        _ => None,
    };
    let err = with_subcommand_tip(err);
    let mut line = one_line(&err.render().to_string());
    if let Some((flag, value)) = stray_value {
        line += &format!("; '{value}' was read as the value of '{flag}'");
    }
    line
}

/// clap's rendered error in one line: its usage and "for more information"
/// lines dropped, a tip joined after a semicolon.
fn one_line(rendered: &str) -> String {
    let mut line = String::new();
    for part in rendered.lines().map(str::trim).filter(|l| {
        !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
    }) {
        if !line.is_empty() {
            line.push_str(if part.starts_with("tip:") { "; " } else { " " });
        }
        line.push_str(part);
    }
    line
}

/// `err` with a tip naming the subcommand a misspelt one most likely meant,
/// where clap found none: clap's likeness measure misses short slips such
/// as `rn` for `run`, which one or two edits make.
fn with_subcommand_tip(mut err: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() != ErrorKind::InvalidSubcommand
        || err.get(ContextKind::SuggestedSubcommand).is_some()
    {
        return err;
    }
    let Some(ContextValue::String(given)) = err.get(ContextKind::InvalidSubcommand) else {
        return err;
    };
    let given = given.clone();
    let nearest = cli_command()
        .get_subcommands()
        .map(|c| {
            (
                edit_distance(&given, c.get_name()),
                c.get_name().to_string(),
            )
        })
        .filter(|(d, name)| *d <= 2 && *d < name.len())
        .min();
    if let Some((_, name)) = nearest {
        err.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![name]),
        );
    }
    err
}

/// The fewest one-character insertions, deletions, substitutions or swaps
/// of neighbours that make `a` into `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
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
