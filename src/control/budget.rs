//! Retry budgets shared by a fleet of clients, and server retry hints.
//!
//! A budget is consulted before every retry; a retry it refuses ends that
//! client as given up. Clients `0..N` form fleet 0, `N..2N` fleet 1, and so
//! on (`--fleet N`); each fleet has its own budget.

use std::fmt;

use crate::base::names::named;
use crate::control::error::ControlError;
use std::str::FromStr;

/// A retry budget's rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetSpec {
    /// The AWS SDK retry quota: a bucket of `capacity` tokens, full at the
    /// start; a retry takes `cost`, a successful retry returns its cost and a
    /// first-try success adds `refund`, never above the capacity.
    Tokens {
        /// The bucket's size (AWS: 500).
        capacity: u64,
        /// Tokens a retry takes (AWS: 5).
        cost: u64,
        /// Tokens a first-try success adds (AWS: 1).
        refund: u64,
    },
    /// Finagle and Envoy style: retries at most `ratio` of the requests (first
    /// calls) seen so far, plus a floor of `min` retries.
    Ratio {
        /// Retries allowed per request.
        ratio: f64,
        /// Retries allowed with no requests at all.
        min: u64,
    },
}

/// What `--budget` accepts, for error messages.
pub const BUDGET_SYNTAX: &str = "expected tokens:CAPACITY,cost:N,refund:N (such as tokens:500,cost:5,refund:1) or ratio:R,min:N (such as ratio:0.2,min:10)";

impl FromStr for BudgetSpec {
    type Err = ControlError;

    fn from_str(text: &str) -> Result<Self, ControlError> {
        let bad = || ControlError::Budget {
            text: text.to_string(),
        };
        let mut fields = text.trim().split(',');
        let (kind, first) = fields
            .next()
            .and_then(|f| f.split_once(':'))
            .ok_or_else(bad)?;
        let mut named = |name: &str| -> Result<&str, ControlError> {
            fields
                .next()
                .and_then(|f| f.strip_prefix(name))
                .and_then(|f| f.strip_prefix(':'))
                .ok_or_else(bad)
        };
        let count = |v: &str| v.trim().parse::<u64>().map_err(|_| bad());
        let spec = match kind {
            "tokens" => {
                let capacity = count(first)?;
                let cost = count(named("cost")?)?;
                let refund = count(named("refund")?)?;
                if capacity == 0 || cost == 0 {
                    return Err(ControlError::EmptyTokens {
                        text: text.to_string(),
                    });
                }
                BudgetSpec::Tokens {
                    capacity,
                    cost,
                    refund,
                }
            }
            "ratio" => {
                let ratio: f64 = first.trim().parse().map_err(|_| bad())?;
                let min = count(named("min")?)?;
                if !(ratio.is_finite() && (0.0..=1_000.0).contains(&ratio)) {
                    return Err(ControlError::Ratio {
                        text: text.to_string(),
                    });
                }
                BudgetSpec::Ratio { ratio, min }
            }
            _ => return Err(bad()),
        };
        if fields.next().is_some() {
            return Err(bad());
        }
        Ok(spec)
    }
}

impl fmt::Display for BudgetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetSpec::Tokens {
                capacity,
                cost,
                refund,
            } => {
                write!(f, "tokens:{capacity},cost:{cost},refund:{refund}")
            }
            BudgetSpec::Ratio { ratio, min } => write!(f, "ratio:{ratio},min:{min}"),
        }
    }
}

/// One fleet's budget as the run goes.
#[derive(Debug, Clone, Copy, Default)]
struct FleetState {
    tokens: u64,
    requests: u64,
    retries: u64,
}

/// The budgets of every fleet in a run.
#[derive(Debug, Clone)]
pub struct Budget {
    spec: BudgetSpec,
    fleet_size: u32,
    fleets: Vec<FleetState>,
}

impl Budget {
    /// Budgets for `clients` clients in fleets of `fleet_size`.
    pub fn new(spec: BudgetSpec, clients: u32, fleet_size: u32) -> Self {
        let fleet_size = fleet_size.max(1);
        let count = clients.div_ceil(fleet_size).max(1) as usize;
        let tokens = match spec {
            BudgetSpec::Tokens { capacity, .. } => capacity,
            BudgetSpec::Ratio { .. } => 0,
        };
        Budget {
            spec,
            fleet_size,
            fleets: vec![
                FleetState {
                    tokens,
                    ..FleetState::default()
                };
                count
            ],
        }
    }

    fn fleet(&mut self, client: u32) -> &mut FleetState {
        &mut self.fleets[(client / self.fleet_size) as usize]
    }

    /// `client` made its first call.
    pub fn request(&mut self, client: u32) {
        self.fleet(client).requests += 1;
    }

    /// May `client` retry? If so, the retry is taken from its fleet's budget.
    pub fn allow_retry(&mut self, client: u32) -> bool {
        let spec = self.spec;
        let fleet = self.fleet(client);
        let allowed = match spec {
            BudgetSpec::Tokens { cost, .. } => {
                let ok = fleet.tokens >= cost;
                if ok {
                    fleet.tokens -= cost;
                }
                ok
            }
            BudgetSpec::Ratio { ratio, min } => {
                (fleet.retries + 1) as f64 <= min as f64 + ratio * fleet.requests as f64
            }
        };
        fleet.retries += u64::from(allowed);
        allowed
    }

    /// `client` succeeded, on a retry or at its first try.
    pub fn success(&mut self, client: u32, on_retry: bool) {
        let spec = self.spec;
        let fleet = self.fleet(client);
        if let BudgetSpec::Tokens {
            capacity,
            cost,
            refund,
        } = spec
        {
            let credit = if on_retry { cost } else { refund };
            fleet.tokens = (fleet.tokens + credit).min(capacity);
        }
    }
}

/// What a client does with the slot resource's retry hint (its estimate of
/// how long its backlog takes to drain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryAfter {
    /// Wait the policy's delay.
    #[default]
    Ignore,
    /// Wait `max(hint, delay)`: the hint as a floor.
    Floor,
    /// Wait `hint + delay`: the hint as a floor with the policy's jitter on top
    /// (seed 004: `retry_after + rand·ceiling`).
    FloorJitter,
}

impl RetryAfter {
    /// The wait for a policy `delay` and a server `hint`.
    #[inline]
    pub fn wait(self, delay: u64, hint: u64) -> u64 {
        match self {
            RetryAfter::Ignore => delay,
            RetryAfter::Floor => delay.max(hint),
            RetryAfter::FloorJitter => delay.saturating_add(hint),
        }
    }
}

named!(RetryAfter, "retry-after mode", {
    RetryAfter::Ignore => "ignore",
    RetryAfter::Floor => "floor",
    RetryAfter::FloorJitter => "floor+jitter",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_syntax() {
        let t: BudgetSpec = "tokens:500,cost:5,refund:1".parse().unwrap();
        assert_eq!(
            t,
            BudgetSpec::Tokens {
                capacity: 500,
                cost: 5,
                refund: 1
            }
        );
        assert_eq!(t.to_string(), "tokens:500,cost:5,refund:1");
        let r: BudgetSpec = "ratio:0.2,min:10".parse().unwrap();
        assert_eq!(
            r,
            BudgetSpec::Ratio {
                ratio: 0.2,
                min: 10
            }
        );
        for bad in [
            "tokens:500",
            "tokens:0,cost:5,refund:1",
            "ratio:-1,min:3",
            "ratio:0.2",
            "bucket:5",
            "tokens:5,cost:1,refund:1,x:2",
            "ratio:0.1,max:3",
        ] {
            let err = bad.parse::<BudgetSpec>().unwrap_err().to_string();
            assert!(!err.contains('\n'), "{bad}: {err}");
        }
    }

    #[test]
    fn the_aws_quota_drains_by_five_and_refills() {
        let mut b = Budget::new("tokens:10,cost:5,refund:1".parse().unwrap(), 4, 4);
        assert!(b.allow_retry(0));
        assert!(b.allow_retry(1));
        assert!(!b.allow_retry(2), "empty after two retries");
        b.success(0, true); // returns 5
        assert!(b.allow_retry(2));
        b.success(3, false); // adds 1: 1 token, not enough
        assert!(!b.allow_retry(3));
    }

    #[test]
    fn fleets_have_their_own_budgets() {
        let mut b = Budget::new("tokens:5,cost:5,refund:0".parse().unwrap(), 4, 2);
        assert!(b.allow_retry(0));
        assert!(!b.allow_retry(1));
        assert!(b.allow_retry(2), "fleet 1 is untouched");
    }

    #[test]
    fn retry_after_modes() {
        assert_eq!(RetryAfter::Ignore.wait(10, 50), 10);
        assert_eq!(RetryAfter::Floor.wait(10, 50), 50);
        assert_eq!(RetryAfter::Floor.wait(80, 50), 80);
        assert_eq!(RetryAfter::FloorJitter.wait(10, 50), 60);
        for mode in ["ignore", "floor", "floor+jitter"] {
            assert_eq!(mode.parse::<RetryAfter>().unwrap().name(), mode);
        }
    }
}
