//! Invariants of the model over many small random configurations.

use herdsim::engine::{Observer, simulate, simulate_observed};
use herdsim::time::Micros;
use herdsim::{PolicyKind, PolicySpec, RunSpec};
use proptest::prelude::*;

/// Records what the engine reports, to check it against the model's rules.
#[derive(Default)]
struct Trace {
    served_at: Vec<Micros>,
    failed: u64,
    last_call: Micros,
    calls_in_order: bool,
    delays: Vec<Micros>,
}

impl Observer for Trace {
    fn call(&mut self, time: Micros, _client: u32, _attempt: u32, served: bool) {
        self.calls_in_order &= time >= self.last_call;
        self.last_call = time;
        if served {
            self.served_at.push(time);
        } else {
            self.failed += 1;
        }
    }

    fn delay(&mut self, _client: u32, _retry: u32, delay: Micros) {
        self.delays.push(delay);
    }
}

fn spec_strategy() -> impl Strategy<Value = RunSpec> {
    // Ranges keep every case fast: a cap far below the service time with many
    // clients makes millions of calls (a real runaway, but not a test's job).
    (
        1u32..300,
        prop::sample::select(PolicyKind::ALL.to_vec()),
        100u64..500_000,
        1_000u64..30_000_000,
        0u64..200_000,
        0.5f64..10.0,
        prop_oneof![Just(0.0), 0.0f64..=1.0],
        prop::option::of(1u64..50_000),
    )
        .prop_map(
            |(
                clients,
                kind,
                base_us,
                cap_us,
                step_us,
                capacity_per_ms,
                jitter_factor,
                window_us,
            )| {
                RunSpec {
                    clients,
                    capacity_per_ms,
                    policy: PolicySpec {
                        kind,
                        base_us,
                        cap_us,
                        step_us,
                        jitter_factor,
                    },
                    window_us,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_run_keeps_the_model_invariants(spec in spec_strategy(), seed in any::<u64>()) {
        let mut trace = Trace { calls_in_order: true, ..Trace::default() };
        let m = simulate_observed(&spec, seed, &mut trace);

        // Observing changes nothing.
        prop_assert_eq!(&m, &simulate(&spec, seed));
        // calls = successes + failed calls; successes + gave_up = clients.
        prop_assert_eq!(m.calls, m.successes + trace.failed);
        prop_assert_eq!(m.successes + m.gave_up, u64::from(spec.clients));
        prop_assert_eq!(m.retries, m.calls - u64::from(spec.clients));
        prop_assert!(trace.calls_in_order, "calls must happen in time order");
        // No two successes closer together than the service time.
        let service_ns = spec.service_ns();
        for pair in trace.served_at.windows(2) {
            prop_assert!((pair[1] - pair[0]) * 1_000 >= service_ns, "successes at {:?}", pair);
        }
        // Every delay in [0, cap], but for the jitter factor's overshoot.
        let max_delay = spec.policy.max_delay_us();
        prop_assert!(trace.delays.iter().all(|&d| d <= max_delay));
        if spec.policy.jitter_factor == 0.0 {
            prop_assert!(trace.delays.iter().all(|&d| d <= spec.policy.cap_us));
        }
        prop_assert_eq!(trace.delays.len() as u64, m.retries);
        // Metrics agree with the trace.
        prop_assert_eq!(m.last_success_us, *trace.served_at.last().unwrap());
        prop_assert!(m.peak_retries <= m.retries);
        prop_assert!(m.completion_p50_us <= m.completion_p99_us);
        prop_assert!(m.completion_p99_us <= m.completion_max_us);
        prop_assert_eq!(m.completion_max_us, m.last_success_us);
    }
}

#[test]
fn peak_retries_counts_the_busiest_window() {
    // Two clients without jitter, base 100 ms: one retry at 100 ms. Three clients:
    // retries at 100 ms (two of them) and at 300 ms (one).
    let spec = |clients| RunSpec {
        clients,
        capacity_per_ms: 1.0,
        policy: PolicySpec {
            kind: PolicyKind::None,
            base_us: 100_000,
            cap_us: 20_000_000,
            step_us: 0,
            jitter_factor: 0.0,
        },
        window_us: None,
    };
    assert_eq!(simulate(&spec(2), 0).peak_retries, 1);
    let three = simulate(&spec(3), 0);
    assert_eq!((three.calls, three.retries, three.peak_retries), (6, 3, 2));
    assert_eq!(three.last_success_us, 300_000);
}
