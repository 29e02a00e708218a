//! `herdsim drill`'s flags, what the live client refuses, and what it says
//! before it sends anything.

use std::path::PathBuf;

use clap::Args;

use herdsim::cli::external::{LiveOutputs, PointArgs, check_output_file, live_report};
use herdsim::experiment::server_runs::server_parts;
use herdsim::model::server::{Load, Nanos, ServerSpec, TimeoutLaw, TimeoutNoticed, show_ns};
use herdsim::sim::server_loop::ServerRetry;

use super::Failure;
use crate::drill::transport::Target;
use crate::drill::{DrillConfig, Ending, drill};

#[derive(Debug, Args)]
pub(super) struct DrillArgs {
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
/// the calls. Measured against a `serve` of 64 workers of 1 ms on the same
/// 2-core machine (2026-12-07): the median latency was 1.13 to 1.18 ms
/// from 2,000 to 10,000 requests/s and 38.7 ms at 20,000, where the two
/// processes ran out of CPU, not the server of its workers.
pub const MAX_RATE_PER_S: f64 = 10_000.0;

/// The most closed-loop users `drill` runs (each is a task).
pub const MAX_USERS: u32 = 10_000;

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

pub(super) fn drill_command(args: &DrillArgs) -> Result<(), Failure> {
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
    // The testbed's own faithfulness in this run: how late its timers fired.
    eprintln!(
        "drill: arrivals sent late: {}; timeouts fired late: {}; retry delays ended late: {}",
        run.arrivals_late.describe(),
        run.timers_late.timeouts.describe(),
        run.timers_late.retry_delays.describe()
    );
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
