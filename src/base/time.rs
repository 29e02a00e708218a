//! Simulated time: integer microseconds, and the duration syntax of the CLI and
//! scenario files (`250us`, `100ms`, `20s`, `2m`; a bare number is milliseconds).
//!
//! Integer time makes every run exact and reproducible: two events at "the same
//! instant" really are at the same instant, and ties are broken by the queue's
//! sequence number, never by floating-point noise.

use crate::base::error::BaseError;

/// A point in simulated time, or a duration, in microseconds.
pub type Micros = u64;

/// Microseconds in one millisecond.
pub const US_PER_MS: Micros = 1_000;

/// The longest duration accepted anywhere (365 days): far beyond any backoff cap,
/// and small enough that no sum of a few of them can overflow `u64`.
pub const MAX_DURATION_US: Micros = 365 * 24 * 3_600 * 1_000_000;

/// What a duration may look like, for error messages.
pub const DURATION_SYNTAX: &str =
    "a duration such as 250us, 100ms, 1.5s, 2m or 1h (a bare number is milliseconds)";

/// Parses a duration into whole microseconds.
///
/// Accepts a decimal number followed by `us` (or `µs`), `ms`, `s`, `m` or `h`,
/// with optional white space between; a bare number means milliseconds. The
/// result must be a whole number of microseconds no larger than
/// [`MAX_DURATION_US`]. The error is one line that says what is accepted.
pub fn parse_duration(text: &str) -> Result<Micros, BaseError> {
    // Digits may be grouped with `_`, as in whole numbers (`1_000ms`).
    let grouped: String = text.trim().chars().filter(|&c| c != '_').collect();
    let trimmed = grouped.as_str();
    if trimmed.starts_with('-') {
        return Err(BaseError::NegativeDuration);
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim();
    let us_per_unit: f64 = match unit {
        "us" | "µs" => 1.0,
        "" | "ms" => 1e3,
        "s" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3_600e6,
        _ => {
            return Err(BaseError::UnknownUnit {
                unit: unit.to_string(),
            });
        }
    };
    if number.is_empty() || number.chars().filter(|&c| c == '.').count() > 1 {
        return Err(BaseError::NotADuration);
    }
    let value: f64 = number.parse().map_err(|_| BaseError::NotADuration)?;
    let us = value * us_per_unit;
    if !(us.is_finite() && us <= MAX_DURATION_US as f64) {
        return Err(BaseError::DurationTooLong);
    }
    // Whole µs, up to the float's own error in reading the decimal: 1000.0001
    // ms is refused as 0.0015 ms is.
    let whole = us.round();
    if (us - whole).abs() > 1e-6_f64.max(us * 1e-12) {
        return Err(BaseError::NotWholeMicros {
            text: trimmed.to_string(),
        });
    }
    Ok(whole as Micros)
}

/// Formats a duration in the largest unit that shows it exactly, as the CLI
/// accepts it back: `100ms`, `20s`, `250us`, `1.5s`.
pub fn format_duration(us: Micros) -> String {
    const HOUR: Micros = 3_600_000_000;
    const MINUTE: Micros = 60_000_000;
    const SECOND: Micros = 1_000_000;
    if us >= HOUR && us.is_multiple_of(HOUR) {
        format!("{}h", us / HOUR)
    } else if us >= MINUTE && us.is_multiple_of(MINUTE) {
        format!("{}m", us / MINUTE)
    } else if us >= SECOND && us.is_multiple_of(US_PER_MS) {
        format!("{}s", us as f64 / SECOND as f64)
    } else if us >= US_PER_MS {
        format!("{}ms", us as f64 / US_PER_MS as f64)
    } else {
        format!("{us}us")
    }
}

/// A span for people to read, in the largest unit that keeps it at least 1,
/// with `decimals` decimals: `5.5 h`, `20.3 min`, `12.7 s`, `250.0 ms`,
/// `96.1 µs` (one decimal).
pub fn human_seconds(seconds: f64, decimals: usize) -> String {
    let (value, unit) = if seconds >= 3_600.0 {
        (seconds / 3_600.0, "h")
    } else if seconds >= 60.0 {
        (seconds / 60.0, "min")
    } else if seconds >= 1.0 {
        (seconds, "s")
    } else if seconds >= 1e-3 {
        (seconds * 1e3, "ms")
    } else {
        (seconds * 1e6, "µs")
    };
    format!("{value:.decimals$} {unit}")
}

/// A span of simulated time as people read it, one decimal.
pub fn human_duration(us: Micros) -> String {
    human_seconds(us as f64 / 1e6, 1)
}

/// Converts microseconds to milliseconds, the unit of every reported time.
pub fn us_to_ms(us: Micros) -> f64 {
    us as f64 / US_PER_MS as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_spans_pick_their_unit() {
        assert_eq!(human_duration(19_800_000_000), "5.5 h");
        assert_eq!(human_duration(1_218_000_000), "20.3 min");
        assert_eq!(human_duration(12_700_000), "12.7 s");
        assert_eq!(human_duration(250_000), "250.0 ms");
        assert_eq!(human_seconds(96.1e-6, 2), "96.10 µs");
        assert_eq!(human_seconds(3.7891, 2), "3.79 s");
    }

    #[test]
    fn units_convert_to_microseconds() {
        assert_eq!(parse_duration("250us"), Ok(250));
        assert_eq!(parse_duration("250µs"), Ok(250));
        assert_eq!(parse_duration("100ms"), Ok(100_000));
        assert_eq!(parse_duration("100"), Ok(100_000));
        assert_eq!(parse_duration("0.5"), Ok(500));
        assert_eq!(parse_duration("20s"), Ok(20_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000));
        assert_eq!(parse_duration("2m"), Ok(120_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000));
        assert_eq!(parse_duration(" 20 s "), Ok(20_000_000));
        assert_eq!(parse_duration("1_000ms"), Ok(1_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
    }

    #[test]
    fn nonsense_is_rejected_with_the_accepted_syntax() {
        for bad in [
            "10 parsecs",
            "NaN",
            "nan",
            "inf",
            "-5ms",
            "",
            "ms",
            "1.2.3s",
            "1e3",
            "0.1us",
            "1000.0001",
            "-1s",
            "400d",
        ] {
            let err = parse_duration(bad).expect_err(bad).to_string();
            assert!(!err.contains('\n'), "one line: {err}");
            assert!(
                err.contains("duration") || err.contains("resolution"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn formatting_round_trips() {
        for us in [
            1,
            250,
            1_000,
            1_500,
            100_000,
            1_500_000,
            20_000_000,
            120_000_000,
        ] {
            assert_eq!(parse_duration(&format_duration(us)), Ok(us), "{us}");
        }
        assert_eq!(format_duration(100_000), "100ms");
        assert_eq!(format_duration(20_000_000), "20s");
        assert_eq!(format_duration(1_500_000), "1.5s");
    }
}
