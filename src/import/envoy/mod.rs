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

use serde_json::Value;

use super::durations::{herdsim, proto3};
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

/// Envoy's route timeout when none is given (`RouteAction.timeout`).
const DEFAULT_ROUTE_TIMEOUT_MS: u64 = 15_000;
/// `upstream.base_retry_backoff_ms`'s default (`RetryStateImpl`).
const DEFAULT_BASE_MS: u64 = 25;
/// Envoy's circuit breaker defaults (`ResourceManagers::load`).
const DEFAULT_MAX_RETRIES: u64 = 3;
const DEFAULT_MAX_REQUESTS: u64 = 1024;
/// `RetryBudgetImpl::max`'s defaults.
const DEFAULT_BUDGET_PERCENT: f64 = 20.0;
const DEFAULT_MIN_RETRY_CONCURRENCY: u64 = 3;

const ROUTE_CONFIGURATION_FIELDS: [&str; 17] = [
    "@type",
    "name",
    "virtual_hosts",
    "vhds",
    "internal_only_headers",
    "response_headers_to_add",
    "response_headers_to_remove",
    "request_headers_to_add",
    "request_headers_to_remove",
    "most_specific_header_mutations_wins",
    "validate_clusters",
    "max_direct_response_body_size_bytes",
    "cluster_specifier_plugins",
    "request_mirror_policies",
    "ignore_port_in_host_matching",
    "ignore_path_parameters_in_path_matching",
    "typed_per_filter_config",
];
const ROUTE_CONFIGURATION_INERT: [&str; 11] = [
    "internal_only_headers",
    "response_headers_to_add",
    "response_headers_to_remove",
    "request_headers_to_add",
    "request_headers_to_remove",
    "most_specific_header_mutations_wins",
    "validate_clusters",
    "max_direct_response_body_size_bytes",
    "cluster_specifier_plugins",
    "ignore_port_in_host_matching",
    "ignore_path_parameters_in_path_matching",
];

const VIRTUAL_HOST_FIELDS: [&str; 24] = [
    "@type",
    "name",
    "domains",
    "routes",
    "matcher",
    "require_tls",
    "virtual_clusters",
    "rate_limits",
    "request_headers_to_add",
    "request_headers_to_remove",
    "response_headers_to_add",
    "response_headers_to_remove",
    "cors",
    "typed_per_filter_config",
    "include_request_attempt_count",
    "include_attempt_count_in_response",
    "retry_policy",
    "retry_policy_typed_config",
    "hedge_policy",
    "include_is_timeout_retry_header",
    "per_request_buffer_limit_bytes",
    "request_mirror_policies",
    "metadata",
    "request_body_buffer_limit",
];
const VIRTUAL_HOST_INERT: [&str; 13] = [
    "require_tls",
    "virtual_clusters",
    "request_headers_to_add",
    "request_headers_to_remove",
    "response_headers_to_add",
    "response_headers_to_remove",
    "cors",
    "include_request_attempt_count",
    "include_attempt_count_in_response",
    "include_is_timeout_retry_header",
    "per_request_buffer_limit_bytes",
    "metadata",
    "request_body_buffer_limit",
];

const ROUTE_FIELDS: [&str; 18] = [
    "@type",
    "name",
    "match",
    "route",
    "redirect",
    "direct_response",
    "filter_action",
    "non_forwarding_action",
    "metadata",
    "decorator",
    "typed_per_filter_config",
    "request_headers_to_add",
    "request_headers_to_remove",
    "response_headers_to_add",
    "response_headers_to_remove",
    "tracing",
    "per_request_buffer_limit_bytes",
    "stat_prefix",
];
const ROUTE_INERT: [&str; 9] = [
    "metadata",
    "decorator",
    "request_headers_to_add",
    "request_headers_to_remove",
    "response_headers_to_add",
    "response_headers_to_remove",
    "tracing",
    "per_request_buffer_limit_bytes",
    "stat_prefix",
];

const ROUTE_ACTION_FIELDS: [&str; 36] = [
    "cluster",
    "cluster_header",
    "weighted_clusters",
    "cluster_specifier_plugin",
    "inline_cluster_specifier_plugin",
    "cluster_not_found_response_code",
    "metadata_match",
    "prefix_rewrite",
    "regex_rewrite",
    "path_rewrite_policy",
    "host_rewrite_literal",
    "auto_host_rewrite",
    "host_rewrite_header",
    "host_rewrite_path_regex",
    "append_x_forwarded_host",
    "timeout",
    "idle_timeout",
    "early_data_policy",
    "retry_policy",
    "retry_policy_typed_config",
    "request_mirror_policies",
    "priority",
    "rate_limits",
    "include_vh_rate_limits",
    "hash_policy",
    "cors",
    "max_grpc_timeout",
    "grpc_timeout_offset",
    "upgrade_configs",
    "internal_redirect_policy",
    "internal_redirect_action",
    "max_internal_redirects",
    "hedge_policy",
    "max_stream_duration",
    "multiple_route_choices",
    "request_body_buffer_limit",
];
const ROUTE_ACTION_INERT: [&str; 21] = [
    "cluster_header",
    "cluster_specifier_plugin",
    "inline_cluster_specifier_plugin",
    "cluster_not_found_response_code",
    "metadata_match",
    "prefix_rewrite",
    "regex_rewrite",
    "path_rewrite_policy",
    "host_rewrite_literal",
    "auto_host_rewrite",
    "host_rewrite_header",
    "host_rewrite_path_regex",
    "append_x_forwarded_host",
    "early_data_policy",
    "hash_policy",
    "cors",
    "upgrade_configs",
    "internal_redirect_policy",
    "internal_redirect_action",
    "max_internal_redirects",
    "request_body_buffer_limit",
];

const RETRY_POLICY_FIELDS: [&str; 13] = [
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "per_try_idle_timeout",
    "retry_priority",
    "retry_host_predicate",
    "retry_options_predicates",
    "host_selection_retry_max_attempts",
    "retriable_status_codes",
    "retry_back_off",
    "rate_limited_retry_back_off",
    "retriable_headers",
    "retriable_request_headers",
];

const CLUSTER_FIELDS: [&str; 58] = [
    "@type",
    "name",
    "alt_stat_name",
    "type",
    "cluster_type",
    "eds_cluster_config",
    "connect_timeout",
    "per_connection_buffer_limit_bytes",
    "lb_policy",
    "load_assignment",
    "health_checks",
    "max_requests_per_connection",
    "circuit_breakers",
    "upstream_http_protocol_options",
    "common_http_protocol_options",
    "http_protocol_options",
    "http2_protocol_options",
    "typed_extension_protocol_options",
    "dns_refresh_rate",
    "dns_jitter",
    "dns_failure_refresh_rate",
    "respect_dns_ttl",
    "dns_lookup_family",
    "dns_resolvers",
    "use_tcp_for_dns_lookups",
    "dns_resolution_config",
    "typed_dns_resolver_config",
    "wait_for_warm_on_init",
    "outlier_detection",
    "cleanup_interval",
    "upstream_bind_config",
    "lb_subset_config",
    "ring_hash_lb_config",
    "maglev_lb_config",
    "original_dst_lb_config",
    "least_request_lb_config",
    "round_robin_lb_config",
    "common_lb_config",
    "transport_socket",
    "metadata",
    "protocol_selection",
    "upstream_connection_options",
    "close_connections_on_host_health_failure",
    "ignore_health_on_host_removal",
    "filters",
    "load_balancing_policy",
    "lrs_server",
    "lrs_report_endpoint_metrics",
    "track_timeout_budgets",
    "upstream_config",
    "track_cluster_stats",
    "preconnect_policy",
    "connection_pool_per_downstream_connection",
    "transport_socket_matches",
    "shared_pool",
    "http_filters",
    "transport_socket_matcher",
    "drop_overloads",
];
/// Cluster fields herdsim refuses, and why.
const CLUSTER_REFUSED: [(&str, &str); 3] = [
    (
        "outlier_detection",
        "ejecting failing hosts needs hosts; herdsim's service is one pool of workers",
    ),
    ("max_requests_per_connection", "herdsim has no connections"),
    ("preconnect_policy", "herdsim has no connections"),
];

const THRESHOLDS_FIELDS: [&str; 9] = [
    "priority",
    "max_connections",
    "max_pending_requests",
    "max_requests",
    "max_retries",
    "retry_budget",
    "track_remaining",
    "max_connection_pools",
    "resource_limit_configs",
];

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
        Kind::Cluster => cluster(ctx, root, &mut inert)?,
        _ => route_file(ctx, root, kind, &mut inert)?,
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

/// A route and the virtual host it is in (none for a Route file).
struct Chosen<'a> {
    vhost: Option<Node<'a>>,
    route: Node<'a>,
}

fn route_file<'a>(
    ctx: &Context<'a>,
    root: &Node<'a>,
    kind: Kind,
    inert: &mut Vec<String>,
) -> Result<(), ImportError> {
    let answers = answers(ctx)?;
    let mut vhosts = Vec::new();
    match kind {
        Kind::RouteConfiguration => {
            fields(
                ctx,
                root,
                &ROUTE_CONFIGURATION_FIELDS,
                &ROUTE_CONFIGURATION_INERT,
                inert,
            )?;
            refuse(
                ctx,
                root,
                &[
                    (
                        "vhds",
                        "virtual hosts sent by a management server are not in the file",
                    ),
                    (
                        "request_mirror_policies",
                        "mirrored requests are load herdsim's server does not model",
                    ),
                    (
                        "typed_per_filter_config",
                        "per-route filters (faults, rate limits) are filters herdsim does not model",
                    ),
                ],
            )?;
            let list = root.get("virtual_hosts").ok_or_else(|| {
                ctx.error(
                    root,
                    "no virtual_hosts: a RouteConfiguration routes through them",
                )
            })?;
            vhosts = list.items(ctx)?;
        }
        Kind::VirtualHost => vhosts.push(root.clone()),
        _ => {}
    }
    let chosen = if kind == Kind::Route {
        Chosen {
            vhost: None,
            route: root.clone(),
        }
    } else {
        choose_route(ctx, &vhosts, inert)?
    };
    route(ctx, &chosen, answers, inert)
}

fn name_of<'a>(ctx: &Context<'a>, node: &Node<'a>) -> Result<Option<&'a str>, ImportError> {
    node.get("name").map(|n| n.str(ctx)).transpose()
}

/// The route whose retry policy applies: `--select route=` by name or path
/// (in `--select virtual-host=`'s virtual host, if given), else the only one.
fn choose_route<'a>(
    ctx: &Context<'a>,
    vhosts: &[Node<'a>],
    inert: &mut Vec<String>,
) -> Result<Chosen<'a>, ImportError> {
    let wanted_vhost = ctx.selection("virtual-host");
    let mut vhost_names = Vec::new();
    let mut candidates = Vec::new();
    for vhost in vhosts {
        fields(ctx, vhost, &VIRTUAL_HOST_FIELDS, &VIRTUAL_HOST_INERT, inert)?;
        refuse(ctx, vhost, &vhost_refused())?;
        let name = name_of(ctx, vhost)?.ok_or_else(|| {
            ctx.error_at(
                &format!("{}.name", vhost.path()),
                "missing: Envoy requires a virtual host's name",
            )
        })?;
        vhost_names.push(name);
        if wanted_vhost.is_some_and(|w| w != name) {
            continue;
        }
        let routes = vhost.get("routes").ok_or_else(|| {
            ctx.error(
                vhost,
                "no routes: herdsim reads the routes list (not a matcher tree)",
            )
        })?;
        for route in routes.items(ctx)? {
            candidates.push(Chosen {
                vhost: Some(vhost.clone()),
                route,
            });
        }
    }
    if let Some(w) = wanted_vhost
        && !vhost_names.contains(&w)
    {
        return Err(ctx.error_at(
            "virtual_hosts",
            format!(
                "no virtual host named {w}: the names are {}",
                vhost_names.join(", ")
            ),
        ));
    }
    let label = |c: &Chosen<'a>| -> Result<String, ImportError> {
        Ok(match name_of(ctx, &c.route)? {
            Some(name) => format!("{name} ({})", c.route.path()),
            None => c.route.path().to_string(),
        })
    };
    let mut labels = Vec::new();
    for c in &candidates {
        labels.push(label(c)?);
    }
    let pick = match ctx.selection("route") {
        Some(wanted) => {
            let mut found = None;
            for (i, c) in candidates.iter().enumerate() {
                if name_of(ctx, &c.route)? == Some(wanted) || c.route.path() == wanted {
                    found = Some(i);
                    break;
                }
            }
            found.ok_or_else(|| {
                ctx.error_at(
                    "virtual_hosts",
                    format!("no route {wanted}: the routes are {}", labels.join(", ")),
                )
            })?
        }
        None if candidates.len() == 1 => 0,
        None if candidates.is_empty() => {
            return Err(ctx.error_at("virtual_hosts", "no route to read"));
        }
        None => {
            return Err(ctx.error_at(
                "virtual_hosts",
                format!(
                    "several routes, and Envoy chooses one per request by its match: choose one \
                     with --select route=NAME (or its path); the routes are {}",
                    labels.join(", ")
                ),
            ));
        }
    };
    ctx.chose(format!("route {}", labels[pick]));
    Ok(candidates.swap_remove(pick))
}

fn vhost_refused() -> [(&'static str, &'static str); 5] {
    [
        (
            "matcher",
            "a matcher tree chooses routes by request attributes herdsim's requests do not have",
        ),
        (
            "rate_limits",
            "rate limits need Envoy's rate limit service, which herdsim does not model",
        ),
        (
            "retry_policy_typed_config",
            "a retry policy extension is code herdsim does not have",
        ),
        (
            "request_mirror_policies",
            "mirrored requests are load herdsim's server does not model",
        ),
        (
            "typed_per_filter_config",
            "per-route filters (faults, rate limits) are filters herdsim does not model",
        ),
    ]
}

fn route(
    ctx: &Context<'_>,
    chosen: &Chosen<'_>,
    answers: Answers,
    inert: &mut Vec<String>,
) -> Result<(), ImportError> {
    let route = &chosen.route;
    fields(ctx, route, &ROUTE_FIELDS, &ROUTE_INERT, inert)?;
    refuse(
        ctx,
        route,
        &[
            (
                "typed_per_filter_config",
                "per-route filters (faults, rate limits) are filters herdsim does not model",
            ),
            ("redirect", "a redirect answers without calling the service"),
            (
                "direct_response",
                "a direct response answers without calling the service",
            ),
            (
                "filter_action",
                "a filter action is code herdsim does not have (Envoy does not implement it)",
            ),
            (
                "non_forwarding_action",
                "a non-forwarding action does not call the service",
            ),
        ],
    )?;
    let action = route.get("route").ok_or_else(|| {
        ctx.error(
            route,
            "no route action: herdsim reads routes that forward to a cluster",
        )
    })?;
    fields(
        ctx,
        &action,
        &ROUTE_ACTION_FIELDS,
        &ROUTE_ACTION_INERT,
        inert,
    )?;
    refuse(
        ctx,
        &action,
        &[
            (
                "weighted_clusters",
                "a split over several clusters, each with its own circuit breakers; herdsim models one service",
            ),
            (
                "idle_timeout",
                "a stream idle timer herdsim does not model (it is not a per-attempt timeout)",
            ),
            (
                "retry_policy_typed_config",
                "a retry policy extension is code herdsim does not have",
            ),
            (
                "request_mirror_policies",
                "mirrored requests are load herdsim's server does not model",
            ),
            (
                "rate_limits",
                "rate limits need Envoy's rate limit service, which herdsim does not model",
            ),
            (
                "include_vh_rate_limits",
                "rate limits need Envoy's rate limit service, which herdsim does not model",
            ),
            (
                "max_grpc_timeout",
                "the timeout then comes from the request's grpc-timeout header, which herdsim's \
                 requests do not carry",
            ),
            (
                "grpc_timeout_offset",
                "the timeout then comes from the request's grpc-timeout header, which herdsim's \
                 requests do not carry",
            ),
            (
                "max_stream_duration",
                "a stream duration limit herdsim does not model",
            ),
            (
                "multiple_route_choices",
                "several route choices herdsim does not model",
            ),
        ],
    )?;
    if let Some(cluster) = action.get("cluster") {
        ctx.chose(format!("to cluster {}", cluster.str(ctx)?));
    }
    if let Some(priority) = action.get("priority") {
        let p = priority.str(ctx)?;
        match p {
            "DEFAULT" => {}
            "HIGH" => ctx.warn(format!(
                "{}: {}: HIGH: read the cluster's thresholds with --select priority=HIGH",
                ctx.file,
                priority.path()
            )),
            _ => return Err(ctx.error(&priority, "expected DEFAULT or HIGH")),
        }
    }
    route_timeout(ctx, &action)?;

    // The route's policies replace the virtual host's entirely.
    let pick = |key: &str| {
        action
            .get(key)
            .or_else(|| chosen.vhost.as_ref().and_then(|v| v.get(key)))
    };
    let hedge = match pick("hedge_policy") {
        Some(hedge) => hedge_policy(ctx, &hedge)?,
        None => None,
    };
    // The one not applied is still Envoy's config: its fields must be known.
    if action.get("retry_policy").is_some()
        && let Some(unused) = chosen.vhost.as_ref().and_then(|v| v.get("retry_policy"))
    {
        unused.only(ctx, &RETRY_POLICY_FIELDS)?;
    }
    let per_try = match pick("retry_policy") {
        Some(policy) => retry_policy(ctx, &policy, answers, hedge.is_some())?,
        None => {
            ctx.set(
                "max_attempts",
                "1",
                &[action.path()],
                "no retry_policy on the route or its virtual host: Envoy makes one attempt",
            )?;
            None
        }
    };
    match (hedge, per_try) {
        (Some(hedge), Some(per_try)) => ctx.set(
            "hedge_on_timeout",
            "on",
            &[&hedge, &per_try],
            "Envoy keeps an attempt past its per_try_timeout, its reply still able to win \
             (onSoftPerTryTimeout), and asks for a retry at once whatever retry_on says \
             (shouldHedgeRetryPerTryTimeout): it spends a num_retries and the max_retries or \
             budget's room, and goes after the backoff; the first success wins and the others \
             are reset (herdsim's server still serves them)",
        ),
        (Some(hedge), None) => {
            ctx.warn(format!(
                "{}: {hedge}: read but changes nothing: without a per_try_timeout no per-try \
                 timer fires, so Envoy never hedges",
                ctx.file
            ));
            Ok(())
        }
        (None, _) => Ok(()),
    }
}

fn route_timeout(ctx: &Context<'_>, action: &Node<'_>) -> Result<(), ImportError> {
    let (ms, from, given) = match action.get("timeout") {
        Some(node) => (duration(ctx, &node)? / 1_000, node.path().to_string(), true),
        None => (DEFAULT_ROUTE_TIMEOUT_MS, action.path().to_string(), false),
    };
    if ms == 0 {
        // Nothing to set: herdsim's deadline is absent by default.
        return Ok(());
    }
    let rule = if given {
        format!(
            "the route's timeout, {ms} ms, spans every attempt and backoff: no retry starts after \
             it, and the request ends (504) when it passes"
        )
    } else {
        "no timeout: Envoy's route default of 15 s spans every attempt and backoff: no retry \
         starts after it, and the request ends (504) when it passes"
            .to_string()
    };
    ctx.set("deadline", herdsim(ms * 1_000), &[&from], rule)
}

/// Reads `hedge_policy`: the path of `hedge_on_per_try_timeout` if it is
/// true.
fn hedge_policy(ctx: &Context<'_>, node: &Node<'_>) -> Result<Option<String>, ImportError> {
    node.only(
        ctx,
        &[
            "initial_requests",
            "additional_request_chance",
            "hedge_on_per_try_timeout",
        ],
    )?;
    for key in ["initial_requests", "additional_request_chance"] {
        if let Some(field) = node.get(key) {
            return Err(ctx.unsupported(
                &field,
                "Envoy does not implement it (not-implemented-hide in its API)",
            ));
        }
    }
    match node.get("hedge_on_per_try_timeout") {
        Some(field) if field.bool(ctx, false)? => Ok(Some(field.path().to_string())),
        _ => Ok(None),
    }
}

/// What herdsim's server answers, as Envoy's `retry_on` sees it.
struct Answers {
    /// `--select upstream=`: Some(true) for grpc; None to decide by `retry_on`.
    upstream_grpc: Option<bool>,
    /// Decided for this policy.
    grpc: bool,
    failure_status: u64,
    rejected_status: u64,
}

/// `retry_on`'s words, as `RetryStateImpl::parseRetryOn` and
/// `parseRetryGrpcOn` know them.
const HTTP_CONDITIONS: [&str; 11] = [
    "5xx",
    "gateway-error",
    "reset",
    "reset-before-request",
    "connect-failure",
    "envoy-ratelimited",
    "retriable-4xx",
    "refused-stream",
    "retriable-status-codes",
    "retriable-headers",
    "http3-post-connect-failure",
];
const GRPC_CONDITIONS: [&str; 5] = [
    "cancelled",
    "deadline-exceeded",
    "internal",
    "resource-exhausted",
    "unavailable",
];

fn status_selection(ctx: &Context<'_>, kind: &str) -> Result<u64, ImportError> {
    match ctx.selection(kind) {
        None => Ok(503),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|s| (400..600).contains(s))
            .ok_or_else(|| {
                ctx.error_at(
                    &format!("--select {kind}"),
                    "expected an HTTP error status, 400 to 599",
                )
            }),
    }
}

/// The `--select` choices of what herdsim's server answers, asked of every
/// route file (so a choice is never refused as unasked).
fn answers(ctx: &Context<'_>) -> Result<Answers, ImportError> {
    Ok(Answers {
        upstream_grpc: match ctx.selection("upstream") {
            None => None,
            Some("grpc") => Some(true),
            Some("http") => Some(false),
            Some(_) => {
                return Err(ctx.error_at("--select upstream", "expected http or grpc"));
            }
        },
        grpc: false,
        failure_status: status_selection(ctx, "failure-status")?,
        rejected_status: status_selection(ctx, "rejected-status")?,
    })
}

/// Reads `retry_policy`: the path of its `per_try_timeout` if it sets one.
/// `hedged`: `hedge_on_per_try_timeout` is true, so the timeout keeps its
/// attempt.
fn retry_policy(
    ctx: &Context<'_>,
    policy: &Node<'_>,
    mut answers: Answers,
    hedged: bool,
) -> Result<Option<String>, ImportError> {
    policy.only(ctx, &RETRY_POLICY_FIELDS)?;
    refuse(
        ctx,
        policy,
        &[
            (
                "per_try_idle_timeout",
                "an idle timer per attempt herdsim does not model (per_try_timeout is)",
            ),
            (
                "retry_priority",
                "retries spread over host priorities; herdsim's service is one pool of workers",
            ),
            (
                "retry_host_predicate",
                "retries choose other hosts; herdsim's service is one pool of workers",
            ),
            (
                "retry_options_predicates",
                "a retry options extension is code herdsim does not have",
            ),
            (
                "host_selection_retry_max_attempts",
                "host reselection needs hosts; herdsim's service is one pool of workers",
            ),
            (
                "rate_limited_retry_back_off",
                "it waits as a reply's Retry-After or X-RateLimit-Reset header says, and \
                 herdsim's server model sends no such header",
            ),
            (
                "retriable_headers",
                "herdsim's replies carry no headers to match",
            ),
            (
                "retriable_request_headers",
                "herdsim's requests carry no headers to match, so whether they allow retries is \
                 not known",
            ),
        ],
    )?;

    // num_retries counts retries.
    let (retries, retries_from, retries_rule) = match policy.get("num_retries") {
        Some(node) => {
            let n = uint32(ctx, &node)?;
            (
                n,
                node.path().to_string(),
                format!(
                    "num_retries {n} → max_attempts {}: Envoy counts retries, herdsim attempts",
                    n + 1
                ),
            )
        }
        None => (
            1,
            policy.path().to_string(),
            "no num_retries: Envoy's default of 1 retry → max_attempts 2".to_string(),
        ),
    };

    let (words, on_node) = match policy.get("retry_on") {
        Some(node) => {
            let text = node.str(ctx)?;
            let mut words = Vec::new();
            for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                if !HTTP_CONDITIONS.contains(&word) && !GRPC_CONDITIONS.contains(&word) {
                    return Err(ctx.error(
                        &node,
                        format!(
                            "'{word}' is not a retry condition (Envoy would pass over it): \
                             expected words joined by commas among {}, {}",
                            HTTP_CONDITIONS.join(", "),
                            GRPC_CONDITIONS.join(", ")
                        ),
                    ));
                }
                words.push(word);
            }
            (words, Some(node))
        }
        None => (Vec::new(), None),
    };
    answers.grpc = answers
        .upstream_grpc
        .unwrap_or_else(|| words.iter().any(|w| GRPC_CONDITIONS.contains(w)));
    let codes = match policy.get("retriable_status_codes") {
        Some(node) => {
            let mut codes = Vec::new();
            for item in node.items(ctx)? {
                let code = uint32(ctx, &item)?;
                codes.push(code);
            }
            if !words.contains(&"retriable-status-codes") {
                ctx.warn(format!(
                    "{}: {}: read but changes nothing: Envoy consults it only when retry_on \
                     names retriable-status-codes",
                    ctx.file,
                    node.path()
                ));
            }
            Some((node, codes))
        }
        None => None,
    };

    match &on_node {
        Some(node) if !words.is_empty() => {
            ctx.set(
                "max_attempts",
                (retries + 1).to_string(),
                &[&retries_from],
                retries_rule,
            )?;
            let codes = codes.as_ref().map(|(n, c)| (n, c.as_slice()));
            retry_on(ctx, node, &words, &answers, codes)?;
        }
        _ => {
            // RetryStateImpl::create makes no retry state without a
            // condition (its per-try timeout still applies).
            let from = on_node.as_ref().map_or(policy.path(), |n| n.path());
            ctx.set(
                "max_attempts",
                "1",
                &[from],
                "retry_on names no condition: Envoy makes one attempt",
            )?;
        }
    }

    // The backoff.
    let (base_ms, max_ms, paths, rule) = match policy.get("retry_back_off") {
        Some(back_off) => {
            back_off.only(ctx, &["base_interval", "max_interval"])?;
            let base_node = back_off.get("base_interval").ok_or_else(|| {
                ctx.error_at(
                    &format!("{}.base_interval", back_off.path()),
                    "missing: Envoy requires it in a retry_back_off",
                )
            })?;
            let base_us = duration(ctx, &base_node)?;
            if base_us == 0 {
                return Err(ctx.error(&base_node, "must be above 0 (Envoy refuses 0s)"));
            }
            let base_ms = (base_us / 1_000).max(1);
            let (max_ms, mut paths) = match back_off.get("max_interval") {
                Some(node) => {
                    let us = duration(ctx, &node)?;
                    if us == 0 {
                        return Err(ctx.error(&node, "must be above 0 (Envoy refuses 0s)"));
                    }
                    let ms = (us / 1_000).max(1);
                    if ms < base_ms {
                        return Err(ctx.error(
                            &node,
                            format!(
                                "below base_interval ({base_ms} ms): Envoy refuses it (max_interval \
                                 must be at least base_interval)"
                            ),
                        ));
                    }
                    (ms, vec![node.path().to_string()])
                }
                None => (base_ms * 10, Vec::new()),
            };
            paths.insert(0, base_node.path().to_string());
            let rounded = base_us % 1_000 != 0 || base_us < 1_000;
            let rule = (
                format!(
                    "base_interval → base {base_ms} ms{}",
                    if rounded {
                        " (Envoy keeps whole ms, at least 1)"
                    } else {
                        ""
                    }
                ),
                if back_off.get("max_interval").is_none() {
                    format!("no max_interval: Envoy's default 10 × base → cap {max_ms} ms")
                } else {
                    format!("max_interval → cap {max_ms} ms, which bounds the doubling ceiling")
                },
            );
            (base_ms, max_ms, paths, rule)
        }
        None => (
            DEFAULT_BASE_MS,
            DEFAULT_BASE_MS * 10,
            vec![policy.path().to_string()],
            (
                "no retry_back_off: Envoy's default base 25 ms".to_string(),
                "no retry_back_off: Envoy's default cap 10 × base = 250 ms".to_string(),
            ),
        ),
    };
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    ctx.set(
        "policy",
        "envoy",
        &paths,
        "retry k waits U{0, …, n_k − 1} ms with n_1 = base, doubling while below ⌊cap/2⌋, \
         then the cap (JitteredExponentialBackOffStrategy)",
    )?;
    ctx.set("base", herdsim(base_ms * 1_000), &paths[..1], rule.0)?;
    ctx.set(
        "cap",
        herdsim(max_ms * 1_000),
        &paths[paths.len() - 1..],
        rule.1,
    )?;

    if let Some(node) = policy.get("per_try_timeout") {
        let ms = duration(ctx, &node)? / 1_000;
        if ms > 0 {
            let what = if hedged {
                "Envoy keeps the attempt: hedge_on_per_try_timeout"
            } else {
                "Envoy resets the upstream stream; herdsim's server keeps working on it"
            };
            ctx.set(
                "timeout",
                herdsim(ms * 1_000),
                &[node.path()],
                format!("per_try_timeout → timeout {ms} ms per attempt ({what})"),
            )?;
            return Ok(Some(node.path().to_string()));
        }
    }
    Ok(None)
}

/// `retry_on` (and `retriable_status_codes`) as herdsim's `retry_on`.
fn retry_on(
    ctx: &Context<'_>,
    node: &Node<'_>,
    words: &[&str],
    answers: &Answers,
    codes: Option<(&Node<'_>, &[u64])>,
) -> Result<(), ImportError> {
    let has = |w: &str| words.contains(&w);
    // A per-try timeout is a local reset (router.cc onPerTryTimeout), which
    // wouldRetryFromReset retries under 5xx, gateway-error and reset.
    let timeout = has("5xx") || has("gateway-error") || has("reset");
    let http_retries = |status: u64| -> bool {
        (has("5xx") && (500..600).contains(&status))
            || (has("gateway-error") && (502..=504).contains(&status))
            || (has("retriable-4xx") && status == 409)
            || (has("retriable-status-codes")
                && codes.is_some_and(|(_, codes)| codes.contains(&status)))
    };
    let (failure, rejected, answer_text) = if answers.grpc {
        (
            has("unavailable"),
            has("resource-exhausted"),
            "a gRPC service: herdsim's server failure is UNAVAILABLE, a full queue's rejection \
             RESOURCE_EXHAUSTED (in 200 responses, which 5xx and gateway-error do not match)"
                .to_string(),
        )
    } else {
        (
            http_retries(answers.failure_status),
            http_retries(answers.rejected_status),
            format!(
                "herdsim's server failure is HTTP {}, a full queue's rejection {}",
                answers.failure_status, answers.rejected_status
            ),
        )
    };
    let mut retried = Vec::new();
    if failure {
        retried.push("failure");
    }
    if rejected {
        retried.push("rejected");
    }
    if timeout {
        retried.push("timeout");
    }
    let mut rule = format!(
        "{answer_text}; a per-try timeout is a reset, retried under 5xx, gateway-error or reset; \
         retried: {}",
        if retried.is_empty() {
            "nothing".to_string()
        } else {
            retried.join(", ")
        }
    );
    let never: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| {
            [
                "reset-before-request",
                "connect-failure",
                "envoy-ratelimited",
                "refused-stream",
                "retriable-headers",
                "http3-post-connect-failure",
                "cancelled",
                "deadline-exceeded",
                "internal",
            ]
            .contains(w)
        })
        .collect();
    if !never.is_empty() {
        rule += &format!(
            " ({} never fire: herdsim's model has no such event)",
            never.join(", ")
        );
    }
    let mut from = vec![node.path().to_string()];
    if let Some((codes_node, codes)) = codes
        && has("retriable-status-codes")
    {
        let answered = [answers.failure_status, answers.rejected_status];
        let others: Vec<String> = codes
            .iter()
            .filter(|c| answers.grpc || !answered.contains(c))
            .map(u64::to_string)
            .collect();
        if !others.is_empty() {
            rule += &format!(
                " (status {} never comes from herdsim's server)",
                others.join(", ")
            );
        }
        from.push(codes_node.path().to_string());
    }
    let value = if retried.is_empty() {
        "none".to_string()
    } else {
        retried.join("+")
    };
    let from: Vec<&str> = from.iter().map(String::as_str).collect();
    ctx.set("retry_on", value, &from, rule)
}

fn cluster(ctx: &Context<'_>, root: &Node<'_>, inert: &mut Vec<String>) -> Result<(), ImportError> {
    root.only(ctx, &CLUSTER_FIELDS)?;
    refuse(ctx, root, &CLUSTER_REFUSED)?;
    let name = name_of(ctx, root)?;
    if let Some(wanted) = ctx.selection("cluster")
        && Some(wanted) != name
    {
        return Err(ctx.error_at(
            "name",
            format!(
                "the file's cluster is {}, not {wanted}",
                name.unwrap_or("unnamed")
            ),
        ));
    }
    ctx.chose(format!("cluster {}", name.unwrap_or("(unnamed)")));
    for (field, _) in root.entries(ctx)? {
        if !["@type", "name", "alt_stat_name", "circuit_breakers"].contains(&field) {
            inert.push(field.to_string());
        }
    }
    let priority = match ctx.selection("priority") {
        None | Some("DEFAULT") => "DEFAULT",
        Some("HIGH") => "HIGH",
        Some(_) => return Err(ctx.error_at("--select priority", "expected DEFAULT or HIGH")),
    };
    let mut threshold = None;
    let breakers = root.get("circuit_breakers");
    if let Some(breakers) = &breakers {
        breakers.only(ctx, &["thresholds", "per_host_thresholds"])?;
        if let Some(per_host) = breakers.get("per_host_thresholds") {
            return Err(ctx.unsupported(
                &per_host,
                "per-host connection limits need hosts and connections; herdsim's service is one \
                 pool of workers without connections",
            ));
        }
        if let Some(list) = breakers.get("thresholds") {
            for item in list.items(ctx)? {
                item.only(ctx, &THRESHOLDS_FIELDS)?;
                let p = match item.get("priority") {
                    Some(node) => match node.str(ctx)? {
                        p @ ("DEFAULT" | "HIGH") => p,
                        _ => return Err(ctx.error(&node, "expected DEFAULT or HIGH")),
                    },
                    None => "DEFAULT",
                };
                // ResourceManagers::load: the first of the priority applies.
                if p == priority && threshold.is_none() {
                    threshold = Some(item);
                }
            }
        }
    }
    let base_path = breakers
        .as_ref()
        .map_or_else(|| "(the document)".to_string(), |b| b.path().to_string());
    let at = threshold
        .as_ref()
        .map_or(base_path.clone(), |t| t.path().to_string());
    ctx.chose(format!("{priority} thresholds ({at})"));
    let field = |key: &str| threshold.as_ref().and_then(|t| t.get(key));
    for key in ["max_connections", "max_pending_requests"] {
        if let Some(node) = field(key) {
            return Err(ctx.unsupported(
                &node,
                "herdsim has no connection pool: every attempt goes to the server at once, none \
                 waits for a connection, so a limit on connections or pending requests has \
                 nothing to count (max_requests is modelled)",
            ));
        }
    }
    if let Some(node) = field("resource_limit_configs") {
        return Err(ctx.unsupported(
            &node,
            "a resource limit extension is code herdsim does not have",
        ));
    }
    for key in ["track_remaining", "max_connection_pools"] {
        if let Some(node) = field(key) {
            inert.push(node.path().to_string());
        }
    }

    // max_requests: the throttle.
    let (max_requests, from, rule) = match field("max_requests") {
        Some(node) => {
            let n = uint32(ctx, &node)?;
            (n, node.path().to_string(), format!("max_requests {n}"))
        }
        None => (
            DEFAULT_MAX_REQUESTS,
            at.clone(),
            "no max_requests: Envoy's default 1024".to_string(),
        ),
    };
    ctx.set(
        "throttle",
        format!("envoy-max-requests:{max_requests}"),
        &[&from],
        format!(
            "{rule}: an attempt that finds that many in flight fails at once with a local 503 \
             and is not retried (upstream_rq_pending_overflow)"
        ),
    )?;

    // The retry budget replaces max_retries when it sets either value.
    let budget = field("retry_budget");
    let mut budget_values = None;
    if let Some(node) = &budget {
        node.only(
            ctx,
            &["budget_percent", "min_retry_concurrency", "budget_interval"],
        )?;
        if let Some(interval) = node.get("budget_interval")
            && duration(ctx, &interval)? != 0
        {
            return Err(ctx.unsupported(
                &interval,
                "a budget over requests in a window (budget_interval) is not modelled; 0s, the \
                 in-flight budget, is",
            ));
        }
        let percent = match node.get("budget_percent") {
            Some(p) => {
                p.only(ctx, &["value"])?;
                let value = p.get("value").ok_or_else(|| {
                    ctx.error(&p, "missing value: a Percent is {value: 0 to 100}")
                })?;
                let v = value.f64(ctx, false)?;
                if !(0.0..=100.0).contains(&v) {
                    return Err(ctx.error(&value, "out of range: Envoy accepts 0 to 100"));
                }
                Some((v, value.path().to_string()))
            }
            None => None,
        };
        let min = match node.get("min_retry_concurrency") {
            Some(m) => Some((uint32(ctx, &m)?, m.path().to_string())),
            None => None,
        };
        if percent.is_some() || min.is_some() {
            budget_values = Some((percent, min));
        } else {
            ctx.warn(format!(
                "{}: {}: empty, so Envoy does not use a budget (useRetryBudget is false): \
                 max_retries applies",
                ctx.file,
                node.path()
            ));
        }
    }
    match budget_values {
        Some((percent, min)) => {
            let p = percent.as_ref().map_or(DEFAULT_BUDGET_PERCENT, |(v, _)| *v);
            let m = min
                .as_ref()
                .map_or(DEFAULT_MIN_RETRY_CONCURRENCY, |(v, _)| *v);
            let mut from: Vec<String> = Vec::new();
            from.extend(percent.map(|(_, p)| p));
            from.extend(min.map(|(_, p)| p));
            let from: Vec<&str> = from.iter().map(String::as_str).collect();
            let mut rule = format!(
                "retry_budget {p}% with a minimum of {m}: a retry may start while the retries \
                 outstanding (from the decision, through the backoff) are fewer than \
                 max({m}, ⌊{p}% × attempts in flight⌋); it replaces max_retries"
            );
            if field("max_retries").is_some() {
                rule += " (max_retries is then not used, as in Envoy)";
            }
            ctx.set(
                "budget",
                format!("envoy:{},min:{m}", p / 100.0),
                &from,
                rule,
            )?;
        }
        None => {
            let (n, from, what) = match field("max_retries") {
                Some(node) => (uint32(ctx, &node)?, node.path().to_string(), "max_retries"),
                None => (DEFAULT_MAX_RETRIES, at, "no max_retries: Envoy's default"),
            };
            ctx.set(
                "budget",
                format!("envoy-max-retries:{n}"),
                &[&from],
                format!(
                    "{what} {n}: at most {n} retries outstanding at once over the cluster (from \
                     the decision, through the backoff), however many requests"
                ),
            )?;
        }
    }
    ctx.warn(format!(
        "{}: circuit breakers are per Envoy: herdsim keeps one for all sources (one proxy in \
         front of them); set fleet = N for N sources behind each Envoy (fleet = 1: a sidecar each)",
        ctx.file
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};

    fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("e.yaml", text, select)
    }

    fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    fn value(got: &Imported, key: &str) -> String {
        got.value(key).unwrap_or("-").to_string()
    }

    const ROUTE_CONFIG: &str = r#"
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
    fn num_retries_counts_retries_so_max_attempts_is_one_more() {
        let got = read_with(ROUTE_CONFIG, &[("route", "checkout")]).unwrap();
        assert_eq!(value(&got, "max_attempts"), "3");
        assert!(got.settings.iter().any(|s| {
            s.rule
                .contains("num_retries 2 → max_attempts 3: Envoy counts retries")
        }));
        assert_eq!(value(&got, "policy"), "envoy");
        assert_eq!(
            (value(&got, "base"), value(&got, "cap")),
            ("50ms".into(), "1s".into())
        );
        assert_eq!(value(&got, "timeout"), "250ms");
        assert_eq!(value(&got, "deadline"), "2s");
        assert_eq!(value(&got, "retry_on"), "failure+rejected+timeout");
        assert_eq!(value(&got, "resource"), "server");
    }

    #[test]
    fn envoys_defaults_one_retry_25_ms_ten_times_that_and_a_15_s_route_timeout() {
        let got =
            read("match: {prefix: /}\nroute:\n  cluster: c\n  retry_policy: {retry_on: 5xx}\n")
                .unwrap();
        assert_eq!(value(&got, "max_attempts"), "2");
        assert_eq!(
            (value(&got, "base"), value(&got, "cap")),
            ("25ms".into(), "250ms".into())
        );
        assert_eq!(value(&got, "deadline"), "15s");
        assert_eq!(value(&got, "timeout"), "-", "no per_try_timeout: none");
        // No retry policy: one attempt; timeout 0s: no deadline.
        let none = read("match: {prefix: /}\nroute: {cluster: c, timeout: 0s}\n").unwrap();
        assert_eq!(value(&none, "max_attempts"), "1");
        assert_eq!(value(&none, "deadline"), "-");
        // The default max is 10 × base; the base in whole ms, at least 1.
        let small = read(
            "match: {prefix: /}\nroute:\n  cluster: c\n  retry_policy:\n    retry_on: reset\n    \
             retry_back_off: {base_interval: 0.0004s}\n",
        )
        .unwrap();
        assert_eq!(
            (value(&small, "base"), value(&small, "cap")),
            ("1ms".into(), "10ms".into())
        );
        assert_eq!(value(&small, "retry_on"), "timeout");
    }

    #[test]
    fn the_routes_policy_replaces_the_virtual_hosts_and_a_route_without_one_inherits_it() {
        let got = read_with(ROUTE_CONFIG, &[("route", "catalog")]).unwrap();
        // The vhost's policy: connect-failure only, which herdsim never has.
        assert_eq!(value(&got, "max_attempts"), "6");
        assert_eq!(value(&got, "retry_on"), "none");
        assert!(
            got.settings
                .iter()
                .any(|s| s.rule.contains("connect-failure never fire"))
        );
        let by_path = read_with(ROUTE_CONFIG, &[("route", "virtual_hosts[0].routes[1]")]).unwrap();
        assert_eq!(by_path.settings, got.settings);
        let err = read(ROUTE_CONFIG).unwrap_err();
        assert!(
            err.contains("--select route=NAME")
                && err.contains("checkout (virtual_hosts[0].routes[0]), catalog"),
            "{err}"
        );
        let err = read_with(ROUTE_CONFIG, &[("virtual-host", "front")]).unwrap_err();
        assert!(
            err.contains("no virtual host named front: the names are backend"),
            "{err}"
        );
    }

    #[test]
    fn retry_on_is_read_against_what_herdsims_server_answers() {
        let policy = |on: &str, extra: &str| {
            format!(
                "match: {{prefix: /}}\nroute:\n  cluster: c\n  retry_policy:\n    retry_on: \"{on}\"\n{extra}"
            )
        };
        let on = |on: &str, select: &[(&str, &str)]| {
            value(&read_with(&policy(on, ""), select).unwrap(), "retry_on")
        };
        assert_eq!(on("gateway-error", &[]), "failure+rejected+timeout");
        assert_eq!(
            on("gateway-error", &[("rejected-status", "429")]),
            "failure+timeout"
        );
        assert_eq!(on("retriable-4xx", &[("failure-status", "409")]), "failure");
        // Behind a gRPC service, failures come in 200 responses.
        assert_eq!(on("5xx,unavailable", &[]), "failure+timeout");
        assert_eq!(
            on("unavailable,resource-exhausted", &[]),
            "failure+rejected"
        );
        assert_eq!(on("5xx", &[("upstream", "grpc")]), "timeout");
        let codes = read(&policy(
            "retriable-status-codes",
            "    retriable_status_codes: [503, 504]\n",
        ))
        .unwrap();
        assert_eq!(value(&codes, "retry_on"), "failure+rejected");
        assert!(
            codes
                .settings
                .iter()
                .any(|s| s.rule.contains("status 504 never comes"))
        );
        let err = read(&policy("5xx,conect-failure", "")).unwrap_err();
        assert!(
            err.contains("'conect-failure' is not a retry condition"),
            "{err}"
        );
        // retry_on "" makes no retry state: one attempt.
        assert_eq!(value(&read(&policy("", "")).unwrap(), "max_attempts"), "1");
    }

    #[test]
    fn a_clusters_budget_replaces_max_retries_and_its_defaults_are_envoys() {
        let cluster = |breakers: &str| {
            format!("name: backend\nconnect_timeout: 0.25s\ntype: STRICT_DNS\n{breakers}")
        };
        let bare = read(&cluster("")).unwrap();
        assert_eq!(value(&bare, "budget"), "envoy-max-retries:3");
        assert_eq!(value(&bare, "throttle"), "envoy-max-requests:1024");
        let budget = read(&cluster(
            "circuit_breakers:\n  thresholds:\n  - max_retries: 10\n    max_requests: 200\n    \
             retry_budget: {budget_percent: {value: 25}, min_retry_concurrency: 5}\n",
        ))
        .unwrap();
        assert_eq!(value(&budget, "budget"), "envoy:0.25,min:5");
        assert_eq!(value(&budget, "throttle"), "envoy-max-requests:200");
        // Only one of the two: the other is Envoy's default.
        let half = read(&cluster(
            "circuit_breakers:\n  thresholds:\n  - retry_budget: {min_retry_concurrency: 1}\n",
        ))
        .unwrap();
        assert_eq!(value(&half, "budget"), "envoy:0.2,min:1");
        // An empty budget is no budget: max_retries applies.
        let empty = read(&cluster(
            "circuit_breakers:\n  thresholds:\n  - {max_retries: 7, retry_budget: {}}\n",
        ))
        .unwrap();
        assert_eq!(value(&empty, "budget"), "envoy-max-retries:7");
        // The first thresholds of the priority chosen.
        let two = cluster(
            "circuit_breakers:\n  thresholds:\n  - {priority: HIGH, max_retries: 9}\n  - \
             {max_retries: 4}\n  - {max_retries: 5}\n",
        );
        assert_eq!(value(&read(&two).unwrap(), "budget"), "envoy-max-retries:4");
        assert_eq!(
            value(&read_with(&two, &[("priority", "HIGH")]).unwrap(), "budget"),
            "envoy-max-retries:9"
        );
    }

    /// envoyproxy/envoy PR 9069's example, through the import: the budget
    /// a cluster file gives allows 5 retries at 25 active requests.
    #[test]
    fn the_imported_budget_is_pr_9069s() {
        use crate::control::{ControlSpec, Family, Outcome, RetryControl};
        let got = read(
            "name: b\nconnect_timeout: 1s\ncircuit_breakers:\n  thresholds:\n  - retry_budget: \
             {budget_percent: {value: 20.0}, min_retry_concurrency: 3}\n",
        )
        .unwrap();
        let spec = ControlSpec::parse(Family::Budget, got.value("budget").unwrap())
            .unwrap()
            .unwrap();
        let mut state = spec.state();
        for _ in 0..25 {
            state.attempt_sent(0, None);
        }
        let mut allowed = 0;
        while state.may_retry(0, Outcome::Failure) {
            state.take_retry(0, Outcome::Failure);
            allowed += 1;
        }
        assert_eq!(allowed, 5);
    }

    #[test]
    fn hedge_on_per_try_timeout_is_hedging_on_timeout_with_a_per_try_timeout() {
        let route = |hedge: &str, policy: &str| {
            format!(
                "match: {{prefix: /}}\nroute:\n  cluster: c\n  hedge_policy: {{{hedge}}}\n  \
                 retry_policy: {{retry_on: 5xx, num_retries: 2{policy}}}\n"
            )
        };
        let got = read(&route(
            "hedge_on_per_try_timeout: true",
            ", per_try_timeout: 0.25s",
        ))
        .unwrap();
        assert_eq!(value(&got, "hedge_on_timeout"), "on");
        assert_eq!(value(&got, "timeout"), "250ms");
        assert_eq!(value(&got, "max_attempts"), "3");
        let setting = got
            .settings
            .iter()
            .find(|s| s.key == "hedge_on_timeout")
            .unwrap();
        assert!(
            setting
                .from
                .contains("route.hedge_policy.hedge_on_per_try_timeout")
        );
        assert!(setting.from.contains("route.retry_policy.per_try_timeout"));
        assert!(setting.rule.contains("shouldHedgeRetryPerTryTimeout"));
        let timeout = got.settings.iter().find(|s| s.key == "timeout").unwrap();
        assert!(
            timeout.rule.contains("keeps the attempt"),
            "{}",
            timeout.rule
        );
        // Without a per-try timeout no timer fires: read, warned, not set.
        let got = read(&route("hedge_on_per_try_timeout: true", "")).unwrap();
        assert_eq!(value(&got, "hedge_on_timeout"), "-");
        assert!(
            got.warnings
                .iter()
                .any(|w| w.contains("hedge_on_per_try_timeout: read but changes nothing")),
            "{:?}",
            got.warnings
        );
        // False, or no hedge_policy: nothing.
        let got = read(&route(
            "hedge_on_per_try_timeout: false",
            ", per_try_timeout: 0.25s",
        ))
        .unwrap();
        assert_eq!(value(&got, "hedge_on_timeout"), "-");
        // The virtual host's hedge_policy applies to a route without one.
        let vhost = "name: v\ndomains: ['*']\nhedge_policy: {hedge_on_per_try_timeout: true}\n\
                     routes:\n- match: {prefix: /}\n  route:\n    cluster: c\n    \
                     retry_policy: {retry_on: 5xx, per_try_timeout: 0.1s}\n";
        assert_eq!(value(&read(vhost).unwrap(), "hedge_on_timeout"), "on");
    }

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
