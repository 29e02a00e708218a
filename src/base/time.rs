//! Simulated time: one type, [`Time`], at two resolutions: [`Micros`] =
//! `Time<Us>` (the herd model's clock, the policies' delays, every duration
//! of the CLI and of scenario files) and [`Nanos`] = `Time<Ns>` (the server
//! model's clock, the controls', the server loop's). Also the duration syntax
//! of the CLI and scenario files (`250us`, `100ms`, `20s`, `2m`; a bare
//! number is milliseconds).
//!
//! Integer time makes every run exact and reproducible: two events at "the same
//! instant" really are at the same instant, and ties are broken by the queue's
//! sequence number, never by floating-point noise.
//!
//! A [`Time`] is a `u64` count of ticks of its unit behind a newtype
//! (`#[repr(transparent)]`), so that a µs value is never added to a ns value
//! nor a time taken for a count: only times of the same unit add and
//! subtract, a time scales by a plain `u64` (and divides into a count), and
//! the one conversion between the units ([`Nanos::of_us`], also named
//! [`ns_of_us`]; back with [`Nanos::whole_us`], [`Nanos::round_us`] and
//! [`Nanos::ceil_us`]) lives here. The integer itself is reached with
//! [`Time::ticks`] and [`Time::from_ticks`], only where it really is wanted
//! (event-queue keys, f64 maths, output). Every operation is inlined: the
//! type costs nothing at run time.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::iter::Sum;
use std::marker::PhantomData;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Rem, Shl, Shr, Sub, SubAssign};

use crate::base::error::BaseError;

/// A unit of simulated time: how many of its ticks make one microsecond.
pub trait Unit: 'static + Eq {
    /// Ticks in one microsecond.
    const PER_US: u64;
}

/// The microsecond unit of [`Micros`].
#[derive(Debug, PartialEq, Eq)]
pub enum Us {}

/// The nanosecond unit of [`Nanos`].
#[derive(Debug, PartialEq, Eq)]
pub enum Ns {}

impl Unit for Us {
    const PER_US: u64 = 1;
}

impl Unit for Ns {
    const PER_US: u64 = 1_000;
}

/// A point in simulated time, or a duration, as a whole number of ticks of
/// the unit `U`. Arithmetic is the `u64`'s (a debug build panics on
/// overflow as before); the saturating and checked forms say so by name.
/// (Equality is derived so that a constant time may stand in a pattern.)
#[derive(PartialEq, Eq)]
#[repr(transparent)]
pub struct Time<U: Unit>(u64, PhantomData<U>);

/// A point in simulated time, or a duration, in microseconds: the herd
/// model's clock, the policies' delays and every duration read.
pub type Micros = Time<Us>;

/// A point in simulated time, or a duration, in nanoseconds: the server
/// model's clock and the controls' (the herd's µs are scaled to it with
/// [`ns_of_us`]).
pub type Nanos = Time<Ns>;

impl<U: Unit> Time<U> {
    /// The start of simulated time, and the empty duration.
    pub const ZERO: Self = Self(0, PhantomData);
    /// The end of the clock: the largest time there is.
    pub const MAX: Self = Self(u64::MAX, PhantomData);

    /// The time of `ticks` ticks of the unit.
    #[inline(always)]
    pub const fn from_ticks(ticks: u64) -> Self {
        Self(ticks, PhantomData)
    }

    /// The number of ticks of the unit: for queue keys, hashing, f64 maths
    /// and output, never for arithmetic between times.
    #[inline(always)]
    pub const fn ticks(self) -> u64 {
        self.0
    }

    /// `us` microseconds.
    #[inline(always)]
    pub const fn from_us(us: u64) -> Self {
        Self(us * U::PER_US, PhantomData)
    }

    /// `ms` milliseconds.
    #[inline(always)]
    pub const fn from_ms(ms: u64) -> Self {
        Self(ms * 1_000 * U::PER_US, PhantomData)
    }

    /// `s` seconds.
    #[inline(always)]
    pub const fn from_s(s: u64) -> Self {
        Self(s * 1_000_000 * U::PER_US, PhantomData)
    }

    /// Whether this is the zero time.
    #[inline(always)]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self + rhs`, stopping at [`Time::MAX`].
    #[inline(always)]
    pub const fn saturating_add(self, rhs: Self) -> Self {
        Self(self.0.saturating_add(rhs.0), PhantomData)
    }

    /// `self - rhs`, stopping at zero.
    #[inline(always)]
    pub const fn saturating_sub(self, rhs: Self) -> Self {
        Self(self.0.saturating_sub(rhs.0), PhantomData)
    }

    /// `self · n`, stopping at [`Time::MAX`].
    #[inline(always)]
    pub const fn saturating_mul(self, n: u64) -> Self {
        Self(self.0.saturating_mul(n), PhantomData)
    }

    /// `self + rhs`, or `None` past [`Time::MAX`].
    #[inline(always)]
    pub const fn checked_add(self, rhs: Self) -> Option<Self> {
        match self.0.checked_add(rhs.0) {
            Some(t) => Some(Self(t, PhantomData)),
            None => None,
        }
    }

    /// `self - rhs`, or `None` below zero.
    #[inline(always)]
    pub const fn checked_sub(self, rhs: Self) -> Option<Self> {
        match self.0.checked_sub(rhs.0) {
            Some(t) => Some(Self(t, PhantomData)),
            None => None,
        }
    }

    /// `self · n`, or `None` past [`Time::MAX`].
    #[inline(always)]
    pub const fn checked_mul(self, n: u64) -> Option<Self> {
        match self.0.checked_mul(n) {
            Some(t) => Some(Self(t, PhantomData)),
            None => None,
        }
    }

    /// `|self - rhs|`.
    #[inline(always)]
    pub const fn abs_diff(self, rhs: Self) -> Self {
        Self(self.0.abs_diff(rhs.0), PhantomData)
    }

    /// How many `step`s cover this time, the last one perhaps in part: a
    /// count, not a time.
    #[inline(always)]
    pub const fn div_ceil(self, step: Self) -> u64 {
        self.0.div_ceil(step.0)
    }

    /// Whether this is a whole number of `step`s.
    #[inline(always)]
    pub const fn is_multiple_of(self, step: Self) -> bool {
        self.0.is_multiple_of(step.0)
    }

    /// The smaller of two times.
    #[inline(always)]
    pub fn min(self, other: Self) -> Self {
        Self(self.0.min(other.0), PhantomData)
    }

    /// The larger of two times.
    #[inline(always)]
    pub fn max(self, other: Self) -> Self {
        Self(self.0.max(other.0), PhantomData)
    }
}

impl Nanos {
    /// `us` µs in ns, saturating at the clock's end: the one way from the
    /// herd's unit to the server's.
    #[inline(always)]
    pub const fn of_us(us: Micros) -> Self {
        Self(us.0.saturating_mul(Ns::PER_US), PhantomData)
    }

    /// The µs that cover this time, the last one perhaps in part.
    #[inline(always)]
    pub const fn ceil_us(self) -> Micros {
        Time(self.0.div_ceil(Ns::PER_US), PhantomData)
    }

    /// The nearest whole µs to this time (half a µs rounds up).
    #[inline(always)]
    pub const fn round_us(self) -> Micros {
        Time((self.0 + Ns::PER_US / 2) / Ns::PER_US, PhantomData)
    }

    /// The whole µs in this time, the sub-µs rest dropped.
    #[inline(always)]
    pub const fn whole_us(self) -> Micros {
        Time(self.0 / Ns::PER_US, PhantomData)
    }
}

/// `us` µs in ns, saturating at the clock's end.
#[inline(always)]
pub const fn ns_of_us(us: Micros) -> Nanos {
    Nanos::of_us(us)
}

impl<U: Unit> Clone for Time<U> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<U: Unit> Copy for Time<U> {}

impl<U: Unit> PartialOrd for Time<U> {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
    #[inline(always)]
    fn lt(&self, other: &Self) -> bool {
        self.0 < other.0
    }
    #[inline(always)]
    fn le(&self, other: &Self) -> bool {
        self.0 <= other.0
    }
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        self.0 > other.0
    }
    #[inline(always)]
    fn ge(&self, other: &Self) -> bool {
        self.0 >= other.0
    }
}

impl<U: Unit> Ord for Time<U> {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

impl<U: Unit> Hash for Time<U> {
    #[inline(always)]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<U: Unit> Default for Time<U> {
    #[inline(always)]
    fn default() -> Self {
        Self::ZERO
    }
}

/// Printed as the bare number of ticks, as the `u64` was.
impl<U: Unit> fmt::Debug for Time<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<U: Unit> Add for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self(self.0 + rhs.0, PhantomData)
    }
}

impl<U: Unit> Sub for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        Self(self.0 - rhs.0, PhantomData)
    }
}

impl<U: Unit> AddAssign for Time<U> {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Self) {
        self.0 += rhs.0;
    }
}

impl<U: Unit> SubAssign for Time<U> {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Self) {
        self.0 -= rhs.0;
    }
}

/// A time scaled by a count.
impl<U: Unit> Mul<u64> for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, n: u64) -> Self {
        Self(self.0 * n, PhantomData)
    }
}

impl<U: Unit> MulAssign<u64> for Time<U> {
    #[inline(always)]
    fn mul_assign(&mut self, n: u64) {
        self.0 *= n;
    }
}

/// A time doubled `k` times (the exponential backoffs).
impl<U: Unit> Shl<u32> for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn shl(self, k: u32) -> Self {
        Self(self.0 << k, PhantomData)
    }
}

/// A time halved `k` times (rounded down).
impl<U: Unit> Shr<u32> for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn shr(self, k: u32) -> Self {
        Self(self.0 >> k, PhantomData)
    }
}

/// A count of times: `3 * Nanos::from_ms(1)`.
impl<U: Unit> Mul<Time<U>> for u64 {
    type Output = Time<U>;
    #[inline(always)]
    fn mul(self, t: Time<U>) -> Time<U> {
        Time(self * t.0, PhantomData)
    }
}

/// A time split in `n` equal parts (rounded down).
impl<U: Unit> Div<u64> for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn div(self, n: u64) -> Self {
        Self(self.0 / n, PhantomData)
    }
}

/// How many whole `rhs` fit in `self`: a count, not a time.
impl<U: Unit> Div for Time<U> {
    type Output = u64;
    #[inline(always)]
    fn div(self, rhs: Self) -> u64 {
        self.0 / rhs.0
    }
}

/// What is left of `self` past its last whole `rhs`.
impl<U: Unit> Rem for Time<U> {
    type Output = Self;
    #[inline(always)]
    fn rem(self, rhs: Self) -> Self {
        Self(self.0 % rhs.0, PhantomData)
    }
}

impl<U: Unit> Sum for Time<U> {
    #[inline]
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + b)
    }
}

impl<'a, U: Unit> Sum<&'a Time<U>> for Time<U> {
    #[inline]
    fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + *b)
    }
}

/// Written as the bare number of ticks, as the `u64` was.
impl<U: Unit> serde::Serialize for Time<U> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

/// Microseconds in one millisecond.
pub const US_PER_MS: Micros = Micros::from_ms(1);

/// Nanoseconds in one microsecond.
pub const NS_PER_US: Nanos = Nanos::from_us(1);
/// Nanoseconds in one millisecond.
pub const NS_PER_MS: Nanos = Nanos::from_ms(1);
/// Nanoseconds in one second.
pub const NS_PER_S: Nanos = Nanos::from_s(1);

/// The longest duration accepted anywhere (365 days): far beyond any backoff cap,
/// and small enough that no sum of a few of them can overflow `u64`.
pub const MAX_DURATION_US: Micros = Micros::from_s(365 * 24 * 3_600);

/// What a duration may look like, for error messages.
pub const DURATION_SYNTAX: &str =
    "a duration such as 250us, 100ms, 1.5s, 2m or 1h (a bare number is milliseconds)";

/// Parses a duration into whole microseconds.
///
/// Accepts a decimal number followed by `us` (or `µs`), `ms`, `s`, `m` or `h`,
/// with optional white space between; a bare number means milliseconds. The
/// result must be a whole number of microseconds no larger than
/// [`MAX_DURATION_US`]. The error is one line that says what is accepted.
///
/// The decimal is read exactly, in integers: a sub-µs fraction is refused
/// whatever the size of the whole (`10000000.0000001s` as `1.0000001s`),
/// where a float would round it away once the whole is large.
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
    let us_per_unit: u128 = match unit {
        "us" | "µs" => 1,
        "" | "ms" => 1_000,
        "s" => 1_000_000,
        "m" | "min" => 60_000_000,
        "h" => 3_600_000_000,
        _ => {
            return Err(BaseError::UnknownUnit {
                unit: unit.to_string(),
            });
        }
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(BaseError::NotADuration);
    }
    // Only ASCII digits are left: leading zeros of the whole and trailing
    // zeros of the fraction change nothing.
    let whole = whole.trim_start_matches('0');
    let fraction = fraction.trim_end_matches('0');
    // The longest duration has 17 digits in µs: more is too long.
    if whole.len() > 20 {
        return Err(BaseError::DurationTooLong);
    }
    let whole_units: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| BaseError::NotADuration)?
    };
    let us_of_whole = whole_units * us_per_unit;
    // A unit is at most 2^10·5^8·9 µs, so a fraction of more than 10
    // significant decimals (its last digit not 0) is never whole µs.
    let not_whole = || BaseError::NotWholeMicros {
        text: trimmed.to_string(),
    };
    let us_of_fraction = if fraction.is_empty() {
        0
    } else {
        if fraction.len() > 10 {
            return Err(if us_of_whole > u128::from(MAX_DURATION_US.ticks()) {
                BaseError::DurationTooLong
            } else {
                not_whole()
            });
        }
        let digits: u128 = fraction.parse().map_err(|_| BaseError::NotADuration)?;
        let scale = 10u128.pow(fraction.len() as u32);
        let scaled = digits * us_per_unit;
        if us_of_whole + scaled / scale > u128::from(MAX_DURATION_US.ticks()) {
            return Err(BaseError::DurationTooLong);
        }
        if !scaled.is_multiple_of(scale) {
            return Err(not_whole());
        }
        scaled / scale
    };
    let us = us_of_whole + us_of_fraction;
    if us > u128::from(MAX_DURATION_US.ticks()) {
        return Err(BaseError::DurationTooLong);
    }
    Ok(Micros::from_ticks(us as u64))
}

/// Formats a duration in the largest unit that shows it exactly, as the CLI
/// accepts it back: `100ms`, `20s`, `250us`, `1.5s`.
pub fn format_duration(us: Micros) -> String {
    const HOUR: Micros = Micros::from_s(3_600);
    const MINUTE: Micros = Micros::from_s(60);
    const SECOND: Micros = Micros::from_s(1);
    if us >= HOUR && us.is_multiple_of(HOUR) {
        format!("{}h", us / HOUR)
    } else if us >= MINUTE && us.is_multiple_of(MINUTE) {
        format!("{}m", us / MINUTE)
    } else if us >= SECOND && us.is_multiple_of(US_PER_MS) {
        format!("{}s", us.ticks() as f64 / SECOND.ticks() as f64)
    } else if us >= US_PER_MS {
        format!("{}ms", us.ticks() as f64 / US_PER_MS.ticks() as f64)
    } else {
        format!("{}us", us.ticks())
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
    human_seconds(us.ticks() as f64 / 1e6, 1)
}

/// Converts microseconds to milliseconds, the unit of every reported time.
pub fn us_to_ms(us: Micros) -> f64 {
    us.ticks() as f64 / US_PER_MS.ticks() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_spans_pick_their_unit() {
        assert_eq!(human_duration(Micros::from_s(19_800)), "5.5 h");
        assert_eq!(human_duration(Micros::from_s(1218)), "20.3 min");
        assert_eq!(human_duration(Micros::from_ms(12_700)), "12.7 s");
        assert_eq!(human_duration(Micros::from_ms(250)), "250.0 ms");
        assert_eq!(human_seconds(96.1e-6, 2), "96.10 µs");
        assert_eq!(human_seconds(3.7891, 2), "3.79 s");
    }

    #[test]
    fn units_convert_to_microseconds() {
        assert_eq!(parse_duration("250us"), Ok(Micros::from_ticks(250)));
        assert_eq!(parse_duration("250µs"), Ok(Micros::from_ticks(250)));
        assert_eq!(parse_duration("100ms"), Ok(Micros::from_ticks(100_000)));
        assert_eq!(parse_duration("100"), Ok(Micros::from_ticks(100_000)));
        assert_eq!(parse_duration("0.5"), Ok(Micros::from_ticks(500)));
        assert_eq!(parse_duration("20s"), Ok(Micros::from_ticks(20_000_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Micros::from_ticks(1_500_000)));
        assert_eq!(parse_duration("2m"), Ok(Micros::from_ticks(120_000_000)));
        assert_eq!(parse_duration("1h"), Ok(Micros::from_ticks(3_600_000_000)));
        assert_eq!(parse_duration(" 20 s "), Ok(Micros::from_ticks(20_000_000)));
        assert_eq!(parse_duration("1_000ms"), Ok(Micros::from_ticks(1_000_000)));
        assert_eq!(parse_duration("0"), Ok(Micros::from_ticks(0)));
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
    fn a_sub_microsecond_fraction_is_refused_at_any_size() {
        // A float reads 1e13 + 0.1 µs as 1e13 within its tolerance: exact
        // decimals refuse the tenth at every size.
        for bad in [
            "1.0000001s",
            "10000000.0000001s",
            "31535999.9999999s",
            "8759.9999999999h",
            "1000.0000000001ms",
            "0.00000000000000000001s",
        ] {
            let err = parse_duration(bad).expect_err(bad).to_string();
            assert!(err.contains("resolution"), "{bad}: {err}");
        }
        assert_eq!(
            parse_duration("10000000.000001s"),
            Ok(Micros::from_ticks(10_000_000_000_001))
        );
        assert_eq!(parse_duration("31536000s"), Ok(MAX_DURATION_US));
        assert_eq!(parse_duration("8760h"), Ok(MAX_DURATION_US));
        assert_eq!(parse_duration("0.000001s"), Ok(Micros::from_ticks(1)));
        assert_eq!(
            parse_duration("1.50000000000000000000s"),
            Ok(Micros::from_ticks(1_500_000))
        );
        assert_eq!(parse_duration("007ms"), Ok(Micros::from_ticks(7_000)));
        assert_eq!(parse_duration(".5s"), Ok(Micros::from_ticks(500_000)));
        assert_eq!(parse_duration("5.s"), Ok(Micros::from_ticks(5_000_000)));
        assert_eq!(parse_duration("0.0025m"), Ok(Micros::from_ticks(150_000)));
        for too_long in [
            "31536000.000001s",
            "8761h",
            "99999999999999999999999999h",
            "31536001.5s",
        ] {
            assert_eq!(
                parse_duration(too_long),
                Err(BaseError::DurationTooLong),
                "{too_long}"
            );
        }
        for junk in [".", "..", "1..2s", "1.2.3s"] {
            assert_eq!(parse_duration(junk), Err(BaseError::NotADuration), "{junk}");
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
            let us = Micros::from_ticks(us);
            assert_eq!(parse_duration(&format_duration(us)), Ok(us), "{us:?}");
        }
        assert_eq!(format_duration(Micros::from_ms(100)), "100ms");
        assert_eq!(format_duration(Micros::from_s(20)), "20s");
        assert_eq!(format_duration(Micros::from_ms(1500)), "1.5s");
    }
}
