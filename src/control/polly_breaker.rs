//! Polly v8's circuit breaker (`CircuitStateController` with
//! `AdvancedCircuitBehavior` and `RollingHealthMetrics`, src/Polly.Core/
//! CircuitBreaker/, read at Polly 8.7.0, commit 173d6d1).
//!
//! - CLOSED admits every call. Successes and failures are counted in a
//!   rolling window of `sampling` (30 s) made of 10 buckets: a bucket starts
//!   at the first outcome `sampling`/10 or more after the current one began
//!   (buckets start at outcomes, not on a grid), and a bucket that began
//!   `sampling` or more ago is dropped. After each *failure* (successes are
//!   only counted), if the window holds at least `throughput` (100) outcomes
//!   and failures / outcomes ≥ the ratio (0.1), it opens for `break` (5 s).
//! - OPEN refuses calls (`BrokenCircuitException`) until `break` has passed;
//!   the first call at or after that instant turns it HALF_OPEN and is the
//!   one probe: the break restarts at it, and every other call is refused
//!   while it is out. Unlike resilience4j's ten permits, one probe at a time.
//! - HALF_OPEN: the next outcome decides, whichever call it belongs to (a
//!   call sent before the break may end now, as in the source): a success
//!   closes it and empties the window; a failure opens it for another
//!   `break` (without being counted).
//! - Outcomes arriving while OPEN are counted (no transition); opening does
//!   not empty the window, closing does.
//!
//! A refused call throws `BrokenCircuitException`; Polly's retry handles
//! every exception but `OperationCanceledException` by default
//! (`DefaultPredicates.HandleOutcome`), so a retry outside the breaker
//! retries it (`refused:retry`, the default). Polly has no default order of
//! strategies: a pipeline runs them in the order they are added, and retry
//! before (outside) the breaker is the order Polly's docs show;
//! `refused:end` is a breaker outside the retry.
//!
//! Polly takes a single window instead of buckets when the sampling
//! duration is under 200 ms, which its validation (at least 0.5 s) never
//! lets through; so here too. Not modelled: `BreakDurationGenerator`,
//! `ShouldHandle` predicates (every failure counts), manual isolation.

use std::collections::VecDeque;
use std::fmt;

use crate::base::draws::Draws;
use crate::control::rule::{Rule, show_duration};
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "polly",
    family: Family::Breaker,
    syntax: "polly:RATIO[,throughput:N][,sampling:D][,break:D][,refused:retry|end] \
             (defaults: polly:0.1,throughput:100,sampling:30s,break:5s,refused:retry)",
    source: "Polly v8 (8.7) CircuitBreakerStrategyOptions, CircuitStateController",
    rule: "CLOSED → OPEN after a failure when the last `sampling` (10 buckets) holds ≥ N \
           outcomes and failed share ≥ RATIO; OPEN refuses for `break`; then one probe: \
           success closes, failure reopens; a refused call is retried as an error",
    scope: "one per pipeline (a client process's): --fleet N for N clients per process",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "polly:0.1",
        knobs: &[
            Knob {
                field: "polly",
                what: "FailureRatio",
                values: &["0.05", "0.1", "0.2", "0.5", "0.9"],
            },
            Knob {
                field: "sampling",
                what: "SamplingDuration",
                values: &["1s", "5s", "10s", "30s"],
            },
        ],
    }),
};

/// The breaker's parameters (CircuitBreakerStrategyOptions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PollyBreakerSpec {
    /// FailureRatio in [0, 1].
    pub ratio: f64,
    /// MinimumThroughput, at least 2.
    pub throughput: u64,
    /// SamplingDuration, ns.
    pub sampling: Nanos,
    /// BreakDuration, ns.
    pub break_for: Nanos,
    /// True if a refused call is retried as an error (the default).
    pub refused_retried: bool,
}

const S: Nanos = Nanos::from_s(1);
/// Polly's range of both durations, µs: 0.5 s to 1 day.
const DURATIONS_US: (u64, u64) = (500_000, 86_400_000_000);
/// HealthMetrics.NumberOfWindows.
const BUCKETS: u64 = 10;

impl Default for PollyBreakerSpec {
    /// CircuitBreakerConstants' defaults.
    fn default() -> Self {
        PollyBreakerSpec {
            ratio: 0.1,
            throughput: 100,
            sampling: 30 * S,
            break_for: 5 * S,
            refused_retried: true,
        }
    }
}

impl PollyBreakerSpec {
    /// Reads the rule (see [`ABOUT`]'s syntax); absent fields are Polly's
    /// defaults, ranges are Polly's validation attributes.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(
            &[],
            &["throughput", "sampling", "break", "refused"],
            ABOUT.syntax,
        )?;
        let d = PollyBreakerSpec::default();
        let duration_or = |field: &str, default: Nanos| {
            if rule.has(field) {
                rule.duration(field, DURATIONS_US.0, DURATIONS_US.1)
            } else {
                Ok(default)
            }
        };
        Ok(PollyBreakerSpec {
            ratio: rule.number("polly", 0.0, 1.0)?,
            throughput: rule
                .count_or("throughput", 2, i32::MAX as u64)?
                .unwrap_or(d.throughput),
            sampling: duration_or("sampling", d.sampling)?,
            break_for: duration_or("break", d.break_for)?,
            refused_retried: rule.word_or("refused", &["retry", "end"], "retry")? == "retry",
        })
    }
}

impl fmt::Display for PollyBreakerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "polly:{},throughput:{},sampling:{},break:{},refused:{}",
            self.ratio,
            self.throughput,
            show_duration(self.sampling),
            show_duration(self.break_for),
            if self.refused_retried { "retry" } else { "end" },
        )
    }
}

/// One bucket of the rolling window: when it began, its successes and
/// failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bucket {
    started: Nanos,
    successes: u64,
    failures: u64,
}

/// RollingHealthMetrics: buckets of `sampling`/10 that start at outcomes.
#[derive(Debug, Clone)]
struct Health {
    sampling: Nanos,
    bucket: Nanos,
    buckets: VecDeque<Bucket>,
}

impl Health {
    fn new(sampling: Nanos) -> Self {
        Health {
            sampling,
            // TimeSpan.FromTicks(sampling.Ticks / 10): exact for whole µs.
            bucket: sampling / BUCKETS,
            buckets: VecDeque::new(),
        }
    }

    /// UpdateCurrentWindow: a new bucket if the current one is a bucket old
    /// (or there is none), then the buckets a window old leave.
    fn current(&mut self, now: Nanos) -> &mut Bucket {
        if self
            .buckets
            .back()
            .is_none_or(|b| now - b.started >= self.bucket)
        {
            self.buckets.push_back(Bucket {
                started: now,
                successes: 0,
                failures: 0,
            });
        }
        while self
            .buckets
            .front()
            .is_some_and(|b| now - b.started >= self.sampling)
        {
            self.buckets.pop_front();
        }
        self.buckets
            .back_mut()
            .expect("the current bucket is never old")
    }

    /// (outcomes, failures) in the window at `now`.
    fn info(&mut self, now: Nanos) -> (u64, u64) {
        self.current(now);
        self.buckets.iter().fold((0, 0), |(n, f), b| {
            (n + b.successes + b.failures, f + b.failures)
        })
    }

    fn reset(&mut self) {
        self.buckets.clear();
    }
}

/// Where the breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Every call goes.
    Closed,
    /// Calls are refused until the break ends.
    Open,
    /// One probe is out; every other call is refused.
    HalfOpen,
}

/// One scope's breaker.
#[derive(Debug, Clone)]
pub struct PollyBreaker {
    spec: PollyBreakerSpec,
    state: State,
    /// `_blockedUntil`: the break's end (restarted at each probe).
    blocked_until: Nanos,
    health: Health,
}

impl PollyBreaker {
    /// Closed, with an empty window.
    pub fn new(spec: &PollyBreakerSpec) -> Self {
        PollyBreaker {
            spec: *spec,
            state: State::Closed,
            blocked_until: Nanos::ZERO,
            health: Health::new(spec.sampling),
        }
    }

    /// Where it stands, and until when it blocks.
    pub fn state(&self) -> (State, Nanos) {
        (self.state, self.blocked_until)
    }

    fn open(&mut self, now: Nanos) {
        self.blocked_until = now.saturating_add(self.spec.break_for);
        self.state = State::Open;
    }
}

impl RetryControl for PollyBreaker {
    fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        if !outcome.failed() {
            self.health.current(now).successes += 1;
            if self.state == State::HalfOpen {
                self.health.reset();
                self.state = State::Closed;
            }
            return;
        }
        match self.state {
            State::Closed => {
                self.health.current(now).failures += 1;
                let (outcomes, failures) = self.health.info(now);
                if outcomes >= self.spec.throughput
                    && failures as f64 / outcomes as f64 >= self.spec.ratio
                {
                    self.open(now);
                }
            }
            State::Open => self.health.current(now).failures += 1,
            State::HalfOpen => self.open(now),
        }
    }

    fn admit(&mut self, now: Nanos, _retry: bool, _draws: &mut dyn Draws) -> bool {
        match self.state {
            State::Closed => true,
            State::Open if now >= self.blocked_until => {
                self.blocked_until = now.saturating_add(self.spec.break_for);
                self.state = State::HalfOpen;
                true
            }
            State::Open | State::HalfOpen => false,
        }
    }

    fn retries_refusal(&self) -> bool {
        self.spec.refused_retried
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    const MS: Nanos = Nanos::from_ms(1);

    fn breaker(text: &str) -> PollyBreaker {
        let rule = Rule::read("breaker", text).unwrap();
        PollyBreaker::new(&PollyBreakerSpec::parse(&rule).unwrap())
    }

    fn admit(b: &mut PollyBreaker, now: Nanos) -> bool {
        b.admit(now, false, &mut ScriptedDraws::new(&[]))
    }

    fn end(b: &mut PollyBreaker, now: Nanos, failed: bool) {
        let o = if failed {
            Outcome::Failure
        } else {
            Outcome::Success
        };
        b.attempt_ended(now, o, None);
    }

    #[test]
    fn the_defaults_are_pollys() {
        // CircuitBreakerConstants: DefaultFailureRatio 0.1,
        // DefaultMinimumThroughput 100, DefaultSamplingDuration 30 s,
        // DefaultBreakDuration 5 s.
        let spec = PollyBreakerSpec::parse(&Rule::read("breaker", "polly:0.1").unwrap()).unwrap();
        assert_eq!(spec, PollyBreakerSpec::default());
        assert_eq!(
            (spec.ratio, spec.throughput, spec.sampling, spec.break_for),
            (0.1, 100, 30 * S, 5 * S)
        );
        let text = spec.to_string();
        assert_eq!(
            PollyBreakerSpec::parse(&Rule::read("breaker", &text).unwrap()),
            Ok(spec)
        );
        // Polly's ranges: ratio [0, 1], throughput ≥ 2, durations 0.5 s to a day.
        for bad in [
            "polly:1.5",
            "polly:0.1,throughput:1",
            "polly:0.1,sampling:499ms",
            "polly:0.1,break:2d",
            "polly:0.1,refused:no",
        ] {
            let err = PollyBreakerSpec::parse(&Rule::read("breaker", bad).unwrap()).unwrap_err();
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }

    #[test]
    fn it_breaks_after_a_failure_at_the_ratio_and_throughput() {
        let mut b = breaker("polly:0.5,throughput:4,sampling:1s,break:1s");
        end(&mut b, Nanos::ZERO, true);
        end(&mut b, Nanos::ZERO, true);
        assert_eq!(b.state().0, State::Closed, "2 outcomes < throughput 4");
        end(&mut b, Nanos::ZERO, false);
        end(&mut b, Nanos::ZERO, false);
        assert_eq!(
            b.state().0,
            State::Closed,
            "2/4 ≥ 0.5, but a success is not judged"
        );
        end(&mut b, 10 * MS, true);
        assert_eq!(b.state(), (State::Open, 1_010 * MS), "3/5");
    }

    #[test]
    fn buckets_start_at_outcomes_and_leave_a_window_later() {
        // Sampling 1 s: buckets of 100 ms. Failures at 0 and 950 ms (two
        // buckets), a success at 1000 ms: the first bucket (started at 0) has
        // left, so the window holds one failure and one success.
        let mut b = breaker("polly:0.6,throughput:2,sampling:1s,break:1s");
        end(&mut b, Nanos::ZERO, true);
        end(&mut b, 950 * MS, false);
        end(&mut b, 1_000 * MS, true);
        assert_eq!(b.state().0, State::Closed, "1 failure of 2 = 0.5 < 0.6");
        end(&mut b, 1_040 * MS, true);
        // The bucket begun at 1000 ms still takes 1040 ms: 2 of 3 ≥ 0.6.
        assert_eq!(b.state().0, State::Open);
    }

    #[test]
    fn one_probe_after_the_break_then_close_or_reopen() {
        let mut b = breaker("polly:0.5,throughput:2,sampling:1s,break:1s");
        end(&mut b, Nanos::ZERO, true);
        end(&mut b, Nanos::ZERO, true);
        assert_eq!(b.state(), (State::Open, S));
        assert!(!admit(&mut b, S - Nanos::from_ticks(1)));
        // At the instant the break ends: one probe, and the break restarts.
        assert!(admit(&mut b, S));
        assert_eq!(b.state(), (State::HalfOpen, 2 * S));
        assert_eq!(
            (0..10).filter(|_| admit(&mut b, S)).count(),
            0,
            "one at a time"
        );
        // A failure reopens it for a break from now.
        end(&mut b, S + 300 * MS, true);
        assert_eq!(b.state(), (State::Open, 2 * S + 300 * MS));
        assert!(admit(&mut b, 2 * S + 300 * MS));
        // A success closes it with an empty window: one failure is then
        // below the throughput of 2.
        end(&mut b, 2 * S + 400 * MS, false);
        assert_eq!(b.state().0, State::Closed);
        end(&mut b, 2 * S + 500 * MS, true);
        assert_eq!(b.state().0, State::Closed);
    }
}
