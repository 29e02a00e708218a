//! `herdsim compare --plot` on the server model: the points' time series
//! side by side, one line per point (a study's strategies), in the panels of
//! the Yandex study's charts: client success, attempts against the nominal
//! load, latency, queue and CPU over time, the trigger windows shaded.

use plotters::prelude::*;

use crate::base::time::Nanos;
use crate::measure::server_metrics::Window;
use crate::model::server::Trigger;
use crate::report::series_svg::{TRIGGER_COLOR, trigger_label};
use crate::report::svg::{
    Entry, Figure, PALETTE, PlotResult, Swatch, err, frame_of, stacked, steps, time_panel,
};

/// A labelled line of one colour, in pieces (broken where a window has no
/// value).
type Line = (String, RGBColor, Vec<Vec<(f64, f64)>>);

/// One point's run in the picture.
#[derive(Debug, Clone)]
pub struct StrategyRun<'a> {
    /// Its label in the legend.
    pub label: String,
    /// Its windows, from t = 0.
    pub windows: &'a [Window],
    /// Its workers (for utilisation); `None` when unbounded.
    pub workers: Option<u32>,
    /// Its nominal arrival rate, per second (attempts are drawn against it).
    pub rate_per_s: f64,
}

/// What the picture shows.
#[derive(Debug, Clone)]
pub struct StrategiesPicture<'a> {
    /// The figure's title.
    pub title: String,
    /// The runs, one line each.
    pub runs: Vec<StrategyRun<'a>>,
    /// The window's length, ns.
    pub window_ns: Nanos,
    /// Draw up to here, s (the load's duration).
    pub end_s: f64,
    /// Each trigger's window in seconds and what it is: collected from the
    /// triggers themselves (labelled by kind, `load spike ×2, 5s to 6s`),
    /// or from windows `(from, to)` alone ("trigger window").
    pub triggers: TriggerShades,
}

/// The trigger windows a picture shades: each one's window, s, and its
/// label, when known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriggerShades(pub Vec<(f64, f64, Option<String>)>);

impl<'t> FromIterator<&'t Trigger> for TriggerShades {
    fn from_iter<I: IntoIterator<Item = &'t Trigger>>(triggers: I) -> Self {
        TriggerShades(
            triggers
                .into_iter()
                .map(|t| {
                    (
                        t.from.ticks() as f64 / 1e9,
                        t.to.ticks() as f64 / 1e9,
                        Some(trigger_label(t)),
                    )
                })
                .collect(),
        )
    }
}

impl FromIterator<(f64, f64)> for TriggerShades {
    fn from_iter<I: IntoIterator<Item = (f64, f64)>>(windows: I) -> Self {
        TriggerShades(windows.into_iter().map(|(a, b)| (a, b, None)).collect())
    }
}

impl TriggerShades {
    /// The legend's entries: one per labelled trigger (the same label
    /// once), or "trigger window" for the windows without one.
    fn entries(&self) -> Vec<Entry> {
        let shade = TRIGGER_COLOR.mix(0.15);
        let mut labels: Vec<String> = Vec::new();
        for (_, _, label) in &self.0 {
            let label = label
                .clone()
                .unwrap_or_else(|| "trigger window".to_string());
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        labels
            .into_iter()
            .map(|label| Entry::new(label, Swatch::Shade(shade)))
            .collect()
    }
}

/// The five panels: client success rate (requests ending in the window),
/// attempts sent per nominal request, p99 latency of the window's
/// successes, the queue and the busy share of the workers at the window's
/// end.
pub fn strategies_series(picture: &StrategiesPicture<'_>) -> PlotResult<Figure> {
    let width_s = picture.window_ns.ticks() as f64 / 1e9;
    let windows_shown = (picture.end_s / width_s).ceil() as usize;
    let x = (0.0, picture.end_s);
    // Each panel's values per run.
    let values = |panel: usize, run: &StrategyRun<'_>| -> Vec<Option<f64>> {
        run.windows
            .iter()
            .take(windows_shown)
            .map(|w| match panel {
                0 => w.success_rate().map(|r| 100.0 * r),
                1 => Some(w.attempts as f64 / (run.rate_per_s * width_s)),
                2 => w.latency_p99_ns.map(|ns| ns.ticks() as f64 / 1e6),
                3 => Some(w.queue as f64),
                _ => run.workers.map(|c| 100.0 * w.busy as f64 / f64::from(c)),
            })
            .collect()
    };
    let panels = [
        ("client success rate", "% of requests ending"),
        ("attempts sent per nominal request", "× nominal"),
        ("p99 latency of successful requests", "ms"),
        ("server queue at each window's end", "attempts waiting"),
        ("CPU busy at each window's end", "% of workers"),
    ];
    let mut first = picture.triggers.entries();
    first.extend(picture.runs.iter().enumerate().map(|(i, run)| {
        Entry::new(
            run.label.clone(),
            Swatch::Line(PALETTE[i % PALETTE.len()], false),
        )
    }));
    stacked(
        &picture.title,
        200,
        panels.len(),
        &[first],
        |panel, area| {
            let (caption, y_desc) = panels[panel];
            let lines: Vec<Line> = picture
                .runs
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    (
                        run.label.clone(),
                        PALETTE[i % PALETTE.len()],
                        steps(&values(panel, run), width_s),
                    )
                })
                .collect();
            let high = lines
                .iter()
                .flat_map(|(_, _, runs)| runs.iter().flatten().map(|p| p.1))
                .fold(0.0, f64::max);
            // Counts (the queue) read in whole attempts even when all are 0.
            let least = if panel == 3 { 1.0 } else { 1e-3 };
            let y = (0.0, (high * 1.1).max(least));
            let mut chart = time_panel(area, caption, y_desc, x, y)?;
            let shade = TRIGGER_COLOR.mix(0.15);
            for (from, to, _) in picture.triggers.0.iter().filter(|t| t.0 < x.1) {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(*from, y.0), (to.min(x.1), y.1)],
                        shade.filled(),
                    )))
                    .map_err(err)?;
            }
            for (_, color, runs) in &lines {
                let color = *color;
                for run in runs {
                    chart
                        .draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(2)))
                        .map_err(err)?;
                }
            }
            Ok(frame_of(&chart, x, y, false, false))
        },
    )
}
