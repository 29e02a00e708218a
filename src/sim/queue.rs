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

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::base::names::named;
use crate::base::time::Micros;
use crate::model::ResourceKind;
use crate::model::arrivals::FirstCalls;

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
    fn with_events(events: Vec<(Micros, T)>) -> Self;
    /// The earliest event, `(time, item)`, if any.
    fn first(&mut self) -> Option<(Micros, T)>;
    /// Replaces the earliest event with `(time, item)`, due after every event
    /// already scheduled at that instant, or removes it on `None`. The time is
    /// never before the earliest event's.
    fn reschedule_first(&mut self, next: Option<(Micros, T)>);
    /// Schedules one more event, due after every event already scheduled at
    /// its instant; `time` is never before the last event taken.
    fn push(&mut self, time: Micros, item: T);
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

/// One pending event of the binary heap: `item` is due at `time`; `seq`
/// orders events at the same instant first-in first-out.
#[derive(Debug, Clone, Copy)]
struct HeapEntry<T> {
    time: Micros,
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
                time: first_calls.of(client),
                seq: u64::from(client),
                item: template.for_client(client),
            })
            .collect();
        HeapQueue {
            heap,
            seq: u64::from(first_calls.clients()),
        }
    }

    fn with_events(events: Vec<(Micros, T)>) -> Self {
        let seq = events.len() as u64;
        let heap = events
            .into_iter()
            .zip(0..)
            .map(|((time, item), seq)| HeapEntry { time, seq, item })
            .collect();
        HeapQueue { heap, seq }
    }

    #[inline]
    fn first(&mut self) -> Option<(Micros, T)> {
        self.heap.peek().map(|e| (e.time, e.item))
    }

    #[inline]
    fn reschedule_first(&mut self, next: Option<(Micros, T)>) {
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
    fn push(&mut self, time: Micros, item: T) {
        self.heap.push(HeapEntry {
            time,
            seq: self.seq,
            item,
        });
        self.seq += 1;
    }
}

/// A monotone radix heap over integer time.
///
/// `now` holds the items due at `last`, the time of the event last taken,
/// in schedule order. Bucket `b` holds events whose time's highest bit
/// differing from `last` is bit `b`. When `now` runs out, the lowest non-empty
/// bucket is emptied into `now` and lower buckets around its earliest time, so
/// an event moves at most 64 times and usually a few.
///
/// Order within an instant: events of equal time always share a bucket (the
/// bucket depends only on the time and `last`), every bucket keeps the order
/// its events arrived in, and moving a bucket keeps it too, so events at one
/// instant leave in the order they were scheduled, as the heap's `seq` says.
///
/// Memory: buckets are lists of fixed-size chunks drawn from one pool, and a
/// herd's first calls are made on demand from a template, so the queue's
/// resident memory follows the number of pending events (about 24 bytes
/// each) instead of the high-water marks of 64 growing vectors.
///
/// Few pending events: while at most [`SMALL`] future events are pending
/// and no bucket is in use, they are kept in `small`, sorted latest first,
/// instead of the buckets: a server at moderate load has a handful pending
/// (the next arrival and one completion a busy worker), and there a sorted
/// insert and a pop from the end cost less than the buckets' repeated
/// refills. The first push beyond it spills `small` into the buckets, which
/// are used until they empty. Equal times keep schedule order in `small`
/// too (a later one sorts in front of those already there), and a refill
/// takes every event of the earliest time, so the order is the heap's.
#[derive(Clone)]
pub struct RadixQueue<T> {
    last: Micros,
    /// Herd clients not yet in `now`: all due at 0, before anything else
    /// due at 0, and made from `template` a chunk at a time.
    herd: std::ops::Range<u32>,
    template: Option<T>,
    /// Events scheduled at 0 while the herd is still coming: due after it.
    after_herd: Vec<T>,
    now: Vec<T>,
    /// The next item of `now` due.
    head: usize,
    buckets: [Bucket<T>; 64],
    /// Bit `b` set iff bucket `b` is non-empty.
    occupied: u64,
    /// Future events while few are pending and no bucket is occupied,
    /// latest first (earliest at the end): their times, and beside them
    /// their items. Apart, an item is written and read whole by the same
    /// moves; in pairs, a sorted insert moved a pair as two halves that
    /// split the item, and the refill right after read it across both
    /// (`perf` sampled those reads most in the server loop).
    small_times: Vec<Micros>,
    small_items: Vec<T>,
    /// Empty chunks, for reuse.
    spare: Vec<Chunk<T>>,
}

/// Most future events kept sorted in [`RadixQueue`]'s `small` before the
/// buckets take over: a sorted insert moves at most this many entries.
const SMALL: usize = 16;

/// Events a chunk holds: 1,024 events are 16 to 32 KB.
const CHUNK_EVENTS: usize = 1 << 10;

type Chunk<T> = Vec<(Micros, T)>;

/// One bucket's events, in arrival order: the full chunks, then `open`.
#[derive(Clone)]
struct Bucket<T> {
    full: Vec<Chunk<T>>,
    open: Chunk<T>,
}

impl<T> Default for Bucket<T> {
    fn default() -> Self {
        Bucket {
            full: Vec::new(),
            open: Vec::new(),
        }
    }
}

/// `now`'s storage above this many items is given back when it empties (a
/// no-jitter wave puts every pending client in `now`).
const KEEP_NOW: usize = 1 << 16;

impl<T: ClientItem> RadixQueue<T> {
    fn empty(template: Option<T>) -> Self {
        RadixQueue {
            last: 0,
            herd: 0..0,
            template,
            after_herd: Vec::new(),
            now: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Bucket::default()),
            occupied: 0,
            small_times: Vec::with_capacity(SMALL),
            small_items: Vec::with_capacity(SMALL),
            spare: Vec::new(),
        }
    }

    /// Schedules `item` at `time`, inline with all its paths (due now, a
    /// sorted insert into `small`, or a bucket); only spilling `small` and
    /// sealing a full chunk are calls. With the bucket path a call, the item
    /// went to it by reference, so every caller built its item on the stack
    /// and the server loop read events back across narrower stores.
    #[inline(always)]
    fn push(&mut self, time: Micros, item: T) {
        debug_assert!(time >= self.last, "a radix heap takes times in order");
        if time == self.last {
            // Behind the herd and whatever is already waiting behind it.
            if self.herd.is_empty() && self.after_herd.is_empty() {
                self.now.push(item);
            } else {
                self.after_herd.push(item);
            }
        } else if self.occupied == 0 && self.small_times.len() < SMALL {
            // In front of every event due at or before `time`: an equal time
            // scheduled earlier stays nearer the end, so leaves first. One
            // insertion-sort step from the end (inline, where `Vec::insert`
            // calls memmove).
            let mut at = self.small_times.len();
            self.small_times.push(time);
            self.small_items.push(item);
            // Slices of the new length: the loop's indices are then known to
            // be in range (no bounds checks, no reloads of the lengths).
            let times = &mut self.small_times[..=at];
            let items = &mut self.small_items[..=at];
            while at > 0 && times[at - 1] <= time {
                times[at] = times[at - 1];
                items[at] = items[at - 1];
                at -= 1;
            }
            times[at] = time;
            items[at] = item;
        } else {
            self.push_later(time, item);
        }
    }

    /// [`Self::push`] to the buckets, spilling `small` into them first if
    /// they are not in use yet (a herd's pushes mostly come here).
    #[inline(always)]
    fn push_later(&mut self, time: Micros, item: T) {
        if self.occupied == 0 {
            self.spill_small();
        }
        self.push_to_bucket(time, item);
    }

    /// Moves `small` into the buckets, earliest first, so equal times keep
    /// their order.
    #[cold]
    fn spill_small(&mut self) {
        while let (Some(time), Some(item)) = (self.small_times.pop(), self.small_items.pop()) {
            self.push_to_bucket(time, item);
        }
    }

    #[inline(always)]
    fn push_to_bucket(&mut self, time: Micros, item: T) {
        let b = 63 - (time ^ self.last).leading_zeros() as usize;
        self.occupied |= 1 << b;
        if self.buckets[b].open.len() == CHUNK_EVENTS {
            self.seal(b);
        }
        self.buckets[b].open.push((time, item));
    }

    /// A refill's event: due now, or to a bucket below the one emptied.
    #[inline(always)]
    fn push_now_or_bucket(&mut self, time: Micros, item: T) {
        if time == self.last {
            self.now.push(item);
        } else {
            self.push_to_bucket(time, item);
        }
    }

    /// Files bucket `b`'s full open chunk and opens a spare one.
    #[cold]
    fn seal(&mut self, b: usize) {
        let spare = self
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(CHUNK_EVENTS));
        let full = std::mem::replace(&mut self.buckets[b].open, spare);
        self.buckets[b].full.push(full);
    }

    /// Refills `now`: with the herd's next chunk, then what was scheduled at 0
    /// meanwhile, then from `small` or the lowest non-empty bucket; false if
    /// the queue is empty. Taking the earliest instant of `small` is inline:
    /// a server run with a handful of events pending does it for nearly
    /// every event.
    #[inline(always)]
    fn refill(&mut self) -> bool {
        if let Some(&earliest) = self.small_times.last()
            && self.herd.is_empty()
            && self.after_herd.is_empty()
            && self.now.capacity() <= KEEP_NOW
        {
            self.now.clear();
            self.head = 0;
            self.take_small_instant(earliest);
            return true;
        }
        self.refill_otherwise()
    }

    /// Moves `small`'s events at `earliest`, its earliest time, into `now`
    /// (the buckets are empty while `small` is in use).
    #[inline(always)]
    fn take_small_instant(&mut self, earliest: Micros) {
        self.last = earliest;
        while self.small_times.last() == Some(&earliest) {
            self.small_times.pop();
            let item = self.small_items.pop().expect("an item beside each time");
            self.now.push(item);
        }
    }

    /// [`Self::refill`] from the herd, the events behind it, the buckets,
    /// or `small` after `now` grew past [`KEEP_NOW`].
    #[cold]
    #[inline(never)]
    fn refill_otherwise(&mut self) -> bool {
        if self.now.capacity() > KEEP_NOW {
            self.now = Vec::new();
        }
        self.now.clear();
        self.head = 0;
        if !self.herd.is_empty() {
            let end = self.herd.end.min(self.herd.start + CHUNK_EVENTS as u32);
            let template = self.template.expect("a herd has a template");
            self.now
                .extend((self.herd.start..end).map(|client| template.for_client(client)));
            self.herd.start = end;
            return true;
        }
        if !self.after_herd.is_empty() {
            self.now = std::mem::take(&mut self.after_herd);
            return true;
        }
        if let Some(&earliest) = self.small_times.last() {
            self.take_small_instant(earliest);
            return true;
        }
        if self.occupied == 0 {
            return false;
        }
        let b = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << b);
        let Bucket { mut full, mut open } = std::mem::take(&mut self.buckets[b]);
        let earliest = |chunk: &Chunk<T>| chunk.iter().map(|&(time, _)| time).min();
        self.last = full
            .iter()
            .chain(std::iter::once(&open))
            .filter_map(earliest)
            .min()
            .expect("an occupied bucket");
        // Every event goes below `b`, so this bucket stays empty meanwhile;
        // they stay in the buckets (not `small`), which keeps their order.
        for mut chunk in full.drain(..) {
            for &(time, item) in &chunk {
                self.push_now_or_bucket(time, item);
            }
            chunk.clear();
            self.spare.push(chunk);
        }
        for &(time, item) in &open {
            self.push_now_or_bucket(time, item);
        }
        open.clear();
        // Keep the storage for the next fill.
        self.buckets[b] = Bucket { full, open };
        true
    }
}

impl<T: ClientItem> EventQueue<T> for RadixQueue<T> {
    fn with_first_calls(first_calls: &FirstCalls, template: T) -> Self {
        let mut queue = RadixQueue::empty(Some(template));
        match first_calls {
            FirstCalls::AllAtZero { clients } => queue.herd = 0..*clients,
            FirstCalls::At(times) => {
                for (&time, client) in times.iter().zip(0u32..) {
                    queue.push(time, template.for_client(client));
                }
            }
        }
        queue
    }

    fn with_events(events: Vec<(Micros, T)>) -> Self {
        let mut queue = RadixQueue::empty(None);
        for (time, item) in events {
            queue.push(time, item);
        }
        queue
    }

    #[inline(always)]
    fn first(&mut self) -> Option<(Micros, T)> {
        if self.head == self.now.len() && !self.refill() {
            return None;
        }
        Some((self.last, self.now[self.head]))
    }

    #[inline(always)]
    fn reschedule_first(&mut self, next: Option<(Micros, T)>) {
        if self.head == self.now.len() {
            return;
        }
        self.head += 1;
        if let Some((time, item)) = next {
            self.push(time, item);
        }
    }

    #[inline(always)]
    fn push(&mut self, time: Micros, item: T) {
        RadixQueue::push(self, time, item);
    }

    fn capacity_bytes(&self) -> usize {
        let chunks = self
            .buckets
            .iter()
            .flat_map(|b| b.full.iter().chain([&b.open]));
        let entries: usize = chunks.chain(&self.spare).map(Vec::capacity).sum();
        entries * size_of::<(Micros, T)>()
            + self.small_times.capacity() * size_of::<Micros>()
            + (self.small_items.capacity() + self.now.capacity() + self.after_herd.capacity())
                * size_of::<T>()
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
    ) -> Vec<(Micros, u32)> {
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
            let spread =
                FirstCalls::At((0..clients).map(|_| draws.uniform(0, 5) * 1_000).collect());
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
    fn branch<Q: EventQueue<u32>>(seed: u64, events: u32) -> (Vec<(Micros, u32)>, u32) {
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
        let mut heap = HeapQueue::with_first_calls(&FirstCalls::At(vec![5, 1, 5, 1, 0]), 0u32);
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
