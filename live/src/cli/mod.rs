//! `herdsim-live`'s command line (`herdsim serve …` runs `herdsim-live
//! serve …`): the workload from the same scenario files and flags as
//! `herdsim run`, checked the same way, errors in one line with exit 2.
//! One file per command.

mod drill;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use herdsim::cli::external::report_clap_error;

pub use drill::{MAX_RATE_PER_S, MAX_USERS, live_clients};
pub use serve::{MAX_WORKERS, live_server};

#[derive(Debug, Parser)]
#[command(
    name = "herdsim",
    bin_name = "herdsim",
    version,
    about = "herdsim's live commands: the server model as a real server, the client model as a real load generator",
    disable_help_subcommand = true,
    // A flag given twice takes its last value (the docs' tests move a
    // shown --listen to a free port by adding one).
    args_override_self = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the server model on a real socket, in wall-clock time
    ///
    /// The spec's server (its workers, queue, discipline, service time and
    /// triggers) as a network server: each worker is a thread that holds an
    /// attempt for its drawn service time, work is never cancelled when a
    /// client gives up, and triggers act in wall time from the first
    /// request. HTTP/1.1 (200, 503 on failure, 429 when refused) and gRPC
    /// (`herdsim.Herdsim/Call`, bytes in and out: OK, UNAVAILABLE,
    /// RESOURCE_EXHAUSTED) on one port; the counts live at `/metrics`
    /// (Prometheus text) and per window in --series.
    Serve(serve::ServeArgs),
    /// Drive a real endpoint with the client model, in wall-clock time
    ///
    /// The spec's load (open- or closed-loop arrivals, load triggers
    /// included) sent to a real endpoint over HTTP/1.1 or gRPC, each request
    /// with the spec's timeout, deadline, backoff policy, attempt limit and
    /// retry controls: the code the simulator runs, driven by a real clock.
    /// It says what it will send before it starts, stops at the load's end
    /// (then waits for the requests in flight, up to the horizon), at its
    /// request bound or at Ctrl-C, and reports as `herdsim run` does, the
    /// verdict included. A live run is not reproducible bit for bit.
    Drill(drill::DrillArgs),
}

/// Runs `herdsim-live`'s command line; the exit code.
pub fn main_with_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return report_clap_error(e, &args),
    };
    let result = match cli.command {
        Command::Serve(args) => serve::serve_command(&args),
        Command::Drill(args) => drill::drill_command(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Io(message)) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Why a live command failed: bad input (exit 2) or the system (exit 1).
enum Failure {
    Usage(String),
    Io(String),
}
