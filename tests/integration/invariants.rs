//! Invariants of the model over many small random configurations, for every
//! resource model, arrival pattern and stop rule.

use herdsim::base::seeding::Seeds;
use herdsim::base::time::{Micros, Nanos};
use herdsim::control::aws_quota::AwsQuotaSpec;
use herdsim::control::ratio_budget::RatioBudgetSpec;
use herdsim::control::retry_after::RetryAfter;
use herdsim::control::{ControlSpec, Family};
use herdsim::measure::observer::{Observer, Watch};
use herdsim::model::ResourceKind;
use herdsim::model::arrivals::Arrivals;
use herdsim::model::chain::{Chain, LayerSpec, RetryScope};
use herdsim::model::server::{Dist, Load, NS_PER_MS, NS_PER_S, ServerSpec, Service};
use herdsim::policy::CapMode;
use herdsim::sim::engine::{simulate, simulate_each_call, simulate_observed, simulate_with};
use herdsim::sim::queue::QueueKind;
use herdsim::sim::server_loop::{ServerRetry, simulate_server_watched};
use herdsim::spec::Seeding;
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
    calls_of: std::collections::HashMap<u32, u32>,
    first_call_of: std::collections::HashMap<u32, Micros>,
    late_calls: u64,
    deadline: Option<Micros>,
    first_calls: u64,
}

impl Observer for Trace {
    fn call(&mut self, time: Micros, client: u32, attempt: u32, served: bool) {
        self.calls_in_order &= time >= self.last_call;
        self.last_call = time;
        *self.calls_of.entry(client).or_default() += 1;
        let first = *self.first_call_of.entry(client).or_insert(time);
        if attempt == 0 {
            assert_eq!(first, time);
            self.first_calls += 1;
        }
        if let Some(d) = self.deadline {
            // The OCC model's call is its write, two hops after the attempt
            // starts: allow those hops (|N(10 ms, 2 ms)| is under 40 ms).
            if time - first > d + Micros::from_ms(40) {
                self.late_calls += 1;
            }
        }
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
    let workload = (
        1u32..200,
        prop::sample::select(PolicyKind::ALL.to_vec()),
        100u64..500_000,
        1_000u64..30_000_000,
        0u64..200_000,
        0.5f64..10.0,
        prop_oneof![Just(0.0), 0.0f64..=1.0],
        prop::option::of(1u64..50_000),
        0u32..3,
        prop_oneof![Just(CapMode::Before), Just(CapMode::After)],
        prop_oneof![Just(2.0), 1.2f64..4.0],
    );
    let environment = (
        // The herd models: the server model's runs and metrics are its own.
        prop::sample::select(
            ResourceKind::VARIANTS
                .iter()
                .copied()
                .filter(|&r| r != ResourceKind::Server)
                .collect::<Vec<_>>(),
        ),
        prop_oneof![
            Just(Arrivals::Herd),
            (1u64..5_000_000).prop_map(|window_us| Arrivals::Uniform {
                window_us: Micros::from_ticks(window_us),
            }),
            (0.01f64..10.0).prop_map(|rate_per_ms| Arrivals::Poisson { rate_per_ms }),
        ],
        prop::option::of(
            (0u64..2_000_000, 1u64..3_000_000)
                .prop_map(|(a, b)| (Micros::from_ticks(a), Micros::from_ticks(a + b))),
        ),
        prop::option::of(1u32..12),
        prop::option::of(1u64..60_000_000),
    );
    let controls = (
        prop_oneof![Just(Seeding::Independent), Just(Seeding::Shared)],
        prop_oneof![
            Just(None),
            (1u64..300, 1u64..10, 0u64..3).prop_map(|(capacity, cost, refund)| Some(
                ControlSpec::AwsQuota(AwsQuotaSpec {
                    capacity,
                    cost,
                    refund,
                    timeout_cost: None,
                    throttle_cost: None,
                })
            )),
            (0.0f64..1.0, 0u64..20)
                .prop_map(|(ratio, min)| Some(ControlSpec::Ratio(RatioBudgetSpec { ratio, min }))),
        ],
        // Each rule with whether its refusal fails as a retryable error.
        prop_oneof![
            Just(("none", false)),
            Just(("cumulative:0.1", false)),
            Just(("windowed:0.1,window:50ms", false)),
            Just((
                "classic:0.5,window:100ms,calls:5,open:20ms,jitter:0.5",
                false
            )),
            Just((
                "resilience4j:50,window:10,min:5,slow:50,slow-call:5ms,open:20ms,permits:3",
                true
            )),
            Just((
                "resilience4j:20,window:1s,min:3,open:10ms,auto:on,half-open-max:5ms,refused:end",
                false
            )),
            Just(("polly:0.2,throughput:5,sampling:500ms,break:500ms", true)),
        ]
        .prop_map(|(rule, retried)| (ControlSpec::parse(Family::Breaker, rule).unwrap(), retried)),
        prop_oneof![
            Just("none"),
            Just("sre:2,window:1s"),
            Just("sre:1.1,window:2m")
        ]
        .prop_map(|rule| ControlSpec::parse(Family::Throttle, rule).unwrap()),
        prop::option::of(1u32..50),
        prop_oneof![
            Just(RetryAfter::Ignore),
            Just(RetryAfter::Floor),
            Just(RetryAfter::FloorJitter),
            Just(RetryAfter::Aws)
        ],
    );
    (workload, environment, controls).prop_filter_map(
        "valid specs only",
        |(
            (
                clients,
                kind,
                base_us,
                cap_us,
                step_us,
                capacity_per_ms,
                jitter_factor,
                window_us,
                first_exponent,
                cap_mode,
                multiplier,
            ),
            (resource, arrivals, down, max_attempts, deadline_us),
            (seeding, budget, (breaker, refusal_retried), throttle, fleet, retry_after),
        )| {
            // A refusal retried without a delay (no-backoff, or a delay
            // below a microsecond) comes back at the same instant, refused
            // again, forever: the loop a Polly or resilience4j client
            // without an attempt limit spins in. The CLI stops it at
            // --max-events; these tests' observers keep every call, so such
            // clients get an attempt limit.
            let max_attempts = match max_attempts {
                None if refusal_retried => Some(12),
                limit => limit,
            };
            let spec = RunSpec {
                clients,
                resource,
                capacity_per_ms,
                arrivals,
                down: down.filter(|_| resource == ResourceKind::Slot),
                policy: PolicySpec {
                    kind,
                    base_us: Micros::from_ticks(base_us),
                    cap_us: Micros::from_ticks(cap_us),
                    step_us: Some(Micros::from_ticks(step_us)),
                    jitter_factor,
                    first_exponent,
                    multiplier,
                    cap_mode,
                    // Varies with the jitter factor: the workload tuple has
                    // no room for an axis of its own.
                    randomization_factor: 1.0 - jitter_factor,
                    // The base's double: aws-2026 after a throttle.
                    throttle_base_us: Micros::from_ticks(base_us.saturating_mul(2)),
                },
                max_attempts,
                deadline_us: deadline_us.map(Micros::from_ticks),
                retry_on: herdsim::model::retry_on::RetryOn::ALL,
                hedge_delay_us: None,
                hedge_on_timeout: herdsim::model::timeout_hedging::HedgeOnTimeout::Off,
                window_us: window_us.map(Micros::from_ticks),
                seeding,
                budget,
                breaker,
                throttle,
                fleet,
                retry_after: if resource == ResourceKind::Slot {
                    retry_after
                } else {
                    RetryAfter::Ignore
                },
                server: Default::default(),
                occ: Default::default(),
            };
            spec.validate().is_ok().then_some(spec)
        },
    )
}

/// Every call of a run, in order: `(time, client, attempt, served)`.
#[derive(Default)]
struct CallLog(Vec<(Micros, u32, u32, bool)>);

impl Observer for CallLog {
    fn call(&mut self, time: Micros, client: u32, attempt: u32, served: bool) {
        self.0.push((time, client, attempt, served));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_run_keeps_the_model_invariants(spec in spec_strategy(), master in any::<u64>()) {
        let seeds = Seeds::for_job(master, 0, 0);
        let mut trace = Trace { calls_in_order: true, deadline: spec.deadline_us, ..Trace::default() };
        let m = simulate_observed(&spec, seeds, &mut trace);

        // Observing changes nothing.
        prop_assert_eq!(&m, &simulate(&spec, seeds));
        // calls = successes + failed calls; successes + gave_up = clients.
        prop_assert_eq!(m.calls, m.successes + trace.failed);
        prop_assert_eq!(m.successes + m.gave_up, u64::from(spec.clients));
        // Every client's first call is made, unless a breaker or throttle
        // refused it (the client then gave up without calling).
        prop_assert_eq!(m.retries, m.calls - trace.first_calls);
        if spec.breaker.is_none() && spec.throttle.is_none() {
            prop_assert_eq!(trace.first_calls, u64::from(spec.clients));
        }
        prop_assert!(trace.calls_in_order, "calls must happen in time order");
        if spec.max_attempts.is_none() && spec.deadline_us.is_none() && spec.controls().is_empty() {
            prop_assert_eq!(m.gave_up, 0);
        }
        // No client makes more attempts than allowed, nor starts one late.
        if let Some(n) = spec.max_attempts {
            prop_assert!(trace.calls_of.values().all(|&c| c <= n));
        }
        prop_assert_eq!(trace.late_calls, 0);
        // On the slot, no two successes closer together than the service time,
        // and none inside an outage window.
        if spec.resource == ResourceKind::Slot {
            let service_ns = spec.service_ns();
            for pair in trace.served_at.windows(2) {
                prop_assert!(Nanos::of_us(pair[1] - pair[0]) >= service_ns, "successes at {:?}", pair);
            }
            if let Some((from, to)) = spec.down {
                prop_assert!(trace.served_at.iter().all(|t| !(from..to).contains(t)));
            }
        }
        // Every delay in [0, cap], but for the documented overshoots: the
        // jitter factor's, gRPC's, and a server's retry hint.
        let max_delay = if spec.retry_after == RetryAfter::Ignore {
            spec.policy.max_delay_us()
        } else {
            Micros::MAX
        };
        prop_assert!(trace.delays.iter().all(|&d| d <= max_delay));
        if spec.policy.jitter_factor == 0.0
            && !matches!(
                spec.policy.kind,
                PolicyKind::GrpcConnection | PolicyKind::GrpcRetry
            )
            && spec.retry_after == RetryAfter::Ignore
        {
            prop_assert!(trace.delays.iter().all(|&d| d <= spec.policy.cap_us));
        }
        prop_assert!(m.peak_retries <= m.retries);
        prop_assert!(m.completion_p50_us <= m.completion_p99_us);
        prop_assert!(m.completion_p99_us <= m.completion_max_us);
        if spec.arrivals.is_herd() && spec.resource != ResourceKind::Occ && m.successes > 0 {
            // Herd clients start at 0 and finish on the call that succeeds.
            prop_assert_eq!(m.completion_max_us, m.last_success_us);
            prop_assert_eq!(Some(&m.last_success_us), trace.served_at.iter().max());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_radix_queue_gives_the_reference_heaps_results(spec in spec_strategy(), master in any::<u64>()) {
        // Same pop order: the same calls in the same order, so every metric is
        // identical, whatever the model.
        let seeds = Seeds::for_job(master, 0, 0);
        let mut heap_calls = CallLog::default();
        let mut radix_calls = CallLog::default();
        let heap = simulate_with(&spec, seeds, &mut heap_calls, QueueKind::Heap);
        let radix = simulate_with(&spec, seeds, &mut radix_calls, QueueKind::Radix);
        prop_assert_eq!(heap, radix);
        prop_assert_eq!(heap_calls.0, radix_calls.0);
    }
}

/// What a run reports: every call and every delay, in order.
#[derive(Default, PartialEq, Debug)]
struct FullLog {
    calls: Vec<(Micros, u32, u32, bool)>,
    delays: Vec<(u32, u32, Micros)>,
}

impl Observer for FullLog {
    fn call(&mut self, time: Micros, client: u32, attempt: u32, served: bool) {
        self.calls.push((time, client, attempt, served));
    }
    fn delay(&mut self, client: u32, retry: u32, delay: Micros) {
        self.delays.push((client, retry, delay));
    }
}

/// Workloads where clients move in waves: a policy without jitter on the
/// slot, no budget, no retry hints; the rest as random as `spec_strategy`.
fn wave_spec_strategy() -> impl Strategy<Value = RunSpec> {
    let unjittered = [
        PolicyKind::None,
        PolicyKind::Constant,
        PolicyKind::Linear,
        PolicyKind::Fibonacci,
        PolicyKind::NoBackoff,
    ];
    (
        spec_strategy(),
        prop::sample::select(unjittered.to_vec()),
        prop::bool::ANY,
    )
        .prop_filter_map("valid specs only", |(mut spec, kind, herd)| {
            spec.resource = ResourceKind::Slot;
            spec.policy.kind = kind;
            spec.policy.jitter_factor = 0.0;
            spec.budget = None;
            spec.retry_after = RetryAfter::Ignore;
            if herd {
                spec.arrivals = Arrivals::Herd;
            }
            spec.validate().is_ok().then_some(spec)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn waves_give_the_results_of_one_call_at_a_time(spec in wave_spec_strategy(), master in any::<u64>()) {
        // The same calls and delays in the same order, so the same metrics.
        let seeds = Seeds::for_job(master, 0, 0);
        for queue in [QueueKind::Radix, QueueKind::Heap] {
            let mut each = FullLog::default();
            let mut waves = FullLog::default();
            let reference = simulate_each_call(&spec, seeds, &mut each, queue);
            let waved = simulate_with(&spec, seeds, &mut waves, queue);
            prop_assert_eq!(&reference, &waved);
            prop_assert_eq!(&each, &waves);
        }
    }
}

#[test]
fn a_run_stopped_inside_a_wave_stops_where_one_call_at_a_time_stops() {
    // No jitter, 3,000 clients: the checks at 1,048,576 calls and its
    // multiples fall inside waves; stopping at any of them leaves the same
    // metrics as the reference loop.
    let spec = RunSpec::seed_002(PolicyKind::None, 3_000);
    for max_events in [1, 1_048_576, 2_097_152, 4_000_000] {
        let mut runs = Vec::new();
        for waves in [false, true] {
            let mut watch = Watch {
                max_events,
                on_progress: &|_, _| {},
                window_latencies: false,
            };
            let seeds = Seeds::for_job(1, 0, 0);
            runs.push(if waves {
                simulate_with(&spec, seeds, &mut watch, QueueKind::Radix)
            } else {
                simulate_each_call(&spec, seeds, &mut watch, QueueKind::Radix)
            });
        }
        assert_eq!(runs[0], runs[1], "max_events {max_events}");
        assert!(!runs[1].complete);
    }
}

#[test]
fn peak_retries_counts_the_busiest_window() {
    // Two clients without jitter, base 100 ms: one retry at 100 ms. Three clients:
    // retries at 100 ms (two of them) and at 300 ms (one).
    let spec = |clients| RunSpec::seed_002(PolicyKind::None, clients);
    let seeds = Seeds::for_job(0, 0, 0);
    assert_eq!(simulate(&spec(2), seeds).peak_retries, 1);
    let three = simulate(&spec(3), seeds);
    assert_eq!((three.calls, three.retries, three.peak_retries), (6, 3, 2));
    assert_eq!(three.last_success_us, Micros::from_ms(300));
}

/// Small random chains of services over the server model.
fn chain_strategy() -> impl Strategy<Value = (ServerSpec, ServerRetry)> {
    (
        (1u32..=5, 0.0f64..=1.0, prop::option::of(1u32..=4)),
        (prop::option::of(1u32..=3), 0.25f64..=4.0, any::<bool>()),
        (
            prop::option::of(5u64..=200),
            1u32..=4,
            0u64..=3,
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (depth, fail_rate, workers),
                (layer_workers, timeout_ratio, adjacent),
                (timeout_ms, attempts, layer_work_ms, jittered, own_policies),
            )| {
                // Each upper service backing off by a policy of its own.
                let own = [
                    PolicyKind::Decorrelated,
                    PolicyKind::Equal,
                    PolicyKind::Constant,
                ];
                let layers = if own_policies {
                    (0..depth as usize - 1)
                        .map(|i| LayerSpec {
                            policy: Some(own[i % own.len()]),
                            base_us: Some(Micros::from_ms(2)),
                            ..LayerSpec::default()
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let spec = ServerSpec {
                    load: Load::Open {
                        rate_per_s: 200.0,
                        sources: 1,
                        concurrency: None,
                    },
                    duration: NS_PER_S / 2,
                    workers,
                    fail_rate,
                    service: Service::One(Dist::Exp {
                        mean: 5 * NS_PER_MS,
                    }),
                    timeout: timeout_ms.map(|ms| ms * NS_PER_MS),
                    chain: Chain {
                        depth,
                        workers: layer_workers,
                        service: Dist::Const(layer_work_ms * NS_PER_MS),
                        timeout_ratio,
                        max_attempts: None,
                        retry_scope: if adjacent {
                            RetryScope::Adjacent
                        } else {
                            RetryScope::Every
                        },
                        layers,
                    },
                    ..ServerSpec::default()
                };
                let mut policy = RunSpec::seed_002(PolicyKind::NoBackoff, 1).policy;
                if jittered {
                    policy = PolicySpec {
                        kind: PolicyKind::Full,
                        base_us: Micros::from_ms(5),
                        ..policy
                    };
                }
                let retry = ServerRetry {
                    policy,
                    max_attempts: Some(attempts),
                    controls: Vec::new(),
                    fleet: None,
                    deadline: None,
                    retry_on: herdsim::model::retry_on::RetryOn::ALL,
                    hedge: None,
                    hedge_on_timeout: false,
                };
                (spec, retry)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_chain_keeps_its_books(chain in chain_strategy(), master in any::<u64>()) {
        // Every call ends once (success or given up), every attempt an upper
        // service takes becomes one call below it, a caller makes at most its
        // attempt limit per call, wasted work is part of the work, and both
        // event queues give the same run.
        let (spec, retry) = chain;
        let seeds = Seeds::for_job(master, 0, 0);
        let watch = Watch::UNLIMITED;
        let m = simulate_server_watched(&spec, &retry, seeds, &watch, QueueKind::Radix);
        prop_assert!(m.complete);
        prop_assert_eq!(m.successes + m.gave_up, m.requests);
        let depth = spec.chain.depth as usize;
        let attempts = u64::from(retry.max_attempts.unwrap());
        if depth == 1 {
            prop_assert!(m.layers.is_empty());
        } else {
            prop_assert_eq!(m.layers.len(), depth);
            prop_assert_eq!(m.layers[0].calls, m.requests);
            prop_assert_eq!(m.layers[0].successes, m.successes);
            prop_assert_eq!(m.layers[0].attempts, m.attempts);
            prop_assert_eq!(m.layers[depth - 1].attempts, m.arrived_at_server);
            for (i, l) in m.layers.iter().enumerate() {
                prop_assert_eq!(l.successes + l.gave_up, l.calls, "service {}", i + 1);
                prop_assert!(l.attempts <= l.calls * attempts);
                prop_assert!(l.wasted_ns <= l.busy_ns);
                if i + 1 < depth {
                    prop_assert_eq!(m.layers[i + 1].calls, l.attempts, "service {}", i + 1);
                }
            }
        }
        // The queues hold their events in storage of different sizes.
        let mut heap = simulate_server_watched(&spec, &retry, seeds, &watch, QueueKind::Heap);
        heap.state_bytes = m.state_bytes;
        prop_assert!(heap == m, "the heap's run differs from the radix heap's");
    }
}
