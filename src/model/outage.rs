//! The `outage` resource: the policybook project's canonical outage episode
//! (the workload behind seed 000's peak-retry figures).

use super::CallResource;
use crate::base::draws::{Draws, unit_of_bits};
use crate::base::seeding::splitmix64;
use crate::base::time::Micros;

/// Longest outage, µs: each client's outage lasts `U[0, 30 s]`.
pub const MAX_OUTAGE_US: Micros = Micros::from_s(30);
/// Chance that an attempt after the outage succeeds.
pub const SUCCESS_AFTER_OUTAGE: f64 = 0.9;

/// Independent clients, each behind its own outage. An attempt at `t`
/// succeeds iff `t ≥ D` (the client's outage length, `U[0, 30 s]`) and an
/// independent roll succeeds (probability 0.9).
///
/// Outage lengths and rolls come from the environment's stream, never the
/// policy's, and each roll is a function of (environment seed, client,
/// attempt): every policy faces the same outages and the same coin flips, so
/// policies differ only by their own choices.
#[derive(Debug, Clone)]
pub struct OutageResource {
    outage_us: Vec<Micros>,
    roll_seed: u64,
}

impl OutageResource {
    /// Draws each of `clients` outage lengths from `environment`, and takes the
    /// rolls' seed from it.
    pub fn new<D: Draws>(clients: u32, environment: &mut D) -> Self {
        let outage_us = (0..clients)
            .map(|_| environment.uniform_us(Micros::ZERO, MAX_OUTAGE_US))
            .collect();
        let roll_seed = environment.uniform(0, u64::MAX);
        OutageResource {
            outage_us,
            roll_seed,
        }
    }

    /// The roll of `client`'s attempt `attempt`: a uniform fraction in [0, 1).
    fn roll(&self, client: u32, attempt: u32) -> f64 {
        let key = (u64::from(client) << 32) | u64::from(attempt);
        let bits = splitmix64(self.roll_seed ^ splitmix64(key));
        unit_of_bits(bits)
    }
}

impl CallResource for OutageResource {
    #[inline]
    fn call(&mut self, t: Micros, client: u32, attempt: u32) -> bool {
        t >= self.outage_us[client as usize] && self.roll(client, attempt) < SUCCESS_AFTER_OUTAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;

    #[test]
    fn nothing_succeeds_before_the_outage_ends() {
        let mut r = OutageResource::new(1_000, &mut job_rng(1));
        for client in 0..1_000 {
            let d = r.outage_us[client as usize];
            if d > Micros::ZERO {
                assert!(!r.call(d - Micros::from_us(1), client, 0));
            }
        }
    }

    #[test]
    fn outages_span_zero_to_thirty_seconds_and_rolls_succeed_nine_times_in_ten() {
        let mut r = OutageResource::new(100_000, &mut job_rng(2));
        let mean = r.outage_us.iter().sum::<Micros>().ticks() as f64 / 1e5;
        // U[0, 30 s]: mean 15 s, SE 8.66 s/√100,000 = 27 ms; 4 SE.
        assert!((mean - 15e6).abs() < 4.0 * 27_400.0, "{mean}");
        let after = (0..100_000)
            .filter(|&c| r.call(MAX_OUTAGE_US, c, 3))
            .count() as f64
            / 1e5;
        // Binomial(100,000, 0.9): SE 0.00095; 4 SE.
        assert!((after - 0.9).abs() < 0.0038, "{after}");
    }

    #[test]
    fn the_same_environment_gives_the_same_rolls() {
        let a = OutageResource::new(50, &mut job_rng(3));
        let b = OutageResource::new(50, &mut job_rng(3));
        assert_eq!(a.outage_us, b.outage_us);
        for (c, k) in [(0, 0), (7, 3), (49, 7)] {
            assert_eq!(a.roll(c, k), b.roll(c, k));
        }
        assert_ne!(a.roll(1, 0), a.roll(1, 1));
    }
}
