//! Client-side adaptive throttling (Google SRE book, "Handling Overload").
//!
//! Each client counts, over the last `window` (2 minutes), the **requests**
//! its application asked to send (counted before the throttle, so refused
//! ones count) and the **accepts**, the requests the backend accepted. It
//! refuses a request locally with probability
//! max(0, (requests − K × accepts) / (requests + 1)), K = 2. Applied to
//! every attempt, first tries and retries (the book counts requests at the
//! application layer); an attempt is accepted when it succeeds (a failure,
//! a rejection at a full queue or a timeout is not an accept). The book does
//! not say how the window slides: herdsim counts in 120 slices of window /
//! 120 (1 s at 2 minutes).

use std::fmt;

use crate::base::draws::Draws;
use crate::control::rule::{Rule, show_duration};
use crate::control::sliced_window::SlicedWindow;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "sre",
    family: Family::Throttle,
    syntax: "sre:K,window:DURATION (the book: sre:2,window:2m)",
    source: "Google SRE book, \"Handling Overload\" (client-side throttling)",
    rule: "refuse an attempt with probability max(0, (requests − K × accepts) / (requests + 1)) \
           over the window; requests counted before refusal",
    scope: "per client (--fleet 1 reproduces it)",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "sre:2,window:2m",
        knobs: &[
            Knob {
                field: "sre",
                what: "K (requests per accept)",
                values: &["1.1", "1.5", "2", "3", "5"],
            },
            Knob {
                field: "window",
                what: "its window",
                values: &["10s", "30s", "1m", "2m"],
            },
        ],
    }),
};

/// Slices of the window.
const SLICES: usize = 120;

/// The throttle's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SreThrottleSpec {
    /// K: accepts worth this many requests.
    pub k: f64,
    /// The counting window, ns.
    pub window: Nanos,
}

impl SreThrottleSpec {
    /// Reads `sre:K,window:D`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["window"], &[], ABOUT.syntax)?;
        Ok(SreThrottleSpec {
            k: rule.number("sre", 1.0, 1_000.0)?,
            window: rule.duration("window", SLICES as u64, 86_400_000_000)?,
        })
    }
}

impl fmt::Display for SreThrottleSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sre:{},window:{}", self.k, show_duration(self.window))
    }
}

/// One scope's counts.
#[derive(Debug, Clone)]
pub struct SreThrottle {
    spec: SreThrottleSpec,
    /// (requests, accepts) by slices of window/120.
    counts: SlicedWindow<(u64, u64)>,
}

impl SreThrottle {
    /// Nothing counted.
    pub fn new(spec: &SreThrottleSpec) -> Self {
        SreThrottle {
            spec: *spec,
            counts: SlicedWindow::new(SLICES, spec.window / SLICES as u64),
        }
    }

    /// Requests and accepts in the window ending at `now`.
    pub fn counts(&self, now: Nanos) -> (u64, u64) {
        self.counts
            .live(now)
            .fold((0, 0), |(r, a), &(requests, accepts)| {
                (r + requests, a + accepts)
            })
    }

    /// The probability of refusing a request at `now`.
    pub fn refusal(&self, now: Nanos) -> f64 {
        let (requests, accepts) = self.counts(now);
        ((requests as f64 - self.spec.k * accepts as f64) / (requests as f64 + 1.0)).max(0.0)
    }
}

impl RetryControl for SreThrottle {
    fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        if outcome == Outcome::Success {
            self.counts.at(now).1 += 1;
        }
    }

    fn admit(&mut self, now: Nanos, _retry: bool, draws: &mut dyn Draws) -> bool {
        let p = self.refusal(now);
        self.counts.at(now).0 += 1;
        draws.unit_above_zero() > p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    const S: Nanos = Nanos::from_s(1);

    fn throttle() -> SreThrottle {
        let rule = Rule::read("throttle", "sre:2,window:2m").unwrap();
        SreThrottle::new(&SreThrottleSpec::parse(&rule).unwrap())
    }

    #[test]
    fn refusals_follow_the_books_formula_and_forget_after_the_window() {
        let mut t = throttle();
        // Nothing counted: p = 0, everything goes.
        walk(&mut t, &[Step::Admit(false, 1e-9, true)]);
        // Ten requests, all failing: p = (11 − 0) / 12 after the eleventh.
        for _ in 0..10 {
            walk(
                &mut t,
                &[
                    Step::Admit(true, 1.0, true),
                    Step::End(Outcome::Failure, None),
                ],
            );
        }
        assert!((t.refusal(Nanos::ZERO) - 11.0 / 12.0).abs() < 1e-12);
        walk(
            &mut t,
            &[
                Step::Admit(false, 0.9, false),
                Step::Admit(false, 0.95, true),
            ],
        );
        // Accepts bring it down: 13 requests, 6 accepts → (13 − 12)/14.
        for _ in 0..6 {
            walk(&mut t, &[Step::End(Outcome::Success, None)]);
        }
        assert!((t.refusal(Nanos::ZERO) - 1.0 / 14.0).abs() < 1e-12);
        // Two minutes on, the window has forgotten all of it.
        walk(&mut t, &[Step::At(120 * S)]);
        assert_eq!(t.counts(120 * S), (0, 0));
        assert_eq!(t.counts(119 * S), (13, 6));
    }

    proptest! {
        /// The refusal probability stays in [0, 1), and is 0 while accepts
        /// keep up with half the requests.
        #[test]
        fn the_refusal_is_a_probability(steps in proptest::collection::vec((any::<bool>(), 0u64..5_000), 0..300)) {
            let mut t = throttle();
            let mut now = 0;
            for (accept, gap_ms) in steps {
                now += gap_ms * 1_000_000;
                t.admit(Nanos::from_ticks(now), false, &mut ScriptedDraws::new(&[0.5]));
                if accept {
                    t.attempt_ended(Nanos::from_ticks(now), Outcome::Success, None);
                }
                let p = t.refusal(Nanos::from_ticks(now));
                prop_assert!((0.0..1.0).contains(&p));
                let (requests, accepts) = t.counts(Nanos::from_ticks(now));
                if 2 * accepts >= requests {
                    prop_assert_eq!(p, 0.0);
                }
            }
        }
    }
}
