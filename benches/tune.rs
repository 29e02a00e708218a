//! `cargo bench -p herdsim-benches --bench tune`: `herdsim tune` over a
//! two-field control (gRPC's retryThrottling: maxTokens × tokenRatio, its
//! declared coarse grid) at the default precision (16 seeds, two
//! refinement rounds) on the SRE's service of issue 37, on a pool of two
//! threads, beside the reference of one of its run sets (16 seeds of the
//! stall) on the same pool: the ratio says how many run sets a search
//! costs. Issue 37 asks for under 5 minutes on two cores.

mod sre_service;

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use herdsim::control::{ABOUT, Family};
use herdsim::experiment::assess::DEFAULT_PARTIAL;
use herdsim::experiment::tune::{
    DEFAULT_BOUND, DEFAULT_ROUNDS, DEFAULT_STALL, Field, Measure, Tune, TuneSettings, run_tune,
};
use sre_service::{SEEDS, bench_run_set, sre_service};

fn settings() -> TuneSettings {
    let about = ABOUT.iter().find(|a| a.name == "grpc").unwrap();
    let tuning = about.tuning.unwrap();
    let fields: Vec<Field> = tuning.knobs.iter().map(Field::of_knob).collect();
    let rows = fields
        .iter()
        .filter(|f| f.varies())
        .nth(1)
        .unwrap()
        .values
        .len();
    let settings = TuneSettings {
        base: sre_service(),
        family: Family::Budget,
        start: tuning.start.to_string(),
        fields,
        bound: DEFAULT_BOUND,
        partial: DEFAULT_PARTIAL,
        stall: DEFAULT_STALL.to_string(),
        seeds: SEEDS,
        rounds: DEFAULT_ROUNDS,
        rows: 0..rows,
        master_seed: 42,
    };
    settings.check().unwrap();
    settings
}

fn bench_tune(c: &mut Criterion) {
    let settings = settings();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("tune-sre-service-grpc");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(90));
    group.bench_function("tune grpc (maxTokens x tokenRatio), two threads", |b| {
        b.iter(|| {
            pool.install(|| {
                let mut tune = Tune::new(settings.clone());
                run_tune::<()>(
                    &mut tune,
                    u64::MAX,
                    &|_, _, _| None,
                    |_, _| {},
                    || {},
                    |_, _, _, _| Ok(()),
                )
                .unwrap();
                black_box(tune.made.len())
            })
        })
    });
    let stall = settings.spec(&settings.start, Measure::Stall).unwrap();
    bench_run_set(
        &mut group,
        "reference: one run set of 16 seeds of the stall, two threads",
        &stall,
        &pool,
    );
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench_tune(&mut criterion);
    criterion.final_summary();
}
