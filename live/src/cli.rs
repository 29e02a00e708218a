//! `herdsim-live`'s command line (`herdsim serve …` runs `herdsim-live
//! serve …`): the workload from the same scenario files and flags as
//! `herdsim run`, checked the same way, errors in one line with exit 2.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use herdsim::base::time::parse_duration;
use herdsim::cli::external::{
    LiveOutputs, PointArgs, check_output_file, live_report, report_clap_error, write_whole_file,
};
use herdsim::experiment::server_runs::server_parts;
use herdsim::model::server::{
    Load, Nanos, ServerSpec, TimeoutLaw, TimeoutNoticed, TriggerKind, show_ns,
};
use herdsim::sim::server_loop::ServerRetry;

use crate::drill::transport::Target;
use crate::drill::{DrillConfig, Ending, drill};
use crate::server::{ServeConfig, ServeReport, serve};
use crate::timing::nanos_of;

/// The most workers `serve` starts (each is a thread).
pub const MAX_WORKERS: u32 = 4096;

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
    Serve(ServeArgs),
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
    Drill(DrillArgs),
}

#[derive(Debug, Args)]
struct DrillArgs {
    /// Where to send: http://HOST:PORT[/PATH] (HTTP/1.1 POSTs; path /call
    /// by default) or grpc://HOST:PORT (herdsim.Herdsim/Call over HTTP/2)
    #[arg(long, value_name = "URL", value_parser = Target::parse, help_heading = DRILLING)]
    target: Target,

    /// Print the report as JSON (run --json's)
    #[arg(long, help_heading = DRILLING)]
    json: bool,

    /// Write the run's series per window as CSV (run --series' columns; the
    /// client sees no server queue: `queue` holds its attempts in flight)
    #[arg(long, value_name = "FILE.csv", help_heading = DRILLING)]
    series: Option<PathBuf>,

    /// Draw the run over time as SVG (run --plot's picture)
    #[arg(long, value_name = "FILE.svg", help_heading = DRILLING)]
    plot: Option<PathBuf>,

    /// Replace existing --series and --plot files
    #[arg(long, help_heading = DRILLING)]
    force: bool,

    #[command(flatten)]
    point: PointArgs,
}

/// The heading of drill's own flags, above the workload's.
const DRILLING: &str = "Drilling";

/// The highest request rate `drill` drives (peak, load triggers included):
/// one thread sleeps to each arrival and the runtime's two threads carry
/// the calls.
pub const MAX_RATE_PER_S: f64 = 20_000.0;

/// The most closed-loop users `drill` runs (each is a task).
pub const MAX_USERS: u32 = 10_000;

#[derive(Debug, Args)]
struct ServeArgs {
    /// Address to listen on (port 0: any free port, printed at start)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080", help_heading = SERVING)]
    listen: SocketAddr,

    /// Stop this long after the first request (or after the start, if none
    /// comes in that time) [default: at Ctrl-C]
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_stop, help_heading = SERVING)]
    stop_after: Option<Duration>,

    /// Write the server's counts per window (the spec's --window) as CSV
    /// when it stops
    #[arg(long, value_name = "FILE.csv", help_heading = SERVING)]
    series: Option<PathBuf>,

    /// Replace an existing --series file
    #[arg(long, help_heading = SERVING)]
    force: bool,

    #[command(flatten)]
    point: PointArgs,
}

/// The heading of serve's own flags, above the workload's.
const SERVING: &str = "Serving";

fn parse_stop(text: &str) -> Result<Duration, String> {
    match parse_duration(text) {
        Ok(us) if us.is_zero() => Err("expected a duration above 0, such as 10s".into()),
        Ok(us) => Ok(Duration::from_micros(us.ticks())),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `herdsim-live`'s command line; the exit code.
pub fn main_with_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return report_clap_error(e, &args),
    };
    let result = match cli.command {
        Command::Serve(args) => serve_command(&args),
        Command::Drill(args) => drill_command(&args),
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

/// The spec's server, refused in one line where the live server cannot
/// be it.
pub fn live_server(spec: &ServerSpec) -> Result<ServerSpec, String> {
    let workers = match spec.workers {
        Some(w) if (1..=MAX_WORKERS).contains(&w) => w,
        _ => {
            return Err(format!(
                "--workers: serve needs a number of workers from 1 to {MAX_WORKERS} (each is a thread)"
            ));
        }
    };
    if let Some(t) = spec
        .triggers
        .iter()
        .find(|t| matches!(t.kind, TriggerKind::PerUserFailure(_)))
    {
        return Err(format!(
            "--trigger {t}: a real server cannot tell users apart; use fail:P (a share of attempts)"
        ));
    }
    if spec.chain.is_layered() {
        return Err(format!(
            "--depth {}: serve is one service; a chain is one serve per service",
            spec.chain.depth
        ));
    }
    if spec.deadline_propagation != herdsim::control::deadline_propagation::DeadlinePropagation::Off
    {
        return Err(
            "--deadline-propagation: serve does not read its callers' deadlines; leave it off"
                .into(),
        );
    }
    Ok(ServerSpec {
        workers: Some(workers),
        ..spec.clone()
    })
}

fn serve_command(args: &ServeArgs) -> Result<(), Failure> {
    let point = args.point.resolve().map_err(Failure::Usage)?;
    let (spec, _) = server_parts(&point.spec);
    let spec = live_server(&spec).map_err(Failure::Usage)?;
    if let Some(path) = &args.series {
        check_output_file(path, args.force).map_err(Failure::Usage)?;
    }
    let config = ServeConfig {
        spec: spec.clone(),
        seed: herdsim::Seeds::for_job(point.seed, 0, 0).environment,
        listen: args.listen,
        stop_after: args.stop_after,
    };
    let what = describe(&spec, args.stop_after);
    let report = serve(config, |addr| {
        eprintln!("herdsim serve: listening on http://{addr} (HTTP/1.1, and gRPC herdsim.Herdsim/Call over h2c); {what}");
    })
    .map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse | std::io::ErrorKind::AddrNotAvailable
        | std::io::ErrorKind::PermissionDenied => {
            Failure::Usage(format!("--listen {}: cannot listen there: {e}", args.listen))
        }
        _ => Failure::Io(format!("serve failed: {e}")),
    })?;
    if let Some(path) = &args.series {
        write_whole_file(path, args.force, &report.series.csv()).map_err(Failure::Io)?;
    }
    print!("{}", summary(&report));
    Ok(())
}

/// What the server is, in a line: the run's figures depend on all of it.
fn describe(spec: &ServerSpec, stop_after: Option<Duration>) -> String {
    let queue = match spec.queue_limit {
        Some(limit) => format!("queue limit {limit}"),
        None => "queue unbounded".to_string(),
    };
    let triggers = if spec.triggers.is_empty() {
        "no trigger".to_string()
    } else {
        let list: Vec<String> = spec.triggers.iter().map(ToString::to_string).collect();
        format!(
            "triggers {} (clock from the first request)",
            list.join(", ")
        )
    };
    let stop = match stop_after {
        Some(d) => format!("stops {} after the first request", show_ns(nanos_of(d))),
        None => "stops at Ctrl-C".to_string(),
    };
    let workers = spec.workers.unwrap_or(0);
    format!(
        "{workers} worker{}, service {}, {queue} ({}), fail rate {}, {triggers}; {stop}",
        if workers == 1 { "" } else { "s" },
        spec.service.described(),
        spec.discipline,
        spec.fail_rate,
    )
}

/// The serve's totals, as a few lines.
fn summary(report: &ServeReport) -> String {
    let t = report.series.totals();
    if t.attempts == 0 {
        return "no request came: nothing served\n".to_string();
    }
    let ran = report.ran_ns.ticks() as f64;
    let seconds = ran / 1e9;
    let utilisation = if ran > 0.0 {
        t.busy_ns as f64 / (ran * f64::from(report.workers))
    } else {
        0.0
    };
    format!(
        "served for {seconds:.3} s from the first request: {} attempts arrived, {} finished \
         ({} succeeded), {} refused, {} replies unheard (the client had gone), queue peak {}, \
         utilisation {:.3}\n",
        t.attempts,
        t.completions,
        t.successes,
        t.rejected,
        report.unheard,
        t.queue_peak,
        utilisation
    )
}

/// The spec's clients, refused in one line where the live client cannot be
/// them.
pub fn live_clients(spec: &ServerSpec, retry: &ServerRetry) -> Result<(), String> {
    if spec.chain.is_layered() {
        return Err(format!(
            "--depth {}: drill calls one service (point it at the top of a chain)",
            spec.chain.depth
        ));
    }
    if retry.hedge.is_some() || retry.hedge_on_timeout {
        return Err("--hedge-delay: drill does not hedge yet; leave hedging off".into());
    }
    if !spec.timeout_choices.is_empty() {
        return Err("--timeout: drill takes one timeout, not a choice of several".into());
    }
    if spec.timeout_law == TimeoutLaw::Exponential {
        return Err("--timeout-law: drill's timeouts are fixed; use fixed".into());
    }
    if spec.timeout_noticed == TimeoutNoticed::Reply {
        return Err(
            "--timeout-noticed: a live client's timer fires at the timeout; use deadline".into(),
        );
    }
    match spec.load {
        Load::Open { rate_per_s, .. } => {
            let peak = rate_per_s * spec.peak_load_factor();
            if peak > MAX_RATE_PER_S {
                return Err(format!(
                    "--rate: drill drives at most {MAX_RATE_PER_S} requests/s; this load peaks at {peak} requests/s"
                ));
            }
        }
        Load::Closed { users, .. } if users > MAX_USERS => {
            return Err(format!(
                "--users: drill runs at most {MAX_USERS} closed-loop users; this load has {users}"
            ));
        }
        Load::Closed { .. } => {}
    }
    Ok(())
}

fn drill_command(args: &DrillArgs) -> Result<(), Failure> {
    let point = args.point.resolve().map_err(Failure::Usage)?;
    let (spec, retry) = server_parts(&point.spec);
    live_clients(&spec, &retry).map_err(Failure::Usage)?;
    for path in [&args.series, &args.plot].into_iter().flatten() {
        check_output_file(path, args.force).map_err(Failure::Usage)?;
    }
    args.target.check_reachable().map_err(Failure::Usage)?;
    let horizon = point
        .spec
        .horizon_us()
        .map_or(spec.duration.saturating_mul(4), Nanos::of_us);
    eprintln!("{}", drill_plan(&spec, &retry, &args.target, horizon));
    let config = DrillConfig {
        spec: spec.clone(),
        retry,
        seeds: herdsim::Seeds::for_job(point.seed, 0, 0),
        target: args.target.clone(),
        horizon,
    };
    let run = drill(config).map_err(|e| Failure::Io(format!("drill failed: {e}")))?;
    let ended = match run.ending {
        Ending::Drained => "every request ended".to_string(),
        Ending::Horizon => format!(
            "stopped at the horizon ({}) with requests still in flight; its figures count what happened before",
            show_ns(horizon)
        ),
        Ending::Interrupted => {
            "stopped at Ctrl-C; its figures count what happened before".to_string()
        }
    };
    eprintln!("drill: {ended} (a live run: another gives other figures)");
    let outputs = LiveOutputs {
        json: args.json,
        series: args.series.as_deref(),
        plot: args.plot.as_deref(),
        force: args.force,
    };
    let text =
        live_report(&point.spec, point.seed, &[run.metrics], outputs).map_err(Failure::Io)?;
    print!("{text}");
    Ok(())
}

/// What the drill will send, before it sends anything.
fn drill_plan(spec: &ServerSpec, retry: &ServerRetry, target: &Target, horizon: Nanos) -> String {
    let protocol = if target.grpc { "gRPC" } else { "HTTP/1.1 POST" };
    let load = match spec.load {
        Load::Open {
            rate_per_s,
            sources,
            ..
        } => {
            let peak = rate_per_s * spec.peak_load_factor();
            let peak = if peak > rate_per_s {
                format!(" (peak {peak} requests/s during its load triggers)")
            } else {
                String::new()
            };
            format!(
                "open loop, {rate_per_s} requests/s{peak} from {sources} source{}",
                if sources == 1 { "" } else { "s" }
            )
        }
        Load::Closed { users, .. } => format!("closed loop, {users} users"),
    };
    let bound = spec
        .requests
        .map_or(String::new(), |n| format!(", at most {n} requests"));
    let timeout = spec.timeout.map_or("no timeout".to_string(), |t| {
        format!("timeout {}", show_ns(t))
    });
    let attempts = retry
        .max_attempts
        .map_or("unlimited attempts".to_string(), |n| {
            format!("at most {n} attempts")
        });
    let controls = if retry.controls.is_empty() {
        "no retry control".to_string()
    } else {
        let names: Vec<String> = retry.controls.iter().map(ToString::to_string).collect();
        names.join(", ")
    };
    format!(
        "herdsim drill: {protocol} {} — {load} for {}{bound}, then the requests in flight until the horizon at {}; \
         {timeout}, policy {}, {attempts}, {controls}",
        target.url,
        show_ns(spec.duration),
        show_ns(horizon),
        retry.policy.kind,
    )
}
