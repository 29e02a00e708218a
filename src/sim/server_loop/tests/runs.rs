//! A run's windows, limits, event queues, request counts, failure ends,
//! service growth, arrivals, timeouts noticed and drawn, and seeds.

use super::*;
use crate::base::time::Micros;

#[test]
fn window_latency_quantiles_are_exact_within_each_window() {
    // Unbounded workers, constant 2 ms service and 1 ms each way: every
    // success takes exactly 4 ms, so every window that has one says so.
    let spec = ServerSpec {
        workers: None,
        service: Service::One(Dist::Const(2 * NS_PER_MS)),
        request_delay: Dist::Const(NS_PER_MS),
        reply_delay: Dist::Const(NS_PER_MS),
        duration: 2 * NS_PER_S,
        ..mm_spec(0.5, None, None)
    };
    let m = simulate_server(
        &spec,
        &retry(PolicyKind::None, Some(1)),
        Seeds::for_job(3, 0, 0),
        u64::MAX,
    );
    let with_successes: Vec<&Window> = m.windows.iter().filter(|w| w.successes > 0).collect();
    assert_eq!(
        with_successes.len(),
        m.windows.len(),
        "a 100 ms window without a success at 500/s"
    );
    for w in &m.windows {
        assert_eq!(
            (w.latency_p50_ns, w.latency_p99_ns),
            (Some(4 * NS_PER_MS), Some(4 * NS_PER_MS))
        );
    }
    // One window over the whole M/M/1 run: its exact quantiles agree with
    // the run's histogram to the histogram's precision (1/256).
    let spec = ServerSpec {
        window: 1_000 * NS_PER_S,
        ..mm_spec(0.5, Some(1), None)
    };
    let m = simulate_server(
        &spec,
        &retry(PolicyKind::None, Some(1)),
        Seeds::for_job(3, 0, 1),
        u64::MAX,
    );
    assert_eq!(m.windows.len(), 1);
    for (q, exact) in [
        (0.5, m.windows[0].latency_p50_ns),
        (0.99, m.windows[0].latency_p99_ns),
    ] {
        let exact = exact.expect("successes").ticks() as f64;
        let binned = m.latency.quantile(q);
        assert!(
            (binned - exact).abs() <= exact / 256.0 + 0.5,
            "q {q}: {binned} against {exact}"
        );
    }
    // No success in a window: no latency.
    let spec = ServerSpec {
        triggers: "outage@1s..1.5s"
            .parse::<crate::model::server::Triggers>()
            .unwrap()
            .0,
        ..mm_spec(0.5, Some(1), None)
    };
    let m = simulate_server(
        &spec,
        &retry(PolicyKind::None, Some(1)),
        Seeds::for_job(3, 0, 2),
        u64::MAX,
    );
    let dark = &m.windows[12];
    assert_eq!(
        (dark.successes, dark.latency_p50_ns, dark.latency_p99_ns),
        (0, None, None)
    );
}

/// A run that does not want the windows' latency quantiles is the same
/// run without them: every other count and sum alike.
#[test]
fn window_latencies_left_out_change_nothing_else() {
    let mut spec = mm_spec(0.9, Some(1), Some(10));
    spec.timeout = Some(3 * NS_PER_MS);
    let r = retry(PolicyKind::Full, Some(4));
    let seeds = Seeds::for_job(5, 0, 0);
    let with = simulate_server(&spec, &r, seeds, u64::MAX);
    let watch = Watch {
        window_latencies: false,
        ..Watch::UNLIMITED
    };
    let without = simulate_server_watched(&spec, &r, seeds, &watch, QueueKind::Auto);
    assert!(
        with.windows
            .iter()
            .all(|w| w.latency_p99_ns.is_some() == (w.successes > 0))
    );
    assert!(
        without
            .windows
            .iter()
            .all(|w| (w.latency_p50_ns, w.latency_p99_ns) == (None, None))
    );
    let mut stripped = with.clone();
    for w in &mut stripped.windows {
        (w.latency_p50_ns, w.latency_p99_ns) = (None, None);
    }
    assert_eq!(stripped, without);
}

/// The event limit stops a run after exactly that many events (marked
/// incomplete and hit), the horizon without hitting it, and progress is
/// told each time the count reaches a multiple of [`PROGRESS_EVERY`],
/// with the requests ended so far and the simulated time moving on.
#[test]
fn the_event_limit_and_progress_reports_come_when_the_count_says() {
    let spec = mm_spec(0.5, Some(1), None);
    let r = retry(PolicyKind::None, Some(1));
    let seeds = Seeds::for_job(6, 0, 0);
    let whole = simulate_server(&spec, &r, seeds, u64::MAX);
    assert!(whole.complete && !whole.hit_event_limit);
    for limit in [1, 999, whole.events - 1] {
        let m = simulate_server(&spec, &r, seeds, limit);
        assert_eq!(m.events, limit);
        assert!(!m.complete && m.hit_event_limit, "{limit}");
    }
    let m = simulate_server(&spec, &r, seeds, whole.events);
    assert_eq!((m.events, m.complete), (whole.events, true));
    let cut = ServerSpec {
        horizon: Some(spec.duration / 2),
        ..spec.clone()
    };
    let m = simulate_server(&cut, &r, seeds, u64::MAX);
    assert!(!m.complete && !m.hit_event_limit && m.events < whole.events);

    // 3.5 requests per ms for 100 s: about 1.4 million events, so one
    // report; then twice as long, stopped at the second multiple: two.
    let long = |seconds| ServerSpec {
        duration: seconds * NS_PER_S,
        ..mm_spec(3.5, Some(4), None)
    };
    let reports = std::sync::Mutex::new(Vec::new());
    let on_progress = |time, ended| reports.lock().unwrap().push((time, ended));
    let watch = Watch {
        on_progress: &on_progress,
        ..Watch::UNLIMITED
    };
    let m = simulate_server_watched(&long(100), &r, seeds, &watch, QueueKind::Auto);
    assert!(m.complete && m.events > PROGRESS_EVERY && m.events < 2 * PROGRESS_EVERY);
    let first = reports.lock().unwrap().clone();
    assert_eq!(first.len(), 1, "{first:?}");
    let (time, ended) = first[0];
    // Four events a request: about a quarter of the events have ended.
    assert!(
        ended > PROGRESS_EVERY / 5 && ended < PROGRESS_EVERY / 4,
        "{ended}"
    );
    assert!(
        time > Micros::ZERO && Nanos::of_us(time) < 100 * NS_PER_S,
        "{time:?}"
    );
    let watch = Watch {
        max_events: 2 * PROGRESS_EVERY,
        ..watch
    };
    let m = simulate_server_watched(&long(200), &r, seeds, &watch, QueueKind::Auto);
    assert_eq!((m.events, m.hit_event_limit), (2 * PROGRESS_EVERY, true));
    let all = reports.lock().unwrap().clone();
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all[2].0 > all[1].0 && all[2].1 > all[1].1, "{all:?}");
}

#[test]
fn both_event_queues_give_the_same_run() {
    // Order within an instant matters here: zero delays put an attempt's
    // arrival at the server, and a reply, at the instant of the event
    // that made them, behind whatever else is due then. Only the storage
    // figures may differ.
    let watch = Watch::UNLIMITED;
    let tied = ServerSpec {
        service: Service::One(Dist::Const(NS_PER_MS)),
        request_delay: Dist::Const(NS_PER_MS),
        reply_delay: Dist::Const(NS_PER_MS),
        timeout: Some(Nanos::from_us(3_500)),
        fail_rate: 0.1,
        ..mm_spec(0.9, Some(1), Some(10))
    };
    let storm = ServerSpec {
        timeout: Some(100 * NS_PER_MS),
        triggers: "outage@2s..2.5s+capacity:0@3s..3.1s+spike:2@4s..5s"
            .parse::<crate::model::server::Triggers>()
            .unwrap()
            .0,
        duration: 6 * NS_PER_S,
        ..ServerSpec::default()
    };
    for (spec, r) in [
        (tied, retry(PolicyKind::Full, Some(4))),
        (storm, retry(PolicyKind::NoBackoff, Some(4))),
    ] {
        let run = |queue| {
            let mut m = simulate_server_watched(&spec, &r, Seeds::for_job(4, 0, 0), &watch, queue);
            m.state_bytes = 0;
            m
        };
        let radix = run(QueueKind::Radix);
        assert!(
            radix.timeouts > 0 && radix.successes > 0,
            "{} timeouts, {} successes of {}",
            radix.timeouts,
            radix.successes,
            radix.requests
        );
        assert_eq!(radix, run(QueueKind::Heap));
    }
}

#[test]
fn a_fixed_request_count_is_made_whatever_the_duration() {
    // 1,500 requests at 1,000/s: the last lands near 1.5 s, before or
    // after a 1.5 s duration; a 0.5 s duration cuts none of them.
    let mut spec = mm_spec(1.0, Some(4), None);
    spec.requests = Some(1_500);
    spec.duration = 500 * crate::model::server::NS_PER_MS;
    let m = simulate_server(
        &spec,
        &retry(PolicyKind::Full, Some(1)),
        Seeds::for_job(1, 0, 0),
        u64::MAX,
    );
    assert_eq!(m.requests, 1_500);
}

#[test]
fn a_failure_ending_at_the_next_start_fails_what_completes_before_it() {
    // One request, at 1 ms, served for 10 ms: it completes at 11 ms,
    // after an outage over [0, 5 ms). No other service starts after the
    // outage, so with the Yandex study's failure end it still fails.
    let ms = NS_PER_MS;
    let outcome = |end: FailureEnd| {
        let spec = ServerSpec {
            requests: Some(0),
            first_call: Some(Dist::Const(ms)),
            service: Service::One(Dist::Const(10 * ms)),
            triggers: vec![crate::model::server::Trigger {
                kind: TriggerKind::Outage,
                from: Nanos::ZERO,
                to: 5 * ms,
            }],
            failure_end: end,
            ..mm_spec(1.0, Some(1), None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::Full, Some(1)),
            Seeds::for_job(3, 0, 0),
            u64::MAX,
        );
        assert_eq!(m.requests, 1);
        m.successes
    };
    assert_eq!(outcome(FailureEnd::Window), 1, "completes after the window");
    assert_eq!(
        outcome(FailureEnd::NextStart),
        0,
        "no start after the window"
    );
}

#[test]
fn service_grows_with_the_requests_in_service_when_each_starts() {
    // Three sources' first requests all at 1 ms on an unbounded server:
    // they start with 1, 2 and 3 in service (themselves included) and
    // take 1 s + 10 ms × that, fixed at the start.
    let ms = NS_PER_MS;
    let spec = ServerSpec {
        load: Load::Open {
            rate_per_s: 1.0,
            sources: 3,
            concurrency: None,
        },
        requests: Some(0),
        first_call: Some(Dist::Const(ms)),
        service: Service::One(Dist::Const(1_000 * ms)),
        service_per_busy: 10 * ms,
        ..mm_spec(1.0, None, None)
    };
    let m = simulate_server(
        &spec,
        &retry(PolicyKind::Full, Some(1)),
        Seeds::for_job(5, 0, 0),
        u64::MAX,
    );
    assert_eq!(m.successes, 3);
    assert_eq!(m.latency_total_ns, u128::from((3_060 * ms).ticks()));
}

#[test]
fn arrivals_at_arrival_stop_where_the_rate_is_zero_and_exact_ones_resume() {
    // 1,000/s for 3 s with the rate at 0 over [1 s, 2 s): drawn exactly,
    // arrivals pause there and come back; drawn at each arrival's rate
    // (Brooker 2023's generator), the first arrival inside the pause
    // draws no next one, so none come after it.
    let arrivals_by_second = |rate_changes: RateChanges| {
        let spec = ServerSpec {
            duration: 3 * NS_PER_S,
            triggers: vec![crate::model::server::Trigger {
                kind: TriggerKind::Ramp {
                    start: 0.0,
                    end: 0.0,
                },
                from: NS_PER_S,
                to: 2 * NS_PER_S,
            }],
            rate_changes,
            window: NS_PER_S,
            ..mm_spec(1.0, None, None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::Full, Some(1)),
            Seeds::for_job(8, 0, 0),
            u64::MAX,
        );
        m.windows
            .iter()
            .take(3)
            .map(|w| w.arrivals)
            .collect::<Vec<_>>()
    };
    let exact = arrivals_by_second(RateChanges::Exact);
    // Poisson(1,000) in each open second: 5 standard deviations either side.
    assert!(exact[0].abs_diff(1_000) < 160 && exact[2].abs_diff(1_000) < 160);
    assert_eq!(exact[1], 0, "{exact:?}");
    let stepped = arrivals_by_second(RateChanges::AtArrival);
    assert!(stepped[0].abs_diff(1_000) < 160, "{stepped:?}");
    // The run ends in the pause: no window after it.
    assert_eq!(&stepped[1..], &[1], "{stepped:?}");
}

#[test]
fn a_timeout_noticed_at_the_reply_retries_when_the_late_reply_comes() {
    // One request at 1 ms; 10 ms of service and 10 ms back; a 15 ms
    // timeout and two attempts. At the deadline: the first attempt times
    // out at 16 ms, the second (sent then) at 31 ms, its ignored reply
    // comes at 36 ms. At the reply: the first is late at 21 ms, the
    // second comes back late at 41 ms. A 25 ms timeout is met.
    let ms = NS_PER_MS;
    let run = |timeout_ms: u64, noticed: TimeoutNoticed| {
        let spec = ServerSpec {
            requests: Some(0),
            first_call: Some(Dist::Const(ms)),
            service: Service::One(Dist::Const(10 * ms)),
            reply_delay: Dist::Const(10 * ms),
            timeout: Some(timeout_ms * ms),
            timeout_noticed: noticed,
            ..mm_spec(1.0, Some(1), None)
        };
        simulate_server(
            &spec,
            &retry(PolicyKind::NoBackoff, Some(2)),
            Seeds::for_job(4, 0, 0),
            u64::MAX,
        )
    };
    let at_deadline = run(15, TimeoutNoticed::Deadline);
    assert_eq!((at_deadline.timeouts, at_deadline.gave_up), (2, 1));
    assert_eq!(at_deadline.end_ns, 36 * ms);
    let at_reply = run(15, TimeoutNoticed::Reply);
    assert_eq!(
        (at_reply.timeouts, at_reply.gave_up, at_reply.attempts),
        (2, 1, 2)
    );
    assert_eq!(at_reply.end_ns, 41 * ms);
    let met = run(25, TimeoutNoticed::Reply);
    assert_eq!((met.successes, met.timeouts, met.attempts), (1, 0, 1));
}

#[test]
fn each_request_draws_its_timeout_from_the_choices() {
    // 150 ms of service on an unbounded server, one attempt: a request
    // that drew 100 ms times out, one that drew 200 ms does not. Of n =
    // ~4,000 requests half draw each: the share's standard error is
    // √(0.25/n) ≈ 0.008, and 4 of them are allowed.
    let ms = NS_PER_MS;
    let spec = ServerSpec {
        service: Service::One(Dist::Const(150 * ms)),
        timeout_choices: vec![100 * ms, 200 * ms],
        duration: 4 * NS_PER_S,
        ..mm_spec(1.0, None, None)
    };
    let m = simulate_server(
        &spec,
        &retry(PolicyKind::Full, Some(1)),
        Seeds::for_job(6, 0, 0),
        u64::MAX,
    );
    assert_eq!(m.timeouts + m.successes, m.requests);
    let share = m.timeouts as f64 / m.requests as f64;
    let se = (0.25 / m.requests as f64).sqrt();
    assert!((share - 0.5).abs() < 4.0 * se, "{share} of {}", m.requests);
    // Every success took its 150 ms: only the 200 ms draws met it.
    assert_eq!(
        m.latency_total_ns,
        u128::from((150 * ms).ticks()) * u128::from(m.successes)
    );
}

#[test]
fn the_same_seeds_give_the_same_run() {
    let mut spec = mm_spec(0.9, Some(1), Some(10));
    spec.timeout = Some(3 * NS_PER_MS);
    let r = retry(PolicyKind::Full, Some(4));
    let a = simulate_server(&spec, &r, Seeds::for_job(1, 0, 0), u64::MAX);
    let b = simulate_server(&spec, &r, Seeds::for_job(1, 0, 0), u64::MAX);
    let c = simulate_server(&spec, &r, Seeds::for_job(1, 0, 1), u64::MAX);
    assert_eq!(a, b);
    assert_ne!(a, c);
}
