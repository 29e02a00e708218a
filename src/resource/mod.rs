//! Resource models: what decides whether a call succeeds. One file per model.

mod slot;

pub use slot::SlotResource;
