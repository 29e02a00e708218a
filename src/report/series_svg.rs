//! `herdsim run --resource server --plot`: one run's time series in stacked
//! panels (offered load and goodput, queue length, latency), every trigger
//! window shaded, so a storm and its recovery (or not) show at a glance.

use plotters::prelude::*;

use crate::measure::server_metrics::Window;
use crate::report::svg::{
    CAPACITY_COLOR, Figure, PALETTE, PlotResult, err, frame_of, legend, stacked, steps, tick,
};

/// The shade of trigger windows.
pub const TRIGGER_COLOR: RGBColor = RGBColor(214, 39, 40);

/// What the series picture shows.
#[derive(Debug, Clone)]
pub struct SeriesPicture<'a> {
    /// The figure's title.
    pub title: String,
    /// One run's windows, from t = 0.
    pub windows: &'a [Window],
    /// The window's length, ns.
    pub window_ns: u64,
    /// Each trigger's window in seconds and its label.
    pub triggers: Vec<(f64, f64, String)>,
    /// The server's capacity in attempts per second over time, as steps
    /// `(from s, capacity)`, when the workers are bounded.
    pub capacity_per_s: Option<Vec<(f64, f64)>>,
}

/// A labelled line of one colour, in pieces.
type Line<'a> = (&'a str, RGBColor, Vec<Vec<(f64, f64)>>);

/// The three panels of `picture`: offered load (arrivals and attempts per
/// second), goodput and capacity; the queue at each window's end; latency
/// p50 and p99 of the window's successes (a log axis when it spans more than
/// a factor of 20).
pub fn server_series(picture: &SeriesPicture<'_>) -> PlotResult<Figure> {
    let width_s = picture.window_ns as f64 / 1e9;
    let per_s = |count: u64| Some(count as f64 / width_s);
    let windows = picture.windows;
    let end_s = (windows.len() as f64 * width_s).max(width_s);
    let x = (0.0, end_s);
    let arrivals: Vec<_> = windows.iter().map(|w| per_s(w.arrivals)).collect();
    let attempts: Vec<_> = windows.iter().map(|w| per_s(w.attempts)).collect();
    let goodput: Vec<_> = windows.iter().map(|w| per_s(w.successes)).collect();
    let queue: Vec<_> = windows.iter().map(|w| Some(w.queue as f64)).collect();
    let ms = |ns: Option<u64>| ns.map(|v| v as f64 / 1e6);
    let p50: Vec<_> = windows.iter().map(|w| ms(w.latency_p50_ns)).collect();
    let p99: Vec<_> = windows.iter().map(|w| ms(w.latency_p99_ns)).collect();
    let capacity: Vec<Vec<(f64, f64)>> = picture
        .capacity_per_s
        .iter()
        .map(|steps| {
            let mut line = Vec::new();
            for (i, &(from, c)) in steps.iter().enumerate() {
                let to = steps.get(i + 1).map_or(end_s, |s| s.0).min(end_s);
                line.extend([(from, c), (to, c)]);
            }
            line
        })
        .collect();

    let top = |lines: &[&[Option<f64>]], extra: f64| {
        lines
            .iter()
            .flat_map(|l| l.iter().flatten())
            .fold(extra, |a, &b| a.max(b))
            .max(1.0)
            * 1.1
    };
    let capacity_top = capacity.iter().flatten().map(|p| p.1).fold(0.0, f64::max);
    // Headroom above the data for the legend's box (up to six rows).
    let load_top = top(&[&arrivals, &attempts, &goodput], capacity_top) * 1.4;
    let queue_top = top(&[&queue], 0.0);
    let latencies = || p50.iter().chain(&p99).flatten().copied();
    let low = latencies()
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let high = latencies().fold(0.0, f64::max);
    let log_latency = low.is_finite() && high / low > 20.0;
    let latency_y = if log_latency {
        (low / 1.5, high * 1.5)
    } else {
        (0.0, high.max(1e-3) * 1.1)
    };

    stacked(&picture.title, 230, 3, |panel, area| {
        let (caption, y_desc, y, log_y) = match panel {
            0 => (
                "offered load and goodput",
                "per second",
                (0.0, load_top),
                false,
            ),
            1 => ("server queue", "attempts waiting", (0.0, queue_top), false),
            _ => (
                "latency of successful requests, end to end",
                "ms",
                latency_y,
                log_latency,
            ),
        };
        let lines: Vec<Line<'_>> = match panel {
            0 => {
                let mut lines = vec![
                    ("arrivals (requests)", PALETTE[1], steps(&arrivals, width_s)),
                    (
                        "attempts (with retries)",
                        PALETTE[0],
                        steps(&attempts, width_s),
                    ),
                    ("goodput (successes)", PALETTE[2], steps(&goodput, width_s)),
                ];
                if !capacity.is_empty() {
                    lines.push(("capacity", CAPACITY_COLOR, capacity.clone()));
                }
                lines
            }
            1 => vec![("queue at window end", PALETTE[0], steps(&queue, width_s))],
            _ => vec![
                ("p50", PALETTE[0], steps(&p50, width_s)),
                ("p99", PALETTE[1], steps(&p99, width_s)),
            ],
        };
        let builder = |area| {
            let mut b = ChartBuilder::on(area);
            b.caption(caption, ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(64);
            b
        };
        let shade = TRIGGER_COLOR.mix(0.15);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc("time (s)")
                    .y_desc(y_desc)
                    .light_line_style(TRANSPARENT)
                    .y_labels(6)
                    .x_label_formatter(&|v| tick(*v))
                    .y_label_formatter(&|v| tick(*v))
                    .draw()
                    .map_err(err)?;
                for (i, (from, to, label)) in picture.triggers.iter().enumerate() {
                    let drawn = chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(*from, y.0), (to.min(end_s), y.1)],
                            shade.filled(),
                        )))
                        .map_err(err)?;
                    if panel == 0 {
                        drawn
                            .label(format!("trigger {}: {label}", i + 1))
                            .legend(move |(x, y)| {
                                Rectangle::new([(x, y - 5), (x + 18, y + 5)], shade.filled())
                            });
                    }
                }
                for (label, color, runs) in &lines {
                    let color = *color;
                    for (i, run) in runs.iter().enumerate() {
                        let points = run.iter().map(|&(px, py)| (px, py.max(y.0)));
                        let drawn = chart
                            .draw_series(LineSeries::new(points, color.stroke_width(2)))
                            .map_err(err)?;
                        if i == 0 {
                            drawn.label(*label).legend(move |(x, y)| {
                                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                            });
                        }
                    }
                }
                legend(&mut chart, SeriesLabelPosition::UpperRight)?;
                Ok(frame_of(&chart, x, y, false, log_y))
            }};
        }
        if log_y {
            draw!(
                builder(area)
                    .build_cartesian_2d(x.0..x.1, (y.0..y.1).log_scale())
                    .map_err(err)?
            )
        } else {
            draw!(
                builder(area)
                    .build_cartesian_2d(x.0..x.1, y.0..y.1)
                    .map_err(err)?
            )
        }
    })
}
