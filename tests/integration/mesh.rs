//! Service-mesh retry budgets as a user runs them: the Gateway API's
//! XBackendTrafficPolicy imported runs byte-identical to the same run
//! written as flags, and bad files are one line, exit 2.

use std::fs;

use crate::common::{outage_run, usage_error, workdir};

/// `outage_run` with a per-attempt timeout of 100 ms and four attempts:
/// long enough for the budget to bind.
fn run(args: &[&str]) -> String {
    outage_run(
        &[
            ["--json", "-q", "--timeout", "100ms", "--max-attempts", "4"].as_slice(),
            args,
        ]
        .concat(),
    )
}

#[test]
fn an_imported_gateway_policy_runs_as_its_flags() {
    // scenarios/configs/gateway-backend-traffic-policy.yaml: percent 25
    // over 10 s, a floor of 5 retries per 1 s: Finagle's budget 0.25, TTL
    // 10 s, 5 a second.
    let imported = run(&[
        "--import",
        "scenarios/configs/gateway-backend-traffic-policy.yaml",
    ]);
    let flags = run(&["--budget", "finagle:0.25,ttl:10s,min:5"]);
    assert_eq!(imported, flags);
    // The budget binds: without it the run differs.
    assert_ne!(imported, run(&[]));
}

#[test]
fn bad_gateway_policies_are_one_line_naming_the_field() {
    let dir = workdir("mesh-bad");
    let head = "apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\n\
                metadata: {name: p}\nspec:\n";
    for (name, spec, expect) in [
        (
            "percent.yaml",
            "  retryConstraint: {budget: {percent: 150}}\n",
            "percent.yaml: spec.retryConstraint.budget.percent: 150: expected an integer from 0 to 100",
        ),
        (
            "interval.yaml",
            "  retryConstraint: {budget: {interval: 10}}\n",
            "spec.retryConstraint.budget.interval: 10: expected a Gateway API Duration",
        ),
        (
            "session.yaml",
            "  sessionPersistence: {sessionName: s}\n",
            "spec.sessionPersistence: not modelled",
        ),
        (
            "unknown.yaml",
            "  retryConstraint: {minRetryRate: {rate: 3}}\n",
            "spec.retryConstraint.minRetryRate.rate: unknown field: expected one of count, interval",
        ),
    ] {
        let path = dir.join(name);
        fs::write(&path, format!("{head}{spec}")).unwrap();
        let err = usage_error(&["import", path.to_str().unwrap()]);
        let shown = err.replace(&format!("{}/", dir.display()), "");
        assert!(shown.contains(expect), "{shown}");
    }
}
