//! A grid of workloads: any registry parameter given a list of values, the
//! points their cartesian product.
//!
//! Points are numbered in row-major order over the axes in registry order
//! ([`PARAMS`]): the last axis varies fastest, as nested loops in that order
//! would visit them. A grid may also have **variants**, each a few
//! parameters set together (a scenario's `[[variant]]` tables): the points
//! are then every variant × the axes' product, the variant varying slowest,
//! so settings of different parameters (a budget, a breaker, a discipline)
//! can be set side by side without crossing them. A parameter with no axis keeps the default workload's
//! value, and an axis of one value does not change the numbering. Point `i`
//! is computed from `i` alone, so a grid of millions of points costs no
//! memory.

use crate::base::fingerprint::Fingerprint;
use crate::experiment::error::ExperimentError;
use crate::spec::RunSpec;
use crate::spec::params::{PARAMS, Param, parameter_fields};

/// One parameter's values, each checked by the parameter when it was set.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The parameter.
    pub param: &'static Param,
    /// Its values, as given (each read by `param.set`).
    pub values: Vec<String>,
}

/// The axes of a grid, in registry order, at most one per parameter, and
/// its variants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    axes: Vec<Axis>,
    /// Each variant's parameters and values (checked when added).
    variants: Vec<Vec<(&'static Param, String)>>,
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
            check(param, value)?;
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

    /// Adds a variant: `settings` applied together on top of the axes' values
    /// (each value checked, the first bad one returned with why).
    pub fn add_variant(
        &mut self,
        settings: Vec<(&'static Param, String)>,
    ) -> Result<(), ExperimentError> {
        for (param, value) in &settings {
            check(param, value)?;
        }
        self.variants.push(settings);
        Ok(())
    }

    /// True if some variant sets `param`.
    pub fn variant_sets(&self, param: &Param) -> bool {
        self.variants.iter().flatten().any(|(p, _)| *p == param)
    }

    /// The variant point `index` takes its settings from, if the grid has
    /// variants.
    pub fn variant_of(&self, index: usize) -> Option<usize> {
        let axes = self.axes_len()?.max(1);
        (!self.variants.is_empty()).then_some(index / axes)
    }

    /// The number of variants (0: none, the axes alone).
    pub fn variants(&self) -> usize {
        self.variants.len()
    }

    /// The values of `key`'s axis, if it has one.
    pub fn values(&self, key: &str) -> Option<&[String]> {
        self.axes
            .iter()
            .find(|a| a.param.key == key)
            .map(|a| a.values.as_slice())
    }

    /// Every value `key` takes in the grid: its axis's and its variants'.
    pub fn values_anywhere<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let axis = self.values(key).unwrap_or_default().iter();
        let variants = self
            .variants
            .iter()
            .flatten()
            .filter(move |(p, _)| p.key == key)
            .map(|(_, v)| v);
        axis.chain(variants).map(String::as_str)
    }

    /// The number of points (0 if any axis is empty). Panics past
    /// `usize::MAX`: check [`Grid::checked_len`] first for a grid a user gave.
    pub fn len(&self) -> usize {
        self.checked_len()
            .expect("a grid of fewer than usize::MAX points")
    }

    /// The number of points, or `None` if it does not fit a `usize`.
    pub fn checked_len(&self) -> Option<usize> {
        self.axes_len()?.checked_mul(self.variants.len().max(1))
    }

    /// The points of the axes alone.
    fn axes_len(&self) -> Option<usize> {
        self.axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
    }

    /// Each axis's key and length, for messages: `policy 4 × clients 1000`.
    pub fn shape(&self) -> String {
        let variants =
            (!self.variants.is_empty()).then(|| format!("variant {}", self.variants.len()));
        variants
            .into_iter()
            .chain(
                self.axes
                    .iter()
                    .map(|a| format!("{} {}", a.param.key, a.values.len())),
            )
            .collect::<Vec<_>>()
            .join(" × ")
    }

    /// True if the grid has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parameters with more than one value, or set by a variant: what
    /// varies, in registry order.
    pub fn varying(&self) -> Vec<&'static Param> {
        PARAMS
            .iter()
            .filter(|p| {
                self.axes
                    .iter()
                    .any(|a| a.param == *p && a.values.len() > 1)
                    || self.variants.iter().flatten().any(|(q, _)| q == p)
            })
            .collect()
    }

    /// Adds what makes the grid's points to `fingerprint`: the first point's
    /// parameters, then each varying axis's key and values, each value as
    /// its parameter shows it (so `100ms` and `0.1s` are one grid). Two grids
    /// with one fingerprint have the same points in the same order.
    pub fn fingerprint(&self, mut fingerprint: Fingerprint) -> Fingerprint {
        if self.is_empty() {
            return fingerprint.field("empty");
        }
        for field in parameter_fields(&self.point(0)) {
            fingerprint = fingerprint.field(&field);
        }
        for axis in self.axes.iter().filter(|a| a.values.len() > 1) {
            fingerprint = fingerprint.field(axis.param.key);
            for value in &axis.values {
                fingerprint = fingerprint.field(&shown(axis.param, value));
            }
        }
        for variant in &self.variants {
            fingerprint = fingerprint.field("variant");
            for (param, value) in variant {
                fingerprint = fingerprint.field(param.key).field(&shown(param, value));
            }
        }
        fingerprint
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
        // What is left is the variant, the slowest.
        if let Some(variant) = self.variants.get(rest) {
            for (param, value) in variant {
                (param.set)(&mut spec, value).expect("variant values are checked when added");
            }
        }
        spec
    }
}

/// `value` checked by `param`, or why not.
fn check(param: &Param, value: &str) -> Result<(), ExperimentError> {
    param.check(value).map_err(|reason| ExperimentError::Value {
        value: value.to_string(),
        reason,
    })
}

/// `value` as `param` shows it (`0.1s` as `100ms`): one spelling per value.
fn shown(param: &Param, value: &str) -> String {
    let mut spec = RunSpec::default();
    (param.set)(&mut spec, value).expect("grid values are checked when set");
    (param.show)(&spec).unwrap_or_else(|| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;
    use crate::policy::PolicyKind;
    use crate::spec::params::param;

    fn set(grid: &mut Grid, key: &str, values: &[&str]) {
        let values = values.iter().map(|v| v.to_string()).collect();
        grid.set(param(key).unwrap(), values).unwrap();
    }

    #[test]
    fn a_fingerprint_is_the_points_not_their_spelling() {
        let print = |axes: &[(&str, &[&str])]| {
            let mut grid = Grid::default();
            for (key, values) in axes {
                set(&mut grid, key, values);
            }
            grid.fingerprint(Fingerprint::default())
        };
        let base = print(&[("policy", &["none", "full"]), ("base", &["100ms", "1s"])]);
        // The same values spelled otherwise, an axis of one default value.
        let same = [
            print(&[("policy", &["none", "full"]), ("base", &["0.1s", "1000ms"])]),
            print(&[
                ("policy", &["none", "full"]),
                ("base", &["100ms", "1s"]),
                ("clients", &["1000"]),
            ]),
        ];
        assert!(same.iter().all(|s| *s == base));
        // Another value, another order, a fixed value changed.
        let other = [
            print(&[("policy", &["none", "full"]), ("base", &["100ms", "2s"])]),
            print(&[("policy", &["full", "none"]), ("base", &["100ms", "1s"])]),
            print(&[
                ("policy", &["none", "full"]),
                ("base", &["100ms", "1s"]),
                ("clients", &["999"]),
            ]),
        ];
        assert!(other.iter().all(|o| *o != base));
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
    fn variants_set_their_parameters_together_slowest_of_all() {
        let mut grid = Grid::default();
        set(&mut grid, "clients", &["10", "100"]);
        let plain = grid.fingerprint(Fingerprint::default());
        let budget = param("budget").unwrap();
        let breaker = param("breaker").unwrap();
        grid.add_variant(vec![]).unwrap();
        grid.add_variant(vec![(budget, "ratio:0.1,min:1".into())])
            .unwrap();
        grid.add_variant(vec![
            (breaker, "cumulative:0.1".into()),
            (param("fleet").unwrap(), "1".into()),
        ])
        .unwrap();
        assert_eq!(grid.len(), 6);
        assert_eq!(grid.shape(), "variant 3 × clients 2");
        let keys: Vec<_> = grid.varying().iter().map(|p| p.key).collect();
        assert_eq!(keys, ["clients", "budget", "breaker", "fleet"]);
        let points: Vec<_> = (0..6)
            .map(|i| {
                let p = grid.point(i);
                (p.clients, p.budget.is_some(), p.breaker.is_some(), p.fleet)
            })
            .collect();
        assert_eq!(
            points,
            [
                (10, false, false, None),
                (100, false, false, None),
                (10, true, false, None),
                (100, true, false, None),
                (10, false, true, Some(1)),
                (100, false, true, Some(1)),
            ]
        );
        assert_ne!(grid.fingerprint(Fingerprint::default()), plain);
        let err = grid
            .add_variant(vec![(budget, "ratio:-1,min:1".into())])
            .unwrap_err();
        assert!(
            err.to_string().contains("invalid value 'ratio:-1,min:1'"),
            "{err}"
        );
    }

    #[test]
    fn the_step_defaults_to_each_points_base() {
        let mut grid = Grid::default();
        set(&mut grid, "base", &["1ms", "2ms"]);
        assert_eq!(grid.point(0).policy.step(), Micros::from_ms(1));
        assert_eq!(grid.point(1).policy.step(), Micros::from_ms(2));
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
