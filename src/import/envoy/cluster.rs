//! Envoy's `Cluster`: its `circuit_breakers` thresholds of the chosen
//! priority, `max_requests` (herdsim's throttle) and `max_retries` or
//! `retry_budget` (herdsim's budget); its outlier detection and connection
//! settings are refused, its host and connection choices noted as inert.

use super::{duration, name_of, refuse, uint32};
use crate::base::time::Micros;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// Envoy's circuit breaker defaults (`ResourceManagers::load`).
const DEFAULT_MAX_RETRIES: u64 = 3;
const DEFAULT_MAX_REQUESTS: u64 = 1024;
/// `RetryBudgetImpl::max`'s defaults.
const DEFAULT_BUDGET_PERCENT: f64 = 20.0;
const DEFAULT_MIN_RETRY_CONCURRENCY: u64 = 3;

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

/// Reads a cluster file: its circuit breakers as herdsim's throttle and budget.
pub(super) fn read_cluster(
    ctx: &Context<'_>,
    root: &Node<'_>,
    inert: &mut Vec<String>,
) -> Result<(), ImportError> {
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
            && duration(ctx, &interval)? != Micros::ZERO
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
    use crate::base::time::Nanos;
    use crate::import::envoy::tests::{read, read_with, value};

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
            state.attempt_sent(Nanos::ZERO, None);
        }
        let mut allowed = 0;
        while state.may_retry(Nanos::ZERO, Outcome::Failure) {
            state.take_retry(Nanos::ZERO, Outcome::Failure);
            allowed += 1;
        }
        assert_eq!(allowed, 5);
    }
}
