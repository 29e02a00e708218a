//! gRPC service config JSON (gRFC A6): `methodConfig[].retryPolicy`,
//! `timeout` and the channel's `retryThrottling`, read as grpc-go reads them
//! (`service_config.go` and `internal/serviceconfig/duration.go` at commit
//! 4793ad0, 2026-08-21):
//!
//! - `maxAttempts` counts every attempt and must be above 1; gRPC's client
//!   caps it at 5 (`defaultMaxCallAttempts`), so 7 runs as 5. grpc-go
//!   decodes it into a Go `int`, which takes digits only: `3.0`, `1E1` and
//!   2^63 fail the whole service config (none of it is used), so they are
//!   refused, saying so.
//! - `initialBackoff`, `maxBackoff` and `backoffMultiplier` must be above 0
//!   and `retryableStatusCodes` not empty, or gRPC refuses the whole config;
//!   the delay is herdsim's `grpc-retry` policy (the ±20% jitter since 2024).
//! - `timeout` is the call's deadline, over every attempt (A6: "the
//!   deadline applies to the overall RPC"), not a per-attempt timeout: it is
//!   herdsim's `deadline`. gRPC has no per-attempt timeout, so none is set.
//! - `retryThrottling` is per channel: herdsim's `grpc` budget kept per
//!   source (`fleet = 1`); maxTokens in (0, 1000], tokenRatio above 0,
//!   both kept in thousandths (grpc-java truncates to them; grpc-go keeps
//!   floats, identical for the three decimals A6 allows).
//! - Which method's config applies: `--select method=SERVICE/METHOD`, looked
//!   up as gRPC does (the method's own name, else its service's, else the
//!   default `[{}]`); without it, the only methodConfig, else the default
//!   one, else an error listing the names.
//!
//! Where it differs from grpc-go, on purpose: unknown fields are errors
//! (Go's JSON decoder ignores them, and matches names ignoring case; here
//! names are A6's exact camelCase), so a misspelt `maxAttemps` is caught.
//!
//! `hedgingPolicy` (A6; grpc-java implements it, grpc-go does not) is read
//! as grpc-java reads it (`ManagedChannelServiceConfig.java`
//! `hedgingPolicy` and `ServiceConfigUtil.java` at commit 5fda0c7) into
//! herdsim's hedged requests ([`crate::model::hedging`]): `maxAttempts`
//! required, above 1, capped at 5 (`maxHedgedAttempts`) → `max_attempts`;
//! `hedgingDelay` → `hedge_delay`, required (grpc-java's "hedgingDelay
//! cannot be empty", where A6's comment says it may be left unset for 0s);
//! `nonFatalStatusCodes`, optional (none: every failure is fatal) →
//! `retry_on`. A method with both `retryPolicy` and `hedgingPolicy` is
//! refused (A6 allows one; grpc-java's `RetriableStream` refuses both).
//!
//! Status codes: herdsim's server answers three ways besides success. A
//! server failure (`fail_rate`, a `fail` trigger) is UNAVAILABLE; a
//! rejection at a full queue is RESOURCE_EXHAUSTED (what a gRPC server's
//! load shedding answers; `--select rejected-as=UNAVAILABLE` for a server
//! that answers that). A call's deadline passing is DEADLINE_EXCEEDED,
//! which gRPC never retries.

use serde_json::Value;

use super::durations::{herdsim, proto3};
use super::tree::{Node, from_json};
use super::{Context, Format, ImportError};
use crate::base::time::Micros;

/// The format.
pub const FORMAT: Format = Format {
    name: "gRPC service config (gRFC A6)",
    about: "JSON with methodConfig[] (retryPolicy, timeout) and retryThrottling",
    selects: &[
        (
            "method",
            "the gRPC method (SERVICE/METHOD, or SERVICE/) whose methodConfig applies",
        ),
        (
            "rejected-as",
            "the status a full queue's rejection carries (default RESOURCE_EXHAUSTED)",
        ),
    ],
    parse: from_json,
    claims,
    read,
};

/// gRPC's status codes, by number.
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The most attempts a gRPC client makes, whatever the config says
/// (grpc-go's `defaultMaxCallAttempts`, grpc-java's `maxRetryAttempts`).
pub const CLIENT_MAX_ATTEMPTS: u64 = 5;

const TOP: [&str; 5] = [
    "methodConfig",
    "retryThrottling",
    "loadBalancingPolicy",
    "loadBalancingConfig",
    "healthCheckConfig",
];
const METHOD: [&str; 7] = [
    "name",
    "timeout",
    "retryPolicy",
    "hedgingPolicy",
    "waitForReady",
    "maxRequestMessageBytes",
    "maxResponseMessageBytes",
];
const HEDGING: [&str; 3] = ["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"];
const RETRY: [&str; 5] = [
    "maxAttempts",
    "initialBackoff",
    "maxBackoff",
    "backoffMultiplier",
    "retryableStatusCodes",
];

fn claims(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.contains_key("methodConfig") || o.contains_key("retryThrottling"))
}

/// A methodConfig's names as gRPC paths: `/service/method`, `/service/`,
/// or `` for the default.
fn names(ctx: &Context<'_>, config: &Node<'_>) -> Result<Vec<String>, ImportError> {
    let Some(list) = config.get("name") else {
        return Ok(Vec::new());
    };
    let mut paths = Vec::new();
    for name in list.items(ctx)? {
        name.only(ctx, &["service", "method"])?;
        let service = name
            .get("service")
            .map(|n| n.str(ctx))
            .transpose()?
            .unwrap_or("");
        let method = name
            .get("method")
            .map(|n| n.str(ctx))
            .transpose()?
            .unwrap_or("");
        if service.is_empty() && !method.is_empty() {
            return Err(ctx.error(
                &name,
                "a method without its service: give service too (gRPC refuses it)",
            ));
        }
        paths.push(match (service, method) {
            ("", _) => String::new(),
            (s, m) => format!("/{s}/{m}"),
        });
    }
    Ok(paths)
}

fn shown(path: &str) -> String {
    if path.is_empty() {
        "the default [{}]".to_string()
    } else {
        path.trim_start_matches('/').to_string()
    }
}

/// The methodConfig that applies, as gRPC looks a method up.
fn chosen<'a>(ctx: &Context<'a>, root: &Node<'a>) -> Result<Option<Node<'a>>, ImportError> {
    let Some(list) = root.get("methodConfig") else {
        return Ok(None);
    };
    let mut configs = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for config in list.items(ctx)? {
        let paths = names(ctx, &config)?;
        for path in &paths {
            if seen.contains(path) {
                return Err(ctx.error(
                    &config,
                    format!("names {} twice (gRPC refuses the config)", shown(path)),
                ));
            }
            seen.push(path.clone());
        }
        // gRPC passes over a methodConfig without a name.
        if !paths.is_empty() {
            configs.push((config, paths));
        }
    }
    let listed = || seen.iter().map(|p| shown(p)).collect::<Vec<_>>().join(", ");
    let find = |path: &str| {
        configs
            .iter()
            .find(|(_, paths)| paths.iter().any(|p| p == path))
    };
    let pick = match ctx.selection("method") {
        Some(wanted) => {
            let wanted = wanted.trim_start_matches('/');
            let (service, method) = wanted.split_once('/').unwrap_or((wanted, ""));
            let exact = format!("/{service}/{method}");
            let found = find(&exact)
                .or_else(|| find(&format!("/{service}/")))
                .or_else(|| find(""));
            let Some((config, paths)) = found else {
                return Err(ctx.error_at(
                    "methodConfig",
                    format!(
                        "no methodConfig applies to {wanted}: the names are {}",
                        listed()
                    ),
                ));
            };
            ctx.chose(format!(
                "{} ({}) for {wanted}",
                config.path(),
                paths
                    .iter()
                    .map(|p| shown(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            config.clone()
        }
        None if configs.len() == 1 => configs[0].0.clone(),
        None => match find("") {
            Some((config, _)) => config.clone(),
            None if configs.is_empty() => return Ok(None),
            None => {
                return Err(ctx.error_at(
                    "methodConfig",
                    format!(
                        "several methodConfigs and no default [{{}}]: choose one with --select method=SERVICE/METHOD; the names are {}",
                        listed()
                    ),
                ));
            }
        },
    };
    if ctx.selection("method").is_none() {
        let paths = names(ctx, &pick)?;
        ctx.chose(format!(
            "{} ({})",
            pick.path(),
            paths
                .iter()
                .map(|p| shown(p))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Some(pick))
}

fn duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<Micros, ImportError> {
    proto3(node.str(ctx)?).map_err(|e| ctx.error(node, e))
}

/// A status code, by name or number, as grpc-go's `codes.Code` reads it.
fn code<'a>(ctx: &Context<'_>, node: &Node<'a>) -> Result<&'static str, ImportError> {
    let bad = || {
        ctx.error(
            node,
            format!(
                "not a gRPC status code: expected one of {} or 0 to 16",
                CODES.join(", ")
            ),
        )
    };
    match node.value() {
        Value::String(s) => CODES.iter().find(|c| *c == s).copied().ok_or_else(bad),
        Value::Number(n) => n
            .as_u64()
            .and_then(|i| CODES.get(i as usize))
            .copied()
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// What grpc-go does with a service config it cannot parse
/// (`clientconn.go`: `applyFailingLBLocked`, `WithDefaultServiceConfig`).
const GO_UNPARSED: &str = "grpc-go cannot parse the service config and uses none of it (from a \
                           resolver, the channel keeps its last good config or fails every call \
                           UNAVAILABLE; as a default config, grpc.NewClient fails)";

/// A retryPolicy's `maxAttempts` as grpc-go reads it: into a Go `int`
/// with encoding/json, which takes digits only (no fraction, no exponent:
/// `3.0` and `1E1` are refused) up to 2^63 − 1. The sign is left to the
/// range check.
fn go_int(ctx: &Context<'_>, node: &Node<'_>) -> Result<u64, ImportError> {
    match node.value() {
        Value::Number(n) if n.is_i64() || n.is_u64() => match n.as_i64() {
            Some(i) => Ok(i.max(0) as u64),
            None => Err(ctx.error(
                node,
                format!(
                    "{} overflows a Go int (encoding/json: at most 9223372036854775807): \
                     {GO_UNPARSED}; expected a whole number, 2 or more",
                    super::tree::kind(node.value())
                ),
            )),
        },
        Value::Number(_) => Err(ctx.error(
            node,
            format!(
                "{} has a fraction or an exponent, which a Go int refuses (encoding/json): \
                 {GO_UNPARSED}; expected a whole number written as digits, 2 or more",
                super::tree::kind(node.value())
            ),
        )),
        other => Err(ctx.error(
            node,
            format!(
                "expected a whole number, 2 or more, found {}",
                super::tree::kind(other)
            ),
        )),
    }
}

/// A hedgingPolicy's `maxAttempts` as grpc-java reads it
/// (`JsonUtil.getNumberAsInteger`): a JSON number (a Java double) that a
/// Java `int` holds exactly, so `3.0` is 3 and 2^31 is refused.
fn java_int(ctx: &Context<'_>, node: &Node<'_>) -> Result<u64, ImportError> {
    let value = node.value().as_f64().filter(|x| x.fract() == 0.0);
    match value {
        Some(x) if x <= f64::from(i32::MAX) => Ok(x.max(0.0) as u64),
        _ => Err(ctx.error(
            node,
            format!(
                "expected a whole number that a Java int holds, 2 to 2147483647 (grpc-java \
                 refuses the config: \"Number expected to be integer\"), found {}",
                super::tree::kind(node.value())
            ),
        )),
    }
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    root.only(ctx, &TOP)?;
    for key in [
        "loadBalancingPolicy",
        "loadBalancingConfig",
        "healthCheckConfig",
    ] {
        if let Some(node) = root.get(key) {
            ctx.warn(format!(
                "{}: {}: read but changes nothing: herdsim's service is one pool of workers, \
                 however the channel spreads calls over its backends",
                ctx.file,
                node.path()
            ));
        }
    }
    let rejected_as = match ctx.selection("rejected-as") {
        None => "RESOURCE_EXHAUSTED",
        Some(name) => CODES.iter().find(|c| **c == name).copied().ok_or_else(|| {
            ctx.error_at(
                "--select rejected-as",
                format!(
                    "not a gRPC status code: expected one of {}",
                    CODES.join(", ")
                ),
            )
        })?,
    };
    ctx.set(
        "resource",
        "server",
        &[],
        "a service config describes a client of a service: herdsim's server model",
    )?;
    if let Some(config) = chosen(ctx, root)? {
        method_config(ctx, &config, rejected_as)?;
    }
    if let Some(throttling) = root.get("retryThrottling") {
        retry_throttling(ctx, &throttling)?;
    }
    Ok(())
}

fn method_config(
    ctx: &Context<'_>,
    config: &Node<'_>,
    rejected_as: &str,
) -> Result<(), ImportError> {
    config.only(ctx, &METHOD)?;
    if let Some(node) = config.get("waitForReady")
        && node.bool(ctx, false)?
    {
        return Err(ctx.unsupported(
            &node,
            "a call that waits for a ready connection needs a model of the channel's connections, \
             which herdsim does not have; false (the default) is read",
        ));
    }
    for key in ["maxRequestMessageBytes", "maxResponseMessageBytes"] {
        if let Some(node) = config.get(key) {
            node.u64(ctx, true)?;
            ctx.warn(format!(
                "{}: {}: read but changes nothing: herdsim's calls have no size",
                ctx.file,
                node.path()
            ));
        }
    }
    if let Some(node) = config.get("timeout") {
        let us = duration(ctx, &node)?;
        if us == Micros::ZERO {
            return Err(ctx.error(
                &node,
                "a deadline of 0 fails every call: expected a duration above 0",
            ));
        }
        ctx.set(
            "deadline",
            herdsim(us),
            &[node.path()],
            format!(
                "timeout {} is the call's deadline over all its attempts (gRFC A6), not a \
                 per-attempt timeout: no attempt starts after it, and the call ends \
                 DEADLINE_EXCEEDED when it passes",
                node.str(ctx)?
            ),
        )?;
    }
    if let Some(hedging) = config.get("hedgingPolicy") {
        if config.get("retryPolicy").is_some() {
            return Err(ctx.error(
                &hedging,
                "a method with both retryPolicy and hedgingPolicy: gRFC A6 allows one, and \
                 grpc-java refuses both (RetriableStream): remove one",
            ));
        }
        return hedging_policy(ctx, &hedging, rejected_as);
    }
    let Some(policy) = config.get("retryPolicy") else {
        ctx.set(
            "max_attempts",
            "1",
            &[config.path()],
            "no retryPolicy: gRPC makes one attempt",
        )?;
        return Ok(());
    };
    policy.only(ctx, &RETRY)?;
    let field = |key: &str| {
        policy.get(key).ok_or_else(|| {
            ctx.error_at(
                &format!("{}.{key}", policy.path()),
                "missing: gRPC refuses a retryPolicy without it",
            )
        })
    };
    let attempts_node = field("maxAttempts")?;
    let attempts = go_int(ctx, &attempts_node)?;
    if attempts < 2 {
        return Err(ctx.error(
            &attempts_node,
            "must be above 1 (gRPC refuses the config): accepted 2 or more",
        ));
    }
    let capped = attempts.min(CLIENT_MAX_ATTEMPTS);
    let rule = if attempts > CLIENT_MAX_ATTEMPTS {
        format!(
            "maxAttempts {attempts} counts every attempt; gRPC's client caps it at 5 → max_attempts 5"
        )
    } else {
        format!(
            "maxAttempts {attempts} counts every attempt, the first included → max_attempts {attempts}"
        )
    };
    ctx.set(
        "max_attempts",
        capped.to_string(),
        &[attempts_node.path()],
        rule,
    )?;

    let initial = field("initialBackoff")?;
    let max = field("maxBackoff")?;
    let multiplier = field("backoffMultiplier")?;
    let (initial_us, max_us) = (duration(ctx, &initial)?, duration(ctx, &max)?);
    for (node, us) in [(&initial, initial_us), (&max, max_us)] {
        if us == Micros::ZERO {
            return Err(ctx.error(node, "must be above 0 (gRPC refuses the config)"));
        }
    }
    let m = multiplier.f64(ctx, false)?;
    if m <= 0.0 {
        return Err(ctx.error(&multiplier, "must be above 0 (gRPC refuses the config)"));
    }
    let paths = [initial.path(), max.path(), multiplier.path()];
    ctx.set(
        "policy",
        "grpc-retry",
        &paths,
        "retry n waits min(initialBackoff·backoffMultiplier^(n−1), maxBackoff)·U[0.8, 1.2], \
         the first retry jittered too (gRFC A6 since 2024; gRPC's C-core, grpc-go 1.69+, \
         grpc-java 1.80+)",
    )?;
    ctx.set(
        "base",
        herdsim(initial_us),
        &[initial.path()],
        "initialBackoff → base",
    )?;
    ctx.set(
        "cap",
        herdsim(max_us),
        &[max.path()],
        "maxBackoff → cap, applied before the ±20% jitter",
    )?;
    ctx.set(
        "multiplier",
        format!("{m}"),
        &[multiplier.path()],
        "backoffMultiplier → multiplier",
    )?;

    let codes_node = field("retryableStatusCodes")?;
    let mut codes = Vec::new();
    for item in codes_node.items(ctx)? {
        codes.push(code(ctx, &item)?);
    }
    if codes.is_empty() {
        return Err(ctx.error(
            &codes_node,
            "empty (gRPC refuses the config): list the codes to retry",
        ));
    }
    let (value, rule) = outcomes_of(&codes, rejected_as, "retried");
    ctx.set("retry_on", value, &[codes_node.path()], rule)?;
    Ok(())
}

/// The `retry_on` value of the status `codes` (retried, or non-fatal for
/// hedging: `what` says which) and its rule: herdsim's server failure is
/// UNAVAILABLE, a full queue's rejection `rejected_as`.
fn outcomes_of(codes: &[&str], rejected_as: &str, what: &str) -> (String, String) {
    let mut retried = Vec::new();
    if codes.contains(&"UNAVAILABLE") {
        retried.push("failure");
    }
    if codes.contains(&rejected_as) {
        retried.push("rejected");
    }
    let others: Vec<&str> = codes
        .iter()
        .copied()
        .filter(|c| *c != "UNAVAILABLE" && *c != rejected_as)
        .collect();
    let mut rule = format!(
        "herdsim's server failure is UNAVAILABLE, a full queue's rejection {rejected_as}; \
         {what}: {}",
        if retried.is_empty() {
            "neither".to_string()
        } else {
            retried.join(" and ")
        }
    );
    if !others.is_empty() {
        rule += &format!(" ({} never come from herdsim's server)", others.join(", "));
    }
    let value = if retried.is_empty() {
        "none".to_string()
    } else {
        retried.join("+")
    };
    (value, rule)
}

/// A method's `hedgingPolicy`, as grpc-java reads it (the module's notes).
fn hedging_policy(
    ctx: &Context<'_>,
    policy: &Node<'_>,
    rejected_as: &str,
) -> Result<(), ImportError> {
    policy.only(ctx, &HEDGING)?;
    let field = |key: &str, why: &str| {
        policy.get(key).ok_or_else(|| {
            ctx.error_at(
                &format!("{}.{key}", policy.path()),
                format!("missing: {why}"),
            )
        })
    };
    let attempts_node = field(
        "maxAttempts",
        "gRPC refuses a hedgingPolicy without it (grpc-java: \"maxAttempts cannot be empty\")",
    )?;
    let attempts = java_int(ctx, &attempts_node)?;
    if attempts < 2 {
        return Err(ctx.error(
            &attempts_node,
            "must be above 1 (gRPC refuses the config): accepted 2 or more",
        ));
    }
    let capped = attempts.min(CLIENT_MAX_ATTEMPTS);
    let rule = if attempts > CLIENT_MAX_ATTEMPTS {
        format!(
            "maxAttempts {attempts} counts every copy; grpc-java's client caps it at 5 \
             (maxHedgedAttempts) → max_attempts 5"
        )
    } else {
        format!(
            "maxAttempts {attempts} counts every copy, the first included → max_attempts {attempts}"
        )
    };
    ctx.set(
        "max_attempts",
        capped.to_string(),
        &[attempts_node.path()],
        rule,
    )?;
    let delay_node = field(
        "hedgingDelay",
        "grpc-java refuses a hedgingPolicy without it (\"hedgingDelay cannot be empty\"), though \
         gRFC A6 says unset means 0s: give \"0s\" to send every copy at once",
    )?;
    let delay_us = duration(ctx, &delay_node)?;
    ctx.set(
        "hedge_delay",
        herdsim(delay_us),
        &[delay_node.path()],
        format!(
            "hedgingDelay {}: the first copy goes at once, another every {} while none has \
             answered (a non-fatal failure does not send the next early: grpc-java does so \
             only on a server's pushback, which herdsim's server never sends); the first \
             success wins, the others are abandoned, and herdsim's server still serves them",
            delay_node.str(ctx)?,
            herdsim(delay_us)
        ),
    )?;
    let mut codes = Vec::new();
    let codes_node = policy.get("nonFatalStatusCodes");
    if let Some(node) = &codes_node {
        for item in node.items(ctx)? {
            let c = code(ctx, &item)?;
            if c == "OK" {
                return Err(ctx.error(&item, "must not contain OK (gRPC refuses the config)"));
            }
            codes.push(c);
        }
    }
    let (value, mut rule) = outcomes_of(&codes, rejected_as, "non-fatal");
    rule += "; any other failure is fatal: it fails the call at once";
    let from = codes_node.as_ref().map_or(policy.path(), |n| n.path());
    ctx.set("retry_on", value, &[from], rule)?;
    Ok(())
}

fn retry_throttling(ctx: &Context<'_>, node: &Node<'_>) -> Result<(), ImportError> {
    node.only(ctx, &["maxTokens", "tokenRatio"])?;
    let field = |key: &str| {
        node.get(key).ok_or_else(|| {
            ctx.error_at(
                &format!("{}.{key}", node.path()),
                "missing: gRPC needs both maxTokens and tokenRatio",
            )
        })
    };
    let (max_node, ratio_node) = (field("maxTokens")?, field("tokenRatio")?);
    let (max, ratio) = (max_node.f64(ctx, false)?, ratio_node.f64(ctx, false)?);
    if !(max > 0.0 && max <= 1000.0) {
        return Err(ctx.error(
            &max_node,
            "out of range: gRPC accepts above 0, at most 1000",
        ));
    }
    if ratio <= 0.0 {
        return Err(ctx.error(&ratio_node, "must be above 0 (gRPC refuses the config)"));
    }
    // Thousandths, truncated as grpc-java does.
    let milli = |x: f64| (x * 1000.0 + 1e-9).floor() / 1000.0;
    let (max_kept, ratio_kept) = (milli(max), milli(ratio));
    if ratio_kept <= 0.0 {
        return Err(ctx.error(
            &ratio_node,
            "is 0 in thousandths of a token, gRPC's resolution: expected at least 0.001",
        ));
    }
    let mut rule = format!(
        "tokens start at maxTokens {max_kept}; a failed attempt takes 1, a success adds {ratio_kept}; \
         no retry while tokens ≤ {}",
        max_kept / 2.0
    );
    if max_kept != max || ratio_kept != ratio {
        rule += " (kept in thousandths of a token, as gRPC does)";
    }
    ctx.set(
        "budget",
        format!("grpc:{max_kept},ratio:{ratio_kept}"),
        &[max_node.path(), ratio_node.path()],
        rule,
    )?;
    ctx.set(
        "fleet",
        "1",
        &[node.path()],
        "retryThrottling is kept per channel: each source (a client's channel) has its own tokens",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};

    fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("g.json", text, select)
    }

    /// gRFC A6's example service config ("Retry Policy" and "Throttling
    /// Configuration" sections), as one file.
    const A6_EXAMPLE: &str = r#"{
      "loadBalancingPolicy": "round_robin",
      "methodConfig": [
        {
          "name": [{"service": "grpc.testing.TestService", "method": "EmptyCall"}],
          "timeout": "10s",
          "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": "0.1s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"]
          }
        }
      ],
      "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
    }"#;

    #[test]
    fn grfc_a6s_example_is_its_policy_deadline_and_throttle() {
        let got = read(A6_EXAMPLE).unwrap();
        let value = |k| got.value(k).unwrap_or("-").to_string();
        assert_eq!(value("max_attempts"), "4");
        assert_eq!(value("policy"), "grpc-retry");
        assert_eq!(
            (value("base"), value("cap"), value("multiplier")),
            ("100ms".into(), "1s".into(), "2".into())
        );
        assert_eq!(value("deadline"), "10s");
        assert_eq!(value("retry_on"), "failure");
        assert_eq!(value("budget"), "grpc:10,ratio:0.1");
        assert_eq!(value("fleet"), "1");
        assert!(
            got.value("timeout").is_none(),
            "gRPC has no per-attempt timeout"
        );
        assert!(
            got.warnings[0].contains("loadBalancingPolicy"),
            "{:?}",
            got.warnings
        );
    }

    #[test]
    fn max_attempts_counts_every_attempt_and_grpc_caps_it_at_five() {
        let config = |n: u64| {
            format!(
                r#"{{"methodConfig": [{{"name": [{{}}], "retryPolicy": {{"maxAttempts": {n},
                "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 1.5,
                "retryableStatusCodes": [14, "RESOURCE_EXHAUSTED"]}}}}]}}"#
            )
        };
        assert_eq!(read(&config(3)).unwrap().value("max_attempts"), Some("3"));
        let seven = read(&config(7)).unwrap();
        assert_eq!(seven.value("max_attempts"), Some("5"));
        assert!(
            seven
                .settings
                .iter()
                .any(|s| s.rule.contains("caps it at 5"))
        );
        assert_eq!(seven.value("retry_on"), Some("failure+rejected"));
        assert!(
            read(&config(1))
                .unwrap_err()
                .contains("maxAttempts: must be above 1")
        );
    }

    /// gRFC A6's hedging example ("Hedging Policy"), with a deadline: the
    /// throttle needs one (see [`crate::model::hedging`]).
    const A6_HEDGING: &str = r#"{
      "methodConfig": [{
        "name": [{"service": "grpc.testing.TestService"}],
        "timeout": "2s",
        "hedgingPolicy": {
          "maxAttempts": 4,
          "hedgingDelay": "0.5s",
          "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL", "ABORTED"]
        }
      }],
      "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
    }"#;

    #[test]
    fn a_hedging_policy_is_hedged_copies_of_its_delay_and_non_fatal_codes() {
        let got = read(A6_HEDGING).unwrap();
        let value = |k| got.value(k).unwrap_or("-").to_string();
        assert_eq!(value("max_attempts"), "4");
        assert_eq!(value("hedge_delay"), "500ms");
        // UNAVAILABLE is herdsim's failure; a full queue's RESOURCE_EXHAUSTED
        // is not listed, so a rejection is fatal.
        assert_eq!(value("retry_on"), "failure");
        assert_eq!(value("deadline"), "2s");
        assert_eq!(value("budget"), "grpc:10,ratio:0.1");
        assert_eq!(value("policy"), "-", "hedging has no backoff");
        let rule = |k: &str| {
            got.settings
                .iter()
                .find(|s| s.key == k)
                .map(|s| s.rule.clone())
                .unwrap()
        };
        assert!(
            rule("retry_on").contains("INTERNAL, ABORTED never come"),
            "{}",
            rule("retry_on")
        );
        assert!(rule("hedge_delay").contains("pushback"));
        // Capped at 5 as grpc-java's maxHedgedAttempts; 0s sends all at once;
        // no nonFatalStatusCodes: every failure is fatal.
        let text = r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 9, "hedgingDelay": "0s"}}]}"#;
        let got = read(text).unwrap();
        assert_eq!(got.value("max_attempts"), Some("5"));
        assert_eq!(got.value("hedge_delay"), Some("0us"));
        assert_eq!(got.value("retry_on"), Some("none"));
        assert!(
            read(&text.replace('9', "1"))
                .unwrap_err()
                .contains("must be above 1")
        );
    }

    #[test]
    fn the_method_is_looked_up_as_grpc_does() {
        let text = r#"{"methodConfig": [
            {"name": [{}], "timeout": "1s"},
            {"name": [{"service": "a.S"}], "timeout": "2s"},
            {"name": [{"service": "a.S", "method": "M"}], "timeout": "3s"}]}"#;
        assert_eq!(read(text).unwrap().value("deadline"), Some("1s"));
        assert_eq!(
            read_with(text, &[("method", "a.S/M")])
                .unwrap()
                .value("deadline"),
            Some("3s")
        );
        assert_eq!(
            read_with(text, &[("method", "a.S/N")])
                .unwrap()
                .value("deadline"),
            Some("2s")
        );
        assert_eq!(
            read_with(text, &[("method", "b.T/M")])
                .unwrap()
                .value("deadline"),
            Some("1s")
        );
        let no_default =
            r#"{"methodConfig": [{"name": [{"service": "a"}]}, {"name": [{"service": "b"}]}]}"#;
        let err = read(no_default).unwrap_err();
        assert!(
            err.contains("--select method=SERVICE/METHOD; the names are a/, b/"),
            "{err}"
        );
    }

    #[test]
    fn bad_fields_are_refused_naming_the_path_and_the_accepted_values() {
        let cases = [
            (
                r#"{"methodConfig": [{"name": [{}], "timeout": "100ms"}]}"#,
                "g.json: methodConfig[0].timeout: \"100ms\" is not a protobuf JSON duration",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "timeout": 1}]}"#,
                "methodConfig[0].timeout: expected a string, found the number 1",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttemps": 3}}]}"#,
                "methodConfig[0].retryPolicy.maxAttemps: unknown field: expected one of maxAttempts",
            ),
            (
                r#"{"retryThrottling": {"maxTokens": 1001, "tokenRatio": 0.1}}"#,
                "retryThrottling.maxTokens: out of range: gRPC accepts above 0, at most 1000",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {}}]}"#,
                "methodConfig[0].hedgingPolicy.maxAttempts: missing",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 2}}]}"#,
                "methodConfig[0].hedgingPolicy.hedgingDelay: missing: grpc-java refuses",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "1s", "nonFatalStatusCodes": ["OK"]}}]}"#,
                "nonFatalStatusCodes[0]: must not contain OK",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "1s", "maxBackoff": "1s"}}]}"#,
                "hedgingPolicy.maxBackoff: unknown field",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "1s"}, "retryPolicy": {}}]}"#,
                "methodConfig[0].hedgingPolicy: a method with both retryPolicy and hedgingPolicy",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "waitForReady": true}]}"#,
                "methodConfig[0].waitForReady: not modelled",
            ),
            (
                r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVALABLE"]}}]}"#,
                "retryableStatusCodes[0]: not a gRPC status code",
            ),
        ];
        for (text, expected) in cases {
            let err = read(text).unwrap_err();
            assert!(err.contains(expected), "{err}\nwanted: {expected}");
            assert!(!err.contains('\n'), "one line: {err}");
        }
    }
}
