//! Linkerd's `ServiceProfile` (`linkerd.io/v1alpha2`), as YAML, read as
//! linkerd/linkerd2's controller translates it for the proxy and
//! linkerd/linkerd2-proxy applies it:
//!
//! - the types: linkerd/linkerd2 b24cd40,
//!   `controller/gen/apis/serviceprofile/v1alpha2/types.go`, checked as
//!   `pkg/profiles/profiles.go` `Validate` and the CRD
//!   (`charts/linkerd-crds/templates/serviceprofile.yaml`) check them;
//! - the translation: `controller/api/destination/profile_translator.go`
//!   (`createDestinationProfile`, `toRoute`, `toResponseMatch`,
//!   `defaultRetryBudget`);
//! - the proxy: linkerd/linkerd2-proxy 29637b6,
//!   `linkerd/service-profiles/src/proto.rs` (`convert_retry_budget`,
//!   `convert_route`, `convert_rsp_match`), `src/http.rs`
//!   (`ResponseMatch::is_match`), `linkerd/app/outbound/src/http/retry.rs`
//!   (`RetryPolicy::retry`), `linkerd/app/outbound/src/http/logical/profile.rs`
//!   (the route stack) and `linkerd/app/core/src/classify.rs`.
//!
//! ```yaml
//! apiVersion: linkerd.io/v1alpha2
//! kind: ServiceProfile
//! metadata: {name: orders.shop.svc.cluster.local, namespace: shop}
//! spec:
//!   retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 10s}
//!   routes:
//!   - name: GET /orders/{id}
//!     condition: {method: GET, pathRegex: /orders/[^/]*}
//!     isRetryable: true
//!     timeout: 300ms
//! ```
//!
//! What it becomes:
//!
//! - **The budget**: tower's `TpsBudget`, herdsim's `tower` control, one per
//!   profile, shared by its retryable routes. Without `retryBudget` the
//!   controller sends `defaultRetryBudget()`: ratio 0.2, 10 a second, TTL
//!   10 s. The defaults are for the whole object, not field by field: the
//!   CRD requires all three fields of a `retryBudget` (and the controller
//!   fails the profile on a missing `ttl`). A budget the proxy discards
//!   (`convert_retry_budget`: a TTL outside 1 s to 60 s, a ratio outside 0
//!   to 1,000) leaves its retryable routes with no retries and a warning in
//!   the proxy's log: refused here, with that reason.
//! - **A retryable route** (`isRetryable: true`) retries a failure at once,
//!   with no backoff and no attempt limit but the budget
//!   (`RetryPolicy::retry` returns a ready future): herdsim's `no-backoff`
//!   policy with no `max_attempts` (request bodies assumed to fit the
//!   proxy's 64 KiB replay buffer: a larger one is never retried), which
//!   the server model allows with a
//!   budget that spends (the slot model refuses it): the import sets
//!   `resource = "server"`. A route not retryable, or a profile with no routes
//!   (every request takes the proxy's default route), makes one attempt.
//! - **`timeout`** bounds the whole request with its retries: the proxy's
//!   route stack puts `NewTimeout` outside the retry layer. That is
//!   herdsim's `deadline`, not the per-attempt `timeout`. No default (the
//!   controller: "No default timeout"); `0s` is none. DESIGN.md's table has
//!   no route timeout; Linkerd's docs name a 10 s default for the newer
//!   HTTPRoute timeouts, not for ServiceProfiles.
//! - **`responseClasses`** decide which responses are failures, and so
//!   which are retried: the first class whose condition matches the status
//!   decides; none matching, a 5xx is a failure (an HTTP upstream assumed:
//!   the gRPC fallback of `classify.rs` needs a `grpc-status` herdsim's
//!   server does not send). herdsim's server answers a failure (HTTP 503,
//!   `--select failure-status=`), a full queue's rejection (503, `--select
//!   rejected-status=`) or a success (200): each is classified as the proxy
//!   would, giving `retry_on`. A class that makes a 200 a failure is refused
//!   (herdsim cannot retry a success). A status range with a bound left out
//!   (0) is dropped by the proxy (`StatusCode::from_u16(0)` fails), and with
//!   it the condition it is in: dropped here too, with a warning.
//! - **Route choice**: the proxy takes the first route whose `condition`
//!   matches a request. herdsim's requests are of one kind, with no method
//!   or path to match, so the route is `--select route=NAME` (the first of
//!   that name), or the only one; several without a choice are refused
//!   rather than guessed. Conditions are checked as `Validate` checks them
//!   and otherwise not evaluated.
//!
//! Refused, with why: `dstOverrides` with entries (a traffic split across
//! services; herdsim has one) and `opaquePorts` with entries (an opaque port
//! is proxied as TCP, with no routes and no retries, and herdsim does not
//! know which port its requests use). Where the code and the CRD differ:
//! the CRD declares a request condition's `not` a list, the Go type (which
//! decodes it) a single condition; this reader follows the type. Durations
//! are Go's `time.ParseDuration` (`300ms`, `1m30s`, `1.5s`).
//!
//! Not read yet: Linkerd 2.16's retries by HTTPRoute and GRPCRoute
//! annotations (`retry.linkerd.io/*`, `timeout.linkerd.io/*`), which the
//! proxy applies as another policy (`max_retries`, a per-try timeout, an
//! optional backoff, no budget: `linkerd/app/outbound/src/http/logical/
//! policy/route/retry.rs`).
//!
//! The scope: the proxy keeps one budget per profile it resolves, in each
//! proxy (each client pod): herdsim's `--fleet N` with the N sources behind
//! one proxy; the import sets no fleet.
//!
//! Each object is read in its own file: the profile's `retryBudget` in
//! `budget.rs`; a route's `condition` and `responseClasses` in `route.rs`;
//! Go's durations in `go_time.rs`. The profile itself, the route chosen and
//! what it sets, are here.

mod budget;
mod go_time;
mod route;

use serde_json::Value;

use super::durations::herdsim;
use super::kube::{Resource, name_of};
use super::tree::{Node, from_yaml};
use super::{Context, Format, ImportError};
use crate::base::time::Micros;
use budget::read_budget;
use go_time::go_duration;
pub use go_time::{GoDurationError, parse_go_duration};
use route::{Statuses, check_route, retry_on, status_selection};

/// The format.
pub const FORMAT: Format = Format {
    name: "Linkerd ServiceProfile (YAML)",
    about: "a linkerd.io/v1alpha2 ServiceProfile (retryBudget; routes with isRetryable, \
            timeout and responseClasses), or a List of them",
    selects: &[
        (
            "service-profile",
            "the ServiceProfile of a List: NAME (metadata.name), or NAMESPACE/NAME where several \
             namespaces share the name",
        ),
        (
            "route",
            "the Linkerd ServiceProfile route, by name, that herdsim's requests take",
        ),
        (
            "failure-status",
            "the HTTP status of herdsim's server failures (default 503)",
        ),
        (
            "rejected-status",
            "the HTTP status of a full queue's rejection (default 503)",
        ),
    ],
    parse: from_yaml,
    claims,
    read,
};

const API_VERSION: &str = "linkerd.io/v1alpha2";
const KIND: &str = "ServiceProfile";

/// What the reader takes: one ServiceProfile or a List of them.
const RESOURCE: Resource = Resource {
    kind: KIND,
    group: "linkerd.io/",
    select: "service-profile",
    noun: "profile",
    nouns: "profiles",
};

fn claims(value: &Value) -> bool {
    RESOURCE.claims(value)
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    let profile = RESOURCE.pick(root, ctx)?;
    read_profile(&profile, ctx)
}

fn read_profile(profile: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    profile.only(ctx, &["apiVersion", "kind", "metadata", "spec"])?;
    let version = profile.get("apiVersion").expect("claimed");
    if version.value().as_str() != Some(API_VERSION) {
        return Err(ctx.error(
            &version,
            format!("{}: expected {API_VERSION}", version.value()),
        ));
    }
    let name = name_of(profile);
    let spec = profile.get("spec");
    if let Some(spec) = &spec {
        spec.only(
            ctx,
            &["routes", "retryBudget", "dstOverrides", "opaquePorts"],
        )?;
        for (key, why) in [
            (
                "dstOverrides",
                "a traffic split across services (herdsim's requests go to one service)",
            ),
            (
                "opaquePorts",
                "opaque ports are proxied as TCP, with no routes and no retries, and herdsim \
                 does not know which port its requests use",
            ),
        ] {
            if let Some(node) = spec.get(key)
                && !node.items(ctx)?.is_empty()
            {
                return Err(ctx.unsupported(&node, why));
            }
        }
    }
    let field = |key: &str| spec.as_ref().and_then(|s| s.get(key));
    // The controller translates (and may refuse) the whole profile, so
    // every route and the budget are checked, whichever route is chosen.
    let budget = read_budget(ctx, field("retryBudget"))?;
    let routes = match field("routes") {
        Some(node) => node.items(ctx)?,
        None => Vec::new(),
    };
    for route in &routes {
        check_route(ctx, route)?;
    }
    let route_name = |r: &Node<'_>| {
        r.value()
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let names: Vec<String> = routes.iter().map(route_name).collect();
    let chosen =
        match ctx.selection("route") {
            Some(wanted) => Some(routes.iter().find(|r| route_name(r) == wanted).ok_or_else(
                || {
                    ctx.error_at(
                        "--select route",
                        if names.is_empty() {
                            format!("no route '{wanted}': the profile has no routes")
                        } else {
                            format!("no route '{wanted}': the profile has {}", names.join(", "))
                        },
                    )
                },
            )?),
            None if routes.len() <= 1 => routes.first(),
            None => {
                let at = field("routes").expect("has routes");
                return Err(ctx.error(
                    &at,
                    format!(
                        "several routes: choose the one herdsim's requests take with --select \
                     route=NAME (one of {}); Linkerd takes the first whose condition matches, \
                     and herdsim's requests have no method or path",
                        names.join(", ")
                    ),
                ));
            }
        };
    let who = if name.is_empty() {
        KIND.to_string()
    } else {
        format!("{KIND} {name}")
    };
    let statuses = Statuses {
        failure: status_selection(ctx, "failure-status")?,
        rejected: status_selection(ctx, "rejected-status")?,
    };
    let Some(route) = chosen else {
        ctx.chose(format!("{who}, the default route"));
        let at = spec
            .as_ref()
            .map_or_else(|| profile.path().to_string(), |s| s.path().to_string());
        return ctx.set(
            "max_attempts",
            "1",
            &[&at],
            "no routes: every request takes the proxy's default route, which is not \
             retryable and has no timeout",
        );
    };
    ctx.chose(format!("{who}, route {}", route_name(route)));
    if let Some(node) = route.get("timeout") {
        let ns = go_duration(ctx, &node)?;
        if ns > 0 {
            if ns % 1_000 != 0 {
                return Err(ctx.error(
                    &node,
                    "is not a whole number of microseconds, herdsim's resolution for durations",
                ));
            }
            ctx.set(
                "deadline",
                herdsim(Micros::from_ticks((ns / 1_000) as u64)),
                &[node.path()],
                "the route's timeout bounds the request with all its retries (the proxy's \
                 route stack puts the timeout outside the retry layer): herdsim's deadline; \
                 no default",
            )?;
        }
    }
    let retryable = match route.get("isRetryable") {
        Some(node) => node.bool(ctx, false)?.then_some(node),
        None => None,
    };
    let Some(retryable) = retryable else {
        let at = route.path().to_string();
        return ctx.set(
            "max_attempts",
            "1",
            &[&at],
            "isRetryable false (the default): the proxy gives the route no retry policy",
        );
    };
    ctx.set(
        "resource",
        "server",
        &[retryable.path()],
        "a proxy in front of a service: herdsim's server model, the one where retries at once \
         with no attempt limit end (by the budget) and where the route timeout is a request \
         deadline",
    )?;
    ctx.set(
        "policy",
        "no-backoff",
        &[retryable.path()],
        "isRetryable: linkerd2-proxy retries a failure at once (RetryPolicy::retry returns a \
         ready future), with no attempt limit but the budget",
    )?;
    let from: Vec<&str> = budget.from.iter().map(String::as_str).collect();
    ctx.set(
        "budget",
        format!(
            "tower:{},ttl:{},min:{}",
            budget.ratio,
            herdsim(Micros::from_ticks(budget.ttl_us)),
            budget.min_per_s
        ),
        &from,
        "retryBudget (default retryRatio 0.2, minRetriesPerSecond 10, ttl 10s, as a whole) → \
         tower's TpsBudget, one per profile: a response not retried deposits 1, a retry \
         withdraws ⌊1/retryRatio⌋, over 10 slots of ttl/10, plus a reserve of \
         minRetriesPerSecond × ttl; per proxy (--fleet N for N sources behind one)",
    )?;
    retry_on(ctx, route, &statuses)
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};

    pub(super) fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("profile.yaml", text, select)
    }

    pub(super) fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    pub(super) const HEAD: &str = "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\n\
                        metadata: {name: orders.shop.svc.cluster.local}\n";

    pub(super) fn profile(spec: &str) -> String {
        format!("{HEAD}spec:\n{spec}")
    }

    pub(super) const ROUTE: &str = "  routes:\n  - name: get\n    condition: {method: GET}\n    \
                         isRetryable: true\n";

    #[test]
    fn the_route_timeout_is_the_request_deadline() {
        let got = read(&profile(&format!("{ROUTE}    timeout: 300ms\n"))).unwrap();
        assert_eq!(got.value("deadline"), Some("300ms"));
        let got = read(&profile(&format!("{ROUTE}    timeout: 0s\n"))).unwrap();
        assert_eq!(got.value("deadline"), None, "0 is none");
        let e = read(&profile(&format!("{ROUTE}    timeout: soon\n"))).unwrap_err();
        assert!(e.contains("spec.routes[0].timeout: \"soon\""), "{e}");
    }

    #[test]
    fn a_route_not_retryable_and_no_routes_make_one_attempt() {
        let got = read(&profile(
            "  routes:\n  - name: post\n    condition: {method: POST}\n    timeout: 1s\n",
        ))
        .unwrap();
        assert_eq!(got.value("max_attempts"), Some("1"));
        assert_eq!(got.value("deadline"), Some("1s"));
        assert_eq!(got.value("budget"), None);
        let got = read(&profile(
            "  retryBudget: {retryRatio: 0.5, minRetriesPerSecond: 1, ttl: 5s}\n",
        ))
        .unwrap();
        assert_eq!(got.value("max_attempts"), Some("1"));
        assert_eq!(
            got.files[0].2,
            "ServiceProfile orders.shop.svc.cluster.local, the default route"
        );
    }

    #[test]
    fn several_routes_need_a_choice() {
        let text = profile(
            "  routes:\n  - name: get\n    condition: {method: GET}\n    isRetryable: true\n  \
             - name: post\n    condition: {method: POST}\n",
        );
        let e = read(&text).unwrap_err();
        assert!(
            e.starts_with(
                "profile.yaml: spec.routes: several routes: choose the one herdsim's \
                           requests take with --select route=NAME (one of get, post)"
            ),
            "{e}"
        );
        let got = read_with(&text, &[("route", "post")]).unwrap();
        assert_eq!(got.value("max_attempts"), Some("1"));
        let got = read_with(&text, &[("route", "get")]).unwrap();
        assert_eq!(got.value("policy"), Some("no-backoff"));
        let e = read_with(&text, &[("route", "put")]).unwrap_err();
        assert!(
            e.contains("no route 'put': the profile has get, post"),
            "{e}"
        );
    }

    #[test]
    fn bad_and_unmodelled_fields_are_refused_with_their_path() {
        let err = |spec: &str| read(&profile(spec)).unwrap_err();
        let e = err(
            "  dstOverrides:\n  - {authority: orders-v2.shop.svc.cluster.local:80, weight: 1}\n",
        );
        assert!(
            e.contains("spec.dstOverrides: not modelled: a traffic split"),
            "{e}"
        );
        let e = err("  opaquePorts: ['5432']\n");
        assert!(
            e.contains("spec.opaquePorts: not modelled: opaque ports"),
            "{e}"
        );
        let e = err("  routes:\n  - name: get\n    condition: {}\n");
        assert!(
            e.contains("spec.routes[0].condition: a request match needs one of all, any"),
            "{e}"
        );
        let e = err("  routes:\n  - condition: {method: GET}\n");
        assert!(e.contains("spec.routes[0]: no name"), "{e}");
        let e = err(&format!(
            "{ROUTE}    responseClasses:\n    - condition: {{status: {{min: 50}}}}\n"
        ));
        assert!(e.contains("status.min: 50: expected 100 to 599"), "{e}");
        let e = err(&format!(
            "{ROUTE}    responseClasses:\n    - condition: {{status: {{min: 503, max: 500}}}}\n"
        ));
        assert!(e.contains("status: max is below min"), "{e}");
        let e = err(&format!("{ROUTE}    retries: 3\n"));
        assert!(e.contains("spec.routes[0].retries: unknown field"), "{e}");
        let e =
            err("  retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 10s, max: 3}\n");
        assert!(e.contains("spec.retryBudget.max: unknown field"), "{e}");
        let e =
            read("apiVersion: linkerd.io/v1alpha1\nkind: ServiceProfile\nspec: {}\n").unwrap_err();
        assert!(
            e.contains("apiVersion: \"linkerd.io/v1alpha1\": expected linkerd.io/v1alpha2"),
            "{e}"
        );
        // Empty lists are nothing to refuse.
        assert!(
            read(&profile(&format!(
                "  dstOverrides: []\n  opaquePorts: []\n{ROUTE}"
            )))
            .is_ok()
        );
    }

    #[test]
    fn a_list_is_selected_by_name() {
        let item = |name: &str, ratio: f64| {
            format!(
                "- apiVersion: linkerd.io/v1alpha2\n  kind: ServiceProfile\n  metadata: \
                 {{name: {name}}}\n  spec:\n    retryBudget: {{retryRatio: {ratio}, \
                 minRetriesPerSecond: 1, ttl: 10s}}\n    routes:\n    - name: r\n      \
                 condition: {{pathRegex: /}}\n      isRetryable: true\n"
            )
        };
        let text = format!("kind: List\nitems:\n{}{}", item("a", 0.5), item("b", 0.25));
        let e = read(&text).unwrap_err();
        assert!(
            e.contains("--select service-profile=NAME (one of a, b)"),
            "{e}"
        );
        let got = read_with(&text, &[("service-profile", "b")]).unwrap();
        assert_eq!(got.value("budget"), Some("tower:0.25,ttl:10s,min:1"));
    }
}
