//! The server queue's discipline: which waiting attempt a free worker takes,
//! and which it drops. FIFO (the default), LIFO and random order live here;
//! adaptive LIFO and CoDel have files of their own.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

use crate::base::draws::Draws;
use crate::control::Nanos;
use crate::control::adaptive_lifo::AdaptiveLifo;
use crate::control::codel::CoDel;
use crate::control::error::ControlError;
use crate::control::rule::{Rule, show_duration};

/// Listed by `herdsim controls`.
pub const LIFO_ABOUT: crate::control::ServerAbout = crate::control::ServerAbout {
    key: "discipline",
    syntax: "lifo",
    source: "queueing folklore; the stack of an overloaded RPC server",
    rule: "a free worker takes the newest waiting attempt",
};

/// Listed by `herdsim controls`.
pub const RANDOM_ABOUT: crate::control::ServerAbout = crate::control::ServerAbout {
    key: "discipline",
    syntax: "random",
    source: "queueing theory's random order of service; the order that makes counts a \
             sufficient state (herdsim exact)",
    rule: "a free worker takes a waiting attempt chosen uniformly at random",
};

/// What `discipline` accepts.
pub const DISCIPLINE_SYNTAX: &str = "fifo, lifo, random, adaptive-lifo:THRESHOLD (such as \
     adaptive-lifo:50ms) or codel:TARGET,interval:DURATION (such as codel:5ms,interval:100ms)";

/// An attempt waiting in the queue: when it arrived.
pub trait Waiting {
    /// When it joined the queue.
    fn arrived(&self) -> Nanos;
}

/// How the queue is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Discipline {
    /// Oldest first.
    #[default]
    Fifo,
    /// Newest first: under overload the newest, least likely timed out, are
    /// served, the oldest wait.
    Lifo,
    /// A waiting attempt chosen uniformly: with exponential service and
    /// timeouts the queue's counts are then a Markov chain's state.
    Random,
    /// Facebook's adaptive LIFO (Wangle): FIFO until the oldest waiting
    /// attempt is older than the threshold (ns), then LIFO.
    AdaptiveLifo(Nanos),
    /// CoDel (RFC 8289): target and interval, ns.
    CoDel {
        /// The sojourn CoDel tolerates (5 ms).
        target: Nanos,
        /// How long the sojourn may stay above the target (100 ms).
        interval: Nanos,
    },
}

impl FromStr for Discipline {
    type Err = ControlError;

    fn from_str(text: &str) -> Result<Self, ControlError> {
        match text.trim() {
            "fifo" => return Ok(Discipline::Fifo),
            "lifo" => return Ok(Discipline::Lifo),
            "random" => return Ok(Discipline::Random),
            _ => {}
        }
        let rule = Rule::read("discipline", text)?;
        match rule.name.as_str() {
            "adaptive-lifo" => {
                rule.expect(&[], &[], DISCIPLINE_SYNTAX)?;
                Ok(Discipline::AdaptiveLifo(rule.duration(
                    "adaptive-lifo",
                    0,
                    3_600_000_000,
                )?))
            }
            "codel" => {
                rule.expect(&["interval"], &[], DISCIPLINE_SYNTAX)?;
                Ok(Discipline::CoDel {
                    target: rule.duration("codel", 1, 3_600_000_000)?,
                    interval: rule.duration("interval", 1, 3_600_000_000)?,
                })
            }
            _ => Err(rule.unknown(&["fifo", "lifo", "random", "adaptive-lifo", "codel"])),
        }
    }
}

impl fmt::Display for Discipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Discipline::Fifo => write!(f, "fifo"),
            Discipline::Lifo => write!(f, "lifo"),
            Discipline::Random => write!(f, "random"),
            Discipline::AdaptiveLifo(t) => write!(f, "adaptive-lifo:{}", show_duration(*t)),
            Discipline::CoDel { target, interval } => write!(
                f,
                "codel:{},interval:{}",
                show_duration(*target),
                show_duration(*interval)
            ),
        }
    }
}

/// A queue's discipline as a run goes (CoDel keeps state).
#[derive(Debug, Clone)]
pub enum Server {
    /// Oldest first.
    Fifo,
    /// Newest first.
    Lifo,
    /// Uniformly at random.
    Random,
    /// See [`AdaptiveLifo`].
    AdaptiveLifo(AdaptiveLifo),
    /// See [`CoDel`].
    CoDel(CoDel),
}

impl Discipline {
    /// Its state at the start of a run.
    pub fn server(self) -> Server {
        match self {
            Discipline::Fifo => Server::Fifo,
            Discipline::Lifo => Server::Lifo,
            Discipline::Random => Server::Random,
            Discipline::AdaptiveLifo(threshold) => Server::AdaptiveLifo(AdaptiveLifo { threshold }),
            Discipline::CoDel { target, interval } => Server::CoDel(CoDel::new(target, interval)),
        }
    }
}

impl Server {
    /// The attempt a free worker takes from `queue` at `now`, if any;
    /// attempts the discipline drops on the way go to `dropped`. Random
    /// order draws from `draws` (the run's environment), the others draw
    /// nothing.
    #[inline(always)]
    pub fn take<T: Waiting>(
        &mut self,
        queue: &mut VecDeque<T>,
        now: Nanos,
        dropped: &mut Vec<T>,
        draws: &mut dyn Draws,
    ) -> Option<T> {
        match self {
            Server::Fifo => queue.pop_front(),
            Server::Lifo => queue.pop_back(),
            Server::Random => match queue.len() {
                0 => None,
                n => {
                    let pick = ((draws.unit_above_zero() * n as f64) as usize).min(n - 1);
                    queue.swap_remove_back(pick)
                }
            },
            Server::AdaptiveLifo(a) => a.take(queue, now),
            Server::CoDel(c) => c.take(queue, now, dropped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    impl Waiting for Nanos {
        fn arrived(&self) -> Nanos {
            *self
        }
    }

    #[test]
    fn disciplines_read_back_and_refuse_in_one_line() {
        for text in [
            "fifo",
            "lifo",
            "random",
            "adaptive-lifo:50ms",
            "codel:5ms,interval:100ms",
        ] {
            let d: Discipline = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
        }
        for bad in [
            "lilo",
            "codel:5ms",
            "adaptive-lifo:5parsecs",
            "codel:0ms,interval:1s",
        ] {
            let err = bad.parse::<Discipline>().unwrap_err().to_string();
            assert!(
                err.starts_with("invalid discipline") && !err.contains('\n'),
                "{err}"
            );
        }
    }

    #[test]
    fn fifo_takes_the_oldest_and_lifo_the_newest() {
        let mut queue: VecDeque<Nanos> = (1..=3).map(Nanos::from_ticks).collect();
        let mut dropped = Vec::new();
        let mut none = ScriptedDraws::new(&[]);
        assert_eq!(
            Server::Fifo.take(&mut queue, Nanos::from_ticks(10), &mut dropped, &mut none),
            Some(Nanos::from_ticks(1))
        );
        assert_eq!(
            Server::Lifo.take(&mut queue, Nanos::from_ticks(10), &mut dropped, &mut none),
            Some(Nanos::from_ticks(3))
        );
        assert!(dropped.is_empty());
        assert_eq!(none.taken(), 0, "only random order draws");
    }

    #[test]
    fn random_order_takes_the_attempt_its_draw_points_at() {
        let mut dropped = Vec::new();
        // Fractions of the range: 0.1 of 4 is the first, 0.6 the third.
        for (fraction, expected) in [(0.1, 1), (0.6, 3), (0.99, 4)] {
            let mut queue: VecDeque<Nanos> = (1..=4).map(Nanos::from_ticks).collect();
            let expected = Nanos::from_ticks(expected);
            let mut draws = ScriptedDraws::new(&[fraction]);
            let taken = Server::Random.take(&mut queue, Nanos::ZERO, &mut dropped, &mut draws);
            assert_eq!(taken, Some(expected), "draw {fraction}");
            assert_eq!(queue.len(), 3);
            assert!(!queue.contains(&expected));
        }
        let mut empty: VecDeque<Nanos> = VecDeque::new();
        let mut none = ScriptedDraws::new(&[]);
        assert_eq!(
            Server::Random.take(&mut empty, Nanos::ZERO, &mut dropped, &mut none),
            None
        );
    }
}
