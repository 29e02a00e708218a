//! The server loop's state of requests hedging on per-attempt timeout
//! ([`crate::model::timeout_hedging`] says what they do): per request slot,
//! its attempts in flight, whether a retry is pending, and the retries a
//! control refused after their count was taken. Kept beside the slab of
//! requests, as gRPC hedging's is, so a run without it keeps its requests
//! as small as they were.

use crate::sim::request_slots::RequestSlots;

/// One request's attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attempts {
    /// Attempts sent whose reply the request still awaits (kept past their
    /// timeout or not).
    pub in_flight: u32,
    /// A retry is decided and not yet sent (Envoy's `pending_retries_`).
    pub pending: bool,
    /// The latest attempt's per-try timeout fired (it is counted as a
    /// timeout once, then, not again at the deadline).
    pub timed_out: bool,
    /// Retries a control refused after `num_retries` was spent on them.
    pub spent: u32,
}

/// Every request slot's attempts, and the wins of attempts kept past their
/// timeout.
#[derive(Debug, Clone, Default)]
pub struct TimeoutHedging {
    /// Each request slot's attempts.
    pub slots: RequestSlots<Attempts>,
    /// Successes won by an attempt whose per-try timeout had fired.
    pub kept_wins: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::Seeds;
    use crate::base::time::Micros;
    use crate::control::{ControlSpec, Family};
    use crate::measure::server_metrics::ServerMetrics;
    use crate::model::retry_on::RetryOn;
    use crate::model::server::{
        Dist, Load, NS_PER_MS, Nanos, ServerSpec, Service, Trigger, TriggerKind,
    };
    use crate::policy::PolicyKind;
    use crate::sim::server_loop::{ServerRetry, simulate_server};
    use crate::spec::RunSpec;

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn a_slot_reused_starts_with_nothing_in_flight_and_nothing_spent() {
        let mut k = TimeoutHedging::default();
        let a = k.slots.start(3);
        a.in_flight = 2;
        a.spent = 1;
        a.pending = true;
        assert_eq!(k.slots.of(3).in_flight, 2);
        assert_eq!(*k.slots.start(3), Attempts::default());
        assert_eq!(*k.slots.of(0), Attempts::default());
    }

    /// `users` users, each making a request at t = 0 and another `think`
    /// after each ends while the load lasts (1 ms, or `duration`), served
    /// in a constant `service` by unbounded workers with no network delay,
    /// each attempt timed out after `timeout`: every time is exact.
    fn closed(users: u32, service: Nanos, think: Nanos, timeout: Nanos) -> ServerSpec {
        ServerSpec {
            load: Load::Closed {
                users,
                think: Dist::Const(think),
            },
            first_call: Some(Dist::Const(Nanos::ZERO)),
            duration: MS,
            workers: None,
            service: Service::One(Dist::Const(service)),
            timeout: Some(timeout),
            ..ServerSpec::default()
        }
    }

    /// One request: past the load's 1 ms no other follows.
    fn one_request(service: Nanos, timeout: Nanos) -> ServerSpec {
        closed(1, service, Nanos::ZERO, timeout)
    }

    /// Every attempt completing in `[from, to)` fails (an outage).
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

    /// Hedging on timeout with at most `attempts` attempts and a constant
    /// backoff of 1 ms.
    fn kept(attempts: u32) -> ServerRetry {
        let mut policy = RunSpec::seed_002(PolicyKind::Constant, 1).policy;
        policy.base_us = Micros::from_ms(1);
        ServerRetry {
            policy,
            max_attempts: Some(attempts),
            controls: Vec::new(),
            fleet: None,
            deadline: None,
            retry_on: RetryOn::ALL,
            hedge: None,
            hedge_on_timeout: true,
        }
    }

    fn plain(attempts: u32) -> ServerRetry {
        ServerRetry {
            hedge_on_timeout: false,
            ..kept(attempts)
        }
    }

    fn with_budget(retry: ServerRetry, text: &str) -> ServerRetry {
        let family = if text.starts_with("envoy-max-requests") {
            Family::Throttle
        } else {
            Family::Budget
        };
        ServerRetry {
            controls: vec![ControlSpec::parse(family, text).unwrap().unwrap()],
            ..retry
        }
    }

    fn run(spec: &ServerSpec, retry: &ServerRetry) -> ServerMetrics {
        let m = simulate_server(spec, retry, Seeds::for_job(5, 0, 0), u64::MAX);
        assert!(m.complete);
        m
    }

    #[test]
    fn the_timed_out_attempt_is_kept_and_wins_where_plain_retries_give_up() {
        // 10 ms of service, a 4 ms timeout, 2 attempts: the first times out
        // at 4 ms, its retry goes at 5 ms and times out at 9 ms with no
        // attempt left; the first answers at 10 ms and wins. The retry is
        // still served, until 15 ms.
        let spec = one_request(10 * MS, 4 * MS);
        let m = run(&spec, &kept(2));
        assert_eq!((m.successes, m.gave_up, m.attempts), (1, 0, 2));
        assert_eq!((m.timeouts, m.kept_wins), (2, 1));
        assert_eq!(m.latency_total_ns, 10 * u128::from(MS.ticks()));
        assert_eq!(
            (m.busy_ns, m.end_ns),
            (20 * u128::from(MS.ticks()), 15 * MS)
        );
        // Plain retries reset each: the request gives up at 9 ms.
        let p = run(&spec, &plain(2));
        assert_eq!(
            (p.successes, p.gave_up, p.attempts, p.kept_wins),
            (0, 1, 2, 0)
        );
        // A timeout asks for a retry whatever retry_on says
        // (shouldHedgeRetryPerTryTimeout).
        let none = ServerRetry {
            retry_on: "none".parse().unwrap(),
            ..kept(2)
        };
        assert_eq!(run(&spec, &none), m);
        // One attempt: no retry, and the attempt is still kept.
        let m = run(&spec, &kept(1));
        assert_eq!(
            (m.successes, m.attempts, m.timeouts, m.kept_wins),
            (1, 1, 1, 1)
        );
    }

    #[test]
    fn a_kept_attempts_failure_waits_for_the_retry_in_flight() {
        // The first attempt fails at 10 ms (the outage covers [9, 11 ms));
        // its retry, sent at 5 ms and kept at its own timeout at 9 ms (no
        // attempt left), succeeds at 15 ms and wins.
        let spec = failing(one_request(10 * MS, 4 * MS), 9 * MS, 11 * MS);
        let m = run(&spec, &kept(2));
        assert_eq!(
            (m.successes, m.gave_up, m.attempts, m.timeouts),
            (1, 0, 2, 2)
        );
        assert_eq!(m.latency_total_ns, 15 * u128::from(MS.ticks()));
        // A failure retry_on does not name goes downstream at once: the
        // request fails at 10 ms though its retry would succeed.
        let strict = ServerRetry {
            retry_on: "timeout".parse().unwrap(),
            ..kept(2)
        };
        let m = run(&spec, &strict);
        assert_eq!((m.successes, m.gave_up, m.attempts), (0, 1, 2));
        assert_eq!(m.end_ns, 15 * MS, "the retry is still served");
    }

    #[test]
    fn the_latest_attempts_failure_is_retried_by_retry_on_after_the_backoff() {
        // The first attempt fails at 2 ms, before its timeout: retried at
        // 3 ms, it succeeds at 5 ms, as plain retries do.
        let spec = failing(
            one_request(2 * MS, 4 * MS),
            Nanos::ZERO,
            2 * MS + Nanos::from_ticks(1),
        );
        let m = run(&spec, &kept(2));
        assert_eq!((m.successes, m.attempts, m.timeouts), (1, 2, 0));
        assert_eq!(m.latency_total_ns, 5 * u128::from(MS.ticks()));
    }

    #[test]
    fn the_deadline_ends_the_request_and_every_kept_attempt() {
        // Attempts at 0, 3 and 6 ms (timeouts 2 ms, backoff 1 ms), each
        // served 10 ms; the deadline at 7 ms ends the request: two timeouts
        // fired, and the third attempt is one at the deadline.
        let spec = one_request(10 * MS, 2 * MS);
        let retry = ServerRetry {
            deadline: Some(7 * MS),
            ..kept(5)
        };
        let m = run(&spec, &retry);
        assert_eq!((m.gave_up, m.attempts, m.timeouts), (1, 3, 3));
        // Every reply would come after the deadline: all of it is wasted.
        assert_eq!(
            (m.busy_ns, m.wasted_ns),
            (30 * u128::from(MS.ticks()), 30 * u128::from(MS.ticks()))
        );
    }

    #[test]
    fn a_retrys_count_ends_at_its_own_timeout_so_max_retries_1_lets_each_next_go() {
        // envoy-max-retries:1: each retry is counted from its decision until
        // the next shouldRetry, its attempt's timeout. Attempts at 0, 5, 10
        // and 15 ms (timeouts 4 ms, backoff 1 ms), 20 ms of service: the
        // first wins at 20 ms.
        let spec = closed(1, 20 * MS, Nanos::ZERO, 4 * MS);
        let retry = with_budget(kept(4), "envoy-max-retries:1");
        let m = run(&spec, &retry);
        assert_eq!((m.successes, m.attempts, m.kept_wins), (1, 4, 1));
        // Every request alike: nothing leaks from one request's abandoned
        // attempts into the next one's count.
        let spec = ServerSpec {
            duration: 200 * MS,
            ..spec
        };
        let m = run(&spec, &retry);
        assert_eq!(m.requests, 10);
        assert_eq!((m.successes, m.attempts), (10, 40));
        // envoy-max-retries:0 refuses every retry: one attempt each, kept.
        let m = run(&spec, &with_budget(kept(4), "envoy-max-retries:0"));
        assert_eq!((m.successes, m.attempts, m.kept_wins), (10, 10, 10));
    }

    #[test]
    fn a_retry_refused_by_max_retries_spends_a_num_retries() {
        // num_retries 1 (2 attempts), max_retries 0: the timeout's retry is
        // refused and spends the one retry, so the kept attempt's failure at
        // 10 ms is not retried either: the request fails then.
        let spec = failing(one_request(10 * MS, 4 * MS), 9 * MS, 11 * MS);
        let m = run(&spec, &with_budget(kept(2), "envoy-max-retries:0"));
        assert_eq!((m.successes, m.gave_up, m.attempts), (0, 1, 1));
        assert_eq!(m.end_ns, 10 * MS);
    }

    #[test]
    fn a_retry_max_requests_refuses_fails_alone_while_the_kept_attempt_goes_on() {
        // envoy-max-requests:1: the retry due at 5 ms finds the kept attempt
        // in flight and is refused (a local overflow); the request waits for
        // the kept attempt, which wins at 10 ms.
        let spec = one_request(10 * MS, 4 * MS);
        let m = run(&spec, &with_budget(kept(3), "envoy-max-requests:1"));
        assert_eq!((m.successes, m.gave_up, m.refused), (1, 0, 1));
        assert_eq!((m.attempts, m.kept_wins), (1, 1));
    }

    #[test]
    fn without_a_timeout_firing_hedging_on_timeout_is_plain_retries() {
        // Timeouts far past every service: every attempt answers first, so
        // the same events in the same order, the same draws, every metric
        // the same but the storage held.
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
            timeout: Some(1_000_000 * MS),
            ..ServerSpec::default()
        };
        let (a, mut b) = (run(&spec, &plain(3)), run(&spec, &kept(3)));
        assert!(a.gave_up > 0 && a.attempts > a.requests);
        assert!(b.state_bytes > a.state_bytes);
        b.state_bytes = a.state_bytes;
        assert_eq!(a, b);
    }

    #[test]
    fn on_a_heavy_tail_the_kept_attempt_wins_often_and_the_p99_falls() {
        // Lognormal service (median 1 ms, σ 1.5), unbounded workers (no
        // queueing: each attempt's service is an independent draw), a 5 ms
        // timeout, 1 ms backoff, up to 10 attempts, 1,000 requests/s for
        // 20 s (20,000 requests), one fixed seed.
        //
        // P(S > 5 ms) = 1 − Φ(ln 5 / 1.5) = 0.1417. Plain retries end at
        // 6K + S with K timeouts before the first attempt under 5 ms; their
        // p99 is in K = 2: P(K = 2) = 0.1417² · 0.858 = 0.0172, and
        // P(L > q) = 0.01 needs P(q − 12 < S < 5) = 0.356, so q ≈ 13.0 ms.
        // Kept attempts give min(S₀, 6 + S₁, …): P(L > q) = P(S₀ > q) ·
        // P(S₁ > q − 6) reaches 0.01 at q ≈ 10.3 ms. From 20,000 requests
        // a p99's standard error is about 0.2 ms on either side (the
        // density at the quantile, 0.0033/ms and 0.0053/ms): a gap of at
        // least 1.5 ms is over 5 standard errors inside the 2.7 expected,
        // and each within 1 ms of its value is 4 or more.
        let spec = ServerSpec {
            load: Load::Open {
                rate_per_s: 1_000.0,
                sources: 1,
                concurrency: None,
            },
            duration: 20_000 * MS,
            workers: None,
            service: Service::One(Dist::LogNormal {
                median: MS,
                sigma: 1.5,
                given_by: None,
            }),
            timeout: Some(5 * MS),
            ..ServerSpec::default()
        };
        let (p, k) = (run(&spec, &plain(10)), run(&spec, &kept(10)));
        let (p99_plain, p99_kept) = (p.latency_ms(0.99).unwrap(), k.latency_ms(0.99).unwrap());
        assert!((p99_plain - 13.0).abs() < 1.0, "plain p99 {p99_plain}");
        assert!((p99_kept - 10.3).abs() < 1.0, "kept p99 {p99_kept}");
        assert!(p99_kept < p99_plain - 1.5, "{p99_kept} vs {p99_plain}");
        assert_eq!((p.successes, k.successes), (p.requests, k.requests));
        // A kept attempt wins when the first copy to answer had timed out:
        // mostly S₀ > 5 ms and S₀ < 6 + S₁ (0.1417 × 0.39). A Monte Carlo of
        // these rules (400,000 requests) gives 0.0557; 20,000 requests give
        // the share a standard error of 0.0016, so ±0.01 is 6 of them.
        let share = k.kept_wins as f64 / k.requests as f64;
        assert!((share - 0.0557).abs() < 0.01, "kept wins {share}");
        assert_eq!(p.kept_wins, 0);
    }
}
