//! Retry controls: what may stop or delay a retry besides the backoff policy
//! (budgets shared by a fleet, the resource's retry hints).

pub mod budget;
pub mod error;
