//! `herdsim bench`: the engine's speed at the standard sizes, so machines
//! (and versions) can be compared with one command.

use std::time::{Duration, Instant};

use clap::Args;
use indicatif::ProgressBar;

use super::bench_server::{chain_section, repeat_for, server_section, time_server_runs};
use super::progress::events_spinner;
use super::{CliError, policy_parser, spec_error, write_stdout};
use crate::base::error::BaseError;
use crate::base::format::group_thousands;
use crate::base::seeding::Seeds;
use crate::base::time::{Micros, format_duration, human_seconds};
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::NoObserver;
use crate::policy::PolicyKind;
use crate::report::aligned_text_first;
use crate::sim::engine::simulate_with;
use crate::sim::queue::QueueKind;
use crate::spec::{self, ParamError, RunSpec};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Herd sizes to time, one after another
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "1000,100000,1000000", value_parser = spec::parse_clients, allow_hyphen_values = true)]
    clients: Vec<u32>,

    /// Backoff policy (see `herdsim policies`); base 100 ms, cap 20 s
    #[arg(long, value_name = "POLICY", default_value = "decorrelated", value_parser = policy_parser(), allow_hyphen_values = true)]
    policy: PolicyKind,

    /// Event queues to time: radix, heap or both (radix,heap; auto is radix
    /// on the slot). The heap at 1,000,000 clients takes about 40 s a run
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "radix", value_parser = parse_queue, allow_hyphen_values = true)]
    queue: Vec<QueueKind>,

    /// Repeat each size until this much time has passed (at least one run)
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = spec::parse_positive_duration, allow_hyphen_values = true)]
    min_time: Micros,

    /// Runs of 1,000 clients timed on one thread, then on every thread, to
    /// show how seeds fan out across cores (0 skips it)
    #[arg(long, value_name = "RUNS", default_value = "2000", value_parser = parse_fan_out, allow_hyphen_values = true)]
    fan_out: u32,

    /// Server model: requests per run to time on an open-loop M/M/4 queue
    /// (0 skips the server section)
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "10000,1000000", value_parser = parse_server_requests, allow_hyphen_values = true)]
    server_requests: Vec<u64>,

    /// Skip the plain Python heapq reference of the server model (run in
    /// turns with herdsim for as long again: about 40 s at the default
    /// sizes; skipped anyway without python3)
    #[arg(long)]
    no_reference: bool,

    /// Hide the progress spinner
    #[arg(long, short)]
    quiet: bool,
}

fn parse_server_requests(text: &str) -> Result<u64, ParamError> {
    spec::parse_count(text, 0, 100_000_000)
}

fn parse_queue(text: &str) -> Result<QueueKind, BaseError> {
    text.parse()
}

fn parse_fan_out(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 0, 100_000).map(|n| n as u32)
}

/// One size's timing: every run does the same work (the same seed).
struct Timing {
    clients: u32,
    queue: QueueKind,
    calls: u64,
    runs: usize,
    median: Duration,
}

pub fn bench(args: &BenchArgs) -> Result<(), CliError> {
    let progress = events_spinner(args.quiet);
    let timings = time_runs(args, &progress)?;
    let fan_out = (args.fan_out > 0).then(|| {
        progress.set_message(format!("fan-out: {} runs of 1,000 clients", args.fan_out));
        fan_out(args.policy, args.fan_out)
    });
    let server_sizes: Vec<u64> = args
        .server_requests
        .iter()
        .copied()
        .filter(|&n| n > 0)
        .collect();
    let min_time = Duration::from_micros(args.min_time.ticks());
    let server_timings = time_server_runs(&server_sizes, &args.queue, min_time, &progress);
    let server = (!server_timings.is_empty()).then(|| {
        server_section(&server_timings, !args.no_reference, min_time, &progress)
            + &chain_section(min_time, &progress)
    });
    progress.finish_and_clear();

    let policy = RunSpec::seed_002(args.policy, 1).policy;
    let mut text = format!(
        "herdsim {} bench: slot model, 1 request per ms, herd, {} (base {}, cap {}), one thread per run\n\n",
        env!("CARGO_PKG_VERSION"),
        args.policy,
        format_duration(policy.base_us),
        format_duration(policy.cap_us)
    );
    text += &timings_table(&timings);
    if !policy.is_jittered() {
        text += "(without jitter the herd moves in waves, one event for many calls: the rate is calls/s)\n";
    }
    if let Some(fan) = fan_out {
        text += &fan.line(args.fan_out);
    }
    if let Some(server) = server {
        text += &server;
    }
    if let Some(peak_kb) = peak_resident_kb() {
        text += &memory_line(peak_kb, args.clients.iter().copied().max().unwrap_or(0));
    }
    write_stdout(&text)
}

/// Times runs of every size on every queue, each for at least `--min-time`.
fn time_runs(args: &BenchArgs, progress: &ProgressBar) -> Result<Vec<Timing>, CliError> {
    let min_time = Duration::from_micros(args.min_time.ticks());
    let seeds = Seeds::for_job(1, 0, 0);
    let mut timings = Vec::new();
    for &clients in &args.clients {
        let spec = RunSpec::seed_002(args.policy, clients);
        spec.validate().map_err(spec_error)?;
        for queue in args.queue.iter().map(|q| q.for_resource(spec.resource)) {
            let timed = repeat_for(min_time, |run| {
                progress.set_message(format!(
                    "{} clients, {} queue, run {}",
                    group_thousands(u64::from(clients)),
                    queue.name(),
                    run + 1
                ));
                simulate_with(&spec, seeds, &mut NoObserver, queue).calls
            });
            timings.push(Timing {
                clients,
                queue,
                calls: timed.last,
                runs: timed.runs,
                median: timed.median,
            });
        }
    }
    Ok(timings)
}

/// The process's peak memory, and per client where the clients dominate it
/// (`largest` clients, at least a million).
fn memory_line(peak_kb: u64, largest: u32) -> String {
    let mut text = format!(
        "peak resident memory of this process: {:.1} MB",
        peak_kb as f64 / 1024.0
    );
    if largest >= 1_000_000 {
        text += &format!(
            ", {:.0} bytes per client at {} clients",
            peak_kb as f64 * 1024.0 / f64::from(largest),
            group_thousands(u64::from(largest))
        );
    }
    text + "\n"
}

fn timings_table(timings: &[Timing]) -> String {
    let header = [
        "clients",
        "queue",
        "calls per run",
        "runs",
        "median run",
        "events/s",
    ];
    let rows: Vec<Vec<String>> = timings
        .iter()
        .map(|t| {
            vec![
                group_thousands(u64::from(t.clients)),
                t.queue.name().to_string(),
                group_thousands(t.calls),
                group_thousands(t.runs as u64),
                human_seconds(t.median.as_secs_f64(), 2),
                format!("{:.2} M", t.calls as f64 / t.median.as_secs_f64() / 1e6),
            ]
        })
        .collect();
    aligned_text_first(&header, &rows, 2)
}

impl FanOut {
    /// The fan-out's line of the report, for `runs` runs.
    fn line(&self, runs: u32) -> String {
        format!(
            "\nseed fan-out: {} runs of 1,000 clients: 1 thread {}, {} threads {}: {:.2}× ({})\n",
            group_thousands(u64::from(runs)),
            human_seconds(self.one_thread.as_secs_f64(), 2),
            self.threads,
            human_seconds(self.all_threads.as_secs_f64(), 2),
            self.one_thread.as_secs_f64() / self.all_threads.as_secs_f64(),
            if self.identical {
                "results identical"
            } else {
                "RESULTS DIFFER"
            }
        )
    }
}

struct FanOut {
    one_thread: Duration,
    all_threads: Duration,
    threads: usize,
    identical: bool,
}

/// Times `runs` replicates of 1,000 clients on a pool of one thread, then on
/// rayon's global pool (all cores, or `RAYON_NUM_THREADS`), and checks that
/// both give the same results.
fn fan_out(policy: PolicyKind, runs: u32) -> FanOut {
    use rayon::prelude::*;
    let spec = RunSpec::seed_002(policy, 1_000);
    let all = |spec: &RunSpec| -> Vec<RunMetrics> {
        (0..u64::from(runs))
            .into_par_iter()
            .map(|r| {
                simulate_with(
                    spec,
                    Seeds::for_job(1, 0, r),
                    &mut NoObserver,
                    QueueKind::default(),
                )
            })
            .collect()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let started = Instant::now();
    let serial = one.install(|| all(&spec));
    let one_thread = started.elapsed();
    // Start the global pool's threads before timing it.
    rayon::broadcast(|_| ());
    let started = Instant::now();
    let parallel = all(&spec);
    let all_threads = started.elapsed();
    FanOut {
        one_thread,
        all_threads,
        threads: rayon::current_num_threads(),
        identical: serial == parallel,
    }
}

/// The process's peak resident memory in KB, where the system says it
/// (`VmHWM` in `/proc/self/status`).
fn peak_resident_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
