//! The reference event queue: `std`'s binary heap over `(time, seq)`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Ticks;
use super::{ClientItem, EventQueue};
use crate::model::arrivals::FirstCalls;

/// One pending event of the binary heap: `item` is due at `time`; `seq`
/// orders events at the same instant first-in first-out.
#[derive(Debug, Clone, Copy)]
struct HeapEntry<T> {
    time: Ticks,
    seq: u64,
    item: T,
}

/// Earliest `(time, seq)` first: reversed, since `BinaryHeap` pops the largest.
impl<T> Ord for HeapEntry<T> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Keys are unique, so equal keys are the same event.
impl<T> PartialEq for HeapEntry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}

impl<T> Eq for HeapEntry<T> {}

impl<T> PartialOrd for HeapEntry<T> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The reference queue: a binary heap over `(time, seq)`.
#[derive(Clone)]
pub struct HeapQueue<T> {
    heap: BinaryHeap<HeapEntry<T>>,
    /// The next schedule's sequence number.
    seq: u64,
}

impl<T: ClientItem> EventQueue<T> for HeapQueue<T> {
    fn with_first_calls(first_calls: &FirstCalls, template: T) -> Self {
        let heap = (0..first_calls.clients())
            .map(|client| HeapEntry {
                time: first_calls.of(client).ticks(),
                seq: u64::from(client),
                item: template.for_client(client),
            })
            .collect();
        HeapQueue {
            heap,
            seq: u64::from(first_calls.clients()),
        }
    }

    fn with_events(events: Vec<(Ticks, T)>) -> Self {
        let seq = events.len() as u64;
        let heap = events
            .into_iter()
            .zip(0..)
            .map(|((time, item), seq)| HeapEntry { time, seq, item })
            .collect();
        HeapQueue { heap, seq }
    }

    #[inline]
    fn first(&mut self) -> Option<(Ticks, T)> {
        self.heap.peek().map(|e| (e.time, e.item))
    }

    #[inline]
    fn reschedule_first(&mut self, next: Option<(Ticks, T)>) {
        let Some(mut top) = self.heap.peek_mut() else {
            return;
        };
        match next {
            // Replacing the top and sifting once is cheaper than pop + push.
            Some((time, item)) => {
                *top = HeapEntry {
                    time,
                    seq: self.seq,
                    item,
                };
                self.seq += 1;
            }
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
    }

    fn capacity_bytes(&self) -> usize {
        self.heap.capacity() * size_of::<HeapEntry<T>>()
    }

    #[inline]
    fn push(&mut self, time: Ticks, item: T) {
        self.heap.push(HeapEntry {
            time,
            seq: self.seq,
            item,
        });
        self.seq += 1;
    }
}
