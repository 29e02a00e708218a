//! `run --high/--low/--splitting`: the simulator's backlog passages and
//! splitting's storm probabilities against the exact chain of the same
//! service and against brute force; determinism; refusals.

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{server_json, succeed, usage_error};

/// A Markovian service both `run` and `exact` take, but for its rate: one
/// worker (exponential 1 ms service), ten waiting slots in random order,
/// retries after exponential delays of 20 ms going with P = 0.75.
const SERVICE: &[&str] = &[
    "--workers",
    "1",
    "--queue-limit",
    "10",
    "--service",
    "exp:1ms",
    "--discipline",
    "random",
    "--policy",
    "memoryless",
    "--base",
    "20ms",
    "--cap",
    "10s",
    "--budget",
    "persistence:0.75",
];

/// Its rate in most tests: ρ 0.4.
const AT_400: &[&str] = &["--rate", "400"];

/// With exponential timeouts of mean 10 ms that do not cancel work.
const TIMEOUTS: &[&str] = &["--timeout", "10ms", "--timeout-law", "exponential"];

fn exact_json(args: &[&str]) -> serde_json::Value {
    let out = succeed(
        cargo_bin_cmd!("herdsim")
            .arg("exact")
            .args(SERVICE)
            .args(args)
            .arg("--json"),
    );
    serde_json::from_str(&out).unwrap()
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let mut all = SERVICE.to_vec();
    all.extend(args);
    server_json(&all)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The z-score of a simulated mean (with its 95% half-width over `n`
/// runs) against an exact value.
fn z_of_mean(summary: &serde_json::Value, exact: f64) -> f64 {
    let n = f(&summary["n"]);
    // The half-width is t(0.975, n − 1)·sd/√n; at n in the thousands t is
    // 1.96 to three digits.
    let se = f(&summary["ci95_s"]) / 1.96;
    assert!(n > 1000.0 && se > 0.0, "{summary}");
    (f(&summary["mean_s"]) - exact) / se
}

#[test]
fn the_simulators_passage_times_meet_the_chains() {
    // After a failure trigger: every completion fails with P 0.5 for 20 ms,
    // so the orbit fills, then drains. The backlog must be read after every
    // event at an instant: read between a retry leaving the orbit and
    // joining the queue, it dipped, and returns came 2% early (z ≈ −7 at
    // these 100,000 runs).
    let trigger = ["--trigger", "fail:0.5@300ms..320ms"];
    let regions = ["--high", "12", "--low", "1"];
    let chain = exact_json(&[AT_400, &trigger[..], &regions[..]].concat());
    let after = &chain["after_trigger"];
    let run = run_json(
        &[
            AT_400,
            &trigger[..],
            &regions[..],
            &["--duration", "1s", "--seeds", "100000"],
        ]
        .concat(),
    );
    let plain = &run["backlog"]["plain"];
    assert_eq!(plain["cut"], 0, "{plain}");
    let z = z_of_mean(&plain["to_calm"], f(&after["return_time"]["mean_s"]));
    // One fixed-seed comparison of a mean of 100,000 runs (near normal):
    // |z| < 4 fails a correct simulator once in 16,000.
    assert!(
        z.abs() < 4.0,
        "return time: {plain}, chain {after}, z {z:.2}"
    );
    let (storm, runs) = (f(&plain["storm"]), f(&plain["runs"]));
    let p = f(&after["storm_probability"]);
    let z = (storm / runs - p) / (p * (1.0 - p) / runs).sqrt();
    assert!(
        z.abs() < 4.0,
        "storm before calm: {plain}, chain {p}, z {z:.2}"
    );

    // From an empty service with no trigger, at ρ 0.6 with timeouts (a
    // storm about every 0.1 s): the mean first passage into the storm
    // region. Every run reaches it long before its 5 s end (the chance of
    // not is e^-50).
    let busy = ["--rate", "600", "--high", "9", "--low", "1"];
    let chain = exact_json(&[&busy[..], TIMEOUTS].concat());
    let run = run_json(
        &[
            &busy[..],
            TIMEOUTS,
            &["--duration", "5s", "--seeds", "4000"],
        ]
        .concat(),
    );
    let plain = &run["backlog"]["plain"];
    assert_eq!(run["backlog"]["after_trigger"], false);
    assert_eq!(plain["storm"], 4000, "{plain}");
    let z = z_of_mean(&plain["to_storm"], f(&chain["time_to_storm"]["mean_s"]));
    assert!(
        z.abs() < 4.0,
        "first passage: {plain}, chain {chain}, z {z:.2}"
    );
}

/// Splitting's estimate and its standard error, from `run --json`.
fn split_of(run: &serde_json::Value) -> (f64, f64, f64) {
    let s = &run["backlog"]["splitting"];
    let batches: Vec<f64> = s["batch_estimates"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    let m = batches.len() as f64;
    let mean = batches.iter().sum::<f64>() / m;
    let sd = (batches.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
    assert!((mean - f(&s["probability"])).abs() <= 1e-12 * mean.max(1e-300));
    (mean, sd / m.sqrt(), f(&s["gain_in_events"]))
}

#[test]
fn splitting_meets_brute_force_and_the_exact_chain_far_below_it() {
    // A 20 ms outage at ρ 0.4 with timeouts: a storm of backlog 20 follows
    // one in 24, of backlog 35 one in 7,000.
    let trigger = ["--trigger", "outage@500ms..520ms", "--duration", "1s"];
    let at = |high: &'static str| {
        let regions = ["--high", high, "--low", "1"];
        let chain = exact_json(&[AT_400, &trigger[..2], TIMEOUTS, &regions[..]].concat());
        (f(&chain["after_trigger"]["storm_probability"]), regions)
    };

    let (p, regions) = at("20");
    let run = run_json(
        &[
            AT_400,
            &trigger[..],
            TIMEOUTS,
            &regions[..],
            &["--seeds", "20000", "--splitting", "200", "--batches", "20"],
        ]
        .concat(),
    );
    let plain = &run["backlog"]["plain"];
    let (k, n) = (f(&plain["storm"]), f(&plain["runs"]));
    let brute = k / n;
    let brute_se = (brute * (1.0 - brute) / n).sqrt();
    let (split, split_se, _) = split_of(&run);
    // Each estimate is unbiased and near normal here (20,000 Bernoulli
    // runs; 20 independent batches, each of 200 paths): |z| < 4 on each
    // difference fails a correct estimator once in 16,000.
    let z = (split - brute) / (split_se.powi(2) + brute_se.powi(2)).sqrt();
    assert!(
        z.abs() < 4.0,
        "splitting {split} ± {split_se} vs brute force {brute} ± {brute_se}"
    );
    for (what, got, se) in [
        ("brute force", brute, brute_se),
        ("splitting", split, split_se),
    ] {
        let z = (got - p) / se;
        assert!(z.abs() < 4.0, "{what} {got} ± {se} vs chain {p}: z {z:.2}");
    }

    // Where 20,000 plain runs would see about three storms.
    let (p, regions) = at("35");
    assert!(p < 2e-4 && p > 1e-4, "{p}");
    let run = run_json(
        &[
            AT_400,
            &trigger[..],
            TIMEOUTS,
            &regions[..],
            &["--seeds", "2", "--splitting", "500", "--batches", "20"],
        ]
        .concat(),
    );
    let (split, se, gain) = split_of(&run);
    let z = (split - p) / se;
    assert!(
        z.abs() < 4.0,
        "splitting {split} ± {se} vs chain {p}: z {z:.2}"
    );
    // Its interval is narrower than 1/3 of the estimate, and plain runs
    // would pay more events for as narrow a one.
    assert!(se * 2.1 < split / 3.0, "{split} ± {se}");
    assert!(gain > 1.0, "gain {gain}");
}

#[test]
fn splitting_is_the_same_bytes_at_any_thread_count_and_says_what_it_estimates() {
    let out = |threads: &str| {
        succeed(
            cargo_bin_cmd!("herdsim")
                .env("RAYON_NUM_THREADS", threads)
                .args(["run", "--resource", "server", "-q"])
                .args(SERVICE)
                .args(AT_400)
                .args(TIMEOUTS)
                .args(["--trigger", "outage@500ms..520ms", "--duration", "1s"])
                .args(["--seeds", "50", "--high", "25", "--splitting", "50"])
                .args(["--batches", "4"]),
        )
    };
    let one = out("1");
    assert_eq!(one, out("2"));
    // The regions (a default's reason given, a given one kept) and where
    // judging starts come before the figures.
    let regions = one.find("storm ≥ 25, calm ≤ 1\n").expect("the regions");
    assert!(
        one.contains("  calm ≤ 1 by default: 10% of queue_limit 10, rounded down\n")
            && !one.contains("storm ≥ 25 by default"),
        "{one}"
    );
    let judged = one.find("judged from the trigger's end (520ms)").unwrap();
    let splitting = one.find("Splitting (adaptive multilevel").unwrap();
    assert!(regions < judged && judged < splitting, "{one}");
    assert!(one.contains("50 paths × 4 batches"), "{one}");
}

#[test]
fn backlog_flags_refuse_what_they_cannot_answer() {
    let server = |extra: &[&str]| {
        let mut args = vec!["run", "--resource", "server"];
        args.extend(SERVICE);
        args.extend(AT_400);
        args.extend(extra);
        usage_error(&args)
    };
    for (extra, says) in [
        (&["--high", "3", "--low", "3"][..], "--high 3 and --low 3"),
        (&["--splitting", "1"][..], "--splitting"),
        (&["--splitting", "10", "--batches", "1"][..], "--batches"),
        (&["--batches", "5"][..], "--splitting"),
        (&["--high", "-2"][..], "--high"),
    ] {
        let err = server(extra);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    // Not the server model: no backlog to follow.
    let err = usage_error(&["run", "--splitting", "10"]);
    assert!(
        err.contains("--splitting") && err.contains("server"),
        "{err}"
    );
    // No queue limit and no timeout: no default storm region.
    let err = usage_error(&["run", "--resource", "server", "--rate", "100", "--low", "1"]);
    assert!(
        err.contains("--high") && err.contains("nor a queue_limit"),
        "{err}"
    );
}

/// The metastable map's service (one worker of 1 ms at 700 requests/s, a
/// 100 ms timeout, immediate retries, 4 attempts) after a 150 ms outage:
/// no queue limit, so both regions come from the service.
const METASTABLE: &[&str] = &[
    "--rate",
    "700",
    "--workers",
    "1",
    "--service",
    "exp:1ms",
    "--timeout",
    "100ms",
    "--policy",
    "no-backoff",
    "--base",
    "1s",
    "--max-attempts",
    "4",
    "--trigger",
    "outage@2s..2.15s",
    "--duration",
    "4s",
    "--seeds",
    "40",
];

#[test]
fn default_regions_come_from_the_service_and_say_why() {
    let text = succeed(
        cargo_bin_cmd!("herdsim")
            .args(["run", "--resource", "server", "-q"])
            .args(METASTABLE)
            .args(["--splitting", "20", "--batches", "2"]),
    );
    // 2 × 1 × 100 ms / 1 ms = 200; M/M/1 at ρ 0.7 waits with chance 0.7
    // and P(queue > k) = 0.7^(k+2), at most 5% from k = 7.
    for line in [
        "storm ≥ 200, calm ≤ 7\n",
        "  storm ≥ 200 by default: 2 × 1 worker × 100 ms timeout / 1 ms mean service: at half \
         this backlog an attempt is served just as its client gives up",
        "  calm ≤ 7 by default: the queue an M/M/1 service at ρ = 0.700 exceeds 5% of the time \
         at most",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    let json = server_json(&[METASTABLE, &["--low", "3"][..]].concat());
    let backlog = &json["backlog"];
    assert_eq!(backlog["storm_backlog_at_least"], 200, "{backlog}");
    assert_eq!(backlog["storm_default"], true);
    let why = backlog["storm_reason"].as_str().unwrap();
    assert!(why.starts_with("2 × 1 worker × 100 ms timeout"), "{why}");
    // A region given is kept, with no reason.
    assert_eq!(backlog["calm_backlog_at_most"], 3);
    assert_eq!(backlog["calm_default"], false);
    assert!(backlog["calm_reason"].is_null(), "{backlog}");
}

#[test]
fn a_storm_region_given_is_honoured_and_calm_held_below_it() {
    let json = server_json(&[METASTABLE, &["--high", "5"][..]].concat());
    let backlog = &json["backlog"];
    assert_eq!(backlog["storm_backlog_at_least"], 5, "{backlog}");
    assert_eq!(backlog["storm_default"], false);
    assert!(backlog["storm_reason"].is_null(), "{backlog}");
    // Calm's default (7) would not be below it: held at 4, and said so.
    assert_eq!(backlog["calm_backlog_at_most"], 4);
    let why = backlog["calm_reason"].as_str().unwrap();
    assert!(why.ends_with("held one below the storm region"), "{why}");
}
