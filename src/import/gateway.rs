//! The Gateway API's `XBackendTrafficPolicy` (GEP-3388, API group
//! `gateway.networking.x-k8s.io/v1alpha1`), as YAML, read as the types in
//! kubernetes-sigs/gateway-api declare it (commit 4564255,
//! `apisx/v1alpha1/xbackendtrafficpolicy_types.go` and `shared_types.go`):
//!
//! ```yaml
//! apiVersion: gateway.networking.x-k8s.io/v1alpha1
//! kind: XBackendTrafficPolicy
//! metadata: {name: orders}
//! spec:
//!   targetRefs: [{group: "", kind: Service, name: orders}]
//!   retryConstraint:
//!     budget: {percent: 20, interval: 10s}
//!     minRetryRate: {count: 10, interval: 1s}
//! ```
//!
//! A file holds one policy, or a Kubernetes `List` (`kind: List` or
//! `XBackendTrafficPolicyList`) of them under `items`: `--select
//! policy=NAME` (its `metadata.name`), else the only one, else an error
//! naming them.
//!
//! The fields and their kubebuilder markers: `budget` defaults to
//! `{percent: 20, interval: "10s"}`, `percent` 0 to 100 (an integer),
//! `interval` 1 s to 1 h; `minRetryRate` defaults to `{count: 10, interval:
//! "1s"}`, `count` 1 to 1,000,000, `interval` above 0 and at most 1 h.
//! Durations are the Gateway API's `Duration` (GEP-2257: the pattern
//! `^([0-9]{1,5}(h|m|s|ms)){1,4}$`, "1h30m", "500ms"). The defaults apply
//! field by field, as the API server applies kubebuilder defaults.
//!
//! The arithmetic: the GEP and the type's comment leave it to
//! implementations ("the percentage of incoming traffic composed of
//! retries over a given time interval"; 20% of 1,000 requests in 10 s is
//! 200 retries), with a floor of retries per interval for quiet clients.
//! That is Finagle's `RetryBudget` (a ratio of retries to requests over a
//! TTL, plus `minRetriesPerSec`), the budget GEP-3388 cites as prior art
//! beside Linkerd's and Envoy's, so the policy maps onto herdsim's
//! `finagle` control: `percent`/100 → PERCENT, `budget.interval` → ttl,
//! `minRetryRate.count`/`interval` → min per second. Envoy's own
//! implementation of the GEP (a concurrency budget) differs; `--budget
//! envoy:…` models that. Refused where Finagle cannot follow: a budget
//! interval above 60 s (Finagle's TTL range is 1 s to 60 s) and a minimum
//! rate that is not a whole number of retries a second.
//!
//! `targetRefs` names the backends the policy applies to and changes
//! nothing in a run; `status` is the controller's and is passed over;
//! `sessionPersistence` is refused (herdsim has no sessions).

use serde_json::Value;

use super::durations::herdsim;
use super::kube::{Resource, name_of};
use super::tree::{Node, from_yaml};
use super::{Context, Format, ImportError};
use crate::base::time::Micros;

/// The format.
pub const FORMAT: Format = Format {
    name: "Gateway API XBackendTrafficPolicy (YAML)",
    about: "a gateway.networking.x-k8s.io/v1alpha1 XBackendTrafficPolicy (GEP-3388 retry \
            budget), or a List of them",
    selects: &[(
        "policy",
        "the XBackendTrafficPolicy of a List: NAME (metadata.name), or NAMESPACE/NAME where \
         several namespaces share the name",
    )],
    parse: from_yaml,
    claims,
    read,
};

const API_VERSION: &str = "gateway.networking.x-k8s.io/v1alpha1";
const KIND: &str = "XBackendTrafficPolicy";

/// What the reader takes: one policy or a List of them.
const RESOURCE: Resource = Resource {
    kind: KIND,
    group: "gateway.networking.x-k8s.io/",
    select: "policy",
    noun: "policy",
    nouns: "policies",
};

fn claims(value: &Value) -> bool {
    RESOURCE.claims(value)
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    let policy = RESOURCE.pick(root, ctx)?;
    read_policy(&policy, ctx)
}

/// The field `key` of an optional object.
fn field<'a>(parent: &Option<Node<'a>>, key: &str) -> Option<Node<'a>> {
    parent.as_ref().and_then(|p| p.get(key))
}

fn read_policy(policy: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    policy.only(ctx, &["apiVersion", "kind", "metadata", "spec", "status"])?;
    let version = policy.get("apiVersion").expect("claimed");
    if version.value().as_str() != Some(API_VERSION) {
        return Err(ctx.error(
            &version,
            format!("{}: expected {API_VERSION}", version.value()),
        ));
    }
    let name = name_of(policy);
    ctx.chose(if name.is_empty() {
        KIND.to_string()
    } else {
        format!("{KIND} {name}")
    });
    let spec = policy
        .get("spec")
        .ok_or_else(|| ctx.error(policy, "no spec: the policy's spec is required"))?;
    if let Some(node) = spec.get("sessionPersistence") {
        return Err(ctx.unsupported(
            &node,
            "session persistence (herdsim's clients have no sessions to pin)",
        ));
    }
    spec.only(
        ctx,
        &["targetRefs", "retryConstraint", "sessionPersistence"],
    )?;
    let Some(constraint) = spec.get("retryConstraint") else {
        ctx.warn(format!(
            "{}: {}: no retryConstraint: the policy sets nothing herdsim models",
            ctx.file,
            spec.path()
        ));
        return Ok(());
    };
    constraint.only(ctx, &["budget", "minRetryRate"])?;
    let budget = constraint.get("budget");
    let rate = constraint.get("minRetryRate");
    if let Some(b) = &budget {
        b.only(ctx, &["percent", "interval"])?;
    }
    if let Some(r) = &rate {
        r.only(ctx, &["count", "interval"])?;
    }
    let mut from = Vec::new();
    let percent = match field(&budget, "percent") {
        Some(node) => {
            from.push(node.path().to_string());
            integer(ctx, &node, 0, 100)?
        }
        None => 20,
    };
    let interval = match field(&budget, "interval") {
        Some(node) => {
            from.push(node.path().to_string());
            let us = duration(ctx, &node)?;
            if !(Micros::from_s(1)..=Micros::from_s(3_600)).contains(&us) {
                return Err(ctx.error(
                    &node,
                    format!("is {}: the Gateway API accepts 1s to 1h", herdsim(us)),
                ));
            }
            if us > Micros::from_s(60) {
                return Err(ctx.unsupported(
                    &node,
                    "a budget interval above 60s: herdsim's finagle budget, which the policy \
                     maps onto, takes a TTL of 1s to 60s (Finagle's range)",
                ));
            }
            us
        }
        None => Micros::from_s(10),
    };
    let count = match field(&rate, "count") {
        Some(node) => {
            from.push(node.path().to_string());
            integer(ctx, &node, 1, 1_000_000)?
        }
        None => 10,
    };
    let (rate_interval, rate_path) = match field(&rate, "interval") {
        Some(node) => {
            from.push(node.path().to_string());
            let us = duration(ctx, &node)?;
            if us == Micros::ZERO || us > Micros::from_s(3600) {
                return Err(ctx.error(
                    &node,
                    format!(
                        "is {}: the Gateway API accepts above 0 up to 1h",
                        herdsim(us)
                    ),
                ));
            }
            (us, node.path().to_string())
        }
        None => (
            Micros::from_s(1),
            constraint.path().to_string() + ".minRetryRate",
        ),
    };
    // count per interval as whole retries a second.
    let scaled = u128::from(count) * 1_000_000;
    if scaled % u128::from(rate_interval.ticks()) != 0 {
        return Err(ctx.error_at(
            &rate_path,
            format!(
                "not modelled: {count} per {} is not a whole number of retries a second, \
                 which herdsim's finagle budget (minRetriesPerSec) takes",
                herdsim(rate_interval)
            ),
        ));
    }
    let per_s = scaled / u128::from(rate_interval.ticks());
    if from.is_empty() {
        from.push(constraint.path().to_string());
    }
    let from: Vec<&str> = from.iter().map(String::as_str).collect();
    ctx.set(
        "budget",
        format!(
            "finagle:{},ttl:{},min:{per_s}",
            percent as f64 / 100.0,
            herdsim(interval)
        ),
        &from,
        format!(
            "retryConstraint (GEP-3388, defaults percent 20, interval 10s, minRetryRate 10 per \
             1s) → Finagle's RetryBudget: retries may be percent/100 of the requests of the \
             last interval (the TTL), plus minRetryRate.count per minRetryRate.interval \
             ({count} per {} = {per_s}/s); the Gateway API leaves the arithmetic to \
             implementations and names Finagle's budget as prior art",
            herdsim(rate_interval)
        ),
    )
}

/// An integer within the kubebuilder range `lo..=hi`.
fn integer(ctx: &Context<'_>, node: &Node<'_>, lo: u64, hi: u64) -> Result<u64, ImportError> {
    let n = node.value().as_u64().filter(|n| (lo..=hi).contains(n));
    n.ok_or_else(|| {
        ctx.error(
            node,
            format!("{}: expected an integer from {lo} to {hi}", node.value()),
        )
    })
}

fn duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<Micros, ImportError> {
    let text = node.value().as_str().unwrap_or("");
    gateway_duration(text).ok_or_else(|| {
        ctx.error(
            node,
            format!(
                "{}: expected a Gateway API Duration (GEP-2257: 1 to 4 parts of 1 to 5 \
                 digits and h, m, s or ms, such as \"10s\", \"1m30s\", \"500ms\")",
                node.value()
            ),
        )
    })
}

/// A GEP-2257 duration, `^([0-9]{1,5}(h|m|s|ms)){1,4}$`, in µs.
pub fn gateway_duration(text: &str) -> Option<Micros> {
    let bytes = text.as_bytes();
    let (mut i, mut parts, mut us) = (0, 0, 0u64);
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let digits = &text[start..i];
        if digits.is_empty() || digits.len() > 5 {
            return None;
        }
        let n: u64 = digits.parse().ok()?;
        let unit = if text[i..].starts_with("ms") {
            i += 2;
            1_000
        } else {
            let u = match bytes.get(i)? {
                b'h' => 3_600_000_000,
                b'm' => 60_000_000,
                b's' => 1_000_000,
                _ => return None,
            };
            i += 1;
            u
        };
        us += n * unit;
        parts += 1;
    }
    (1..=4).contains(&parts).then_some(Micros::from_ticks(us))
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};
    use super::gateway_duration;
    use crate::base::time::Micros;

    fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("policy.yaml", text, select)
    }

    const HEAD: &str =
        "apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\n";

    fn policy(spec: &str) -> String {
        format!("{HEAD}metadata: {{name: orders}}\nspec:\n{spec}")
    }

    #[test]
    fn durations_follow_gep_2257() {
        for (text, us) in [
            ("10s", 10_000_000),
            ("500ms", 500_000),
            ("1h30m", 5_400_000_000),
            ("1m1s1ms1s", 61_001_000 + 1_000_000),
        ] {
            assert_eq!(
                gateway_duration(text),
                Some(Micros::from_ticks(us)),
                "{text}"
            );
        }
        for bad in ["", "10", "1.5s", "123456s", "1d", "1s1s1s1s1s", "s", "10 s"] {
            assert_eq!(gateway_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_defaults_are_the_kubebuilder_defaults() {
        // budget {percent: 20, interval: 10s}, minRetryRate {count: 10, interval: 1s}.
        let got = read_with(&policy("  retryConstraint: {}\n"), &[]).unwrap();
        assert_eq!(got.value("budget"), Some("finagle:0.2,ttl:10s,min:10"));
        // Field by field.
        let got = read_with(
            &policy("  retryConstraint: {budget: {percent: 5}, minRetryRate: {interval: 2s}}\n"),
            &[],
        )
        .unwrap();
        assert_eq!(got.value("budget"), Some("finagle:0.05,ttl:10s,min:5"));
    }

    #[test]
    fn the_documented_example_maps_onto_finagle() {
        let got = read_with(
            &policy(
                "  targetRefs: [{group: '', kind: Service, name: orders}]\n  retryConstraint:\n    \
                 budget: {percent: 25, interval: 30s}\n    minRetryRate: {count: 60, interval: 1m}\n",
            ),
            &[],
        )
        .unwrap();
        assert_eq!(got.value("budget"), Some("finagle:0.25,ttl:30s,min:1"));
        assert_eq!(got.files[0].2, "XBackendTrafficPolicy orders");
    }

    #[test]
    fn a_list_is_selected_by_name_or_refused_with_the_names() {
        let item = |name: &str, pct: u32| {
            format!(
                "- apiVersion: gateway.networking.x-k8s.io/v1alpha1\n  kind: \
                 XBackendTrafficPolicy\n  metadata: {{name: {name}}}\n  spec:\n    \
                 retryConstraint: {{budget: {{percent: {pct}}}}}\n"
            )
        };
        let text = format!("kind: List\nitems:\n{}{}", item("a", 10), item("b", 30));
        let err = read_with(&text, &[]).unwrap_err();
        assert!(err.contains("--select policy=NAME (one of a, b)"), "{err}");
        let got = read_with(&text, &[("policy", "b")]).unwrap();
        assert_eq!(got.value("budget"), Some("finagle:0.3,ttl:10s,min:10"));
        let err = read_with(&text, &[("policy", "c")]).unwrap_err();
        assert!(err.contains("no policy 'c': the file has a, b"), "{err}");
    }

    #[test]
    fn bad_and_unmodelled_fields_are_refused_with_their_path_and_range() {
        let err = |spec: &str| read_with(&policy(spec), &[]).unwrap_err();
        let e = err("  retryConstraint: {budget: {percent: 101}}\n");
        assert_eq!(
            e,
            "policy.yaml: spec.retryConstraint.budget.percent: 101: expected an integer from 0 to 100"
        );
        let e = err("  retryConstraint: {budget: {interval: 500ms}}\n");
        assert!(
            e.contains("budget.interval: is 500ms: the Gateway API accepts 1s to 1h"),
            "{e}"
        );
        let e = err("  retryConstraint: {budget: {interval: 2m}}\n");
        assert!(
            e.contains("budget.interval: not modelled: a budget interval above 60s"),
            "{e}"
        );
        let e = err("  retryConstraint: {minRetryRate: {count: 0}}\n");
        assert!(
            e.contains("minRetryRate.count: 0: expected an integer from 1 to 1000000"),
            "{e}"
        );
        let e = err("  retryConstraint: {minRetryRate: {count: 1, interval: 10s}}\n");
        assert!(
            e.contains("minRetryRate.interval: not modelled: 1 per 10s"),
            "{e}"
        );
        let e = err("  retryConstraint: {minRetryRate: {interval: 1.5s}}\n");
        assert!(e.contains("expected a Gateway API Duration"), "{e}");
        let e = err("  sessionPersistence: {sessionName: s}\n");
        assert!(
            e.contains("spec.sessionPersistence: not modelled: session"),
            "{e}"
        );
        let e = err("  retryConstraint: {budgetPercent: 20}\n");
        assert!(
            e.contains("spec.retryConstraint.budgetPercent: unknown field"),
            "{e}"
        );
        let e = read_with(
            "apiVersion: gateway.networking.x-k8s.io/v1alpha2\nkind: XBackendTrafficPolicy\nspec: {}\n",
            &[],
        )
        .unwrap_err();
        assert!(
            e.contains("apiVersion: \"gateway.networking.x-k8s.io/v1alpha2\": expected"),
            "{e}"
        );
    }
}
