//! The Yandex study's retry circuit breaker (2024, "Good retry, bad retry";
//! its code's `RetryCircuitBreakerStrategy`).
//!
//! A sliding window of the outcomes of the last `window` (200 ms) of
//! attempts, first tries and retries alike. A retry may follow only if the
//! window is not empty and failed / total < `ratio` (10%); then the per-call
//! cap (`--max-attempts`; the study: 2 retries). The window is pruned only
//! when an outcome is added (entries `window` old or more go), as in the
//! original, so a quiet spell leaves old outcomes in it.

use std::fmt;

use crate::control::outcome_window::{Evict, OutcomeWindow};
use crate::control::rule::{Rule, show_duration};
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "windowed",
    family: Family::Breaker,
    syntax: "windowed:RATIO,window:DURATION (Yandex: windowed:0.1,window:200ms)",
    source: "Yandex 2024, \"Good retry, bad retry\" (retry circuit breaker, 10%)",
    rule: "outcomes of the attempts of the last window; retry iff the window is not empty \
           and failed / total < RATIO",
    scope: "global (one for all clients) or local (per client): the study compares both",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "windowed:0.1,window:200ms",
        knobs: &[
            Knob {
                field: "windowed",
                what: "the retry ratio that opens it",
                values: &["0.01", "0.05", "0.1", "0.2", "0.5"],
            },
            Knob {
                field: "window",
                what: "its window",
                values: &["50ms", "100ms", "200ms", "500ms", "1s", "2s"],
            },
        ],
    }),
};

/// The breaker's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowedBreakerSpec {
    /// The failure share at which retries stop.
    pub ratio: f64,
    /// The window, ns.
    pub window: Nanos,
}

impl WindowedBreakerSpec {
    /// Reads `windowed:RATIO,window:D`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["window"], &[], ABOUT.syntax)?;
        Ok(WindowedBreakerSpec {
            ratio: rule.number("windowed", 0.0, 1.0)?,
            window: rule.duration("window", 1, 3_600_000_000)?,
        })
    }
}

impl fmt::Display for WindowedBreakerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "windowed:{},window:{}",
            self.ratio,
            show_duration(self.window)
        )
    }
}

/// One scope's window.
#[derive(Debug, Clone)]
pub struct WindowedBreaker {
    spec: WindowedBreakerSpec,
    outcomes: OutcomeWindow,
}

impl WindowedBreaker {
    /// An empty window.
    pub fn new(spec: &WindowedBreakerSpec) -> Self {
        WindowedBreaker {
            spec: *spec,
            outcomes: OutcomeWindow::new(spec.window, Evict::AtWindow),
        }
    }
}

impl RetryControl for WindowedBreaker {
    fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        self.outcomes.record(now, outcome.failed());
    }

    fn may_retry(&self, _now: Nanos, _cause: Outcome) -> bool {
        !self.outcomes.is_empty() && self.outcomes.failure_share() < self.spec.ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    const MS: Nanos = Nanos::from_ms(1);

    fn breaker() -> WindowedBreaker {
        let rule = Rule::read("breaker", "windowed:0.1,window:200ms").unwrap();
        WindowedBreaker::new(&WindowedBreakerSpec::parse(&rule).unwrap())
    }

    #[test]
    fn retries_need_a_window_under_ten_percent_failed() {
        let (f, s) = (Outcome::Failure, Outcome::Success);
        let mut b = breaker();
        // An empty window allows nothing.
        let mut steps = vec![Step::Retry(f, false)];
        // Nine successes and a failure: 10% is not under 10%.
        steps.extend([Step::End(s, None); 9]);
        steps.extend([Step::End(f, None), Step::Retry(f, false)]);
        steps.extend([Step::End(s, None), Step::Retry(f, true)]); // 1/11
        // 200 ms later the window is pruned only when an outcome comes: it
        // still allows; the next outcome prunes all eleven (age ≥ window).
        steps.extend([Step::At(200 * MS), Step::Retry(f, true)]);
        steps.extend([Step::End(f, None), Step::Retry(f, false)]);
        steps.extend([
            Step::At(399 * MS),
            Step::End(s, None),
            Step::Retry(f, false),
        ]);
        steps.extend([Step::At(400 * MS), Step::End(s, None), Step::Retry(f, true)]);
        walk(&mut b, &steps);
    }

    proptest! {
        /// The failed count always matches the window, and only entries
        /// younger than the window at the last addition remain.
        #[test]
        fn the_window_holds_what_it_counts(steps in proptest::collection::vec((any::<bool>(), 0u64..50), 0..300)) {
            let mut b = breaker();
            let mut now = Nanos::ZERO;
            for (ok, gap) in steps {
                now += gap * MS;
                b.attempt_ended(now, if ok { Outcome::Success } else { Outcome::Failure }, None);
                prop_assert_eq!(b.outcomes.failed(), b.outcomes.entries().filter(|o| o.1).count() as u64);
                prop_assert!(b.outcomes.entries().all(|&(t, _)| now - t < 200 * MS));
            }
        }
    }
}
