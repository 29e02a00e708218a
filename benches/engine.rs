//! `cargo bench -p herdsim-benches --bench engine`: events (calls) per second of the event loop, single-threaded,
//! at 1,000, 100,000 and 1,000,000 clients on each event queue (the binary
//! heap only up to 100,000: at a million it takes a minute a run), then the
//! plain Python heapq reference
//! (`benches/reference/heapq_slot.py`) on the same machine in the same run.
//!
//! The server model's loop is timed the same way on an open-loop M/M/4
//! workload at about 10,000 and 1,000,000 requests a run, beside a minimal
//! Rust loop of the same run (`server-mm4/minimal-rust/…`,
//! `src/cli/bench_minimal.rs`) and `benches/reference/heapq_server.py`, the
//! same model and events in Python.
//!
//! criterion reports throughput in elements per second; an element is one
//! call. Each call is one event but under `none`, whose clients move in
//! waves (one event per instant, `src/wave.rs`): `none/<queue>/each-call`
//! times the one-call-at-a-time loop on the same workload.

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use herdsim::cli::bench_minimal::minimal_mmc;
use herdsim::cli::bench_server::{CHAIN_REQUESTS, chain_retry, chain_spec, mmc_spec, no_retry};
use herdsim::measure::observer::{NoObserver, Watch};
use herdsim::sim::engine::{simulate_each_call, simulate_with};
use herdsim::sim::queue::QueueKind;
use herdsim::sim::server_loop::{simulate_server, simulate_server_watched};
use herdsim::{PolicyKind, RunSpec, Seeds, simulate};

fn bench_engine(c: &mut Criterion) {
    let cases = [
        (PolicyKind::Decorrelated, 1_000),
        (PolicyKind::Full, 1_000),
        (PolicyKind::Equal, 1_000),
        (PolicyKind::None, 1_000),
        (PolicyKind::Decorrelated, 100_000),
        (PolicyKind::Decorrelated, 1_000_000),
    ];
    let mut group = c.benchmark_group("slot");
    for (kind, clients) in cases {
        let spec = RunSpec::seed_002(kind, clients);
        // The same seed every iteration, so every iteration does the same work.
        let seeds = Seeds::for_job(1, 0, 0);
        let events = simulate(&spec, seeds).calls;
        group.throughput(Throughput::Elements(events));
        if clients > 100_000 {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(45));
        } else if clients > 10_000 {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(8));
        } else {
            group
                .sample_size(30)
                .measurement_time(Duration::from_secs(3));
        }
        for queue in QueueKind::ALL {
            if queue == QueueKind::Heap && clients > 100_000 {
                continue;
            }
            let id = BenchmarkId::new(format!("{}/{}", kind.name(), queue.name()), clients);
            // Without jitter the clients move in waves (one event per
            // instant); time the one-call-at-a-time loop as well.
            if kind == PolicyKind::None {
                let each = BenchmarkId::new(
                    format!("{}/{}/each-call", kind.name(), queue.name()),
                    clients,
                );
                group.bench_with_input(each, &spec, |b, spec| {
                    b.iter(|| {
                        simulate_each_call(
                            black_box(spec),
                            black_box(seeds),
                            &mut NoObserver,
                            queue,
                        )
                    })
                });
            }
            group.bench_with_input(id, &spec, |b, spec| {
                b.iter(|| simulate_with(black_box(spec), black_box(seeds), &mut NoObserver, queue))
            });
        }
    }
    group.finish();
}

/// The server model's loop on the open-loop M/M/4 workload of `herdsim
/// bench` (ρ = 0.875, four events a request) at about 10,000 and 1,000,000
/// requests a run, on each event queue; an element is one event.
fn bench_server(c: &mut Criterion) {
    let mut group = c.benchmark_group("server-mm4");
    let retry = no_retry();
    let watch = Watch::UNLIMITED;
    let seeds = Seeds::for_job(1, 0, 0);
    for requests in [10_000, 1_000_000] {
        let spec = mmc_spec(requests);
        let events = simulate_server(&spec, &retry, seeds, u64::MAX).events;
        group.throughput(Throughput::Elements(events));
        if requests > 100_000 {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(10));
        } else {
            group
                .sample_size(30)
                .measurement_time(Duration::from_secs(3));
        }
        // The minimal Rust loop of the same run: what the model's
        // generality costs per event.
        group.bench_with_input(
            BenchmarkId::new("minimal-rust", requests),
            &requests,
            |b, &requests| b.iter(|| minimal_mmc(black_box(requests), black_box(seeds))),
        );
        for queue in QueueKind::ALL {
            let id = BenchmarkId::new(queue.name(), requests);
            group.bench_with_input(id, &spec, |b, spec| {
                b.iter(|| {
                    simulate_server_watched(
                        black_box(spec),
                        &retry,
                        black_box(seeds),
                        &watch,
                        queue,
                    )
                })
            });
        }
    }
    group.finish();
    // Layered services: a chain of 5 over that server at 10,000 user
    // requests (`herdsim bench` times the same run).
    let mut group = c.benchmark_group("server-chain");
    let (spec, retry) = (chain_spec(), chain_retry());
    let events = simulate_server(&spec, &retry, seeds, u64::MAX).events;
    group.throughput(Throughput::Elements(events));
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(3));
    group.bench_function(BenchmarkId::new("depth-5", CHAIN_REQUESTS), |b| {
        b.iter(|| {
            simulate_server_watched(
                black_box(&spec),
                &retry,
                black_box(seeds),
                &watch,
                QueueKind::Auto,
            )
        })
    });
    group.finish();
}

/// The events per second of a reference's JSON line.
fn reference_rate(line: &str) -> Option<f64> {
    line.split("\"events_per_second\": ")
        .nth(1)
        .and_then(|s| s.trim().trim_end_matches('}').parse::<f64>().ok())
}

/// Runs the Python heapq reference `script` (in `benches/reference/`), if
/// python3 is here, on each case's (size, runs) and prints its rate under
/// `label`.
fn python_reference(script: &str, label: &str, cases: [(&str, &str); 2]) {
    let script = format!("{}/reference/{script}", env!("CARGO_MANIFEST_DIR"));
    for (size, runs) in cases {
        match Command::new("python3").args([&script, size, runs]).output() {
            Ok(out) if out.status.success() => {
                let line = String::from_utf8_lossy(&out.stdout);
                match reference_rate(&line) {
                    Some(rate) => println!(
                        "reference/python-heapq/{label}/{size}: {:.3} Melem/s",
                        rate / 1e6
                    ),
                    None => println!("reference/python-heapq: unexpected output {line}"),
                }
            }
            _ => println!("reference/python-heapq: python3 not available, skipped"),
        }
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench_engine(&mut criterion);
    bench_server(&mut criterion);
    criterion.final_summary();
    // `cargo bench -- --list` and filtered runs skip the slow reference.
    if std::env::args().skip(1).all(|a| a == "--bench") {
        python_reference(
            "heapq_slot.py",
            "decorrelated",
            [("1000", "20"), ("100000", "1")],
        );
        python_reference(
            "heapq_server.py",
            "server-mm4",
            [("10000", "20"), ("1000000", "1")],
        );
    }
}
