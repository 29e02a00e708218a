//! What a workload's parameters refuse: a value out of its range (with the
//! lower layers' reasons), and rules that tie parameters together.

use crate::base::error::BaseError;
use crate::base::format::group_thousands;
use crate::control::error::ControlError;
use crate::model::error::ModelError;

/// Why a parameter's value is refused; the message says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// A whole number out of its range (or not a whole number).
    #[error("expected a whole number from {} to {}", group_thousands(*min), group_thousands(*max))]
    Count {
        /// The smallest accepted.
        min: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A capacity out of its range.
    #[error(
        "expected requests per ms, a number from {} to {} (fractions allowed)",
        super::CAPACITY_RANGE.0,
        super::CAPACITY_RANGE.1
    )]
    Capacity,
    /// An arrival rate out of range.
    #[error("expected requests per second, a number above 0 and at most 1e9")]
    Rate,
    /// A probability out of `[0, 1]`.
    #[error("expected a probability from 0 to 1")]
    Probability,
    /// Two server-model parameters that cannot go together.
    #[error("{why} (together with --{}, key {other})", .other.replace('_', "-"))]
    Conflict {
        /// The other parameter.
        other: &'static str,
        /// Why not.
        why: String,
    },
    /// Two parameters that cannot go together, the other at its default
    /// (so not named as if it had been given).
    #[error("{why} (--{flag}, key {other}, is at its default, {shown})", flag = .other.replace('_', "-"))]
    ConflictWithDefault {
        /// The other parameter.
        other: &'static str,
        /// Its value, the default, as it is written.
        shown: String,
        /// Why not.
        why: String,
    },
    /// One upper service's setting of a chain refused: its place from the
    /// top (1 is the top) and its key in `layer_specs` or a `[[layer]]`.
    #[error("service {service}'s {key}: {why}")]
    LayerSetting {
        /// The service, 1 at the top.
        service: usize,
        /// The setting's key.
        key: &'static str,
        /// Why not.
        why: String,
    },
    /// A jitter factor out of `[0, 1]`.
    #[error("expected a number from 0 to 1 (0 is off)")]
    JitterFactor,
    /// A randomization factor out of `[0, 1]`.
    #[error("expected a number from 0 to 1 (resilience4j's randomizationFactor)")]
    RandomizationFactor,
    /// A backoff multiplier out of `(1, 100]`.
    #[error("expected a number above 1 and at most 100 (2 doubles the ceiling each retry)")]
    Multiplier,
    /// A duration of zero where one is needed.
    #[error("expected a duration of at least 1us, such as 100ms or 20s")]
    ZeroDuration,
    /// A patience window under 1 ms.
    #[error("expected a duration of at least 1ms, such as 30s or 2min")]
    Patience,
    /// An outage window that is not `<from>..<to>` with from before to.
    #[error("expected <from>..<to> with from before to, such as 5s..15s")]
    Window,
    /// A chain's per-service settings that do not read.
    #[error(
        "expected each upper service's settings, top first, joined by +, each key=value joined \
         by commas among workers, service, timeout and max_attempts (such as \
         workers=8,timeout=300ms+max_attempts=2), or none: {0}"
    )]
    LayerSpecs(String),
    /// A chain's timeout ratio out of range.
    #[error("expected a number from 0.01 to 100 (below 1: inner timeouts are shorter)")]
    TimeoutRatio,
    /// Too many per-request timeout choices.
    #[error("expected at most 64 durations joined by /, such as 100ms/200ms/300ms")]
    TimeoutChoices,
    /// No-backoff with nothing to stop it on a model that answers at once
    /// (or, on the server, that can reject at once and never lets a stuck
    /// request give up).
    #[error(
        "no-backoff retries at once without end on the {resource} resource: give max_attempts{hint}"
    )]
    NoBackoffSpins {
        /// The resource.
        resource: &'static str,
        /// Where else it is allowed, if anywhere.
        hint: &'static str,
    },
    /// Retry hints on a model that gives none.
    #[error("retry hints come from the slot resource only")]
    HintsFromSlotOnly,
    /// An outage window on a model without one.
    #[error("an outage window applies to the slot resource only")]
    DownOnSlotOnly,
    /// A run that could outlast the clock.
    #[error(
        "with {} clients this run could last {years:.0} years of simulated time; herdsim's \
         clock stops at 584 years: {lower}",
        group_thousands(u64::from(*clients))
    )]
    Horizon {
        /// The clients.
        clients: u32,
        /// How long it could run.
        years: Years,
        /// What would shorten it.
        lower: &'static str,
    },
    /// A duration or name the foundation refuses.
    #[error(transparent)]
    Base(#[from] BaseError),
    /// An arrival pattern the model refuses.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A budget rule the controls refuse.
    #[error(transparent)]
    Control(#[from] ControlError),
}

/// A number of years, in an error (compared exactly).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Years(pub f64);

impl Eq for Years {}

impl std::fmt::Display for Years {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

/// A workload refused: which parameter, its value, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value '{value}' for {key}: {reason}")]
pub struct SpecError {
    /// The parameter, by its registry key.
    pub key: &'static str,
    /// The value given, as text.
    pub value: String,
    /// Why it is refused.
    pub reason: ParamError,
}
