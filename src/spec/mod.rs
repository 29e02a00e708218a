//! The typed description of one simulated workload, and the accepted range of
//! every parameter.
//!
//! Each parameter has one checker here, used both by the command line (so an
//! error names the flag) and by [`RunSpec::validate`] (for specs built in code
//! or read from files), so the accepted ranges are stated once.

use crate::base::format::group_thousands;
use crate::base::names::named;
use crate::base::time::{Micros, format_duration, parse_duration};
use crate::control::budget::{BudgetSpec, RetryAfter};
use crate::model::arrivals::Arrivals;
use crate::model::{ResourceKind, SlotResource};
use crate::policy::{CapMode, PolicyKind, PolicySpec};

/// Most clients in one run: a million-client run takes ~40 MB; this bound keeps
/// a typo from asking for terabytes.
pub const MAX_CLIENTS: u64 = 100_000_000;
/// Most replicate seeds in one command.
pub const MAX_SEEDS: u64 = 1_000_000;
/// Capacity bounds, requests per ms: from one per second to one per µs (the
/// clock's resolution).
pub const CAPACITY_RANGE: (f64, f64) = (0.001, 1_000.0);

/// Most attempts a client may be allowed.
pub const MAX_ATTEMPTS: u64 = 1_000_000_000;

/// One simulated workload: everything but the seed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// Clients, each wanting one successful call.
    pub clients: u32,
    /// What decides whether a call succeeds.
    pub resource: ResourceKind,
    /// The slot resource's capacity, requests per ms.
    pub capacity_per_ms: f64,
    /// When the clients make their first calls.
    pub arrivals: Arrivals,
    /// A window `[from, to)` in which every call to the slot resource fails, µs.
    pub down: Option<(Micros, Micros)>,
    /// The backoff policy and its parameters.
    pub policy: PolicySpec,
    /// Most attempts per client, first call included; `None` is unlimited.
    pub max_attempts: Option<u32>,
    /// No attempt starts later than this after the client's first call, µs.
    pub deadline_us: Option<Micros>,
    /// The window of the peak-retries metric, µs; `None` is one service time
    /// of the slot resource, or 1 ms for the others.
    pub window_us: Option<Micros>,
    /// How the clients' policy generators are seeded.
    pub seeding: Seeding,
    /// A retry budget shared by each fleet; `None` is unlimited.
    pub budget: Option<BudgetSpec>,
    /// Clients per budget fleet; `None` is one fleet of all clients.
    pub fleet: Option<u32>,
    /// What clients do with the slot resource's retry hint.
    pub retry_after: RetryAfter,
}

/// How the clients' policy generators are seeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Seeding {
    /// Every client's draws independent of every other's.
    #[default]
    Independent,
    /// Every client's generator seeded alike: the fleet bug of seed 002's
    /// failure table ("every client seeds its RNG from the same fixed value").
    Shared,
}

named!(Seeding, "seeding", {
    Seeding::Independent => "independent",
    Seeding::Shared => "shared",
});

/// Parses a retry budget (as `--budget` does); `none` is no budget.
pub fn parse_budget(text: &str) -> Result<Option<BudgetSpec>, String> {
    if text.trim() == "none" {
        return Ok(None);
    }
    text.parse().map(Some)
}

/// Parses a fleet size (as `--fleet` does).
pub fn parse_fleet(text: &str) -> Result<u32, String> {
    parse_count(text, 1, MAX_CLIENTS).map(|n| n as u32)
}

/// Parses a retry-hint mode (as `--retry-after` does).
pub fn parse_retry_after(text: &str) -> Result<RetryAfter, String> {
    text.parse()
}

/// Parses a seeding mode (as `--seeding` does).
pub fn parse_seeding(text: &str) -> Result<Seeding, String> {
    text.parse()
}

/// A parameter outside its accepted range. `key` is the parameter's name as
/// the command line spells it (without `--`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value '{value}' for {key}: {reason}")]
pub struct SpecError {
    /// The parameter.
    pub key: &'static str,
    /// The value given, as text.
    pub value: String,
    /// What is accepted.
    pub reason: String,
}

pub mod params;

/// The default first-retry delay: 100 ms (seed 002's `BASE_MS`).
pub const DEFAULT_BASE_US: Micros = 100_000;
/// The default cap: 20 s (seed 002's `CAP_MS`).
pub const DEFAULT_CAP_US: Micros = 20_000_000;
/// The default herd: 1,000 clients (seed 002's table).
pub const DEFAULT_CLIENTS: u32 = 1_000;

impl Default for RunSpec {
    /// The default workload of `herdsim run`, `sweep` and scenario files:
    /// seed 002's, with 1,000 clients under full jitter.
    fn default() -> Self {
        RunSpec::seed_002(PolicyKind::Full, DEFAULT_CLIENTS)
    }
}

impl RunSpec {
    /// Seed 002's workload for `clients` clients under `kind`: capacity 1 per
    /// ms, base 100 ms, cap 20 s, linear step equal to the base, no jitter
    /// factor, a one-slot peak window. The defaults of `herdsim run`.
    pub fn seed_002(kind: PolicyKind, clients: u32) -> RunSpec {
        RunSpec {
            clients,
            resource: ResourceKind::Slot,
            capacity_per_ms: 1.0,
            arrivals: Arrivals::Herd,
            down: None,
            policy: PolicySpec {
                kind,
                base_us: DEFAULT_BASE_US,
                cap_us: DEFAULT_CAP_US,
                step_us: None,
                jitter_factor: 0.0,
                first_exponent: 0,
                cap_mode: CapMode::Before,
            },
            max_attempts: None,
            deadline_us: None,
            window_us: None,
            seeding: Seeding::Independent,
            budget: None,
            fleet: None,
            retry_after: RetryAfter::Ignore,
        }
    }

    /// The slot's service time, ns.
    pub fn service_ns(&self) -> u64 {
        SlotResource::service_ns_for(self.capacity_per_ms)
    }

    /// The peak-retries window actually used, µs: the given one, or one service
    /// time rounded to the nearest µs.
    pub fn window(&self) -> Micros {
        self.window_us.unwrap_or_else(|| match self.resource {
            ResourceKind::Slot => ((self.service_ns() + 500) / 1_000).max(1),
            _ => crate::base::time::US_PER_MS,
        })
    }

    /// Roughly the latest simulated time this workload could reach, µs: the
    /// last first call (Poisson arrivals: 50 times their mean span), then for
    /// each client one wait of at most the largest delay (plus a retry hint of
    /// the whole backlog) and one service time, after any outage window. A
    /// guard against clocks wrapping, not a prediction.
    fn horizon_us(&self) -> f64 {
        let clients = f64::from(self.clients);
        let service = (self.service_ns() as f64 / 1e3).max(1.0);
        let hint = if self.retry_after == RetryAfter::Ignore {
            0.0
        } else {
            clients * service
        };
        let arrivals = match self.arrivals {
            Arrivals::Herd => 0.0,
            Arrivals::Uniform { window_us } => window_us as f64,
            Arrivals::Poisson { rate_per_ms } => clients * 1e3 / rate_per_ms * 50.0,
        };
        let outage = self.down.map_or(0.0, |(_, to)| to as f64) + 30e6 + 1e6;
        arrivals + outage + clients * (self.policy.max_delay_us() as f64 + service + hint)
    }

    /// Simulated time is whole µs in a `u64`, and the slot's clock counts ns:
    /// a workload that could run past `u64::MAX` ns (584 years) is refused
    /// rather than let its clock wrap.
    fn check_horizon(&self) -> Result<(), String> {
        const LIMIT_US: f64 = u64::MAX as f64 / 1e3;
        let horizon = self.horizon_us();
        if horizon < LIMIT_US {
            Ok(())
        } else {
            Err(format!(
                "with {} clients this run could last {:.0} years of simulated time; \
                 herdsim's clock stops at 584 years: lower cap or clients",
                group_thousands(u64::from(self.clients)),
                horizon / 1e6 / 3.156e7
            ))
        }
    }

    /// Checks every parameter against its accepted range (each value shown
    /// and read back through its registry entry, so a spec built in code
    /// meets the same ranges as the command line and scenario files), then
    /// the rules that tie parameters together.
    pub fn validate(&self) -> Result<(), SpecError> {
        let mut scratch = self.clone();
        for param in &params::PARAMS {
            if let Some(value) = (param.show)(self)
                && let Err(reason) = (param.set)(&mut scratch, &value)
            {
                return Err(SpecError {
                    key: param.key,
                    value,
                    reason,
                });
            }
        }
        let fail = |key, value: String, reason: String| Err(SpecError { key, value, reason });
        let p = &self.policy;
        // A zero delay never lets simulated time pass for the client that
        // draws it: with a resource that answers at once, it would spin.
        if p.kind == PolicyKind::NoBackoff
            && self.resource != ResourceKind::Occ
            && self.max_attempts.is_none()
        {
            return fail(
                "policy",
                p.kind.name().to_string(),
                format!(
                    "no-backoff retries at the same instant forever on the {} resource: \
                     give max_attempts, or use the occ resource",
                    self.resource
                ),
            );
        }
        if self.resource != ResourceKind::Slot && self.retry_after != RetryAfter::Ignore {
            return fail(
                "retry_after",
                self.retry_after.name().to_string(),
                "retry hints come from the slot resource only".into(),
            );
        }
        if let Err(reason) = self.check_horizon() {
            return fail("cap", format_duration(p.cap_us), reason);
        }
        if self.resource != ResourceKind::Slot && self.down.is_some() {
            return fail(
                "down",
                self.down
                    .map(|(a, b)| format_window(a, b))
                    .unwrap_or_default(),
                "an outage window applies to the slot resource only".into(),
            );
        }
        Ok(())
    }
}

/// The largest first-retry exponent.
pub const MAX_FIRST_EXPONENT: u32 = 16;

/// An outage window `[from, to)` with `from < to`.
pub fn check_down(from: Micros, to: Micros) -> Result<(Micros, Micros), String> {
    if from < to {
        Ok((from, to))
    } else {
        Err("expected <from>..<to> with from before to, such as 5s..15s".to_string())
    }
}

/// `5s..15s`.
pub fn format_window(from: Micros, to: Micros) -> String {
    format!("{}..{}", format_duration(from), format_duration(to))
}

/// Parses an outage window `<from>..<to>` (as `--down` does).
pub fn parse_down(text: &str) -> Result<(Micros, Micros), String> {
    let (from, to) = text
        .split_once("..")
        .ok_or_else(|| "expected <from>..<to> with from before to, such as 5s..15s".to_string())?;
    check_down(parse_duration(from)?, parse_duration(to)?)
}

/// Parses a resource model's name (as `--resource` does).
pub fn parse_resource(text: &str) -> Result<ResourceKind, String> {
    text.parse()
}

/// Parses an arrival pattern (as `--arrivals` does).
pub fn parse_arrivals(text: &str) -> Result<Arrivals, String> {
    text.parse()
}

/// Parses a maximum number of attempts (as `--max-attempts` does).
pub fn parse_max_attempts(text: &str) -> Result<u32, String> {
    parse_count(text, 1, MAX_ATTEMPTS).map(|n| n as u32)
}

/// Parses a cap mode (as `--cap-mode` does).
pub fn parse_cap_mode(text: &str) -> Result<CapMode, String> {
    text.parse()
}

/// Parses a first-retry exponent (as `--first-exponent` does).
pub fn parse_first_exponent(text: &str) -> Result<u32, String> {
    parse_count(text, 0, u64::from(MAX_FIRST_EXPONENT)).map(|n| n as u32)
}

/// A whole number in `min..=max`.
pub fn check_count(n: u64, min: u64, max: u64) -> Result<u64, String> {
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(count_range(min, max))
    }
}

/// Parses a whole number in `min..=max` (negative numbers and junk get the
/// same message: what is accepted).
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let n: u64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| count_range(min, max))?;
    check_count(n, min, max)
}

fn count_range(min: u64, max: u64) -> String {
    format!(
        "expected a whole number from {} to {}",
        group_thousands(min),
        group_thousands(max)
    )
}

/// A capacity in requests per ms.
pub fn check_capacity(c: f64) -> Result<f64, String> {
    let (lo, hi) = CAPACITY_RANGE;
    if c.is_finite() && (lo..=hi).contains(&c) {
        Ok(c)
    } else {
        Err(format!(
            "expected requests per ms, a number from {lo} to {hi} (fractions allowed)"
        ))
    }
}

/// Parses a capacity in requests per ms.
pub fn parse_capacity(text: &str) -> Result<f64, String> {
    check_capacity(text.trim().parse().unwrap_or(f64::NAN))
}

/// A jitter factor in `[0, 1]`.
pub fn check_jitter_factor(f: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&f) {
        Ok(f)
    } else {
        Err("expected a number from 0 to 1 (0 is off)".to_string())
    }
}

/// Parses a jitter factor in `[0, 1]`.
pub fn parse_jitter_factor(text: &str) -> Result<f64, String> {
    check_jitter_factor(text.trim().parse().unwrap_or(f64::NAN))
}

/// A duration of at least 1 µs.
pub fn check_positive_duration(us: Micros) -> Result<Micros, String> {
    if us >= 1 {
        Ok(us)
    } else {
        Err("expected a duration of at least 1us, such as 100ms or 20s".to_string())
    }
}

/// Parses a duration of at least 1 µs.
pub fn parse_positive_duration(text: &str) -> Result<Micros, String> {
    check_positive_duration(crate::base::time::parse_duration(text)?)
}

/// Parses a policy name (as `--policy` does).
pub fn parse_policy(text: &str) -> Result<PolicyKind, String> {
    text.parse()
}

/// Parses a client count (as `--clients` does).
pub fn parse_clients(text: &str) -> Result<u32, String> {
    parse_count(text, 1, MAX_CLIENTS).map(|n| n as u32)
}

/// Parses a replicate count (as `--seeds` does).
pub fn parse_replicates(text: &str) -> Result<u32, String> {
    parse_count(text, 1, MAX_SEEDS).map(|n| n as u32)
}

/// Parses a master seed (as `--seed` does).
pub fn parse_master_seed(text: &str) -> Result<u64, String> {
    parse_count(text, 0, u64::MAX)
}

/// Parses a duration that may be zero (as `--step` does).
pub fn parse_step(text: &str) -> Result<Micros, String> {
    parse_duration(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyKind;

    fn spec() -> RunSpec {
        RunSpec::seed_002(PolicyKind::Full, DEFAULT_CLIENTS)
    }

    #[test]
    fn the_default_workload_is_valid_and_its_window_is_one_slot() {
        assert_eq!(spec().validate(), Ok(()));
        assert_eq!(spec().window(), 1_000);
        let fast = RunSpec {
            capacity_per_ms: 3.0,
            ..spec()
        };
        assert_eq!(fast.window(), 333);
    }

    #[test]
    fn each_bad_parameter_is_named() {
        let mut s = spec();
        s.clients = 0;
        assert_eq!(s.validate().unwrap_err().key, "clients");
        let mut s = spec();
        s.capacity_per_ms = 0.0;
        assert_eq!(s.validate().unwrap_err().key, "capacity");
        s.capacity_per_ms = f64::NAN;
        assert_eq!(s.validate().unwrap_err().key, "capacity");
        let mut s = spec();
        s.policy.base_us = 0;
        assert_eq!(s.validate().unwrap_err().key, "base");
        let mut s = spec();
        s.policy.jitter_factor = 1.5;
        let err = s.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value '1.5' for jitter_factor: expected a number from 0 to 1 (0 is off)"
        );
        let mut s = spec();
        s.window_us = Some(0);
        assert_eq!(s.validate().unwrap_err().key, "window");
    }

    #[test]
    fn a_cap_below_the_base_is_valid() {
        let mut s = spec();
        s.policy.cap_us = 1_000;
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn counts_parse_with_their_range_in_the_error() {
        assert_eq!(parse_count("1_000", 1, 10_000), Ok(1_000));
        assert_eq!(
            parse_count("-5", 1, 100_000_000).unwrap_err(),
            "expected a whole number from 1 to 100,000,000"
        );
        assert!(parse_count("0", 1, 5).is_err());
        assert!(parse_count("6", 1, 5).is_err());
        assert!(parse_count("three", 1, 5).is_err());
    }
}
