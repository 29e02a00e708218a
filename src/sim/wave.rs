//! Waves: clients that call together, fail together and retry together,
//! moved as one event.
//!
//! Under a policy without jitter, clients that first call at the same
//! instant stay in lockstep: at each instant the slot serves at most the
//! first of them and the rest fail, all with the same retry number, so all
//! get the same delay. The reference engine handles such a wave one call at a
//! time: `n` clients without jitter make `n(n+1)/2` calls, 5·10^9 at 100,000
//! clients. Here a wave is one event with a count, and each instant costs one
//! event whatever the wave's size.
//!
//! The results are identical to the one-call-at-a-time loop, not an
//! approximation: in that loop a wave's calls are consecutive in the queue
//! (their sequence numbers were given out together, with nothing between),
//! so nothing else can act between them; the first call of the wave meets the
//! slot as the wave's first client would; every other call fails at once (the
//! slot is busy or down at that instant, and a failed call changes nothing),
//! and the survivors are rescheduled together, again with consecutive
//! sequence numbers. A property test runs both loops over random workloads
//! and compares every call.
//!
//! Waves apply only where every client of a wave is treated alike: a policy
//! without jitter ([`Backoff::JITTERED`]), on the slot, with no retry budget
//! and no retry hints.

use std::ops::Range;

use crate::base::time::Micros;
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::Observer;
use crate::measure::recorder::Recorder;
use crate::model::SlotResource;
use crate::model::arrivals::FirstCalls;
use crate::policy::WalkBits;
use crate::sim::queue::{ClientItem, EventQueue, Ticks};
use crate::sim::retries::Retries;
use crate::spec::RunSpec;

/// Clients `first..first + count`, due at the same instant with the same
/// attempt number and policy memory (and so the same first call).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wave<W> {
    /// The first client, the one the slot may serve.
    pub(crate) first: u32,
    /// How many clients.
    pub(crate) count: u32,
    /// The attempt they make next (0 is their first call).
    pub(crate) attempt: u32,
    /// Their policy's memory.
    pub(crate) walk: W,
}

impl<W> Wave<W> {
    fn clients(&self) -> Range<u32> {
        self.first..self.first + self.count
    }
}

/// Waves are made whole by [`first_waves`]; the queue's per-client
/// construction is not used for them.
impl<W: Copy> ClientItem for Wave<W> {
    fn for_client(self, id: u32) -> Self {
        Wave {
            first: id,
            count: 1,
            ..self
        }
    }
}

/// The first calls as waves: each run of consecutive clients with the same
/// first-call time is one wave (the herd is a single wave).
fn first_waves<W: Copy>(first_calls: &FirstCalls, walk: W) -> Vec<(Ticks, Wave<W>)> {
    let wave = |first, count, time: Micros| {
        (
            time.ticks(),
            Wave {
                first,
                count,
                attempt: 0,
                walk,
            },
        )
    };
    match first_calls {
        FirstCalls::AllAtZero { clients } => vec![wave(0, *clients, Micros::ZERO)],
        FirstCalls::At(times) => {
            let mut waves: Vec<(Ticks, Wave<W>)> = Vec::new();
            for (client, &time) in (0u32..).zip(times) {
                match waves.last_mut() {
                    Some((at, w)) if *at == time.ticks() => w.count += 1,
                    _ => waves.push(wave(client, 1, time)),
                }
            }
            waves
        }
    }
}

/// The slot's event loop with clients moving in waves. Requires
/// [`Retries::waves_are_exact`].
pub(crate) fn wave_loop<W: WalkBits, O: Observer, Q: EventQueue<Wave<W>>>(
    spec: &RunSpec,
    mut retries: Retries,
    mut slot: SlotResource,
    observer: &mut O,
) -> RunMetrics {
    let start = retries.new_client().walk;
    let mut queue = Q::with_events(first_waves(retries.first_calls(), start));
    let mut recorder = Recorder::new(spec.clients, spec.window());

    while let Some((time, mut wave)) = queue.first() {
        let time = Micros::from_ticks(time);
        let attempt = wave.attempt;
        let made = recorder.calls(time, attempt, wave.count, observer);
        // The calls made, in order: the first may be served, the rest fail.
        let called = wave.first..wave.first + made;
        let served = made > 0 && slot.call(time);
        observer.wave_calls(time, called.clone(), attempt, served);
        if served {
            recorder.success(time, retries.started(wave.first));
        }
        let failed = called.start + u32::from(served)..called.end;
        let next = if failed.is_empty() {
            None
        } else {
            retries
                .after_wave_failure(&mut wave, failed.clone(), time, observer, &mut recorder)
                .map(|at| {
                    (
                        at.ticks(),
                        Wave {
                            first: failed.start,
                            count: failed.len() as u32,
                            ..wave
                        },
                    )
                })
        };
        if made < wave.count {
            // The observer stopped the run within this wave.
            break;
        }
        debug_assert_eq!(wave.clients().end, failed.end);
        queue.reschedule_first(next);
    }
    recorder.finish()
}
