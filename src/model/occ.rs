//! The `occ` resource: the AWS Architecture Blog's optimistic-concurrency
//! simulator (2015), the model behind its "Exponential Backoff And Jitter"
//! curves, and backoff-simulator's (PyPI) three servers with their write
//! times.

use rand_pcg::Pcg64Mcg;

use crate::base::draws::Draws;
use crate::base::time::Micros;
use crate::base::time::Nanos;
use crate::model::server::{Dist, NS_PER_US, round_ns};

/// How the row's server decides which write commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OccServer {
    /// Read the version, then write it back: the write commits if the
    /// version is unchanged when the write ends (the AWS simulator's, and
    /// backoff-simulator's ReadWriteOCCServer).
    #[default]
    ReadWrite,
    /// Write at once: the server notes the version when the write arrives
    /// and commits if it is unchanged when the write ends
    /// (backoff-simulator's WriteOnlyOCCServer).
    WriteOnly,
    /// A lock: a write arriving while another is in progress is rejected at
    /// once, and one arriving at a free row always commits
    /// (backoff-simulator's LockingServer).
    Locking,
}

crate::base::names::named!(OccServer, "occ server", {
    OccServer::ReadWrite => "read-write",
    OccServer::WriteOnly => "write-only",
    OccServer::Locking => "locking",
});

/// When a client whose write committed is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OccDone {
    /// When the commit's reply reaches it (the AWS simulator's).
    #[default]
    Reply,
    /// At the commit (backoff-simulator's: its server never answers a
    /// success, so a run lasts until the last commit).
    Commit,
}

crate::base::names::named!(OccDone, "occ done", {
    OccDone::Reply => "reply",
    OccDone::Commit => "commit",
});

/// The occ model's row and clients.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccParams {
    /// The server's concurrency control.
    pub server: OccServer,
    /// How long a write takes at the row; its conflict is checked at its end.
    pub write_time: Dist,
    /// When a committed client is done.
    pub done: OccDone,
}

impl Default for OccParams {
    /// The AWS simulator's: read-write, instant writes, done at the reply.
    fn default() -> Self {
        OccParams {
            server: OccServer::ReadWrite,
            write_time: Dist::Const(Nanos::ZERO),
            done: OccDone::Reply,
        }
    }
}

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
        let (u, v) = (self.draws.unit_above_zero(), self.draws.unit_above_zero());
        let radius = (-2.0 * u.ln()).sqrt();
        let angle = std::f64::consts::TAU * v;
        self.spare = Some(radius * angle.sin());
        radius * angle.cos()
    }

    /// One write's duration, µs (no draw for instant writes, so the AWS
    /// model's stream is untouched).
    pub fn write_time(&mut self, d: &Dist) -> Micros {
        if d.is_zero() {
            return Micros::ZERO;
        }
        Micros::from_ticks(
            round_ns(d.sample(&mut self.draws).ticks() as f64 / NS_PER_US.ticks() as f64).ticks(),
        )
    }

    /// One hop's delay, µs.
    pub fn delay(&mut self) -> Micros {
        Micros::from_ticks(
            (NET_MEAN_US + NET_SD_US * self.standard_normal())
                .abs()
                .round() as u64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;

    #[test]
    fn network_delays_are_folded_normal_10ms_2ms() {
        let mut net = OccNetwork::new(job_rng(5));
        let delays: Vec<f64> = (0..100_000).map(|_| net.delay().ticks() as f64).collect();
        let mean = delays.iter().sum::<f64>() / 1e5;
        let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / 1e5).sqrt();
        // SE of the mean 2 ms/√100,000 = 6.3 µs; 4 SE. The sd's SE is ~4.5 µs.
        assert!((mean - 10_000.0).abs() < 25.0, "{mean}");
        assert!((sd - 2_000.0).abs() < 25.0, "{sd}");
    }
}
