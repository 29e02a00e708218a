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

pub mod arrivals;
pub mod budget;
pub mod cli;
pub mod compare;
pub mod draws;
pub mod engine;
pub mod grid;
pub mod metrics;
pub mod policy;
pub mod published;
pub mod queue;
pub mod replicates;
pub mod report;
pub mod resource;
pub mod scenario;
pub mod schedule;
pub mod seeding;
pub mod spec;
pub mod stats;
pub mod sweep;
pub mod time;
pub mod timeline;
pub mod wave;

pub use engine::{Seeds, simulate};
pub use metrics::RunMetrics;
pub use policy::{PolicyKind, PolicySpec};
pub use spec::RunSpec;
