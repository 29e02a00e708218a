//! What the foundation refuses: a duration or a name that does not read.

use crate::base::time::DURATION_SYNTAX;

/// A value the foundation's parsers refuse; each message says what is
/// accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseError {
    /// A duration with a unit herdsim does not know.
    #[error("unknown unit '{unit}': expected {DURATION_SYNTAX}")]
    UnknownUnit {
        /// The unit given.
        unit: String,
    },
    /// Not a number followed by a unit.
    #[error("expected {DURATION_SYNTAX}")]
    NotADuration,
    /// A negative duration.
    #[error("a duration cannot be negative: expected {DURATION_SYNTAX}")]
    NegativeDuration,
    /// Longer than [`crate::base::time::MAX_DURATION_US`].
    #[error("expected at most 365 days, as {DURATION_SYNTAX}")]
    DurationTooLong,
    /// A duration finer than the clock's microsecond.
    #[error("the resolution is 1us: '{text}' is not a whole number of microseconds")]
    NotWholeMicros {
        /// The duration given.
        text: String,
    },
    /// A name retired because it could mean two things.
    #[error("{what} '{text}' is ambiguous: choose {instead}")]
    AmbiguousName {
        /// What kind of name (`policy`).
        what: &'static str,
        /// The name given.
        text: &'static str,
        /// The names to choose from, each with what it means.
        instead: &'static str,
    },
    /// A name that is none of the accepted ones.
    #[error("unknown {what} '{text}': expected {expected}")]
    UnknownName {
        /// What kind of name (`resource`, `policy`).
        what: &'static str,
        /// The name given.
        text: String,
        /// The accepted names, in words.
        expected: String,
    },
}
