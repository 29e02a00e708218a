//! What the retry controls refuse: a budget rule that does not read.

use crate::control::budget::BUDGET_SYNTAX;

/// A control parameter the controls' parsers refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// Not a budget rule.
    #[error("invalid budget '{text}': {BUDGET_SYNTAX}")]
    Budget {
        /// The rule given.
        text: String,
    },
    /// A token budget with no capacity or no cost.
    #[error("invalid budget '{text}': capacity and cost must be at least 1")]
    EmptyTokens {
        /// The rule given.
        text: String,
    },
    /// A ratio budget's ratio out of range.
    #[error("invalid budget '{text}': the ratio must be from 0 to 1000")]
    Ratio {
        /// The rule given.
        text: String,
    },
}
