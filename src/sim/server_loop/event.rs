//! The server loop's events: what each kind does, and the one word of
//! argument each kind reads, through typed constructors and readers so that
//! no handler reads another kind's meaning.

use crate::control::Outcome;
use crate::model::server::Nanos;
use crate::sim::queue::ClientItem;

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The next open-loop arrival.
    Arrival,
    /// A source's first request (`req` is the source), beside the arrivals.
    FirstCall,
    /// A closed-loop user's think time ends (`req` is the user).
    ThinkDone,
    /// An attempt reaches the server ([`Event::deadline`]).
    AtServer,
    /// A worker finishes an attempt ([`Event::back`]).
    ServiceDone,
    /// A worker finishes with an attempt it failed for its deadline.
    ServiceExpired,
    /// A reply reaches its client ([`Event::reply`]).
    Reply,
    /// A client's timeout for an attempt fires.
    Timeout,
    /// A client sends its next attempt after backing off
    /// ([`Event::admitted`]).
    Resend,
    /// The workers change (a capacity drop begins or ends).
    Capacity,
    /// A worker of a service above the server ends its own work on an
    /// attempt ([`Event::held_since`]) and calls the service below.
    CallBelow,
    /// A hedged request's next copy is due (`attempt`: its number).
    Hedge,
}

/// How an attempt ended, as its reply tells its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reply {
    /// The server failed it.
    Failure = 0,
    /// It succeeded.
    Success = 1,
    /// The server refused it (a full queue, shedding by expected wait, or
    /// its discipline's drop).
    Rejected = 2,
    /// An upper service failed it because its own call below gave up (a
    /// failure that came from below).
    FailedBelow = 3,
}

impl Reply {
    /// What the client's controls and retries learn of it.
    #[inline]
    pub(super) fn outcome(self) -> Outcome {
        match self {
            Reply::Success => Outcome::Success,
            Reply::Rejected => Outcome::Rejected,
            Reply::Failure | Reply::FailedBelow => Outcome::Failure,
        }
    }
}

/// One attempt of one request: the slab index, the request's generation
/// (an event for an ended request is stale) and the attempt's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AttemptId {
    pub(super) req: u32,
    pub(super) generation: u32,
    /// 0 is the first try.
    pub(super) attempt: u32,
}

/// What one scheduled event carries (its time is the queue's key; events at
/// one instant leave in the order they were scheduled).
///
/// Laid out as three whole words with no padding (`spare` fills it), so an
/// event is copied as whole words. With padding, its copies were odd-sized
/// overlapping moves, and `perf` put the loop's most-sampled instruction on
/// one, in the pop of an event pushed moments before (a load that spans two
/// recent stores must wait for them to reach the cache).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub(super) struct Event {
    /// The kind's one argument, a time in ns, a reply or a flag: read
    /// only through the kind's reader.
    arg: u64,
    /// The request's slab index (or the source or user, for `FirstCall`
    /// and `ThinkDone`).
    pub(super) req: u32,
    /// The request's generation: an event for an ended request is stale.
    pub(super) generation: u32,
    /// The attempt number (0 is the first try).
    pub(super) attempt: u32,
    pub(super) kind: Kind,
    /// The service (0 is the one users call) an attempt's event is at.
    pub(super) layer: u8,
    /// Always 0: makes the padding a field, copied with the rest.
    spare: u16,
}

impl ClientItem for Event {
    /// Server events are never made for a herd of clients.
    fn for_client(self, _id: u32) -> Self {
        self
    }
}

/// A resend's argument: the controls admitted it already (it waited for a
/// rate limiter's token).
const ADMITTED: u64 = 1;

impl Event {
    #[inline(always)]
    fn new(kind: Kind, id: AttemptId, arg: u64, layer: u8) -> Event {
        Event {
            arg,
            req: id.req,
            generation: id.generation,
            attempt: id.attempt,
            kind,
            layer,
            spare: 0,
        }
    }

    /// An event of `kind` naming no request (`Arrival`, `Capacity`) or only
    /// a source or user (`FirstCall`, `ThinkDone`).
    #[inline(always)]
    pub(super) fn of_source(kind: Kind, source: u32) -> Event {
        let id = AttemptId {
            req: source,
            generation: 0,
            attempt: 0,
        };
        Event::new(kind, id, 0, 0)
    }

    /// Attempt `id` reaches service `layer`, with its propagated deadline
    /// (`Nanos::MAX` for none).
    #[inline(always)]
    pub(super) fn at_server(id: AttemptId, deadline: Nanos, layer: u8) -> Event {
        Event::new(Kind::AtServer, id, deadline.ticks(), layer)
    }

    /// A worker of service `layer` ends attempt `id`, `expired` if it
    /// failed it for its deadline; the reply reaches the client at `back`.
    #[inline(always)]
    pub(super) fn service_done(id: AttemptId, expired: bool, back: Nanos, layer: u8) -> Event {
        let kind = if expired {
            Kind::ServiceExpired
        } else {
            Kind::ServiceDone
        };
        Event::new(kind, id, back.ticks(), layer)
    }

    /// The reply of attempt `id` reaches the caller of service `layer`.
    #[inline(always)]
    pub(super) fn reply(id: AttemptId, reply: Reply, layer: u8) -> Event {
        Event::new(Kind::Reply, id, reply as u64, layer)
    }

    /// The client's timeout of attempt `id`.
    #[inline(always)]
    pub(super) fn timeout(id: AttemptId) -> Event {
        Event::new(Kind::Timeout, id, 0, 0)
    }

    /// The next attempt of the request in slot `req`, `admitted` already by
    /// the controls (a rate limiter's token came) or not (a backoff ended).
    #[inline(always)]
    pub(super) fn resend(req: u32, generation: u32, admitted: bool) -> Event {
        let id = AttemptId {
            req,
            generation,
            attempt: 0,
        };
        Event::new(Kind::Resend, id, if admitted { ADMITTED } else { 0 }, 0)
    }

    /// An upper worker of service `layer`, which took attempt `id` at
    /// `held_since`, calls the service below.
    #[inline(always)]
    pub(super) fn call_below(id: AttemptId, held_since: Nanos, layer: u8) -> Event {
        Event::new(Kind::CallBelow, id, held_since.ticks(), layer)
    }

    /// The next copy of a hedged request is due (`id.attempt`: its number).
    #[inline(always)]
    pub(super) fn hedge(id: AttemptId) -> Event {
        Event::new(Kind::Hedge, id, 0, 0)
    }

    /// The attempt the event is about.
    #[inline(always)]
    pub(super) fn id(&self) -> AttemptId {
        AttemptId {
            req: self.req,
            generation: self.generation,
            attempt: self.attempt,
        }
    }

    /// `AtServer`: the attempt's propagated deadline.
    #[inline(always)]
    pub(super) fn deadline(&self) -> Nanos {
        debug_assert_eq!(self.kind, Kind::AtServer);
        Nanos::from_ticks(self.arg)
    }

    /// `ServiceDone`, `ServiceExpired`: when the reply reaches the client.
    #[inline(always)]
    pub(super) fn back(&self) -> Nanos {
        debug_assert!(matches!(
            self.kind,
            Kind::ServiceDone | Kind::ServiceExpired
        ));
        Nanos::from_ticks(self.arg)
    }

    /// `Reply`: how the attempt ended.
    #[inline(always)]
    pub(super) fn reply_of(&self) -> Reply {
        debug_assert_eq!(self.kind, Kind::Reply);
        match self.arg {
            1 => Reply::Success,
            2 => Reply::Rejected,
            3 => Reply::FailedBelow,
            _ => Reply::Failure,
        }
    }

    /// `Resend`: true if the controls admitted it already.
    #[inline(always)]
    pub(super) fn admitted(&self) -> bool {
        debug_assert_eq!(self.kind, Kind::Resend);
        self.arg == ADMITTED
    }

    /// `CallBelow`: when the upper worker took the attempt.
    #[inline(always)]
    pub(super) fn held_since(&self) -> Nanos {
        debug_assert_eq!(self.kind, Kind::CallBelow);
        Nanos::from_ticks(self.arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_three_whole_words() {
        assert_eq!(size_of::<Event>(), 24);
    }

    #[test]
    fn each_kind_reads_back_what_it_was_made_with() {
        let id = AttemptId {
            req: 7,
            generation: 3,
            attempt: 2,
        };
        for reply in [
            Reply::Failure,
            Reply::Success,
            Reply::Rejected,
            Reply::FailedBelow,
        ] {
            let e = Event::reply(id, reply, 1);
            assert_eq!((e.reply_of(), e.id(), e.layer), (reply, id, 1));
        }
        let t = Nanos::from_ticks;
        assert_eq!(Event::at_server(id, t(99), 0).deadline(), t(99));
        let done = Event::service_done(id, true, t(42), 2);
        assert_eq!((done.kind, done.back()), (Kind::ServiceExpired, t(42)));
        assert!(Event::resend(7, 3, true).admitted());
        assert!(!Event::resend(7, 3, false).admitted());
        assert_eq!(Event::call_below(id, t(5), 1).held_since(), t(5));
        assert_eq!(Reply::FailedBelow.outcome(), Outcome::Failure);
        assert_eq!(Reply::Rejected.outcome(), Outcome::Rejected);
    }
}
