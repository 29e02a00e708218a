//! `cargo bench -p herdsim-benches --bench exact`: the exact solver's speed
//! at the sizes issue 38 names, on a pool of two threads.
//!
//! - metafor's nominal chain (2,000 states): every figure metafor reports
//!   (stationary, mixing, return and entry times), beside the reference of
//!   one plain dense Gaussian elimination of the same 2,000 × 2,000
//!   system, what a solver that ignores the band costs;
//! - herdsim's own chain of `scenarios/exact-small.toml` (8,512 states):
//!   everything `herdsim exact` prints, the orbit cap's search included;
//! - the same service with a queue of 20 and the orbit capped at 215
//!   (100,008 states, 463 per orbit count): every figure.
//!
//! The issue asks for 2,000 states well under a second and 100,000 under a
//! minute.

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use herdsim::exact::metafor::MetaforChain;
use herdsim::exact::server_chain::{ChainModel, ServerChain};
use herdsim::exact::server_figures::{Regions, server_figures};

/// The chain of `scenarios/exact-small.toml`, its orbit capped at `cap`.
fn small_service(queue_limit: usize, rate: f64, cap: usize) -> ChainModel {
    ChainModel {
        arrival_rate: rate,
        service_rate: 1000.0,
        workers: 1,
        queue_limit,
        timeout_rate: 100.0,
        retry_rate: 50.0,
        persistence: 0.75,
        retry_on_failure: true,
        retry_on_rejected: true,
        retry_on_timeout: true,
        fail_rate: 0.0,
        orbit_cap: cap,
    }
}

/// Solves A x = b by Gaussian elimination with partial pivoting on the
/// dense matrix: the reference's whole cost is n³/3 multiply-adds.
fn dense_solve(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Vec<f64> {
    for k in 0..n {
        let pivot = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap();
        if pivot != k {
            for j in 0..n {
                a.swap(k * n + j, pivot * n + j);
            }
            b.swap(k, pivot);
        }
        let d = a[k * n + k];
        for i in k + 1..n {
            let f = a[i * n + k] / d;
            if f != 0.0 {
                for j in k..n {
                    a[i * n + j] -= f * a[k * n + j];
                }
                b[i] -= f * b[k];
            }
        }
    }
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| a[k * n + j] * b[j]).sum();
        b[k] = (b[k] - s) / a[k * n + k];
    }
    b
}

fn bench_exact(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("exact");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    let metafor = MetaforChain::nominal();
    group.bench_function("metafor nominal, 2,000 states: every figure", |b| {
        b.iter(|| pool.install(|| black_box(metafor.figures().unwrap())))
    });
    // The reference: πQ = 0 with π₀ pinned, as one dense solve.
    let g = metafor.generator();
    let n = g.size();
    let mut dense = vec![0.0; n * n];
    for i in 0..n {
        for &(j, r) in g.rates(i) {
            dense[j * n + i] += r;
        }
        dense[i * n + i] -= g.exit_rate(i);
    }
    // Row 0 of Qᵀ becomes π₀ = 1.
    dense[..n].fill(0.0);
    dense[0] = 1.0;
    let mut rhs = vec![0.0; n];
    rhs[0] = 1.0;
    group.bench_function(
        "reference: one dense solve of metafor's 2,000 states",
        |b| b.iter(|| black_box(dense_solve(dense.clone(), rhs.clone(), n))),
    );
    let regions = Regions { high: 9, low: 1 };
    group.bench_function("herdsim exact-small, 8,512 states: every figure", |b| {
        b.iter(|| {
            pool.install(|| {
                let (chain, _, pi) =
                    ServerChain::with_negligible_cap(small_service(10, 600.0, 1), 200_000).unwrap();
                black_box(server_figures(&chain, regions, None, Some(pi)).unwrap())
            })
        })
    });
    // About 56 s an iteration: criterion's ten take some ten minutes.
    group.measurement_time(Duration::from_secs(600));
    let large = ServerChain::new(small_service(20, 400.0, 215), 200_000).unwrap();
    assert_eq!(large.size(), 100_008);
    let wide = Regions { high: 25, low: 2 };
    group.bench_function("herdsim queue 20, 100,008 states: every figure", |b| {
        b.iter(|| pool.install(|| black_box(server_figures(&large, wide, None, None).unwrap())))
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench_exact(&mut criterion);
    criterion.final_summary();
}
