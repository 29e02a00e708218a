//! Finagle's `RetryBudget` (com.twitter.finagle.service.RetryBudget, the
//! default of its clients: 20% of requests, a 10 s TTL, 10 retries a second
//! in reserve).
//!
//! Each request deposits 1,000; a retry withdraws 1,000 / `percent` (5,000 at
//! 20%) if the balance holds that much. Deposits and withdrawals expire after
//! the TTL: Finagle keeps them in a `WindowedAdder` of 10 slices of TTL/10
//! (whole ms), so an entry counts until 9 to 10 tenths of the TTL have
//! passed. The balance is that sum plus a reserve of `min_per_s` × TTL (in
//! whole seconds) withdrawals, so a client that has just started may retry.

use std::fmt;

use crate::base::time::{NS_PER_MS, NS_PER_S};
use crate::control::rule::{Rule, show_duration};
use crate::control::sliced_window::SlicedWindow;
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "finagle",
    family: Family::Budget,
    syntax: "finagle:PERCENT,ttl:DURATION,min:PER_S (Finagle defaults: finagle:0.2,ttl:10s,min:10)",
    source: "Finagle RetryBudget(ttl, minRetriesPerSec, percentCanRetry): PERCENT is \
             percentCanRetry, min is minRetriesPerSec (TokenBucket.newLeakyBucket over a \
             WindowedAdder); also the Gateway API's \
             XBackendTrafficPolicy retryConstraint as herdsim imports it",
    rule: "a request deposits 1000; retry iff balance ≥ 1000/PERCENT, withdrawing it; entries \
           expire after the TTL (10 slices); balance = unexpired sum + min × TTL × 1000/PERCENT",
    scope: "per client (a Finagle client); --fleet for a shared one",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "finagle:0.2,ttl:10s,min:10",
        knobs: &[
            Knob {
                field: "finagle",
                what: "percentCanRetry",
                values: &["0.01", "0.05", "0.1", "0.2", "0.5", "1"],
            },
            Knob {
                field: "min",
                what: "minRetriesPerSec",
                values: &["0", "1", "3", "10", "30", "100"],
            },
        ],
    }),
};

/// What one request deposits (Finagle's scale factor).
const DEPOSIT: i64 = 1_000;
/// Slices of the TTL.
const SLICES: u64 = 10;

/// The budget's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FinagleBudgetSpec {
    /// `percentCanRetry` as a fraction.
    pub percent: f64,
    /// Time to live of deposits and withdrawals, ns (whole ms).
    pub ttl: Nanos,
    /// `minRetriesPerSec`.
    pub min_per_s: u64,
}

impl FinagleBudgetSpec {
    /// Reads `finagle:P,ttl:D,min:N` (Finagle's ranges: P 0 to 1000, TTL 1 s
    /// to 60 s).
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["ttl", "min"], &[], ABOUT.syntax)?;
        Ok(FinagleBudgetSpec {
            percent: rule.number("finagle", 0.0, 1_000.0)?,
            ttl: rule.duration("ttl", 1_000_000, 60_000_000)? / NS_PER_MS * NS_PER_MS,
            min_per_s: rule.count("min", 0, 1 << 30)?,
        })
    }

    /// What a retry withdraws.
    fn withdrawal(&self) -> i64 {
        if self.percent == 0.0 {
            DEPOSIT + 1
        } else {
            (DEPOSIT as f64 / self.percent) as i64
        }
    }

    fn reserve(&self) -> i64 {
        let ttl_s = (self.ttl / NS_PER_S) as i64;
        (self.min_per_s as i64)
            .saturating_mul(ttl_s)
            .saturating_mul(self.withdrawal())
    }
}

impl fmt::Display for FinagleBudgetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "finagle:{},ttl:{},min:{}",
            self.percent,
            show_duration(self.ttl),
            self.min_per_s
        )
    }
}

/// One scope's windowed balance.
#[derive(Debug, Clone)]
pub struct FinagleBudget {
    spec: FinagleBudgetSpec,
    /// Deposits and withdrawals, by slices of TTL/10 in whole ms.
    entries: SlicedWindow<i64>,
}

impl FinagleBudget {
    /// Nothing deposited.
    pub fn new(spec: &FinagleBudgetSpec) -> Self {
        let slice_ms = (spec.ttl / NS_PER_MS / SLICES).max(1);
        FinagleBudget {
            spec: *spec,
            entries: SlicedWindow::new(SLICES as usize, slice_ms * NS_PER_MS),
        }
    }

    /// The balance at `now`: unexpired entries plus the reserve.
    fn balance(&self, now: Nanos) -> i64 {
        self.entries.live(now).sum::<i64>() + self.spec.reserve()
    }
}

impl RetryControl for FinagleBudget {
    fn request_started(&mut self, now: Nanos) {
        *self.entries.at(now) += DEPOSIT;
    }

    fn may_retry(&self, now: Nanos, _cause: Outcome) -> bool {
        self.balance(now) >= self.spec.withdrawal()
    }

    fn take_retry(&mut self, now: Nanos, _cause: Outcome) {
        *self.entries.at(now) -= self.spec.withdrawal();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};
    use proptest::prelude::*;

    const S: Nanos = Nanos::from_s(1);

    fn budget(text: &str) -> FinagleBudget {
        FinagleBudget::new(&FinagleBudgetSpec::parse(&Rule::read("budget", text).unwrap()).unwrap())
    }

    #[test]
    fn five_requests_pay_for_a_retry_until_they_expire() {
        let f = Outcome::Failure;
        let mut b = budget("finagle:0.2,ttl:10s,min:0");
        let mut steps = vec![Step::Retry(f, false)];
        steps.extend([Step::Start; 5]);
        steps.extend([Step::Retry(f, true), Step::Retry(f, false)]);
        steps.extend([Step::Start; 5]);
        // The deposits at 0 are still live 9.5 s later, and so is the
        // withdrawal: one retry's worth left.
        steps.extend([
            Step::At(9 * S + S / 2),
            Step::Retry(f, true),
            Step::Retry(f, false),
        ]);
        // At 10 s the first slice expires: what was deposited and withdrawn
        // at 0 goes; the withdrawal at 9.5 s stays (−5,000).
        steps.extend([Step::At(10 * S), Step::Retry(f, false)]);
        steps.extend([Step::Start; 10]);
        steps.extend([Step::Retry(f, true), Step::Retry(f, false)]);
        walk(&mut b, &steps);
    }

    #[test]
    fn the_reserve_allows_min_per_second_over_the_ttl() {
        let f = Outcome::Failure;
        let mut b = budget("finagle:0.2,ttl:1s,min:3");
        let mut steps = vec![Step::Retry(f, true); 3];
        // A second later the withdrawals have expired.
        steps.extend([Step::Retry(f, false), Step::At(S), Step::Retry(f, true)]);
        walk(&mut b, &steps);
    }

    proptest! {
        /// Retries within any TTL never exceed percent × requests + reserve.
        #[test]
        fn retries_stay_within_the_ratio(steps in proptest::collection::vec((any::<bool>(), 0u64..300), 0..400)) {
            let mut b = budget("finagle:0.2,ttl:1s,min:2");
            let mut now = Nanos::ZERO;
            let (mut requests, mut retries) = (Vec::new(), Vec::new());
            for (start, gap_ms) in steps {
                now += gap_ms * NS_PER_MS;
                if start {
                    b.request_started(now);
                    requests.push(now);
                } else if b.may_retry(now, Outcome::Failure) {
                    b.take_retry(now, Outcome::Failure);
                    retries.push(now);
                    // Entries live at least 9/10 and at most all of the TTL,
                    // and a withdrawal needs the balance to hold it: the
                    // retries of the last 0.9 s are paid for by at most the
                    // requests of the last second and the reserve.
                    let within = |v: &Vec<Nanos>, ttl: Nanos| {
                        v.iter().filter(|&&t| t + ttl > now).count() as f64
                    };
                    prop_assert!(
                        within(&retries, 9 * S / 10) <= 0.2 * within(&requests, S) + 2.0 + 1e-9
                    );
                }
            }
        }
    }
}
