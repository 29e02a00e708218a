//! resilience4j's circuit breaker (`CircuitBreakerStateMachine`,
//! resilience4j-circuitbreaker, read at v2.4.0-16-gaf9e7c9).
//!
//! Every attempt passes through it, first tries and retries alike: in Spring
//! Boot the Retry aspect (order `LOWEST_PRECEDENCE − 4`) wraps the
//! CircuitBreaker aspect (`LOWEST_PRECEDENCE − 3`), so each retry asks the
//! breaker again. A refused attempt throws `CallNotPermittedException`, which
//! resilience4j's Retry retries by default (`RetryConfig`'s exception
//! predicate is `throwable -> true` unless `retryExceptions` or
//! `ignoreExceptions` say otherwise): it uses up an attempt and waits the
//! retry interval (`refused:retry`, the default; `refused:end` is a user who
//! ignores `CallNotPermittedException`).
//!
//! - CLOSED admits every call. Each outcome is recorded with its duration
//!   (slow if longer than `slow-call`, strictly); after each, if the window
//!   holds at least `min` calls (for a count window, at most its size) and
//!   the failure rate ≥ the threshold or the slow-call rate ≥ `slow` (both in
//!   percent, compared in `float` as resilience4j does), it opens.
//! - OPEN refuses calls until `open` has passed; the first call after it
//!   (strictly after, `Instant.isAfter`) turns it HALF_OPEN. With `auto:on`
//!   (automaticTransitionFromOpenToHalfOpenEnabled) it turns HALF_OPEN when
//!   the wait ends, without a call.
//! - HALF_OPEN admits `permits` calls (default 10) and refuses the rest: the
//!   first `permits` calls after the wait all go at once, the half-open
//!   stampede. Its outcomes go into a count window of `permits` calls; once
//!   min(`min`, `permits`) are in, it opens again if a threshold is reached,
//!   else closes with an empty window. With `half-open-max` (maxWait­
//!   DurationInHalfOpenState, ≥ 1 ms) it leaves HALF_OPEN after that long
//!   for `then` (OPEN by default, or CLOSED) even without enough outcomes.
//!
//! The count window holds the last `window` outcomes
//! (`FixedSizeSlidingWindowMetrics`). A time window of N s
//! (`SlidingTimeWindowMetrics`) sums N buckets of one clock second each,
//! aligned on whole seconds (here: of simulated time), the current one
//! included. Outcomes that arrive while OPEN change nothing. An outcome is
//! recorded in the state current when it arrives (a call admitted while
//! CLOSED may end during HALF_OPEN and count there), as in the source.
//!
//! Not modelled: the open wait's interval functions (exponential, random),
//! `recordExceptions` and other predicates (every failure counts), and the
//! lock-free window strategies (the default is SYNCHRONIZED).

use std::collections::VecDeque;
use std::fmt;

use crate::base::draws::Draws;
use crate::control::rule::{Rule, show_duration};
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "resilience4j",
    family: Family::Breaker,
    syntax: "resilience4j:FAILURE%[,window:N|window:Ns][,min:N][,slow:PERCENT][,slow-call:D]\
             [,open:D][,permits:N][,auto:off|on][,half-open-max:D][,then:open|closed]\
             [,refused:retry|end] (defaults: resilience4j:50,window:100,min:100,slow:100,\
             slow-call:60s,open:60s,permits:10,auto:off,half-open-max:0s,then:open,\
             refused:retry)",
    source: "resilience4j 2.4 CircuitBreakerStateMachine (CircuitBreakerConfig's defaults)",
    rule: "CLOSED → OPEN when the window (last N calls, or N whole seconds) holds ≥ min \
           calls and failure% ≥ FAILURE% or slow% ≥ slow; OPEN refuses for `open`; \
           HALF_OPEN admits `permits` calls at once and judges them; every attempt passes \
           it, and a refused one is retried as an error",
    scope: "one per named instance in an application (a client process): --fleet N for N \
            clients per process",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "resilience4j:50",
        knobs: &[
            Knob {
                field: "resilience4j",
                what: "failureRateThreshold (%)",
                values: &["10", "25", "50", "75", "90"],
            },
            Knob {
                field: "window",
                what: "slidingWindowSize (calls)",
                values: &["10", "50", "100", "500"],
            },
        ],
    }),
};

/// The window a breaker judges (`slidingWindowType`, `slidingWindowSize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// COUNT_BASED: the last N calls.
    Count(u64),
    /// TIME_BASED: the calls of the last N whole seconds.
    Seconds(u64),
}

/// The breaker's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resilience4jBreakerSpec {
    /// failureRateThreshold, percent in (0, 100].
    pub failure_rate: f32,
    /// slowCallRateThreshold, percent in (0, 100].
    pub slow_rate: f32,
    /// slowCallDurationThreshold, ns: a call longer than this is slow.
    pub slow_call: Nanos,
    /// The sliding window.
    pub window: Window,
    /// minimumNumberOfCalls.
    pub min_calls: u64,
    /// waitDurationInOpenState, ns (whole ms, as resilience4j keeps it).
    pub open: Nanos,
    /// permittedNumberOfCallsInHalfOpenState.
    pub permits: u64,
    /// automaticTransitionFromOpenToHalfOpenEnabled.
    pub auto: bool,
    /// maxWaitDurationInHalfOpenState, ns; below 1 ms, none.
    pub half_open_max: Nanos,
    /// transitionToStateAfterWaitDuration: OPEN (true) or CLOSED.
    pub then_open: bool,
    /// True if a refused attempt is retried as an error (the default).
    pub refused_retried: bool,
}

const MS: Nanos = Nanos::from_ms(1);
const S: Nanos = Nanos::from_s(1);
/// The longest duration a field takes: a day, in µs.
const DAY_US: u64 = 86_400_000_000;

impl Default for Resilience4jBreakerSpec {
    /// CircuitBreakerConfig's defaults.
    fn default() -> Self {
        Resilience4jBreakerSpec {
            failure_rate: 50.0,
            slow_rate: 100.0,
            slow_call: 60 * S,
            window: Window::Count(100),
            min_calls: 100,
            open: 60 * S,
            permits: 10,
            auto: false,
            half_open_max: Nanos::ZERO,
            then_open: true,
            refused_retried: true,
        }
    }
}

impl Resilience4jBreakerSpec {
    /// Reads the rule (see [`ABOUT`]'s syntax); absent fields are
    /// resilience4j's defaults.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(
            &[],
            &[
                "window",
                "min",
                "slow",
                "slow-call",
                "open",
                "permits",
                "auto",
                "half-open-max",
                "then",
                "refused",
            ],
            ABOUT.syntax,
        )?;
        let d = Resilience4jBreakerSpec::default();
        let percent = |field: &str, default: f32| -> Result<f32, ControlError> {
            if field != "resilience4j" && !rule.has(field) {
                return Ok(default);
            }
            let p = rule.number(field, 0.0, 100.0)?;
            if p == 0.0 {
                return Err(ControlError {
                    key: rule.key,
                    text: rule.text.clone(),
                    why: format!("{field} must be above 0 and at most 100 (percent)"),
                });
            }
            Ok(p as f32)
        };
        let window = if rule.has("window") {
            match rule.count_or("window", 1, 1 << 30) {
                Ok(Some(n)) => Window::Count(n),
                _ => {
                    let bad = || ControlError {
                        key: rule.key,
                        text: rule.text.clone(),
                        why: "window must be a number of calls from 1 to 1073741824, or whole \
                              seconds from 1s to 86400s"
                            .to_string(),
                    };
                    let ns = rule
                        .duration("window", 1_000_000, DAY_US)
                        .map_err(|_| bad())?;
                    if ns % S != Nanos::ZERO {
                        return Err(bad());
                    }
                    Window::Seconds(ns / S)
                }
            }
        } else {
            d.window
        };
        let duration_or = |field: &str, lo_us: u64, default: Nanos| {
            if rule.has(field) {
                rule.duration(field, lo_us, DAY_US)
            } else {
                Ok(default)
            }
        };
        Ok(Resilience4jBreakerSpec {
            failure_rate: percent("resilience4j", d.failure_rate)?,
            slow_rate: percent("slow", d.slow_rate)?,
            slow_call: duration_or("slow-call", 1, d.slow_call)?,
            window,
            min_calls: rule.count_or("min", 1, 1 << 30)?.unwrap_or(d.min_calls),
            // resilience4j keeps the open wait in whole ms (toMillis).
            open: duration_or("open", 1_000, d.open)? / MS * MS,
            permits: rule.count_or("permits", 1, 1 << 30)?.unwrap_or(d.permits),
            auto: rule.word_or("auto", &["off", "on"], "off")? == "on",
            half_open_max: duration_or("half-open-max", 0, d.half_open_max)? / MS * MS,
            then_open: rule.word_or("then", &["open", "closed"], "open")? == "open",
            refused_retried: rule.word_or("refused", &["retry", "end"], "retry")? == "retry",
        })
    }

    /// The count window's floor on judged calls: min(`min`, size) for a
    /// count window (CircuitBreakerMetrics), `min` for a time window.
    fn closed_minimum(&self) -> u64 {
        match self.window {
            Window::Count(n) => self.min_calls.min(n),
            Window::Seconds(_) => self.min_calls,
        }
    }
}

impl fmt::Display for Resilience4jBreakerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let window = match self.window {
            Window::Count(n) => n.to_string(),
            Window::Seconds(s) => format!("{s}s"),
        };
        write!(
            f,
            "resilience4j:{},window:{window},min:{},slow:{},slow-call:{},open:{},permits:{},\
             auto:{},half-open-max:{},then:{},refused:{}",
            self.failure_rate,
            self.min_calls,
            self.slow_rate,
            show_duration(self.slow_call),
            show_duration(self.open),
            self.permits,
            if self.auto { "on" } else { "off" },
            show_duration(self.half_open_max),
            if self.then_open { "open" } else { "closed" },
            if self.refused_retried { "retry" } else { "end" },
        )
    }
}

/// Calls, failed calls and slow calls in a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Totals {
    calls: u64,
    failed: u64,
    slow: u64,
}

impl Totals {
    fn add(&mut self, other: Totals) {
        self.calls += other.calls;
        self.failed += other.failed;
        self.slow += other.slow;
    }

    fn remove(&mut self, other: Totals) {
        self.calls -= other.calls;
        self.failed -= other.failed;
        self.slow -= other.slow;
    }

    fn one(failed: bool, slow: bool) -> Totals {
        Totals {
            calls: 1,
            failed: u64::from(failed),
            slow: u64::from(slow),
        }
    }
}

/// A sliding window of outcomes, by count or by whole seconds.
#[derive(Debug, Clone)]
struct Calls {
    window: Window,
    /// Count: one entry per call; time: one per second that has calls,
    /// with the second's number.
    entries: VecDeque<(u64, Totals)>,
    totals: Totals,
}

impl Calls {
    fn new(window: Window) -> Self {
        Calls {
            window,
            entries: VecDeque::new(),
            totals: Totals::default(),
        }
    }

    /// Records one call at `now`; returns the window's totals after it.
    fn record(&mut self, now: Nanos, call: Totals) -> Totals {
        match self.window {
            Window::Count(n) => {
                if self.entries.len() as u64 == n
                    && let Some((_, old)) = self.entries.pop_front()
                {
                    self.totals.remove(old);
                }
                self.entries.push_back((0, call));
            }
            Window::Seconds(n) => {
                let second = now / S;
                // Buckets of seconds before `second − n + 1` have left.
                while let Some(&(s, old)) = self.entries.front()
                    && s + n <= second
                {
                    self.totals.remove(old);
                    self.entries.pop_front();
                }
                match self.entries.back_mut() {
                    Some((s, bucket)) if *s == second => bucket.add(call),
                    _ => self.entries.push_back((second, call)),
                }
            }
        }
        self.totals.add(call);
        self.totals
    }
}

/// What a window's totals say (CircuitBreakerMetrics.Result, folded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Fewer calls than the minimum: no judgement.
    TooFew,
    /// Both rates under their thresholds.
    Below,
    /// A rate at or over its threshold.
    Exceeded,
}

fn judge(t: Totals, minimum: u64, spec: &Resilience4jBreakerSpec) -> Verdict {
    if t.calls == 0 || t.calls < minimum {
        return Verdict::TooFew;
    }
    // SnapshotImpl: `count * 100.0f / total`, in float.
    let rate = |n: u64| n as f32 * 100.0f32 / t.calls as f32;
    if rate(t.failed) >= spec.failure_rate || rate(t.slow) >= spec.slow_rate {
        Verdict::Exceeded
    } else {
        Verdict::Below
    }
}

/// Where the breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Every call goes; outcomes are judged.
    Closed,
    /// Calls are refused until `until` (and a call after it).
    Open {
        /// When the wait ends.
        until: Nanos,
    },
    /// Up to `left` more trial calls go.
    HalfOpen {
        /// When it went half-open.
        since: Nanos,
        /// Permits left.
        left: u64,
    },
}

/// One scope's breaker.
#[derive(Debug, Clone)]
pub struct Resilience4jBreaker {
    spec: Resilience4jBreakerSpec,
    state: State,
    /// The current state's window (the closed window, or the half-open
    /// count window of `permits` calls).
    calls: Calls,
}

impl Resilience4jBreaker {
    /// Closed, with an empty window.
    pub fn new(spec: &Resilience4jBreakerSpec) -> Self {
        Resilience4jBreaker {
            spec: *spec,
            state: State::Closed,
            calls: Calls::new(spec.window),
        }
    }

    /// Where it stands (as of its last event).
    pub fn state(&self) -> State {
        self.state
    }

    fn enter_open(&mut self, at: Nanos) {
        self.state = State::Open {
            until: at.saturating_add(self.spec.open),
        };
    }

    fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.calls = Calls::new(self.spec.window);
    }

    fn enter_half_open(&mut self, at: Nanos) {
        self.state = State::HalfOpen {
            since: at,
            left: self.spec.permits,
        };
        self.calls = Calls::new(Window::Count(self.spec.permits));
    }

    /// Takes the transitions resilience4j's scheduler makes by time alone
    /// (the automatic half-open, the half-open wait's end) up to `now`.
    fn advance(&mut self, now: Nanos) {
        loop {
            match self.state {
                State::Open { until } if self.spec.auto && now >= until => {
                    self.enter_half_open(until)
                }
                State::HalfOpen { since, .. }
                    if self.spec.half_open_max >= MS
                        && now >= since.saturating_add(self.spec.half_open_max) =>
                {
                    let at = since + self.spec.half_open_max;
                    if self.spec.then_open {
                        self.enter_open(at);
                    } else {
                        self.enter_closed();
                    }
                }
                _ => return,
            }
        }
    }
}

impl RetryControl for Resilience4jBreaker {
    fn attempt_timed(
        &mut self,
        now: Nanos,
        sent: Nanos,
        outcome: Outcome,
        _retry_of: Option<Outcome>,
    ) {
        self.advance(now);
        let slow = now.saturating_sub(sent) > self.spec.slow_call;
        let call = Totals::one(outcome.failed(), slow);
        match self.state {
            State::Closed => {
                let totals = self.calls.record(now, call);
                if judge(totals, self.spec.closed_minimum(), &self.spec) == Verdict::Exceeded {
                    self.enter_open(now);
                }
            }
            State::HalfOpen { .. } => {
                let totals = self.calls.record(now, call);
                match judge(
                    totals,
                    self.spec.min_calls.min(self.spec.permits),
                    &self.spec,
                ) {
                    Verdict::Exceeded => self.enter_open(now),
                    Verdict::Below => self.enter_closed(),
                    Verdict::TooFew => {}
                }
            }
            // Recorded for resilience4j's metrics only: no transition.
            State::Open { .. } => {}
        }
    }

    fn admit(&mut self, now: Nanos, _retry: bool, _draws: &mut dyn Draws) -> bool {
        self.advance(now);
        if let State::Open { until } = self.state
            && now > until
        {
            self.enter_half_open(now);
        }
        match &mut self.state {
            State::Closed => true,
            State::Open { .. } => false,
            State::HalfOpen { left, .. } => {
                if *left > 0 {
                    *left -= 1;
                    true
                } else {
                    false
                }
            }
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

    fn breaker(text: &str) -> Resilience4jBreaker {
        let rule = Rule::read("breaker", text).unwrap();
        Resilience4jBreaker::new(&Resilience4jBreakerSpec::parse(&rule).unwrap())
    }

    fn admit(b: &mut Resilience4jBreaker, now: Nanos) -> bool {
        b.admit(now, false, &mut ScriptedDraws::new(&[]))
    }

    fn end(b: &mut Resilience4jBreaker, now: Nanos, took: Nanos, failed: bool) {
        let outcome = if failed {
            Outcome::Failure
        } else {
            Outcome::Success
        };
        b.attempt_timed(now, now - took, outcome, None);
    }

    #[test]
    fn the_defaults_are_circuit_breaker_configs() {
        // CircuitBreakerConfig: DEFAULT_FAILURE_RATE_THRESHOLD 50,
        // DEFAULT_SLOW_CALL_RATE_THRESHOLD 100, DEFAULT_SLOW_CALL_DURATION_
        // THRESHOLD 60 s, DEFAULT_WAIT_DURATION_IN_OPEN_STATE 60 s,
        // DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN_STATE 10, DEFAULT_MINIMUM_
        // NUMBER_OF_CALLS 100, DEFAULT_SLIDING_WINDOW_SIZE 100, COUNT_BASED,
        // automatic transition off, no half-open wait, then OPEN.
        let rule = Rule::read("breaker", "resilience4j:50").unwrap();
        let spec = Resilience4jBreakerSpec::parse(&rule).unwrap();
        assert_eq!(spec, Resilience4jBreakerSpec::default());
        assert_eq!(
            (spec.failure_rate, spec.slow_rate, spec.slow_call, spec.open),
            (50.0, 100.0, 60 * S, 60 * S)
        );
        assert_eq!(
            (spec.permits, spec.min_calls, spec.window),
            (10, 100, Window::Count(100))
        );
        assert!(!spec.auto && spec.half_open_max == Nanos::ZERO && spec.then_open);
        assert!(
            spec.refused_retried,
            "Retry retries CallNotPermittedException"
        );
        let text = spec.to_string();
        let back = Resilience4jBreakerSpec::parse(&Rule::read("breaker", &text).unwrap());
        assert_eq!(back, Ok(spec), "{text}");
    }

    #[test]
    fn bad_fields_are_refused_in_one_line() {
        for bad in [
            "resilience4j:0",
            "resilience4j:101",
            "resilience4j:50,window:0",
            "resilience4j:50,window:1500ms",
            "resilience4j:50,slow:0",
            "resilience4j:50,permits:0",
            "resilience4j:50,auto:yes",
            "resilience4j:50,then:half",
            "resilience4j:50,refused:maybe",
            "resilience4j:50,open:10us",
            "resilience4j:50,bogus:1",
        ] {
            let rule = Rule::read("breaker", bad).unwrap();
            let err = Resilience4jBreakerSpec::parse(&rule)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("invalid breaker") && !err.contains('\n'),
                "{err}"
            );
        }
        let rule = Rule::read("breaker", "resilience4j:50,window:60s").unwrap();
        let spec = Resilience4jBreakerSpec::parse(&rule).unwrap();
        assert_eq!(spec.window, Window::Seconds(60));
    }

    #[test]
    fn it_opens_at_the_threshold_once_the_minimum_is_in() {
        // Window of 4, minimum 4, 50%: two failures of four open it (≥).
        let mut b = breaker("resilience4j:50,window:4,min:4,open:100ms");
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        end(&mut b, Nanos::ZERO, Nanos::ZERO, false);
        assert_eq!(b.state(), State::Closed, "3 calls < minimum 4");
        end(&mut b, 10 * MS, Nanos::ZERO, false);
        assert_eq!(b.state(), State::Open { until: 110 * MS });
        assert!(!admit(&mut b, 50 * MS));
        assert!(
            !admit(&mut b, 110 * MS),
            "isAfter: not at the instant itself"
        );
    }

    #[test]
    fn a_count_window_keeps_the_last_calls_and_caps_the_minimum() {
        // minimumNumberOfCalls 100 above a window of 5: min(100, 5) = 5.
        let mut b = breaker("resilience4j:60,window:5,min:100");
        for failed in [true, true, true, false, false] {
            end(&mut b, Nanos::ZERO, Nanos::ZERO, failed);
        }
        assert!(matches!(b.state(), State::Open { .. }), "3/5 = 60% ≥ 60%");
        let mut b = breaker("resilience4j:61,window:5,min:100");
        for failed in [true, true, true, false, false, false, true, true] {
            end(&mut b, Nanos::ZERO, Nanos::ZERO, failed);
        }
        // F F F S S = 60% < 61%; then the window slides: calls 4..8 are
        // S S S F F = 40%.
        assert_eq!(b.state(), State::Closed);
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        // 5..9: S, S, F, F, F = 60% < 61%.
        assert_eq!(b.state(), State::Closed);
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        // 6..10: S, F, F, F, F = 80%.
        assert!(matches!(b.state(), State::Open { .. }));
    }

    #[test]
    fn a_time_window_sums_whole_seconds() {
        // Two-second window, minimum 2, 50%: a failure at 0.9 s and a success
        // at 2.1 s are in different windows (second 0 left at second 2).
        let mut b = breaker("resilience4j:50,window:2s,min:2");
        end(&mut b, 900 * MS, Nanos::ZERO, true);
        end(&mut b, 2_100 * MS, Nanos::ZERO, false);
        assert_eq!(b.state(), State::Closed, "one call in seconds 1..2");
        end(&mut b, 2_200 * MS, Nanos::ZERO, true);
        assert!(matches!(b.state(), State::Open { .. }), "1 of 2 failed");
        // Within one second boundary: 1.9 s and 2.0 s are both in [1, 2].
        let mut b = breaker("resilience4j:50,window:2s,min:2");
        end(&mut b, 1_900 * MS, Nanos::ZERO, true);
        end(&mut b, 2_000 * MS, Nanos::ZERO, false);
        assert!(matches!(b.state(), State::Open { .. }));
    }

    #[test]
    fn slow_calls_are_longer_than_the_threshold_and_open_it_at_their_rate() {
        let mut b = breaker("resilience4j:100,window:2,min:2,slow:50,slow-call:1s");
        end(&mut b, 5 * S, S, false);
        end(&mut b, 5 * S, S, false);
        assert_eq!(b.state(), State::Closed, "exactly 1 s is not slow");
        end(&mut b, 6 * S, S + Nanos::from_ticks(1), false);
        assert_eq!(
            b.state(),
            State::Open { until: 66 * S },
            "1 of 2 slow = 50%"
        );
    }

    #[test]
    fn half_open_lets_its_permits_through_at_once_then_judges_them() {
        let mut b = breaker("resilience4j:50,window:2,min:2,open:1s,permits:10");
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        assert_eq!(b.state(), State::Open { until: S });
        // The first call after the wait turns it half-open; ten calls at that
        // instant all go (the stampede), the eleventh is refused.
        let t = S + Nanos::from_ticks(1);
        let admitted = (0..11).filter(|_| admit(&mut b, t)).count();
        assert_eq!(admitted, 10);
        assert_eq!(b.state(), State::HalfOpen { since: t, left: 0 });
        // min(minimum 2, permits 10) = 2 outcomes decide: 1 failure of 2 is
        // 50%: open again.
        end(&mut b, t + 5 * MS, 5 * MS, false);
        assert!(matches!(b.state(), State::HalfOpen { .. }));
        end(&mut b, t + 6 * MS, 6 * MS, true);
        assert_eq!(
            b.state(),
            State::Open {
                until: t + 6 * MS + S
            }
        );
        // The other eight end while open: nothing changes.
        for _ in 0..8 {
            end(&mut b, t + 7 * MS, 7 * MS, false);
        }
        assert_eq!(
            b.state(),
            State::Open {
                until: t + 6 * MS + S
            }
        );
        // Next time two successes close it, with an empty window.
        let t2 = t + 6 * MS + S + Nanos::from_ticks(1);
        assert!(admit(&mut b, t2));
        end(&mut b, t2, Nanos::ZERO, false);
        end(&mut b, t2, Nanos::ZERO, false);
        assert_eq!(b.state(), State::Closed);
        end(&mut b, t2, Nanos::ZERO, true);
        assert_eq!(
            b.state(),
            State::Closed,
            "one call: below the minimum again"
        );
    }

    #[test]
    fn the_automatic_transition_and_the_half_open_wait_run_on_time_alone() {
        let mut b =
            breaker("resilience4j:50,window:1,min:1,open:1s,permits:3,auto:on,half-open-max:500ms");
        end(&mut b, Nanos::ZERO, Nanos::ZERO, true);
        assert_eq!(b.state(), State::Open { until: S });
        // auto: half-open at the wait's end, so a call at exactly 1 s goes.
        assert!(admit(&mut b, S));
        assert_eq!(b.state(), State::HalfOpen { since: S, left: 2 });
        // No outcome within 500 ms: back to OPEN at 1.5 s for another second;
        // auto again at 2.5 s; a call at 2.6 s finds it half-open since 2.5 s.
        assert!(admit(&mut b, 2_600 * MS));
        assert_eq!(
            b.state(),
            State::HalfOpen {
                since: 2_500 * MS,
                left: 2
            }
        );
        let mut c =
            breaker("resilience4j:50,window:1,min:1,open:1s,half-open-max:500ms,then:closed");
        end(&mut c, Nanos::ZERO, Nanos::ZERO, true);
        assert!(admit(&mut c, S + Nanos::from_ticks(1)));
        assert!(
            admit(&mut c, S + 500 * MS + Nanos::from_ticks(1)),
            "closed after the half-open wait"
        );
        assert_eq!(c.state(), State::Closed);
    }
}
