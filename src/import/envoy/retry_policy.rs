//! Envoy's `RetryPolicy` (a route's or virtual host's `retry_policy`):
//! `num_retries`, `retry_on` read against what herdsim's server answers,
//! `retry_back_off` and `per_try_timeout`.

use super::{duration, refuse, uint32};
use crate::base::time::{Micros, US_PER_MS};
use crate::import::durations::herdsim;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// `upstream.base_retry_backoff_ms`'s default (`RetryStateImpl`).
const DEFAULT_BASE_MS: u64 = 25;

pub(super) const RETRY_POLICY_FIELDS: [&str; 13] = [
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

/// What herdsim's server answers, as Envoy's `retry_on` sees it.
pub(super) struct Answers {
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
pub(super) fn answers(ctx: &Context<'_>) -> Result<Answers, ImportError> {
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
pub(super) fn read_retry_policy(
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
            if base_us == Micros::ZERO {
                return Err(ctx.error(&base_node, "must be above 0 (Envoy refuses 0s)"));
            }
            let base_ms = (base_us / US_PER_MS).max(1);
            let (max_ms, mut paths) = match back_off.get("max_interval") {
                Some(node) => {
                    let us = duration(ctx, &node)?;
                    if us == Micros::ZERO {
                        return Err(ctx.error(&node, "must be above 0 (Envoy refuses 0s)"));
                    }
                    let ms = (us / US_PER_MS).max(1);
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
            let rounded =
                base_us % Micros::from_ms(1) != Micros::ZERO || base_us < Micros::from_ms(1);
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
    ctx.set("base", herdsim(base_ms * US_PER_MS), &paths[..1], rule.0)?;
    ctx.set(
        "cap",
        herdsim(max_ms * US_PER_MS),
        &paths[paths.len() - 1..],
        rule.1,
    )?;

    if let Some(node) = policy.get("per_try_timeout") {
        let ms = duration(ctx, &node)? / US_PER_MS;
        if ms > 0 {
            let what = if hedged {
                "Envoy keeps the attempt: hedge_on_per_try_timeout"
            } else {
                "Envoy resets the upstream stream; herdsim's server keeps working on it"
            };
            ctx.set(
                "timeout",
                herdsim(ms * US_PER_MS),
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

#[cfg(test)]
mod tests {
    use crate::import::envoy::tests::{ROUTE_CONFIG, read, read_with, value};

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
}
