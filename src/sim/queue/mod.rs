//! Event queues: the earliest event first, events at the same instant
//! first-in first-out.
//!
//! Each pending event is a time and an item, the client acting then with what
//! it carries between attempts; a queue holds at most one per client. Carrying
//! a client's state in its event, rather than in arrays indexed by client,
//! keeps an event's work within the queue's memory, which the queue walks in
//! order: at a million clients, random reads of per-client arrays would
//! dominate. [`HeapQueue`] is the reference, `std`'s binary heap over
//! `(time, seq)` with `seq` counting schedules. [`RadixQueue`] is a monotone
//! radix heap over the time alone: it relies on the event loop never
//! scheduling before the event it is handling (delays are never negative) and
//! keeps events of equal time in the order they were scheduled, so it pops in
//! exactly the heap's order without storing a sequence number. A test runs
//! both over many workloads and compares every metric.
//!
//! Times are [`Ticks`], the integer behind a [`crate::base::time::Time`]:
//! the radix heap works on their bits.

use crate::base::names::named;
use crate::model::ResourceKind;
use crate::model::arrivals::FirstCalls;

mod heap;
mod radix;

pub use heap::HeapQueue;
pub use radix::RadixQueue;

/// An event's time as the queue keeps it: the bare count of its loop's
/// clock ticks (µs for the herd's loops, ns for the server's), each loop
/// converting at its pushes and pops; the queue only orders them.
pub type Ticks = u64;

/// What an event carries: a client, and what it keeps between attempts.
pub trait ClientItem: Copy {
    /// This item given to client `id`: every first call's item is one
    /// template given each client's id.
    fn for_client(self, id: u32) -> Self;
}

/// A priority queue of pending events, one per active client.
pub trait EventQueue<T: ClientItem> {
    /// A queue holding every client's first call, in client order, each with
    /// `template.for_client(client)`.
    fn with_first_calls(first_calls: &FirstCalls, template: T) -> Self;
    /// A queue holding `events`, in schedule order.
    fn with_events(events: Vec<(Ticks, T)>) -> Self;
    /// The earliest event, `(time, item)`, if any.
    fn first(&mut self) -> Option<(Ticks, T)>;
    /// Replaces the earliest event with `(time, item)`, due after every event
    /// already scheduled at that instant, or removes it on `None`. The time is
    /// never before the earliest event's.
    fn reschedule_first(&mut self, next: Option<(Ticks, T)>);
    /// Schedules one more event, due after every event already scheduled at
    /// its instant; `time` is never before the last event taken.
    fn push(&mut self, time: Ticks, item: T);
    /// Bytes of event storage held (its capacity, not its use).
    fn capacity_bytes(&self) -> usize;
}

/// A queue for any item: lets an event loop name "the heap" or "the radix
/// heap" once, whatever its events carry (a client, or a wave of them).
pub trait QueueFamily {
    /// This family's queue of `T`.
    type Queue<T: ClientItem>: EventQueue<T>;
}

/// The binary heaps.
pub struct Heaps;

impl QueueFamily for Heaps {
    type Queue<T: ClientItem> = HeapQueue<T>;
}

/// The radix heaps.
pub struct RadixHeaps;

impl QueueFamily for RadixHeaps {
    type Queue<T: ClientItem> = RadixQueue<T>;
}

/// Which queue a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    /// The faster of the two for the run's resource model, as measured:
    /// the binary heap for `occ`, the radix heap otherwise.
    #[default]
    Auto,
    /// `std::collections::BinaryHeap`, the reference.
    Heap,
    /// A monotone radix heap over integer time.
    Radix,
}

impl QueueKind {
    /// The two queues, in the order `herdsim bench` reports them.
    pub const ALL: [QueueKind; 2] = [QueueKind::Radix, QueueKind::Heap];

    /// The queue a run of the resource model `resource` uses.
    ///
    /// Measured single-threaded on this project's machine class (base 100
    /// ms, cap 20 s; `herdsim bench`, `cargo bench -p herdsim-benches --bench engine`): on the
    /// slot the radix heap is about 1.3 times the binary heap's speed at
    /// 1,000 clients, 3.4 at 100,000, and 10 at 1,000,000; on `outage` they
    /// are even at 1,000 clients and the radix heap 2.7 times faster at
    /// 100,000. The `occ` model's herds are small (10 to 190 clients in the
    /// AWS sweep) and its events spread by network hops, and there the
    /// binary heap is about 15% faster.
    pub fn for_resource(self, resource: ResourceKind) -> QueueKind {
        match (self, resource) {
            (QueueKind::Auto, ResourceKind::Occ) => QueueKind::Heap,
            (QueueKind::Auto, _) => QueueKind::Radix,
            (queue, _) => queue,
        }
    }
}

named!(QueueKind, "queue", {
    QueueKind::Auto => "auto",
    QueueKind::Radix => "radix",
    QueueKind::Heap => "heap",
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::Draws;
    use crate::base::seeding::job_rng;
    use crate::base::time::Micros;
    use radix::SMALL;

    /// Drains `Q` as an event loop would: every event is rescheduled a random
    /// delay later (sometimes 0, often equal times) until its client is done.
    /// `(client, rounds left)`.
    #[derive(Debug, Clone, Copy)]
    struct Rounds(u32, u32);

    impl ClientItem for Rounds {
        fn for_client(self, id: u32) -> Self {
            Rounds(id, self.1)
        }
    }

    impl ClientItem for u32 {
        fn for_client(self, id: u32) -> Self {
            id
        }
    }

    fn drain<Q: EventQueue<Rounds>>(
        first_calls: &FirstCalls,
        rounds: u32,
        seed: u64,
    ) -> Vec<(Ticks, u32)> {
        let mut draws = job_rng(seed);
        let mut queue = Q::with_first_calls(first_calls, Rounds(0, rounds));
        let mut order = Vec::new();
        while let Some((time, Rounds(client, left))) = queue.first() {
            order.push((time, client));
            let next =
                (left > 1).then(|| (time + draws.uniform(0, 3) * 500, Rounds(client, left - 1)));
            queue.reschedule_first(next);
        }
        order
    }

    #[test]
    fn both_queues_pop_in_the_same_order() {
        for (clients, rounds, seed) in [(1, 5, 1), (10, 50, 2), (500, 20, 3), (2_000, 5, 4)] {
            let mut draws = job_rng(seed + 100);
            let spread = FirstCalls::At(
                (0..clients)
                    .map(|_| Micros::from_ms(draws.uniform(0, 5)))
                    .collect(),
            );
            for first_calls in [FirstCalls::AllAtZero { clients }, spread] {
                let heap = drain::<HeapQueue<_>>(&first_calls, rounds, seed);
                let radix = drain::<RadixQueue<_>>(&first_calls, rounds, seed);
                assert_eq!(heap.len(), clients as usize * rounds as usize);
                assert_eq!(heap, radix, "{clients} clients");
                assert!(heap.windows(2).all(|w| w[0].0 <= w[1].0));
            }
        }
    }

    /// Drains `Q` from one event whose handling pushes up to two more, a
    /// random delay later (often 0, often equal times), in alternating
    /// phases of growth and decline, so the pending set grows past the radix
    /// queue's small set and shrinks back. The order events left in, and how
    /// many times the pending set fell from above `3 × SMALL` to below 4.
    fn branch<Q: EventQueue<u32>>(seed: u64, events: u32) -> (Vec<(Ticks, u32)>, u32) {
        let mut draws = job_rng(seed);
        let mut queue = Q::with_events(vec![(0, 0)]);
        let mut order = Vec::new();
        let (mut made, mut pending) = (1, 1);
        let (mut growing, mut crossings) = (true, 0);
        while let Some((time, id)) = queue.first() {
            order.push((time, id));
            queue.reschedule_first(None);
            if pending > 3 * SMALL {
                growing = false;
            } else if pending < 4 && !growing {
                growing = true;
                crossings += 1;
            }
            pending -= 1;
            let follow_ups = match draws.uniform(0, 9) {
                0..=3 if growing => 2,
                0..=3 => 0,
                _ => 1,
            };
            for _ in 0..follow_ups {
                if made < events {
                    queue.push(time + draws.uniform(0, 4) * 250, made);
                    made += 1;
                    pending += 1;
                }
            }
        }
        (order, crossings)
    }

    #[test]
    fn pending_sets_crossing_the_small_set_pop_as_the_heap_does() {
        for seed in 0..20 {
            let (heap, crossings) = branch::<HeapQueue<_>>(seed, 5_000);
            let (radix, _) = branch::<RadixQueue<_>>(seed, 5_000);
            assert_eq!(heap.len(), 5_000, "seed {seed}");
            assert_eq!(heap, radix, "seed {seed}");
            assert!(heap.windows(2).all(|w| w[0].0 <= w[1].0));
            // The workload really went past the small set and back, often.
            assert!(crossings >= 5, "seed {seed}: {crossings} crossings");
        }
    }

    #[test]
    fn the_heap_pops_earliest_first_and_fifo_within_an_instant() {
        // Clients 0..5 first call at 5, 1, 5, 1, 0: the herd order at each
        // instant is the client order.
        let mut heap = HeapQueue::with_first_calls(
            &FirstCalls::At([5, 1, 5, 1, 0].map(Micros::from_us).to_vec()),
            0u32,
        );
        let mut order = Vec::new();
        while let Some((time, client)) = heap.first() {
            order.push((time, client));
            // Client 4 acts again at 1, behind clients 1 and 3.
            heap.reschedule_first((client == 4 && time == 0).then_some((1, 4)));
        }
        assert_eq!(order, [(0, 4), (1, 1), (1, 3), (1, 4), (5, 0), (5, 2)]);
    }

    #[test]
    fn queue_names_parse() {
        for queue in [QueueKind::Auto, QueueKind::Radix, QueueKind::Heap] {
            assert_eq!(queue.name().parse(), Ok(queue));
        }
        let auto = QueueKind::Auto;
        assert_eq!(auto.for_resource(ResourceKind::Occ), QueueKind::Heap);
        assert_eq!(auto.for_resource(ResourceKind::Slot), QueueKind::Radix);
        assert_eq!(
            QueueKind::Radix.for_resource(ResourceKind::Occ),
            QueueKind::Radix
        );
        assert!("fibonacci".parse::<QueueKind>().is_err());
    }
}
