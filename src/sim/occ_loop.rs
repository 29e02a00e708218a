//! The event loop of the `occ` model ([`crate::model::OccNetwork`]): a
//! conversation over a network rather than a call answered at once.

use crate::base::time::Micros;
use crate::control::Outcome;
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::Observer;
use crate::measure::recorder::Recorder;
use crate::model::OccNetwork;
use crate::model::arrivals::FirstCalls;
use crate::model::occ::{OccDone, OccServer};
use crate::policy::WalkBits;
use crate::sim::queue::EventQueue;
use crate::sim::retries::{Admitted, Client, Retries};
use crate::spec::RunSpec;

/// What a client's next event at the row is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Its read arrives (read-write only).
    Read,
    /// Its write arrives.
    Write,
    /// Its write ends: the conflict is checked, or the lock released.
    WriteEnd,
}

/// Runs the OCC model. One row with a version number; each client wants to
/// update it once. With the read-write server (the AWS simulator's) an
/// attempt is read → reply → write → reply, each hop one network delay: the
/// read records the row's version, and the write commits iff the version is
/// unchanged when the write ends, and then increments it. With the
/// write-only server an attempt is the write alone, the version noted as it
/// arrives; with the locking server a write that arrives while another is in
/// progress is rejected at once, and one that arrives at a free row holds it
/// for its write time and commits. After a failed write's reply the client
/// waits its backoff, and its next read or write arrives one network delay
/// later. Only writes count as calls, counted as they arrive; a client is
/// done when its commit's reply reaches it, or at the commit
/// (`occ_done = "commit"`).
///
/// Only the row's reads, writes and write ends are events (the clients'
/// hops add delay but change nothing), so an attempt with instant writes is
/// two events (one without a read), in the order the original simulators
/// process them; a write time adds its end.
pub(crate) fn run_occ<W: WalkBits, O: Observer, Q: EventQueue<Client<W>>>(
    spec: &RunSpec,
    mut retries: Retries,
    mut network: OccNetwork,
    observer: &mut O,
) -> RunMetrics {
    let n = spec.clients as usize;
    let occ = &spec.occ;
    let reads = occ.server == OccServer::ReadWrite;
    // Each client's first read (or write) leaves at its first call and
    // reaches the row one delay later.
    let arrivals = FirstCalls::At(
        (0..spec.clients)
            .map(|c| retries.started(c) + network.delay())
            .collect(),
    );
    let mut queue = Q::with_first_calls(&arrivals, retries.new_client());
    let first = if reads { Next::Read } else { Next::Write };
    let mut next = vec![first; n];
    let mut read_version = vec![0u64; n];
    let mut write_arrived = vec![Micros::ZERO; n];
    let mut version = 0u64;
    let mut locked = false;
    let mut recorder = Recorder::new(spec.clients, spec.window());

    while let Some((time, mut client)) = queue.first() {
        let time = Micros::from_ticks(time);
        let c = client.id as usize;
        let decided = match next[c] {
            Next::Read => {
                // A read: note the version; the reply and the write each take
                // a hop.
                read_version[c] = version;
                next[c] = Next::Write;
                queue.reschedule_first(Some((
                    (time + network.delay() + network.delay()).ticks(),
                    client,
                )));
                continue;
            }
            Next::Write => {
                let attempt = client.attempt;
                match retries.about_to_call(&client, time, &mut recorder) {
                    Admitted::Yes => {}
                    Admitted::No => {
                        queue.reschedule_first(None);
                        continue;
                    }
                    Admitted::Retry => {
                        // Refused at the write: the retry starts over, as
                        // after a failed write.
                        next[c] = first;
                        let at = retries
                            .after_failure(&mut client, time, Micros::ZERO, observer, &mut recorder)
                            .map(|sent| sent + network.delay());
                        queue.reschedule_first(at.map(|t| (t.ticks(), client)));
                        continue;
                    }
                }
                if !recorder.call(time, attempt, observer) {
                    break;
                }
                write_arrived[c] = time;
                let write = network.write_time(&occ.write_time);
                match occ.server {
                    OccServer::Locking if locked => Some(false),
                    OccServer::Locking => {
                        locked = write > Micros::ZERO;
                        (write == Micros::ZERO).then_some(true)
                    }
                    OccServer::WriteOnly if write == Micros::ZERO => Some(true),
                    OccServer::WriteOnly => {
                        read_version[c] = version;
                        None
                    }
                    OccServer::ReadWrite if write == Micros::ZERO => {
                        Some(read_version[c] == version)
                    }
                    OccServer::ReadWrite => None,
                }
                .or_else(|| {
                    next[c] = Next::WriteEnd;
                    queue.reschedule_first(Some(((time + write).ticks(), client)));
                    None
                })
            }
            Next::WriteEnd => Some(match occ.server {
                OccServer::Locking => {
                    locked = false;
                    true
                }
                _ => read_version[c] == version,
            }),
        };
        let Some(served) = decided else {
            continue;
        };
        observer.call(write_arrived[c], client.id, client.attempt, served);
        let reply = time + network.delay();
        // The controls learn the outcome as the write ends (time runs
        // forward for them; its reply follows a network delay later).
        let arrives = if served {
            version += 1;
            let done = match occ.done {
                OccDone::Reply => reply,
                OccDone::Commit => time,
            };
            recorder.success(done, retries.started(client.id));
            retries.attempt_ended(&client, time, write_arrived[c], Outcome::Success);
            None
        } else {
            retries.attempt_ended(&client, time, write_arrived[c], Outcome::Failure);
            next[c] = first;
            // The next attempt starts when the client sends its read or
            // write.
            retries
                .after_failure(&mut client, reply, Micros::ZERO, observer, &mut recorder)
                .map(|sent| sent + network.delay())
        };
        queue.reschedule_first(arrives.map(|t| (t.ticks(), client)));
    }
    recorder.finish()
}
