//! The server queue's discipline: which waiting attempt a free worker takes,
//! and which it drops. FIFO (the default) and LIFO live here; adaptive LIFO
//! and CoDel have files of their own.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

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

/// What `discipline` accepts.
pub const DISCIPLINE_SYNTAX: &str = "fifo, lifo, adaptive-lifo:THRESHOLD (such as \
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
            _ => Err(rule.unknown(&["fifo", "lifo", "adaptive-lifo", "codel"])),
        }
    }
}

impl fmt::Display for Discipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Discipline::Fifo => write!(f, "fifo"),
            Discipline::Lifo => write!(f, "lifo"),
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
            Discipline::AdaptiveLifo(threshold) => Server::AdaptiveLifo(AdaptiveLifo { threshold }),
            Discipline::CoDel { target, interval } => Server::CoDel(CoDel::new(target, interval)),
        }
    }
}

impl Server {
    /// The attempt a free worker takes from `queue` at `now`, if any;
    /// attempts the discipline drops on the way go to `dropped`.
    #[inline(always)]
    pub fn take<T: Waiting>(
        &mut self,
        queue: &mut VecDeque<T>,
        now: Nanos,
        dropped: &mut Vec<T>,
    ) -> Option<T> {
        match self {
            Server::Fifo => queue.pop_front(),
            Server::Lifo => queue.pop_back(),
            Server::AdaptiveLifo(a) => a.take(queue, now),
            Server::CoDel(c) => c.take(queue, now, dropped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut queue: VecDeque<Nanos> = (1..=3).collect();
        let mut dropped = Vec::new();
        assert_eq!(Server::Fifo.take(&mut queue, 10, &mut dropped), Some(1));
        assert_eq!(Server::Lifo.take(&mut queue, 10, &mut dropped), Some(3));
        assert!(dropped.is_empty());
    }
}
