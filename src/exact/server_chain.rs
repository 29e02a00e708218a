//! herdsim's own server as a continuous-time Markov chain, where its model
//! is Markovian: Poisson arrivals, exponential service on `c` workers, a
//! queue of at most `K` waiting attempts served in random order,
//! exponential per-attempt timeouts that do not cancel work (the abandoned
//! attempt stays and is served), exponential retry delays (the orbit), and
//! a retry that goes with probability P (a geometric number of attempts).
//!
//! Random order makes counts a sufficient state. A state is (live in
//! service, abandoned in service, live waiting, abandoned waiting, retries
//! waiting in the orbit): "live" attempts still have a client waiting for
//! them, "abandoned" ones timed out. When a worker frees, it takes a
//! waiting attempt uniformly, so a live one with probability live / waiting.
//! Under FIFO the same counts would not be enough (which attempt is next
//! depends on when each arrived), which is why the simulator offers
//! `discipline = random`.
//!
//! The orbit is the one unbounded count: it is capped, and a retry that
//! would pass the cap is lost (counted). The figures report the
//! probability of sitting at the cap so that the cut is seen, not assumed.

use crate::exact::ctmc::Generator;

/// The chain's rates, per second, and its bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainModel {
    /// λ: first tries per second.
    pub arrival_rate: f64,
    /// μ: completions per second of one busy worker.
    pub service_rate: f64,
    /// c.
    pub workers: usize,
    /// K: most attempts waiting (in service not counted).
    pub queue_limit: usize,
    /// θ: 1 / the mean timeout; 0 for none.
    pub timeout_rate: f64,
    /// ν: 1 / the mean retry delay.
    pub retry_rate: f64,
    /// P: the probability a retry goes when its delay ends.
    pub persistence: f64,
    /// Which failed attempts retry (none at all with one attempt).
    pub retry_on_failure: bool,
    /// See [`ChainModel::retry_on_failure`].
    pub retry_on_rejected: bool,
    /// See [`ChainModel::retry_on_failure`].
    pub retry_on_timeout: bool,
    /// The share of completed attempts that fail.
    pub fail_rate: f64,
    /// The largest orbit kept.
    pub orbit_cap: usize,
}

/// What a trigger changes while it lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    /// The arrival rate's factor (a load spike).
    pub load_factor: f64,
    /// The failure share in place of the model's (an outage: 1).
    pub fail_rate: f64,
}

/// One state's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct State {
    /// Live attempts in service.
    pub live_busy: usize,
    /// Abandoned attempts in service.
    pub abandoned_busy: usize,
    /// Live attempts waiting.
    pub live_waiting: usize,
    /// Abandoned attempts waiting.
    pub abandoned_waiting: usize,
    /// Retries waiting out their delay.
    pub orbit: usize,
}

impl State {
    /// Attempts in service.
    pub fn busy(&self) -> usize {
        self.live_busy + self.abandoned_busy
    }

    /// Attempts waiting for a worker.
    pub fn waiting(&self) -> usize {
        self.live_waiting + self.abandoned_waiting
    }

    /// Work not yet done for clients: waiting attempts plus waiting
    /// retries (the importance score of splitting, too).
    pub fn backlog(&self) -> usize {
        self.waiting() + self.orbit
    }
}

/// The chain: its states in index order and where each sits.
#[derive(Debug, Clone)]
pub struct ServerChain {
    /// The rates it was built from.
    pub model: ChainModel,
    states: Vec<State>,
    /// Where each number at the server (busy + waiting) starts within an
    /// orbit's slice.
    offsets: Vec<usize>,
    slice: usize,
}

/// Why a chain was not built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChainError {
    /// More states than allowed.
    #[error(
        "the chain would have {} states, more than the {most} allowed: lower queue_limit \
         or the orbit cap ({orbit_cap}), or allow more (time grows as states × {}², the \
         states of one orbit count)",
        group_wide(*states),
        group_wide(*slice)
    )]
    TooLarge {
        /// Its size, as computed (past `usize` too).
        states: u128,
        /// The most allowed.
        most: usize,
        /// The orbit cap asked for.
        orbit_cap: usize,
        /// States per orbit count.
        slice: u128,
    },
    /// More memory for its solves than allowed.
    #[error(
        "the chain's {} states ({} per orbit count) would need about {:.1} GB at once for its \
         solves (about 56 bytes × the band of {} per state, the band growing as the square \
         of workers + queue_limit); at most {:.1} GB: lower queue_limit, workers or the orbit \
         cap ({orbit_cap}) (--max-states bounds states, not memory)",
        group_wide(*states as u128),
        group_wide(*slice as u128),
        *bytes as f64 / 1e9,
        group_wide(*band as u128),
        MAX_SOLVE_BYTES as f64 / 1e9
    )]
    TooMuchMemory {
        /// Its size.
        states: usize,
        /// States per orbit count.
        slice: usize,
        /// How far from the diagonal its generator reaches, at most.
        band: usize,
        /// The bytes its solves would hold at once.
        bytes: u64,
        /// The orbit cap asked for.
        orbit_cap: usize,
    },
    /// A solve on the way failed.
    #[error("{0}")]
    Solve(#[from] crate::exact::ctmc::ExactError),
}

/// The most bytes the server chain's solves may hold at once
/// ([`solve_bytes`]).
pub const MAX_SOLVE_BYTES: u64 = 2_000_000_000;

/// A count with its thousands grouped, however large.
fn group_wide(n: u128) -> String {
    crate::base::format::group_thousands_wide(n)
}

/// States per orbit count of a server with `workers` and `queue_limit`:
/// with abandons, (b + 1)(w + 1) compositions of b busy and w waiting for
/// each number at the server, summed in closed form; without, one each.
/// Computed wide: a queue of 10⁹ would wrap `u64`.
fn slice_of(workers: usize, queue_limit: usize, abandons: bool) -> u128 {
    let (c, k) = (workers as u128, queue_limit as u128);
    if !abandons {
        return c + k + 1;
    }
    // Σ_{a=0}^{c} (a + 1), then Σ_{w=1}^{k} (c + 1)(w + 1).
    (c + 1) * (c + 2) / 2 + (c + 1) * (k * (k + 1) / 2 + k)
}

/// The most bytes the solves of a chain of `states` states whose generator
/// reaches `band` from the diagonal hold at once: the figures factor two
/// absorbing systems (2·band + 1 numbers a state each) beside a banded LU
/// (3·band + 1 with its fill-in), 8 bytes a number, about 56 × band bytes a
/// state (saturating: a figure past `u64` is too large anyway).
pub fn solve_bytes(states: usize, band: usize) -> u64 {
    let per_state = (band as u64).saturating_mul(7).saturating_add(3);
    (states as u64).saturating_mul(per_state).saturating_mul(8)
}

impl ServerChain {
    /// The states of `model`, if at most `most_states` and if its solves
    /// fit in [`MAX_SOLVE_BYTES`]: refused before anything is allocated.
    pub fn new(model: ChainModel, most_states: usize) -> Result<ServerChain, ChainError> {
        let abandons = model.timeout_rate > 0.0;
        let c = model.workers;
        let wide_slice = slice_of(c, model.queue_limit, abandons);
        let wide_states = wide_slice.saturating_mul(model.orbit_cap as u128 + 1);
        if wide_states > most_states as u128 {
            return Err(ChainError::TooLarge {
                states: wide_states,
                most: most_states,
                orbit_cap: model.orbit_cap,
                slice: wide_slice,
            });
        }
        // Both fit: at most `most_states`.
        let (slice_n, states) = (wide_slice as usize, wide_states as usize);
        // An event moves the orbit by one and the number at the server by
        // one: the index by at most a slice and two compositions.
        let widest = if abandons {
            (c + 1) * (model.queue_limit + 1)
        } else {
            1
        };
        let band = slice_n + 2 * widest;
        let bytes = solve_bytes(states, band);
        if bytes > MAX_SOLVE_BYTES {
            return Err(ChainError::TooMuchMemory {
                states,
                slice: slice_n,
                band,
                bytes,
                orbit_cap: model.orbit_cap,
            });
        }
        let mut offsets = Vec::with_capacity(c + model.queue_limit + 1);
        let mut slice = 0usize;
        for at_server in 0..=c + model.queue_limit {
            offsets.push(slice);
            slice += Self::compositions(c, at_server, abandons);
        }
        debug_assert_eq!(slice, slice_n);
        let mut all = Vec::with_capacity(states);
        for orbit in 0..=model.orbit_cap {
            for at_server in 0..=c + model.queue_limit {
                let busy = at_server.min(c);
                let waiting = at_server - busy;
                let live_busy_range = if abandons { 0..=busy } else { busy..=busy };
                for live_busy in live_busy_range {
                    let live_waiting_range = if abandons {
                        0..=waiting
                    } else {
                        waiting..=waiting
                    };
                    for live_waiting in live_waiting_range {
                        all.push(State {
                            live_busy,
                            abandoned_busy: busy - live_busy,
                            live_waiting,
                            abandoned_waiting: waiting - live_waiting,
                            orbit,
                        });
                    }
                }
            }
        }
        debug_assert_eq!(all.len(), states);
        Ok(ServerChain {
            model,
            states: all,
            offsets,
            slice,
        })
    }

    /// How many states have `at_server` attempts at the server.
    fn compositions(workers: usize, at_server: usize, abandons: bool) -> usize {
        if !abandons {
            return 1;
        }
        let busy = at_server.min(workers);
        (busy + 1) * (at_server - busy + 1)
    }

    /// True if attempts can be abandoned (there is a timeout): else the
    /// abandoned counts are always 0 and left out of the states.
    fn abandons(&self) -> bool {
        self.model.timeout_rate > 0.0
    }

    /// Its number of states.
    pub fn size(&self) -> usize {
        self.states.len()
    }

    /// The states of one orbit count.
    pub fn slice(&self) -> usize {
        self.slice
    }

    /// The state at `index`.
    pub fn state(&self, index: usize) -> State {
        self.states[index]
    }

    /// Every state, in index order.
    pub fn states(&self) -> &[State] {
        &self.states
    }

    /// The index of `s` (a valid state).
    pub fn index(&self, s: State) -> usize {
        let busy = s.busy();
        let waiting = s.waiting();
        let within = if self.abandons() {
            s.live_busy * (waiting + 1) + s.live_waiting
        } else {
            0
        };
        s.orbit * self.slice + self.offsets[busy + waiting] + within
    }

    /// The empty system.
    pub fn empty(&self) -> usize {
        0
    }

    /// The generator under `conditions` (the model's own: [`Self::normal`]).
    pub fn generator(&self, conditions: Conditions) -> Generator {
        let m = &self.model;
        let mut g = Generator::new(self.size());
        let arrival = m.arrival_rate * conditions.load_factor;
        let fail = conditions.fail_rate;
        for (i, &s) in self.states.iter().enumerate() {
            let add = |g: &mut Generator, to: State, rate: f64| {
                if rate > 0.0 {
                    g.add(i, self.index(to), rate);
                }
            };
            // A first try arrives.
            if let Some(to) = self.place(s, m.retry_on_rejected) {
                add(&mut g, to, arrival);
            }
            // A retry's delay ends: it goes, or its request gives up.
            if s.orbit > 0 {
                let leaving = s.orbit as f64 * m.retry_rate;
                let out = State {
                    orbit: s.orbit - 1,
                    ..s
                };
                if let Some(to) = self.place(out, m.retry_on_rejected) {
                    add(&mut g, to, leaving * m.persistence);
                }
                add(&mut g, out, leaving * (1.0 - m.persistence));
            }
            // A live attempt times out: abandoned where it is, and its
            // request retries.
            if self.abandons() {
                let timeout = m.timeout_rate;
                let retried = |s: State| self.retried(s, m.retry_on_timeout);
                if s.live_busy > 0 {
                    let to = State {
                        live_busy: s.live_busy - 1,
                        abandoned_busy: s.abandoned_busy + 1,
                        ..s
                    };
                    add(&mut g, retried(to), timeout * s.live_busy as f64);
                }
                if s.live_waiting > 0 {
                    let to = State {
                        live_waiting: s.live_waiting - 1,
                        abandoned_waiting: s.abandoned_waiting + 1,
                        ..s
                    };
                    add(&mut g, retried(to), timeout * s.live_waiting as f64);
                }
            }
            // A worker completes: a live attempt succeeds or fails (and
            // retries); an abandoned one's reply goes nowhere. The freed
            // worker takes a waiting attempt at random.
            let done_live = m.service_rate * s.live_busy as f64;
            if done_live > 0.0 {
                let freed = State {
                    live_busy: s.live_busy - 1,
                    ..s
                };
                for (next, share) in self.refills(freed) {
                    add(&mut g, next, done_live * (1.0 - fail) * share);
                    let failed = self.retried(next, m.retry_on_failure);
                    add(&mut g, failed, done_live * fail * share);
                }
            }
            let done_abandoned = m.service_rate * s.abandoned_busy as f64;
            if done_abandoned > 0.0 {
                let freed = State {
                    abandoned_busy: s.abandoned_busy - 1,
                    ..s
                };
                for (next, share) in self.refills(freed) {
                    add(&mut g, next, done_abandoned * share);
                }
            }
        }
        g
    }

    /// The rates with no trigger.
    pub fn normal_conditions(&self) -> Conditions {
        Conditions {
            load_factor: 1.0,
            fail_rate: self.model.fail_rate,
        }
    }

    /// The generator with no trigger.
    pub fn normal(&self) -> Generator {
        self.generator(self.normal_conditions())
    }

    /// Where an arriving attempt takes `s`: into service, into the queue,
    /// or (at a full queue) rejected, its request then retrying if
    /// `retry_rejected` and the orbit has room. `None`: nothing changes.
    fn place(&self, s: State, retry_rejected: bool) -> Option<State> {
        if s.busy() < self.model.workers {
            Some(State {
                live_busy: s.live_busy + 1,
                ..s
            })
        } else if s.waiting() < self.model.queue_limit {
            Some(State {
                live_waiting: s.live_waiting + 1,
                ..s
            })
        } else {
            let to = self.retried(s, retry_rejected);
            (to != s).then_some(to)
        }
    }

    /// `s` with one more retry waiting, if the request retries (`retries`)
    /// and the orbit has room; else `s` (the request gave up, or the retry
    /// was lost at the cap).
    fn retried(&self, s: State, retries: bool) -> State {
        if retries && s.orbit < self.model.orbit_cap {
            State {
                orbit: s.orbit + 1,
                ..s
            }
        } else {
            s
        }
    }

    /// The states after a worker of `freed` (one fewer in service) takes a
    /// waiting attempt, each with its probability.
    fn refills(&self, freed: State) -> impl Iterator<Item = (State, f64)> {
        let waiting = freed.waiting();
        let live = (freed.live_waiting > 0).then(|| {
            (
                State {
                    live_busy: freed.live_busy + 1,
                    live_waiting: freed.live_waiting - 1,
                    ..freed
                },
                freed.live_waiting as f64 / waiting as f64,
            )
        });
        let abandoned = (freed.abandoned_waiting > 0).then(|| {
            (
                State {
                    abandoned_busy: freed.abandoned_busy + 1,
                    abandoned_waiting: freed.abandoned_waiting - 1,
                    ..freed
                },
                freed.abandoned_waiting as f64 / waiting as f64,
            )
        });
        let idle = (waiting == 0).then_some((freed, 1.0));
        live.into_iter().chain(abandoned).chain(idle)
    }

    /// The rate at which retries are lost at the orbit cap in state `s`
    /// under `conditions`: what the cap changes.
    pub fn cut_rate(&self, s: State, conditions: Conditions) -> f64 {
        let m = &self.model;
        if s.orbit < m.orbit_cap {
            return 0.0;
        }
        let mut rate = 0.0;
        if m.retry_on_timeout {
            rate += m.timeout_rate * (s.live_busy + s.live_waiting) as f64;
        }
        if m.retry_on_failure {
            rate += m.service_rate * s.live_busy as f64 * conditions.fail_rate;
        }
        if m.retry_on_rejected && s.busy() >= m.workers && s.waiting() >= m.queue_limit {
            rate += m.arrival_rate * conditions.load_factor;
        }
        rate
    }
}

/// The orbit cap [`ServerChain::with_negligible_cap`] aims for: the
/// stationary chance of sitting at the cap at most this.
pub const NEGLIGIBLE_CAP: f64 = 1e-9;

/// The cap a search starts from: twice what the server holds, plus 20.
pub fn first_orbit_cap(model: &ChainModel) -> usize {
    2 * (model.workers + model.queue_limit) + 20
}

impl ServerChain {
    /// The chain of `model` with the smallest orbit cap of the sequence
    /// c₀, 1.5·c₀, 2.25·c₀, … ([`first_orbit_cap`]) at which the
    /// stationary chance of the cap is at most [`NEGLIGIBLE_CAP`], within
    /// `most_states`; or the largest that fits, and false, if none does.
    /// A model without retries has no orbit and is returned as it is. The
    /// chain's stationary distribution comes with it: the search solved for
    /// it, and [`crate::exact::server_figures::server_figures`] need not
    /// again.
    pub fn with_negligible_cap(
        model: ChainModel,
        most_states: usize,
    ) -> Result<(ServerChain, bool, Vec<f64>), ChainError> {
        if model.orbit_cap == 0 {
            let chain = ServerChain::new(model, most_states)?;
            let pi = chain.normal().stationary()?;
            return Ok((chain, true, pi));
        }
        let mut cap = first_orbit_cap(&model);
        let mut chain = ServerChain::new(
            ChainModel {
                orbit_cap: cap,
                ..model
            },
            most_states,
        )?;
        loop {
            let pi = chain.normal().stationary()?;
            let at_cap: f64 = chain
                .states()
                .iter()
                .zip(&pi)
                .filter(|(s, _)| s.orbit == cap)
                .map(|(_, p)| p)
                .sum();
            if at_cap <= NEGLIGIBLE_CAP {
                return Ok((chain, true, pi));
            }
            cap = cap * 3 / 2;
            match ServerChain::new(
                ChainModel {
                    orbit_cap: cap,
                    ..model
                },
                most_states,
            ) {
                Ok(larger) => chain = larger,
                Err(_) => return Ok((chain, false, pi)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn model() -> ChainModel {
        ChainModel {
            arrival_rate: 800.0,
            service_rate: 1000.0,
            workers: 2,
            queue_limit: 6,
            timeout_rate: 200.0,
            retry_rate: 50.0,
            persistence: 0.75,
            retry_on_failure: true,
            retry_on_rejected: true,
            retry_on_timeout: true,
            fail_rate: 0.01,
            orbit_cap: 5,
        }
    }

    #[test]
    fn every_state_has_its_own_index() {
        let chain = ServerChain::new(model(), 100_000).unwrap();
        for (i, &s) in chain.states().iter().enumerate() {
            assert_eq!(chain.index(s), i, "{s:?}");
        }
        // Per orbit count: 1 + 2 + 3 (at most 2 busy, none waiting) plus
        // 3·(W+1) for W = 1..=6 waiting.
        assert_eq!(chain.slice(), 6 + 3 * (2 + 3 + 4 + 5 + 6 + 7));
        assert_eq!(chain.size(), chain.slice() * 6);
    }

    #[test]
    fn every_transition_keeps_the_counts_within_bounds_and_conserves_attempts() {
        let chain = ServerChain::new(model(), 100_000).unwrap();
        let g = chain.normal();
        for i in 0..chain.size() {
            let s = chain.state(i);
            for &(j, rate) in g.rates(i) {
                let t = chain.state(j);
                assert!(rate > 0.0);
                assert!(t.busy() <= 2 && t.waiting() <= 6 && t.orbit <= 5);
                assert!(
                    t.waiting() == 0 || t.busy() == 2,
                    "{t:?} leaves a worker idle"
                );
                // One event changes the number at the server by one at most.
                let before = (s.busy() + s.waiting()) as i64;
                let after = (t.busy() + t.waiting()) as i64;
                assert!((before - after).abs() <= 1, "{s:?} → {t:?}");
                // Live attempts never come back from abandoned.
                assert!(
                    t.abandoned_busy + t.abandoned_waiting + 1
                        >= s.abandoned_busy + s.abandoned_waiting
                );
            }
        }
    }

    #[test]
    fn the_cap_is_the_only_place_retries_are_lost() {
        let chain = ServerChain::new(model(), 100_000).unwrap();
        let normal = Conditions {
            load_factor: 1.0,
            fail_rate: 0.01,
        };
        let lost: f64 = chain
            .states()
            .iter()
            .filter(|s| s.orbit < 5)
            .map(|&s| chain.cut_rate(s, normal))
            .sum();
        assert_eq!(lost, 0.0);
        let full = State {
            live_busy: 1,
            abandoned_busy: 1,
            live_waiting: 4,
            abandoned_waiting: 2,
            orbit: 5,
        };
        // Timeouts of 5 live, 1% of 1 completing live, and first tries
        // rejected at the full queue.
        let expected = 200.0 * 5.0 + 1000.0 * 0.01 + 800.0;
        assert!((chain.cut_rate(full, normal) - expected).abs() < 1e-9);
    }

    #[test]
    fn the_closed_form_slice_and_the_band_hold_every_transition() {
        for (workers, queue_limit, timeout_rate) in [(2, 6, 200.0), (1, 10, 100.0), (3, 4, 0.0)] {
            let m = ChainModel {
                workers,
                queue_limit,
                timeout_rate,
                ..model()
            };
            let chain = ServerChain::new(m, 1_000_000).unwrap();
            assert_eq!(
                slice_of(workers, queue_limit, timeout_rate > 0.0),
                chain.slice() as u128
            );
            let widest = if timeout_rate > 0.0 {
                (workers + 1) * (queue_limit + 1)
            } else {
                1
            };
            let band = chain.slice() + 2 * widest;
            let g = chain.normal();
            for i in 0..chain.size() {
                for &(j, _) in g.rates(i) {
                    assert!(i.abs_diff(j) <= band, "{i} → {j} past the band {band}");
                }
            }
        }
    }

    #[test]
    fn a_chain_whose_solves_pass_the_memory_bound_is_refused_before_it_is_built() {
        // One worker, queue 40, orbit cap 102 (the first cap tried): 177,469
        // states of a band about 1,900 wide, 7.3 GB asked for at once.
        let m = ChainModel {
            workers: 1,
            queue_limit: 40,
            orbit_cap: 102,
            ..model()
        };
        match ServerChain::new(m, 1_000_000).unwrap_err() {
            ChainError::TooMuchMemory { states, bytes, .. } => {
                assert_eq!(states, 1_723 * 103);
                assert!(bytes > 7_000_000_000 && bytes < 20_000_000_000, "{bytes}");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn a_count_past_u64_is_quoted_as_computed() {
        let m = ChainModel {
            workers: 1,
            queue_limit: 4_000_000_000,
            orbit_cap: 8_000_000_020,
            ..model()
        };
        let err = ServerChain::new(m, 1_000).unwrap_err().to_string();
        assert!(!err.contains("18,446,744,073,709,551,615"), "{err}");
        let slice = slice_of(1, 4_000_000_000, true);
        let states = slice * 8_000_000_021;
        assert!(states > u128::from(u64::MAX));
        assert!(err.contains(&group_wide(states)), "{err}");
    }

    #[test]
    fn too_many_states_are_refused_with_the_size() {
        let err = ServerChain::new(model(), 100).unwrap_err().to_string();
        assert!(
            err.contains("would have 522 states") && err.contains("100 allowed"),
            "{err}"
        );
    }
}
