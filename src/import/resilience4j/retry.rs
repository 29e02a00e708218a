//! resilience4j's Retry (`resilience4j.retry`): an instance's
//! `maxAttempts` and interval, built with Spring's inheritance (only the
//! four backoff fields lent by the base) and its quirks, as
//! `CommonRetryConfigurationProperties` builds a `RetryConfig`.

use std::collections::BTreeMap;

use super::{Section, boolean, duration, fields, refuse_unmodelled};
use crate::base::time::{Micros, US_PER_MS};
use crate::import::durations::herdsim;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};
use crate::policy::{exponential_ms_of, millis_of};

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

pub(super) fn read_retry(
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
    let cap_above = |top_ms: i64| herdsim(US_PER_MS.saturating_mul(top_ms.max(1) as u64 + 1));
    match built.interval {
        Interval::Default | Interval::Fixed(_) => {
            let wait = match built.interval {
                Interval::Fixed(w) => w,
                _ => Micros::from_ms(500),
            };
            let why = if built.interval == Interval::Default {
                "resilience4j's default interval: a fixed 500 ms".to_string()
            } else {
                "waitDuration alone: a fixed wait (whole ms)".to_string()
            };
            let wait_ms = wait / 1_000 * 1_000;
            if wait_ms == Micros::ZERO {
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
    if wait < Micros::from_ms(1) {
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

#[cfg(test)]
mod tests {
    use crate::import::resilience4j::tests::{read, value};

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
}
