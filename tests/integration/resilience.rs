//! resilience4j and Polly as a user runs them: runs from their imported
//! files byte-identical to the same runs written as flags, the half-open
//! stampede of resilience4j's ten permits, and bad files.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{outage_run, succeed, usage_error, workdir};

/// `outage_run` with a per-attempt timeout of 100 ms: long enough for the
/// breakers to open and half-open.
fn run(args: &[&str]) -> String {
    outage_run(&[["--json", "-q", "--timeout", "100ms"].as_slice(), args].concat())
}

#[test]
fn an_imported_resilience4j_file_runs_as_its_flags() {
    // scenarios/configs/resilience4j-application.yml, instance inventory:
    // maxAttempts 4; waitDuration 200 ms with exponential backoff (lent by
    // configs.default with its multiplier 2) and randomized wait 0.5, max
    // 2 s; the breaker from configs.default with the instance's slow calls,
    // ten permits and the automatic half-open.
    let imported = run(&["--import", "scenarios/configs/resilience4j-application.yml"]);
    let flags = run(&[
        "--max-attempts",
        "4",
        "--policy",
        "resilience4j-exponential-randomized",
        "--base",
        "200ms",
        "--multiplier",
        "2",
        "--random-factor",
        "0.5",
        "--cap",
        "2s",
        "--breaker",
        "resilience4j:50,window:50,min:20,slow:80,slow-call:2s,open:10s,permits:10,auto:on,\
         half-open-max:0us,then:open,refused:retry",
    ]);
    assert_eq!(imported, flags);
}

#[test]
fn an_imported_polly_file_runs_as_its_flags() {
    // scenarios/configs/polly-appsettings.json: 4 retries (5 attempts),
    // Exponential with jitter (DecorrelatedJitterBackoffV2) from 200 ms,
    // MaxDelay 5 s; the breaker 0.2 / 20 / 10 s / 2 s.
    let imported = run(&["--import", "scenarios/configs/polly-appsettings.json"]);
    let flags = run(&[
        "--max-attempts",
        "5",
        "--policy",
        "decorrelated-v2",
        "--base",
        "200ms",
        "--cap",
        "5s",
        "--breaker",
        "polly:0.2,throughput:20,sampling:10s,break:2s,refused:retry",
    ]);
    assert_eq!(imported, flags);
}

#[test]
fn ten_half_open_permits_go_at_once_and_reopen_the_breaker_each_time() {
    // The herd of 50 clients on one slot (1 call per ms), a constant 100 ms
    // backoff and no jitter: the herd stays in step. resilience4j's breaker
    // with a window of 10 calls, minimum 10, 50%, open 50 ms, 10 permits;
    // its refusals are retried (the Spring order).
    //
    // By hand: at 0 ms ten calls go (the slot serves one, nine fail), the
    // tenth outcome opens it, forty are refused. Every 100 ms after, the
    // wait is over: half-open, and the ten permits go at one instant, the
    // stampede: one is served, nine fail, 90% ≥ 50%, it opens again. So one
    // client finishes per wave: with R clients left and R ≥ 10 a wave sends
    // 10 calls (waves 1 to 40: 400). Then R = 9: 9 calls, 9 outcomes < 10,
    // one permit left; R = 8: that permit (served: 2 of 10 succeeded, it
    // reopens); R = 7: 7 calls, three permits left; R = 6: 3 (reopens);
    // R = 5: 5; R = 4: 4 (one left); R = 3: 1 (reopens); R = 2: 2; R = 1: 1.
    // Calls: 10 + 400 + 9 + 1 + 7 + 3 + 5 + 4 + 1 + 2 + 1 = 443, the last
    // success in wave 49, at 4.9 s.
    let out = succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--clients",
        "50",
        "--policy",
        "constant",
        "--base",
        "100ms",
        "--cap",
        "100ms",
        "--breaker",
        "resilience4j:50,window:10,min:10,open:50ms,permits:10",
        "--json",
        "-q",
    ]));
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let metric = |m: &str| json["metrics"][m]["mean"].as_f64().unwrap();
    assert_eq!(metric("calls"), 443.0);
    assert_eq!(metric("successes"), 50.0);
    assert_eq!(metric("last_success_ms"), 4_900.0);
}

#[test]
fn bad_resilience4j_and_polly_files_are_one_line_naming_the_field() {
    let dir = workdir("resilience-bad");
    for (name, text, expect) in [
        (
            "a.yml",
            "resilience4j:\n  retry:\n    instances:\n      a:\n        waitDuration: 0.5s\n",
            "a.yml: resilience4j.retry.instances.a.waitDuration: \"0.5s\" is not a Spring Boot duration",
        ),
        (
            "b.yml",
            "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        slidingWindowTyp: TIME_BASED\n",
            "b.yml: resilience4j.circuitbreaker.instances.a.slidingWindowTyp: unknown field",
        ),
        (
            "c.json",
            r#"{"Retry": {"Delay": "PT2S"}}"#,
            "c.json: Retry.Delay: \"PT2S\" is not a .NET TimeSpan",
        ),
        (
            "d.json",
            r#"{"CircuitBreaker": {"FailureRatio": 1.5}}"#,
            "d.json: CircuitBreaker.FailureRatio: out of Polly's range: accepted 0 to 1",
        ),
    ] {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        let err = usage_error(&["import", path.to_str().unwrap()]);
        let shown = err.replace(&format!("{}/", dir.display()), "");
        assert!(shown.contains(expect), "{shown}");
    }
}
