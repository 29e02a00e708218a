//! What the retry controls refuse: a rule that does not read, or a field out
//! of its range. Each names the key and says what is accepted, in one line.

/// A control rule the controls' parsers refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {key} '{text}': {why}")]
pub struct ControlError {
    /// The scenario key.
    pub key: &'static str,
    /// The rule given.
    pub text: String,
    /// What is wrong, and what is accepted.
    pub why: String,
}
