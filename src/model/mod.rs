//! Resource models: what decides whether a call succeeds. One file per model.
//!
//! `slot` and `outage` answer each call at once ([`CallResource`]) and share the
//! engine's call loop; `occ` is a conversation over a network (read, then
//! write) and runs its own loop.

pub mod arrivals;
mod occ;
mod outage;
mod slot;

pub use occ::OccNetwork;
pub use outage::OutageResource;
pub use slot::SlotResource;

use std::fmt;
use std::str::FromStr;

use crate::base::time::Micros;

/// A resource that answers a call the instant it arrives.
pub trait CallResource {
    /// Client `client` makes attempt `attempt` (0 is its first call) at `t`;
    /// true if it succeeds.
    fn call(&mut self, t: Micros, client: u32, attempt: u32) -> bool;

    /// After a rejected call at `t`: the resource's estimate of how long until
    /// it could serve, its Retry-After. 0 where the model gives none.
    fn retry_hint(&self, _t: Micros) -> Micros {
        0
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
}

impl ResourceKind {
    /// Every model.
    pub const ALL: [ResourceKind; 3] =
        [ResourceKind::Slot, ResourceKind::Outage, ResourceKind::Occ];

    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::Slot => "slot",
            ResourceKind::Outage => "outage",
            ResourceKind::Occ => "occ",
        }
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ResourceKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| format!("unknown resource '{name}': expected one of slot, outage, occ"))
    }
}
