//! Go's `time.ParseDuration`, which the controller reads a profile's
//! durations (`timeout`, `ttl`) with.

use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// A duration as Go's `time.ParseDuration` reads it, in ns; negative
/// durations are refused (none of a profile's may be).
pub(super) fn go_duration(ctx: &Context<'_>, node: &Node<'_>) -> Result<u128, ImportError> {
    let text = node.str(ctx)?;
    parse_go_duration(text).map_err(|why| {
        let why = match why {
            GoDurationError::Syntax => {
                "expected a Go duration (time.ParseDuration: numbers \
                                        with units ns, us, ms, s, m, h, such as \"300ms\", \
                                        \"1m30s\", \"1.5s\")"
            }
            GoDurationError::Negative => "a negative duration: expected 0 or more",
            GoDurationError::Overflow => {
                "overflows Go's duration (an int64 of nanoseconds, \
                                          time.ParseDuration's \"invalid duration\"): expected \
                                          at most 2562047h47m16.854775807s"
            }
        };
        ctx.error(node, format!("\"{text}\": {why}"))
    })
}

/// Why a text is not a duration Go reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoDurationError {
    /// Not numbers with units.
    Syntax,
    /// Below zero (Go reads it; no duration here may be).
    Negative,
    /// Beyond an int64 of nanoseconds (Go refuses it).
    Overflow,
}

/// Go's `time.ParseDuration`, non-negative, in ns (fractions beyond a
/// nanosecond truncated, as Go's are).
pub fn parse_go_duration(text: &str) -> Result<u128, GoDurationError> {
    use GoDurationError::{Negative, Overflow, Syntax};
    if let Some(magnitude) = text.strip_prefix('-') {
        // Go reads a sign; `-0` is zero.
        return match parse_go_duration(magnitude) {
            Ok(0) if !magnitude.starts_with(['+', '-']) => Ok(0),
            Ok(_) if !magnitude.starts_with(['+', '-']) => Err(Negative),
            Err(Overflow) => Err(Negative),
            _ => Err(Syntax),
        };
    }
    let body = text.strip_prefix('+').unwrap_or(text);
    if body == "0" {
        return Ok(0);
    }
    if body.is_empty() || body.starts_with(['+', '-']) {
        return Err(Syntax);
    }
    let mut rest = body;
    let mut total: u128 = 0;
    let mut overflow = false;
    while !rest.is_empty() {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        let whole_len = digits(rest);
        let whole = &rest[..whole_len];
        rest = &rest[whole_len..];
        let fraction = if let Some(after) = rest.strip_prefix('.') {
            let n = digits(after);
            let f = &after[..n];
            rest = &after[n..];
            f
        } else {
            ""
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(Syntax);
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(rest.len(), |(i, _)| i);
        let unit: u128 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(Syntax),
        };
        rest = &rest[unit_len..];
        // Past an int64 the rest is still read for its syntax.
        let w: Option<u128> = if whole.is_empty() {
            Some(0)
        } else {
            whole.parse().ok()
        };
        let mut part = w.and_then(|w| w.checked_mul(unit));
        if !fraction.is_empty() {
            // 20 digits hold a nanosecond of an hour, and their product
            // with the unit fits a u128.
            let kept = fraction.len().min(20);
            let f: u128 = fraction[..kept].parse().map_err(|_| Syntax)?;
            let scale = 10u128.pow(kept as u32);
            part = part.and_then(|p| p.checked_add(f * unit / scale));
        }
        match part.and_then(|p| total.checked_add(p)) {
            Some(t) => total = t,
            None => overflow = true,
        }
    }
    // Go's limit: an int64 of ns.
    if overflow || total > i64::MAX as u128 {
        Err(Overflow)
    } else {
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::{GoDurationError, parse_go_duration};

    #[test]
    fn go_durations_read_as_time_parse_duration() {
        for (text, ns) in [
            ("10s", 10_000_000_000u128),
            ("300ms", 300_000_000),
            ("1m30s", 90_000_000_000),
            ("1.5s", 1_500_000_000),
            (".5s", 500_000_000),
            ("1h", 3_600_000_000_000),
            ("100us", 100_000),
            ("100µs", 100_000),
            ("7ns", 7),
            ("0", 0),
            ("0s", 0),
            ("+2s", 2_000_000_000),
            ("1.0000000019s", 1_000_000_001),
        ] {
            assert_eq!(parse_go_duration(text), Ok(ns), "{text}");
        }
        for bad in [
            "", "10", "s", ".s", "1d", "1 s", "1.2.3s", "--1s", "-+1s", "+-1s",
        ] {
            assert_eq!(
                parse_go_duration(bad),
                Err(GoDurationError::Syntax),
                "{bad}"
            );
        }
        for negative in ["-1s", "-0.5ms", "-2562048h"] {
            assert_eq!(
                parse_go_duration(negative),
                Err(GoDurationError::Negative),
                "{negative}"
            );
        }
        assert_eq!(parse_go_duration("-0"), Ok(0));
        // An int64 of ns is Go's largest: 2562047h47m16.854775807s.
        assert_eq!(
            parse_go_duration("2562047h47m16.854775807s"),
            Ok(i64::MAX as u128)
        );
        for over in [
            "2562047h47m16.854775808s",
            "2562048h",
            "3000000h",
            "99999999999999999999999999999999999999999h",
        ] {
            assert_eq!(
                parse_go_duration(over),
                Err(GoDurationError::Overflow),
                "{over}"
            );
        }
    }
}
