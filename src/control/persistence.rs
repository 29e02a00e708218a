//! Persistence: each retry goes with probability P, else its request gives
//! up. The retrial-queue literature's persistent (Bernoulli) customer, and
//! metafor's orbit, where a job leaving the orbit retries with probability
//! R/(R+1): a geometric number of attempts (mean 1/(1 − P)) instead of a
//! fixed cap, which keeps a Markov chain's state to counts (`herdsim
//! exact`; a cap needs every attempt's number in the state).

use std::fmt;

use crate::base::draws::Draws;
use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Nanos, RetryControl};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "persistence",
    family: Family::Budget,
    syntax: "persistence:P, 0 < P < 1 (such as persistence:0.75: 4 attempts on average)",
    source: "retrial queues' persistent customers; metafor's orbit (R/(R+1))",
    rule: "a retry, when its backoff ends, is sent with probability P; else its request gives \
           up (a geometric number of attempts, mean 1/(1 − P))",
    scope: "each retry on its own (no state)",
    delays_attempts: false,
    tuning: None,
};

/// The probability a retry goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PersistenceSpec {
    /// P, in (0, 1).
    pub p: f64,
}

impl PersistenceSpec {
    /// Reads `persistence:P`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&[], &[], ABOUT.syntax)?;
        // 1 − 1e-9 at most: P = 1 is no control at all (leave budget at
        // none), and the chain needs a way out of the orbit.
        Ok(PersistenceSpec {
            p: rule.number("persistence", 1e-9, 1.0 - 1e-9)?,
        })
    }
}

impl fmt::Display for PersistenceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "persistence:{}", self.p)
    }
}

/// No state: every retry draws afresh.
#[derive(Debug, Clone)]
pub struct Persistence {
    p: f64,
}

impl Persistence {
    /// As specified.
    pub fn new(spec: &PersistenceSpec) -> Self {
        Persistence { p: spec.p }
    }
}

impl RetryControl for Persistence {
    fn admit(&mut self, _now: Nanos, retry: bool, draws: &mut dyn Draws) -> bool {
        !retry || draws.unit_above_zero() <= self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::control::{ControlSpec, Family};

    #[test]
    fn a_retry_goes_when_its_draw_is_within_p_and_a_first_try_always() {
        let spec = PersistenceSpec { p: 0.75 };
        let mut control = Persistence::new(&spec);
        let mut draws = ScriptedDraws::new(&[0.5, 0.9]);
        assert!(control.admit(Nanos::ZERO, true, &mut draws));
        assert!(!control.admit(Nanos::ZERO, true, &mut draws));
        assert!(control.admit(Nanos::ZERO, false, &mut draws));
        assert_eq!(draws.taken(), 2, "a first try draws nothing");
    }

    #[test]
    fn it_reads_back_and_refuses_certainty() {
        let read = ControlSpec::parse(Family::Budget, "persistence:0.75").unwrap();
        assert_eq!(read.unwrap().to_string(), "persistence:0.75");
        for bad in ["persistence:1", "persistence:0", "persistence:1.5"] {
            let err = ControlSpec::parse(Family::Budget, bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains("persistence") && !err.contains('\n'), "{err}");
        }
    }
}
