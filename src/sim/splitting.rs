//! Adaptive multilevel splitting (Bréhier, Guyader, Lelièvre, Rousset,
//! "Unbiasedness of some generalized adaptive multilevel splitting
//! algorithms", Annals of Applied Probability 26(6), 2016): the chance that
//! a path's score reaches a target, estimated without bias however small.
//!
//! N paths run to their end. Then, again and again, the level is the lowest
//! of their highest scores; every path whose highest score is at most the
//! level is killed, and each is replaced by a copy of a survivor (chosen at
//! random) taken at the first moment its score passed the level and
//! continued with fresh draws. With K_q of N killed at iteration q, and the
//! levels stopping at the target, (Π (1 − K_q / N)) × (the share of paths at
//! the target) has the expectation of the chance itself, for any score: ties
//! (an integer score has many) are why every path at the level is killed,
//! not just one (the paper's generalisation). If every path is at the level
//! the estimate is 0, also unbiased.
//!
//! Paths are kept as where they started and their seeds, not as every
//! state they passed: a survivor is copied by running it again, which its
//! seeds make exact, from its start to the level. Memory is one saved state
//! a path, and paths move between threads but are never shared. Every draw is keyed by the batch's key, the iteration and the
//! slot, and the copies of one iteration run in parallel into their own
//! slots, so the result is the same at any thread count.

use rand::RngExt;
use rayon::prelude::*;

use crate::base::seeding::{job_rng, splitmix64};

/// A path of a Markov process, paused between its steps. Its whole state is
/// the value: a clone continued with fresh draws is a fresh sample of the
/// future given the past, which is what makes the estimate unbiased.
pub trait SplitPath: Clone + Send {
    /// Continues with draws keyed by `key` from here on.
    fn reseed(&mut self, key: u64);

    /// Runs until the score first exceeds `level`, returning that score
    /// (the path ends at once if it is at the target), or until the path
    /// ends (`None`; every later call returns `None` too). The score before
    /// the path's first scored moment counts as below every level.
    fn run_past(&mut self, level: i64) -> Option<i64>;

    /// Events handled so far (the cost).
    fn events(&self) -> u64;

    /// True if the path ended at a bound of the run (its horizon, an event
    /// limit) instead of where its end rule says.
    fn cut(&self) -> bool;
}

/// Where a path starts: path `index` of the batch, made anew; or a state
/// saved when a copy was taken, already keyed for its own draws.
enum Origin<S> {
    Start(u64),
    Copy { state: Box<S>, score: i64 },
}

impl<S: Clone> Origin<S> {
    /// The origin again: a copy's saved state is cloned (here, on one
    /// thread, so paths need not be shared between threads).
    fn again(&self) -> Origin<S> {
        match self {
            Origin::Start(i) => Origin::Start(*i),
            Origin::Copy { state, score } => Origin::Copy {
                state: state.clone(),
                score: *score,
            },
        }
    }
}

/// One path of the ensemble: its origin and the highest score it reached.
struct Particle<S> {
    origin: Origin<S>,
    max: i64,
}

/// A path run to its end: the particle it leaves, the events it took and
/// whether a bound cut it.
struct Ran<S> {
    particle: Particle<S>,
    events: u64,
    cut: bool,
}

/// One batch's estimate and what it cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitBatch {
    /// The estimate of the chance of reaching the target.
    pub estimate: f64,
    /// Iterations (levels) taken.
    pub iterations: u32,
    /// Paths run: the N first ones and every copy.
    pub paths: u64,
    /// Events handled, replays of survivors included.
    pub events: u64,
    /// Events of the N first paths alone (what plain Monte Carlo pays a
    /// path).
    pub first_events: u64,
    /// Of the N first paths, those that reached the target.
    pub first_reached: u32,
    /// Paths that ended at a bound of the run (counted as not reaching the
    /// target).
    pub cut: u64,
    /// True if every path ended at one level below the target.
    pub extinct: bool,
}

/// Splits `particles` paths, path `i` made by `start(i)`, towards scores of
/// `target` or more, keying every copy's draws by `key`.
pub fn split<S: SplitPath>(
    start: &(impl Fn(u64) -> S + Sync),
    particles: usize,
    target: i64,
    key: u64,
) -> SplitBatch {
    let n = particles.max(1);
    let mut batch = SplitBatch {
        estimate: 0.0,
        iterations: 0,
        paths: n as u64,
        events: 0,
        first_events: 0,
        first_reached: 0,
        cut: 0,
        extinct: false,
    };
    let first: Vec<Ran<S>> = (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let mut path = start(i);
            let max = run_to_end(&mut path, -1);
            let particle = Particle {
                origin: Origin::Start(i),
                max,
            };
            Ran {
                particle,
                events: path.events(),
                cut: path.cut(),
            }
        })
        .collect();
    let mut ensemble = Vec::with_capacity(n);
    for Ran {
        particle,
        events,
        cut,
    } in first
    {
        batch.events += events;
        batch.first_events += events;
        batch.cut += u64::from(cut);
        batch.first_reached += u32::from(particle.max >= target);
        ensemble.push(particle);
    }
    let mut weight = 1.0;
    let mut choices = job_rng(splitmix64(key ^ 0x5A17_C0DE_B4A7_C4E5));
    loop {
        let level = ensemble.iter().map(|p| p.max).min().unwrap_or(target);
        if level >= target {
            break;
        }
        let (killed, survivors): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| ensemble[i].max <= level);
        if survivors.is_empty() {
            batch.extinct = true;
            weight = 0.0;
            break;
        }
        weight *= survivors.len() as f64 / n as f64;
        let iteration = u64::from(batch.iterations);
        // Drawn in slot order, before any copy runs: the choices do not
        // depend on the threads.
        let chosen: Vec<(usize, Origin<S>)> = killed
            .iter()
            .map(|&slot| {
                let from = survivors[choices.random_range(0..survivors.len())];
                (slot, ensemble[from].origin.again())
            })
            .collect();
        let copies: Vec<(usize, Ran<S>)> = chosen
            .into_par_iter()
            .map(|(slot, origin)| {
                let copy_key = branch_key(key, iteration, slot as u64);
                (slot, copy_past(start, origin, level, copy_key))
            })
            .collect();
        for (
            slot,
            Ran {
                particle,
                events,
                cut,
            },
        ) in copies
        {
            batch.events += events;
            batch.cut += u64::from(cut);
            ensemble[slot] = particle;
        }
        batch.paths += killed.len() as u64;
        batch.iterations += 1;
    }
    let reached = ensemble.iter().filter(|p| p.max >= target).count();
    batch.estimate = weight * reached as f64 / n as f64;
    batch
}

/// The key of the copy into `slot` at `iteration` of the batch keyed `key`.
fn branch_key(key: u64, iteration: u64, slot: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(key ^ 0x0B5E_55ED_C10E_D0A1) ^ iteration) ^ slot)
}

/// Runs `path` to its end from a highest score of `max`; the highest score
/// it reached.
fn run_to_end<S: SplitPath>(path: &mut S, mut max: i64) -> i64 {
    while let Some(score) = path.run_past(max) {
        max = score;
    }
    max
}

/// A copy of the path from `origin` taken where its score first passed
/// `level`, keyed by `key` from there and run to its end; with the events it
/// took (the replay to the level included) and whether it was cut.
fn copy_past<S: SplitPath>(
    start: &(impl Fn(u64) -> S + Sync),
    origin: Origin<S>,
    level: i64,
    key: u64,
) -> Ran<S> {
    let (mut path, mut score) = match origin {
        Origin::Start(i) => (start(i), -1),
        Origin::Copy { state, score } => (*state, score),
    };
    let events_before = path.events();
    while score <= level {
        score = path
            .run_past(score)
            .expect("a survivor's replay passes the level it passed before");
    }
    path.reseed(key);
    let saved = Box::new(path.clone());
    let max = run_to_end(&mut path, score);
    let particle = Particle {
        origin: Origin::Copy {
            state: saved,
            score,
        },
        max,
    };
    Ran {
        particle,
        events: path.events() - events_before,
        cut: path.cut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_pcg::Pcg64Mcg;

    /// A walk on 0..=top from `from`, up with chance `up`: it ends at 0 or
    /// at `top`, its score its position. The chance of reaching `top` is
    /// the gambler's ruin's.
    #[derive(Clone)]
    struct Walk {
        at: i64,
        top: i64,
        up: f64,
        draws: Pcg64Mcg,
        steps: u64,
        ended: bool,
    }

    impl SplitPath for Walk {
        fn reseed(&mut self, key: u64) {
            self.draws = job_rng(key);
        }

        fn run_past(&mut self, level: i64) -> Option<i64> {
            if self.steps == 0 && self.at > level {
                self.steps = 1;
                return Some(self.at);
            }
            while !self.ended {
                self.at += if self.draws.random::<f64>() < self.up {
                    1
                } else {
                    -1
                };
                self.steps += 1;
                self.ended = self.at <= 0 || self.at >= self.top;
                if self.at > level {
                    return Some(self.at);
                }
            }
            None
        }

        fn events(&self) -> u64 {
            self.steps
        }

        fn cut(&self) -> bool {
            false
        }
    }

    fn ruin(from: i64, top: i64, up: f64) -> f64 {
        let r = (1.0 - up) / up;
        (1.0 - r.powi(from as i32)) / (1.0 - r.powi(top as i32))
    }

    fn walk(from: i64, top: i64, up: f64) -> impl Fn(u64) -> Walk + Sync {
        move |i| Walk {
            at: from,
            top,
            up,
            draws: job_rng(splitmix64(i ^ 77)),
            steps: 0,
            ended: from <= 0 || from >= top,
        }
    }

    #[test]
    fn the_mean_of_batches_is_the_gamblers_ruin_far_below_one_in_a_million() {
        // From 1, up with chance 0.4, to 30: 2.6e-6 (half over (3/2)^30).
        let (from, top, up) = (1, 30, 0.4);
        let exact = ruin(from, top, up);
        assert!(exact < 1e-5 && exact > 1e-6, "{exact}");
        let batches: Vec<f64> = (0..40)
            .map(|b| split(&walk(from, top, up), 100, top, b).estimate)
            .collect();
        let m = batches.len() as f64;
        let mean = batches.iter().sum::<f64>() / m;
        let sd = (batches.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
        let z = (mean - exact) / (sd / m.sqrt());
        // Unbiased, so the mean of 40 batches lies within 4 standard
        // errors of the exact chance but for a 1-in-15,000 draw (the
        // batches' mean is near normal at 40 batches of 100 paths).
        assert!(z.abs() < 4.0, "mean {mean:e}, exact {exact:e}, z {z}");
        assert!(sd > 0.0);
    }

    #[test]
    fn an_ensemble_that_never_passes_its_first_level_estimates_zero() {
        // From 1, up with chance 0: every path goes down at once.
        let batch = split(&walk(1, 5, 0.0), 10, 5, 3);
        assert!(batch.extinct);
        assert_eq!(batch.estimate, 0.0);
        assert_eq!(batch.first_reached, 0);
    }

    #[test]
    fn paths_at_the_target_from_the_start_estimate_one() {
        let batch = split(&walk(5, 5, 0.5), 10, 5, 3);
        assert_eq!(batch.estimate, 1.0);
        assert_eq!(batch.iterations, 0);
        assert_eq!(batch.paths, 10);
    }

    #[test]
    fn a_batch_is_the_same_at_any_thread_count() {
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| split(&walk(2, 20, 0.45), 64, 20, 9))
        };
        let one = run(1);
        assert_eq!(one, run(3));
        assert!(one.iterations > 0 && one.estimate > 0.0);
    }
}
