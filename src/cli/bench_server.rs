//! `herdsim bench`'s server section: events per second of the server model's
//! loop on an open-loop M/M/c workload (the model of its Erlang check), the
//! state it holds per request in flight, and the plain Python `heapq`
//! reference of the same model and events timed in the same run.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::base::format::group_thousands;
use crate::base::seeding::Seeds;
use crate::base::time::human_seconds;
use crate::cli::bench_minimal::minimal_mmc;
use crate::measure::observer::Watch;
use crate::model::server::{Dist, Load, NS_PER_MS, Nanos, ServerSpec, Service};
use crate::policy::PolicyKind;
use crate::report::aligned_text_first;
use crate::sim::queue::QueueKind;
use crate::sim::server_loop::{ServerRetry, simulate_server_watched};
use crate::spec::RunSpec;

/// The reference, carried in the binary so `herdsim bench` runs it anywhere
/// python3 is.
const REFERENCE: &str = include_str!("../../benches/reference/heapq_server.py");

/// Workers of the benchmark's M/M/c server.
pub const WORKERS: u32 = 4;
/// Its arrival rate, per ms (ρ = 0.875 on 4 workers of 1 ms mean service).
pub const RATE_PER_MS: f64 = 3.5;

/// The benchmark's workload: `requests` expected over the load's duration.
pub fn mmc_spec(requests: u64) -> ServerSpec {
    ServerSpec {
        load: Load::Open {
            rate_per_s: RATE_PER_MS * 1e3,
            sources: 1,
            concurrency: None,
        },
        duration: Nanos::from_ticks(
            (requests as f64 / RATE_PER_MS * NS_PER_MS.ticks() as f64) as u64,
        ),
        workers: Some(WORKERS),
        queue_limit: None,
        service: Service::One(Dist::Exp { mean: NS_PER_MS }),
        ..ServerSpec::default()
    }
}

/// No retries, no controls: every request is one attempt.
pub fn no_retry() -> ServerRetry {
    ServerRetry {
        policy: RunSpec::seed_002(PolicyKind::None, 1).policy,
        max_attempts: Some(1),
        controls: Vec::new(),
        fleet: None,
        deadline: None,
        retry_on: crate::model::retry_on::RetryOn::ALL,
        hedge: None,
        hedge_on_timeout: false,
    }
}

/// Services in the benchmark's chain, the server included.
pub const CHAIN_DEPTH: u32 = 5;
/// User requests per run of the chain.
pub const CHAIN_REQUESTS: u64 = 10_000;

/// The chain benchmark's workload: [`mmc_spec`]'s M/M/4 server failing 10%
/// of attempts at the bottom of [`CHAIN_DEPTH`] services, the ones above it
/// with unbounded workers and no work of their own.
pub fn chain_spec() -> ServerSpec {
    ServerSpec {
        fail_rate: 0.1,
        chain: crate::model::chain::Chain {
            depth: CHAIN_DEPTH,
            ..crate::model::chain::Chain::default()
        },
        ..mmc_spec(CHAIN_REQUESTS)
    }
}

/// Every caller of the chain makes up to 3 attempts, at once.
pub fn chain_retry() -> ServerRetry {
    ServerRetry {
        policy: RunSpec::seed_002(PolicyKind::NoBackoff, 1).policy,
        max_attempts: Some(3),
        ..no_retry()
    }
}

/// Times runs of the chain for at least `min_time` (the same seed every
/// run) and says how long the median run took, with its events per second.
pub fn chain_section(min_time: Duration, progress: &ProgressBar) -> String {
    let (spec, retry) = (chain_spec(), chain_retry());
    let seeds = Seeds::for_job(1, 0, 0);
    let watch = Watch::UNLIMITED;
    progress.set_message(format!(
        "a chain of {CHAIN_DEPTH} services, {} user requests",
        group_thousands(CHAIN_REQUESTS)
    ));
    let timed = repeat_for(min_time, |_| {
        simulate_server_watched(&spec, &retry, seeds, &watch, QueueKind::Auto)
    });
    let (m, median) = (timed.last, timed.median);
    format!(
        "a chain of {CHAIN_DEPTH} services over that server failing 10% of attempts, 3 attempts at \
         every caller (unbounded upper workers): {} user requests, {} server attempts per \
         request, {} events a run: median run {} ({} runs), {:.2} M events/s\n",
        group_thousands(m.requests),
        format_args!("{:.2}", m.arrived_at_server as f64 / m.requests as f64),
        group_thousands(m.events),
        human_seconds(median.as_secs_f64(), 2),
        group_thousands(timed.runs as u64),
        m.events as f64 / median.as_secs_f64() / 1e6
    )
}

/// Runs that [`repeat_for`] timed.
pub struct Repeated<R> {
    /// The last run's result (every run does the same work).
    pub last: R,
    /// The median run's time: steadier than the mean on a shared machine.
    pub median: Duration,
    pub runs: usize,
}

/// Runs `run` (given the run's number, from 0) again and again until
/// `min_time` has passed, at least once.
pub fn repeat_for<R>(min_time: Duration, mut run: impl FnMut(usize) -> R) -> Repeated<R> {
    let mut times = Vec::new();
    let started = Instant::now();
    loop {
        let run_started = Instant::now();
        let last = run(times.len());
        times.push(run_started.elapsed());
        if started.elapsed() >= min_time {
            times.sort();
            return Repeated {
                last,
                median: times[times.len() / 2],
                runs: times.len(),
            };
        }
    }
}

/// One size's timing.
pub struct ServerTiming {
    requests: u64,
    queue: QueueKind,
    events: u64,
    runs: usize,
    median: Duration,
    peak_in_flight: u64,
    state_bytes: u64,
}

impl ServerTiming {
    fn events_per_second(&self) -> f64 {
        self.events as f64 / self.median.as_secs_f64()
    }
}

/// Times runs of about `sizes` requests on every queue, each for at least
/// `min_time` (the same seed every run, so every run does the same work).
pub fn time_server_runs(
    sizes: &[u64],
    queues: &[QueueKind],
    min_time: Duration,
    progress: &ProgressBar,
) -> Vec<ServerTiming> {
    let seeds = Seeds::for_job(1, 0, 0);
    let retry = no_retry();
    let watch = Watch::UNLIMITED;
    let mut timings = Vec::new();
    for &requests in sizes {
        let spec = mmc_spec(requests);
        for &queue in queues {
            let queue = queue.for_resource(crate::model::ResourceKind::Server);
            let timed = repeat_for(min_time, |run| {
                progress.set_message(format!(
                    "server, {} requests, {} queue, run {}",
                    group_thousands(requests),
                    queue.name(),
                    run + 1
                ));
                simulate_server_watched(&spec, &retry, seeds, &watch, queue)
            });
            let m = timed.last;
            timings.push(ServerTiming {
                requests: m.requests,
                queue,
                events: m.events,
                runs: timed.runs,
                median: timed.median,
                peak_in_flight: m.peak_in_flight,
                state_bytes: m.state_bytes,
            });
        }
    }
    timings
}

/// A run of the benchmark's workload at `requests` on `queue` (the same
/// seed every time, so every run does the same work): its events.
fn benchmark_run(requests: u64, queue: QueueKind) -> impl FnMut() -> u64 {
    let (spec, retry) = (mmc_spec(requests), no_retry());
    let seeds = Seeds::for_job(1, 0, 0);
    move || simulate_server_watched(&spec, &retry, seeds, &Watch::UNLIMITED, queue).events
}

/// Events per second over one span of `run`s lasting at least `span` (at
/// least one run); `run` says how many events it handled.
fn span_rate(span: Duration, mut run: impl FnMut() -> u64) -> f64 {
    let (started, mut events) = (Instant::now(), 0);
    while events == 0 || started.elapsed() < span {
        events += run();
    }
    events as f64 / started.elapsed().as_secs_f64()
}

/// The queue with the most events per second at `requests`.
fn fastest_queue(timings: &[ServerTiming], requests: u64) -> Option<QueueKind> {
    timings
        .iter()
        .filter(|t| t.requests == requests)
        .max_by(|a, b| a.events_per_second().total_cmp(&b.events_per_second()))
        .map(|t| t.queue)
}

/// The Python reference and herdsim, each's fastest of the same number of
/// equally long spans, taken in turns: per round, some of Python's runs,
/// then as many spans of herdsim's runs, each as long as Python's mean run
/// (herdsim's runs are 40 times shorter, and a short run catches a quiet
/// moment more often than a long one). On a shared machine, interference
/// only ever slows a run down (on the development machine, the same run's
/// time moved by up to 60% within minutes): the fastest span is the
/// steadiest figure of either, and taking turns gives both the same spells.
struct PairedReference {
    /// Python's fastest run, events per second.
    python: f64,
    /// Herdsim's fastest span, events per second.
    herdsim: f64,
    /// Runs of each, all rounds together.
    runs: u32,
    /// Python's mean sojourn, ms.
    sojourn_ms: f64,
}

/// Runs [`PairedReference`]'s rounds at `requests` on `queue`: ten rounds
/// of four runs each at 10,000 requests (40 runs of the reference, 1.5 s
/// of Python: with 20 in five rounds, one slow spell of either side still
/// moved the ratio from 33× to 27× or 54×), five of one each at a million
/// (with three, one slow spell over herdsim's three spans there gave 22×
/// where the rest of the bench gave 30× to 33×). `None` without python3.
fn paired_reference(
    requests: u64,
    queue: QueueKind,
    progress: &ProgressBar,
) -> Option<PairedReference> {
    let runs = (4_000_000 / requests.max(1)).clamp(5, 40) as u32;
    let rounds = runs.min(10);
    let runs_per_round = runs / rounds;
    let mut herdsim = benchmark_run(requests, queue);
    let mut paired = PairedReference {
        python: 0.0,
        herdsim: 0.0,
        runs: rounds * runs_per_round,
        sojourn_ms: 0.0,
    };
    for round in 1..=rounds {
        progress.set_message(format!(
            "python heapq reference and herdsim in turns, {} requests, round {round} of {rounds}",
            group_thousands(requests)
        ));
        let python = python_reference(requests, runs_per_round)?;
        paired.python = paired.python.max(python.fastest_run);
        paired.sojourn_ms += python.sojourn_ms / f64::from(rounds);
        let span = Duration::from_secs_f64(python.seconds / f64::from(runs_per_round));
        for _ in 0..runs_per_round {
            paired.herdsim = paired.herdsim.max(span_rate(span, &mut herdsim));
        }
    }
    Some(paired)
}

/// Spans of the minimal loop and of herdsim's, in turns, for the minimal
/// loop's comparison.
const MINIMAL_SPANS: u32 = 5;

/// The minimal loop's and herdsim's fastest of [`MINIMAL_SPANS`] spans each
/// at `requests` on `queue`, taken in turns (as [`PairedReference`]'s, for
/// the same reason), together lasting about `min_time`: events per second.
fn paired_minimal(requests: u64, queue: QueueKind, min_time: Duration) -> (f64, f64) {
    let seeds = Seeds::for_job(1, 0, 0);
    let mut herdsim_run = benchmark_run(requests, queue);
    let span = min_time / (2 * MINIMAL_SPANS);
    let (mut minimal, mut herdsim) = (0.0_f64, 0.0_f64);
    for _ in 0..MINIMAL_SPANS {
        minimal = minimal.max(span_rate(span, || minimal_mmc(requests, seeds).events));
        herdsim = herdsim.max(span_rate(span, &mut herdsim_run));
    }
    (minimal, herdsim)
}

/// What a call of the Python reference measured.
struct PythonRuns {
    /// Its fastest run's events per second.
    fastest_run: f64,
    /// The mean sojourn over its runs, ms.
    sojourn_ms: f64,
    /// Its runs' time in all.
    seconds: f64,
}

/// Runs the Python reference `runs` times at `requests`; `None` without
/// python3.
fn python_reference(requests: u64, runs: u32) -> Option<PythonRuns> {
    let mut child = Command::new("python3")
        .args([
            "-",
            &requests.to_string(),
            &runs.to_string(),
            &WORKERS.to_string(),
            &RATE_PER_MS.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(REFERENCE.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(PythonRuns {
        fastest_run: report["fastest_run_events_per_second"].as_f64()?,
        sojourn_ms: report["mean_sojourn_ms"].as_f64()?,
        seconds: report["seconds"].as_f64()?,
    })
}

/// The server section of the report: the timings, the state per request in
/// flight, the minimal Rust loop of the same run timed for `min_time` at
/// each size, and the Python reference beside the fastest queue's rate
/// (unless `reference` is false).
pub fn server_section(
    timings: &[ServerTiming],
    reference: bool,
    min_time: Duration,
    progress: &ProgressBar,
) -> String {
    let mut text = format!(
        "\nserver model: open-loop M/M/{WORKERS} at ρ = 0.875 ({} requests/s, exponential 1 ms \
         service, unbounded FIFO queue, no timeout, no retries; 4 events a request), one thread \
         per run\n\n",
        group_thousands((RATE_PER_MS * 1e3) as u64)
    );
    let header = [
        "requests",
        "queue",
        "events per run",
        "runs",
        "median run",
        "events/s",
        "peak in flight",
        "state",
    ];
    let rows: Vec<Vec<String>> = timings
        .iter()
        .map(|t| {
            vec![
                group_thousands(t.requests),
                t.queue.name().to_string(),
                group_thousands(t.events),
                group_thousands(t.runs as u64),
                human_seconds(t.median.as_secs_f64(), 2),
                format!("{:.2} M", t.events_per_second() / 1e6),
                group_thousands(t.peak_in_flight),
                format!("{:.1} KB", t.state_bytes as f64 / 1024.0),
            ]
        })
        .collect();
    text += &aligned_text_first(&header, &rows, 2);
    let largest = timings.iter().map(|t| t.requests).max().unwrap_or(0);
    if let Some(t) = timings.iter().find(|t| t.requests == largest) {
        text += &format!(
            "state is the request slab, the server's queue and the pending events at their \
             largest: {:.0} bytes per request in flight at {} requests ({} queue); it follows \
             what is in flight, not the requests in a run\n",
            t.state_bytes as f64 / t.peak_in_flight.max(1) as f64,
            group_thousands(t.requests),
            t.queue.name()
        );
    }
    let mut sizes: Vec<u64> = timings.iter().map(|t| t.requests).collect();
    sizes.dedup();
    // Each size's comparisons run herdsim on its fastest queue.
    let sizes: Vec<(u64, QueueKind)> = sizes
        .into_iter()
        .filter_map(|requests| Some((requests, fastest_queue(timings, requests)?)))
        .collect();
    for &(requests, queue) in &sizes {
        progress.set_message(format!(
            "minimal Rust loop, {} requests",
            group_thousands(requests)
        ));
        let (minimal, herdsim) = paired_minimal(requests, queue, min_time);
        text += &format!(
            "minimal Rust loop of the same run, {} requests, fastest of {MINIMAL_SPANS} spans \
             taken in turns with as many of herdsim's: {:.2} M events/s against herdsim's {:.2} \
             M: herdsim's loop at {:.0}% of its speed\n",
            group_thousands(requests),
            minimal / 1e6,
            herdsim / 1e6,
            100.0 * herdsim / minimal
        );
    }
    if !reference {
        return text;
    }
    for (requests, queue) in sizes {
        let Some(paired) = paired_reference(requests, queue, progress) else {
            text += "python heapq reference: python3 not available, skipped\n";
            break;
        };
        text += &format!(
            "python heapq reference, {} requests, fastest of {} runs: {:.2} M events/s (W {:.2} \
             ms; Erlang C 2.48); herdsim's fastest of as many spans as long, taken in turns with \
             Python's runs: {:.2} M: herdsim {:.1}× per event\n",
            group_thousands(requests),
            paired.runs,
            paired.python / 1e6,
            paired.sojourn_ms,
            paired.herdsim / 1e6,
            paired.herdsim / paired.python
        );
    }
    text
}
