//! herdsim: a discrete-event simulator of retry storms.
//!
//! N clients fail together and retry against a shared resource; a backoff
//! policy decides when. [`sim::engine::simulate`] runs one replicate as a
//! pure function of a [`spec::RunSpec`] and its seeds; [`experiment`] fans
//! replicates and grids across cores; [`study`] sets results beside published
//! figures; [`report`] formats them; [`cli`] is the command line.
//!
//! The layers, each using only those before it: [`base`] → [`model`],
//! [`policy`], [`control`] → [`spec`] (the workload and the parameter
//! registry) → [`measure`] → [`sim`] → [`experiment`] → [`study`] →
//! [`report`] → [`cli`]. Everything before `experiment` is the simulation
//! core: no I/O, and nothing of the command line. [`exact`] stands beside
//! the simulator: Markov chains solved exactly, to check it against.

pub mod base;
pub mod cli;
pub mod conform;
pub mod control;
pub mod exact;
pub mod experiment;
pub mod import;
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
