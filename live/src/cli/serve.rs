//! `herdsim serve`'s flags, what the live server refuses, and what it says
//! before and after it serves.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use herdsim::base::time::parse_duration;
use herdsim::cli::external::{PointArgs, check_output_file, write_whole_file};
use herdsim::experiment::server_runs::server_parts;
use herdsim::model::server::{ServerSpec, TriggerKind, show_ns};

use super::Failure;
use crate::attempt_trace::DEFAULT_CALL_ID_HEADER;
use crate::server::{ServeConfig, ServeReport, serve};
use crate::timing::nanos_of;

/// The most workers `serve` starts (each is a thread).
pub const MAX_WORKERS: u32 = 4096;

#[derive(Debug, Args)]
pub(super) struct ServeArgs {
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

    /// Write every attempt as CSV when it stops (call, sent_ms, done_ms,
    /// outcome: the trace `herdsim conform` reads)
    #[arg(long, value_name = "FILE.csv", help_heading = SERVING)]
    trace: Option<PathBuf>,

    /// The request header (gRPC metadata) naming an attempt's call in
    /// --trace, the same on every attempt of a call
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CALL_ID_HEADER, value_parser = parse_header_name, help_heading = SERVING)]
    call_id_header: String,

    /// Replace existing --series and --trace files
    #[arg(long, help_heading = SERVING)]
    force: bool,

    #[command(flatten)]
    point: PointArgs,
}

/// The heading of serve's own flags, above the workload's.
const SERVING: &str = "Serving";

fn parse_header_name(text: &str) -> Result<String, String> {
    match hyper::header::HeaderName::from_bytes(text.as_bytes()) {
        Ok(name) => Ok(name.as_str().to_string()),
        Err(_) => Err("expected an HTTP header name, such as x-call-id".into()),
    }
}

fn parse_stop(text: &str) -> Result<Duration, String> {
    match parse_duration(text) {
        Ok(us) if us.is_zero() => Err("expected a duration above 0, such as 10s".into()),
        Ok(us) => Ok(Duration::from_micros(us.ticks())),
        Err(e) => Err(e.to_string()),
    }
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

pub(super) fn serve_command(args: &ServeArgs) -> Result<(), Failure> {
    let point = args.point.resolve().map_err(Failure::Usage)?;
    let (spec, _) = server_parts(&point.spec);
    let spec = live_server(&spec).map_err(Failure::Usage)?;
    if let Some(path) = &args.series {
        check_output_file(path, args.force).map_err(Failure::Usage)?;
    }
    if let Some(path) = &args.trace {
        if args.series.as_ref() == Some(path) {
            return Err(Failure::Usage(format!(
                "--trace {}: the same file as --series; give each its own",
                path.display()
            )));
        }
        check_output_file(path, args.force).map_err(Failure::Usage)?;
    }
    let config = ServeConfig {
        spec: spec.clone(),
        seed: herdsim::Seeds::for_job(point.seed, 0, 0).environment,
        listen: args.listen,
        stop_after: args.stop_after,
        trace_header: args.trace.as_ref().map(|_| args.call_id_header.clone()),
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
    if let (Some(path), Some(trace)) = (&args.trace, &report.trace) {
        write_whole_file(path, args.force, trace).map_err(Failure::Io)?;
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
         utilisation {:.3}, {} connections accepted\nservice sleeps ended late (each attempt held its worker this much past its drawn \
         service): {}\n",
        t.attempts,
        t.completions,
        t.successes,
        t.rejected,
        report.unheard,
        t.queue_peak,
        utilisation,
        report.connections,
        report.service_late.describe()
    )
}
