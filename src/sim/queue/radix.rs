//! The monotone radix heap over integer time: every event is due at or
//! after the last one taken, and equal times leave in schedule order.

use super::Ticks;
use super::{ClientItem, EventQueue};
use crate::model::arrivals::FirstCalls;

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
    last: Ticks,
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
    small_times: Vec<Ticks>,
    small_items: Vec<T>,
    /// Empty chunks, for reuse.
    spare: Vec<Chunk<T>>,
}

/// Most future events kept sorted in [`RadixQueue`]'s `small` before the
/// buckets take over: a sorted insert moves at most this many entries.
pub(super) const SMALL: usize = 16;

/// Events a chunk holds: 1,024 events are 16 to 32 KB.
const CHUNK_EVENTS: usize = 1 << 10;

type Chunk<T> = Vec<(Ticks, T)>;

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
    fn push(&mut self, time: Ticks, item: T) {
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
    fn push_later(&mut self, time: Ticks, item: T) {
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
    fn push_to_bucket(&mut self, time: Ticks, item: T) {
        let b = 63 - (time ^ self.last).leading_zeros() as usize;
        self.occupied |= 1 << b;
        if self.buckets[b].open.len() == CHUNK_EVENTS {
            self.seal(b);
        }
        self.buckets[b].open.push((time, item));
    }

    /// A refill's event: due now, or to a bucket below the one emptied.
    #[inline(always)]
    fn push_now_or_bucket(&mut self, time: Ticks, item: T) {
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
    fn take_small_instant(&mut self, earliest: Ticks) {
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
                    queue.push(time.ticks(), template.for_client(client));
                }
            }
        }
        queue
    }

    fn with_events(events: Vec<(Ticks, T)>) -> Self {
        let mut queue = RadixQueue::empty(None);
        for (time, item) in events {
            queue.push(time, item);
        }
        queue
    }

    #[inline(always)]
    fn first(&mut self) -> Option<(Ticks, T)> {
        if self.head == self.now.len() && !self.refill() {
            return None;
        }
        Some((self.last, self.now[self.head]))
    }

    #[inline(always)]
    fn reschedule_first(&mut self, next: Option<(Ticks, T)>) {
        if self.head == self.now.len() {
            return;
        }
        self.head += 1;
        if let Some((time, item)) = next {
            self.push(time, item);
        }
    }

    #[inline(always)]
    fn push(&mut self, time: Ticks, item: T) {
        RadixQueue::push(self, time, item);
    }

    fn capacity_bytes(&self) -> usize {
        let chunks = self
            .buckets
            .iter()
            .flat_map(|b| b.full.iter().chain([&b.open]));
        let entries: usize = chunks.chain(&self.spare).map(Vec::capacity).sum();
        entries * size_of::<(Ticks, T)>()
            + self.small_times.capacity() * size_of::<Ticks>()
            + (self.small_items.capacity() + self.now.capacity() + self.after_herd.capacity())
                * size_of::<T>()
    }
}
