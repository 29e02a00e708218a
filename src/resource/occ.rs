//! The `occ` resource: the AWS Architecture Blog's optimistic-concurrency
//! simulator (2015), the model behind its "Exponential Backoff And Jitter"
//! curves.

use rand_pcg::Pcg64Mcg;

use crate::arrivals::FirstCalls;
use crate::draws::Draws;
use crate::engine::{Client, Observer, Recorder, Retries};
use crate::metrics::RunMetrics;
use crate::policy::Backoff;
use crate::queue::EventQueue;
use crate::spec::RunSpec;
use crate::time::Micros;

/// Mean one-way network delay, µs.
pub const NET_MEAN_US: f64 = 10_000.0;
/// Standard deviation of the network delay, µs.
pub const NET_SD_US: f64 = 2_000.0;

/// The network between the clients and the row: every hop takes
/// `|Normal(10 ms, 2 ms)|`, drawn from the environment's stream in event order.
pub struct OccNetwork {
    draws: Pcg64Mcg,
    spare: Option<f64>,
}

impl OccNetwork {
    /// A network drawing its delays from `draws`.
    pub fn new(draws: Pcg64Mcg) -> Self {
        OccNetwork { draws, spare: None }
    }

    /// A standard normal deviate (Box–Muller; each pair of uniforms gives two).
    fn standard_normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let unit =
            |d: &mut Pcg64Mcg| (d.uniform(0, u64::MAX >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let (u, v) = (unit(&mut self.draws), unit(&mut self.draws));
        let radius = (-2.0 * u.ln()).sqrt();
        let angle = std::f64::consts::TAU * v;
        self.spare = Some(radius * angle.sin());
        radius * angle.cos()
    }

    /// One hop's delay, µs.
    pub fn delay(&mut self) -> Micros {
        (NET_MEAN_US + NET_SD_US * self.standard_normal())
            .abs()
            .round() as Micros
    }
}

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
    let mut recorder = Recorder::new(spec);

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
            if !recorder.call(time, attempt, observer) {
                break;
            }
            if attempt == 0 {
                retries.first_call(client.id);
            }
            let served = read_version[c] == version;
            observer.call(time, client.id, attempt, served);
            let reply = time + network.delay();
            if served {
                version += 1;
                recorder.success(reply, retries.started(client.id));
                retries.succeeded(&client);
                None
            } else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeding::job_rng;

    #[test]
    fn network_delays_are_folded_normal_10ms_2ms() {
        let mut net = OccNetwork::new(job_rng(5));
        let delays: Vec<f64> = (0..100_000).map(|_| net.delay() as f64).collect();
        let mean = delays.iter().sum::<f64>() / 1e5;
        let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / 1e5).sqrt();
        // SE of the mean 2 ms/√100,000 = 6.3 µs; 4 SE. The sd's SE is ~4.5 µs.
        assert!((mean - 10_000.0).abs() < 25.0, "{mean}");
        assert!((sd - 2_000.0).abs() < 25.0, "{sd}");
    }
}
