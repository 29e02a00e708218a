//! herdsim's live commands, kept out of the main binary's build: the
//! server model as a real network server (`herdsim serve`) and the client
//! model as a real load generator (`herdsim drill`).

pub mod attempt_trace;
pub mod cli;
pub mod drill;
pub mod grpc;
pub mod lateness;
pub mod server;
pub mod station;
pub mod timing;
pub mod window_series;
