//! `herdsim compare --plot` on the server model: the points' time series
//! side by side, one line per point (a study's strategies), in the panels of
//! the Yandex study's charts: client success, attempts against the nominal
//! load, latency, queue and CPU over time, the trigger windows shaded.

use plotters::prelude::*;

use crate::measure::server_metrics::Window;
use crate::report::series_svg::TRIGGER_COLOR;
use crate::report::svg::{
    Figure, PALETTE, PlotResult, err, frame_of, legend, stacked, steps, time_panel,
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
    pub window_ns: u64,
    /// Draw up to here, s (the load's duration).
    pub end_s: f64,
    /// Each trigger's window in seconds.
    pub triggers: Vec<(f64, f64)>,
}

/// The five panels: client success rate (requests ending in the window),
/// attempts sent per nominal request, p99 latency of the window's
/// successes, the queue and the busy share of the workers at the window's
/// end.
pub fn strategies_series(picture: &StrategiesPicture<'_>) -> PlotResult<Figure> {
    let width_s = picture.window_ns as f64 / 1e9;
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
                2 => w.latency_p99_ns.map(|ns| ns as f64 / 1e6),
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
    stacked(&picture.title, 200, panels.len(), |panel, area| {
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
        // Headroom for the legend's box on the first panel.
        let headroom = if panel == 0 {
            1.0 + 0.12 * (picture.runs.len() as f64 + 1.0)
        } else {
            1.1
        };
        let y = (0.0, (high * headroom).max(1e-3));
        let mut chart = time_panel(area, caption, y_desc, x, y)?;
        let shade = TRIGGER_COLOR.mix(0.15);
        for (i, (from, to)) in picture.triggers.iter().enumerate() {
            let drawn = chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(*from, y.0), (to.min(x.1), y.1)],
                    shade.filled(),
                )))
                .map_err(err)?;
            if panel == 0 && i == 0 {
                drawn.label("failure window").legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 18, y + 5)], shade.filled())
                });
            }
        }
        for (label, color, runs) in &lines {
            let color = *color;
            for (i, run) in runs.iter().enumerate() {
                let drawn = chart
                    .draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(2)))
                    .map_err(err)?;
                if i == 0 && panel == 0 {
                    drawn.label(label.as_str()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
                }
            }
        }
        if panel == 0 {
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(frame_of(&chart, x, y, false, false))
    })
}
