//! What the assess and tune benches share: the SRE tutorial's service, read
//! from the scenario file their commands take, and the reference they are
//! timed beside (one run set of its replicates on the same pool).

use std::hint::black_box;

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use herdsim::experiment::scenario::Scenario;
use herdsim::experiment::server_runs::run_server_replicates;
use herdsim::measure::observer::Watch;
use herdsim::sim::queue::QueueKind;
use herdsim::spec::RunSpec;
use rayon::ThreadPool;

/// `scenarios/sre-service.toml`, as `herdsim assess` and `herdsim tune`
/// read it: 16 workers, lognormal 20 ms, ρ ≈ 0.785, 5 attempts of full
/// jitter, a 1 s timeout.
pub fn sre_service() -> RunSpec {
    let text = include_str!("../scenarios/sre-service.toml");
    Scenario::from_toml("scenarios/sre-service.toml", text)
        .unwrap()
        .grid
        .point(0)
}

/// The seeds both commands run by default.
pub const SEEDS: u32 = 16;

/// Times one run set of `spec` (`SEEDS` replicates from master seed 42) on
/// `pool`: the unit a search's time is read in.
pub fn bench_run_set(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    spec: &RunSpec,
    pool: &ThreadPool,
) {
    let watch = Watch {
        max_events: u64::MAX,
        on_progress: &|_, _| {},
        window_latencies: false,
    };
    group.bench_function(name, |b| {
        b.iter(|| {
            pool.install(|| {
                let runs =
                    run_server_replicates(spec, 42, 0, SEEDS, &watch, QueueKind::default(), || {});
                black_box(runs.len())
            })
        })
    });
}
