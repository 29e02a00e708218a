//! tower's `TpsBudget` (tower-rs/tower, `tower/src/retry/budget/tps_budget.rs`,
//! read at commit 8358ee7): the retry budget Linkerd's proxy gives every
//! ServiceProfile (linkerd/linkerd2-proxy 29637b6,
//! `linkerd/service-profiles/src/proto.rs` `convert_retry_budget` builds one
//! `TpsBudget::new(ttl, min_retries_per_second, retry_ratio)` per profile).
//!
//! Not Finagle's budget ([`crate::control::finagle_budget`]), though tower
//! took its assertions from Finagle, and it differs in three ways:
//!
//! - **Integer withdrawals**: a deposit is 1 and a withdrawal
//!   ⌊1/ratio⌋ (in `f32`), so a ratio of 0.3 withdraws 3 and lets a third of
//!   the deposits be retried, not 30%; above 1 a deposit is 1,000 and a
//!   withdrawal ⌊1,000/ratio⌋; a ratio of 0 deposits nothing and withdraws 1.
//! - **Time slots counted from the last roll-over**: ten slots of TTL/10 in a
//!   ring, plus the current one (`writer`). Any deposit or withdrawal at least
//!   TTL/10 after the last roll-over commits the current slot, clears the
//!   ⌈elapsed/slot⌉ − 1 slots after it and restarts the clock *at that
//!   moment*, not at a slot boundary; the slot the next commit overwrites is
//!   still counted until then. A roll-over that comes more than one slot
//!   after the last moves on two slots, clearing one: under steady traffic
//!   whose events do not fall on the slot grid, every other slot is empty
//!   and the budget remembers about half its TTL (pinned below); events on
//!   the grid keep all of it.
//! - **When Linkerd deposits**: not when a request starts. linkerd2-proxy's
//!   `RetryPolicy::retry` (`linkerd/app/outbound/src/http/retry.rs`) runs on
//!   every response of a retryable route: a response its classes call a
//!   failure withdraws and, if that succeeds, is retried at once; any other
//!   response (a success, a failure not retryable, an error) deposits. A
//!   failure whose withdrawal fails neither retries nor deposits, and a retry
//!   that succeeds deposits like a first try.
//!
//! The balance is the ring's sum, the current slot and a reserve of
//! `min` × TTL in whole seconds × the withdrawal. Ranges as tower asserts
//! them: TTL 1 s to 60 s, ratio 0 to 1,000, `min` below 2³¹ − 1.
//!
//! In herdsim's terms: a success deposits when it ends; a failed attempt is
//! held until the loop decides on it, which it does right away: a retry
//! decision ([`RetryControl::may_retry`], where tower's `withdraw` runs,
//! rolling the slots whether or not it succeeds) consumes it, and anything
//! else first deposits it (the loop did not retry it: not in `retry_on`, or
//! past `max_attempts`). A timeout deposits nothing: a ServiceProfile has no
//! per-try timeout, and its route timeout (herdsim's `deadline`) drops the
//! retrying future before the policy sees a response.

use std::cell::RefCell;
use std::fmt;

use crate::control::rule::{Rule, show_duration};
use crate::control::{About, ControlError, Family, Knob, Nanos, Outcome, RetryControl, Tuning};

/// Listed by `herdsim controls`.
pub const ABOUT: About = About {
    name: "tower",
    family: Family::Budget,
    syntax: "tower:RATIO,ttl:DURATION,min:PER_S (Linkerd's and tower's defaults: \
             tower:0.2,ttl:10s,min:10)",
    source: "tower's TpsBudget::new(ttl, min_per_sec, retry_percent), the budget of a Linkerd \
             ServiceProfile (retryBudget{retryRatio, minRetriesPerSecond, ttl}); \
             `herdsim import` reads a ServiceProfile into it",
    rule: "a response not retried deposits 1; a retry withdraws ⌊1/RATIO⌋ (RATIO > 1: deposit \
           1000, withdraw ⌊1000/RATIO⌋) iff the balance holds it; 10 slots of TTL/10, rolled \
           from the last roll-over; balance = slots + min × ⌊TTL⌋s × withdrawal",
    scope: "per Linkerd proxy and destination profile (all retryable routes of a \
            ServiceProfile share one): --fleet N for N sources behind one proxy",
    delays_attempts: false,
    tuning: Some(Tuning {
        start: "tower:0.2,ttl:10s,min:10",
        knobs: &[
            Knob {
                field: "tower",
                what: "retry_ratio",
                values: &["0.01", "0.05", "0.1", "0.2", "0.5", "1"],
            },
            Knob {
                field: "min",
                what: "min_retries_per_second",
                values: &["0", "1", "3", "10", "30", "100"],
            },
        ],
    }),
};

/// Slots of the TTL (tower's `windows`).
const SLOTS: usize = 10;
const NS_PER_S: Nanos = Nanos::from_s(1);

/// The budget's parameters, as `TpsBudget::new` takes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TowerBudgetSpec {
    /// `retry_percent` (Linkerd's `retryRatio`), a fraction: 0.2 is 20%.
    pub ratio: f64,
    /// The TTL, ns.
    pub ttl: Nanos,
    /// `min_per_sec` (Linkerd's `minRetriesPerSecond`).
    pub min_per_s: u64,
}

impl TowerBudgetSpec {
    /// Reads `tower:RATIO,ttl:D,min:N` in tower's asserted ranges.
    pub fn parse(rule: &Rule) -> Result<Self, ControlError> {
        rule.expect(&["ttl", "min"], &[], ABOUT.syntax)?;
        Ok(TowerBudgetSpec {
            ratio: rule.number("tower", 0.0, 1_000.0)?,
            ttl: rule.duration("ttl", 1_000_000, 60_000_000)?,
            // `assert!(min_per_sec < i32::MAX as u32)`.
            min_per_s: rule.count("min", 0, i32::MAX as u64 - 1)?,
        })
    }

    /// What a deposit adds and a withdrawal takes, computed in `f32` as
    /// tower does.
    pub fn amounts(&self) -> (i64, i64) {
        let ratio = self.ratio as f32;
        if ratio == 0.0 {
            (0, 1)
        } else if ratio <= 1.0 {
            (1, (1.0 / ratio) as i64)
        } else {
            (1_000, (1_000.0 / ratio) as i64)
        }
    }

    /// The reserve: `min` × the TTL's whole seconds × the withdrawal.
    pub fn reserve(&self) -> i64 {
        (self.min_per_s as i64)
            .saturating_mul((self.ttl / NS_PER_S) as i64)
            .saturating_mul(self.amounts().1)
    }
}

impl fmt::Display for TowerBudgetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tower:{},ttl:{},min:{}",
            self.ratio,
            show_duration(self.ttl),
            self.min_per_s
        )
    }
}

/// The slots, as tower's `TpsBudget` keeps them, and the failure awaiting
/// its retry decision.
#[derive(Debug, Clone)]
struct Ring {
    slots: [i64; SLOTS],
    /// The current slot, committed at the next roll-over.
    writer: i64,
    /// The slot the current one will be committed to.
    index: usize,
    /// When the last roll-over was.
    since: Nanos,
    /// A failed attempt's end, not yet decided on: if no retry decision
    /// follows, it deposits then (at this time).
    undecided: Option<Nanos>,
}

impl Ring {
    /// tower's `expire`: rolls over if a slot's length has passed since the
    /// last roll-over.
    fn expire(&mut self, now: Nanos, slot: Nanos) {
        let elapsed = now.saturating_sub(self.since);
        if elapsed < slot {
            return;
        }
        self.slots[self.index] = std::mem::take(&mut self.writer);
        // tower clears one slot per whole slot beyond the first while what
        // is left exceeds a slot: ⌈elapsed/slot⌉ − 1 of them.
        let cleared = (elapsed - Nanos::from_ticks(1)) / slot;
        for i in 0..cleared.min(SLOTS as u64) as usize {
            self.slots[(self.index + 1 + i) % SLOTS] = 0;
        }
        self.index = ((self.index as u64 + 1 + cleared) % SLOTS as u64) as usize;
        self.since = now;
    }

    fn sum(&self, reserve: i64) -> i64 {
        self.slots
            .iter()
            .fold(self.writer, |a, &b| a.saturating_add(b))
            .saturating_add(reserve)
    }
}

/// One scope's budget.
#[derive(Debug, Clone)]
pub struct TowerBudget {
    deposit: i64,
    withdrawal: i64,
    reserve: i64,
    /// TTL/10, ns.
    slot: Nanos,
    /// In a cell because tower's withdrawal rolls the slots even when it
    /// fails, and a retry decision ([`RetryControl::may_retry`]) is where it
    /// runs.
    ring: RefCell<Ring>,
}

impl TowerBudget {
    /// Nothing deposited; the clock starts at 0 (tower's `Instant::now()`
    /// when the budget is made).
    pub fn new(spec: &TowerBudgetSpec) -> Self {
        let (deposit, withdrawal) = spec.amounts();
        TowerBudget {
            deposit,
            withdrawal,
            reserve: spec.reserve(),
            slot: spec.ttl / SLOTS as u64,
            ring: RefCell::new(Ring {
                slots: [0; SLOTS],
                writer: 0,
                index: 0,
                since: Nanos::ZERO,
                undecided: None,
            }),
        }
    }

    /// tower's `put`.
    fn put(&self, ring: &mut Ring, now: Nanos, amount: i64) {
        ring.expire(now, self.slot);
        ring.writer = ring.writer.saturating_add(amount);
    }

    /// A failure held for its decision, with none coming: a response the
    /// policy did not retry, which deposits.
    fn settle(&self, ring: &mut Ring) {
        if let Some(at) = ring.undecided.take() {
            self.put(ring, at, self.deposit);
        }
    }
}

impl RetryControl for TowerBudget {
    fn request_started(&mut self, _now: Nanos) {
        let ring = &mut *self.ring.borrow_mut();
        self.settle(ring);
    }

    fn attempt_sent(&mut self, _now: Nanos, _retry_of: Option<Outcome>) {
        let ring = &mut *self.ring.borrow_mut();
        self.settle(ring);
    }

    fn attempt_ended(&mut self, now: Nanos, outcome: Outcome, _retry_of: Option<Outcome>) {
        let ring = &mut *self.ring.borrow_mut();
        self.settle(ring);
        match outcome {
            Outcome::Success => self.put(ring, now, self.deposit),
            Outcome::Failure | Outcome::Rejected => ring.undecided = Some(now),
            Outcome::Timeout => {}
        }
    }

    fn may_retry(&self, now: Nanos, _cause: Outcome) -> bool {
        let ring = &mut *self.ring.borrow_mut();
        // This decision is the held failure's: a retryable response, which
        // withdraws rather than deposits.
        ring.undecided = None;
        ring.expire(now, self.slot);
        ring.sum(self.reserve) >= self.withdrawal
    }

    fn take_retry(&mut self, now: Nanos, _cause: Outcome) {
        let ring = &mut *self.ring.borrow_mut();
        self.put(ring, now, -self.withdrawal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::tests_support::{Step, walk};

    const MS: Nanos = Nanos::from_ms(1);
    const S: Nanos = Nanos::from_s(1);
    const F: Outcome = Outcome::Failure;

    fn spec(text: &str) -> TowerBudgetSpec {
        TowerBudgetSpec::parse(&Rule::read("budget", text).unwrap()).unwrap()
    }

    fn budget(text: &str) -> TowerBudget {
        TowerBudget::new(&spec(text))
    }

    /// tower's `deposit`: a response not retried (a success).
    const DEPOSIT: Step = Step::End(Outcome::Success, None);
    /// tower's `withdraw`, and whether it succeeds.
    fn withdraw(succeeds: bool) -> Step {
        Step::Retry(F, succeeds)
    }

    #[test]
    fn tps_empty() {
        // TpsBudget::new(1s, 0, 1.0): nothing to withdraw.
        walk(&mut budget("tower:1,ttl:1s,min:0"), &[withdraw(false)]);
    }

    #[test]
    fn tps_leaky() {
        // A deposit is gone three seconds later.
        walk(
            &mut budget("tower:1,ttl:1s,min:0"),
            &[DEPOSIT, Step::At(3 * S), withdraw(false)],
        );
    }

    #[test]
    fn tps_slots() {
        let mut b = budget("tower:0.5,ttl:1s,min:0");
        walk(
            &mut b,
            &[
                DEPOSIT,
                DEPOSIT,
                // 900 ms later the deposits are still valid.
                Step::At(901 * MS),
                withdraw(true),
                // A blank slate.
                Step::At((901 + 2001) * MS),
                DEPOSIT,
                Step::At((901 + 2001 + 301) * MS),
                DEPOSIT,
                Step::At((901 + 2001 + 301 + 801) * MS),
                DEPOSIT,
                // The first deposit has expired, the second combines with
                // the third.
                withdraw(true),
            ],
        );
        // And only those two: one more withdrawal of 2 fails.
        walk(
            &mut b,
            &[Step::At((901 + 2001 + 301 + 801) * MS), withdraw(false)],
        );
    }

    #[test]
    fn tps_reserve() {
        // min 5 over a 1 s TTL: five withdrawals, not six.
        let mut steps = vec![withdraw(true); 5];
        steps.push(withdraw(false));
        walk(&mut budget("tower:1,ttl:1s,min:5"), &steps);
    }

    #[test]
    fn the_default_is_tower_s_and_linkerd_s() {
        // `impl Default for TpsBudget`: new(10s, 10, 0.2); Linkerd's
        // controller's defaultRetryBudget: 10 per second, 0.2, 10 s.
        let s = spec("tower:0.2,ttl:10s,min:10");
        assert_eq!(s.amounts(), (1, 5));
        assert_eq!(s.reserve(), 10 * 10 * 5);
        assert_eq!(s.to_string(), "tower:0.2,ttl:10s,min:10");
    }

    #[test]
    fn withdrawals_are_whole_deposits() {
        // 1/0.3 = 3.33 → 3: a third of the deposits, not 30%.
        assert_eq!(spec("tower:0.3,ttl:1s,min:0").amounts(), (1, 3));
        assert_eq!(spec("tower:0.25,ttl:1s,min:0").amounts(), (1, 4));
        assert_eq!(spec("tower:0.1,ttl:1s,min:0").amounts(), (1, 10));
        assert_eq!(spec("tower:0.7,ttl:1s,min:0").amounts(), (1, 1));
        assert_eq!(spec("tower:1,ttl:1s,min:0").amounts(), (1, 1));
        // Above 1: per deposit D, D × ratio withdrawals.
        assert_eq!(spec("tower:2,ttl:1s,min:0").amounts(), (1_000, 500));
        assert_eq!(spec("tower:3,ttl:1s,min:0").amounts(), (1_000, 333));
        assert_eq!(spec("tower:1000,ttl:1s,min:0").amounts(), (1_000, 1));
        // 0: deposits gain nothing; only the reserve is withdrawn from.
        assert_eq!(spec("tower:0,ttl:1s,min:0").amounts(), (0, 1));
        let mut b = budget("tower:0.3,ttl:10s,min:0");
        let mut steps = vec![DEPOSIT; 9];
        steps.extend([withdraw(true), withdraw(true), withdraw(true)]);
        steps.push(withdraw(false));
        walk(&mut b, &steps);
    }

    #[test]
    fn the_reserve_counts_whole_seconds_of_the_ttl() {
        // ttl.as_secs(): 1.9 s is 1 s of reserve.
        assert_eq!(spec("tower:0.5,ttl:1900ms,min:3").reserve(), 3 * 2);
        assert_eq!(spec("tower:0,ttl:60s,min:1").reserve(), 60);
    }

    #[test]
    fn a_failure_deposits_only_if_it_is_not_retried() {
        let mut b = budget("tower:1,ttl:10s,min:0");
        walk(
            &mut b,
            &[
                // A failure the loop did not retry (not in retry_on)
                // deposits: the next retry decision finds 1.
                Step::End(F, None),
                Step::Start,
                withdraw(true),
                // A retryable failure refused by the budget deposits
                // nothing.
                Step::End(F, None),
                withdraw(false),
                Step::Start,
                Step::End(F, None),
                withdraw(false),
                // Nor does a timeout (the route timeout drops the future).
                Step::End(Outcome::Timeout, None),
                Step::Start,
                withdraw(false),
                // A retry that succeeds deposits like a first try.
                Step::End(Outcome::Success, Some(F)),
                withdraw(true),
            ],
        );
    }

    #[test]
    fn a_failed_withdrawal_still_rolls_the_slots() {
        // ttl 1 s: slots of 100 ms; a deposit is 1, a withdrawal 2. A
        // deposit at 0, then a failed withdrawal at 150 ms rolls over:
        // slot 0 takes the deposit, slot 1 is cleared, the clock restarts
        // at 150 ms with slot 2 next. At 980 ms (830 ms later) the next
        // roll-over clears 8 slots, 3 to 9 and 0: the deposit is gone.
        let mut rolled = budget("tower:0.5,ttl:1s,min:0");
        walk(
            &mut rolled,
            &[
                DEPOSIT,
                Step::At(150 * MS),
                withdraw(false),
                Step::At(980 * MS),
                DEPOSIT,
                withdraw(false),
            ],
        );
        // Without the withdrawal at 150 ms, the roll-over at 980 ms
        // commits the deposit to slot 0 and clears 9 slots, 1 to 9: it
        // still counts, with the new one.
        let mut unrolled = budget("tower:0.5,ttl:1s,min:0");
        walk(
            &mut unrolled,
            &[DEPOSIT, Step::At(980 * MS), DEPOSIT, withdraw(true)],
        );
    }

    /// Deposits every `gap` from 0 until `until`, then as many withdrawals
    /// as succeed at `until`: the balance then.
    fn balance_after_steady_deposits(gap: Nanos, until: Nanos) -> usize {
        let mut b = budget("tower:1,ttl:1s,min:0");
        let mut t = Nanos::ZERO;
        while t < until {
            b.attempt_ended(t, Outcome::Success, None);
            t += gap;
        }
        let mut withdrawn = 0;
        while b.may_retry(until, F) {
            b.take_retry(until, F);
            withdrawn += 1;
        }
        withdrawn
    }

    #[test]
    fn steady_traffic_off_the_slot_grid_keeps_half_the_ttl() {
        // TTL 1 s, slots of 100 ms. Deposits every 10 ms: each roll-over
        // comes exactly 100 ms after the last (`diff < window` is false,
        // `diff > window` too), commits 10 deposits and moves on one slot:
        // all ten slots count, the whole TTL's 100 deposits.
        assert_eq!(balance_after_steady_deposits(10 * MS, 3_000 * MS), 100);
        // Every 7 ms: a roll-over comes 105 ms after the last (15 deposits),
        // and 105 ms > 100 ms makes tower's loop clear the next slot and
        // move on two. Every other slot is empty, so five slots of 15
        // count at 2,940 ms (28 roll-overs of 105 ms): 75 of the TTL's 143
        // deposits, about half of it.
        assert_eq!(balance_after_steady_deposits(7 * MS, 2_940 * MS), 75);
    }

    #[test]
    fn ranges_are_tower_s_asserts() {
        let err = |text: &str| {
            TowerBudgetSpec::parse(&Rule::read("budget", text).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(
            err("tower:0.2,ttl:500ms,min:10").ends_with("ttl must be a duration from 1s to 1m"),
            "{}",
            err("tower:0.2,ttl:500ms,min:10")
        );
        assert!(err("tower:0.2,ttl:61s,min:10").contains("ttl must be a duration from 1s to 1m"));
        assert!(
            err("tower:1001,ttl:10s,min:10")
                .ends_with("the value of tower must be a number from 0 to 1000")
        );
        assert!(err("tower:-0.1,ttl:10s,min:10").contains("from 0 to 1000"));
        assert!(
            err("tower:0.2,ttl:10s,min:2147483647")
                .ends_with("min must be a whole number from 0 to 2147483646")
        );
        assert!(err("tower:0.2,ttl:10s").contains("expected tower:RATIO"));
        assert_eq!(
            spec("tower:0.2,ttl:10s,min:2147483646").min_per_s,
            2_147_483_646
        );
    }

    #[test]
    fn long_gaps_clear_every_slot() {
        // An hour's gap: tower's loop clears the ring (and wraps round to
        // the slot just committed); the arithmetic here does the same.
        let mut b = budget("tower:1,ttl:1s,min:0");
        walk(
            &mut b,
            &[
                DEPOSIT,
                DEPOSIT,
                Step::At(3_600 * S + Nanos::from_ticks(7)),
                withdraw(false),
                DEPOSIT,
                withdraw(true),
            ],
        );
    }
}
