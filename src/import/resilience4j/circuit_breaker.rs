//! resilience4j's CircuitBreaker (`resilience4j.circuitbreaker`): an
//! instance's thresholds, window and waits, every field inherited from its
//! base as `CommonCircuitBreakerConfigurationProperties` does, and the
//! aspect orders that say whether the retry retries a refusal.

use std::collections::BTreeMap;

use super::{Section, boolean, constant, duration, fields, refuse_unmodelled};
use crate::base::time::Micros;
use crate::import::durations::herdsim;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

const BREAKER_FIELDS: [&str; 29] = [
    "failureRateThreshold",
    "slowCallRateThreshold",
    "slowCallDurationThreshold",
    "slidingWindowType",
    "slidingWindowSize",
    "minimumNumberOfCalls",
    "waitDurationInOpenState",
    "permittedNumberOfCallsInHalfOpenState",
    "automaticTransitionFromOpenToHalfOpenEnabled",
    "maxWaitDurationInHalfOpenState",
    "transitionToStateAfterWaitDuration",
    "baseConfig",
    "initialState",
    "writableStackTraceEnabled",
    "allowHealthIndicatorToFail",
    "registerHealthIndicator",
    "eventConsumerBufferSize",
    "ignoreClassBindingExceptions",
    "recordFailurePredicate",
    "recordExceptions",
    "recordResultPredicate",
    "ignoreExceptionPredicate",
    "ignoreExceptions",
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDurationInOpenState",
    "enableRandomizedWait",
    "randomizedWaitFactor",
    "automaticTransitionFromOpenToHalfOpen",
];

pub(super) fn read_breaker(
    ctx: &Context<'_>,
    section: &Section<'_>,
    retry: Option<&Section<'_>>,
    name: &str,
    props: Option<Node<'_>>,
) -> Result<(), ImportError> {
    let chain = breaker_chain(ctx, section, name, props)?;
    let get = |key: &str| chain.iter().find_map(|level| level.get(key));
    for key in ["enableExponentialBackoff", "enableRandomizedWait"] {
        if let Some(node) = get(key)
            && boolean(ctx, node)?
        {
            return Err(ctx.unsupported(
                node,
                "the open state's backoff: herdsim's breaker waits waitDurationInOpenState every time",
            ));
        }
    }
    if let Some(node) = get("initialState") {
        let state = constant(
            ctx,
            node,
            &[
                "CLOSED",
                "OPEN",
                "HALF_OPEN",
                "DISABLED",
                "METRICS_ONLY",
                "FORCED_OPEN",
            ],
        )?;
        if state != "CLOSED" {
            return Err(ctx.unsupported(node, "herdsim's breakers start CLOSED"));
        }
    }
    let mut from: Vec<String> = Vec::new();
    let mut rule = String::new();
    let percent = |key: &str, default: f64, from: &mut Vec<String>| -> Result<f64, ImportError> {
        match get(key) {
            Some(n) => {
                let p = n.f64(ctx, true)?;
                if !(1.0..=100.0).contains(&p) {
                    return Err(ctx.error(
                        n,
                        "out of range: resilience4j's Spring binding accepts 1 to 100 (percent)",
                    ));
                }
                from.push(n.path().to_string());
                Ok(p)
            }
            None => Ok(default),
        }
    };
    let count = |key: &str, default: u64, from: &mut Vec<String>| -> Result<u64, ImportError> {
        match get(key) {
            Some(n) => {
                let c = n.u64(ctx, true)?;
                if !(1..=i32::MAX as u64).contains(&c) {
                    return Err(ctx.error(n, "out of range: accepted 1 to 2147483647"));
                }
                from.push(n.path().to_string());
                Ok(c)
            }
            None => Ok(default),
        }
    };
    let dur = |key: &str, default: Micros, from: &mut Vec<String>| -> Result<Micros, ImportError> {
        match get(key) {
            Some(n) => {
                let d = duration(ctx, n)?;
                from.push(n.path().to_string());
                Ok(d)
            }
            None => Ok(default),
        }
    };
    let failure = percent("failureRateThreshold", 50.0, &mut from)?;
    let slow = percent("slowCallRateThreshold", 100.0, &mut from)?;
    let slow_call = dur("slowCallDurationThreshold", Micros::from_s(60), &mut from)?;
    if slow_call == Micros::ZERO {
        return Err(ctx.error_at(
            from.last().map_or("", String::as_str),
            "must be at least 1ns (resilience4j refuses 0)",
        ));
    }
    let open = dur("waitDurationInOpenState", Micros::from_s(60), &mut from)?;
    if open < Micros::from_ms(1) {
        return Err(ctx.error_at(
            from.last().map_or("", String::as_str),
            "must be at least 1ms (resilience4j refuses less)",
        ));
    }
    let half_open_max = dur("maxWaitDurationInHalfOpenState", Micros::ZERO, &mut from)?;
    let window_type = match get("slidingWindowType") {
        Some(n) => {
            from.push(n.path().to_string());
            constant(ctx, n, &["COUNT_BASED", "TIME_BASED"])?
        }
        None => "COUNT_BASED",
    };
    let size = count("slidingWindowSize", 100, &mut from)?;
    let min = count("minimumNumberOfCalls", 100, &mut from)?;
    let permits = count("permittedNumberOfCallsInHalfOpenState", 10, &mut from)?;
    let auto = match get("automaticTransitionFromOpenToHalfOpenEnabled") {
        Some(n) => {
            from.push(n.path().to_string());
            boolean(ctx, n)?
        }
        None => false,
    };
    let then = match get("transitionToStateAfterWaitDuration") {
        Some(n) => {
            from.push(n.path().to_string());
            let s = constant(
                ctx,
                n,
                &[
                    "OPEN",
                    "CLOSED",
                    "HALF_OPEN",
                    "DISABLED",
                    "METRICS_ONLY",
                    "FORCED_OPEN",
                ],
            )?;
            if s != "OPEN" && s != "CLOSED" {
                return Err(ctx.error(
                    n,
                    "must be OPEN or CLOSED (resilience4j refuses the others)",
                ));
            }
            s
        }
        None => "OPEN",
    };
    let window = if window_type == "TIME_BASED" {
        format!("{size}s")
    } else {
        size.to_string()
    };
    // Which aspect is outside: the lower order value (higher precedence).
    const LOWEST: i64 = i32::MAX as i64;
    let retry_order = retry.and_then(|r| r.order.clone());
    let breaker_order = section.order.clone();
    let r_order = retry_order.as_ref().map_or(LOWEST - 4, |o| o.0);
    let b_order = breaker_order.as_ref().map_or(LOWEST - 3, |o| o.0);
    let refused = if r_order < b_order { "retry" } else { "end" };
    for (o, path) in [retry_order, breaker_order].into_iter().flatten() {
        let _ = o;
        from.push(path);
    }
    let value = format!(
        "resilience4j:{failure},window:{window},min:{min},slow:{slow},slow-call:{},open:{},\
         permits:{permits},auto:{},half-open-max:{},then:{},refused:{refused}",
        herdsim(slow_call),
        herdsim(open / 1_000 * 1_000),
        if auto { "on" } else { "off" },
        herdsim(half_open_max / 1_000 * 1_000),
        then.to_ascii_lowercase(),
    );
    rule += &format!(
        "resilience4j's circuit breaker ({}); every attempt, retries too, passes it; \
         half-open lets {permits} calls through at once; ",
        if window_type == "TIME_BASED" {
            format!("a time window of {size} whole seconds")
        } else {
            format!("a window of the last {size} calls, judged from min({min}, {size}) calls")
        }
    );
    rule += if refused == "retry" {
        "the Retry aspect is outside the CircuitBreaker aspect (Spring's order), so a refused \
         call (CallNotPermittedException) is retried, using up an attempt"
    } else {
        "the CircuitBreaker aspect is outside the Retry aspect (the orders given), so a refused \
         call ends its request"
    };
    rule += "; one breaker for all sources, as an application's registry holds one per name";
    let from: Vec<&str> = from.iter().map(String::as_str).collect();
    ctx.set("breaker", value, &from, rule)?;
    Ok(())
}

/// The property levels a circuit breaker's fields come from, nearest
/// first, as `createCircuitBreakerConfig` builds them: the instance, then
/// its `baseConfig` (followed), else a config of its own name (not
/// followed further), else `configs.default`.
fn breaker_chain<'a>(
    ctx: &Context<'a>,
    section: &Section<'a>,
    name: &str,
    props: Option<Node<'a>>,
) -> Result<Vec<BTreeMap<&'static str, Node<'a>>>, ImportError> {
    let load = |node: &Node<'a>| -> Result<BTreeMap<&'static str, Node<'a>>, ImportError> {
        let f = fields(ctx, node, &BREAKER_FIELDS)?;
        refuse_unmodelled(ctx, &f)?;
        Ok(f)
    };
    let mut chain = Vec::new();
    let (mut name, mut props) = (name.to_string(), props);
    let mut seen: Vec<String> = Vec::new();
    loop {
        if let Some(node) = props.take() {
            let level = load(&node)?;
            let base = level.get("baseConfig").cloned();
            chain.push(level);
            if let Some(bc) = base {
                let bc_name = bc.str(ctx)?;
                if bc_name == name || seen.iter().any(|s| s == bc_name) {
                    return Err(ctx.error(
                        &bc,
                        "a baseConfig cycle: resilience4j refuses the circular reference",
                    ));
                }
                let base = section.config(bc_name).ok_or_else(|| {
                    ctx.error(
                        &bc,
                        format!(
                            "no configs.{bc_name}: resilience4j throws ConfigurationNotFoundException"
                        ),
                    )
                })?;
                seen.push(name);
                name = bc_name.to_string();
                props = Some(base.clone());
                continue;
            }
        }
        if let Some(own) = section.config(&name) {
            chain.push(load(own)?);
        } else if let Some(default) = section.config("default") {
            name = "default".to_string();
            props = Some(default.clone());
            continue;
        }
        return Ok(chain);
    }
}

#[cfg(test)]
mod tests {
    use crate::import::resilience4j::tests::{read, value};

    #[test]
    fn aspect_orders_say_whether_a_refusal_is_retried() {
        let text = "resilience4j:\n  retry:\n    retryAspectOrder: 10\n    instances:\n      a: {}\n  circuitbreaker:\n    circuitBreakerAspectOrder: 5\n    instances:\n      a: {}\n";
        let got = read(text).unwrap();
        assert!(
            value(&got, "breaker").ends_with("refused:end"),
            "{}",
            value(&got, "breaker")
        );
    }
}
