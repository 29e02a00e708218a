//! Linkerd's ServiceProfile and its retry budget (tower's `TpsBudget`) as a
//! user runs them: the imported profile runs byte-identical to the same run
//! written as flags, the budget keeps to tower's arithmetic, and bad files
//! are one line, exit 2.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{mean, outage_run, succeed, usage_error, workdir};

const PROFILE: &str = "scenarios/configs/linkerd-service-profile.yaml";

/// A server run with a half-second outage, no per-attempt timeout (a
/// ServiceProfile has none), seven seconds in all: shorter than the
/// budget's 10 s TTL, so nothing deposited or withdrawn expires in it.
fn run(args: &[&str]) -> String {
    outage_run(&[["--json", "-q"].as_slice(), args].concat())
}

/// The flags the profile's get-order route amounts to.
const FLAGS: [&str; 8] = [
    "--policy",
    "no-backoff",
    "--budget",
    "tower:0.2,ttl:10s,min:10",
    "--deadline",
    "300ms",
    "--retry-on",
    "failure+rejected",
];

#[test]
fn an_imported_service_profile_runs_as_its_flags() {
    let imported = run(&["--import", PROFILE, "--select", "route=get-order"]);
    assert_eq!(imported, run(&FLAGS));
    // The budget binds: a larger one lets more retries through.
    let mut looser = FLAGS;
    looser[3] = "tower:1,ttl:10s,min:10";
    assert_ne!(imported, run(&looser));
}

#[test]
fn in_an_outage_only_what_succeeded_pays_for_retries() {
    let metrics = |budget: &str| {
        let mut flags = FLAGS;
        flags[3] = budget;
        let json: serde_json::Value = serde_json::from_str(&run(&flags)).unwrap();
        let m = |k: &str| mean(&json, k);
        (m("attempts") - m("requests"), m("successes"))
    };
    let (retries, successes) = metrics("tower:0.2,ttl:10s,min:10");
    // Every failure here is retryable, and one the budget refuses deposits
    // nothing, so the deposits are the successes (a timeout would deposit
    // nothing either, and there are none); nothing expires within the run.
    // A retry withdraws 5 from deposits plus a reserve of 10 × 10 s × 5:
    // retries ≤ successes / 5 + 100, exactly (the means of seeds that each
    // keep it keep it too).
    assert!(retries <= successes / 5.0 + 100.0, "{retries} {successes}");
    // And the budget is spent: the outage fails about 250 requests, more
    // than the 100 retries the first second's 500 successes and the
    // reserve pay for, plus the outage's own few.
    assert!(retries > 150.0, "{retries}");
    // Finagle's budget of the same numbers deposits at every request's
    // start, failed ones included, so it lets more through.
    let (finagle, _) = metrics("finagle:0.2,ttl:10s,min:10");
    assert!(finagle > retries, "{finagle} ≤ {retries}");
}

#[test]
fn the_tower_budget_is_listed_and_its_ranges_named() {
    let list = succeed(cargo_bin_cmd!("herdsim").arg("controls"));
    assert!(
        list.contains("tower:RATIO,ttl:DURATION,min:PER_S") && list.contains("TpsBudget"),
        "{list}"
    );
    for (rule, expect) in [
        (
            "tower:0.2,ttl:500ms,min:10",
            "ttl must be a duration from 1s to",
        ),
        (
            "tower:2000,ttl:10s,min:10",
            "the value of tower must be a number from 0 to 1000",
        ),
        (
            "tower:0.2,ttl:10s,min:2147483647",
            "min must be a whole number from 0 to 2147483646",
        ),
    ] {
        let err = usage_error(&["run", "--resource", "server", "--budget", rule]);
        assert!(err.contains(expect), "{err}");
    }
}

#[test]
fn bad_service_profiles_are_one_line_naming_the_field() {
    let dir = workdir("linkerd-bad");
    let head =
        "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata: {name: p}\nspec:\n";
    let route = "  routes:\n  - name: r\n    condition: {method: GET}\n    isRetryable: true\n";
    for (name, spec, expect) in [
        (
            "ttl.yaml",
            format!(
                "  retryBudget: {{retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 90s}}\n{route}"
            ),
            "ttl.yaml: spec.retryBudget.ttl: not modelled: a ttl outside 1s to 60s",
        ),
        (
            "partial.yaml",
            format!("  retryBudget: {{retryRatio: 0.2}}\n{route}"),
            "spec.retryBudget: no minRetriesPerSecond",
        ),
        (
            "split.yaml",
            format!("  dstOverrides: [{{authority: b, weight: 1}}]\n{route}"),
            "spec.dstOverrides: not modelled: a traffic split",
        ),
        (
            "timeout.yaml",
            format!("{route}    timeout: 10\n"),
            "spec.routes[0].timeout: expected a string",
        ),
        (
            "unknown.yaml",
            format!("{route}    retryBudget: {{}}\n"),
            "spec.routes[0].retryBudget: unknown field: expected one of name, condition",
        ),
        (
            "two.yaml",
            format!("{route}  - name: s\n    condition: {{method: POST}}\n"),
            "spec.routes: several routes: choose the one herdsim's requests take with --select route=NAME (one of r, s)",
        ),
    ] {
        let path = dir.join(name);
        fs::write(&path, format!("{head}{spec}")).unwrap();
        let err = usage_error(&["import", path.to_str().unwrap()]);
        let shown = err.replace(&format!("{}/", dir.display()), "");
        assert!(shown.contains(expect), "{shown}");
    }
}
