//! Seeds: one master seed, one generator per job.
//!
//! A job is one (point, replicate) pair of a run or sweep. Its generator is
//! seeded from the master seed and the job's indices alone, never from a thread
//! or from the order jobs finish in, so the output is byte-identical at any
//! `RAYON_NUM_THREADS` (the rand book's advice for parallel reproducibility).

use rand_pcg::Pcg64Mcg;

/// The master seed used when none is given. Printed with every result.
pub const DEFAULT_MASTER_SEED: u64 = 42;

/// SplitMix64's finaliser: a bijection on `u64` that scatters nearby inputs.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of job (`point`, `replicate`) under `master`: a SplitMix64 chain over
/// the three numbers, so every job's seed differs and none depends on another.
pub fn job_seed(master: u64, point: u64, replicate: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(master) ^ point) ^ replicate)
}

/// The environment's seed for replicate `replicate` under `master`: the same
/// for every point of a sweep, so policies meet the same environment.
pub fn environment_seed(master: u64, replicate: u64) -> u64 {
    // A constant no job seed chain starts from keeps the two streams apart.
    splitmix64(splitmix64(splitmix64(master) ^ 0xE4F1_2A7C_5D3B_9061) ^ replicate)
}

/// The generator of one job, from its seed: two further SplitMix64 steps fill the
/// 128-bit PCG state.
pub fn job_rng(seed: u64) -> Pcg64Mcg {
    let hi = splitmix64(seed);
    let lo = splitmix64(hi);
    Pcg64Mcg::new((u128::from(hi) << 64) | u128::from(lo))
}

/// The retry controls' seed from a policy seed (see [`Seeds::controls`]).
pub fn controls_seed(policy: u64) -> u64 {
    splitmix64(policy ^ 0x3C6E_F372_FE94_F82B)
}

/// The seeds of one run: one for the policy's draws, one for the
/// environment's (arrival times, outage lengths and rolls, network delays).
///
/// The environment's seed depends on the replicate but not on the workload
/// point, so every policy in a sweep meets the same environment in the same
/// replicate: differences between policies are the policies' own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seeds {
    /// Seeds the policy's generator.
    pub policy: u64,
    /// Seeds the environment's generator.
    pub environment: u64,
}

impl Seeds {
    /// The seed of the retry controls' draws (a throttle's refusals, a
    /// breaker's jitter): their own stream, from the policy's seed, so
    /// turning a control on shifts neither the environment nor the backoff.
    pub fn controls(self) -> u64 {
        controls_seed(self.policy)
    }

    /// Seeds made from one key (a splitting copy's): two streams apart, as
    /// a job's are.
    pub fn from_key(key: u64) -> Seeds {
        Seeds {
            policy: splitmix64(key ^ 0x6A09_E667_F3BC_C908),
            environment: splitmix64(key ^ 0xBB67_AE85_84CA_A73B),
        }
    }

    /// The seeds of replicate `replicate` of point `point` under `master`.
    pub fn for_job(master: u64, point: u64, replicate: u64) -> Seeds {
        Seeds {
            policy: job_seed(master, point, replicate),
            environment: environment_seed(master, replicate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn splitmix_matches_its_reference_output() {
        // First outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c):
        // the generator adds the constant, then finalises.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn job_seeds_are_distinct_across_points_and_replicates() {
        let mut seen = HashSet::new();
        for point in 0..50 {
            for replicate in 0..200 {
                assert!(seen.insert(job_seed(DEFAULT_MASTER_SEED, point, replicate)));
            }
        }
        assert_ne!(job_seed(1, 0, 0), job_seed(2, 0, 0));
    }
}
