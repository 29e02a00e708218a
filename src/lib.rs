//! herdsim: a discrete-event simulator of retry storms.
//!
//! N clients fail together and retry against a shared resource; a backoff
//! policy decides when. [`engine::simulate`] runs one replicate as a pure
//! function of a [`spec::RunSpec`] and a seed; [`replicates`] fans seeds across
//! cores; [`report`] formats results; [`cli`] is the command line.
//!
//! The simulation core (`engine`, `policy`, `resource`, `metrics`, `draws`,
//! `seeding`, `stats`, `time`) does no I/O and knows nothing of the command
//! line.

pub mod base;
pub mod cli;
pub mod control;
pub mod experiment;
pub mod measure;
pub mod model;
pub mod policy;
pub mod report;
pub mod sim;
pub mod spec;
pub mod study;

pub use base::seeding::Seeds;
pub use measure::metrics::RunMetrics;
pub use policy::{PolicyKind, PolicySpec};
pub use sim::engine::simulate;
pub use spec::RunSpec;
