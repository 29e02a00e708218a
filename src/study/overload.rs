//! The overload studies herdsim reproduces on its server model, and a
//! scenario's points judged against a study's reference figures.
//!
//! A study is its reference file (figures from running the authors' code
//! with fixed seeds, embedded at build time), a reader that turns each of its
//! configurations into the herdsim workload that is that configuration, and
//! the metrics both sides measure. A point of a scenario is judged against
//! the reference row whose workload it is, in every registry parameter, so a
//! point the study did not run is shown without a verdict rather than
//! against the wrong figures.

use crate::experiment::scenario::Scenario;
use crate::experiment::server_runs::{run_server_replicates, server_parts};
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{ServerMetrics, Window};
use crate::measure::stats::Summary;
use crate::model::server::ServerSpec;
use crate::sim::queue::QueueKind;
use crate::spec::RunSpec;
use crate::study::error::StudyError;
use crate::study::reference::{Estimate, Judged, ReferenceRow, Verdict, judge, shown};

/// A figure both herdsim and a study's reference measure.
#[derive(Debug)]
pub struct StudyMetric {
    /// The reference's name for it.
    pub name: &'static str,
    /// Its heading in tables.
    pub title: &'static str,
    /// Decimals it is shown with.
    pub decimals: usize,
    /// herdsim's value of it in one run of the workload (`None` when the
    /// run has none), over the whole run, or in the window of the time
    /// series a reference row is of.
    pub value: fn(&ServerMetrics, &ServerSpec, Option<&Window>) -> Option<f64>,
}

/// A published overload study herdsim reproduces.
#[derive(Debug)]
pub struct Study {
    /// Its name, the value of a scenario's `study` key.
    pub name: &'static str,
    /// The publication, in words.
    pub title: &'static str,
    /// The reference file's name in `reference/`.
    pub reference_file: &'static str,
    /// The reference file, embedded.
    pub embedded: &'static str,
    /// The figures compared, in column order.
    pub metrics: &'static [StudyMetric],
    /// Table a row per reference row with a column group per metric (else
    /// a row per reference row and metric, for many metrics of few rows).
    pub wide_table: bool,
    /// Reads a reference file of the study's shape into its rows.
    pub read: fn(&str) -> Result<Vec<ReferenceRow>, StudyError>,
}

/// Every study, by name.
pub static STUDIES: [&Study; 5] = [
    &crate::study::brooker_2022::STUDY,
    &crate::study::brooker_2023::STUDY,
    &crate::study::brooker_2023_queue::STUDY,
    &crate::study::brooker_2023_collapse::STUDY,
    &crate::study::yandex_2024::STUDY,
];

/// The study named `name`.
pub fn study(name: &str) -> Option<&'static Study> {
    STUDIES.iter().copied().find(|s| s.name == name)
}

/// The names of the studies, for error messages.
pub fn study_names() -> String {
    STUDIES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl PartialEq for Study {
    /// Studies are one each: the same name is the same study.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Study {
    /// The embedded reference's rows.
    pub fn embedded_rows(&self) -> Vec<ReferenceRow> {
        (self.read)(self.embedded).expect("the embedded reference reads")
    }
}

/// herdsim's figures for one reference row of a point.
#[derive(Debug, Clone)]
pub struct PointRow {
    /// The index of the reference row, if the point has one.
    pub row: Option<usize>,
    /// herdsim's figure of each study metric, in the study's order (`None`
    /// when no run has it).
    pub ours: Vec<Option<Estimate>>,
}

/// One point of the scenario with herdsim's figures.
#[derive(Debug, Clone)]
pub struct StudyPoint {
    /// The point's index in the grid.
    pub point: usize,
    /// Its workload.
    pub spec: RunSpec,
    /// The reference rows that are this workload, with herdsim's figures for
    /// each: one for a study of whole runs, one per window for a study of
    /// time series, or one without a row when the reference has none.
    pub rows: Vec<PointRow>,
    /// Every run finished (none was cut at an event limit or horizon).
    pub complete: bool,
    /// Replicate 0's run, kept for the picture of the points over time.
    pub replicate_zero: ServerMetrics,
}

/// How many cells got each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Equal, with no sampling error on either side.
    pub same: usize,
    /// |z| < 1.96.
    pub agrees: usize,
    /// 1.96 ≤ |z| < 3.
    pub borderline: usize,
    /// |z| ≥ 3, or unequal exact figures.
    pub differs: usize,
}

impl StudyPoint {
    /// The first reference row of the point, if it has one.
    pub fn first_row(&self) -> Option<usize> {
        self.rows.first().and_then(|r| r.row)
    }
}

impl Tally {
    /// Cells with a z-score.
    pub fn scored(&self) -> usize {
        self.agrees + self.borderline + self.differs
    }

    /// All cells.
    pub fn total(&self) -> usize {
        self.same + self.scored()
    }
}

/// A scenario's points judged against a study's reference.
#[derive(Debug, Clone)]
pub struct StudyComparison<'a> {
    /// The study.
    pub study: &'static Study,
    /// The scenario.
    pub scenario: &'a Scenario,
    /// Where the reference came from (the embedded file's name, or the
    /// file given).
    pub reference_name: String,
    /// The reference's rows.
    pub rows: Vec<ReferenceRow>,
    /// The points, in grid order.
    pub points: Vec<StudyPoint>,
}

impl StudyComparison<'_> {
    /// The verdict on every metric of every reference row of every point,
    /// in point order: (point, its row, metric index, judgement).
    pub fn cells(&self) -> Vec<Cell<'_>> {
        let mut cells = Vec::new();
        for point in &self.points {
            for point_row in &point.rows {
                let Some(row) = point_row.row.map(|i| &self.rows[i]) else {
                    continue;
                };
                for (i, metric) in self.study.metrics.iter().enumerate() {
                    if let (Some(ours), Some(theirs)) = (point_row.ours[i], row.figure(metric.name))
                    {
                        cells.push(Cell {
                            point,
                            row: point_row,
                            metric: i,
                            judged: judge(ours, theirs),
                        });
                    }
                }
            }
        }
        cells
    }

    /// How the cells' verdicts fall.
    pub fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for cell in self.cells() {
            match cell.judged.verdict {
                Verdict::Same => tally.same += 1,
                Verdict::Agrees => tally.agrees += 1,
                Verdict::Borderline => tally.borderline += 1,
                Verdict::Differs => tally.differs += 1,
            }
        }
        tally
    }

    /// Reference rows no point of the scenario runs, among those of the
    /// groups it runs (rows whose first key, such as the study's scenario,
    /// is a matched row's), or all of them when no point has a row.
    pub fn unmatched_rows(&self) -> Vec<&ReferenceRow> {
        let group = |row: &ReferenceRow| row.key.first().map(|(_, v)| v.clone());
        let matched: Vec<usize> = self
            .points
            .iter()
            .flat_map(|p| p.rows.iter().filter_map(|r| r.row))
            .collect();
        let groups: Vec<Option<String>> = matched.iter().map(|&i| group(&self.rows[i])).collect();
        self.rows
            .iter()
            .filter(|row| !matched.iter().any(|&i| self.rows[i].spec == row.spec))
            .filter(|row| groups.is_empty() || groups.contains(&group(row)))
            .collect()
    }

    /// The label of a point's row: the reference row's key, or the point's
    /// index.
    pub fn label(&self, point: &StudyPoint, row: &PointRow) -> String {
        match row.row {
            Some(i) => self.rows[i].label(),
            None => format!("point {} (not in the reference)", point.point),
        }
    }
}

/// One judged figure: a metric of a point's reference row.
#[derive(Debug, Clone, Copy)]
pub struct Cell<'a> {
    /// The point.
    pub point: &'a StudyPoint,
    /// Its row.
    pub row: &'a PointRow,
    /// The metric's index in the study's.
    pub metric: usize,
    /// herdsim's figure beside the reference's.
    pub judged: Judged,
}

/// The reference rows a point of workload `mine` (shown) is judged
/// against: among the rows that are this workload (one run may stand in two
/// of the study's scenarios), the group (first key) of the scenario named
/// `scenario`, else of the first; of a study of whole runs its one row, of a
/// study of time series its row for every window.
fn matching_rows(
    rows: &[ReferenceRow],
    row_shown: &[Vec<Option<String>>],
    mine: &[Option<String>],
    scenario: &str,
) -> Vec<usize> {
    let group = |i: usize| rows[i].key.first().map(|(_, v)| v.as_str());
    let same: Vec<usize> = (0..rows.len()).filter(|&i| row_shown[i] == mine).collect();
    let Some(chosen) = same
        .iter()
        .copied()
        .find(|&i| group(i) == Some(scenario))
        .or(same.first().copied())
    else {
        return Vec::new();
    };
    if rows[chosen].window.is_none() {
        return vec![chosen];
    }
    same.into_iter()
        .filter(|&i| group(i) == group(chosen) && rows[i].window.is_some())
        .collect()
}

/// Runs every point of `scenario` (`watch` sees each run; `on_done` is
/// called after each) and judges it against `rows` of `study`'s reference,
/// named `reference_name`. Points run in order, their replicates on every
/// core; the result does not depend on the thread count.
pub fn run_study<'a>(
    study: &'static Study,
    scenario: &'a Scenario,
    rows: Vec<ReferenceRow>,
    reference_name: String,
    watch: &Watch<'_>,
    on_done: impl Fn() + Sync,
) -> StudyComparison<'a> {
    let row_shown: Vec<Vec<Option<String>>> = rows.iter().map(|r| shown(&r.spec)).collect();
    let points = (0..scenario.grid.len())
        .map(|point| {
            let spec = scenario.grid.point(point);
            let (server, _) = server_parts(&spec);
            let mut runs = run_server_replicates(
                &spec,
                scenario.master_seed,
                point as u64,
                scenario.replicates,
                watch,
                QueueKind::Auto,
                &on_done,
            );
            let figures = |window: Option<usize>| -> Vec<Option<Estimate>> {
                study
                    .metrics
                    .iter()
                    .map(|m| {
                        let values: Vec<Option<f64>> = runs
                            .iter()
                            .map(|run| {
                                // A window past the run's end saw nothing.
                                let w =
                                    window.map(|k| run.windows.get(k).copied().unwrap_or_default());
                                (m.value)(run, &server, w.as_ref())
                            })
                            .collect();
                        Estimate::of_summary(&Summary::of_present(&values))
                    })
                    .collect()
            };
            let matched = matching_rows(&rows, &row_shown, &shown(&spec), &scenario.name);
            let point_rows = if matched.is_empty() {
                vec![PointRow {
                    row: None,
                    ours: figures(None),
                }]
            } else {
                matched
                    .into_iter()
                    .map(|i| PointRow {
                        row: Some(i),
                        ours: figures(rows[i].window),
                    })
                    .collect()
            };
            StudyPoint {
                point,
                rows: point_rows,
                complete: runs.iter().all(|r| r.complete),
                spec,
                replicate_zero: runs.swap_remove(0),
            }
        })
        .collect();
    StudyComparison {
        study,
        scenario,
        reference_name,
        rows,
        points,
    }
}
