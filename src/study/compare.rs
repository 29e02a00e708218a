//! A scenario's results set beside the published figures: what `herdsim
//! compare` reports. Built from a sweep's aggregated rows, so `compare` and
//! `sweep` are one computation.

use crate::experiment::scenario::Scenario;
use crate::experiment::sweep::SweepRow;
use crate::measure::metrics::Metric;
use crate::measure::stats::Summary;
use crate::spec::RunSpec;
use crate::spec::params::Param;
use crate::study::published::{Published, PublishedFigure, PublishedRemark, Verdict};

/// The metrics every comparison shows, in column order; any other metric
/// with a published figure follows them.
pub const COMPARED: [Metric; 5] = [
    Metric::Calls,
    Metric::LastSuccessMs,
    Metric::PeakRetries,
    Metric::PeakRetriesPct,
    Metric::CompletionP99Ms,
];

/// The metrics whose lowest value the published claims rank.
pub const RANKED: [Metric; 2] = [Metric::Calls, Metric::LastSuccessMs];

/// One metric of one point, with its published figure and verdict.
#[derive(Debug, Clone)]
pub struct ComparedCell {
    /// The metric.
    pub metric: Metric,
    /// herdsim's summary over the replicates.
    pub summary: Summary,
    /// The published figure, if there is one.
    pub published: Option<PublishedFigure>,
    /// How herdsim compares with it.
    pub verdict: Option<Verdict>,
}

/// One point of the scenario.
#[derive(Debug, Clone)]
pub struct ComparedPoint {
    /// The point's index in the grid.
    pub point: usize,
    /// Its workload.
    pub spec: RunSpec,
    /// The policy, and any other parameter that varies: `full` or
    /// `full clients=100`.
    pub label: String,
    /// Every metric, in report order; [`ComparedPoint::cell`] finds one.
    pub cells: Vec<ComparedCell>,
    /// A published remark on this workload.
    pub remark: Option<PublishedRemark>,
}

impl ComparedPoint {
    /// The cell of `metric`.
    pub fn cell(&self, metric: Metric) -> &ComparedCell {
        self.cells
            .iter()
            .find(|c| c.metric == metric)
            .expect("every metric has a cell")
    }
}

/// Which point has the lowest mean of a metric, in herdsim and as published.
#[derive(Debug, Clone)]
pub struct Ranking {
    /// The metric.
    pub metric: Metric,
    /// herdsim's lowest point (label and summary).
    pub lowest: (String, Summary),
    /// True if the lowest point's 95% CI lies wholly below every other's.
    pub clear: bool,
    /// The published lowest point (label and figure), if figures exist.
    pub published_lowest: Option<(String, PublishedFigure)>,
}

/// A scenario's results beside the published figures.
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// One entry per point, in grid order.
    pub points: Vec<ComparedPoint>,
}

impl<'a> Comparison<'a> {
    /// Sets aggregated sweep `rows` of `scenario` beside `published`.
    /// Per-run rows are ignored.
    pub fn new(scenario: &'a Scenario, rows: Vec<SweepRow>, published: &Published) -> Self {
        let varying = labelled_params(scenario);
        let points = rows
            .into_iter()
            .filter_map(|row| match row {
                SweepRow::Point {
                    point,
                    spec,
                    summaries,
                    ..
                } => Some((point, spec, summaries)),
                SweepRow::Run { .. }
                | SweepRow::ServerRun { .. }
                | SweepRow::ServerPoint { .. } => None,
            })
            .map(|(point, spec, summaries)| {
                let cells = summaries
                    .into_iter()
                    .map(|(metric, summary)| {
                        let published = published.figure(&spec, metric).cloned();
                        let verdict = published.as_ref().map(|f| Verdict::of(&summary, f));
                        ComparedCell {
                            metric,
                            summary,
                            published,
                            verdict,
                        }
                    })
                    .collect();
                ComparedPoint {
                    point,
                    label: label(&spec, &varying),
                    remark: published.remark(&spec).cloned(),
                    spec,
                    cells,
                }
            })
            .collect();
        Comparison { scenario, points }
    }

    /// The metrics shown: [`COMPARED`], then any other with a published figure.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut metrics = COMPARED.to_vec();
        for metric in Metric::ALL {
            let published = self
                .points
                .iter()
                .any(|p| p.cell(metric).published.is_some());
            if published && !metrics.contains(&metric) {
                metrics.push(metric);
            }
        }
        metrics
    }

    /// The lowest point of each [`RANKED`] metric, in herdsim and as published.
    pub fn rankings(&self) -> Vec<Ranking> {
        RANKED
            .iter()
            .filter_map(|&metric| {
                let lowest = self.points.iter().min_by(|a, b| {
                    a.cell(metric)
                        .summary
                        .mean
                        .total_cmp(&b.cell(metric).summary.mean)
                })?;
                let summary = lowest.cell(metric).summary;
                let upper = summary.mean + summary.ci95.unwrap_or(0.0);
                let clear = self
                    .points
                    .iter()
                    .filter(|p| p.point != lowest.point)
                    .all(|p| {
                        let s = p.cell(metric).summary;
                        s.mean - s.ci95.unwrap_or(0.0) > upper
                    });
                let published_lowest = self
                    .points
                    .iter()
                    .filter_map(|p| Some((p, p.cell(metric).published.clone()?)))
                    // Seed 002's "decorrelated" figure describes two policies;
                    // rank each published figure once.
                    .filter(|(p, _)| p.spec.policy.kind != crate::PolicyKind::DecorrelatedAttempt)
                    .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
                    .map(|(p, f)| (p.label.clone(), f));
                Some(Ranking {
                    metric,
                    lowest: (lowest.label.clone(), summary),
                    clear,
                    published_lowest,
                })
            })
            .collect()
    }
}

/// A parameter a point's label names: whether it is only a variant's (then
/// named only where it differs from the default).
pub(crate) type Labelled = (&'static Param, bool);

/// The parameters a point's label names beside its policy: those that vary.
pub(crate) fn labelled_params(scenario: &Scenario) -> Vec<Labelled> {
    let grid = &scenario.grid;
    grid.varying()
        .into_iter()
        .filter(|param| param.key != "policy")
        .map(|param| (param, grid.values(param.key).is_none()))
        .collect()
}

/// `full`, or `full clients=100 cap=5s` when other parameters vary; a
/// variant's parameter is named only where the point sets it otherwise than
/// the default (`full budget=ratio:0.1,min:1`, not every variant's `none`).
pub(crate) fn label(spec: &RunSpec, varying: &[Labelled]) -> String {
    let default = RunSpec::default();
    let mut label = spec.policy.kind.name().to_string();
    for &(param, variant_only) in varying {
        let value = (param.show)(spec);
        if variant_only && value == (param.show)(&default) {
            continue;
        }
        let value = value.unwrap_or_else(|| "none".to_string());
        label += &format!(" {}={value}", param.key);
    }
    label
}
