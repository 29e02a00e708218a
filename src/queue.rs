//! Event queues: the earliest `(time, seq)` first, ties first-in first-out.
//!
//! [`HeapQueue`] is the reference, `std`'s binary heap. [`RadixQueue`] is a
//! monotone radix heap: it relies on the event loop never scheduling before
//! the event it is handling, which holds (delays are never negative), and
//! pops in exactly the same order, since keys `(time, seq)` are unique. A test
//! runs both over many workloads and compares every metric.

use std::collections::BinaryHeap;
use std::str::FromStr;

use crate::engine::Event;
use crate::time::Micros;

/// A priority queue of pending events, one per active client.
pub trait EventQueue {
    /// A queue holding client `c`'s first call at `first_call[c]`, with
    /// sequence number `c`.
    fn with_first_calls(first_call: &[Micros]) -> Self;
    /// The earliest event, if any.
    fn first(&mut self) -> Option<Event>;
    /// Moves the earliest event to `(time, seq)`, or removes it on `None`.
    fn reschedule_first(&mut self, at: Option<(Micros, u64)>);
}

/// Which queue a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    /// `std::collections::BinaryHeap`, the reference.
    #[default]
    Heap,
    /// A monotone radix heap over `(time, seq)`.
    Radix,
}

impl FromStr for QueueKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "heap" => Ok(QueueKind::Heap),
            "radix" => Ok(QueueKind::Radix),
            _ => Err(format!("unknown queue '{text}': expected heap or radix")),
        }
    }
}

/// The reference queue: a binary heap.
pub struct HeapQueue(BinaryHeap<Event>);

impl EventQueue for HeapQueue {
    fn with_first_calls(first_call: &[Micros]) -> Self {
        HeapQueue(
            first_call
                .iter()
                .zip(0u32..)
                .map(|(&time, client)| Event {
                    time,
                    seq: u64::from(client),
                    client,
                })
                .collect(),
        )
    }

    #[inline]
    fn first(&mut self) -> Option<Event> {
        self.0.peek().copied()
    }

    #[inline]
    fn reschedule_first(&mut self, at: Option<(Micros, u64)>) {
        let Some(mut top) = self.0.peek_mut() else {
            return;
        };
        match at {
            // Replacing the top and sifting once is cheaper than pop + push.
            Some((time, seq)) => {
                let client = top.client;
                *top = Event { time, seq, client };
            }
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
    }
}

/// A monotone radix heap over the 128-bit key `time·2^64 + seq`. Bucket `b`
/// holds keys whose highest bit differing from the last key taken is bit
/// `b − 1` (bucket 0: the last key itself). Taking the minimum empties the
/// lowest non-empty bucket into lower ones, so each key moves at most 128
/// times and usually a few.
pub struct RadixQueue {
    last: u128,
    buckets: Vec<Vec<(u128, u32)>>,
    /// Bit `b` set iff bucket `b` (1..=128) is non-empty; bucket 0 is checked
    /// directly.
    occupied: u128,
}

impl RadixQueue {
    #[inline]
    fn key(time: Micros, seq: u64) -> u128 {
        (u128::from(time) << 64) | u128::from(seq)
    }

    #[inline]
    fn bucket(&self, key: u128) -> usize {
        (128 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn push(&mut self, key: u128, client: u32) {
        debug_assert!(key >= self.last, "a radix heap takes keys in order");
        let b = self.bucket(key);
        self.buckets[b].push((key, client));
        if b > 0 {
            self.occupied |= 1 << (b - 1);
        }
    }
}

impl EventQueue for RadixQueue {
    fn with_first_calls(first_call: &[Micros]) -> Self {
        let mut queue = RadixQueue {
            last: 0,
            buckets: vec![Vec::new(); 129],
            occupied: 0,
        };
        for (&time, client) in first_call.iter().zip(0u32..) {
            queue.push(Self::key(time, u64::from(client)), client);
        }
        queue
    }

    #[inline]
    fn first(&mut self) -> Option<Event> {
        if self.buckets[0].is_empty() {
            if self.occupied == 0 {
                return None;
            }
            let b = self.occupied.trailing_zeros() as usize + 1;
            self.occupied &= !(1 << (b - 1));
            let items = std::mem::take(&mut self.buckets[b]);
            self.last = items
                .iter()
                .map(|&(k, _)| k)
                .min()
                .expect("a non-empty bucket");
            for &(key, client) in &items {
                self.push(key, client);
            }
            // Give the emptied bucket its storage back.
            let mut items = items;
            items.clear();
            if self.buckets[b].is_empty() {
                self.buckets[b] = items;
            }
        }
        let (key, client) = self.buckets[0][0];
        Some(Event {
            time: (key >> 64) as Micros,
            seq: key as u64,
            client,
        })
    }

    #[inline]
    fn reschedule_first(&mut self, at: Option<(Micros, u64)>) {
        let Some((_, client)) = self.buckets[0].pop() else {
            return;
        };
        if let Some((time, seq)) = at {
            self.push(Self::key(time, seq), client);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::Draws;
    use crate::seeding::job_rng;

    /// Drains `Q` as an event loop would: every event is rescheduled a random
    /// delay later (sometimes 0, often equal times) until its client is done.
    fn drain<Q: EventQueue>(clients: usize, rounds: u32, seed: u64) -> Vec<(Micros, u64, u32)> {
        let mut draws = job_rng(seed);
        let first: Vec<Micros> = (0..clients).map(|_| draws.uniform(0, 5) * 1_000).collect();
        let mut queue = Q::with_first_calls(&first);
        let mut left = vec![rounds; clients];
        let mut seq = clients as u64;
        let mut order = Vec::new();
        while let Some(e) = queue.first() {
            order.push((e.time, e.seq, e.client));
            let c = e.client as usize;
            left[c] -= 1;
            let at = (left[c] > 0).then(|| {
                seq += 1;
                (e.time + draws.uniform(0, 3) * 500, seq - 1)
            });
            queue.reschedule_first(at);
        }
        order
    }

    #[test]
    fn both_queues_pop_in_the_same_order() {
        for (clients, rounds, seed) in [(1, 5, 1), (10, 50, 2), (500, 20, 3), (2_000, 5, 4)] {
            let heap = drain::<HeapQueue>(clients, rounds, seed);
            let radix = drain::<RadixQueue>(clients, rounds, seed);
            assert_eq!(heap.len(), clients * rounds as usize);
            assert_eq!(heap, radix, "{clients} clients");
            assert!(heap.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
        }
    }

    #[test]
    fn queue_names_parse() {
        assert_eq!("heap".parse(), Ok(QueueKind::Heap));
        assert_eq!("radix".parse(), Ok(QueueKind::Radix));
        assert!("fibonacci".parse::<QueueKind>().is_err());
    }
}
