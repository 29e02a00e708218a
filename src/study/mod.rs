//! Studies: published figures, and a scenario's results set beside them with
//! a verdict on each.

pub mod compare;
pub mod error;
pub mod published;
pub mod server_compare;
