//! What a run measures: its metrics, the observers that watch it as it goes,
//! the summaries over replicates, and the course of its retries over time.

pub mod histogram;
pub mod layer_metrics;
pub mod metrics;
pub mod observer;
pub mod recorder;
pub mod server_metrics;
pub mod server_recorder;
pub mod stats;
pub mod timeline;
pub mod verdict;
