//! Call chains: the services above the server, each with its workers, its
//! unbounded FIFO queue and its retry controls as one client of the service
//! below. A worker of an upper service does its own work on an attempt,
//! then calls the service below as a request of its own and waits; nothing
//! cancels work, so a call below goes on after its caller gave up.

use std::collections::VecDeque;

use crate::base::seeding::Seeds;
use crate::control::Controls;
use crate::model::server::{Nanos, ServerSpec};
use crate::sim::queue::EventQueue;

use super::event::{Event, Reply};
use super::station::Queued;
use super::{Mode, ServerRetry, State};

/// The seed of the controls of the upper service `layer`: each is one
/// client of the service below, with draws of its own.
pub(super) fn upper_controls_seed(seeds: Seeds, layer: u8) -> u64 {
    crate::base::seeding::splitmix64(seeds.controls() ^ u64::from(layer))
}

/// A service above the server in a chain: its workers, its queue, and its
/// retry controls as one client of the service below.
#[derive(Clone)]
struct Upper {
    busy: u32,
    queue: VecDeque<Queued>,
    controls: Option<Controls>,
}

/// The upper service's attempt a call below serves: its worker waits for
/// the call, and its reply goes up when the call ends.
#[derive(Debug, Clone, Copy)]
struct Call {
    id: super::event::AttemptId,
    /// When the worker took the attempt.
    held_since: Nanos,
}

/// The services above the server, top first, and the calls they made.
#[derive(Clone)]
pub(super) struct Uppers {
    uppers: Vec<Upper>,
    /// Per request slot of a call below: the attempt it serves.
    calls: Vec<Option<Call>>,
}

impl Uppers {
    pub(super) fn new(spec: &ServerSpec, retry: &ServerRetry, seeds: Seeds) -> Self {
        Uppers {
            uppers: (1..spec.chain.depth)
                .map(|layer| Upper {
                    busy: 0,
                    queue: VecDeque::new(),
                    // Each upper service is one client of the service
                    // below, with control draws of its own.
                    controls: Controls::new(
                        &spec
                            .chain
                            .controls_of(layer as usize - 1, retry.control_families()),
                        1,
                        None,
                        upper_controls_seed(seeds, layer as u8),
                    ),
                })
                .collect(),
            calls: Vec::new(),
        }
    }

    /// The controls of upper service `layer` (≥ 1) as a client of the
    /// service below it.
    #[inline]
    pub(super) fn controls_of(&mut self, layer: u8) -> Option<&mut Controls> {
        self.uppers[usize::from(layer) - 1].controls.as_mut()
    }

    /// Every upper service's controls, with its layer.
    pub(super) fn controls_mut(&mut self) -> impl Iterator<Item = (u8, &mut Controls)> {
        (1u8..)
            .zip(self.uppers.iter_mut())
            .filter_map(|(layer, upper)| upper.controls.as_mut().map(|c| (layer, c)))
    }
}

impl<Q: EventQueue<Event>, M: Mode> State<'_, Q, M> {
    /// An attempt reaches service `e.layer`, above the server: a free
    /// worker takes it, or it waits (the upper services' queues are
    /// unbounded FIFO).
    #[cold]
    pub(super) fn at_upper(&mut self, e: Event) {
        let layer = usize::from(e.layer);
        self.rec.at_upper(e.layer);
        let queued = Queued {
            id: e.id(),
            arrived: self.now,
            deadline: Nanos::MAX,
        };
        let workers = self.spec.chain.workers_of(layer).unwrap_or(u32::MAX);
        if self.uppers.uppers[layer].busy < workers {
            self.serve_upper(e.layer, queued);
        } else {
            self.uppers.uppers[layer].queue.push_back(queued);
        }
    }

    /// A worker of upper service `layer` takes `queued`: its own work
    /// first, then its call below.
    #[cold]
    fn serve_upper(&mut self, layer: u8, queued: Queued) {
        self.uppers.uppers[usize::from(layer)].busy += 1;
        let work = self
            .spec
            .chain
            .service_of(usize::from(layer))
            .sample(&mut self.environment);
        self.push(
            self.now.saturating_add(work),
            Event::call_below(queued.id, self.now, layer),
        );
    }

    /// An upper worker's own work on an attempt is done: it calls the
    /// service below and waits. It does so whether or not its caller still
    /// waits (nothing cancels work), and the call carries the user's fate.
    #[cold]
    pub(super) fn call_below(&mut self, e: Event) {
        let parent = &self.slab[e.req];
        let fate = if parent.generation == e.generation {
            parent.fate
        } else {
            1.0
        };
        let (child, _) = self.new_call(0, e.layer + 1, fate, 0);
        let slot = child as usize;
        let calls = &mut self.uppers.calls;
        if calls.len() <= slot {
            calls.resize(slot + 1, None);
        }
        calls[slot] = Some(Call {
            id: e.id(),
            held_since: e.held_since(),
        });
        if !self.start(child) {
            self.end(child);
        }
    }

    /// A call below ends, `succeeded` or not: the upper worker that made it
    /// is free, and its attempt's reply goes up (a failure from below if
    /// the call gave up). The worker's time counts as wasted if its caller
    /// no longer waits for that reply, or will have timed out when it comes.
    #[cold]
    pub(super) fn end_call(&mut self, child: u32, succeeded: bool) {
        let layer = self.slab[child].layer - 1;
        self.slab.remove(child);
        let call = self.uppers.calls[child as usize].expect("a call below has its caller");
        let held = self.now - call.held_since;
        let back = self
            .now
            .saturating_add(self.spec.reply_delay.sample(&mut self.environment));
        let wasted = M::reply_ignored(self, call.id, back);
        self.rec.upper_held(layer, held, wasted);
        let reply = if succeeded {
            Reply::Success
        } else {
            Reply::FailedBelow
        };
        self.push(back, Event::reply(call.id, reply, layer));
        let upper = &mut self.uppers.uppers[usize::from(layer)];
        upper.busy -= 1;
        if let Some(next) = upper.queue.pop_front() {
            self.serve_upper(layer, next);
        }
    }
}
