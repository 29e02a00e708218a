//! The profile's `retryBudget`, as the controller sends it
//! (`defaultRetryBudget()` when absent; all three fields or none) and as
//! the proxy keeps it (`convert_retry_budget`: a budget it would discard is
//! refused).

use super::go_duration;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// The budget as the proxy builds it.
pub(super) struct Budget {
    pub(super) ratio: f64,
    pub(super) min_per_s: u64,
    pub(super) ttl_us: u64,
    /// The fields it came from (the `retryBudget` itself if given).
    pub(super) from: Vec<String>,
}

/// Reads `retryBudget` (`None`: absent, the controller's default).
pub(super) fn read_budget(
    ctx: &Context<'_>,
    node: Option<Node<'_>>,
) -> Result<Budget, ImportError> {
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

#[cfg(test)]
mod tests {
    use crate::import::linkerd::tests::{ROUTE, profile, read};

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
}
