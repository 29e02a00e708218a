//! `cargo bench -p herdsim-benches --bench assess`: `herdsim assess` at its
//! default precision on the SRE's service of issue 37 (16 workers, a
//! lognormal 20 ms service, ρ ≈ 0.785, gRPC's retry policy with 5 attempts,
//! 1 s timeout) on a pool of two threads, beside the reference of one of
//! its run sets (16 seeds of a 500 ms outage, the recovery runs) on the
//! same pool: the ratio says how many run sets an assessment costs.

mod sre_service;

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use herdsim::experiment::assess::{
    AssessSettings, DEFAULT_BLIP_US, DEFAULT_KINDS, DEFAULT_PARTIAL, DEFAULT_ROUNDS, DEFAULT_SEEDS,
    assess,
};
use sre_service::{bench_run_set, sre_service};

fn settings() -> AssessSettings {
    AssessSettings {
        base: sre_service(),
        kinds: DEFAULT_KINDS.iter().map(|k| k.to_string()).collect(),
        blips: vec![DEFAULT_BLIP_US],
        partial: DEFAULT_PARTIAL,
        suggest: Some("finagle:0.2,ttl:10s,min:10".to_string()),
        seeds: DEFAULT_SEEDS,
        rounds: DEFAULT_ROUNDS,
        master_seed: 42,
        splitting: None,
    }
}

fn bench_assess(c: &mut Criterion) {
    let settings = settings();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("assess-sre-service");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(60));
    group.bench_function("assess, two threads", |b| {
        b.iter(|| {
            pool.install(|| {
                let made = assess(&settings, u64::MAX, |_, _| {}, || {}).unwrap();
                black_box(made.maps.len())
            })
        })
    });
    let recovery = settings.runs().unwrap().pop().unwrap().spec;
    bench_run_set(
        &mut group,
        "reference: one run set of 16 seeds, two threads",
        &recovery,
        &pool,
    );
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench_assess(&mut criterion);
    criterion.final_summary();
}
