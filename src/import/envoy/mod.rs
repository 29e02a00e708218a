//! Envoy v3 configuration (YAML or JSON, as Envoy reads it): a route
//! (`RouteConfiguration`, `VirtualHost` or `Route`) with its `retry_policy`,
//! `timeout` and `hedge_policy`, or a `Cluster` with its
//! `circuit_breakers`. Read as envoyproxy/envoy's code reads them
//! (`source/common/router/config_impl.cc` `RetryPolicyImpl`,
//! `source/common/router/retry_state_impl.cc`,
//! `source/common/upstream/upstream_impl.cc` `ResourceManagers::load`,
//! `source/common/upstream/resource_manager_impl.h`):
//!
//! - `num_retries` (default 1) counts retries: max_attempts is one more.
//!   No retry policy, or a `retry_on` with no condition, is one attempt.
//! - The route's `retry_policy` replaces the virtual host's entirely (not
//!   merged); so does `hedge_policy`.
//! - `retry_back_off`: `base_interval` (default 25 ms) and `max_interval`
//!   (default 10 × base) in whole ms, truncated, at least 1 ms: herdsim's
//!   `envoy` policy. A max below the base is refused, as Envoy refuses it.
//! - `per_try_timeout` is herdsim's per-attempt `timeout`; the route's
//!   `timeout` (default 15 s, `0s` none) spans all attempts and backoffs:
//!   herdsim's `deadline`. Both are whole ms, as Envoy keeps them.
//! - `hedge_policy.hedge_on_per_try_timeout: true` is herdsim's
//!   `hedge_on_timeout = "on"` ([`crate::model::timeout_hedging`]): at its
//!   per-try timeout an attempt is kept and a retry asked for whatever
//!   `retry_on` says (`router.cc` `onSoftPerTryTimeout`,
//!   `retry_state_impl.cc` `shouldHedgeRetryPerTryTimeout`). Without a
//!   `per_try_timeout` no per-try timer fires and it changes nothing, as in
//!   Envoy: read, and named in a warning.
//! - `retry_on`: herdsim's server answers a failure (default HTTP 503,
//!   `--select failure-status=`), a full queue's rejection (default 503,
//!   `--select rejected-status=`), or nothing before a per-attempt timeout.
//!   A per-try timeout is a local reset, which `wouldRetryFromReset`
//!   retries under `5xx`, `gateway-error` and `reset`. In front of a gRPC
//!   service (`--select upstream=grpc`, the default when `retry_on` names a
//!   gRPC condition) a failure is UNAVAILABLE and a rejection
//!   RESOURCE_EXHAUSTED in a 200 response, which the HTTP conditions do not
//!   match. Conditions for events herdsim's model never has (connect
//!   failures, refused streams, upstream rate-limit headers) are read and
//!   named in the rule as never firing.
//! - Circuit breakers are the thresholds of `--select priority=` (DEFAULT,
//!   a route's default): the first of that priority, else Envoy's defaults.
//!   A `retry_budget` with `budget_percent` or `min_retry_concurrency`
//!   replaces `max_retries` (default 3); an empty `retry_budget: {}` does
//!   not (`useRetryBudget` is false), as in Envoy. `max_requests` (default
//!   1024) is the `envoy-max-requests` throttle.
//!
//! Where it differs from Envoy, on purpose: unknown fields, and unknown
//! `retry_on` words (which Envoy's `parseRetryOn` passes over), are errors.
//! Refused as not modelled, with why: connection limits and pending
//! requests (`max_connections`, `max_pending_requests`, per-host limits:
//! herdsim has no connection pool), `rate_limited_retry_back_off`
//! (herdsim's server sends no reset headers), host predicates and
//! priorities (herdsim's service is one pool), request-header gates,
//! mirrors, rate limits, per-filter configs, idle and stream timeouts, and
//! `hedge_policy`'s `initial_requests` and `additional_request_chance`
//! (Envoy does not implement them). Fields that only route, rewrite, name
//! or observe a request are read and named in one warning as changing
//! nothing.
//!
//! Each object the format has is read in its own file: the document's
//! top level and virtual hosts, choosing the route, in
//! `route_configuration.rs`; the route and its action (timeout, hedging) in
//! `route.rs`; the retry policy in `retry_policy.rs`; the cluster's circuit
//! breakers in `cluster.rs`. What they share is here.

mod cluster;
mod retry_policy;
mod route;
mod route_configuration;

use serde_json::Value;

use super::durations::proto3;
use super::tree::{Node, from_yaml};
use super::{Context, Format, ImportError};
use crate::base::time::Micros;

/// The format.
pub const FORMAT: Format = Format {
    name: "Envoy v3 route or cluster",
    about: "YAML or JSON: a RouteConfiguration, VirtualHost or Route (retry_policy, timeout, \
            hedge_policy) or a Cluster (circuit_breakers)",
    selects: &[
        (
            "route",
            "the Envoy route, by name or path (virtual_hosts[0].routes[1]), whose retry policy applies",
        ),
        (
            "virtual-host",
            "the Envoy virtual host, by name, whose routes are read",
        ),
        (
            "cluster",
            "the Envoy cluster, by name, a cluster file must be",
        ),
        (
            "priority",
            "the circuit breaker thresholds that apply: DEFAULT (a route's default) or HIGH",
        ),
        (
            "upstream",
            "http or grpc: what herdsim's service answers Envoy (default grpc if retry_on names \
             a gRPC condition, else http)",
        ),
        (
            "failure-status",
            "the HTTP status of herdsim's server failure (default 503)",
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

const TYPE_PREFIX: &str = "type.googleapis.com/";
const ROUTE_CONFIGURATION: &str = "envoy.config.route.v3.RouteConfiguration";
const VIRTUAL_HOST: &str = "envoy.config.route.v3.VirtualHost";
const ROUTE: &str = "envoy.config.route.v3.Route";
const CLUSTER: &str = "envoy.config.cluster.v3.Cluster";

fn claims(value: &Value) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    if let Some(Value::String(t)) = object.get("@type") {
        return t.starts_with("type.googleapis.com/envoy.");
    }
    let has = |k: &str| object.contains_key(k);
    has("virtual_hosts")
        || has("domains")
        || (has("match") && (has("route") || has("redirect") || has("direct_response")))
        || has("circuit_breakers")
        || has("connect_timeout")
        || has("load_assignment")
        || has("lb_policy")
        || has("eds_cluster_config")
}

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    RouteConfiguration,
    VirtualHost,
    Route,
    Cluster,
}

fn kind_of(ctx: &Context<'_>, root: &Node<'_>) -> Result<Kind, ImportError> {
    if let Some(node) = root.get("@type") {
        let text = node.str(ctx)?;
        return match text.strip_prefix(TYPE_PREFIX) {
            Some(ROUTE_CONFIGURATION) => Ok(Kind::RouteConfiguration),
            Some(VIRTUAL_HOST) => Ok(Kind::VirtualHost),
            Some(ROUTE) => Ok(Kind::Route),
            Some(CLUSTER) => Ok(Kind::Cluster),
            _ => Err(ctx.error(
                &node,
                format!(
                    "not a type herdsim reads: expected {TYPE_PREFIX} followed by one of \
                     {ROUTE_CONFIGURATION}, {VIRTUAL_HOST}, {ROUTE}, {CLUSTER}"
                ),
            )),
        };
    }
    Ok(if root.get("virtual_hosts").is_some() {
        Kind::RouteConfiguration
    } else if root.get("domains").is_some() {
        Kind::VirtualHost
    } else if root.get("match").is_some() {
        Kind::Route
    } else {
        Kind::Cluster
    })
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    let kind = kind_of(ctx, root)?;
    ctx.set(
        "resource",
        "server",
        &[],
        "an Envoy route or cluster describes a proxy's calls to a service: herdsim's server model",
    )?;
    let mut inert = Vec::new();
    match kind {
        Kind::Cluster => cluster::read_cluster(ctx, root, &mut inert)?,
        _ => route_configuration::read_route_file(ctx, root, kind, &mut inert)?,
    }
    if !inert.is_empty() {
        let why = if kind == Kind::Cluster {
            "these choose hosts, connect to them or observe; herdsim's service is one pool of \
             workers without connections"
        } else {
            "these only rewrite, name or observe requests; herdsim's workload is the requests \
             that reach this route"
        };
        ctx.warn(format!(
            "{}: read but changes nothing ({why}): {}",
            ctx.file,
            inert.join(", ")
        ));
    }
    Ok(())
}

/// Checks `node`'s fields are `known`; notes the `inert` ones present.
fn fields(
    ctx: &Context<'_>,
    node: &Node<'_>,
    known: &[&str],
    inert_names: &[&str],
    inert: &mut Vec<String>,
) -> Result<(), ImportError> {
    node.only(ctx, known)?;
    for name in inert_names {
        if let Some(field) = node.get(name) {
            inert.push(field.path().to_string());
        }
    }
    Ok(())
}

/// Refuses each of `refused` that `node` has, saying why.
fn refuse(ctx: &Context<'_>, node: &Node<'_>, refused: &[(&str, &str)]) -> Result<(), ImportError> {
    for (name, why) in refused {
        if let Some(field) = node.get(name) {
            return Err(ctx.unsupported(&field, why));
        }
    }
    Ok(())
}

/// A duration as Envoy's proto JSON takes it ("0.025s"), in µs.
fn duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<Micros, ImportError> {
    proto3(node.str(ctx)?).map_err(|e| ctx.error(node, e))
}

/// A `google.protobuf.UInt32Value` (a number, or a string of one, as
/// protobuf's JSON reads it).
fn uint32(ctx: &Context<'_>, node: &Node<'_>) -> Result<u64, ImportError> {
    let n = node.u64(ctx, true)?;
    if n > u64::from(u32::MAX) {
        return Err(ctx.error(node, "out of range: expected 0 to 4294967295 (a uint32)"));
    }
    Ok(n)
}

fn name_of<'a>(ctx: &Context<'a>, node: &Node<'a>) -> Result<Option<&'a str>, ImportError> {
    node.get("name").map(|n| n.str(ctx)).transpose()
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};

    pub(super) fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("e.yaml", text, select)
    }

    pub(super) fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    pub(super) fn value(got: &Imported, key: &str) -> String {
        got.value(key).unwrap_or("-").to_string()
    }

    /// A route configuration with two routes, the first with its own retry
    /// policy, the second inheriting its virtual host's.
    pub(super) const ROUTE_CONFIG: &str = r#"
name: local_route
virtual_hosts:
- name: backend
  domains: ["*"]
  retry_policy:
    retry_on: "connect-failure"
    num_retries: 5
  routes:
  - name: checkout
    match: {prefix: "/checkout"}
    route:
      cluster: checkout
      timeout: 2s
      retry_policy:
        retry_on: "5xx,connect-failure"
        num_retries: 2
        per_try_timeout: 0.25s
        retry_back_off: {base_interval: 0.05s, max_interval: 1s}
  - name: catalog
    match: {prefix: "/"}
    route: {cluster: catalog}
"#;

    #[test]
    fn what_herdsim_cannot_model_is_refused_with_its_path_and_why() {
        let route = |policy: &str| {
            format!("match: {{prefix: /}}\nroute:\n  cluster: c\n  retry_policy:\n{policy}")
        };
        let cases = [
            (
                route("    retry_on: 5xx\n    retry_host_predicate: [{name: envoy.retry_host_predicates.previous_hosts}]\n"),
                "route.retry_policy.retry_host_predicate: not modelled",
            ),
            (
                route("    retry_on: 5xx\n    rate_limited_retry_back_off: {reset_headers: [{name: Retry-After}]}\n"),
                "route.retry_policy.rate_limited_retry_back_off: not modelled",
            ),
            (
                "match: {prefix: /}\nroute: {cluster: c, hedge_policy: {initial_requests: 2}}\n".to_string(),
                "route.hedge_policy.initial_requests: not modelled: Envoy does not implement it",
            ),
            (
                "name: b\nconnect_timeout: 1s\ncircuit_breakers: {thresholds: [{max_pending_requests: 10}]}\n".to_string(),
                "circuit_breakers.thresholds[0].max_pending_requests: not modelled: herdsim has no connection pool",
            ),
            (
                "name: b\nconnect_timeout: 1s\noutlier_detection: {}\n".to_string(),
                "outlier_detection: not modelled",
            ),
            (
                route("    retry_on: 5xx\n    num_retrys: 3\n"),
                "route.retry_policy.num_retrys: unknown field",
            ),
            (
                route("    retry_on: 5xx\n    per_try_timeout: 250ms\n"),
                "route.retry_policy.per_try_timeout: \"250ms\" is not a protobuf JSON duration",
            ),
            (
                route("    retry_on: 5xx\n    retry_back_off: {base_interval: 1s, max_interval: 0.5s}\n"),
                "max_interval: below base_interval (1000 ms): Envoy refuses it",
            ),
            (
                "name: b\nconnect_timeout: 1s\ncircuit_breakers: {thresholds: [{retry_budget: {budget_percent: {value: 120}}}]}\n".to_string(),
                "budget_percent.value: out of range: Envoy accepts 0 to 100",
            ),
        ];
        for (text, expected) in cases {
            let err = read(&text).unwrap_err();
            assert!(err.contains(expected), "{err}\nwanted: {expected}");
            assert!(err.starts_with("e.yaml: "), "{err}");
            assert!(!err.contains('\n'), "one line: {err}");
        }
    }

    #[test]
    fn a_typed_resource_is_read_by_its_type_and_json_is_yaml() {
        let json = r#"{"@type": "type.googleapis.com/envoy.config.route.v3.Route",
            "match": {"prefix": "/"}, "route": {"cluster": "c",
            "retry_policy": {"retry_on": "5xx", "num_retries": "4"}}}"#;
        assert_eq!(value(&read(json).unwrap(), "max_attempts"), "5");
        // A cluster is known by any of its usual fields, not only its breakers.
        let eds = read("name: b\ntype: EDS\neds_cluster_config: {service_name: b}\n").unwrap();
        assert_eq!(value(&eds, "budget"), "envoy-max-retries:3");
        let err = read(r#"{"@type": "type.googleapis.com/envoy.config.listener.v3.Listener"}"#)
            .unwrap_err();
        assert!(err.contains("not a type herdsim reads"), "{err}");
    }
}
