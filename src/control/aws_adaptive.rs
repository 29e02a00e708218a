//! The AWS SDKs' adaptive retry mode: a client-side rate limiter (botocore's
//! `retries/adaptive.py` `ClientRateLimiter`, with `throttling.py`'s
//! `CubicCalculator` and `bucket.py`'s `TokenBucket`), as botocore runs it.
//!
//! Off until the first throttling error; from then on every attempt takes a
//! token from a bucket filled at the current rate (at least 0.5 a second,
//! holding at most max(rate, 1)). At every response the client's measured
//! rate is updated (responses counted in buckets of 0.5 s, smoothed with
//! 0.8 of the newest) and the rate set by CUBIC: after a throttling error,
//! `w_max` = the measured rate (or the bucket's rate, if lower, once on) and
//! the rate drops to β × `w_max` (β = 0.7); after any other response, the
//! rate is C × (t − last throttle − K)³ + `w_max`, with
//! K = ∛(`w_max` × (1 − β) / C) (C = 0.4). The bucket's rate is
//! min(that, 2 × measured).
//!
//! On the server model a throttling error is a rejection at a full queue;
//! a timeout counts as any other response, as botocore's throttling
//! detector does not see it. botocore blocks a request until a token is
//! free; herdsim reserves the next token for it and sends it then (tokens
//! go to waiting attempts in order, at the rate set when each was reserved).
//! The measured rate counts responses (botocore's `RateClocker` records at
//! each response), and its first bucket starts at the whole second before
//! the run's start (`math.floor` of the clock), as botocore's does.

use std::fmt;

use crate::control::rule::Rule;
use crate::control::{About, ControlError, Family, Nanos, Outcome, RetryControl};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "aws-adaptive",
    family: Family::Throttle,
    syntax: "aws-adaptive:C,beta:B (the SDKs: aws-adaptive:0.4,beta:0.7)",
    source: "AWS SDKs, adaptive retry mode (botocore ClientRateLimiter, CUBIC)",
    rule: "from the first throttling error (a full queue's rejection), attempts wait for a \
           token bucket whose rate is min(CUBIC(C, B), 2 × measured response rate), ≥ 0.5/s",
    scope: "per client (SDK client)",
    delays_attempts: true,
    tuning: None,
};

/// Smoothing of the measured rate (weight of the newest bucket).
const SMOOTHING: f64 = 0.8;
/// The measured rate's buckets, s.
const BUCKET_S: f64 = 0.5;
/// The bucket's least fill rate, per s.
const MIN_RATE: f64 = 0.5;
/// CUBIC's starting `w_max`, per s (botocore's `starting_max_rate`).
const START_MAX_RATE: f64 = 0.5;

/// The limiter's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AwsAdaptiveSpec {
    /// CUBIC's scale constant C.
    pub scale: f64,
    /// CUBIC's multiplicative decrease β.
    pub beta: f64,
}

impl AwsAdaptiveSpec {
    /// Reads `aws-adaptive:C,beta:B`.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["beta"], &[], ABOUT.syntax)?;
        Ok(AwsAdaptiveSpec {
            scale: rule.number("aws-adaptive", 0.001, 1_000.0)?,
            beta: rule.number("beta", 0.01, 0.99)?,
        })
    }
}

impl fmt::Display for AwsAdaptiveSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "aws-adaptive:{},beta:{}", self.scale, self.beta)
    }
}

/// One client's limiter.
#[derive(Debug, Clone)]
pub struct AwsAdaptive {
    spec: AwsAdaptiveSpec,
    enabled: bool,
    /// The measured response rate, per s, its current bucket's start (s)
    /// and the responses counted since.
    measured: f64,
    last_bucket: f64,
    count: f64,
    /// CUBIC's state.
    w_max: f64,
    k: f64,
    last_fail: f64,
    /// The token bucket: fill rate (per s), tokens (negative: owed to
    /// attempts waiting for them), and when it was last filled (s). Its
    /// size is [`AwsAdaptive::size`].
    fill_rate: f64,
    tokens: f64,
    filled_at: Option<f64>,
}

fn seconds(ns: Nanos) -> f64 {
    ns.ticks() as f64 / 1e9
}

impl AwsAdaptive {
    /// Off, as botocore starts: bucket rate 1, CUBIC from 0.5 at time 0.
    pub fn new(spec: &AwsAdaptiveSpec) -> Self {
        let mut limiter = AwsAdaptive {
            spec: *spec,
            enabled: false,
            measured: 0.0,
            last_bucket: 0.0,
            count: 0.0,
            w_max: START_MAX_RATE,
            k: 0.0,
            last_fail: 0.0,
            fill_rate: 0.0,
            tokens: 0.0,
            filled_at: None,
        };
        limiter.k = limiter.zero_point();
        limiter.set_max_rate(0.0, 1.0);
        limiter
    }

    /// The bucket's rate, per s.
    pub fn rate(&self) -> f64 {
        self.fill_rate
    }

    /// True once a throttling error has switched it on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn zero_point(&self) -> f64 {
        (self.w_max * (1.0 - self.spec.beta) / self.spec.scale).cbrt()
    }

    /// `RateClocker.record`: one response at `t` s; the measured rate.
    fn record(&mut self, t: f64) -> f64 {
        let bucket = (t / BUCKET_S).floor() * BUCKET_S;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current = self.count / (bucket - self.last_bucket);
            self.measured = current * SMOOTHING + self.measured * (1.0 - SMOOTHING);
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        self.measured
    }

    /// The bucket's size: botocore's `max_capacity`, the rate if at least
    /// 1 and else 1, which is the fill rate (the rate floored at 0.5) or 1.
    fn size(&self) -> f64 {
        self.fill_rate.max(1.0)
    }

    fn refill(&mut self, t: f64) {
        if let Some(at) = self.filled_at {
            self.tokens = (self.tokens + (t - at) * self.fill_rate).min(self.size());
        }
        self.filled_at = Some(t);
    }

    /// `TokenBucket._set_max_rate`.
    fn set_max_rate(&mut self, t: f64, rate: f64) {
        self.refill(t);
        self.fill_rate = rate.max(MIN_RATE);
        self.tokens = self.tokens.min(self.size());
    }
}

impl RetryControl for AwsAdaptive {
    fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        let t = seconds(now);
        let measured = self.record(t);
        let new_rate = if outcome == Outcome::Rejected {
            let current = if self.enabled {
                measured.min(self.fill_rate)
            } else {
                measured
            };
            self.w_max = current;
            self.k = self.zero_point();
            self.last_fail = t;
            self.enabled = true;
            current * self.spec.beta
        } else {
            self.spec.scale * (t - self.last_fail - self.k).powi(3) + self.w_max
        };
        self.set_max_rate(t, new_rate.min(2.0 * measured));
    }

    fn send_delay(&mut self, now: Nanos) -> Nanos {
        if !self.enabled {
            return Nanos::ZERO;
        }
        let t = seconds(now);
        self.refill(t);
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Nanos::ZERO
        } else {
            Nanos::from_ticks((-self.tokens / self.fill_rate * 1e9).ceil() as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Nanos = Nanos::from_ms(1);

    fn limiter() -> AwsAdaptive {
        let rule = Rule::read("throttle", "aws-adaptive:0.4,beta:0.7").unwrap();
        AwsAdaptive::new(&AwsAdaptiveSpec::parse(&rule).unwrap())
    }

    #[test]
    fn off_until_throttled_then_cubic_from_seventy_percent() {
        let mut l = limiter();
        // 100 responses a second for 2 s, none throttled: no waiting.
        for i in 0..200 {
            assert_eq!(l.send_delay(i * 10 * MS), Nanos::ZERO);
            l.attempt_ended(i * 10 * MS, Outcome::Success, None);
        }
        assert!(!l.enabled());
        // The measured rate: buckets of 0.5 s, 50 responses each, smoothed.
        assert!((l.measured - 100.0).abs() < 1.0, "{}", l.measured);
        // A throttle at 2 s: w_max = measured, rate 0.7 of it.
        l.attempt_ended(2_000 * MS, Outcome::Rejected, None);
        assert!(l.enabled());
        let w_max = l.w_max;
        assert!(
            (l.rate() - 0.7 * w_max).abs() < 1e-9,
            "{} {w_max}",
            l.rate()
        );
        // K = ∛(w_max × 0.3 / 0.4); the rate climbs back to w_max at K s.
        let k = (w_max * 0.3 / 0.4).cbrt();
        assert!((l.k - k).abs() < 1e-12);
        // Responses keep coming at 100/s, so 2 × measured stays above
        // CUBIC's rate, which is the bucket's.
        let at_k = 2_000 * MS + Nanos::from_ticks((k * 1e9) as u64);
        let mut t = 2_010 * MS;
        while t < at_k {
            l.attempt_ended(t, Outcome::Success, None);
            assert!(l.rate() < w_max + 1e-9, "below w_max before K");
            t += 10 * MS;
        }
        l.attempt_ended(at_k, Outcome::Success, None);
        assert!((l.rate() - w_max).abs() < 0.01, "{} {w_max}", l.rate());
        // Past K it probes above w_max, cubically: C × 1³ a second later.
        for i in 1..=100 {
            l.attempt_ended(at_k + i * 10 * MS, Outcome::Success, None);
        }
        assert!((l.rate() - (w_max + 0.4)).abs() < 0.01, "{}", l.rate());
    }

    #[test]
    fn waiting_attempts_take_tokens_in_turn_at_the_rate() {
        let mut l = limiter();
        l.attempt_ended(Nanos::ZERO, Outcome::Rejected, None);
        // Nothing measured yet: the rate is the 0.5/s floor, the bucket
        // holds one token at most, and it starts empty.
        assert_eq!(l.rate(), MIN_RATE);
        assert_eq!(l.send_delay(Nanos::ZERO), 2_000 * MS);
        assert_eq!(l.send_delay(Nanos::ZERO), 4_000 * MS);
        // Four seconds later both are paid for; the next waits two more.
        assert_eq!(l.send_delay(4_000 * MS), 2_000 * MS);
    }

    proptest! {
        /// The bucket never holds more than its size, its rate never falls
        /// below 0.5/s, and a delay is never negative or endless.
        #[test]
        fn the_bucket_keeps_its_bounds(steps in proptest::collection::vec((0u8..3, 0u64..300), 0..300)) {
            let mut l = limiter();
            let mut now = Nanos::ZERO;
            for (s, gap_ms) in steps {
                now += gap_ms * MS;
                match s {
                    0 => l.attempt_ended(now, Outcome::Rejected, None),
                    1 => l.attempt_ended(now, Outcome::Success, None),
                    _ => {
                        let wait = l.send_delay(now);
                        prop_assert!(wait < 3_600_000 * MS);
                    }
                }
                prop_assert!(l.rate() >= MIN_RATE);
                prop_assert!(l.tokens <= l.size() + 1e-9);
            }
        }
    }
}
