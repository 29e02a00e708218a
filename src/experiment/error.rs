//! What the experiments refuse: a grid value and a shard that do not read
//! (scenario files add the file, line and key: [`super::scenario::ScenarioError`]).

use crate::spec::ParamError;

/// A value of an experiment refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExperimentError {
    /// A grid axis's value its parameter refuses.
    #[error("invalid value '{value}': {reason}")]
    Value {
        /// The value given.
        value: String,
        /// Why.
        reason: ParamError,
    },
    /// Not a shard `K/N`.
    #[error("expected K/N with 1 ≤ K ≤ N ≤ 1,000,000, such as 2/8; got '{text}'")]
    Shard {
        /// The shard given.
        text: String,
    },
}
