//! Spring Boot's binding of a property to its Java field: relaxed names
//! (`maxAttempts`, `max-attempts`), durations (`500`, `500ms`, `PT0.5S`),
//! booleans and enum constants, as the sections' fields are read.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::base::time::Micros;
use crate::import::tree::{Node, kind};
use crate::import::{Context, ImportError};

/// Spring's relaxed form of a property name: lower case, without `-` and
/// `_` (`maxAttempts`, `max-attempts`, `MAX_ATTEMPTS` are one).
pub(super) fn relaxed(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// An object's fields by relaxed name; two spellings of one are an error.
pub(super) fn fields<'a>(
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
    u64::try_from(ns / 1_000)
        .map(Micros::from_ticks)
        .map_err(|_| format!("\"{text}\" is too long"))
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

pub(super) fn duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<Micros, ImportError> {
    let text = match node.value() {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_u64() || n.is_i64() => n.to_string(),
        other => {
            return Err(ctx.error(
                node,
                format!("expected a duration such as 500ms, found {}", kind(other)),
            ));
        }
    };
    spring_duration(&text).map_err(|why| ctx.error(node, why))
}

/// Spring's boolean conversion: true/false, on/off, yes/no, 1/0.
pub(super) fn boolean(ctx: &Context<'_>, node: &Node<'_>) -> Result<bool, ImportError> {
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
pub(super) fn constant<'c>(
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

#[cfg(test)]
mod tests {
    use super::spring_duration;
    use crate::base::time::Micros;

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
            assert_eq!(spring_duration(text), Ok(Micros::from_ticks(us)), "{text}");
        }
        for bad in ["0.5s", "-1s", "10 s", "1w", "PT", "P1S", "1500ns", "abc"] {
            assert!(spring_duration(bad).is_err(), "{bad}");
        }
    }
}
