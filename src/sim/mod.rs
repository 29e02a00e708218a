//! The discrete-event core: event queues, the retry machinery every model
//! shares, and the event loops (one call per event, waves, the OCC
//! conversation).

pub mod engine;
mod hedging;
mod occ_loop;
pub mod queue;
mod request_slots;
pub(crate) mod retries;
pub mod retry_decision;
pub mod server_loop;
pub mod splitting;
mod timeout_hedging;
pub mod wave;
