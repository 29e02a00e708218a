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
//!
//! Each object is read in its own file: the document (YAML, or
//! `.properties` lines, dotted keys) in `properties.rs`; Spring's binding
//! of names and values in `binding.rs`; the `retry`, `circuitbreaker` and
//! `timelimiter` sections' instances in `retry.rs`, `circuit_breaker.rs`
//! and `time_limiter.rs`. A section's instances and configs, and the
//! choice among them, are here.

mod binding;
mod circuit_breaker;
mod properties;
mod retry;
mod time_limiter;

use std::collections::BTreeMap;

use serde_json::Value;

use super::tree::Node;
use super::{Context, Format, ImportError};
pub use binding::spring_duration;
use binding::{boolean, constant, duration, fields};

/// The format.
pub const FORMAT: Format = Format {
    name: "resilience4j (Spring Boot)",
    about: "application.yml or .properties with resilience4j.retry, .circuitbreaker and .timelimiter",
    selects: &[(
        "instance",
        "the resilience4j instance (resilience4j.*.instances.NAME) whose settings apply",
    )],
    parse: properties::parse,
    claims,
    read,
};

fn claims(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.contains_key("resilience4j"))
}

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
        retry::read_retry(ctx, retry, &name, props)?;
        chosen.push(format!("retry instance {name}"));
        first_name = Some(name);
    }
    if let Some(breaker) = &breaker {
        let (name, props) = breaker.chosen(ctx, "circuitbreaker", None)?;
        circuit_breaker::read_breaker(ctx, breaker, retry.as_ref(), &name, props)?;
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

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};

    pub(super) fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("application.yml", text, select)
    }

    pub(super) fn read(text: &str) -> Result<Imported, String> {
        read_with(text, &[])
    }

    pub(super) fn value(got: &Imported, key: &str) -> String {
        got.value(key).unwrap_or("-").to_string()
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
