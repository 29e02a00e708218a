//! A run's mode: how its requests use their attempts (one at a time,
//! hedged copies, or attempts kept past their timeout), matched once when
//! the run starts ([`super::with_mode`]), so each mode's loop is compiled on
//! its own and a plain request pays nothing for the others. Each mode is
//! written beside its path ([`super::plain`], [`super::hedged`],
//! [`super::kept`]).

use crate::model::server::Nanos;
use crate::sim::queue::EventQueue;

use super::State;
use super::event::{AttemptId, Event};

/// How a run's requests use their attempts, chosen once per run: one at a
/// time (`Plain`), hedged copies (`Hedged`) or attempts kept past their
/// timeout (`Kept`). The handlers of the events whose meaning differs are
/// the mode's; each mode keeps its own state per request slot.
pub(super) trait Mode: Clone + Send + Sync + Sized {
    /// A request starts: its first attempt goes. False if a control refused
    /// it (the caller ends the request).
    fn start<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, req: u32) -> bool;
    /// A reply reaches its client.
    fn reply<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event);
    /// A client's timeout fires.
    fn timeout<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event);
    /// A retry's backoff (or a rate limiter's wait) ended.
    fn resend<Q: EventQueue<Event>>(s: &mut State<'_, Q, Self>, e: Event);
    /// A hedged request's next copy is due.
    fn hedge_due<Q: EventQueue<Event>>(_: &mut State<'_, Q, Self>, _: Event) {
        unreachable!("only hedged runs schedule hedges")
    }
    /// True if the reply of attempt `id`, arriving at `back`, finds its
    /// caller no longer waiting for it.
    fn reply_ignored<Q: EventQueue<Event>>(
        s: &State<'_, Q, Self>,
        id: AttemptId,
        back: Nanos,
    ) -> bool;
    /// A control refused a retry of the request in slot `req` that is not
    /// retried: true if the request goes on (attempts of its own still in
    /// flight), false if it gives up.
    fn goes_on_after_refusal(&mut self, _req: u32) -> bool {
        false
    }
    /// Bytes of per-slot storage held.
    fn capacity_bytes(&self) -> usize {
        0
    }
    /// Requests a kept attempt won.
    fn kept_wins(&self) -> u64 {
        0
    }
}
