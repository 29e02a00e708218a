//! What commands outside this binary (`herdsim-live`'s `serve` and
//! `drill`) reuse of it: one workload point from a scenario file and the
//! flags, with the same flags, imports and checks as `run`, and output
//! files written as every command writes them (whole, replaced only with
//! `--force`); each error is the one line herdsim would print.

use std::path::{Path, PathBuf};

use clap::Args;

use super::import::ImportFlags;
use super::output::{WholeFile, check_output};
use super::params::{ParamFlags, Single};
use super::run::one_point;
use super::sweep::{read_scenario, with_imports};
use super::{point_message, printable, spec_error};
use crate::experiment::scenario::Scenario;
use crate::spec::{self, RunSpec};

/// A workload point: a scenario file (optional) and every parameter flag.
#[derive(Debug, Args)]
pub struct PointArgs {
    /// Scenario file (TOML) of one point; without one, the workload comes
    /// from the flags alone
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,

    #[command(flatten)]
    params: ParamFlags<Single>,

    #[command(flatten)]
    import: ImportFlags,

    /// Master seed of the draws [default: the scenario's, or 42]
    #[arg(long, value_name = "SEED", value_parser = spec::parse_master_seed, allow_hyphen_values = true)]
    seed: Option<u64>,
}

/// The point [`PointArgs`] describe, checked, with its master seed.
#[derive(Debug, Clone)]
pub struct Point {
    pub spec: RunSpec,
    pub seed: u64,
}

impl PointArgs {
    /// The point, or the one line `run` would print for the same input
    /// (the caller exits with code 2).
    pub fn resolve(&self) -> Result<Point, String> {
        let error = |e: super::CliError| printable(&e.to_string());
        let scenario = match &self.scenario {
            Some(path) => read_scenario(path).map_err(error)?,
            None => Scenario::default(),
        };
        let mut scenario = with_imports(scenario, &self.import).map_err(error)?;
        self.params.apply_to(&mut scenario.grid);
        one_point(&scenario).map_err(error)?;
        let spec = scenario.grid.point(0);
        spec.validate().map_err(|e| match self.scenario {
            Some(_) => point_message(&scenario, 0, &e),
            None => error(spec_error(e)),
        })?;
        Ok(Point {
            spec,
            seed: self.seed.unwrap_or(scenario.master_seed),
        })
    }
}

/// Refuses `path` as an output before any work: an existing file without
/// `force`, a directory, a missing folder.
pub fn check_output_file(path: &Path, force: bool) -> Result<(), String> {
    check_output(path, force).map_err(|e| printable(&e.to_string()))
}

/// Writes `text` to `path` whole (a temporary file put in place), replacing
/// a file there only with `force`.
pub fn write_whole_file(path: &Path, force: bool, text: &str) -> Result<(), String> {
    let error = |e: super::CliError| printable(&e.to_string());
    let mut file = WholeFile::begin(path, force).map_err(error)?;
    file.write(text).map_err(error)?;
    file.finish().map_err(error)
}
