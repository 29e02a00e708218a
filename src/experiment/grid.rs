//! A grid of workloads: every parameter a list of values, the points their
//! cartesian product.
//!
//! Points are numbered in row-major order over [`AXES`]: the last axis varies
//! fastest, as nested loops in that order would visit them. Point `i` is
//! computed from `i` alone, so a grid of millions of points costs no memory.

use crate::base::time::Micros;
use crate::control::budget::{BudgetSpec, RetryAfter};
use crate::model::ResourceKind;
use crate::model::arrivals::Arrivals;
use crate::policy::{CapMode, PolicyKind, PolicySpec};
use crate::spec::{DEFAULT_BASE_US, DEFAULT_CAP_US, DEFAULT_CLIENTS, RunSpec, Seeding};

/// The grid's axes, in numbering order, as scenario keys spell them.
pub const AXES: [&str; 19] = [
    "policy",
    "clients",
    "capacity",
    "base",
    "cap",
    "step",
    "jitter_factor",
    "window",
    "resource",
    "arrivals",
    "down",
    "max_attempts",
    "deadline",
    "first_exponent",
    "cap_mode",
    "seeding",
    "budget",
    "fleet",
    "retry_after",
];

/// Values of every parameter. A single value is an axis of length one.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Backoff policies.
    pub policy: Vec<PolicyKind>,
    /// Client counts.
    pub clients: Vec<u32>,
    /// Capacities, requests per ms.
    pub capacity: Vec<f64>,
    /// Policy bases, µs.
    pub base: Vec<Micros>,
    /// Policy caps, µs.
    pub cap: Vec<Micros>,
    /// Linear steps, µs; `None` is the point's base.
    pub step: Vec<Option<Micros>>,
    /// Proportional jitter factors.
    pub jitter_factor: Vec<f64>,
    /// Peak windows, µs; `None` is one service time.
    pub window: Vec<Option<Micros>>,
    /// Resource models.
    pub resource: Vec<ResourceKind>,
    /// Arrival patterns.
    pub arrivals: Vec<Arrivals>,
    /// Slot outage windows `[from, to)`, µs; `None` is always up.
    pub down: Vec<Option<(Micros, Micros)>>,
    /// Most attempts per client; `None` is unlimited.
    pub max_attempts: Vec<Option<u32>>,
    /// Deadlines after each client's first call, µs; `None` is none.
    pub deadline: Vec<Option<Micros>>,
    /// Exponent offsets of the exponential family.
    pub first_exponent: Vec<u32>,
    /// Where equal and full jitter apply the cap.
    pub cap_mode: Vec<CapMode>,
    /// How the clients' generators are seeded.
    pub seeding: Vec<Seeding>,
    /// Retry budgets; `None` is unlimited.
    pub budget: Vec<Option<BudgetSpec>>,
    /// Clients per budget fleet; `None` is all.
    pub fleet: Vec<Option<u32>>,
    /// What clients do with retry hints.
    pub retry_after: Vec<RetryAfter>,
}

impl Default for Grid {
    /// The default workload of `herdsim run`: full jitter, 1000 clients, 1/ms,
    /// base 100 ms, cap 20 s.
    fn default() -> Self {
        Grid {
            policy: vec![PolicyKind::Full],
            clients: vec![DEFAULT_CLIENTS],
            capacity: vec![1.0],
            base: vec![DEFAULT_BASE_US],
            cap: vec![DEFAULT_CAP_US],
            step: vec![None],
            jitter_factor: vec![0.0],
            window: vec![None],
            resource: vec![ResourceKind::Slot],
            arrivals: vec![Arrivals::Herd],
            down: vec![None],
            max_attempts: vec![None],
            deadline: vec![None],
            first_exponent: vec![0],
            cap_mode: vec![CapMode::Before],
            seeding: vec![Seeding::Independent],
            budget: vec![None],
            fleet: vec![None],
            retry_after: vec![RetryAfter::Ignore],
        }
    }
}

impl Grid {
    /// Each axis's length, in [`AXES`] order.
    pub fn lengths(&self) -> [usize; AXES.len()] {
        [
            self.policy.len(),
            self.clients.len(),
            self.capacity.len(),
            self.base.len(),
            self.cap.len(),
            self.step.len(),
            self.jitter_factor.len(),
            self.window.len(),
            self.resource.len(),
            self.arrivals.len(),
            self.down.len(),
            self.max_attempts.len(),
            self.deadline.len(),
            self.first_exponent.len(),
            self.cap_mode.len(),
            self.seeding.len(),
            self.budget.len(),
            self.fleet.len(),
            self.retry_after.len(),
        ]
    }

    /// The number of points (0 if any axis is empty).
    pub fn len(&self) -> usize {
        self.lengths().iter().product()
    }

    /// True if the grid has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names of the axes with more than one value: what varies.
    pub fn varying(&self) -> Vec<&'static str> {
        AXES.iter()
            .zip(self.lengths())
            .filter(|(_, n)| *n > 1)
            .map(|(name, _)| *name)
            .collect()
    }

    /// Point `index` (< [`Grid::len`]) as a run spec.
    pub fn point(&self, index: usize) -> RunSpec {
        assert!(
            index < self.len(),
            "point {index} of a {}-point grid",
            self.len()
        );
        let lengths = self.lengths();
        let mut at = [0usize; AXES.len()];
        let mut rest = index;
        for axis in (0..AXES.len()).rev() {
            at[axis] = rest % lengths[axis];
            rest /= lengths[axis];
        }
        let base_us = self.base[at[3]];
        RunSpec {
            clients: self.clients[at[1]],
            resource: self.resource[at[8]],
            capacity_per_ms: self.capacity[at[2]],
            arrivals: self.arrivals[at[9]],
            down: self.down[at[10]],
            policy: PolicySpec {
                kind: self.policy[at[0]],
                base_us,
                cap_us: self.cap[at[4]],
                step_us: self.step[at[5]].unwrap_or(base_us),
                jitter_factor: self.jitter_factor[at[6]],
                first_exponent: self.first_exponent[at[13]],
                cap_mode: self.cap_mode[at[14]],
            },
            max_attempts: self.max_attempts[at[11]],
            deadline_us: self.deadline[at[12]],
            window_us: self.window[at[7]],
            seeding: self.seeding[at[15]],
            budget: self.budget[at[16]],
            fleet: self.fleet[at[17]],
            retry_after: self.retry_after[at[18]],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_row_major_with_the_last_axis_fastest() {
        let grid = Grid {
            policy: vec![PolicyKind::None, PolicyKind::Full],
            clients: vec![10, 100, 1_000],
            ..Grid::default()
        };
        assert_eq!(grid.len(), 6);
        assert_eq!(grid.varying(), ["policy", "clients"]);
        let points: Vec<_> = (0..6)
            .map(|i| {
                let p = grid.point(i);
                (p.policy.kind, p.clients)
            })
            .collect();
        assert_eq!(
            points,
            [
                (PolicyKind::None, 10),
                (PolicyKind::None, 100),
                (PolicyKind::None, 1_000),
                (PolicyKind::Full, 10),
                (PolicyKind::Full, 100),
                (PolicyKind::Full, 1_000),
            ]
        );
    }

    #[test]
    fn the_step_defaults_to_each_points_base() {
        let grid = Grid {
            base: vec![1_000, 2_000],
            ..Grid::default()
        };
        assert_eq!(grid.point(0).policy.step_us, 1_000);
        assert_eq!(grid.point(1).policy.step_us, 2_000);
    }

    #[test]
    fn an_empty_axis_empties_the_grid() {
        let grid = Grid {
            clients: vec![],
            ..Grid::default()
        };
        assert!(grid.is_empty());
    }
}
