//! Envoy's `RouteConfiguration` and `VirtualHost` (a route file's top
//! level): checks their fields, refuses what herdsim cannot model, and
//! chooses the one route whose retry policy applies (`--select route=`,
//! `--select virtual-host=`), as Envoy chooses one per request.

use super::retry_policy::answers;
use super::route::{Chosen, read_route};
use super::{Kind, fields, name_of, refuse};
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

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

/// Reads a route file (a RouteConfiguration, VirtualHost or Route): the
/// route chosen, with its virtual host.
pub(super) fn read_route_file<'a>(
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
    read_route(ctx, &chosen, answers, inert)
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

#[cfg(test)]
mod tests {
    use crate::import::envoy::tests::{ROUTE_CONFIG, read, read_with, value};

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
}
