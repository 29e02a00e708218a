//! `herdsim exact`: the chain against the simulator on the same Markovian
//! service, its refusals, and its determinism.

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{server_json, succeed, usage_error};

/// Two Markovian services, as flags both `run` and `exact` take: one
/// worker with retries feeding back (ρ 0.6, a third of the time in a storm),
/// and three workers with failing completions and a short queue (ρ 0.8).
const SERVICES: [&[&str]; 2] = [
    &[
        "--rate",
        "600",
        "--workers",
        "1",
        "--queue-limit",
        "10",
        "--service",
        "exp:1ms",
        "--discipline",
        "random",
        "--timeout",
        "10ms",
        "--timeout-law",
        "exponential",
        "--policy",
        "memoryless",
        "--base",
        "20ms",
        "--cap",
        "10s",
        "--budget",
        "persistence:0.75",
    ],
    &[
        "--rate",
        "2400",
        "--workers",
        "3",
        "--queue-limit",
        "6",
        "--service",
        "exp:1ms",
        "--discipline",
        "random",
        "--timeout",
        "5ms",
        "--timeout-law",
        "exponential",
        "--policy",
        "memoryless",
        "--base",
        "10ms",
        "--cap",
        "5s",
        "--budget",
        "persistence:0.5",
        "--fail-rate",
        "0.02",
    ],
];

fn exact_json(args: &[&str]) -> serde_json::Value {
    let out = succeed(
        cargo_bin_cmd!("herdsim")
            .arg("exact")
            .args(args)
            .arg("--json"),
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn the_chain_meets_the_simulator_on_the_same_service() {
    for service in SERVICES {
        let chain = exact_json(service);
        let s = &chain["stationary"];
        // The cap must not be what the figures say.
        assert!(s["p_orbit_cap"].as_f64().unwrap() <= 1e-9, "{chain}");
        assert_eq!(chain["model"]["orbit_cap_chosen"], true);
        let at = service.iter().position(|&w| w == "--workers").unwrap();
        let workers: f64 = service[at + 1].parse().unwrap();
        let mut args = service.to_vec();
        args.extend(["--duration", "200s", "--seeds", "8"]);
        let run = server_json(&args);
        let pairs = [
            ("amplification", s["amplification"].as_f64().unwrap()),
            ("success_rate", s["success_share"].as_f64().unwrap()),
            ("utilisation", s["mean_busy"].as_f64().unwrap() / workers),
            ("queue_mean", s["mean_waiting"].as_f64().unwrap()),
            ("retries_waiting_mean", s["mean_orbit"].as_f64().unwrap()),
            ("wasted_work", s["wasted_share"].as_f64().unwrap()),
        ];
        for (metric, exact) in pairs {
            let m = &run["metrics"][metric];
            let (mean, sd, n) = (
                m["mean"].as_f64().unwrap(),
                m["sd"].as_f64().unwrap(),
                m["n"].as_f64().unwrap(),
            );
            let z = (mean - exact) / (sd / n.sqrt());
            // Eight runs of 200 s from empty, each ~1,000 relaxation times
            // long (start-up bias below 1e-3 of a standard error); 6
            // metrics × 2 services at fixed seeds, |z| < 4 leaves a chance
            // of 8e-4 that a correct chain fails somewhere, while a wrong
            // rate (a missed transition, a retry lost) moves z by tens.
            assert!(
                z.abs() < 4.0,
                "{service:?} {metric}: simulated {mean} ± {sd}/√{n}, exact {exact}, z = {z:.2}"
            );
        }
    }
}

#[test]
fn without_timeouts_or_retries_exact_prints_mmck() {
    // M/M/2/(2+4) at λ = 1.5, μ = 1: p_n ∝ 1.5ⁿ/n! for n ≤ 2, then × 0.75
    // per step; the mean waiting is Σ (n − 2) p_n.
    let json = exact_json(&[
        "--rate",
        "1.5",
        "--workers",
        "2",
        "--queue-limit",
        "4",
        "--service",
        "exp:1s",
        "--max-attempts",
        "1",
    ]);
    let mut p = vec![1.0, 1.5, 1.125];
    for _ in 0..4 {
        let last = *p.last().unwrap();
        p.push(last * 0.75);
    }
    let total: f64 = p.iter().sum();
    let waiting: f64 = p
        .iter()
        .enumerate()
        .skip(2)
        .map(|(n, x)| (n - 2) as f64 * x)
        .sum::<f64>()
        / total;
    let got = json["stationary"]["mean_waiting"].as_f64().unwrap();
    assert!((got - waiting).abs() < 1e-12, "{got} vs {waiting}");
    assert_eq!(json["states"], 7);
}

#[test]
fn exact_refuses_what_is_not_markovian_naming_the_key() {
    let base = SERVICES[0];
    // The base service with one flag's value replaced (or the flag added):
    // a repeated flag would be a list, two points.
    let with = |extra: &[&str]| {
        let mut args = vec!["exact"];
        args.extend(base);
        match args.iter().position(|&w| w == extra[0]) {
            Some(at) if extra.len() == 2 => args[at + 1] = extra[1],
            _ => args.extend(extra),
        }
        usage_error(&args)
    };
    for (extra, key) in [
        (&["--discipline", "fifo"][..], "'discipline'"),
        (&["--timeout-law", "fixed"][..], "'timeout_law'"),
        (&["--max-attempts", "3"][..], "'max_attempts'"),
        (&["--policy", "full"][..], "'policy'"),
        (&["--cap", "100ms"][..], "'cap'"),
        (&["--service", "lognormal:1ms/0.3"][..], "'service'"),
        (&["--budget", "ratio:0.2,min:10"][..], "'budget'"),
        (&["--trigger", "slow:2@1s..2s"][..], "'trigger'"),
        (&["--max-states", "1000"][..], "--max-states"),
        (&["--high", "100"][..], "--high"),
        (&["--seeds", "3"][..], "--seeds"),
    ] {
        let err = with(extra);
        assert!(err.contains(key), "{extra:?}: {err}");
    }
    let err = usage_error(&["exact", "--rate", "100", "--workers", "1"]);
    assert!(err.contains("'queue_limit'"), "{err}");
}

#[test]
fn exact_is_the_same_bytes_at_any_thread_count_and_says_what_it_solved() {
    let out = |threads: &str| {
        succeed(
            cargo_bin_cmd!("herdsim")
                .env("RAYON_NUM_THREADS", threads)
                .arg("exact")
                .args(SERVICES[0])
                .args(["--trigger", "outage@1s..1.1s"]),
        )
    };
    let one = out("1");
    assert_eq!(one, out("2"));
    // What the chain is comes before its figures, defaults named.
    let load = one.find("offered load ρ = 0.600").expect("the load");
    let trigger = one.find("trigger: an outage").expect("the trigger");
    let figures = one.find("Stationary").unwrap();
    assert!(load < figures && trigger < figures, "{one}");
    assert!(
        one.contains("default: 90% of queue_limit 10, rounded up: the queue nearly full"),
        "{one}"
    );
    assert!(one.contains("storm probability"), "{one}");
}
