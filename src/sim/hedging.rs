//! The server loop's state of hedged requests ([`crate::model::hedging`]
//! says what they do): per request slot, its copies in flight and whether
//! its hedging is frozen. Kept beside the slab of requests, not in it, so a
//! run without hedging keeps its requests as small as they were.

use crate::model::hedging::Hedge;
use crate::sim::request_slots::RequestSlots;

/// One request's copies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copies {
    /// Copies sent whose reply the request still awaits. A copy ends only by
    /// its reply (its server always answers) or with its request, so a reply
    /// for a request still in flight is always one of these.
    pub in_flight: u32,
    /// No more hedges: the throttle refused the next one when a hedge was
    /// sent (grpc-java's `freezeHedging`; not at the first copy, as there).
    pub frozen: bool,
}

/// Hedging's parameters and every request slot's copies.
#[derive(Debug, Clone)]
pub struct Hedging {
    /// The delay and the most copies.
    pub hedge: Hedge,
    /// Each request slot's copies.
    pub slots: RequestSlots<Copies>,
}

impl Hedging {
    /// No request yet.
    pub fn new(hedge: Hedge) -> Self {
        Hedging {
            hedge,
            slots: RequestSlots::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::Seeds;
    use crate::control::{ControlSpec, Family};
    use crate::model::retry_on::RetryOn;
    use crate::model::server::{
        Dist, Load, NS_PER_MS, Nanos, ServerSpec, Service, Trigger, TriggerKind,
    };
    use crate::policy::PolicyKind;
    use crate::sim::server_loop::{ServerRetry, simulate_server};
    use crate::spec::RunSpec;

    #[test]
    fn a_slot_reused_starts_with_no_copies_and_hedging_not_frozen() {
        let mut h = Hedging::new(Hedge {
            delay: Nanos::from_ticks(10),
            copies: 3,
        });
        let c = h.slots.start(4);
        c.in_flight = 2;
        c.frozen = true;
        assert_eq!(h.slots.of(4).in_flight, 2);
        assert_eq!(*h.slots.start(4), Copies::default());
        assert_eq!(*h.slots.of(0), Copies::default());
    }

    const MS: Nanos = NS_PER_MS;

    /// `users` users, each making a request at t = 0 and another `think`
    /// after each ends while the load lasts (1 ms), served in a constant
    /// `service` by unbounded workers with no network delay: every time in a
    /// run is exact.
    fn closed(users: u32, service: Nanos, think: Nanos) -> ServerSpec {
        assert!(users >= 1);
        ServerSpec {
            load: Load::Closed {
                users,
                think: Dist::Const(think),
            },
            first_call: Some(Dist::Const(Nanos::ZERO)),
            duration: MS,
            workers: None,
            service: Service::One(Dist::Const(service)),
            ..ServerSpec::default()
        }
    }

    /// Its user thinks 0 after it: past the load's 1 ms, no request follows,
    /// and the run ends when the request does, or its last copy's service.
    fn one_request(service: Nanos) -> ServerSpec {
        closed(1, service, Nanos::ZERO)
    }

    /// Every attempt completing in `[from, to)` fails (an outage trigger).
    fn failing(spec: ServerSpec, from: Nanos, to: Nanos) -> ServerSpec {
        ServerSpec {
            triggers: vec![Trigger {
                kind: TriggerKind::Outage,
                from,
                to,
            }],
            ..spec
        }
    }

    fn hedged(delay: Nanos, copies: u32) -> ServerRetry {
        ServerRetry {
            policy: RunSpec::seed_002(PolicyKind::None, 1).policy,
            max_attempts: Some(copies),
            controls: Vec::new(),
            fleet: None,
            deadline: None,
            retry_on: RetryOn::ALL,
            hedge: Some(Hedge { delay, copies }),
            hedge_on_timeout: false,
        }
    }

    fn run(
        spec: &ServerSpec,
        retry: &ServerRetry,
    ) -> crate::measure::server_metrics::ServerMetrics {
        let m = simulate_server(spec, retry, Seeds::for_job(3, 0, 0), u64::MAX);
        assert!(m.complete);
        m
    }

    #[test]
    fn the_second_copy_goes_at_the_hedge_delay_not_when_the_first_fails() {
        // The first copy fails at 2 ms (the outage covers [0, 4 ms)); the
        // second goes at 3 ms, the delay, and succeeds at 5 ms. Sent at the
        // failure, as gRFC A6's prose says, it would succeed at 4 ms.
        let spec = failing(one_request(2 * MS), Nanos::ZERO, 4 * MS);
        let m = run(&spec, &hedged(3 * MS, 3));
        assert_eq!((m.requests, m.successes, m.attempts), (1, 1, 2));
        assert_eq!(m.latency_total_ns, 5 * u128::from(MS.ticks()));
    }

    #[test]
    fn the_first_success_ends_the_request_and_the_losers_are_still_served() {
        // Copies at 0, 3, 6 and 9 ms, each served 10 ms: the first wins at
        // 10 ms, and the server works 40 ms for one success of 10 ms.
        let spec = one_request(10 * MS);
        let m = run(&spec, &hedged(3 * MS, 4));
        assert_eq!((m.successes, m.attempts, m.arrived_at_server), (1, 4, 4));
        assert_eq!(m.latency_total_ns, 10 * u128::from(MS.ticks()));
        assert_eq!(m.busy_ns, 40 * u128::from(MS.ticks()));
        // Every copy started while the request lasted: none is counted
        // wasted (that is judged when a worker takes it).
        assert_eq!(m.wasted_ns, 0);
        // A delay of 6 ms: the copy due at 12 ms never goes.
        let m = run(&spec, &hedged(6 * MS, 4));
        assert_eq!((m.successes, m.attempts), (1, 2));
        assert_eq!(m.busy_ns, 20 * u128::from(MS.ticks()));
    }

    #[test]
    fn a_copy_taken_after_its_request_ended_is_wasted_work() {
        // One worker: copies at 0, 3 and 6 ms. The first wins at 10 ms; the
        // worker took the second at 10 ms, as the first's service ended and
        // before its reply, and the third at 20 ms, after: only the third's
        // 10 ms are counted wasted (judged when a worker takes a copy).
        let spec = ServerSpec {
            workers: Some(1),
            ..one_request(10 * MS)
        };
        let m = run(&spec, &hedged(3 * MS, 3));
        assert_eq!((m.successes, m.attempts), (1, 3));
        assert_eq!(m.latency_total_ns, 10 * u128::from(MS.ticks()));
        assert_eq!(
            (m.busy_ns, m.wasted_ns),
            (30 * u128::from(MS.ticks()), 10 * u128::from(MS.ticks()))
        );
        assert_eq!(m.end_ns, 30 * MS);
    }

    #[test]
    fn a_fatal_failure_commits_and_abandons_the_other_copies() {
        // Copies at 0 and 1.5 ms, 2 ms each; the first fails at 2 ms, and
        // failures are fatal (retry_on none): the request fails then,
        // though the second copy would succeed at 3.5 ms. Its service still
        // happens, and the third copy, due at 3 ms, never goes.
        let spec = failing(
            one_request(2 * MS),
            Nanos::ZERO,
            2 * MS + Nanos::from_ticks(1),
        );
        let retry = ServerRetry {
            retry_on: "none".parse().unwrap(),
            ..hedged(3 * MS / 2, 3)
        };
        let m = run(&spec, &retry);
        assert_eq!((m.successes, m.gave_up, m.attempts), (0, 1, 2));
        assert_eq!(m.busy_ns, 4 * u128::from(MS.ticks()));
        assert_eq!(m.end_ns, 7 * MS / 2);
        // Non-fatal: the request goes on, its third copy goes at 3 ms, and
        // the second's success at 3.5 ms wins.
        let m = run(&spec, &hedged(3 * MS / 2, 3));
        assert_eq!((m.successes, m.gave_up, m.attempts), (1, 0, 3));
        assert_eq!(m.latency_total_ns, 7 * u128::from(MS.ticks()) / 2);
    }

    #[test]
    fn max_attempts_bounds_the_copies_and_the_last_failure_ends_the_request() {
        // Every attempt fails: copies at 0, 1 and 2 ms, failing at 10, 11
        // and 12 ms; the request fails with the last.
        let spec = ServerSpec {
            fail_rate: 1.0,
            ..one_request(10 * MS)
        };
        for copies in [2, 3, 5] {
            let m = run(&spec, &hedged(MS, copies));
            assert_eq!((m.gave_up, m.attempts), (1, u64::from(copies)));
            assert_eq!(m.end_ns, (9 + u64::from(copies)) * MS, "{copies} copies");
        }
        // A delay of 0: every copy at once.
        let m = run(&spec, &hedged(Nanos::ZERO, 4));
        assert_eq!((m.gave_up, m.attempts, m.end_ns), (1, 4, 10 * MS));
    }

    #[test]
    fn the_deadline_ends_the_request_and_times_out_its_copies_in_flight() {
        let spec = ServerSpec {
            fail_rate: 1.0,
            ..one_request(10 * MS)
        };
        let retry = ServerRetry {
            deadline: Some(5 * MS),
            ..hedged(2 * MS, 5)
        };
        // Copies at 0, 2 and 4 ms; the one due at 6 ms is past the deadline.
        let m = run(&spec, &retry);
        assert_eq!((m.gave_up, m.attempts, m.timeouts), (1, 3, 3));
        // Their service goes on after the deadline; each reply would come
        // after it, so all of it is wasted.
        assert_eq!(m.busy_ns, 30 * u128::from(MS.ticks()));
        assert_eq!(m.wasted_ns, 30 * u128::from(MS.ticks()));
    }

    #[test]
    fn the_throttle_stops_hedges_and_a_throttled_failure_commits() {
        // gRPC's throttle with 4 tokens: hedges are scheduled while the
        // count is above 2. Every attempt fails. The first request sends
        // copies at 0..4 ms (5, its most); its failures at 10 and 11 ms take
        // the count to 3, then 2: throttled, it fails at 11 ms. The second
        // request, at 16 ms, finds 2 tokens: no hedge is scheduled, and its
        // only copy's failure throttles it.
        let spec = ServerSpec {
            fail_rate: 1.0,
            duration: 20 * MS,
            ..closed(1, 10 * MS, 5 * MS)
        };
        let throttle = ControlSpec::parse(Family::Budget, "grpc:4,ratio:0.1")
            .unwrap()
            .unwrap();
        let retry = ServerRetry {
            controls: vec![throttle],
            deadline: Some(1_000 * MS),
            ..hedged(MS, 5)
        };
        let m = run(&spec, &retry);
        assert_eq!((m.requests, m.gave_up, m.attempts), (2, 2, 6));
        // Without it, each request sends its five.
        let m = run(&spec, &hedged(MS, 5));
        assert_eq!((m.requests, m.gave_up, m.attempts), (2, 2, 10));
    }

    #[test]
    fn hedging_with_one_copy_is_the_run_without_hedging() {
        // No hedge can be scheduled: the same events in the same order, the
        // same draws, so every metric is the same.
        let spec = ServerSpec {
            fail_rate: 0.3,
            workers: Some(2),
            service: Service::One(Dist::Exp { mean: MS }),
            load: Load::Open {
                rate_per_s: 1_500.0,
                sources: 1,
                concurrency: None,
            },
            duration: 2_000 * MS,
            ..ServerSpec::default()
        };
        let mut plain = hedged(MS, 1);
        plain.hedge = None;
        let (a, mut b) = (run(&spec, &plain), run(&spec, &hedged(MS, 1)));
        assert_eq!(a.attempts, a.requests);
        assert!(a.gave_up > 0);
        // Only the storage held differs: the hedging state's.
        assert!(b.state_bytes > a.state_bytes);
        b.state_bytes = a.state_bytes;
        assert_eq!(a, b);
    }
}
