//! Reference figures from running a study's own code, and the verdict on
//! herdsim's difference from each: its z-score, with both sides' sampling
//! error.
//!
//! A reference figure is a mean over the authors' code run with fixed seeds,
//! with its standard deviation; herdsim's is a mean over its own replicates.
//! Both are estimates, so a difference is judged against the standard error
//! of the difference, `√(sd₁²/n₁ + sd₂²/n₂)`, or the same with the runs'
//! spread pooled from both sides when that is larger (see
//! [`difference_standard_error`]), not against either side's alone.

use std::fmt;

use crate::measure::stats::Summary;
use crate::spec::RunSpec;
use crate::spec::params::{PARAMS, param};
use crate::study::error::StudyError;

/// A mean over runs, with the spread of the runs: one side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The mean over the runs.
    pub mean: f64,
    /// The runs' sample standard deviation (0 for one run).
    pub sd: f64,
    /// How many runs.
    pub n: u32,
}

impl Estimate {
    /// The standard error of the mean.
    pub fn standard_error(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sd / f64::from(self.n).sqrt()
        }
    }

    /// A summary's mean and spread (`None` when no run has the metric).
    pub fn of_summary(summary: &Summary) -> Option<Estimate> {
        (summary.n > 0).then(|| Estimate {
            mean: summary.mean,
            sd: summary.sd.unwrap_or(0.0),
            n: summary.n as u32,
        })
    }
}

/// How far apart two estimates are, in standard errors of their difference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Neither side varies and they are equal (an exact figure, such as a
    /// success rate of 100% with no failures).
    Same,
    /// |z| < 1.96: within sampling error.
    Agrees,
    /// 1.96 ≤ |z| < 3: what one cell in twenty shows by chance alone.
    Borderline,
    /// |z| ≥ 3 (or unequal with no sampling error on either side): a real
    /// difference, to be explained by a run.
    Differs,
}

impl Verdict {
    /// The verdict's word.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Agrees => "agrees",
            Verdict::Borderline => "borderline",
            Verdict::Differs => "differs",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// herdsim's figure beside the reference's, with the z-score of the
/// difference and the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// herdsim's.
    pub ours: Estimate,
    /// The reference's.
    pub theirs: Estimate,
    /// (ours − theirs) over the standard error of the difference (see
    /// [`difference_standard_error`]); `None` when neither side varies.
    pub z: Option<f64>,
    /// What the z-score says.
    pub verdict: Verdict,
}

/// Below this relative difference two figures with no sampling error are
/// the same (the reference is written with a few decimals).
const SAME_RELATIVE: f64 = 1e-6;

/// The standard error of the difference of two means: the larger of the two
/// usual estimates, each side's own spread (Welch) and one spread pooled
/// from both (under agreement both sides sample one distribution). A side
/// whose few runs happen to agree exactly (sd 0, as ten seeds that all
/// recovered in the first bucket) then still carries the sampling error of
/// that many draws, and neither side's luck makes a difference look real.
pub fn difference_standard_error(ours: Estimate, theirs: Estimate) -> f64 {
    let welch = (ours.standard_error().powi(2) + theirs.standard_error().powi(2)).sqrt();
    // One run shows no spread (an exact figure is given as one run): pool
    // only spreads that were measured.
    if ours.n < 2 || theirs.n < 2 {
        return welch;
    }
    let (n1, n2) = (f64::from(ours.n), f64::from(theirs.n));
    let pooled = ((n1 - 1.0) * ours.sd.powi(2) + (n2 - 1.0) * theirs.sd.powi(2)) / (n1 + n2 - 2.0);
    welch.max((pooled * (1.0 / n1 + 1.0 / n2)).sqrt())
}

/// Judges `ours` against `theirs`.
pub fn judge(ours: Estimate, theirs: Estimate) -> Judged {
    let se = difference_standard_error(ours, theirs);
    let diff = ours.mean - theirs.mean;
    let (z, verdict) = if se > 0.0 {
        let z = diff / se;
        let verdict = match z.abs() {
            a if a < 1.96 => Verdict::Agrees,
            a if a < 3.0 => Verdict::Borderline,
            _ => Verdict::Differs,
        };
        (Some(z), verdict)
    } else if diff.abs() <= SAME_RELATIVE * ours.mean.abs().max(theirs.mean.abs()).max(1e-12) {
        (None, Verdict::Same)
    } else {
        (None, Verdict::Differs)
    };
    Judged {
        ours,
        theirs,
        z,
        verdict,
    }
}

/// One configuration of a study's reference file: what it is, the workload
/// herdsim runs for it, and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceRow {
    /// The configuration in the study's own terms, as (column, value): the
    /// row's key in tables and CSV.
    pub key: Vec<(&'static str, String)>,
    /// The workload that is this configuration in herdsim.
    pub spec: RunSpec,
    /// The window of the time series (its index, in the workload's windows)
    /// the figures are of; `None`: the whole run.
    pub window: Option<usize>,
    /// Its figures, by the study's metric name.
    pub figures: Vec<(&'static str, Estimate)>,
}

impl ReferenceRow {
    /// The key as `column=value` words.
    pub fn label(&self) -> String {
        self.key
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The figure of `metric`, if the row has one.
    pub fn figure(&self, metric: &str) -> Option<Estimate> {
        self.figures
            .iter()
            .find(|(m, _)| *m == metric)
            .map(|(_, e)| *e)
    }
}

/// A workload from registry `(key, value)` settings over the defaults, as a
/// scenario file would give them. Panics on a setting the registry refuses:
/// the studies' settings are fixed in code and tested (settings that come
/// from a reference file go through [`spec_from`]).
pub fn spec_of(settings: &[(&str, &str)]) -> RunSpec {
    spec_from(settings).unwrap_or_else(|why| panic!("{why}"))
}

/// A workload from registry `(key, value)` settings over the defaults, or
/// the first setting the registry refuses and why (`key = value: why`).
pub fn spec_from(settings: &[(&str, &str)]) -> Result<RunSpec, String> {
    let mut spec = RunSpec::default();
    for (key, value) in settings {
        let p = param(key).ok_or_else(|| format!("no parameter {key}"))?;
        (p.set)(&mut spec, value).map_err(|e| format!("{key} = {value}: {e}"))?;
    }
    Ok(spec)
}

/// Every registry parameter of `spec` as shown: two workloads are the same
/// when these are.
pub fn shown(spec: &RunSpec) -> Vec<Option<String>> {
    PARAMS.iter().map(|p| (p.show)(spec)).collect()
}

/// A reference file read by its header: each row's fields by column name.
pub struct Table {
    columns: Vec<String>,
    rows: Vec<(usize, csv::StringRecord)>,
}

/// One row of a [`Table`], with its line for error messages.
pub struct TableRow<'a> {
    table: &'a Table,
    /// The row's line in the file.
    pub line: usize,
    record: &'a csv::StringRecord,
}

impl Table {
    /// Reads CSV `text` and checks it has every column of `needed`.
    pub fn read(text: &str, needed: &[&str]) -> Result<Table, StudyError> {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let columns: Vec<String> = reader
            .headers()
            .map_err(|e| StudyError::Csv(e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect();
        if let Some(missing) = needed.iter().find(|n| !columns.iter().any(|c| c == *n)) {
            return Err(StudyError::MissingColumn {
                name: missing.to_string(),
                expected: needed.join(", "),
            });
        }
        let rows = reader
            .records()
            .enumerate()
            .map(|(i, r)| {
                r.map(|record| (i + 2, record))
                    .map_err(|e| StudyError::Csv(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let table = Table { columns, rows };
        // Every figure a rerun wrote is a finite number, read by the study
        // or not: a broken one means a broken rerun, not a column to skip.
        for row in table.rows() {
            for column in &table.columns {
                if column.ends_with("_mean") || column.ends_with("_sd") {
                    row.number(column)?;
                }
            }
        }
        Ok(table)
    }

    /// The rows, in file order.
    pub fn rows(&self) -> impl Iterator<Item = TableRow<'_>> {
        self.rows.iter().map(|(line, record)| TableRow {
            table: self,
            line: *line,
            record,
        })
    }
}

impl TableRow<'_> {
    /// The field of `column` (one [`Table::read`] checked is there).
    pub fn text(&self, column: &str) -> Result<&str, StudyError> {
        let i = self
            .table
            .columns
            .iter()
            .position(|c| c == column)
            .expect("a column the table was read for");
        self.record
            .get(i)
            .ok_or(StudyError::TooFewFields { line: self.line })
    }

    /// The field of `column` as a finite number: a reference figure that is
    /// NaN or infinite would judge nothing (every z-score NaN).
    pub fn number(&self, column: &str) -> Result<f64, StudyError> {
        let text = self.text(column)?;
        match text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(_) => Err(self.invalid(column, format!("'{text}' is not a finite number"))),
            Err(_) => Err(self.invalid(column, format!("'{text}' is not a number"))),
        }
    }

    /// The field of `column` as a count of runs, a whole number from
    /// `least` to [`MAX_RUNS`].
    pub fn count(&self, column: &str, least: u32) -> Result<u32, StudyError> {
        let text = self.text(column)?;
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.fract() == 0.0 && (f64::from(least)..=f64::from(MAX_RUNS)).contains(v))
            .map(|v| v as u32)
            .ok_or_else(|| {
                self.invalid(
                    column,
                    format!(
                        "'{text}' is not a count of runs (a whole number from {least} to {MAX_RUNS})"
                    ),
                )
            })
    }

    /// An error in this row's `column`.
    pub fn invalid(&self, column: &str, why: String) -> StudyError {
        StudyError::Invalid {
            line: self.line,
            column: column.to_string(),
            why,
        }
    }

    /// The estimate in columns `mean`, `sd` over `n` runs: a finite mean,
    /// a finite spread from 0, at least one run.
    pub fn estimate(&self, mean: &str, sd: &str, n: u32) -> Result<Estimate, StudyError> {
        let estimate = Estimate {
            mean: self.number(mean)?,
            sd: self.number(sd)?,
            n,
        };
        self.checked(estimate, sd)
    }

    /// `estimate` if its spread is from 0 and it has a run (`sd` names the
    /// spread's column in the error).
    pub fn checked(&self, estimate: Estimate, sd: &str) -> Result<Estimate, StudyError> {
        if estimate.sd < 0.0 {
            return Err(self.invalid(
                sd,
                format!("{} is not a standard deviation (one from 0)", estimate.sd),
            ));
        }
        if estimate.n == 0 {
            return Err(self.invalid(sd, "a figure over no runs".to_string()));
        }
        Ok(estimate)
    }
}

/// The most runs a reference figure can be over (more than any study ran).
pub const MAX_RUNS: u32 = 1_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn e(mean: f64, sd: f64, n: u32) -> Estimate {
        Estimate { mean, sd, n }
    }

    #[test]
    fn the_z_score_counts_both_sides_sampling_error() {
        // Welch: √(4/4 + 9/9) = 1.41; pooled: √(84/11 · (1/4 + 1/9)) = 1.66,
        // the larger.
        let j = judge(e(14.0, 2.0, 4), e(10.0, 3.0, 9));
        let pooled = (84.0f64 / 11.0 * (0.25 + 1.0 / 9.0)).sqrt();
        assert!((j.z.unwrap() - 4.0 / pooled).abs() < 1e-12);
        assert_eq!(j.verdict, Verdict::Borderline);
        assert_eq!(
            judge(e(10.5, 2.0, 4), e(10.0, 3.0, 9)).verdict,
            Verdict::Agrees
        );
        assert_eq!(
            judge(e(20.0, 2.0, 4), e(10.0, 3.0, 9)).verdict,
            Verdict::Differs
        );
    }

    #[test]
    fn a_side_without_spread_still_has_the_error_of_its_few_runs() {
        // Ten seeds that all recovered at once (sd 0) against 100 runs of sd
        // 0.02: Welch would give 0.002, pooling gives the error of 10 draws.
        let j = judge(e(0.011, 0.02, 100), e(0.0, 0.0, 10));
        let pooled = (99.0 * 0.0004 / 108.0 * (0.01 + 0.1f64)).sqrt();
        assert!((j.z.unwrap() - 0.011 / pooled).abs() < 1e-12);
        assert_eq!(j.verdict, Verdict::Agrees);
        // And the other way round: herdsim's 100 runs without spread against
        // a reference whose one seed in ten differed.
        let j = judge(e(0.0, 0.0, 100), e(0.005, 0.0158, 10));
        assert_eq!(j.verdict, Verdict::Agrees);
        // An exact figure (one value, no spread) adds no error: only
        // herdsim's own counts.
        let j = judge(e(10.3, 1.0, 100), e(10.0, 0.0, 1));
        assert!((j.z.unwrap() - 3.0).abs() < 1e-9);
    }

    #[test]
    fn figures_without_sampling_error_are_the_same_or_differ() {
        let j = judge(e(100.0, 0.0, 100), e(100.0, 0.0, 20));
        assert_eq!((j.z, j.verdict), (None, Verdict::Same));
        assert_eq!(
            judge(e(100.0, 0.0, 100), e(99.0, 0.0, 20)).verdict,
            Verdict::Differs
        );
    }

    #[test]
    fn settings_build_the_workload_a_scenario_would() {
        let spec = spec_of(&[("resource", "server"), ("fail_rate", "0.25")]);
        assert_eq!(spec.server.fail_rate, 0.25);
        assert_ne!(shown(&spec), shown(&RunSpec::default()));
    }
}
