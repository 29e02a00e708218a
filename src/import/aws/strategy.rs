//! The retry strategy the resolved settings make, as herdsim's parameters:
//! legacy (`retryhandler.py`, `_retry.json`), standard and adaptive under
//! the 2.0 and the 2026 behaviours: the backoff policy, its base and cap,
//! the retry quota and adaptive's client rate limiter.

use super::{Behaviour, Resolved};
use crate::base::time::Micros;
use crate::import::{Context, ImportError};

/// Sets herdsim's parameters for the resolved settings.
pub(super) fn set_strategy(ctx: &Context<'_>, resolved: Resolved) -> Result<(), ImportError> {
    let Resolved {
        behaviour,
        mode,
        mode_from,
        mode_rule,
        dynamodb,
        dynamodb_2026,
        attempts,
        attempts_from,
        attempts_rule,
    } = resolved;
    let paths = |found: &str| -> Vec<String> {
        if found.is_empty() {
            Vec::new()
        } else {
            vec![found.to_string()]
        }
    };
    let mode_paths = paths(&mode_from);
    let mode_refs: Vec<&str> = mode_paths.iter().map(String::as_str).collect();
    let attempt_paths = paths(&attempts_from);
    let attempt_refs: Vec<&str> = attempt_paths.iter().map(String::as_str).collect();

    ctx.set(
        "resource",
        "server",
        &[],
        "an SDK's config describes a client of a service: herdsim's server model",
    )?;
    ctx.set(
        "max_attempts",
        attempts.to_string(),
        &attempt_refs,
        attempts_rule,
    )?;
    ctx.set(
        "retry_on",
        "failure+rejected+timeout",
        &mode_refs,
        "every mode retries transient errors (5xx: a server failure), throttling errors \
         (429, SlowDown: herdsim's rejection at a full queue) and connect and read timeouts \
         (an attempt's timeout)",
    )?;
    match mode.as_str() {
        "legacy" if dynamodb => {
            // 0.05·2^(n−1) s before retry n, no jitter, uncapped: the
            // largest delay the attempts reach is the cap, so it never binds.
            let largest = 50_000u128 << attempts.saturating_sub(2).min(100);
            ctx.set(
                "policy",
                "none",
                &mode_refs,
                format!("{mode_rule}, DynamoDB: 0.05·2^(n−1) s before retry n, no jitter → none"),
            )?;
            ctx.set("base", "50ms", &mode_refs, "legacy DynamoDB's base 0.05 s")?;
            ctx.set(
                "cap",
                cap_text(largest),
                &attempt_refs,
                "legacy has no cap: the largest delay max_attempts reaches, so none binds",
            )?;
        }
        "legacy" => {
            let largest = 1_000_000u128 << attempts.saturating_sub(2).min(100);
            ctx.set(
                "policy",
                "full",
                &mode_refs,
                format!("{mode_rule}: rand()·2^(n−1) s before retry n, uncapped, no quota → full"),
            )?;
            ctx.set(
                "base",
                "1s",
                &mode_refs,
                "legacy's base: rand() seconds before the first retry",
            )?;
            ctx.set(
                "cap",
                cap_text(largest),
                &attempt_refs,
                "legacy has no cap: the largest ceiling max_attempts reaches, so none binds",
            )?;
        }
        _ if behaviour == Behaviour::V2026 => {
            let (base, base_rule) = if dynamodb_2026 {
                (
                    "25ms",
                    "DynamoDB's non_throttling_base_scale 0.025 s (_SERVICE_BACKOFF_CONFIG): the \
                     ceiling of the first retry after an error reply or a timeout",
                )
            } else {
                (
                    "50ms",
                    "non_throttling_base_scale 0.05 s (_DEFAULT_BACKOFF_CONFIG): the ceiling of \
                     the first retry after an error reply or a timeout",
                )
            };
            ctx.set(
                "policy",
                "aws-2026",
                &mode_refs,
                format!(
                    "{mode_rule}, behaviour 2026: rand()·min(scale·2^(n−1), 20) s, scale by \
                     whether the failure was a throttle → aws-2026 (x-amz-retry-after, \
                     which clamps the delay into [t, t + 5 s], is not modelled: herdsim's \
                     server sends no retry hint, as a server without the header)"
                ),
            )?;
            ctx.set("base", base, &mode_refs, base_rule)?;
            ctx.set(
                "throttle_base",
                "1s",
                &mode_refs,
                "throttling_base_scale 1 s (_DEFAULT_BACKOFF_CONFIG, DynamoDB's too): the \
                 ceiling of the first retry after a throttle (herdsim's rejection at a full \
                 queue)",
            )?;
            ctx.set(
                "cap",
                "20s",
                &mode_refs,
                "standard's cap (_MAX_BACKOFF 20 s), on the ceiling before the draw",
            )?;
            ctx.set(
                "budget",
                "tokens:500,cost:14,refund:1,throttle-cost:5",
                &mode_refs,
                "the retry quota (quota.py, RetryQuotaChecker under the 2026 behaviour): 500 \
                 tokens, a retry 14 (_RETRY_COST_V2, timeouts too), after a throttle 5 \
                 (_THROTTLING_RETRY_COST), a first-try success adds 1, a retry's success \
                 returns its cost",
            )?;
            if mode == "adaptive" {
                ctx.set(
                    "throttle",
                    "aws-adaptive:0.4,beta:0.7",
                    &mode_refs,
                    "adaptive adds the client rate limiter, unchanged in 2026 (throttling.py: \
                     CUBIC, scale 0.4, beta 0.7)",
                )?;
            }
        }
        _ => {
            ctx.set(
                "policy",
                "full",
                &mode_refs,
                format!("{mode_rule}, behaviour 2.0: rand()·min(2^(n−1), 20) s → full"),
            )?;
            ctx.set(
                "base",
                "1s",
                &mode_refs,
                "standard's base 1 s (ExponentialBackoff, _BASE 2)",
            )?;
            ctx.set(
                "cap",
                "20s",
                &mode_refs,
                "standard's cap (_MAX_BACKOFF 20 s)",
            )?;
            ctx.set(
                "budget",
                "tokens:500,cost:5,refund:1,timeout-cost:10",
                &mode_refs,
                "the retry quota (quota.py, RetryQuotaChecker): 500 tokens, a retry 5, after a \
                 timeout 10, a first-try success adds 1, a retry's success returns its cost",
            )?;
            if mode == "adaptive" {
                ctx.set(
                    "throttle",
                    "aws-adaptive:0.4,beta:0.7",
                    &mode_refs,
                    "adaptive adds the client rate limiter (throttling.py: CUBIC, scale 0.4, \
                     beta 0.7)",
                )?;
            }
        }
    }
    Ok(())
}

/// A cap of `us` µs as herdsim writes a duration.
fn cap_text(us: u128) -> String {
    match u64::try_from(us) {
        Ok(us) if us < u64::MAX / 2 => crate::import::durations::herdsim(Micros::from_ticks(us)),
        _ => "1000000000s".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::import::aws::tests::{FILE, ok};

    #[test]
    fn standard_2_0_is_full_jitter_1s_20s_and_the_500_token_quota() {
        let got = ok(FILE, &[], &[]);
        assert_eq!(got.value("policy"), Some("full"));
        assert_eq!(got.value("base"), Some("1s"));
        assert_eq!(got.value("cap"), Some("20s"));
        // DEFAULT_MAX_ATTEMPTS = 3 (standard.py).
        assert_eq!(got.value("max_attempts"), Some("3"));
        // quota.py INITIAL_CAPACITY 500; RetryQuotaChecker _RETRY_COST 5,
        // _TIMEOUT_RETRY_REQUEST 10, _NO_RETRY_INCREMENT 1.
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:5,refund:1,timeout-cost:10")
        );
        assert_eq!(got.value("throttle"), None);
        assert!(
            got.files[0]
                .2
                .contains("behaviour 2.0 (--select sdk=botocore==1.43.67; the 1.43 line's default"),
            "{:?}",
            got.files
        );
    }

    #[test]
    fn legacy_is_botocores_retry_json() {
        let text = "[default]\nretry_mode = legacy\n";
        let got = ok(text, &[], &[]);
        // _retry.json __default__: max_attempts 5, base "rand", growth 2.
        assert_eq!(got.value("max_attempts"), Some("5"));
        assert_eq!(got.value("policy"), Some("full"));
        assert_eq!(got.value("cap"), Some("8s"));
        // dynamodb: max_attempts 10, base 0.05, growth 2 (no rand).
        let ddb = ok(text, &[("service", "dynamodb")], &[]);
        assert_eq!(ddb.value("max_attempts"), Some("10"));
        assert_eq!(ddb.value("policy"), Some("none"));
        assert_eq!(ddb.value("base"), Some("50ms"));
        assert_eq!(ddb.value("cap"), Some("12.8s"));
    }

    #[test]
    fn standard_2026_is_aws_2026_on_botocores_scales_and_the_14_5_quota() {
        let got = ok(FILE, &[("behaviour", "2026")], &[]);
        assert_eq!(got.value("policy"), Some("aws-2026"));
        // _DEFAULT_BACKOFF_CONFIG: non_throttling_base_scale 0.05,
        // throttling_base_scale 1; _MAX_BACKOFF 20.
        assert_eq!(got.value("base"), Some("50ms"));
        assert_eq!(got.value("throttle_base"), Some("1s"));
        assert_eq!(got.value("cap"), Some("20s"));
        // DEFAULT_MAX_ATTEMPTS 3.
        assert_eq!(got.value("max_attempts"), Some("3"));
        // INITIAL_CAPACITY 500, _RETRY_COST_V2 14, _THROTTLING_RETRY_COST 5,
        // _NO_RETRY_INCREMENT 1, no timeout cost of its own.
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:14,refund:1,throttle-cost:5")
        );
        assert_eq!(got.value("throttle"), None);
        assert_eq!(got.value("retry_on"), Some("failure+rejected+timeout"));
        let toml = crate::import::to_toml(&got, "herdsim import config");
        assert!(toml.contains("x-amz-retry-after"), "{toml}");
        assert!(toml.contains("_THROTTLING_RETRY_COST"), "{toml}");
    }

    #[test]
    fn adaptive_2026_adds_the_same_cubic_limiter() {
        let got = ok(FILE, &[("behaviour", "2026"), ("profile", "batch")], &[]);
        assert_eq!(got.value("policy"), Some("aws-2026"));
        assert_eq!(got.value("max_attempts"), Some("7"));
        assert_eq!(got.value("throttle"), Some("aws-adaptive:0.4,beta:0.7"));
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:14,refund:1,throttle-cost:5")
        );
    }

    #[test]
    fn dynamodb_2026_has_a_25ms_base_and_4_attempts_unless_set() {
        for service in ["dynamodb", "dynamodb-streams"] {
            let got = ok(FILE, &[("behaviour", "2026"), ("service", service)], &[]);
            // _SERVICE_BACKOFF_CONFIG: non_throttling_base_scale 0.025;
            // throttles keep throttling_base_scale 1.
            assert_eq!(got.value("base"), Some("25ms"), "{service}");
            assert_eq!(got.value("throttle_base"), Some("1s"), "{service}");
            // _SERVICE_MAX_ATTEMPTS: 4 when max_attempts is unset.
            assert_eq!(got.value("max_attempts"), Some("4"), "{service}");
            let set = ok(
                FILE,
                &[("behaviour", "2026"), ("service", service)],
                &[("AWS_MAX_ATTEMPTS", "2")],
            );
            assert_eq!(set.value("max_attempts"), Some("2"));
            assert_eq!(set.value("base"), Some("25ms"));
        }
        // Under 2.0 DynamoDB's standard mode is everyone's.
        let v2 = ok(FILE, &[("service", "dynamodb")], &[]);
        assert_eq!(v2.value("max_attempts"), Some("3"));
        assert_eq!(v2.value("base"), Some("1s"));
        // Another service is the default; legacy Streams is _retry.json's
        // __default__ (its endpoint prefix is streams.dynamodb).
        let s3 = ok(FILE, &[("behaviour", "2026"), ("service", "s3")], &[]);
        assert_eq!(s3.value("base"), Some("50ms"));
        let streams = ok(
            "[default]\nretry_mode = legacy\n",
            &[("behaviour", "2026"), ("service", "dynamodb-streams")],
            &[],
        );
        assert_eq!(streams.value("max_attempts"), Some("5"));
        assert_eq!(streams.value("policy"), Some("full"));
    }
}
