//! herdsim's live commands, kept out of the main binary's build: the
//! server model as a real network server (`herdsim serve`).

pub mod cli;
pub mod grpc;
pub mod server;
pub mod station;
pub mod window_series;
