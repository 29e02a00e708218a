//! The event loop of the `occ` model ([`crate::model::OccNetwork`]): a
//! conversation over a network rather than a call answered at once.

use crate::control::Outcome;
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::Observer;
use crate::measure::recorder::Recorder;
use crate::model::OccNetwork;
use crate::model::arrivals::FirstCalls;
use crate::policy::Backoff;
use crate::sim::queue::EventQueue;
use crate::sim::retries::{Client, Retries};
use crate::spec::RunSpec;

/// Runs the OCC model. One row with a version number; each client wants to
/// update it once. An attempt is read → reply → write → reply, each hop one
/// network delay. The read records the row's version; the write succeeds iff
/// the version is unchanged when it arrives, and then increments it. After a
/// failed write's reply the client waits its backoff, and its next read
/// arrives one network delay later. Only writes count as calls; a client is
/// done when its successful write's reply reaches it.
///
/// Only the row's reads and writes are events (the clients' hops add delay but
/// change nothing), so each attempt is two events, in the order the original
/// simulator processes them.
pub(crate) fn run_occ<P: Backoff, O: Observer, Q: EventQueue<Client<P::Walk>>>(
    spec: &RunSpec,
    mut retries: Retries<'_, P>,
    mut network: OccNetwork,
    observer: &mut O,
) -> RunMetrics {
    let n = spec.clients as usize;
    // Each client's first read leaves at its first call and reaches the row
    // one delay later.
    let arrivals = FirstCalls::At(
        (0..spec.clients)
            .map(|c| retries.started(c) + network.delay())
            .collect(),
    );
    let mut queue = Q::with_first_calls(&arrivals, retries.new_client());
    let mut read_version = vec![0u64; n];
    let mut writing = vec![false; n];
    let mut version = 0u64;
    let mut recorder = Recorder::new(spec.clients, spec.window());

    while let Some((time, mut client)) = queue.first() {
        let c = client.id as usize;
        let arrives = if !writing[c] {
            // A read: note the version; the reply and the write each take a hop.
            read_version[c] = version;
            writing[c] = true;
            Some(time + network.delay() + network.delay())
        } else {
            writing[c] = false;
            let attempt = client.attempt;
            if !retries.about_to_call(&client, time, &mut recorder) {
                queue.reschedule_first(None);
                continue;
            }
            if !recorder.call(time, attempt, observer) {
                break;
            }
            let served = read_version[c] == version;
            observer.call(time, client.id, attempt, served);
            let reply = time + network.delay();
            // The controls learn the outcome as the write lands (time runs
            // forward for them; its reply follows a network delay later).
            if served {
                version += 1;
                recorder.success(reply, retries.started(client.id));
                retries.attempt_ended(&client, time, Outcome::Success);
                None
            } else {
                retries.attempt_ended(&client, time, Outcome::Failure);
                // The next attempt starts when the client sends its read.
                retries
                    .after_failure(&mut client, reply, 0, observer, &mut recorder)
                    .map(|sent| sent + network.delay())
            }
        };
        queue.reschedule_first(arrives.map(|t| (t, client)));
    }
    recorder.finish()
}
