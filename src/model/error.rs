//! What the models refuse: an arrival pattern that does not read.

use crate::base::error::BaseError;
use crate::model::arrivals::ARRIVALS_SYNTAX;

/// A model parameter the model's parsers refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// Not an arrival pattern.
    #[error("unknown arrivals '{text}': {ARRIVALS_SYNTAX}")]
    Arrivals {
        /// The pattern given.
        text: String,
    },
    /// A uniform window that is not a duration.
    #[error("uniform window: {0}")]
    UniformWindow(BaseError),
    /// A uniform window of zero.
    #[error("the uniform window must be at least 1us (herd starts everyone at 0)")]
    EmptyUniformWindow,
    /// A Poisson rate out of range.
    #[error(
        "poisson rate '{rate}': expected arrivals per ms, a number above 0 and at most 1000000"
    )]
    PoissonRate {
        /// The rate given.
        rate: String,
    },
    /// Not a distribution of durations.
    #[error(
        "'{text}': {why}; expected a duration (constant), const:D, exp:MEAN, lognormal:MEDIAN/SIGMA or lognormal:MEDIAN@pNN=VALUE (50 < NN < 100), weibull:MEAN/SHAPE or normal:MEAN/SD (folded at 0), such as exp:1ms"
    )]
    Dist {
        /// The text given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// Not a service-time spec.
    #[error(
        "'{text}': {why}; expected a distribution or mix:P/DIST/DIST (DIST with probability 1 − P, then with P), such as mix:0.1/exp:1ms/exp:50ms"
    )]
    Service {
        /// The text given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// Not a trigger.
    #[error(
        "trigger '{text}': {why}; expected KIND@FROM..TO joined by +, KIND one of outage, fail:P, user-fail:P, spike:K, ramp:A/B, slow:K, capacity:C (or none), such as outage@1s..1.5s"
    )]
    Trigger {
        /// The text given.
        text: String,
        /// What is wrong.
        why: String,
    },
}
