//! Experiments: grids of workloads, scenario files, sweeps over replicate
//! seeds, and the schedules of single policies.

pub mod assess;
pub mod backlog;
pub mod error;
pub mod grid;
pub mod map;
pub mod map_split;
pub mod replicates;
pub mod scenario;
pub mod schedule;
pub mod server_runs;
pub mod sweep;
pub mod timelines;
pub mod tune;
