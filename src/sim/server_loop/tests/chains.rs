//! Call chains: attempts multiplied at every layer, each service's own
//! attempts, workers, controls and policy, the retry scope and timeouts.

use super::*;
use crate::base::time::Micros;

/// A chain of `depth` services in front of an unbounded server of 1 ms
/// constant service failing with probability `fail_rate`, 1 user
/// request per ms for 2 s, no timeouts.
fn chain_spec(depth: u32, fail_rate: f64) -> ServerSpec {
    ServerSpec {
        workers: None,
        fail_rate,
        service: Service::One(Dist::Const(NS_PER_MS)),
        duration: 2 * NS_PER_S,
        chain: Chain {
            depth,
            ..Chain::default()
        },
        ..mm_spec(1.0, None, None)
    }
}

/// [`chain_spec`] of 3 services in a full outage, the two above the
/// server with their own settings `layers`.
fn outage_chain_of_own(layers: [LayerSpec; 2]) -> ServerSpec {
    let mut spec = chain_spec(3, 1.0);
    spec.chain.layers = layers.to_vec();
    spec
}

/// One run of `spec` with `attempts` immediate attempts at every caller.
fn chain_run(spec: &ServerSpec, attempts: u32) -> ServerMetrics {
    let immediate = retry(PolicyKind::NoBackoff, Some(attempts));
    simulate_server(spec, &immediate, Seeds::for_job(3, 0, 0), u64::MAX)
}

#[test]
fn a_chain_in_a_full_outage_multiplies_attempts_at_every_layer() {
    // Every server attempt fails and nothing times out, so every caller
    // makes all its attempts: (r + 1)^i attempts per user request reach
    // service i, exactly (the SRE book's 4³ = 64 and the Builders'
    // Library's 3⁵ = 243).
    for (depth, attempts) in [(3u32, 4u32), (5, 3)] {
        let m = chain_run(&chain_spec(depth, 1.0), attempts);
        assert!(m.complete && m.requests > 1_000, "{} requests", m.requests);
        assert_eq!(m.layers.len(), depth as usize);
        let mut per_request = 1;
        for (i, layer) in m.layers.iter().enumerate() {
            assert_eq!(layer.calls, m.requests * per_request, "service {}", i + 1);
            per_request *= u64::from(attempts);
            assert_eq!(
                layer.attempts,
                m.requests * per_request,
                "service {}",
                i + 1
            );
            assert_eq!((layer.successes, layer.gave_up), (0, layer.calls));
        }
        assert_eq!(
            m.arrived_at_server,
            m.requests * u64::from(attempts).pow(depth)
        );
        assert_eq!(
            (m.attempts, m.gave_up),
            (m.requests * u64::from(attempts), m.requests)
        );
    }
}

#[test]
fn each_upper_service_may_have_its_own_attempts_and_workers() {
    // Users make 4 attempts, service 1's calls 2 and service 2's 3 (its
    // one worker serving the chain's attempts one at a time): 4 × 2 × 3
    // = 24 server attempts per user request in a full outage.
    let spec = outage_chain_of_own([
        LayerSpec {
            max_attempts: Some(2),
            ..LayerSpec::default()
        },
        LayerSpec {
            max_attempts: Some(3),
            workers: Some(Some(1)),
            ..LayerSpec::default()
        },
    ]);
    let m = chain_run(&spec, 4);
    assert!(m.requests > 1_000);
    assert_eq!(m.layers[1].attempts, 8 * m.requests);
    assert_eq!(m.arrived_at_server, 24 * m.requests);
}

#[test]
fn independent_server_failures_compound_through_each_callers_attempts() {
    // p = 0.5 at the server only, 2 attempts at each of 3 callers: a
    // call of 2 attempts fails with q² when each attempt fails with q,
    // so the callers make (1 − qᵢ²)/(1 − qᵢ) attempts each for q = 0.5,
    // 0.25, 0.0625: 1.9921875 server attempts per user request, and
    // users succeed with 1 − 0.5⁸. The issue's ((1 − p²)/(1 − p))³ =
    // 3.375 assumes every layer fails on its own with p; measured, it
    // is hundreds of standard errors away.
    let spec = chain_spec(3, 0.5);
    let immediate = retry(PolicyKind::NoBackoff, Some(2));
    let at_server = |m: &ServerMetrics| m.arrived_at_server as f64 / m.requests as f64;
    let measured = replicated(&spec, &immediate, 20, at_server);
    let expected = Chain::expected_bottom_attempts(3, 2, 0.5);
    assert_eq!(expected, 1.9921875);
    assert_near("server attempts per request", measured, expected);
    let issue = (1.5f64).powi(3);
    assert!(
        (measured.0 - issue).abs() > 100.0 * measured.1,
        "{measured:?}"
    );
    assert_near(
        "success rate",
        replicated(&spec, &immediate, 20, ServerMetrics::success_rate),
        1.0 - 0.5f64.powi(8),
    );
}

#[test]
fn an_upper_service_may_have_its_own_controls() {
    // Service 2's own breaker (cumulative:0: no retry once any attempt
    // failed) refuses every retry of its calls in a full outage, so it
    // makes 1 attempt a call where the users and service 1 make 4: 16
    // server attempts per user request instead of 64.
    let breaker = ControlSpec::parse(crate::control::Family::Breaker, "cumulative:0")
        .unwrap()
        .unwrap();
    let spec = outage_chain_of_own([
        LayerSpec::default(),
        LayerSpec {
            controls: [None, Some(Some(breaker)), None],
            ..LayerSpec::default()
        },
    ]);
    let m = chain_run(&spec, 4);
    assert!(m.requests > 1_000);
    assert_eq!(m.layers[1].attempts, 16 * m.requests);
    assert_eq!(m.arrived_at_server, 16 * m.requests);
}

#[test]
fn an_upper_service_may_back_off_by_its_own_policy() {
    // The server is down for the first 50 ms; users make 1 attempt and
    // service 1 makes 3. Retrying at once, service 1 spends its 3
    // attempts inside the outage and the users who came then fail; with
    // its own constant 100 ms backoff, its second attempt comes after
    // the outage, so every user succeeds, those of the outage after at
    // least 100 ms.
    let spec = |own: LayerSpec| ServerSpec {
        chain: Chain {
            depth: 2,
            layers: vec![own],
            ..Chain::default()
        },
        triggers: vec![crate::model::server::Trigger {
            kind: TriggerKind::Outage,
            from: Nanos::ZERO,
            to: 50 * NS_PER_MS,
        }],
        ..chain_spec(2, 0.0)
    };
    let users = retry(PolicyKind::NoBackoff, Some(1));
    let run = |own| simulate_server(&spec(own), &users, Seeds::for_job(3, 0, 0), u64::MAX);
    let at_once = run(LayerSpec {
        max_attempts: Some(3),
        ..LayerSpec::default()
    });
    let paced = run(LayerSpec {
        max_attempts: Some(3),
        policy: Some(PolicyKind::Constant),
        base_us: Some(Micros::from_ms(100)),
        ..LayerSpec::default()
    });
    assert!(at_once.success_rate() < 0.98, "{}", at_once.success_rate());
    assert!(at_once.latency.quantile_ms(1.0).unwrap() < 100.0);
    assert_eq!(paced.success_rate(), 1.0);
    assert!(paced.latency.quantile_ms(1.0).unwrap() >= 100.0);
    // Naming the users' own policy changes nothing, draw for draw: the
    // services then keep a policy each where they shared one.
    let jittered = retry(PolicyKind::Full, Some(3));
    let half = chain_spec(3, 0.5);
    let named = ServerSpec {
        chain: Chain {
            layers: vec![
                LayerSpec {
                    policy: Some(PolicyKind::Full),
                    ..LayerSpec::default()
                };
                2
            ],
            ..half.chain.clone()
        },
        ..half.clone()
    };
    assert!(named.chain.has_own_policy());
    let seeds = Seeds::for_job(5, 0, 0);
    let dispatched = simulate_server(&named, &jittered, seeds, u64::MAX);
    let plain = simulate_server(&half, &jittered, seeds, u64::MAX);
    assert!(dispatched == plain, "the same runs");
    // Jittered retries below happened: the server's callers retried.
    let to_server = &plain.layers[2];
    assert!(
        to_server.attempts > to_server.calls + 1_000,
        "{} attempts of {} calls",
        to_server.attempts,
        to_server.calls
    );
}

#[test]
fn adjacent_retries_leave_one_callers_attempts_at_the_failing_service() {
    // With only the caller right above the server retrying, a full
    // outage costs that caller's attempts alone: 4 per user request at
    // the server, not 64, and every upper attempt is one.
    let spec = ServerSpec {
        chain: Chain {
            depth: 3,
            retry_scope: RetryScope::Adjacent,
            ..Chain::default()
        },
        ..chain_spec(3, 1.0)
    };
    let m = chain_run(&spec, 4);
    assert!(m.requests > 1_000);
    assert_eq!(m.attempts, m.requests);
    assert_eq!(m.layers[1].attempts, m.requests);
    assert_eq!(m.arrived_at_server, 4 * m.requests);
}

#[test]
fn an_upper_timeout_cancels_nothing_below() {
    // Users time out after 10 ms; the server takes 30 ms and fails: the
    // service below keeps calling through all of its 2 attempts for
    // every one of the users' 2 attempts (timed out, so the users'
    // retries start while the first attempt's call still runs), and
    // every upper worker's time is wasted.
    let spec = ServerSpec {
        service: Service::One(Dist::Const(30 * NS_PER_MS)),
        timeout: Some(10 * NS_PER_MS),
        chain: Chain {
            depth: 2,
            timeout_ratio: 10.0,
            ..Chain::default()
        },
        ..chain_spec(2, 1.0)
    };
    let m = chain_run(&spec, 2);
    assert!(m.requests > 1_000);
    assert_eq!(m.timeouts, m.attempts);
    assert_eq!(m.arrived_at_server, 4 * m.requests);
    assert_eq!(m.layers[0].wasted_ns, m.layers[0].busy_ns);
    assert!(m.layers[0].busy_ns > 0);
    // Service 1's calls wait 100 ms and the server answers in 30: none
    // of them time out, so the server's own work counts as useful to
    // its caller (wasted work is judged by the caller right above;
    // the user's timeout wastes it all the same, which only the top
    // service's figure shows).
    assert_eq!(m.layers[1].timeouts, 0);
    assert_eq!(m.layers[1].wasted_ns, 0);
    assert!(m.layers[1].busy_ns > 0);
}
