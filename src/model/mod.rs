//! Resource models: what decides whether a call succeeds. One file per model.
//!
//! `slot` and `outage` answer each call at once ([`CallResource`]) and share the
//! engine's call loop; `occ` is a conversation over a network (read, then
//! write) and runs its own loop.

pub mod arrivals;
pub mod backlog;
pub mod chain;
pub mod error;
pub mod hedging;
pub mod occ;
mod outage;
pub mod retry_on;
pub mod server;
mod slot;
pub mod timeout_hedging;

pub use occ::OccNetwork;
pub use outage::OutageResource;
pub use slot::SlotResource;

use crate::base::names::named;
use crate::base::time::Micros;

/// A resource that answers a call the instant it arrives.
pub trait CallResource {
    /// Client `client` makes attempt `attempt` (0 is its first call) at `t`;
    /// true if it succeeds.
    fn call(&mut self, t: Micros, client: u32, attempt: u32) -> bool;

    /// After a rejected call at `t`: the resource's estimate of how long until
    /// it could serve, its Retry-After. 0 where the model gives none.
    fn retry_hint(&self, _t: Micros) -> Micros {
        Micros::ZERO
    }
}

/// The resource models, by their command-line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ResourceKind {
    /// Seed 002's contended slot: one call served per service time.
    #[default]
    Slot,
    /// The policybook outage episode: independent clients, each behind an
    /// outage of random length, then 90% success.
    Outage,
    /// The AWS Architecture Blog's optimistic-concurrency row.
    Occ,
    /// Open- or closed-loop load against workers behind a queue, with
    /// timeouts that do not cancel work ([`server`]).
    Server,
}

named!(ResourceKind, "resource", {
    ResourceKind::Slot => "slot",
    ResourceKind::Outage => "outage",
    ResourceKind::Occ => "occ",
    ResourceKind::Server => "server",
});
