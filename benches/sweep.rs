//! `cargo bench -p herdsim-benches --bench sweep`: a 1,000-job sweep (seed 002's four strategies ×
//! 250 seeds, 1,000 clients) on a pool of one thread and of two, rows formatted
//! as CSV as `herdsim sweep` writes them. The ratio of the two times is the
//! parallel speed-up.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use herdsim::experiment::grid::Grid;
use herdsim::experiment::scenario::Scenario;
use herdsim::experiment::sweep::{SweepPlan, run_sweep};
use herdsim::report::csv as sweep_csv;
use herdsim::spec::params::param;

fn bench_sweep(c: &mut Criterion) {
    let mut grid = Grid::default();
    let policies = ["none", "equal", "full", "decorrelated"].map(String::from);
    grid.set(param("policy").unwrap(), policies.to_vec())
        .unwrap();
    let scenario = Scenario {
        grid,
        replicates: 250,
        ..Scenario::default()
    };
    let plan = SweepPlan {
        scenario: &scenario,
        points: 0..scenario.grid.len(),
        per_run: false,
        rows_done: 0,
        max_events: u64::MAX,
    };
    let mut group = c.benchmark_group("sweep-1000-jobs");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(12));
    group.throughput(Throughput::Elements(scenario.jobs()));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        group.bench_with_input(BenchmarkId::new("threads", threads), &plan, |b, plan| {
            b.iter(|| {
                let mut bytes = 0;
                let columns = sweep_csv::SweepColumns::of(plan);
                pool.install(|| {
                    run_sweep(
                        plan,
                        || {},
                        |row| {
                            bytes += sweep_csv::row_line(&row, &columns).len();
                            Ok::<_, ()>(())
                        },
                    )
                })
                .unwrap();
                black_box(bytes)
            })
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench_sweep(&mut criterion);
    criterion.final_summary();
}
