//! The parsers of parameter values, each with its accepted range: the
//! registry's `set`, clap and scenario files all read values through these.

use super::{CAPACITY_RANGE, MAX_ATTEMPTS, MAX_CLIENTS, MAX_SEEDS, ParamError, Seeding};
use crate::base::time::{Micros, format_duration, parse_duration};
use crate::control::retry_after::RetryAfter;
use crate::control::{ControlSpec, Family};
use crate::model::ResourceKind;
use crate::model::arrivals::Arrivals;
use crate::policy::{CapMode, PolicyKind};

/// The largest first-retry exponent.
pub const MAX_FIRST_EXPONENT: u32 = 16;

/// Parses a control of `family` (as `--budget`, `--breaker` and
/// `--throttle` do); `none` is none.
pub fn parse_control(family: Family, text: &str) -> Result<Option<ControlSpec>, ParamError> {
    Ok(ControlSpec::parse(family, text)?)
}

/// Parses a fleet size (as `--fleet` does).
pub fn parse_fleet(text: &str) -> Result<u32, ParamError> {
    parse_count(text, 1, MAX_CLIENTS).map(|n| n as u32)
}

/// Parses a retry-hint mode (as `--retry-after` does).
pub fn parse_retry_after(text: &str) -> Result<RetryAfter, ParamError> {
    Ok(text.parse()?)
}

/// Parses a seeding mode (as `--seeding` does).
pub fn parse_seeding(text: &str) -> Result<Seeding, ParamError> {
    Ok(text.parse()?)
}

/// An outage window `[from, to)` with `from < to`.
pub fn check_down(from: Micros, to: Micros) -> Result<(Micros, Micros), ParamError> {
    if from < to {
        Ok((from, to))
    } else {
        Err(ParamError::Window)
    }
}

/// `5s..15s`.
pub fn format_window(from: Micros, to: Micros) -> String {
    format!("{}..{}", format_duration(from), format_duration(to))
}

/// Parses an outage window `<from>..<to>` (as `--down` does).
pub fn parse_down(text: &str) -> Result<(Micros, Micros), ParamError> {
    let (from, to) = text.split_once("..").ok_or(ParamError::Window)?;
    check_down(parse_duration(from)?, parse_duration(to)?)
}

/// Parses a resource model's name (as `--resource` does).
pub fn parse_resource(text: &str) -> Result<ResourceKind, ParamError> {
    Ok(text.parse()?)
}

/// Parses an arrival pattern (as `--arrivals` does).
pub fn parse_arrivals(text: &str) -> Result<Arrivals, ParamError> {
    Ok(text.parse()?)
}

/// Parses a maximum number of attempts (as `--max-attempts` does).
pub fn parse_max_attempts(text: &str) -> Result<u32, ParamError> {
    parse_count(text, 1, MAX_ATTEMPTS).map(|n| n as u32)
}

/// Parses a cap mode (as `--cap-mode` does).
pub fn parse_cap_mode(text: &str) -> Result<CapMode, ParamError> {
    Ok(text.parse()?)
}

/// Parses a first-retry exponent (as `--first-exponent` does).
pub fn parse_first_exponent(text: &str) -> Result<u32, ParamError> {
    parse_count(text, 0, u64::from(MAX_FIRST_EXPONENT)).map(|n| n as u32)
}

/// The largest backoff multiplier (`--multiplier`).
pub const MAX_MULTIPLIER: f64 = 100.0;

/// Parses a backoff multiplier: above 1 (1 would not back off) and at most
/// [`MAX_MULTIPLIER`].
pub fn parse_multiplier(text: &str) -> Result<f64, ParamError> {
    let m: f64 = text.trim().parse().unwrap_or(f64::NAN);
    if m > 1.0 && m <= MAX_MULTIPLIER {
        Ok(m)
    } else {
        Err(ParamError::Multiplier)
    }
}

/// A whole number in `min..=max`.
pub fn check_count(n: u64, min: u64, max: u64) -> Result<u64, ParamError> {
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(ParamError::Count { min, max })
    }
}

/// Parses a whole number in `min..=max` (negative numbers and junk get the
/// same message: what is accepted).
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, ParamError> {
    let n: u64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| ParamError::Count { min, max })?;
    check_count(n, min, max)
}

/// A capacity in requests per ms.
pub fn check_capacity(c: f64) -> Result<f64, ParamError> {
    let (lo, hi) = CAPACITY_RANGE;
    if c.is_finite() && (lo..=hi).contains(&c) {
        Ok(c)
    } else {
        Err(ParamError::Capacity)
    }
}

/// Parses a capacity in requests per ms.
pub fn parse_capacity(text: &str) -> Result<f64, ParamError> {
    check_capacity(text.trim().parse().unwrap_or(f64::NAN))
}

/// A jitter factor in `[0, 1]`.
pub fn check_jitter_factor(f: f64) -> Result<f64, ParamError> {
    if (0.0..=1.0).contains(&f) {
        Ok(f)
    } else {
        Err(ParamError::JitterFactor)
    }
}

/// Parses a jitter factor in `[0, 1]`.
pub fn parse_jitter_factor(text: &str) -> Result<f64, ParamError> {
    check_jitter_factor(text.trim().parse().unwrap_or(f64::NAN))
}

/// Parses resilience4j's randomization factor, in `[0, 1]`.
pub fn parse_randomization_factor(text: &str) -> Result<f64, ParamError> {
    let f: f64 = text.trim().parse().unwrap_or(f64::NAN);
    if (0.0..=1.0).contains(&f) {
        Ok(f)
    } else {
        Err(ParamError::RandomizationFactor)
    }
}

/// A duration of at least 1 µs.
pub fn check_positive_duration(us: Micros) -> Result<Micros, ParamError> {
    if us >= Micros::from_us(1) {
        Ok(us)
    } else {
        Err(ParamError::ZeroDuration)
    }
}

/// Parses a duration of at least 1 µs.
pub fn parse_positive_duration(text: &str) -> Result<Micros, ParamError> {
    check_positive_duration(parse_duration(text)?)
}

/// Parses a policy name (as `--policy` does).
pub fn parse_policy(text: &str) -> Result<PolicyKind, ParamError> {
    Ok(text.parse()?)
}

/// Parses a client count (as `--clients` does).
pub fn parse_clients(text: &str) -> Result<u32, ParamError> {
    parse_count(text, 1, MAX_CLIENTS).map(|n| n as u32)
}

/// Parses a replicate count (as `--seeds` does).
pub fn parse_replicates(text: &str) -> Result<u32, ParamError> {
    parse_count(text, 1, MAX_SEEDS).map(|n| n as u32)
}

/// Parses a master seed (as `--seed` does).
pub fn parse_master_seed(text: &str) -> Result<u64, ParamError> {
    parse_count(text, 0, u64::MAX)
}

/// Parses a duration that may be zero (as `--step` does).
pub fn parse_step(text: &str) -> Result<Micros, ParamError> {
    Ok(parse_duration(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_with_their_range_in_the_error() {
        assert_eq!(parse_count("1_000", 1, 10_000), Ok(1_000));
        assert_eq!(
            parse_count("-5", 1, 100_000_000).unwrap_err().to_string(),
            "expected a whole number from 1 to 100,000,000"
        );
        assert!(parse_count("0", 1, 5).is_err());
        assert!(parse_count("6", 1, 5).is_err());
        assert!(parse_count("three", 1, 5).is_err());
    }

    #[test]
    fn lower_layers_reasons_pass_through_unchanged() {
        assert_eq!(
            parse_positive_duration("10 parsecs")
                .unwrap_err()
                .to_string(),
            "unknown unit 'parsecs': expected a duration such as 250us, 100ms, 1.5s, 2m or 1h \
             (a bare number is milliseconds)"
        );
        assert!(matches!(
            parse_control(crate::control::Family::Budget, "tokens:0,cost:1,refund:0"),
            Err(ParamError::Control(_))
        ));
        assert!(matches!(parse_arrivals("storm"), Err(ParamError::Model(_))));
        assert_eq!(
            parse_control(crate::control::Family::Budget, " none "),
            Ok(None)
        );
        assert_eq!(parse_down("5s..1s"), Err(ParamError::Window));
    }
}
