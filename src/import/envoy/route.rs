//! Envoy's `Route` and its `RouteAction`: the route's `timeout` (herdsim's
//! deadline), its `hedge_policy`, and which `retry_policy` applies (the
//! route's, else its virtual host's: replaced, never merged).

use super::retry_policy::{Answers, RETRY_POLICY_FIELDS, read_retry_policy};
use super::{duration, fields, refuse};
use crate::base::time::US_PER_MS;
use crate::import::durations::herdsim;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// Envoy's route timeout when none is given (`RouteAction.timeout`).
const DEFAULT_ROUTE_TIMEOUT_MS: u64 = 15_000;

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

/// A route and the virtual host it is in (none for a Route file).
pub(super) struct Chosen<'a> {
    pub(super) vhost: Option<Node<'a>>,
    pub(super) route: Node<'a>,
}

/// Reads the chosen route: its action, timeout, hedge and retry policies.
pub(super) fn read_route(
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
        Some(policy) => read_retry_policy(ctx, &policy, answers, hedge.is_some())?,
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
        Some(node) => (
            duration(ctx, &node)? / US_PER_MS,
            node.path().to_string(),
            true,
        ),
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
    ctx.set("deadline", herdsim(ms * US_PER_MS), &[&from], rule)
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

#[cfg(test)]
mod tests {
    use crate::import::envoy::tests::{read, value};

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
}
