//! resilience4j's Spring Boot configuration (`application.yml`, or
//! `application.properties`): `resilience4j.retry`,
//! `resilience4j.circuitbreaker` and `resilience4j.timelimiter`, read as
//! resilience4j-framework-common's `CommonRetryConfigurationProperties`,
//! `CommonCircuitBreakerConfigurationProperties` and
//! `CommonTimeLimiterConfigurationProperties` build their configs
//! (resilience4j v2.4.0-16-gaf9e7c9). The TimeLimiter's `timeoutDuration`
//! is the per-attempt timeout ([`time_limiter`] says how).
//!
//! - Names are Spring's relaxed names: `maxAttempts`, `max-attempts` and
//!   `max_attempts` are one property (instance names are kept as written).
//!   Dotted keys (`resilience4j.retry.instances.a.maxAttempts: 3`) are the
//!   nested ones they spell, as Spring reads them.
//! - Which instance: `--select instance=NAME` (every section); without it,
//!   each section's only instance, else an error listing them (a
//!   timelimiter section with no instance takes the retry's or breaker's
//!   name, as `@TimeLimiter(name = …)` beside `@Retry` usually does). A name a
//!   section lacks is built from `configs.default` (or resilience4j's
//!   defaults), as resilience4j builds an unconfigured instance; said in a
//!   warning.
//! - Inheritance as Spring does it, which differs between the two. Retry:
//!   an instance's `baseConfig` (or else `configs.default`) is its base
//!   config; only `enableExponentialBackoff`, `enableRandomizedWait`,
//!   `exponentialBackoffMultiplier` and `exponentialMaxWaitDuration` are
//!   copied from the base's properties into the instance's
//!   (`ConfigUtils.mergePropertiesIfAny`), and the instance's interval
//!   function is rebuilt only if it sets `waitDuration` itself (else the
//!   base's interval stands). So `randomizedWaitFactor` is never
//!   inherited. Circuit breaker: every field the instance leaves out is the
//!   base's (`baseConfig`, else a config of the instance's own name, else
//!   `configs.default`).
//! - The interval: `waitDuration` alone is a fixed wait; with
//!   `enableExponentialBackoff` it is `resilience4j-exponential`, with
//!   `enableRandomizedWait` `resilience4j-randomized`, with both
//!   `resilience4j-exponential-randomized`. Spring's quirks are kept and
//!   warned of: `exponentialMaxWaitDuration` is used only with an explicit
//!   `exponentialBackoffMultiplier` (and, when randomized, an explicit
//!   `randomizedWaitFactor`), and `randomizedWaitFactor` only with an
//!   explicit multiplier when both are enabled (else 0.5). Without a cap
//!   the import sets herdsim's cap to the longest wait the retries can
//!   reach, so it never binds.
//! - `maxAttempts` counts every attempt (3 by default).
//! - Every attempt passes the breaker (the Retry aspect, order
//!   `LOWEST_PRECEDENCE − 4`, wraps the CircuitBreaker aspect,
//!   `LOWEST_PRECEDENCE − 3`), and the retry retries the breaker's
//!   `CallNotPermittedException` (it retries every exception by default):
//!   the breaker's `refused:retry`. `retryAspectOrder` and
//!   `circuitBreakerAspectOrder` are read: a breaker outside the retry
//!   ends a refused request (`refused:end`).
//! - Durations as Spring Boot converts them: a whole number of ms (`500`),
//!   a whole number with a unit `ns`, `us`, `ms`, `s`, `m`, `h`, `d`
//!   (`500ms`, `1s`), or ISO-8601 (`PT0.5S`). `0.5s` is refused, as Spring
//!   refuses it.
//!
//! Refused, with why: exception lists and predicates (herdsim's failures
//! are not Java exceptions; `retryExceptions` would also stop the retry of
//! `CallNotPermittedException`), custom interval classes, the breaker's
//! open-state backoff, an initial state other than CLOSED, a TimeLimiter
//! outside the Retry or the CircuitBreaker, and the `bulkhead` and
//! `ratelimiter` sections. Fields that change
//! no behaviour (event buffers, health indicators, stack traces) are
//! accepted and passed over. Spring's other top-level keys (`server`,
//! `spring`, …) are not resilience4j's and are passed over with a note.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

mod time_limiter;

use super::durations::herdsim;
use super::tree::{INVALID_YAML, Node, from_yaml, kind};
use super::{Context, Format, ImportError};
use crate::base::time::Micros;
use crate::policy::{exponential_ms_of, millis_of};

/// The format.
pub const FORMAT: Format = Format {
    name: "resilience4j (Spring Boot)",
    about: "application.yml or .properties with resilience4j.retry, .circuitbreaker and .timelimiter",
    selects: &[(
        "instance",
        "the resilience4j instance (resilience4j.*.instances.NAME) whose settings apply",
    )],
    parse,
    claims,
    read,
};

/// The YAML document, or else the text read as `.properties` lines. YAML
/// that its parser reads but herdsim refuses (a number that is not finite,
/// an alias) is refused as YAML, not read again as `.properties` (which
/// would name the wrong field).
fn parse(text: &str) -> Result<Value, String> {
    match from_yaml(text) {
        Ok(value) if value.is_object() => Ok(expand(&value)),
        Err(why) if !why.starts_with(INVALID_YAML) => Err(why),
        // A list or a number is YAML, and no .properties file.
        Ok(value) if !value.is_string() && !value.is_null() => Err(format!(
            "the YAML document is {}, not a mapping of settings",
            kind(&value)
        )),
        yaml => properties(text).or_else(|why| yaml.and(Err(why))),
    }
}

/// `key=value` (or `key: value`) lines, `#` and `!` comments, as nested
/// objects of strings (Spring binds them from strings).
fn properties(text: &str) -> Result<Value, String> {
    let mut root = Value::Object(Map::new());
    let mut any = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let split = line
            .find(['=', ':'])
            .ok_or_else(|| format!("line {}: expected KEY=VALUE", i + 1))?;
        let (key, value) = (line[..split].trim(), line[split + 1..].trim());
        if key.is_empty() {
            return Err(format!("line {}: expected KEY=VALUE", i + 1));
        }
        insert(&mut root, key, Value::String(value.to_string()))
            .map_err(|why| format!("line {}: {why}", i + 1))?;
        any = true;
    }
    if any {
        Ok(root)
    } else {
        Err("holds no property".to_string())
    }
}

/// Puts `value` at the dotted `key` of `root` (`a.b[0]` is refused: no
/// property read here is a list).
fn insert(root: &mut Value, key: &str, value: Value) -> Result<(), String> {
    let mut at = root;
    let steps: Vec<&str> = key.split('.').collect();
    for (i, step) in steps.iter().enumerate() {
        let object = at
            .as_object_mut()
            .ok_or_else(|| format!("'{key}' puts a field under a value"))?;
        if i + 1 == steps.len() {
            if object.insert(step.to_string(), value).is_some() {
                return Err(format!("'{key}' is given twice"));
            }
            return Ok(());
        }
        at = object
            .entry(step.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

/// The document with dotted keys split into nested objects.
fn expand(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Value::Object(Map::new());
            for (key, v) in map {
                let v = expand(v);
                if merge_at(&mut out, key, v.clone()).is_err() {
                    // A clash (`a.b: 1` beside `a: {b: 2}`): keep the key
                    // as written, so the reader names it.
                    if let Some(o) = out.as_object_mut() {
                        o.insert(key.clone(), v);
                    }
                }
            }
            out
        }
        Value::Array(items) => Value::Array(items.iter().map(expand).collect()),
        other => other.clone(),
    }
}

fn merge_at(root: &mut Value, key: &str, value: Value) -> Result<(), ()> {
    let steps: Vec<&str> = key.split('.').collect();
    let mut at = root;
    for (i, step) in steps.iter().enumerate() {
        let object = at.as_object_mut().ok_or(())?;
        if i + 1 == steps.len() {
            match (object.get_mut(*step), value) {
                (Some(Value::Object(old)), Value::Object(new)) => {
                    for (k, v) in new {
                        if old.contains_key(&k) {
                            return Err(());
                        }
                        old.insert(k, v);
                    }
                }
                (Some(_), _) => return Err(()),
                (None, value) => {
                    object.insert(step.to_string(), value);
                }
            }
            return Ok(());
        }
        at = object
            .entry(step.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

fn claims(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.contains_key("resilience4j"))
}

/// Spring's relaxed form of a property name: lower case, without `-` and
/// `_` (`maxAttempts`, `max-attempts`, `MAX_ATTEMPTS` are one).
fn relaxed(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// An object's fields by relaxed name; two spellings of one are an error.
fn fields<'a>(
    ctx: &Context<'a>,
    node: &Node<'a>,
    known: &[&'static str],
) -> Result<BTreeMap<&'static str, Node<'a>>, ImportError> {
    let mut out = BTreeMap::new();
    for (name, child) in node.entries(ctx)? {
        if child.value().is_null() {
            continue;
        }
        let key = relaxed(name);
        match known.iter().find(|k| relaxed(k) == key) {
            Some(&k) => {
                if out.insert(k, child.clone()).is_some() {
                    return Err(ctx.error(
                        &child,
                        format!("{k} is given twice (Spring reads these spellings as one)"),
                    ));
                }
            }
            None => ctx.unknown(&child, known)?,
        }
    }
    Ok(out)
}

const RETRY_FIELDS: [&str; 16] = [
    "waitDuration",
    "maxAttempts",
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDuration",
    "enableRandomizedWait",
    "randomizedWaitFactor",
    "baseConfig",
    "failAfterMaxAttempts",
    "eventConsumerBufferSize",
    "intervalBiFunction",
    "retryExceptionPredicate",
    "resultPredicate",
    "consumeResultBeforeRetryAttempt",
    "retryExceptions",
    "ignoreExceptions",
];

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

const SECTION_FIELDS: [&str; 7] = [
    "instances",
    "backends",
    "configs",
    "retryAspectOrder",
    "circuitBreakerAspectOrder",
    "timeLimiterAspectOrder",
    "tags",
];

/// The fields that say nothing herdsim models, refused with why.
fn refuse_unmodelled(
    ctx: &Context<'_>,
    props: &BTreeMap<&'static str, Node<'_>>,
) -> Result<(), ImportError> {
    const WHY: [(&str, &str); 11] = [
        (
            "retryExceptions",
            "herdsim's failures are not Java exceptions, and a list also stops the retry of \
             CallNotPermittedException; remove it to retry every failure",
        ),
        (
            "ignoreExceptions",
            "herdsim's failures are not Java exceptions",
        ),
        (
            "retryExceptionPredicate",
            "a Java predicate herdsim cannot run",
        ),
        (
            "resultPredicate",
            "a Java predicate on results herdsim cannot run",
        ),
        ("consumeResultBeforeRetryAttempt", "a Java callback"),
        (
            "intervalBiFunction",
            "a Java interval class; herdsim models waitDuration and its exponential and \
             randomized variants",
        ),
        (
            "recordExceptions",
            "herdsim's failures are not Java exceptions",
        ),
        (
            "recordFailurePredicate",
            "a Java predicate herdsim cannot run",
        ),
        (
            "recordResultPredicate",
            "a Java predicate on results herdsim cannot run",
        ),
        (
            "ignoreExceptionPredicate",
            "a Java predicate herdsim cannot run",
        ),
        (
            "exponentialMaxWaitDurationInOpenState",
            "the open state's backoff is not modelled: the breaker waits waitDurationInOpenState",
        ),
    ];
    for (key, why) in WHY {
        if let Some(node) = props.get(key) {
            return Err(ctx.unsupported(node, why));
        }
    }
    Ok(())
}

/// A Spring Boot duration (`500`, `500ms`, `1s`, `PT0.5S`) in µs.
pub fn spring_duration(text: &str) -> Result<Micros, String> {
    let accepted = "a Spring Boot duration: whole ms (500), a whole number with a unit ns, \
                    us, ms, s, m, h or d (500ms), or ISO-8601 (PT0.5S)";
    let t = text.trim();
    let bad = || format!("\"{text}\" is not {accepted}");
    if t.starts_with('-') {
        return Err(format!("\"{text}\" is negative: expected {accepted}"));
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let ns: u128 = if t.starts_with(['P', 'p']) {
        iso8601_ns(t).ok_or_else(bad)?
    } else {
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        if digits.is_empty() || unit.len() > 2 {
            return Err(bad());
        }
        let n: u128 = digits.parse().map_err(|_| bad())?;
        let scale: u128 = match unit.to_ascii_lowercase().as_str() {
            "ns" => 1,
            "us" => 1_000,
            "" | "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "d" => 86_400_000_000_000,
            _ => return Err(bad()),
        };
        n.checked_mul(scale).ok_or_else(bad)?
    };
    if !ns.is_multiple_of(1_000) {
        return Err(format!(
            "\"{text}\" is not a whole number of microseconds, herdsim's resolution"
        ));
    }
    Micros::try_from(ns / 1_000).map_err(|_| format!("\"{text}\" is too long"))
}

/// `java.time.Duration.parse`'s `PnDTnHnMn.nS` (days, hours, minutes,
/// seconds with up to 9 decimals), without signs (refused above).
fn iso8601_ns(text: &str) -> Option<u128> {
    let upper = text.to_ascii_uppercase();
    let rest = upper.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut ns: u128 = 0;
    if !days.is_empty() {
        let n: u128 = days.strip_suffix('D')?.parse().ok()?;
        ns += n * 86_400_000_000_000;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (unit, scale) in [('H', 3_600_000_000_000u128), ('M', 60_000_000_000)] {
            if let Some(i) = time.find(unit) {
                let n: u128 = time[..i].parse().ok()?;
                ns += n * scale;
                time = &time[i + 1..];
            }
        }
        if !time.is_empty() {
            let body = time.strip_suffix('S')?;
            let (whole, fraction) = body.split_once(['.', ',']).unwrap_or((body, ""));
            if whole.is_empty()
                || fraction.len() > 9
                || !fraction.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            let w: u128 = whole.parse().ok()?;
            let f: u128 = format!("{fraction:0<9}").parse().ok()?;
            ns += w * 1_000_000_000 + f;
        }
    } else if days.is_empty() {
        return None;
    }
    Some(ns)
}

fn duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<Micros, ImportError> {
    let text = match node.value() {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_u64() || n.is_i64() => n.to_string(),
        other => {
            return Err(ctx.error(
                node,
                format!(
                    "expected a duration such as 500ms, found {}",
                    super::tree::kind(other)
                ),
            ));
        }
    };
    spring_duration(&text).map_err(|why| ctx.error(node, why))
}

/// Spring's boolean conversion: true/false, on/off, yes/no, 1/0.
fn boolean(ctx: &Context<'_>, node: &Node<'_>) -> Result<bool, ImportError> {
    let word = match node.value() {
        Value::Bool(b) => return Ok(*b),
        Value::String(s) => s.trim().to_ascii_lowercase(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    match word.as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err(ctx.error(
            node,
            "expected a boolean: true, false (or on/off, yes/no, 1/0)",
        )),
    }
}

/// An enum constant as Spring's relaxed enum binding reads it.
fn constant<'c>(
    ctx: &Context<'_>,
    node: &Node<'_>,
    names: &[&'c str],
) -> Result<&'c str, ImportError> {
    let text = node.str(ctx)?;
    names
        .iter()
        .copied()
        .find(|n| relaxed(n) == relaxed(text))
        .ok_or_else(|| ctx.error(node, format!("expected one of {}", names.join(", "))))
}

/// The instances and configs of one section.
struct Section<'a> {
    node: Node<'a>,
    instances: Vec<(&'a str, Node<'a>)>,
    configs: Vec<(&'a str, Node<'a>)>,
    order: Option<(i64, String)>,
}

fn section<'a>(
    ctx: &Context<'a>,
    node: Node<'a>,
    order_key: &'static str,
) -> Result<Section<'a>, ImportError> {
    // The TimeLimiter's properties have no `backends` map.
    let backends = order_key != "timeLimiterAspectOrder";
    let known: Vec<&'static str> = SECTION_FIELDS
        .iter()
        .copied()
        .filter(|k| !k.ends_with("AspectOrder") || *k == order_key)
        .filter(|k| *k != "backends" || backends)
        .collect();
    let f = fields(ctx, &node, &known)?;
    let list = |key: &str| -> Result<Vec<(&'a str, Node<'a>)>, ImportError> {
        match f.get(key) {
            Some(n) => n.entries(ctx),
            None => Ok(Vec::new()),
        }
    };
    let mut instances = list("instances")?;
    instances.extend(list("backends")?);
    let order = match f.get(order_key) {
        Some(n) => {
            let x = n.f64(ctx, true)?;
            if x.fract() != 0.0 || x < i32::MIN as f64 || x > i32::MAX as f64 {
                return Err(ctx.error(n, "expected a whole number (a Spring Ordered value)"));
            }
            Some((x as i64, n.path().to_string()))
        }
        None => None,
    };
    Ok(Section {
        node,
        instances,
        configs: list("configs")?,
        order,
    })
}

impl<'a> Section<'a> {
    fn config(&self, name: &str) -> Option<&Node<'a>> {
        self.configs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, n)| n)
    }

    /// The chosen instance's name and properties (`None`: not configured);
    /// `fallback` names it when nothing is selected and the section has no
    /// instance.
    fn chosen(
        &self,
        ctx: &Context<'a>,
        what: &str,
        fallback: Option<&str>,
    ) -> Result<(String, Option<Node<'a>>), ImportError> {
        let names: Vec<&str> = self.instances.iter().map(|(n, _)| *n).collect();
        match ctx.selection("instance") {
            Some(name) => {
                let found = self.instances.iter().find(|(n, _)| *n == name);
                if found.is_none() {
                    ctx.warn(format!(
                        "{}: {}: no instance '{name}' (there are: {}); resilience4j builds it \
                         from configs.default or its defaults",
                        ctx.file,
                        self.node.path(),
                        if names.is_empty() {
                            "none".to_string()
                        } else {
                            names.join(", ")
                        }
                    ));
                }
                Ok((name.to_string(), found.map(|(_, n)| n.clone())))
            }
            None => match (self.instances.as_slice(), fallback) {
                ([(name, node)], _) => Ok((name.to_string(), Some(node.clone()))),
                ([], Some(name)) => Ok((name.to_string(), None)),
                ([], None) => Err(ctx.error(
                    &self.node,
                    format!("no {what} instance: expected instances.NAME"),
                )),
                (_, _) => Err(ctx.error(
                    &self.node,
                    format!(
                        "several {what} instances: choose one with --select instance=NAME \
                         (one of {})",
                        names.join(", ")
                    ),
                )),
            },
        }
    }
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    let others: Vec<&str> = root
        .entries(ctx)?
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| *k != "resilience4j")
        .collect();
    if !others.is_empty() {
        ctx.warn(format!(
            "{}: passed over {} (not resilience4j's)",
            ctx.file,
            others.join(", ")
        ));
    }
    let top = root.get("resilience4j").expect("claimed");
    let f = fields(
        ctx,
        &top,
        &[
            "retry",
            "circuitbreaker",
            "timelimiter",
            "bulkhead",
            "thread-pool-bulkhead",
            "ratelimiter",
            "scheduled",
        ],
    )?;
    for (key, why) in [
        (
            "bulkhead",
            "a bulkhead (a client-side concurrency limit) is not modelled",
        ),
        (
            "thread-pool-bulkhead",
            "a bulkhead (a client-side concurrency limit) is not modelled",
        ),
        ("ratelimiter", "resilience4j's rate limiter is not modelled"),
        ("scheduled", "scheduled executors are not modelled"),
    ] {
        if let Some(node) = f.get(key) {
            return Err(ctx.unsupported(node, why));
        }
    }
    let retry = f
        .get("retry")
        .map(|n| section(ctx, n.clone(), "retryAspectOrder"))
        .transpose()?;
    let breaker = f
        .get("circuitbreaker")
        .map(|n| section(ctx, n.clone(), "circuitBreakerAspectOrder"))
        .transpose()?;
    let limiter = f
        .get("timelimiter")
        .map(|n| section(ctx, n.clone(), "timeLimiterAspectOrder"))
        .transpose()?;
    if retry.is_none() && breaker.is_none() && limiter.is_none() {
        return Err(ctx.error(&top, "expected retry, circuitbreaker or timelimiter"));
    }
    let mut chosen = Vec::new();
    let mut first_name = None;
    if let Some(retry) = &retry {
        let (name, props) = retry.chosen(ctx, "retry", None)?;
        read_retry(ctx, retry, &name, props)?;
        chosen.push(format!("retry instance {name}"));
        first_name = Some(name);
    }
    if let Some(breaker) = &breaker {
        let (name, props) = breaker.chosen(ctx, "circuitbreaker", None)?;
        read_breaker(ctx, breaker, retry.as_ref(), &name, props)?;
        chosen.push(format!("circuitbreaker instance {name}"));
        first_name.get_or_insert(name);
    }
    if let Some(limiter) = &limiter {
        let (name, props) = limiter.chosen(ctx, "timelimiter", first_name.as_deref())?;
        time_limiter::read_time_limiter(
            ctx,
            limiter,
            [retry.as_ref(), breaker.as_ref()],
            &name,
            props,
        )?;
        chosen.push(format!("timelimiter instance {name}"));
    }
    ctx.chose(chosen.join(", "));
    Ok(())
}

/// One level of retry properties, with the four fields a base lends it.
#[derive(Clone)]
struct RetryProps<'a> {
    own: BTreeMap<&'static str, Node<'a>>,
    lent: BTreeMap<&'static str, Node<'a>>,
}

impl<'a> RetryProps<'a> {
    fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.own.get(key).or_else(|| self.lent.get(key))
    }

    /// `mergePropertiesIfAny(base, this)`.
    fn merge_from(&mut self, base: &RetryProps<'a>) {
        for key in [
            "enableExponentialBackoff",
            "enableRandomizedWait",
            "exponentialBackoffMultiplier",
            "exponentialMaxWaitDuration",
        ] {
            if self.get(key).is_none()
                && let Some(node) = base.get(key)
            {
                self.lent.insert(key, node.clone());
            }
        }
    }
}

/// The interval a retry config ends with.
#[derive(Debug, Clone, PartialEq)]
enum Interval {
    /// `IntervalFunction.ofDefaults()`: 500 ms.
    Default,
    /// A fixed wait (µs).
    Fixed(Micros),
    Exponential {
        wait: Micros,
        multiplier: f64,
        max: Option<Micros>,
    },
    Randomized {
        wait: Micros,
        factor: f64,
    },
    ExponentialRandomized {
        wait: Micros,
        multiplier: f64,
        factor: f64,
        max: Option<Micros>,
    },
}

/// A built retry config: its interval and attempts, with the fields they
/// came from and notes on Spring's quirks.
#[derive(Debug, Clone)]
struct RetryBuilt {
    interval: Interval,
    /// The path of each field the interval was built from, by name.
    interval_from: BTreeMap<&'static str, String>,
    attempts: u64,
    attempts_from: Option<String>,
}

fn read_retry(
    ctx: &Context<'_>,
    section: &Section<'_>,
    name: &str,
    props: Option<Node<'_>>,
) -> Result<(), ImportError> {
    let props = props
        .map(|n| {
            fields(ctx, &n, &RETRY_FIELDS).map(|own| RetryProps {
                own,
                lent: BTreeMap::new(),
            })
        })
        .transpose()?;
    if let Some(p) = &props {
        refuse_unmodelled(ctx, &p.own)?;
    }
    let mut visiting = Vec::new();
    let built = build_retry(ctx, section, props, name, &mut visiting)?;
    let (from, rule) = match &built.attempts_from {
        Some(path) => (
            vec![path.clone()],
            format!("maxAttempts {} counts every attempt", built.attempts),
        ),
        None => (
            vec![],
            format!(
                "resilience4j's default maxAttempts {} counts every attempt",
                built.attempts
            ),
        ),
    };
    let from: Vec<&str> = from.iter().map(String::as_str).collect();
    ctx.set("max_attempts", built.attempts.to_string(), &from, rule)?;
    let ifrom: Vec<&str> = built.interval_from.values().map(String::as_str).collect();
    let one = |key: &str| -> Vec<&str> {
        built
            .interval_from
            .get(key)
            .map(String::as_str)
            .into_iter()
            .collect()
    };
    let (wfrom, mfrom, ffrom, xfrom) = (
        one("waitDuration"),
        one("exponentialBackoffMultiplier"),
        one("randomizedWaitFactor"),
        one("exponentialMaxWaitDuration"),
    );
    // The longest wait the retries can reach, for a cap that never binds.
    let retries = built.attempts.saturating_sub(1).clamp(1, u32::MAX as u64) as u32;
    let cap_above = |top_ms: i64| herdsim(((top_ms.max(1) as Micros) + 1).saturating_mul(1_000));
    match built.interval {
        Interval::Default | Interval::Fixed(_) => {
            let wait = match built.interval {
                Interval::Fixed(w) => w,
                _ => 500_000,
            };
            let why = if built.interval == Interval::Default {
                "resilience4j's default interval: a fixed 500 ms".to_string()
            } else {
                "waitDuration alone: a fixed wait (whole ms)".to_string()
            };
            let wait_ms = wait / 1_000 * 1_000;
            if wait_ms == 0 {
                ctx.set("policy", "no-backoff", &ifrom, format!("{why} of 0 ms"))?;
            } else {
                ctx.set("policy", "constant", &ifrom, why)?;
                ctx.set("base", herdsim(wait_ms), &wfrom, "waitDuration → base")?;
                ctx.set(
                    "cap",
                    herdsim(wait_ms),
                    &wfrom,
                    "no cap in resilience4j: the wait itself",
                )?;
            }
        }
        Interval::Exponential {
            wait,
            multiplier,
            max,
        } => {
            check_wait(ctx, &wfrom, wait)?;
            if multiplier == 1.0 {
                ctx.set(
                    "policy",
                    "constant",
                    &ifrom,
                    "exponential backoff with multiplier 1: a fixed wait",
                )?;
                ctx.set(
                    "base",
                    herdsim(wait / 1_000 * 1_000),
                    &wfrom,
                    "waitDuration → base",
                )?;
                ctx.set(
                    "cap",
                    herdsim(wait / 1_000 * 1_000),
                    &wfrom,
                    "multiplier 1: the wait itself",
                )?;
                return Ok(());
            }
            ctx.set(
                "policy",
                "resilience4j-exponential",
                &ifrom,
                "enableExponentialBackoff: IntervalFunction.ofExponentialBackoff, each wait the \
                 previous times the multiplier, truncated to whole ms; the first retry waits \
                 waitDuration",
            )?;
            ctx.set(
                "base",
                herdsim(wait),
                &wfrom,
                "waitDuration → base (whole ms)",
            )?;
            ctx.set(
                "multiplier",
                format!("{multiplier}"),
                &mfrom,
                "exponentialBackoffMultiplier (1.5 if not given) → multiplier",
            )?;
            let cap = match max {
                Some(m) => (
                    herdsim(m),
                    "exponentialMaxWaitDuration → cap, a min after the growth".to_string(),
                ),
                None => {
                    let top = exponential_ms_of(millis_of(wait), multiplier, retries);
                    (
                        cap_above(top),
                        format!(
                            "no exponentialMaxWaitDuration in force: no cap; set above the longest wait, {top} ms"
                        ),
                    )
                }
            };
            ctx.set("cap", cap.0, &xfrom, cap.1)?;
        }
        Interval::Randomized { wait, factor } => {
            check_wait(ctx, &wfrom, wait)?;
            ctx.set(
                "policy",
                "resilience4j-randomized",
                &ifrom,
                "enableRandomizedWait: IntervalFunction.ofRandomized, every wait uniform on \
                 [(1−f)·waitDuration, (1+f)·waitDuration + 1 ms), truncated to whole ms",
            )?;
            ctx.set(
                "base",
                herdsim(wait),
                &wfrom,
                "waitDuration → base (whole ms)",
            )?;
            ctx.set(
                "random_factor",
                format!("{factor}"),
                &ffrom,
                "randomizedWaitFactor (0.5 if not given) → random_factor",
            )?;
            let top = ((1.0 + factor) * millis_of(wait) as f64) as i64 + 1;
            ctx.set(
                "cap",
                cap_above(top),
                &wfrom,
                format!("ofRandomized has no cap; set above the longest wait, {top} ms"),
            )?;
        }
        Interval::ExponentialRandomized {
            wait,
            multiplier,
            factor,
            max,
        } => {
            check_wait(ctx, &wfrom, wait)?;
            ctx.set(
                "policy",
                "resilience4j-exponential-randomized",
                &ifrom,
                "enableExponentialBackoff and enableRandomizedWait: IntervalFunction.\
                 ofExponentialRandomBackoff, the truncated exponential wait randomized by ±f \
                 (plus up to 1 ms), then the cap",
            )?;
            ctx.set(
                "base",
                herdsim(wait),
                &wfrom,
                "waitDuration → base (whole ms)",
            )?;
            ctx.set(
                "multiplier",
                format!("{multiplier}"),
                &mfrom,
                "exponentialBackoffMultiplier (1.5 if not given) → multiplier",
            )?;
            ctx.set(
                "random_factor",
                format!("{factor}"),
                &ffrom,
                "randomizedWaitFactor (0.5 if not given) → random_factor",
            )?;
            let cap = match max {
                Some(m) => (
                    herdsim(m),
                    "exponentialMaxWaitDuration → cap, applied after the randomization".to_string(),
                ),
                None => {
                    let i = exponential_ms_of(millis_of(wait), multiplier, retries);
                    let top = ((1.0 + factor) * i as f64) as i64 + 1;
                    (
                        cap_above(top),
                        format!(
                            "no exponentialMaxWaitDuration in force: no cap; set above the longest wait, {top} ms"
                        ),
                    )
                }
            };
            ctx.set("cap", cap.0, &xfrom, cap.1)?;
        }
    }
    Ok(())
}

/// resilience4j's `checkInterval`: the exponential and randomized waits
/// need at least 1 ms.
fn check_wait(ctx: &Context<'_>, from: &[&str], wait: Micros) -> Result<(), ImportError> {
    if wait < 1_000 {
        return Err(ctx.error_at(
            &from.join(", "),
            "waitDuration is under 1 ms, which resilience4j's exponential and randomized \
             intervals refuse: accepted 1ms or more",
        ));
    }
    Ok(())
}

/// `createRetryConfig` and `buildConfig`, as the Java does them.
fn build_retry<'a>(
    ctx: &Context<'a>,
    section: &Section<'a>,
    props: Option<RetryProps<'a>>,
    name: &str,
    visiting: &mut Vec<String>,
) -> Result<RetryBuilt, ImportError> {
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
    let load = |node: &Node<'a>| -> Result<RetryProps<'a>, ImportError> {
        let own = fields(ctx, node, &RETRY_FIELDS)?;
        refuse_unmodelled(ctx, &own)?;
        Ok(RetryProps {
            own,
            lent: BTreeMap::new(),
        })
    };
    let mut props = props;
    let base = match props.as_mut() {
        Some(p) if p.own.contains_key("baseConfig") => {
            let bc_node = p.own["baseConfig"].clone();
            let bc = bc_node.str(ctx)?;
            let base_node = section.config(bc).ok_or_else(|| {
                ctx.error(
                    &bc_node,
                    format!("no configs.{bc}: resilience4j throws ConfigurationNotFoundException"),
                )
            })?;
            let base_props = load(base_node)?;
            p.merge_from(&base_props);
            Some(build_retry(ctx, section, Some(base_props), bc, visiting)?)
        }
        _ if name != "default" && section.config("default").is_some() => {
            let default_props = load(section.config("default").expect("checked"))?;
            if let Some(p) = props.as_mut() {
                p.merge_from(&default_props);
            }
            Some(build_retry(
                ctx,
                section,
                Some(default_props),
                "default",
                visiting,
            )?)
        }
        _ => None,
    };
    visiting.pop();
    let mut built = base.unwrap_or(RetryBuilt {
        interval: Interval::Default,
        interval_from: BTreeMap::new(),
        attempts: 3,
        attempts_from: None,
    });
    let Some(p) = props else {
        return Ok(built);
    };
    if let Some(node) = p.get("maxAttempts") {
        let n = node.u64(ctx, true)?;
        if n > i32::MAX as u64 {
            return Err(ctx.error(node, "out of range: accepted 1 to 2147483647"));
        }
        if n != 0 {
            built.attempts = n;
            built.attempts_from = Some(node.path().to_string());
        }
    }
    let Some(wait_node) = p.get("waitDuration") else {
        return Ok(built);
    };
    let wait = duration(ctx, wait_node)?;
    let mut from: BTreeMap<&'static str, String> = BTreeMap::new();
    from.insert("waitDuration", wait_node.path().to_string());
    let mut flag = |key: &'static str| -> Result<bool, ImportError> {
        match p.get(key) {
            Some(n) => {
                let on = boolean(ctx, n)?;
                from.insert(key, n.path().to_string());
                Ok(on)
            }
            None => Ok(false),
        }
    };
    let (exponential, randomized) = (
        flag("enableExponentialBackoff")?,
        flag("enableRandomizedWait")?,
    );
    let number = |key: &'static str,
                  from: &mut BTreeMap<&'static str, String>|
     -> Result<Option<f64>, ImportError> {
        p.get(key)
            .map(|n| {
                from.insert(key, n.path().to_string());
                n.f64(ctx, true)
            })
            .transpose()
    };
    let multiplier = number("exponentialBackoffMultiplier", &mut from)?;
    if let (Some(m), Some(n)) = (multiplier, p.get("exponentialBackoffMultiplier"))
        && m <= 0.0
    {
        return Err(ctx.error(n, "must be above 0 (resilience4j refuses it)"));
    }
    let factor = number("randomizedWaitFactor", &mut from)?;
    if let (Some(f), Some(n)) = (factor, p.get("randomizedWaitFactor"))
        && !(0.0..1.0).contains(&f)
    {
        return Err(ctx.error(
            n,
            "out of range: resilience4j's Spring binding accepts 0 to below 1",
        ));
    }
    let max = match p.get("exponentialMaxWaitDuration") {
        Some(n) => {
            from.insert("exponentialMaxWaitDuration", n.path().to_string());
            Some((duration(ctx, n)?, n.path().to_string()))
        }
        None => None,
    };
    let ignored = |what: &str, needs: &str| {
        ctx.warn(format!(
            "{}: {what} is ignored by resilience4j's Spring binding without {needs}",
            ctx.file
        ));
    };
    built.interval = match (exponential, randomized) {
        (true, true) => {
            if let Some((_, path)) = &max
                && (factor.is_none() || multiplier.is_none())
            {
                ignored(
                    path,
                    "both exponentialBackoffMultiplier and randomizedWaitFactor",
                );
            }
            if factor.is_some() && multiplier.is_none() {
                ignored(
                    "randomizedWaitFactor",
                    "exponentialBackoffMultiplier (0.5 is used)",
                );
            }
            let m = multiplier.unwrap_or(1.5);
            let f = if multiplier.is_some() {
                factor.unwrap_or(0.5)
            } else {
                0.5
            };
            let max = max
                .filter(|_| factor.is_some() && multiplier.is_some())
                .map(|m| m.0);
            Interval::ExponentialRandomized {
                wait,
                multiplier: m,
                factor: f,
                max,
            }
        }
        (true, false) => {
            if let Some((_, path)) = &max
                && multiplier.is_none()
            {
                ignored(path, "exponentialBackoffMultiplier");
            }
            let m = multiplier.unwrap_or(1.5);
            let max = max.filter(|_| multiplier.is_some()).map(|m| m.0);
            Interval::Exponential {
                wait,
                multiplier: m,
                max,
            }
        }
        (false, true) => Interval::Randomized {
            wait,
            factor: factor.unwrap_or(0.5),
        },
        (false, false) => Interval::Fixed(wait),
    };
    built.interval_from = from;
    Ok(built)
}

fn read_breaker(
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
    let slow_call = dur("slowCallDurationThreshold", 60_000_000, &mut from)?;
    if slow_call == 0 {
        return Err(ctx.error_at(
            from.last().map_or("", String::as_str),
            "must be at least 1ns (resilience4j refuses 0)",
        ));
    }
    let open = dur("waitDurationInOpenState", 60_000_000, &mut from)?;
    if open < 1_000 {
        return Err(ctx.error_at(
            from.last().map_or("", String::as_str),
            "must be at least 1ms (resilience4j refuses less)",
        ));
    }
    let half_open_max = dur("maxWaitDurationInHalfOpenState", 0, &mut from)?;
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
    use super::super::{Imported, import_one};
    use super::spring_duration;

    fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("application.yml", text, select)
    }

    fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    fn value(got: &Imported, key: &str) -> String {
        got.value(key).unwrap_or("-").to_string()
    }

    #[test]
    fn spring_boot_durations_are_whole_numbers_with_units_or_iso_8601() {
        // DurationStyle.SIMPLE (a plain number is ms) and ISO-8601.
        for (text, us) in [
            ("500", 500_000),
            ("500ms", 500_000),
            ("10s", 10_000_000),
            ("2m", 120_000_000),
            ("1h", 3_600_000_000),
            ("1d", 86_400_000_000),
            ("250us", 250),
            ("5000ns", 5),
            ("PT0.5S", 500_000),
            ("PT1M30S", 90_000_000),
            ("P1DT2H", 93_600_000_000),
            ("pt10s", 10_000_000),
        ] {
            assert_eq!(spring_duration(text), Ok(us), "{text}");
        }
        for bad in ["0.5s", "-1s", "10 s", "1w", "PT", "P1S", "1500ns", "abc"] {
            assert!(spring_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_defaults_are_resilience4js() {
        // An instance that sets nothing: RetryConfig's maxAttempts 3 and a
        // fixed 500 ms (IntervalFunction.ofDefaults), CircuitBreakerConfig's
        // defaults.
        let got = read(
            "resilience4j:\n  retry:\n    instances:\n      a: {}\n  circuitbreaker:\n    instances:\n      a: {}\n",
        )
        .unwrap();
        assert_eq!(value(&got, "max_attempts"), "3");
        assert_eq!(value(&got, "policy"), "constant");
        assert_eq!(
            (value(&got, "base"), value(&got, "cap")),
            ("500ms".into(), "500ms".into())
        );
        assert_eq!(
            value(&got, "breaker"),
            "resilience4j:50,window:100,min:100,slow:100,slow-call:1m,open:1m,permits:10,\
             auto:off,half-open-max:0us,then:open,refused:retry"
        );
    }

    #[test]
    fn the_interval_follows_springs_flags_and_their_quirks() {
        let retry = |props: &str| {
            read(&format!(
                "resilience4j:\n  retry:\n    instances:\n      a:\n{props}"
            ))
        };
        // Exponential with a cap: needs the multiplier for the cap to count.
        let got = retry(
            "        maxAttempts: 5\n        waitDuration: 500ms\n        enableExponentialBackoff: true\n        exponentialBackoffMultiplier: 1.5\n        exponentialMaxWaitDuration: 2s\n",
        )
        .unwrap();
        assert_eq!(value(&got, "policy"), "resilience4j-exponential");
        assert_eq!(
            (
                value(&got, "base"),
                value(&got, "multiplier"),
                value(&got, "cap")
            ),
            ("500ms".into(), "1.5".into(), "2s".into())
        );
        // Without the multiplier Spring ignores the max (and uses 1.5): the
        // cap is set above the longest wait of 4 retries, 1687 ms.
        let got = retry(
            "        maxAttempts: 5\n        waitDuration: 500ms\n        enableExponentialBackoff: true\n        exponentialMaxWaitDuration: 1s\n",
        )
        .unwrap();
        assert_eq!(
            (value(&got, "multiplier"), value(&got, "cap")),
            ("1.5".into(), "1.688s".into())
        );
        assert!(
            got.warnings.iter().any(|w| w.contains("is ignored")),
            "{:?}",
            got.warnings
        );
        // Randomized alone: the factor; 0.5 if not given.
        let got = retry("        waitDuration: 1s\n        enableRandomizedWait: true\n        randomizedWaitFactor: 0.2\n").unwrap();
        assert_eq!(value(&got, "policy"), "resilience4j-randomized");
        assert_eq!(value(&got, "random_factor"), "0.2");
        // Both, the factor without a multiplier: Spring's
        // ofExponentialRandomBackoff(waitDuration) takes 1.5 and 0.5.
        let got = retry("        waitDuration: 1s\n        enableRandomizedWait: true\n        enableExponentialBackoff: true\n        randomizedWaitFactor: 0.2\n").unwrap();
        assert_eq!(value(&got, "policy"), "resilience4j-exponential-randomized");
        assert_eq!(
            (value(&got, "multiplier"), value(&got, "random_factor")),
            ("1.5".into(), "0.5".into())
        );
        // A wait of 0 with no backoff is no delay.
        let got = retry("        waitDuration: 0\n").unwrap();
        assert_eq!(value(&got, "policy"), "no-backoff");
    }

    #[test]
    fn inheritance_is_springs_for_each_section() {
        // Retry: the base lends only the four backoff fields; the instance's
        // own waitDuration rebuilds the interval with them; maxAttempts and
        // randomizedWaitFactor are not lent (the base's own config keeps
        // its maxAttempts, which the instance inherits as a built config).
        let text = "resilience4j:
  retry:
    configs:
      slow:
        maxAttempts: 6
        waitDuration: 1s
        enableRandomizedWait: true
        randomizedWaitFactor: 0.1
    instances:
      a:
        baseConfig: slow
        wait-duration: 200ms
  circuitbreaker:
    configs:
      default:
        failure-rate-threshold: 25
        sliding_window_size: 20
    instances:
      a:
        minimumNumberOfCalls: 5
";
        let got = read(text).unwrap();
        assert_eq!(value(&got, "max_attempts"), "6");
        assert_eq!(value(&got, "policy"), "resilience4j-randomized");
        assert_eq!(value(&got, "base"), "200ms");
        assert_eq!(
            value(&got, "random_factor"),
            "0.5",
            "the factor is not lent"
        );
        // Circuit breaker: every field from configs.default the instance
        // leaves out.
        assert!(
            value(&got, "breaker").starts_with("resilience4j:25,window:20,min:5,"),
            "{}",
            value(&got, "breaker")
        );
        // An instance without its own waitDuration keeps the base's interval.
        let got = read(
            "resilience4j.retry.configs.default.waitDuration: 300ms\nresilience4j.retry.instances.a.maxAttempts: 2\n",
        )
        .unwrap();
        assert_eq!(
            (value(&got, "base"), value(&got, "max_attempts")),
            ("300ms".into(), "2".into())
        );
    }

    #[test]
    fn the_instance_is_selected_or_the_only_one() {
        let text = "resilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 2\n      b:\n        maxAttempts: 5\n";
        let err = read(text).unwrap_err();
        assert!(
            err.contains("--select instance=NAME (one of a, b)"),
            "{err}"
        );
        let got = read_with(text, &[("instance", "b")]).unwrap();
        assert_eq!(value(&got, "max_attempts"), "5");
        // A name the section lacks: resilience4j's defaults, with a warning.
        let got = read_with(text, &[("instance", "c")]).unwrap();
        assert_eq!(value(&got, "max_attempts"), "3");
        assert!(got.warnings.iter().any(|w| w.contains("no instance 'c'")));
    }

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

    #[test]
    fn application_properties_read_as_the_yaml_they_spell() {
        let text = "# application.properties\nresilience4j.retry.instances.a.max-attempts=4\nresilience4j.retry.instances.a.wait-duration=PT0.25S\n";
        let got = read(text).unwrap();
        assert_eq!(
            (value(&got, "max_attempts"), value(&got, "base")),
            ("4".into(), "250ms".into())
        );
    }

    #[test]
    fn bad_and_unmodelled_fields_are_refused_with_their_path() {
        let retry = |props: &str| {
            read(&format!(
                "resilience4j:\n  retry:\n    instances:\n      a:\n{props}"
            ))
            .unwrap_err()
        };
        let err = retry("        maxAttemps: 3\n");
        assert!(
            err.starts_with(
                "application.yml: resilience4j.retry.instances.a.maxAttemps: unknown field"
            ),
            "{err}"
        );
        let err = retry("        waitDuration: 0.5s\n");
        assert!(
            err.contains("instances.a.waitDuration: \"0.5s\" is not a Spring Boot duration"),
            "{err}"
        );
        let err = retry("        retryExceptions: [java.io.IOException]\n");
        assert!(
            err.contains("instances.a.retryExceptions: not modelled"),
            "{err}"
        );
        let err = retry(
            "        randomizedWaitFactor: 1.0\n        waitDuration: 1s\n        enableRandomizedWait: true\n",
        );
        assert!(err.contains("randomizedWaitFactor: out of range"), "{err}");
        let err = read("resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        failureRateThreshold: 0.5\n").unwrap_err();
        assert!(
            err.contains(
                "failureRateThreshold: out of range: resilience4j's Spring binding accepts 1 to 100"
            ),
            "{err}"
        );
        let err = read(
            "resilience4j:\n  bulkhead:\n    instances:\n      a:\n        maxConcurrentCalls: 5\n",
        )
        .unwrap_err();
        assert!(err.contains("resilience4j.bulkhead: not modelled"), "{err}");
        let err = read("resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        baseConfig: nope\n").unwrap_err();
        assert!(err.contains("no configs.nope"), "{err}");
        assert!(!err.contains('\n'));
    }
}
