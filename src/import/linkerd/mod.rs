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

use serde_json::Value;

use super::durations::herdsim;
use super::kube::{Resource, name_of};
use super::tree::{Node, from_yaml};
use super::{Context, Format, ImportError};

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

/// The budget as the proxy builds it.
struct Budget {
    ratio: f64,
    min_per_s: u64,
    ttl_us: u64,
    /// The fields it came from (the `retryBudget` itself if given).
    from: Vec<String>,
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
                herdsim((ns / 1_000) as u64),
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
            herdsim(budget.ttl_us),
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

fn read_budget(ctx: &Context<'_>, node: Option<Node<'_>>) -> Result<Budget, ImportError> {
    let Some(node) = node else {
        return Ok(Budget {
            ratio: 0.2,
            min_per_s: 10,
            ttl_us: 10_000_000,
            from: Vec::new(),
        });
    };
    node.only(ctx, &["retryRatio", "minRetriesPerSecond", "ttl"])?;
    let required = |key: &str| {
        node.get(key).ok_or_else(|| {
            ctx.error(
                &node,
                format!(
                    "no {key}: a retryBudget needs retryRatio, minRetriesPerSecond and ttl (the \
                     CRD requires all three; Linkerd's defaults apply only when retryBudget is \
                     absent)"
                ),
            )
        })
    };
    let (ratio_node, min_node, ttl_node) = (
        required("retryRatio")?,
        required("minRetriesPerSecond")?,
        required("ttl")?,
    );
    let ratio = ratio_node.f64(ctx, false)?;
    if ratio < 0.0 {
        return Err(ctx.error(
            &ratio_node,
            format!("{ratio}: must be non-negative (Linkerd's Validate refuses it)"),
        ));
    }
    if ratio > 1_000.0 {
        return Err(ctx.unsupported(
            &ratio_node,
            "a ratio above 1000: the proxy discards the budget (convert_retry_budget takes 0 \
             to 1000) and its retryable routes do not retry",
        ));
    }
    let min = min_node.u64(ctx, false)?;
    if min >= i32::MAX as u64 {
        return Err(ctx.error(
            &min_node,
            format!(
                "{min}: expected at most {} (an int32, below tower's TpsBudget limit of \
                 i32::MAX)",
                i32::MAX - 1
            ),
        ));
    }
    let ttl_ns = go_duration(ctx, &ttl_node)?;
    if !(1_000_000_000..=60_000_000_000).contains(&ttl_ns) {
        return Err(ctx.unsupported(
            &ttl_node,
            "a ttl outside 1s to 60s: the proxy discards the budget (convert_retry_budget) \
             and its retryable routes do not retry",
        ));
    }
    if ttl_ns % 1_000 != 0 {
        return Err(ctx.error(
            &ttl_node,
            "is not a whole number of microseconds, herdsim's resolution for durations",
        ));
    }
    Ok(Budget {
        ratio,
        min_per_s: min,
        ttl_us: (ttl_ns / 1_000) as u64,
        from: vec![
            ratio_node.path().to_string(),
            min_node.path().to_string(),
            ttl_node.path().to_string(),
        ],
    })
}

/// Checks a route as `Validate` and the controller's `toRoute` do.
fn check_route(ctx: &Context<'_>, route: &Node<'_>) -> Result<(), ImportError> {
    route.only(
        ctx,
        &[
            "name",
            "condition",
            "responseClasses",
            "isRetryable",
            "timeout",
        ],
    )?;
    match route.get("name") {
        Some(name) if !name.str(ctx)?.is_empty() => {}
        _ => return Err(ctx.error(route, "no name: a route needs one")),
    }
    let condition = route
        .get("condition")
        .ok_or_else(|| ctx.error(route, "no condition: a route needs one"))?;
    check_request_match(ctx, &condition)?;
    if let Some(node) = route.get("isRetryable") {
        node.bool(ctx, false)?;
    }
    if let Some(node) = route.get("timeout") {
        go_duration(ctx, &node)?;
    }
    if let Some(classes) = route.get("responseClasses") {
        for class in classes.items(ctx)? {
            class.only(ctx, &["condition", "isFailure"])?;
            let condition = class
                .get("condition")
                .ok_or_else(|| ctx.error(&class, "no condition: a response class needs one"))?;
            check_response_match(ctx, &condition)?;
            if let Some(node) = class.get("isFailure") {
                node.bool(ctx, false)?;
            }
        }
    }
    Ok(())
}

/// `ValidateRequestMatch`: at least one of its fields, children valid.
fn check_request_match(ctx: &Context<'_>, node: &Node<'_>) -> Result<(), ImportError> {
    let known = ["all", "any", "not", "pathRegex", "method"];
    node.only(ctx, &known)?;
    let mut set = false;
    for key in ["all", "any"] {
        if let Some(list) = node.get(key) {
            set = true;
            for child in list.items(ctx)? {
                check_request_match(ctx, &child)?;
            }
        }
    }
    if let Some(not) = node.get("not") {
        set = true;
        check_request_match(ctx, &not)?;
    }
    for key in ["pathRegex", "method"] {
        if let Some(text) = node.get(key)
            && !text.str(ctx)?.is_empty()
        {
            set = true;
        }
    }
    if set {
        Ok(())
    } else {
        Err(ctx.error(
            node,
            format!("a request match needs one of {}", known.join(", ")),
        ))
    }
}

/// `ValidateResponseMatch`: at least one field; a status bound, if given,
/// 100 to 599, and max not below min.
fn check_response_match(ctx: &Context<'_>, node: &Node<'_>) -> Result<(), ImportError> {
    let known = ["all", "any", "not", "status"];
    node.only(ctx, &known)?;
    let mut set = false;
    for key in ["all", "any"] {
        if let Some(list) = node.get(key) {
            set = true;
            for child in list.items(ctx)? {
                check_response_match(ctx, &child)?;
            }
        }
    }
    if let Some(not) = node.get("not") {
        set = true;
        check_response_match(ctx, &not)?;
    }
    if let Some(status) = node.get("status") {
        set = true;
        status.only(ctx, &["min", "max"])?;
        let bound = |key: &str| -> Result<u64, ImportError> {
            match status.get(key) {
                None => Ok(0),
                Some(b) => {
                    let n = b.u64(ctx, false)?;
                    if n != 0 && !(100..=599).contains(&n) {
                        return Err(ctx.error(&b, format!("{n}: expected 100 to 599")));
                    }
                    Ok(n)
                }
            }
        };
        let (min, max) = (bound("min")?, bound("max")?);
        if min != 0 && max != 0 && max < min {
            return Err(ctx.error(&status, "max is below min"));
        }
    }
    if set {
        Ok(())
    } else {
        Err(ctx.error(
            node,
            format!("a response match needs one of {}", known.join(", ")),
        ))
    }
}

/// A response condition as the proxy holds it (`None`: dropped).
enum Matcher {
    All(Vec<Matcher>),
    Any(Vec<Matcher>),
    Not(Box<Matcher>),
    Status(u64, u64),
}

impl Matcher {
    fn matches(&self, status: u64) -> bool {
        match self {
            Matcher::All(ms) => ms.iter().all(|m| m.matches(status)),
            Matcher::Any(ms) => ms.iter().any(|m| m.matches(status)),
            Matcher::Not(m) => !m.matches(status),
            Matcher::Status(min, max) => (*min..=*max).contains(&status),
        }
    }
}

/// The controller's `toResponseMatch` (several fields: all of them) and
/// the proxy's `convert_rsp_match` (a bound of 0 is no status code, and
/// drops what holds it). Already checked.
fn matcher(ctx: &Context<'_>, node: &Node<'_>) -> Option<Matcher> {
    let mut parts = Vec::new();
    for key in ["all", "any"] {
        if let Some(list) = node.get(key) {
            let children: Vec<Matcher> = list
                .items(ctx)
                .unwrap_or_default()
                .iter()
                .filter_map(|c| matcher(ctx, c))
                .collect();
            // `convert_rsp_match`: an empty all or any is dropped.
            parts.push((!children.is_empty()).then(|| {
                if key == "all" {
                    Matcher::All(children)
                } else {
                    Matcher::Any(children)
                }
            }));
        }
    }
    if let Some(status) = node.get("status") {
        let bound = |k: &str| status.get(k).and_then(|b| b.value().as_u64()).unwrap_or(0);
        let (min, max) = (bound("min"), bound("max"));
        parts.push(if min == 0 || max == 0 {
            ctx.warn(format!(
                "{}: {}: a status range without {}: the proxy drops it \
                 (StatusCode::from_u16(0) fails), and the condition holding it",
                ctx.file,
                status.path(),
                if min == 0 { "min" } else { "max" }
            ));
            None
        } else {
            Some(Matcher::Status(min, max))
        });
    }
    if let Some(not) = node.get("not") {
        parts.push(matcher(ctx, &not).map(|m| Matcher::Not(Box::new(m))));
    }
    if parts.len() == 1 {
        return parts.pop().flatten();
    }
    // Several fields: the controller sends All of them, and the proxy
    // drops the ones it cannot convert.
    let kept: Vec<Matcher> = parts.into_iter().flatten().collect();
    (!kept.is_empty()).then_some(Matcher::All(kept))
}

/// The HTTP statuses herdsim's server answers with.
struct Statuses {
    failure: u64,
    rejected: u64,
}

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

/// `retry_on` from the route's classes, each of herdsim's answers
/// classified as the proxy classifies it.
fn retry_on(ctx: &Context<'_>, route: &Node<'_>, statuses: &Statuses) -> Result<(), ImportError> {
    let mut classes = Vec::new();
    if let Some(list) = route.get("responseClasses") {
        for class in list.items(ctx)? {
            let condition = class.get("condition").expect("checked");
            let failure = class
                .get("isFailure")
                .and_then(|n| n.value().as_bool())
                .unwrap_or(false);
            if let Some(m) = matcher(ctx, &condition) {
                classes.push((m, failure, class.path().to_string()));
            }
        }
    }
    // The first class matching decides; none, a 5xx is a failure.
    let is_failure = |status: u64| -> (bool, Option<&str>) {
        classes
            .iter()
            .find(|(m, _, _)| m.matches(status))
            .map_or((status >= 500, None), |(_, f, path)| {
                (*f, Some(path.as_str()))
            })
    };
    if let (true, Some(path)) = is_failure(200) {
        return Err(ctx.error_at(
            path,
            "not modelled: a class that makes a success (200) a failure: herdsim cannot retry \
             a success",
        ));
    }
    let (failure, _) = is_failure(statuses.failure);
    let (rejected, _) = is_failure(statuses.rejected);
    let value = match (failure, rejected) {
        (true, true) => "failure+rejected",
        (true, false) => "failure",
        (false, true) => "rejected",
        (false, false) => "none",
    };
    let from = match route.get("responseClasses") {
        Some(node) => node.path().to_string(),
        None => route.path().to_string() + ".responseClasses",
    };
    ctx.set(
        "retry_on",
        value,
        &[&from],
        format!(
            "a retryable route retries the responses its classes make failures (the first \
             class matching decides; none, a 5xx): herdsim's failure answers {} ({}), its \
             rejection {} ({}); a timeout is never retried (no response reaches the retry \
             policy); an HTTP upstream assumed",
            statuses.failure,
            if failure { "a failure" } else { "a success" },
            statuses.rejected,
            if rejected { "a failure" } else { "a success" },
        ),
    )
}

/// A duration as Go's `time.ParseDuration` reads it, in ns; negative
/// durations are refused (none of a profile's may be).
fn go_duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<u128, ImportError> {
    let text = node.str(ctx)?;
    parse_go_duration(text).map_err(|why| {
        let why = match why {
            GoDurationError::Syntax => {
                "expected a Go duration (time.ParseDuration: numbers \
                                        with units ns, us, ms, s, m, h, such as \"300ms\", \
                                        \"1m30s\", \"1.5s\")"
            }
            GoDurationError::Negative => "a negative duration: expected 0 or more",
            GoDurationError::Overflow => {
                "overflows Go's duration (an int64 of nanoseconds, \
                                          time.ParseDuration's \"invalid duration\"): expected \
                                          at most 2562047h47m16.854775807s"
            }
        };
        ctx.error(node, format!("\"{text}\": {why}"))
    })
}

/// Why a text is not a duration Go reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoDurationError {
    /// Not numbers with units.
    Syntax,
    /// Below zero (Go reads it; no duration here may be).
    Negative,
    /// Beyond an int64 of nanoseconds (Go refuses it).
    Overflow,
}

/// Go's `time.ParseDuration`, non-negative, in ns (fractions beyond a
/// nanosecond truncated, as Go's are).
pub fn parse_go_duration(text: &str) -> Result<u128, GoDurationError> {
    use GoDurationError::{Negative, Overflow, Syntax};
    if let Some(magnitude) = text.strip_prefix('-') {
        // Go reads a sign; `-0` is zero.
        return match parse_go_duration(magnitude) {
            Ok(0) if !magnitude.starts_with(['+', '-']) => Ok(0),
            Ok(_) if !magnitude.starts_with(['+', '-']) => Err(Negative),
            Err(Overflow) => Err(Negative),
            _ => Err(Syntax),
        };
    }
    let body = text.strip_prefix('+').unwrap_or(text);
    if body == "0" {
        return Ok(0);
    }
    if body.is_empty() || body.starts_with(['+', '-']) {
        return Err(Syntax);
    }
    let mut rest = body;
    let mut total: u128 = 0;
    let mut overflow = false;
    while !rest.is_empty() {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        let whole_len = digits(rest);
        let whole = &rest[..whole_len];
        rest = &rest[whole_len..];
        let fraction = if let Some(after) = rest.strip_prefix('.') {
            let n = digits(after);
            let f = &after[..n];
            rest = &after[n..];
            f
        } else {
            ""
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(Syntax);
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(rest.len(), |(i, _)| i);
        let unit: u128 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(Syntax),
        };
        rest = &rest[unit_len..];
        // Past an int64 the rest is still read for its syntax.
        let w: Option<u128> = if whole.is_empty() {
            Some(0)
        } else {
            whole.parse().ok()
        };
        let mut part = w.and_then(|w| w.checked_mul(unit));
        if !fraction.is_empty() {
            // 20 digits hold a nanosecond of an hour, and their product
            // with the unit fits a u128.
            let kept = fraction.len().min(20);
            let f: u128 = fraction[..kept].parse().map_err(|_| Syntax)?;
            let scale = 10u128.pow(kept as u32);
            part = part.and_then(|p| p.checked_add(f * unit / scale));
        }
        match part.and_then(|p| total.checked_add(p)) {
            Some(t) => total = t,
            None => overflow = true,
        }
    }
    // Go's limit: an int64 of ns.
    if overflow || total > i64::MAX as u128 {
        Err(Overflow)
    } else {
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};
    use super::{GoDurationError, parse_go_duration};

    fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("profile.yaml", text, select)
    }

    fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    const HEAD: &str = "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\n\
                        metadata: {name: orders.shop.svc.cluster.local}\n";

    fn profile(spec: &str) -> String {
        format!("{HEAD}spec:\n{spec}")
    }

    const ROUTE: &str = "  routes:\n  - name: get\n    condition: {method: GET}\n    \
                         isRetryable: true\n";

    #[test]
    fn go_durations_read_as_time_parse_duration() {
        for (text, ns) in [
            ("10s", 10_000_000_000u128),
            ("300ms", 300_000_000),
            ("1m30s", 90_000_000_000),
            ("1.5s", 1_500_000_000),
            (".5s", 500_000_000),
            ("1h", 3_600_000_000_000),
            ("100us", 100_000),
            ("100µs", 100_000),
            ("7ns", 7),
            ("0", 0),
            ("0s", 0),
            ("+2s", 2_000_000_000),
            ("1.0000000019s", 1_000_000_001),
        ] {
            assert_eq!(parse_go_duration(text), Ok(ns), "{text}");
        }
        for bad in [
            "", "10", "s", ".s", "1d", "1 s", "1.2.3s", "--1s", "-+1s", "+-1s",
        ] {
            assert_eq!(
                parse_go_duration(bad),
                Err(GoDurationError::Syntax),
                "{bad}"
            );
        }
        for negative in ["-1s", "-0.5ms", "-2562048h"] {
            assert_eq!(
                parse_go_duration(negative),
                Err(GoDurationError::Negative),
                "{negative}"
            );
        }
        assert_eq!(parse_go_duration("-0"), Ok(0));
        // An int64 of ns is Go's largest: 2562047h47m16.854775807s.
        assert_eq!(
            parse_go_duration("2562047h47m16.854775807s"),
            Ok(i64::MAX as u128)
        );
        for over in [
            "2562047h47m16.854775808s",
            "2562048h",
            "3000000h",
            "99999999999999999999999999999999999999999h",
        ] {
            assert_eq!(
                parse_go_duration(over),
                Err(GoDurationError::Overflow),
                "{over}"
            );
        }
    }

    #[test]
    fn without_a_retry_budget_the_controller_s_default_applies() {
        // defaultRetryBudget(): MinRetriesPerSecond 10, RetryRatio 0.2, Ttl 10s.
        let got = read(&profile(ROUTE)).unwrap();
        assert_eq!(got.value("budget"), Some("tower:0.2,ttl:10s,min:10"));
        assert_eq!(got.value("policy"), Some("no-backoff"));
        assert_eq!(got.value("resource"), Some("server"));
        assert_eq!(got.value("max_attempts"), None, "no attempt limit");
        assert_eq!(got.value("deadline"), None, "no default timeout");
        // No classes: a 5xx is a failure; herdsim's 503s are both.
        assert_eq!(got.value("retry_on"), Some("failure+rejected"));
        assert_eq!(
            got.files[0].2,
            "ServiceProfile orders.shop.svc.cluster.local, route get"
        );
    }

    #[test]
    fn a_retry_budget_is_all_or_nothing() {
        let got = read(&profile(&format!(
            "  retryBudget: {{retryRatio: 0.3, minRetriesPerSecond: 3, ttl: 30s}}\n{ROUTE}"
        )))
        .unwrap();
        assert_eq!(got.value("budget"), Some("tower:0.3,ttl:30s,min:3"));
        let err = read(&profile(&format!(
            "  retryBudget: {{retryRatio: 0.3, minRetriesPerSecond: 3}}\n{ROUTE}"
        )))
        .unwrap_err();
        assert_eq!(
            err,
            "profile.yaml: spec.retryBudget: no ttl: a retryBudget needs retryRatio, \
             minRetriesPerSecond and ttl (the CRD requires all three; Linkerd's defaults apply \
             only when retryBudget is absent)"
        );
    }

    #[test]
    fn budgets_the_proxy_discards_are_refused() {
        let budget = |b: &str| read(&profile(&format!("  retryBudget: {b}\n{ROUTE}")));
        let e = budget("{retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 500ms}").unwrap_err();
        assert!(
            e.contains("spec.retryBudget.ttl: not modelled: a ttl outside 1s to 60s"),
            "{e}"
        );
        let e = budget("{retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 2m}").unwrap_err();
        assert!(e.contains("ttl outside 1s to 60s"), "{e}");
        let e = budget("{retryRatio: 1001, minRetriesPerSecond: 10, ttl: 10s}").unwrap_err();
        assert!(
            e.contains("retryRatio: not modelled: a ratio above 1000"),
            "{e}"
        );
        let e = budget("{retryRatio: -1, minRetriesPerSecond: 10, ttl: 10s}").unwrap_err();
        assert!(e.contains("must be non-negative"), "{e}");
        let e = budget("{retryRatio: 0.2, minRetriesPerSecond: 2147483647, ttl: 10s}").unwrap_err();
        assert!(
            e.contains("minRetriesPerSecond: 2147483647: expected at most"),
            "{e}"
        );
        let e = budget("{retryRatio: 0.2, minRetriesPerSecond: 10, ttl: '10'}").unwrap_err();
        assert!(
            e.contains("spec.retryBudget.ttl: \"10\": expected a Go duration"),
            "{e}"
        );
        // 1 s and 60 s are in.
        assert!(budget("{retryRatio: 0, minRetriesPerSecond: 0, ttl: 1s}").is_ok());
        assert!(budget("{retryRatio: 1000, minRetriesPerSecond: 0, ttl: 1m}").is_ok());
    }

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
    fn response_classes_choose_what_is_retried() {
        let classes = |c: &str, select: &[(&str, &str)]| {
            read_with(
                &profile(&format!("{ROUTE}    responseClasses:\n{c}")),
                select,
            )
            .map(|g| g.value("retry_on").unwrap().to_string())
        };
        // 503 declared a success: nothing herdsim answers is retried.
        let ok503 = "    - condition: {status: {min: 503, max: 503}}\n      isFailure: false\n";
        assert_eq!(classes(ok503, &[]).unwrap(), "none");
        // ... unless the rejection is a 500.
        assert_eq!(
            classes(ok503, &[("rejected-status", "500")]).unwrap(),
            "rejected"
        );
        // 429 a failure by a class; 503 by the 5xx fallback.
        let c429 = "    - condition: {status: {min: 429, max: 429}}\n      isFailure: true\n";
        assert_eq!(
            classes(c429, &[("rejected-status", "429")]).unwrap(),
            "failure+rejected"
        );
        // The first class matching decides.
        let first = "    - condition: {not: {status: {min: 500, max: 502}}}\n      isFailure: \
                     false\n    - condition: {status: {min: 500, max: 599}}\n      isFailure: true\n";
        assert_eq!(classes(first, &[]).unwrap(), "none");
        assert_eq!(
            classes(first, &[("failure-status", "500")]).unwrap(),
            "failure"
        );
        // Several fields are all of them.
        let both = "    - condition: {status: {min: 500, max: 599}, not: {status: {min: 503, \
                    max: 503}}}\n      isFailure: false\n";
        assert_eq!(
            classes(both, &[("failure-status", "500")]).unwrap(),
            "rejected"
        );
        // A range missing a bound is dropped by the proxy: the 5xx rule.
        let half = "    - condition: {status: {min: 500}}\n      isFailure: false\n";
        let got = read(&profile(&format!("{ROUTE}    responseClasses:\n{half}"))).unwrap();
        assert_eq!(got.value("retry_on"), Some("failure+rejected"));
        assert!(
            got.warnings[0].contains("without max: the proxy drops it"),
            "{:?}",
            got.warnings
        );
        // A success made a failure is refused.
        let e = classes(
            "    - condition: {status: {min: 200, max: 299}}\n      isFailure: true\n",
            &[],
        )
        .unwrap_err();
        assert!(
            e.contains(
                "spec.routes[0].responseClasses[0]: not modelled: a class that makes a success"
            ),
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
