//! resilience4j's TimeLimiter (`resilience4j.timelimiter`), read as
//! resilience4j-framework-common's `CommonTimeLimiterConfigurationProperties`
//! builds its config (v2.4.0-16-gaf9e7c9).
//!
//! - `timeoutDuration` (1s by default, `TimeLimiterConfig`) is herdsim's
//!   per-attempt timeout: Spring's TimeLimiter aspect (order
//!   `LOWEST_PRECEDENCE − 1`) is inside the Retry aspect (`− 4`) and the
//!   CircuitBreaker aspect (`− 3`), so it times each attempt and the
//!   breaker counts a timed-out attempt. Orders that put it outside either
//!   are refused: the timeout would then bound the whole retried call, or
//!   pass the breaker by.
//! - `cancelRunningFuture` (true by default) is read and said: it cancels
//!   the caller's future, not the server's work, and herdsim's timeouts
//!   never cancel the server's work, so either value is the same run.
//! - Inheritance as `createTimeLimiterConfig` does it: an instance's
//!   `baseConfig` (followed, each base built the same way), else
//!   `configs.default`; each field the instance sets replaces the base's.
//!   A missing instance is built from `configs.default` or the defaults.
//! - The aspect times methods that return a `CompletionStage` (Spring
//!   refuses it on others); herdsim's attempts are those calls.

use std::collections::BTreeMap;

use super::{Section, boolean, duration, fields};
use crate::base::time::Micros;
use crate::import::durations::herdsim;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// `CommonTimeLimiterConfigurationProperties.InstanceProperties`' fields.
const FIELDS: [&str; 4] = [
    "timeoutDuration",
    "cancelRunningFuture",
    "eventConsumerBufferSize",
    "baseConfig",
];

/// `TimeLimiterConfig`'s default timeout, 1 s, in µs.
const DEFAULT_TIMEOUT_US: Micros = Micros::from_s(1);

/// A built TimeLimiter config, with the fields it came from.
struct Built {
    timeout_us: Micros,
    timeout_from: Option<String>,
    cancel: bool,
    cancel_from: Option<String>,
}

/// Sets herdsim's timeout from the time limiter `name` (`props`: its
/// instance, if configured), checking the aspect orders against the retry
/// and breaker sections.
pub(super) fn read_time_limiter<'a>(
    ctx: &Context<'a>,
    section: &Section<'a>,
    around: [Option<&Section<'a>>; 2],
    name: &str,
    props: Option<Node<'a>>,
) -> Result<(), ImportError> {
    check_order(ctx, section, around)?;
    let built = build(ctx, section, name, props.as_ref(), &mut Vec::new())?;
    let (timeout_from, what) = match &built.timeout_from {
        Some(path) => (vec![path.as_str()], "timeoutDuration".to_string()),
        None => (
            vec![],
            "resilience4j's default timeoutDuration, 1s,".to_string(),
        ),
    };
    let cancel = match &built.cancel_from {
        Some(_) => format!("cancelRunningFuture {}", built.cancel),
        None => "cancelRunningFuture (true by default)".to_string(),
    };
    let mut from = timeout_from;
    from.extend(built.cancel_from.as_deref());
    ctx.set(
        "timeout",
        herdsim(built.timeout_us),
        &from,
        format!(
            "{what} → timeout of each attempt (the TimeLimiter aspect is inside the Retry's, so \
             it times every attempt); {cancel} cancels the caller's future only: herdsim's \
             timeouts never cancel the server's work"
        ),
    )
}

/// Refuses aspect orders that put the TimeLimiter outside the Retry or the
/// CircuitBreaker (a lower order value is the outer aspect; equal orders
/// are read as the TimeLimiter outside, as the breaker's reader reads them).
fn check_order(
    ctx: &Context<'_>,
    section: &Section<'_>,
    [retry, breaker]: [Option<&Section<'_>>; 2],
) -> Result<(), ImportError> {
    const LOWEST: i64 = i32::MAX as i64;
    let own = section.order.as_ref().map_or(LOWEST - 1, |o| o.0);
    let outside = |other: Option<&Section<'_>>, default: i64| {
        other.is_some_and(|s| s.order.as_ref().map_or(default, |o| o.0) >= own)
    };
    let place = || {
        [Some(section), retry, breaker]
            .into_iter()
            .flatten()
            .filter_map(|s| s.order.as_ref().map(|o| o.1.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if outside(retry, LOWEST - 4) {
        return Err(ctx.error_at(
            &place(),
            "not modelled: the TimeLimiter aspect is outside the Retry aspect (the orders \
             given), so its timeout bounds the whole retried call; herdsim's timeout is per \
             attempt (keep Spring's orders, or give the whole call's bound as --deadline)",
        ));
    }
    if outside(breaker, LOWEST - 3) {
        return Err(ctx.error_at(
            &place(),
            "not modelled: the TimeLimiter aspect is outside the CircuitBreaker aspect (the \
             orders given), so the breaker would not count a timed-out call; herdsim's breaker \
             counts every timeout (keep Spring's orders)",
        ));
    }
    Ok(())
}

/// `createTimeLimiterConfig` and `buildConfig`, as the Java does them.
fn build<'a>(
    ctx: &Context<'a>,
    section: &Section<'a>,
    name: &str,
    props: Option<&Node<'a>>,
    visiting: &mut Vec<String>,
) -> Result<Built, ImportError> {
    if visiting.iter().any(|v| v == name) {
        return Err(ctx.error(
            &section.node,
            format!(
                "baseConfig cycle through {} and {name}",
                visiting.join(", ")
            ),
        ));
    }
    visiting.push(name.to_string());
    let own: Option<BTreeMap<&'static str, Node<'a>>> =
        props.map(|n| fields(ctx, n, &FIELDS)).transpose()?;
    let base = match own.as_ref().and_then(|o| o.get("baseConfig")) {
        Some(bc_node) => {
            let bc = bc_node.str(ctx)?;
            let base_node = section.config(bc).ok_or_else(|| {
                ctx.error(
                    bc_node,
                    format!("no configs.{bc}: resilience4j throws ConfigurationNotFoundException"),
                )
            })?;
            Some(build(ctx, section, bc, Some(base_node), visiting)?)
        }
        None if name != "default" && section.config("default").is_some() => Some(build(
            ctx,
            section,
            "default",
            section.config("default"),
            visiting,
        )?),
        None => None,
    };
    visiting.pop();
    let mut built = base.unwrap_or(Built {
        timeout_us: DEFAULT_TIMEOUT_US,
        timeout_from: None,
        cancel: true,
        cancel_from: None,
    });
    let Some(own) = own else {
        return Ok(built);
    };
    if let Some(node) = own.get("timeoutDuration") {
        built.timeout_us = duration(ctx, node)?;
        built.timeout_from = Some(node.path().to_string());
    }
    if let Some(node) = own.get("cancelRunningFuture") {
        built.cancel = boolean(ctx, node)?;
        built.cancel_from = Some(node.path().to_string());
    }
    if let Some(node) = own.get("eventConsumerBufferSize") {
        let n = node.u64(ctx, true)?;
        if !(1..=i32::MAX as u64).contains(&n) {
            return Err(ctx.error(node, "out of range: accepted 1 to 2147483647"));
        }
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    use crate::import::{Imported, import_one};

    fn read(text: &str) -> Result<Imported, String> {
        import_one("application.yml", text, &[])
    }

    fn timeout(got: &Imported) -> &str {
        got.value("timeout").unwrap_or("-")
    }

    #[test]
    fn timeout_duration_is_the_timeout_of_each_attempt() {
        let got = read(
            "resilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 4\n  \
             timelimiter:\n    instances:\n      a:\n        timeoutDuration: 2s\n        \
             cancelRunningFuture: false\n",
        )
        .unwrap();
        assert_eq!(timeout(&got), "2s");
        assert_eq!(got.value("max_attempts"), Some("4"));
        let setting = got.settings.iter().find(|s| s.key == "timeout").unwrap();
        assert_eq!(
            setting.from,
            "application.yml: resilience4j.timelimiter.instances.a.timeoutDuration, \
             resilience4j.timelimiter.instances.a.cancelRunningFuture"
        );
        assert!(
            setting.rule.contains("cancelRunningFuture false")
                && setting.rule.contains("never cancel the server's work"),
            "{}",
            setting.rule
        );
        // An instance that sets nothing: TimeLimiterConfig's 1 s.
        let got = read("resilience4j:\n  timelimiter:\n    instances:\n      a: {}\n").unwrap();
        assert_eq!(timeout(&got), "1s");
        // application.properties, ISO-8601.
        let got = import_one(
            "application.properties",
            "resilience4j.timelimiter.instances.a.timeout-duration=PT0.25S\n",
            &[],
        )
        .unwrap();
        assert_eq!(timeout(&got), "250ms");
    }

    #[test]
    fn inheritance_is_create_time_limiter_configs() {
        let text = "resilience4j:
  timelimiter:
    configs:
      default:
        timeoutDuration: 3s
      slow:
        timeoutDuration: 5s
      quiet:
        cancelRunningFuture: false
    instances:
      a:
        baseConfig: slow
      b:
        cancelRunningFuture: false
      c:
        baseConfig: quiet
";
        let with = |name: &str| import_one("application.yml", text, &[("instance", name)]);
        // baseConfig's own timeout; else configs.default's, through a base
        // that sets none (a base is built with configs.default under it).
        assert_eq!(timeout(&with("a").unwrap()), "5s");
        assert_eq!(timeout(&with("b").unwrap()), "3s");
        assert_eq!(timeout(&with("c").unwrap()), "3s");
        // An instance the file lacks: configs.default, with a warning.
        let got = with("d").unwrap();
        assert_eq!(timeout(&got), "3s");
        assert!(got.warnings.iter().any(|w| w.contains("no instance 'd'")));
        // Without instances, the retry's instance name, built from
        // configs.default.
        let got = read(
            "resilience4j:\n  retry:\n    instances:\n      backend:\n        maxAttempts: 2\n  \
             timelimiter:\n    configs:\n      default:\n        timeoutDuration: 800ms\n",
        )
        .unwrap();
        assert_eq!(timeout(&got), "800ms");
        assert!(
            got.files[0].2.contains("timelimiter instance backend"),
            "{:?}",
            got.files
        );
    }

    #[test]
    fn what_cannot_be_a_per_attempt_timeout_is_refused_with_its_path() {
        let err = read(
            "resilience4j:\n  retry:\n    retryAspectOrder: 5\n    instances:\n      a: {}\n  \
             timelimiter:\n    timeLimiterAspectOrder: 1\n    instances:\n      a: {}\n",
        )
        .unwrap_err();
        assert!(
            err.starts_with(
                "application.yml: resilience4j.timelimiter.timeLimiterAspectOrder, \
                 resilience4j.retry.retryAspectOrder: not modelled: the TimeLimiter aspect is \
                 outside the Retry aspect"
            ),
            "{err}"
        );
        let err = read(
            "resilience4j:\n  circuitbreaker:\n    instances:\n      a: {}\n  timelimiter:\n    \
             timeLimiterAspectOrder: 1\n    instances:\n      a: {}\n",
        )
        .unwrap_err();
        assert!(err.contains("outside the CircuitBreaker aspect"), "{err}");
        let err = read(
            "resilience4j:\n  timelimiter:\n    configs:\n      x:\n        baseConfig: y\n      \
             y:\n        baseConfig: x\n    instances:\n      a:\n        baseConfig: x\n",
        )
        .unwrap_err();
        assert!(err.contains("baseConfig cycle"), "{err}");
        let err = read(
            "resilience4j:\n  timelimiter:\n    instances:\n      a:\n        timeoutDuration: 0\n",
        )
        .unwrap_err();
        assert!(
            err.contains("instances.a.timeoutDuration: gives timeout = 0us, which herdsim refuses"),
            "{err}"
        );
        let err = read(
            "resilience4j:\n  timelimiter:\n    backends:\n      a:\n        timeoutDuration: 2s\n",
        )
        .unwrap_err();
        assert!(
            err.contains("resilience4j.timelimiter.backends: unknown field"),
            "{err}"
        );
        assert!(!err.contains('\n'));
    }
}
