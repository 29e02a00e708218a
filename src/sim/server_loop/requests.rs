//! The requests in flight: a slab of slots reused as requests end, each
//! with a generation that moves on when its request ends, so an event still
//! naming an ended request is seen to be stale with one comparison and
//! memory follows what is in flight, not the requests in a run.

use std::ops::{Index, IndexMut};

use crate::control::Outcome;
use crate::model::server::Nanos;
use crate::policy::AnyWalk;

use super::event::AttemptId;

/// A request in flight.
#[derive(Debug, Clone, Copy)]
pub(super) struct Request {
    pub(super) generation: u32,
    /// Its source (owner of control state) or closed-loop user.
    pub(super) source: u32,
    /// Latency counts from here: its start, or when it got a client slot.
    pub(super) started: Nanos,
    /// Attempts sent so far.
    pub(super) attempts: u32,
    /// When the latest attempt was sent.
    pub(super) sent: Nanos,
    /// True while the client waits for the reply of attempt `attempts − 1`.
    pub(super) awaiting: bool,
    /// What its latest attempt retried (`None` for a first try), for the
    /// controls.
    pub(super) retry_of: Option<Outcome>,
    /// The per-user failure draw: it fails while a per-user trigger with a
    /// share above this covers an attempt's completion.
    pub(super) fate: f64,
    /// Which of the spec's timeout choices it drew (0 without choices): an
    /// index, not the duration, so it fits beside `awaiting` and costs no
    /// bytes.
    pub(super) timeout_choice: u8,
    /// The service its attempts go to (0: the users' request to service
    /// 1; above 0, a call an upper service made below).
    pub(super) layer: u8,
}

impl Request {
    /// True if its client still waits for the reply of this attempt.
    #[inline(always)]
    pub(super) fn awaits(&self, id: AttemptId) -> bool {
        self.generation == id.generation && self.awaiting && self.attempts == id.attempt + 1
    }
}

/// What the end of an awaited attempt (its reply or its timeout) needs of
/// its request ([`Slab::stop_awaiting`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Awaited {
    pub(super) layer: u8,
    pub(super) source: u32,
    pub(super) retry_of: Option<Outcome>,
    /// When the request started (latency counts from here).
    pub(super) started: Nanos,
    /// When the attempt was sent.
    pub(super) sent: Nanos,
    pub(super) timeout_choice: u8,
}

/// The requests in flight, by slot, and their policies' memory beside
/// them (kept only when some policy of the run has memory, so a request of
/// a memoryless policy stays 48 bytes and its start writes no walk).
#[derive(Debug, Clone, Default)]
pub(super) struct Slab {
    requests: Vec<Request>,
    free: Vec<u32>,
    /// Each slot's policy memory, if the run keeps any.
    walks: Option<Vec<AnyWalk>>,
}

impl Slab {
    /// An empty slab; it keeps each request's policy memory if `remembers`.
    pub(super) fn new(remembers: bool) -> Self {
        Slab {
            walks: remembers.then(Vec::new),
            ..Slab::default()
        }
    }

    /// The policy memory of the request in slot `req` (none kept: the
    /// empty memory, all a memoryless policy reads).
    #[inline]
    pub(super) fn walk(&self, req: u32) -> AnyWalk {
        self.walks
            .as_ref()
            .map_or(AnyWalk::default(), |w| w[req as usize])
    }

    /// Sets the policy memory of the request in slot `req`, if kept.
    #[inline]
    pub(super) fn set_walk(&mut self, req: u32, walk: AnyWalk) {
        if let Some(walks) = &mut self.walks {
            walks[req as usize] = walk;
        }
    }

    /// Puts `request` in a free slot (its generation the slot's next),
    /// with its policy memory `walk` (asked only if kept): the slot and the
    /// generation.
    #[inline(always)]
    pub(super) fn insert(
        &mut self,
        request: Request,
        walk: impl FnOnce() -> AnyWalk,
    ) -> (u32, u32) {
        let (slot, generation) = self.insert_request(request);
        if let Some(walks) = &mut self.walks {
            if walks.len() <= slot as usize {
                walks.resize(slot as usize + 1, AnyWalk::default());
            }
            walks[slot as usize] = walk();
        }
        (slot, generation)
    }

    #[inline(always)]
    fn insert_request(&mut self, request: Request) -> (u32, u32) {
        match self.free.pop() {
            Some(i) => {
                let slot = &mut self.requests[i as usize];
                let generation = slot.generation.wrapping_add(1);
                *slot = Request {
                    generation,
                    ..request
                };
                (i, generation)
            }
            None => {
                self.requests.push(Request {
                    generation: 0,
                    ..request
                });
                ((self.requests.len() - 1) as u32, 0)
            }
        }
    }

    /// The request in slot `req` is over: events still naming it are stale
    /// (its generation moves on) and the slot is free for the next.
    #[inline]
    pub(super) fn remove(&mut self, req: u32) {
        let r = &mut self.requests[req as usize];
        r.generation = r.generation.wrapping_add(1);
        r.awaiting = false;
        self.free.push(req);
    }

    /// True if slot `req` still holds the request of `generation`.
    #[inline(always)]
    pub(super) fn is_current(&self, req: u32, generation: u32) -> bool {
        self.requests[req as usize].generation == generation
    }

    /// If the client of attempt `id` still waits for its reply, it stops
    /// waiting: what a reply or a timeout needs of the request, read with
    /// one look at the slab.
    #[inline(always)]
    pub(super) fn stop_awaiting(&mut self, id: AttemptId) -> Option<Awaited> {
        let r = &mut self.requests[id.req as usize];
        if !r.awaits(id) {
            return None;
        }
        r.awaiting = false;
        Some(Awaited {
            layer: r.layer,
            source: r.source,
            retry_of: r.retry_of,
            started: r.started,
            sent: r.sent,
            timeout_choice: r.timeout_choice,
        })
    }

    /// Slots ever used: the most requests in flight at once.
    pub(super) fn slots(&self) -> usize {
        self.requests.len()
    }

    /// Bytes of storage held (its capacity, not its use).
    pub(super) fn capacity_bytes(&self) -> usize {
        self.requests.capacity() * size_of::<Request>()
            + self
                .walks
                .as_ref()
                .map_or(0, |w| w.capacity() * size_of::<AnyWalk>())
    }
}

impl Index<u32> for Slab {
    type Output = Request;
    #[inline(always)]
    fn index(&self, req: u32) -> &Request {
        &self.requests[req as usize]
    }
}

impl IndexMut<u32> for Slab {
    #[inline(always)]
    fn index_mut(&mut self, req: u32) -> &mut Request {
        &mut self.requests[req as usize]
    }
}
