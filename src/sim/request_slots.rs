//! Per-request state kept beside the server loop's slab of requests, not in
//! it, so a run without the feature that needs it keeps its requests as
//! small as they were (gRPC hedging's copies, Envoy hedging's attempts).

/// One `T` per request slot, grown as the slab grows.
#[derive(Debug, Clone, Default)]
pub struct RequestSlots<T> {
    slots: Vec<T>,
}

impl<T: Copy + Default> RequestSlots<T> {
    /// The state of the request in slot `req`, which starts now: the default.
    pub fn start(&mut self, req: u32) -> &mut T {
        let i = req as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, T::default());
        }
        self.slots[i] = T::default();
        &mut self.slots[i]
    }

    /// The state of the request in slot `req` (started).
    pub fn of(&mut self, req: u32) -> &mut T {
        &mut self.slots[req as usize]
    }

    /// Storage held, bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_slot_is_fresh_and_the_storage_grows_to_it() {
        let mut slots = RequestSlots::<u32>::default();
        *slots.start(3) = 7;
        assert_eq!(*slots.of(3), 7);
        assert_eq!(*slots.of(0), 0);
        assert_eq!(*slots.start(3), 0, "a slot reused starts afresh");
        assert!(slots.capacity_bytes() >= 4 * size_of::<u32>());
    }
}
