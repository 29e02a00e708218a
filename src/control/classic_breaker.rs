//! The classic circuit breaker, resilience4j-like, as the Yandex study's code
//! runs it (2024, "Good retry, bad retry", `circuit_breaker.py`).
//!
//! Every attempt's outcome goes into a sliding window (entries older than
//! `window`, 200 ms, dropped when one is added). The state is evaluated when
//! a call asks to start, before its first try; **retries of an admitted call
//! bypass the breaker**:
//! - CLOSED: if the window holds at least `calls` (100) outcomes and
//!   failed / total ≥ `threshold`, it opens and refuses this call.
//! - OPEN: it refuses calls for `open` (100 ms) after opening, then goes
//!   HALF_OPEN and admits.
//! - HALF_OPEN: it admits calls until `calls` outcomes are recorded (more
//!   may be admitted while they are in flight); then it reopens if
//!   failed / total ≥ `threshold`, else closes and admits.
//!
//! The window is cleared at every transition. A refused call fails at once
//! and sends nothing. `jitter` J (not in the study; failsafe-go's users
//! asked for it so a fleet's breakers do not probe together) stretches each
//! open period by a factor drawn uniformly from [1 − J, 1 + J].

use std::fmt;

use crate::base::draws::Draws;
use crate::control::outcome_window::{Evict, OutcomeWindow};
use crate::control::rule::{Rule, show_duration};
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "classic",
    family: Family::Breaker,
    syntax: "classic:THRESHOLD,window:D,calls:N,open:D[,jitter:J] \
             (Yandex: classic:0.1,window:200ms,calls:100,open:100ms)",
    source: "Yandex 2024, \"Good retry, bad retry\" (circuit breaker, resilience4j-like)",
    rule: "CLOSED → OPEN when the window holds ≥ N outcomes, failed share ≥ THRESHOLD; OPEN \
           refuses calls for `open`; HALF_OPEN admits until N outcomes, then reopens or closes; \
           retries bypass it",
    scope: "one for all clients in the study (the default); --fleet for local ones",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "classic:0.1,window:200ms,calls:100,open:100ms",
        knobs: &[
            Knob {
                field: "classic",
                what: "the failure ratio that opens it",
                values: &["0.05", "0.1", "0.2", "0.5", "0.9"],
            },
            Knob {
                field: "open",
                what: "how long it stays open",
                values: &["50ms", "100ms", "200ms", "500ms", "1s", "2s"],
            },
        ],
    }),
};

/// The breaker's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassicBreakerSpec {
    /// The failure share that opens it.
    pub threshold: f64,
    /// The outcome window, ns.
    pub window: Nanos,
    /// Outcomes needed to judge (and to leave half-open).
    pub calls: u64,
    /// How long it stays open, ns.
    pub open: Nanos,
    /// The open period's relative jitter.
    pub jitter: f64,
}

impl ClassicBreakerSpec {
    /// Reads `classic:T,window:D,calls:N,open:D[,jitter:J]`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["window", "calls", "open"], &["jitter"], ABOUT.syntax)?;
        Ok(ClassicBreakerSpec {
            threshold: rule.number("classic", 0.0, 1.0)?,
            window: rule.duration("window", 1, 3_600_000_000)?,
            calls: rule.count("calls", 1, 1 << 30)?,
            open: rule.duration("open", 1, 3_600_000_000)?,
            jitter: rule.number_or("jitter", 0.0, 1.0, 0.0)?,
        })
    }
}

impl fmt::Display for ClassicBreakerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "classic:{},window:{},calls:{},open:{},jitter:{}",
            self.threshold,
            show_duration(self.window),
            self.calls,
            show_duration(self.open),
            self.jitter
        )
    }
}

/// Where the breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go; outcomes are judged.
    Closed,
    /// Calls are refused until `until`.
    Open {
        /// When it goes half-open.
        until: Nanos,
    },
    /// Probing calls go until enough outcomes are in.
    HalfOpen,
}

/// One scope's breaker.
#[derive(Debug, Clone)]
pub struct ClassicBreaker {
    spec: ClassicBreakerSpec,
    state: BreakerState,
    outcomes: OutcomeWindow,
}

impl ClassicBreaker {
    /// Closed, with an empty window.
    pub fn new(spec: &ClassicBreakerSpec) -> Self {
        ClassicBreaker {
            spec: *spec,
            state: BreakerState::Closed,
            outcomes: OutcomeWindow::new(spec.window, Evict::PastWindow),
        }
    }

    /// Where it stands.
    pub fn state(&self) -> BreakerState {
        self.state
    }

    fn threshold_reached(&self) -> bool {
        let n = self.outcomes.len();
        n > 0 && n >= self.spec.calls && self.outcomes.failure_share() >= self.spec.threshold
    }

    fn enter(&mut self, state: BreakerState) {
        self.state = state;
        self.outcomes.clear();
    }

    /// Opens at `now` for the open period, stretched by a jitter drawn from
    /// `draws` if the breaker has one.
    fn open(&mut self, now: Nanos, draws: &mut dyn Draws) {
        let factor = if self.spec.jitter > 0.0 {
            1.0 + self.spec.jitter * (2.0 * draws.unit_above_zero() - 1.0)
        } else {
            1.0
        };
        let period = Nanos::from_ticks((self.spec.open.ticks() as f64 * factor).round() as u64);
        self.enter(BreakerState::Open {
            until: now + period,
        });
    }
}

impl RetryControl for ClassicBreaker {
    fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        self.outcomes.record(now, outcome.failed());
    }

    fn admit(&mut self, now: Nanos, retry: bool, draws: &mut dyn Draws) -> bool {
        if retry {
            return true;
        }
        match self.state {
            BreakerState::Closed => {
                if self.threshold_reached() {
                    self.open(now, draws);
                    false
                } else {
                    true
                }
            }
            BreakerState::Open { until } => {
                if now < until {
                    false
                } else {
                    self.enter(BreakerState::HalfOpen);
                    true
                }
            }
            BreakerState::HalfOpen => {
                if self.outcomes.len() < self.spec.calls {
                    true
                } else if self.threshold_reached() {
                    self.open(now, draws);
                    false
                } else {
                    self.enter(BreakerState::Closed);
                    true
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    const MS: Nanos = Nanos::from_ms(1);

    fn breaker(text: &str) -> ClassicBreaker {
        let rule = Rule::read("breaker", text).unwrap();
        ClassicBreaker::new(&ClassicBreakerSpec::parse(&rule).unwrap())
    }

    /// `n` outcomes, `failed` of them failures.
    fn outcomes(n: usize, failed: usize) -> Vec<Step> {
        (0..n)
            .map(|i| {
                let o = if i < failed {
                    Outcome::Failure
                } else {
                    Outcome::Success
                };
                Step::End(o, None)
            })
            .collect()
    }

    #[test]
    fn closed_open_half_open_closed_and_open_again() {
        let mut b = breaker("classic:0.5,window:200ms,calls:4,open:100ms");
        // Closed: three failures are too few to judge.
        let mut steps = outcomes(3, 3);
        steps.push(Step::Admit(false, 0.5, true));
        // A fourth: 4 outcomes, all failed: it opens and refuses this call.
        steps.extend(outcomes(1, 1));
        steps.extend([Step::At(10 * MS), Step::Admit(false, 0.5, false)]);
        walk(&mut b, &steps);
        assert_eq!(b.state(), BreakerState::Open { until: 110 * MS });
        // Retries of calls admitted earlier bypass it.
        let mut steps = vec![Step::At(10 * MS), Step::Admit(true, 0.5, true)];
        steps.extend([Step::At(109 * MS), Step::Admit(false, 0.5, false)]);
        // After 100 ms: half-open, admits probes until 4 outcomes are in.
        steps.extend([Step::At(110 * MS), Step::Admit(false, 0.5, true)]);
        walk(&mut b, &steps);
        assert_eq!(b.state(), BreakerState::HalfOpen);
        let mut steps = vec![Step::At(110 * MS)];
        steps.extend(outcomes(3, 1));
        steps.push(Step::Admit(false, 0.5, true));
        // One failure in four: under 50%, it closes and admits.
        steps.extend(outcomes(1, 0));
        steps.push(Step::Admit(false, 0.5, true));
        walk(&mut b, &steps);
        assert_eq!(b.state(), BreakerState::Closed);
        // The window was cleared: two failures of four open it again.
        let mut steps = vec![Step::At(150 * MS)];
        steps.extend(outcomes(4, 2));
        steps.push(Step::Admit(false, 0.5, false));
        // Half-open again, and its probes fail: it reopens.
        steps.extend([Step::At(250 * MS), Step::Admit(false, 0.5, true)]);
        steps.extend(outcomes(4, 3));
        steps.push(Step::Admit(false, 0.5, false));
        walk(&mut b, &steps);
        assert_eq!(b.state(), BreakerState::Open { until: 350 * MS });
    }

    #[test]
    fn old_outcomes_leave_the_window_and_jitter_stretches_the_open_period() {
        let mut b = breaker("classic:0.5,window:200ms,calls:4,open:100ms,jitter:0.2");
        let mut steps = outcomes(3, 3);
        // 201 ms later the next outcome drops the three (older than 200 ms).
        steps.push(Step::At(201 * MS));
        steps.extend(outcomes(1, 1));
        steps.push(Step::Admit(false, 1.0, true));
        steps.extend(outcomes(3, 3));
        // u = 1: the longest open period, 120 ms.
        steps.push(Step::Admit(false, 1.0, false));
        walk(&mut b, &steps);
        assert_eq!(b.state(), BreakerState::Open { until: 321 * MS });
    }

    proptest! {
        /// The failed count always matches the window; an open breaker
        /// refuses every first try until its period ends.
        #[test]
        fn the_window_and_the_open_period_hold(steps in proptest::collection::vec((0u8..3, 0u64..30), 0..300)) {
            let mut b = breaker("classic:0.3,window:200ms,calls:5,open:100ms");
            let mut now = Nanos::ZERO;
            for (s, gap) in steps {
                now += gap * MS;
                match s {
                    0 => b.attempt_ended(now, Outcome::Failure, None),
                    1 => b.attempt_ended(now, Outcome::Success, None),
                    _ => {
                        let before = b.state();
                        let admitted = b.admit(now, false, &mut ScriptedDraws::new(&[]));
                        if let BreakerState::Open { until } = before && now < until {
                            prop_assert!(!admitted);
                        }
                    }
                }
                prop_assert_eq!(b.outcomes.failed(), b.outcomes.entries().filter(|o| o.1).count() as u64);
            }
        }
    }
}
