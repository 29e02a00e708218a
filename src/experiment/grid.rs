//! A grid of workloads: any registry parameter given a list of values, the
//! points their cartesian product.
//!
//! Points are numbered in row-major order over the axes in registry order
//! ([`PARAMS`]): the last axis varies fastest, as nested loops in that order
//! would visit them. A parameter with no axis keeps the default workload's
//! value, and an axis of one value does not change the numbering. Point `i`
//! is computed from `i` alone, so a grid of millions of points costs no
//! memory.

use crate::experiment::error::ExperimentError;
use crate::spec::RunSpec;
use crate::spec::params::{PARAMS, Param};

/// One parameter's values, each checked by the parameter when it was set.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The parameter.
    pub param: &'static Param,
    /// Its values, as given (each read by `param.set`).
    pub values: Vec<String>,
}

/// The axes of a grid, in registry order, at most one per parameter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    axes: Vec<Axis>,
}

impl Grid {
    /// Sets `param`'s values, replacing any it had: each is checked (and the
    /// first bad one returned with why); an empty list gives an empty grid.
    pub fn set(
        &mut self,
        param: &'static Param,
        values: Vec<String>,
    ) -> Result<(), ExperimentError> {
        for value in &values {
            param
                .check(value)
                .map_err(|reason| ExperimentError::Value {
                    value: value.clone(),
                    reason,
                })?;
        }
        match self.axes.iter_mut().find(|a| a.param == param) {
            Some(axis) => axis.values = values,
            None => {
                self.axes.push(Axis { param, values });
                let order = |a: &Axis| PARAMS.iter().position(|p| p == a.param);
                self.axes.sort_by_key(order);
            }
        }
        Ok(())
    }

    /// The values of `key`'s axis, if it has one.
    pub fn values(&self, key: &str) -> Option<&[String]> {
        self.axes
            .iter()
            .find(|a| a.param.key == key)
            .map(|a| a.values.as_slice())
    }

    /// The number of points (0 if any axis is empty). Panics past
    /// `usize::MAX`: check [`Grid::checked_len`] first for a grid a user gave.
    pub fn len(&self) -> usize {
        self.checked_len()
            .expect("a grid of fewer than usize::MAX points")
    }

    /// The number of points, or `None` if it does not fit a `usize`.
    pub fn checked_len(&self) -> Option<usize> {
        self.axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
    }

    /// Each axis's key and length, for messages: `policy 4 × clients 1000`.
    pub fn shape(&self) -> String {
        self.axes
            .iter()
            .map(|a| format!("{} {}", a.param.key, a.values.len()))
            .collect::<Vec<_>>()
            .join(" × ")
    }

    /// True if the grid has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parameters with more than one value: what varies.
    pub fn varying(&self) -> Vec<&'static Param> {
        self.axes
            .iter()
            .filter(|a| a.values.len() > 1)
            .map(|a| a.param)
            .collect()
    }

    /// Point `index` (< [`Grid::len`]) as a run spec.
    pub fn point(&self, index: usize) -> RunSpec {
        assert!(
            index < self.len(),
            "point {index} of a {}-point grid",
            self.len()
        );
        let mut spec = RunSpec::default();
        let mut rest = index;
        for axis in self.axes.iter().rev() {
            let value = &axis.values[rest % axis.values.len()];
            rest /= axis.values.len();
            (axis.param.set)(&mut spec, value).expect("axis values are checked when set");
        }
        spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyKind;
    use crate::spec::params::param;

    fn set(grid: &mut Grid, key: &str, values: &[&str]) {
        let values = values.iter().map(|v| v.to_string()).collect();
        grid.set(param(key).unwrap(), values).unwrap();
    }

    #[test]
    fn points_are_row_major_with_the_last_axis_fastest() {
        let mut grid = Grid::default();
        // Set out of registry order: the numbering follows the registry.
        set(&mut grid, "clients", &["10", "100", "1000"]);
        set(&mut grid, "policy", &["none", "full"]);
        assert_eq!(grid.len(), 6);
        let varying: Vec<_> = grid.varying().iter().map(|p| p.key).collect();
        assert_eq!(varying, ["policy", "clients"]);
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
        let mut grid = Grid::default();
        set(&mut grid, "base", &["1ms", "2ms"]);
        assert_eq!(grid.point(0).policy.step(), 1_000);
        assert_eq!(grid.point(1).policy.step(), 2_000);
    }

    #[test]
    fn an_empty_axis_empties_the_grid_and_a_bad_value_is_refused() {
        let mut grid = Grid::default();
        assert_eq!(grid.len(), 1);
        assert_eq!(grid.point(0), RunSpec::default());
        set(&mut grid, "clients", &[]);
        assert!(grid.is_empty());
        let err = grid
            .set(param("clients").unwrap(), vec!["5".into(), "0".into()])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value '0': expected a whole number from 1 to 100,000,000"
        );
    }
}
