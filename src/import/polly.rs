//! Polly v8's `RetryStrategyOptions` and `CircuitBreakerStrategyOptions` as
//! JSON that .NET's configuration binder (`IConfiguration.Bind`) reads, such
//! as an `appsettings.json` section (Polly 8.7.0, commit 173d6d1:
//! src/Polly.Core/Retry/, src/Polly.Core/CircuitBreaker/).
//!
//! The shape read:
//!
//! ```json
//! { "Retry": { "MaxRetryAttempts": 3, "Delay": "00:00:02", "BackoffType": "Exponential",
//!              "UseJitter": true, "MaxDelay": "00:00:30" },
//!   "CircuitBreaker": { "FailureRatio": 0.1, "MinimumThroughput": 100,
//!                       "SamplingDuration": "00:00:30", "BreakDuration": "00:00:05" } }
//! ```
//!
//! at the document's root or in a section holding `Retry` and/or
//! `CircuitBreaker` (`--select section=Resilience:Orders`, with
//! IConfiguration's `:`; without it, the only such section, else an error
//! listing them). The file is read as .NET's JSON configuration provider
//! reads it ([`super::dotnet`]): a key given twice, in any case, is refused
//! (its `FormatException`). As the binder reads it: names ignore case, values may be
//! strings ("3", "true"), `BackoffType` is a name (any case) or its number
//! (0 Constant, 1 Linear, 2 Exponential), and durations are .NET TimeSpan
//! text, `[d.]hh:mm[:ss[.fffffff]]` or a whole number of days ("2" is two
//! days); ISO-8601 ("PT2S") is refused, as TimeSpan.Parse refuses it.
//! Ranges are Polly's validation attributes: MaxRetryAttempts 1 to
//! int.MaxValue, Delay and MaxDelay 0 to 1 day, FailureRatio 0 to 1,
//! MinimumThroughput at least 2, SamplingDuration and BreakDuration 0.5 s
//! to 1 day. Absent fields are Polly's defaults (MaxRetryAttempts 3, Delay
//! 2 s, Constant, no jitter, no MaxDelay; FailureRatio 0.1, throughput 100,
//! sampling 30 s, break 5 s); Microsoft.Extensions.Http.Resilience's
//! standard handler has other defaults, not read here.
//!
//! The delays (`RetryHelper.GetRetryDelay`; Polly's attempt counts retries
//! from 0, so retry k is its attempt k − 1):
//! - Constant: `Delay` → `constant`; with jitter `polly-constant-jitter`,
//!   `Delay·U[0.75, 1.25)`.
//! - Linear: `k·Delay` → `linear` with the step equal to the base; with
//!   jitter `polly-linear-jitter`.
//! - Exponential: `Delay·2^(k−1)` → `none` (multiplier 2); with jitter
//!   Polly's DecorrelatedJitterBackoffV2 → `decorrelated-v2` (checked
//!   against RetryHelper: t = attempt + U, the state per execution from 0,
//!   then MaxDelay).
//! - `MaxDelay` clamps the final delay, after the jitter; without it the
//!   cap is set above the longest delay the retries reach. `Delay` 0 is no
//!   delay at all (`no-backoff`), as Polly returns 0 for every type.
//!
//! `MaxRetryAttempts` counts retries: max_attempts is one more. The breaker
//! is herdsim's `polly`. Polly runs strategies in the order they were
//! added and the JSON does not say it; a retry outside the breaker (the
//! usual order) retries a refused call's `BrokenCircuitException`, as the
//! retry's default `ShouldHandle` handles every exception but
//! `OperationCanceledException`: `--select pipeline=breaker-outside` for a
//! breaker added before the retry, whose refusals end the request.
//!
//! Refused, with why: delegates (`ShouldHandle`, `DelayGenerator`,
//! `OnRetry`, `BreakDurationGenerator`, the events, `ManualControl`,
//! `StateProvider`, `Randomizer`) and the standard handler's other
//! strategies (`AttemptTimeout`, `TotalRequestTimeout`, `RateLimiter`,
//! `Hedging`). `Name` is accepted and changes nothing.

use serde_json::Value;

use super::durations::herdsim;
use super::tree::{Node, from_json, kind};
use super::{Context, Format, ImportError};
use crate::base::time::Micros;

/// The format.
pub const FORMAT: Format = Format {
    name: "Polly v8 options (JSON)",
    about: "JSON with Retry (RetryStrategyOptions) and/or CircuitBreaker \
            (CircuitBreakerStrategyOptions), at the root or in a section",
    selects: &[
        (
            "section",
            "the configuration section (A:B, as IConfiguration names it) holding Retry and \
             CircuitBreaker",
        ),
        (
            "pipeline",
            "retry-outside (default: a refused call is retried) or breaker-outside",
        ),
    ],
    parse: from_json,
    claims,
    read,
};

const STRATEGIES: [&str; 2] = ["Retry", "CircuitBreaker"];

/// The sections (paths as `A:B`, "" for the root) holding a strategy.
fn sections(value: &Value, path: &str, out: &mut Vec<(String, Vec<String>)>) {
    let Some(object) = value.as_object() else {
        return;
    };
    if object
        .iter()
        .any(|(k, v)| v.is_object() && STRATEGIES.iter().any(|s| s.eq_ignore_ascii_case(k)))
    {
        out.push((path.to_string(), Vec::new()));
        return;
    }
    for (k, v) in object {
        let sub = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}:{k}")
        };
        sections(v, &sub, out);
    }
}

fn claims(value: &Value) -> bool {
    let mut found = Vec::new();
    sections(value, "", &mut found);
    !found.is_empty()
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    // .NET's provider refuses a key given twice, ignoring case; the parsed
    // document kept one of them.
    if let Some(found) = super::dotnet::duplicate(ctx.text) {
        return Err(ctx.error_at(&found.path, found.message));
    }
    let mut found = Vec::new();
    sections(root.value(), "", &mut found);
    let names: Vec<String> = found
        .iter()
        .map(|(p, _)| {
            if p.is_empty() {
                "(the root)".to_string()
            } else {
                p.clone()
            }
        })
        .collect();
    let section = match ctx.selection("section") {
        Some(wanted) => {
            let mut node = root.clone();
            for step in wanted.split(':').filter(|s| !s.is_empty()) {
                node = node.get_ignoring_case(step).ok_or_else(|| {
                    ctx.error(
                        &node,
                        format!(
                            "no section '{wanted}' (no '{step}' here); sections with a \
                             strategy: {}",
                            names.join(", ")
                        ),
                    )
                })?;
            }
            node
        }
        None => match found.as_slice() {
            [(path, _)] => {
                let mut node = root.clone();
                for step in path.split(':').filter(|s| !s.is_empty()) {
                    node = node.get(step).expect("found there");
                }
                node
            }
            _ => {
                return Err(ctx.error(
                    root,
                    format!(
                        "several sections hold Retry or CircuitBreaker: choose one with \
                         --select section=PATH (one of {})",
                        names.join(", ")
                    ),
                ));
            }
        },
    };
    const OTHERS: [(&str, &str); 4] = [
        (
            "AttemptTimeout",
            "a timeout strategy: give the attempt timeout as --timeout",
        ),
        (
            "TotalRequestTimeout",
            "a timeout over all attempts: give it as --deadline",
        ),
        ("RateLimiter", "Polly's rate limiter is not modelled"),
        ("Hedging", "Polly's hedging is not modelled"),
    ];
    for (name, why) in OTHERS {
        if let Some(node) = section.get_ignoring_case(name) {
            return Err(ctx.unsupported(&node, why));
        }
    }
    section.only_ignoring_case(ctx, &STRATEGIES)?;
    let pipeline = match ctx.selection("pipeline") {
        None | Some("retry-outside") => "retry",
        Some("breaker-outside") => "end",
        Some(other) => {
            return Err(ctx.error_at(
                "--select pipeline",
                format!("'{other}': expected retry-outside or breaker-outside"),
            ));
        }
    };
    let retry = section.get_ignoring_case("Retry");
    let breaker = section.get_ignoring_case("CircuitBreaker");
    let mut chosen = Vec::new();
    if !section.path().starts_with('(') {
        chosen.push(format!("section {}", section.path().replace('.', ":")));
    }
    if let Some(node) = &retry {
        read_retry(ctx, node)?;
        chosen.push("Retry".to_string());
    }
    if let Some(node) = &breaker {
        read_breaker(ctx, node, pipeline)?;
        chosen.push("CircuitBreaker".to_string());
    }
    ctx.chose(chosen.join(", "));
    Ok(())
}

/// Refuses the delegate properties, which no JSON can give a value.
fn refuse_delegates(ctx: &Context<'_>, node: &Node<'_>, names: &[&str]) -> Result<(), ImportError> {
    for name in names {
        if let Some(n) = node.get_ignoring_case(name) {
            return Err(ctx.unsupported(
                &n,
                "a .NET delegate or object (predicate, generator, event or control) herdsim \
                 cannot run; every failure is handled",
            ));
        }
    }
    Ok(())
}

/// A .NET TimeSpan as `TimeSpan.Parse` reads it (invariant culture), µs.
pub fn timespan(text: &str) -> Result<Micros, String> {
    let accepted = "a .NET TimeSpan: [d.]hh:mm[:ss[.fffffff]] (\"00:00:02\", \"1.00:00:00\") \
                    or whole days (\"1\")";
    let bad = || format!("\"{text}\" is not {accepted}");
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("\"{text}\" is negative: expected {accepted}"));
    }
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    const US_DAY: u64 = 86_400_000_000;
    if !t.contains(':') {
        let days = number(t).ok_or_else(bad)?;
        return days
            .checked_mul(US_DAY)
            .map(Micros::from_ticks)
            .ok_or_else(bad);
    }
    let parts: Vec<&str> = t.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return Err(bad());
    }
    let (days, hours) = match parts[0].split_once('.') {
        Some((d, h)) => (number(d).ok_or_else(bad)?, number(h).ok_or_else(bad)?),
        None => (0, number(parts[0]).ok_or_else(bad)?),
    };
    let minutes = number(parts[1]).ok_or_else(bad)?;
    let (seconds, ticks) = match parts.get(2) {
        None => (0, 0),
        Some(s) => match s.split_once('.') {
            Some((w, f)) => {
                if f.is_empty() || f.len() > 7 || !f.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                let ticks: u64 = format!("{f:0<7}").parse().map_err(|_| bad())?;
                (number(w).ok_or_else(bad)?, ticks)
            }
            None => (number(s).ok_or_else(bad)?, 0),
        },
    };
    if hours > 23 || minutes > 59 || seconds > 59 {
        return Err(format!(
            "\"{text}\" has hours above 23, or minutes or seconds above 59: expected {accepted}"
        ));
    }
    if ticks % 10 != 0 {
        return Err(format!(
            "\"{text}\" is not a whole number of microseconds, herdsim's resolution"
        ));
    }
    let us = days
        .checked_mul(US_DAY)
        .and_then(|d| d.checked_add(((hours * 60 + minutes) * 60 + seconds) * 1_000_000))
        .and_then(|d| d.checked_add(ticks / 10))
        .ok_or_else(bad)?;
    Ok(Micros::from_ticks(us))
}

fn duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<Micros, ImportError> {
    let text = match node.value() {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => {
            return Err(ctx.error(
                node,
                format!(
                    "expected a TimeSpan such as \"00:00:02\", found {}",
                    kind(other)
                ),
            ));
        }
    };
    timespan(&text).map_err(|why| ctx.error(node, why))
}

/// A duration within Polly's `[Range]` of `lo` to `hi` µs.
fn ranged(
    ctx: &Context<'_>,
    node: &Node<'_>,
    lo: Micros,
    hi: Micros,
    range: &str,
) -> Result<Micros, ImportError> {
    let us = duration(ctx, node)?;
    if !(lo..=hi).contains(&us) {
        return Err(ctx.error(
            node,
            format!("is {}, out of Polly's range: accepted {range}", herdsim(us)),
        ));
    }
    Ok(us)
}

const DAY_US: Micros = Micros::from_s(86_400);

fn read_retry(ctx: &Context<'_>, node: &Node<'_>) -> Result<(), ImportError> {
    refuse_delegates(
        ctx,
        node,
        &["ShouldHandle", "DelayGenerator", "OnRetry", "Randomizer"],
    )?;
    node.only_ignoring_case(
        ctx,
        &[
            "MaxRetryAttempts",
            "Delay",
            "BackoffType",
            "UseJitter",
            "MaxDelay",
            "Name",
        ],
    )?;
    let field = |k: &str| node.get_ignoring_case(k);
    let (retries, retries_from) = match field("MaxRetryAttempts") {
        Some(n) => {
            let r = n.u64(ctx, true)?;
            if !(1..=i32::MAX as u64).contains(&r) {
                return Err(ctx.error(&n, "out of Polly's range: accepted 1 to 2147483647"));
            }
            (r, Some(n.path().to_string()))
        }
        None => (3, None),
    };
    let from: Vec<&str> = retries_from.iter().map(String::as_str).collect();
    ctx.set(
        "max_attempts",
        (retries + 1).to_string(),
        &from,
        format!(
            "MaxRetryAttempts {retries}{} counts retries → max_attempts {}: the first \
             attempt and {retries} retries",
            if retries_from.is_none() {
                " (Polly's default)"
            } else {
                ""
            },
            retries + 1
        ),
    )?;
    let mut paths: Vec<String> = Vec::new();
    let delay = match field("Delay") {
        Some(n) => {
            paths.push(n.path().to_string());
            ranged(ctx, &n, Micros::ZERO, DAY_US, "00:00:00 to 1.00:00:00")?
        }
        None => Micros::from_s(2),
    };
    let backoff = match field("BackoffType") {
        Some(n) => {
            paths.push(n.path().to_string());
            let text = match n.value() {
                Value::String(s) => s.trim().to_string(),
                Value::Number(x) => x.to_string(),
                other => {
                    return Err(ctx.error(
                        &n,
                        format!(
                            "expected Constant, Linear or Exponential, found {}",
                            kind(other)
                        ),
                    ));
                }
            };
            match text.to_ascii_lowercase().as_str() {
                "constant" | "0" => "Constant",
                "linear" | "1" => "Linear",
                "exponential" | "2" => "Exponential",
                _ => {
                    return Err(
                        ctx.error(&n, "expected Constant, Linear or Exponential (or 0, 1, 2)")
                    );
                }
            }
        }
        None => "Constant",
    };
    let jitter = match field("UseJitter") {
        Some(n) => {
            paths.push(n.path().to_string());
            n.bool(ctx, true)?
        }
        None => false,
    };
    let max = match field("MaxDelay") {
        Some(n) => {
            paths.push(n.path().to_string());
            Some(ranged(
                ctx,
                &n,
                Micros::ZERO,
                DAY_US,
                "00:00:00 to 1.00:00:00",
            )?)
        }
        None => None,
    };
    let from: Vec<&str> = paths.iter().map(String::as_str).collect();
    if delay == Micros::ZERO {
        return ctx.set(
            "policy",
            "no-backoff",
            &from,
            "Delay 0: Polly returns no delay for every backoff type",
        );
    }
    let k = retries.min(u32::MAX as u64) as f64;
    // The longest delay the retries can reach without MaxDelay, µs.
    let top: f64 = match (backoff, jitter) {
        ("Constant", false) => delay.ticks() as f64,
        ("Constant", true) => 1.25 * delay.ticks() as f64,
        ("Linear", false) => k * delay.ticks() as f64,
        ("Linear", true) => 1.25 * k * delay.ticks() as f64,
        ("Exponential", false) => delay.ticks() as f64 * 2f64.powf(k - 1.0),
        // next − prev ≤ 2^t·tanh(√(4t)) ≤ 2^k for t < k, scaled by 1/1.4.
        _ => delay.ticks() as f64 * 2f64.powf(k) / 1.4,
    };
    let cap_rule;
    let cap = match max {
        Some(m) => {
            cap_rule = "MaxDelay → cap: Polly clamps the final delay, after the jitter".to_string();
            m
        }
        None => {
            cap_rule =
                "no MaxDelay: no cap; set above the longest delay the retries reach".to_string();
            Micros::from_ticks((top.ceil() + 1.0).min(DAY_US.ticks() as f64 * 365.0) as u64)
        }
    };
    let (policy, rule) = match (backoff, jitter) {
        ("Constant", false) => ("constant", "Constant: every retry waits Delay"),
        ("Constant", true) => (
            "polly-constant-jitter",
            "Constant with jitter: Delay·U[0.75, 1.25), then MaxDelay",
        ),
        ("Linear", false) => ("linear", "Linear: retry k waits k·Delay"),
        ("Linear", true) => (
            "polly-linear-jitter",
            "Linear with jitter: k·Delay·U[0.75, 1.25), then MaxDelay",
        ),
        ("Exponential", false) => ("none", "Exponential: retry k waits Delay·2^(k−1)"),
        _ => (
            "decorrelated-v2",
            "Exponential with jitter: Polly's DecorrelatedJitterBackoffV2 (Delay is its median \
             first delay), then MaxDelay",
        ),
    };
    ctx.set("policy", policy, &from, rule)?;
    ctx.set("base", herdsim(delay), &from, "Delay → base")?;
    if policy == "linear" {
        ctx.set(
            "step",
            herdsim(delay),
            &from,
            "Linear grows by Delay each retry → step",
        )?;
    }
    if policy == "none" {
        ctx.set("multiplier", "2", &from, "Polly's exponential factor is 2")?;
    }
    ctx.set("cap", herdsim(cap), &from, cap_rule)?;
    Ok(())
}

fn read_breaker(ctx: &Context<'_>, node: &Node<'_>, refused: &str) -> Result<(), ImportError> {
    refuse_delegates(
        ctx,
        node,
        &[
            "ShouldHandle",
            "BreakDurationGenerator",
            "OnClosed",
            "OnOpened",
            "OnHalfOpened",
            "ManualControl",
            "StateProvider",
        ],
    )?;
    node.only_ignoring_case(
        ctx,
        &[
            "FailureRatio",
            "MinimumThroughput",
            "SamplingDuration",
            "BreakDuration",
            "Name",
        ],
    )?;
    let field = |k: &str| node.get_ignoring_case(k);
    let mut paths: Vec<String> = Vec::new();
    let ratio = match field("FailureRatio") {
        Some(n) => {
            paths.push(n.path().to_string());
            let r = n.f64(ctx, true)?;
            if !(0.0..=1.0).contains(&r) {
                return Err(ctx.error(&n, "out of Polly's range: accepted 0 to 1"));
            }
            r
        }
        None => 0.1,
    };
    let throughput = match field("MinimumThroughput") {
        Some(n) => {
            paths.push(n.path().to_string());
            let t = n.u64(ctx, true)?;
            if !(2..=i32::MAX as u64).contains(&t) {
                return Err(ctx.error(&n, "out of Polly's range: accepted 2 to 2147483647"));
            }
            t
        }
        None => 100,
    };
    let mut span = |key: &str, default: Micros| -> Result<Micros, ImportError> {
        match field(key) {
            Some(n) => {
                paths.push(n.path().to_string());
                ranged(
                    ctx,
                    &n,
                    Micros::from_ms(500),
                    DAY_US,
                    "00:00:00.500 to 1.00:00:00",
                )
            }
            None => Ok(default),
        }
    };
    let sampling = span("SamplingDuration", Micros::from_s(30))?;
    let break_for = span("BreakDuration", Micros::from_s(5))?;
    let from: Vec<&str> = paths.iter().map(String::as_str).collect();
    let rule = format!(
        "Polly's circuit breaker: opens after a failure when the last {} (10 buckets) hold \
         ≥ {throughput} outcomes and failures/outcomes ≥ {ratio}; open for {}; then one probe; {}",
        herdsim(sampling),
        herdsim(break_for),
        if refused == "retry" {
            "the retry outside it retries a refused call (BrokenCircuitException), using up an attempt"
        } else {
            "the breaker outside the retry ends a refused call's request"
        }
    );
    ctx.set(
        "breaker",
        format!(
            "polly:{ratio},throughput:{throughput},sampling:{},break:{},refused:{refused}",
            herdsim(sampling),
            herdsim(break_for)
        ),
        &from,
        rule,
    )
}

#[cfg(test)]
mod tests {
    use super::super::{Imported, import_one};
    use super::timespan;
    use crate::base::time::Micros;

    fn read_with(text: &str, select: &[(&str, &str)]) -> Result<Imported, String> {
        import_one("appsettings.json", text, select)
    }

    fn value(got: &Imported, key: &str) -> String {
        got.value(key).unwrap_or("-").to_string()
    }

    #[test]
    fn timespans_are_read_as_dotnet_parses_them() {
        for (text, us) in [
            ("00:00:02", 2_000_000),
            ("00:00:00.500", 500_000),
            ("1.00:00:00", 86_400_000_000),
            ("00:01", 60_000_000),
            ("1", 86_400_000_000),
            ("00:00:00.0000010", 1),
        ] {
            assert_eq!(timespan(text), Ok(Micros::from_ticks(us)), "{text}");
        }
        for bad in [
            "PT2S",
            "2s",
            "00:60:00",
            "24:00:00",
            "-00:00:01",
            "00:00:00.00000001",
            "00:00:00.0000001",
        ] {
            assert!(timespan(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_defaults_are_pollys() {
        // RetryStrategyOptions: 3 retries of a constant 2 s, no jitter;
        // CircuitBreakerStrategyOptions: 0.1, 100, 30 s, 5 s.
        let got = read_with(r#"{"Retry": {}, "CircuitBreaker": {}}"#, &[]).unwrap();
        assert_eq!(value(&got, "max_attempts"), "4");
        assert_eq!(
            (value(&got, "policy"), value(&got, "base")),
            ("constant".into(), "2s".into())
        );
        assert_eq!(
            value(&got, "breaker"),
            "polly:0.1,throughput:100,sampling:30s,break:5s,refused:retry"
        );
    }

    #[test]
    fn each_backoff_type_is_its_policy_and_maxdelay_the_cap() {
        let retry = |body: &str| read_with(&format!(r#"{{"retry": {{{body}}}}}"#), &[]).unwrap();
        let got = retry(r#""backofftype": "linear", "delay": "00:00:01", "MaxRetryAttempts": "5""#);
        assert_eq!(
            (
                value(&got, "policy"),
                value(&got, "step"),
                value(&got, "cap")
            ),
            ("linear".into(), "1s".into(), "5000.001ms".into())
        );
        let got = retry(r#""BackoffType": 2, "Delay": "00:00:01", "MaxDelay": "00:00:10""#);
        assert_eq!(
            (
                value(&got, "policy"),
                value(&got, "multiplier"),
                value(&got, "cap")
            ),
            ("none".into(), "2".into(), "10s".into())
        );
        let got = retry(r#""BackoffType": "Exponential", "UseJitter": "true""#);
        assert_eq!(value(&got, "policy"), "decorrelated-v2");
        let got = retry(r#""UseJitter": true"#);
        assert_eq!(value(&got, "policy"), "polly-constant-jitter");
        let got = retry(r#""BackoffType": "Linear", "UseJitter": true, "MaxDelay": "00:00:03""#);
        assert_eq!(
            (value(&got, "policy"), value(&got, "cap")),
            ("polly-linear-jitter".into(), "3s".into())
        );
        let got = retry(r#""Delay": "00:00:00""#);
        assert_eq!(value(&got, "policy"), "no-backoff");
    }

    #[test]
    fn the_section_is_selected_or_the_only_one() {
        let text = r#"{"Resilience": {"A": {"Retry": {"MaxRetryAttempts": 1}}, "B": {"Retry": {"MaxRetryAttempts": 7}}}}"#;
        let err = read_with(text, &[]).unwrap_err();
        assert!(
            err.contains("--select section=PATH (one of Resilience:A, Resilience:B)"),
            "{err}"
        );
        let got = read_with(text, &[("section", "resilience:b")]).unwrap();
        assert_eq!(value(&got, "max_attempts"), "8");
        let got = read_with(
            text,
            &[("section", "Resilience:A"), ("pipeline", "breaker-outside")],
        );
        assert!(got.is_ok());
    }

    #[test]
    fn bad_and_unmodelled_fields_are_refused_with_their_path() {
        let err = |text: &str| read_with(text, &[]).unwrap_err();
        let e = err(r#"{"Retry": {"MaxRetryAttempts": 0}}"#);
        assert!(
            e.starts_with("appsettings.json: Retry.MaxRetryAttempts: out of Polly's range"),
            "{e}"
        );
        let e = err(r#"{"Retry": {"Delay": "PT2S"}}"#);
        assert!(
            e.contains("Retry.Delay: \"PT2S\" is not a .NET TimeSpan"),
            "{e}"
        );
        let e = err(r#"{"Retry": {"Delay": "2"}}"#);
        assert!(e.contains("is 48h, out of Polly's range"), "{e}");
        let e = err(r#"{"Retry": {"MaxRetryAttemps": 3}}"#);
        assert!(e.contains("Retry.MaxRetryAttemps: unknown field"), "{e}");
        let e = err(r#"{"CircuitBreaker": {"BreakDuration": "00:00:00.100"}}"#);
        assert!(
            e.contains("out of Polly's range: accepted 00:00:00.500 to 1.00:00:00"),
            "{e}"
        );
        let e = err(r#"{"CircuitBreaker": {"ShouldHandle": "x"}}"#);
        assert!(
            e.contains("CircuitBreaker.ShouldHandle: not modelled"),
            "{e}"
        );
        let e = err(r#"{"Retry": {}, "AttemptTimeout": {"Timeout": "00:00:10"}}"#);
        assert!(e.contains("AttemptTimeout: not modelled"), "{e}");
        let e = err(r#"{"Retry": {"BackoffType": "Fibonacci"}}"#);
        assert!(
            e.contains("expected Constant, Linear or Exponential"),
            "{e}"
        );
    }
}
