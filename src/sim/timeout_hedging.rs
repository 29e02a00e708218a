//! The server loop's state of requests hedging on per-attempt timeout
//! ([`crate::model::timeout_hedging`] says what they do): per request slot,
//! its attempts in flight, whether a retry is pending, and the retries a
//! control refused after their count was taken. Kept beside the slab of
//! requests, as gRPC hedging's is, so a run without it keeps its requests
//! as small as they were.

/// One request's attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attempts {
    /// Attempts sent whose reply the request still awaits (kept past their
    /// timeout or not).
    pub in_flight: u32,
    /// A retry is decided and not yet sent (Envoy's `pending_retries_`).
    pub pending: bool,
    /// The latest attempt's per-try timeout fired (it is counted as a
    /// timeout once, then, not again at the deadline).
    pub timed_out: bool,
    /// Retries a control refused after `num_retries` was spent on them.
    pub spent: u32,
}

/// Every request slot's attempts, and the wins of attempts kept past their
/// timeout.
#[derive(Debug, Clone, Default)]
pub struct TimeoutHedging {
    /// Indexed by request slot, grown as the slab grows.
    slots: Vec<Attempts>,
    /// Successes won by an attempt whose per-try timeout had fired.
    pub kept_wins: u64,
}

impl TimeoutHedging {
    /// The attempts of the request in slot `req`, which starts now: none.
    pub fn start(&mut self, req: u32) -> &mut Attempts {
        let i = req as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, Attempts::default());
        }
        self.slots[i] = Attempts::default();
        &mut self.slots[i]
    }

    /// The attempts of the request in slot `req` (started).
    pub fn of(&mut self, req: u32) -> &mut Attempts {
        &mut self.slots[req as usize]
    }

    /// Storage held, bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Attempts>()
    }
}
