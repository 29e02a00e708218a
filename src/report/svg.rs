//! Pictures as SVG (plotters' SVG backend, no system libraries): retries over
//! time against capacity, delay bands per retry, and a sweep's curves.
//!
//! Each figure comes back with the frames of its panels (data ranges and
//! pixel areas), so a test can map the drawn coordinates back to data and
//! check them against what was computed.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use crate::experiment::schedule::Schedule;
use crate::measure::timeline::Timeline;
use crate::report::error::ReportError;

/// The colour of retries in timelines.
pub const RETRIES_COLOR: RGBColor = RGBColor(31, 119, 180);
/// The colour of the capacity line.
pub const CAPACITY_COLOR: RGBColor = RGBColor(214, 39, 40);
/// Series colours, in order (a colour-blind-safe palette).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// One panel's coordinates: data ranges and the pixel rectangle they fill.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The x axis's data range.
    pub x: (f64, f64),
    /// The y axis's data range.
    pub y: (f64, f64),
    /// True if the x axis is logarithmic.
    pub log_x: bool,
    /// True if the y axis is logarithmic.
    pub log_y: bool,
    /// Pixel columns of the plotting area.
    pub px: (i32, i32),
    /// Pixel rows of the plotting area (top first).
    pub py: (i32, i32),
}

impl Frame {
    fn unmap(value: f64, (p0, p1): (i32, i32), (d0, d1): (f64, f64), log: bool, flip: bool) -> f64 {
        let mut f = (value - f64::from(p0)) / f64::from(p1 - p0);
        if flip {
            f = 1.0 - f;
        }
        if log {
            (d0.ln() + f * (d1.ln() - d0.ln())).exp()
        } else {
            d0 + f * (d1 - d0)
        }
    }

    /// The data x of pixel column `px`.
    pub fn data_x(&self, px: f64) -> f64 {
        Self::unmap(px, self.px, self.x, self.log_x, false)
    }

    /// The data y of pixel row `py`.
    pub fn data_y(&self, py: f64) -> f64 {
        Self::unmap(py, self.py, self.y, self.log_y, true)
    }
}

/// An SVG document and its panels' frames.
#[derive(Debug, Clone)]
pub struct Figure {
    /// The SVG text.
    pub svg: String,
    /// Each panel's frame, top to bottom.
    pub frames: Vec<Frame>,
}

pub(crate) type PlotResult<T> = Result<T, ReportError>;

pub(crate) fn err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Plot(format!("drawing failed: {e}"))
}

pub(crate) fn frame_of<X, Y>(
    chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    x: (f64, f64),
    y: (f64, f64),
    log_x: bool,
    log_y: bool,
) -> Frame
where
    X: Ranged,
    Y: Ranged,
{
    let (px, py) = chart.plotting_area().get_pixel_range();
    Frame {
        x,
        y,
        log_x,
        log_y,
        px: (px.start, px.end - 1),
        py: (py.start, py.end - 1),
    }
}

/// Retries per ms over time, one panel per timeline on shared axes, each with
/// the resource's capacity line (where it has one). `panels` are (label,
/// timeline); `title` names the workload.
pub fn timelines(
    title: &str,
    panels: &[(String, &Timeline)],
    capacity_per_ms: Option<f64>,
) -> PlotResult<Figure> {
    let span_us = panels
        .iter()
        .map(|(_, t)| t.bin_us * t.retries.len() as u64)
        .max()
        .unwrap_or(1);
    let (scale, unit) = if span_us > 10_000_000 {
        (1e-6, "s")
    } else {
        (1e-3, "ms")
    };
    let top = panels
        .iter()
        .flat_map(|(_, t)| t.rates_per_ms())
        .fold(capacity_per_ms.unwrap_or(0.0), f64::max)
        .max(1e-9)
        * 1.1;
    let x = (0.0, span_us as f64 * scale);
    stacked(title, 220, panels.len(), |i, area| {
        let (label, timeline) = &panels[i];
        {
            let mut chart = ChartBuilder::on(area)
                .caption(label, ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(64)
                .build_cartesian_2d(x.0..x.1, 0.0..top)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(format!("time since the first call ({unit})"))
                .y_desc("retries per ms")
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v))
                .draw()
                .map_err(err)?;
            let bin = timeline.bin_us as f64 * scale;
            let rates: Vec<Option<f64>> = timeline.rates_per_ms().into_iter().map(Some).collect();
            chart
                .draw_series(LineSeries::new(
                    steps(&rates, bin).concat(),
                    RETRIES_COLOR.stroke_width(1),
                ))
                .map_err(err)?
                .label(format!(
                    "retries per ms ({} bins)",
                    crate::base::time::format_duration(timeline.bin_us)
                ))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RETRIES_COLOR));
            if let Some(c) = capacity_per_ms {
                chart
                    .draw_series(LineSeries::new(
                        vec![(x.0, c), (x.1, c)],
                        CAPACITY_COLOR.stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(format!("capacity ({c} per ms)"))
                    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], CAPACITY_COLOR));
            }
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
            Ok(frame_of(&chart, x, (0.0, top), false, false))
        }
    })
}

/// Each policy's delay per retry number: the p1–p99 band and the median, on a
/// log delay axis, one row per policy on shared axes.
pub fn delay_bands(title: &str, schedules: &[Schedule]) -> PlotResult<Figure> {
    let retries = schedules.iter().map(|s| s.retries.len()).max().unwrap_or(1);
    let positive = |v: u64| (v > 0).then_some(v as f64 / 1e3);
    let low = schedules
        .iter()
        .flat_map(|s| {
            s.retries
                .iter()
                .filter_map(|r| positive(r.p1).or(positive(r.p50)))
        })
        .fold(f64::INFINITY, f64::min);
    let high = schedules
        .iter()
        .flat_map(|s| s.retries.iter().map(|r| r.p99 as f64 / 1e3))
        .fold(0.0, f64::max);
    let y = ((low / 2.0).max(1e-3), (high * 2.0).max(1e-2));
    let x = (0.5, retries as f64 + 0.5);
    stacked(title, 170, schedules.len(), |i, area| {
        let schedule = &schedules[i];
        {
            let color = PALETTE[i % PALETTE.len()];
            let mut chart = ChartBuilder::on(area)
                .caption(schedule.policy.kind.name(), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(64)
                .build_cartesian_2d(x.0..x.1, (y.0..y.1).log_scale())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("retry")
                .y_desc("delay (ms)")
                .x_labels(retries.min(20))
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v))
                .draw()
                .map_err(err)?;
            chart
                .draw_series(schedule.retries.iter().map(|r| {
                    let k = f64::from(r.retry);
                    let p1 = (r.p1 as f64 / 1e3).max(y.0);
                    Rectangle::new(
                        [(k - 0.3, p1), (k + 0.3, (r.p99 as f64 / 1e3).max(y.0))],
                        color.mix(0.35).filled(),
                    )
                }))
                .map_err(err)?
                .label("p1 to p99")
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 18, y + 5)], color.mix(0.35).filled())
                });
            chart
                .draw_series(schedule.retries.iter().map(|r| {
                    Circle::new(
                        (f64::from(r.retry), (r.p50 as f64 / 1e3).max(y.0)),
                        3,
                        color.filled(),
                    )
                }))
                .map_err(err)?
                .label("median")
                .legend(move |(x, y)| Circle::new((x + 9, y), 3, color.filled()));
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
            Ok(frame_of(&chart, x, y, false, true))
        }
    })
}

/// A step line through per-window values: two vertices per window, broken
/// where a window has no value.
pub(crate) fn steps(values: &[Option<f64>], width_s: f64) -> Vec<Vec<(f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for (i, value) in values.iter().enumerate() {
        match value {
            Some(v) => {
                let from = i as f64 * width_s;
                let run = runs.last_mut().expect("one run at least");
                run.push((from, *v));
                run.push((from + width_s, *v));
            }
            None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(Vec::new()),
            None => {}
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

/// A figure of `count` panels stacked top to bottom under `title`, each
/// `panel_height` px tall, drawn by `panel(i, area)`, which returns its frame.
pub(crate) fn stacked(
    title: &str,
    panel_height: u32,
    count: usize,
    mut panel: impl FnMut(usize, &DrawingArea<SVGBackend<'_>, Shift>) -> PlotResult<Frame>,
) -> PlotResult<Figure> {
    let mut svg = String::new();
    let mut frames = Vec::with_capacity(count);
    {
        let height = 100 + panel_height * count as u32;
        let root = SVGBackend::with_string(&mut svg, (960, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(err)?;
        for (i, area) in root.split_evenly((count, 1)).iter().enumerate() {
            frames.push(panel(i, area)?);
        }
        root.present().map_err(err)?;
    }
    Ok(Figure { svg, frames })
}

/// A panel over time on linear axes `x` (s) and `y`: its caption, the
/// y axis's words, ticks as [`tick`] writes them and no minor grid (the
/// panels of `compare --plot` on the server model).
pub(crate) fn time_panel<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    y_desc: &str,
    x: (f64, f64),
    y: (f64, f64),
) -> PlotResult<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(err)?;
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
    Ok(chart)
}

/// The legend box, where `position` says.
pub(crate) fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> PlotResult<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(err)
}

/// A tick label: `1,000,000`, `2.5`, `0.001`.
pub(crate) fn tick(v: f64) -> String {
    if v.abs() >= 1.0 && (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        let sign = if v < 0.0 { "-" } else { "" };
        format!(
            "{sign}{}",
            crate::base::format::group_thousands(v.round().abs() as u64)
        )
    } else {
        format!("{}", (v * 1e6).round() / 1e6)
    }
}

/// One curve of a sweep: its label and points `(x, y, CI half-width)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The group's label (the `--by` value).
    pub label: String,
    /// Points in x order.
    pub points: Vec<(f64, f64, Option<f64>)>,
}

/// A sweep's curves with their 95% CI bands, one colour per group.
pub fn curves(
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    log_x: bool,
    log_y: bool,
) -> PlotResult<Figure> {
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let lo_y = all()
        .map(|p| p.1 - p.2.unwrap_or(0.0))
        .fold(f64::INFINITY, f64::min);
    let hi_y = all()
        .map(|p| p.1 + p.2.unwrap_or(0.0))
        .fold(f64::NEG_INFINITY, f64::max);
    let lo_x = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi_x = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if !(lo_x.is_finite() && lo_y.is_finite()) {
        return Err(ReportError::NothingToPlot);
    }
    if (log_x && lo_x <= 0.0) || (log_y && lo_y <= 0.0) {
        return Err(ReportError::LogOfNonPositive);
    }
    let pad = |lo: f64, hi: f64, log: bool| {
        if log {
            (lo / 1.2, hi * 1.2)
        } else {
            let span = (hi - lo).abs().max(hi.abs() * 1e-3).max(1e-9);
            (lo - span * 0.05, hi + span * 0.05)
        }
    };
    let x = pad(lo_x, hi_x, log_x);
    let y = pad(lo_y, hi_y, log_y);
    let mut svg = String::new();
    let frame;
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        frame = match (log_x, log_y) {
            (false, false) => draw_curves(
                &root,
                title,
                x_label,
                y_label,
                curves,
                x.0..x.1,
                y.0..y.1,
                x,
                y,
                (false, false),
            ),
            (true, false) => draw_curves(
                &root,
                title,
                x_label,
                y_label,
                curves,
                (x.0..x.1).log_scale(),
                y.0..y.1,
                x,
                y,
                (true, false),
            ),
            (false, true) => draw_curves(
                &root,
                title,
                x_label,
                y_label,
                curves,
                x.0..x.1,
                (y.0..y.1).log_scale(),
                x,
                y,
                (false, true),
            ),
            (true, true) => draw_curves(
                &root,
                title,
                x_label,
                y_label,
                curves,
                (x.0..x.1).log_scale(),
                (y.0..y.1).log_scale(),
                x,
                y,
                (true, true),
            ),
        }?;
        root.present().map_err(err)?;
    }
    Ok(Figure {
        svg,
        frames: vec![frame],
    })
}

#[allow(clippy::too_many_arguments)]
fn draw_curves<X, Y>(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    x_spec: X,
    y_spec: Y,
    x: (f64, f64),
    y: (f64, f64),
    (log_x, log_y): (bool, bool),
) -> PlotResult<Frame>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(err)?;
    for (i, curve) in curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let upper = curve.points.iter().map(|p| (p.0, p.1 + p.2.unwrap_or(0.0)));
        let lower = curve
            .points
            .iter()
            .rev()
            .map(|p| (p.0, (p.1 - p.2.unwrap_or(0.0)).max(y.0)));
        if curve.points.iter().any(|p| p.2.is_some()) {
            chart
                .draw_series(std::iter::once(Polygon::new(
                    upper.chain(lower).collect::<Vec<_>>(),
                    color.mix(0.2).filled(),
                )))
                .map_err(err)?;
        }
        chart
            .draw_series(LineSeries::new(
                curve.points.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(curve.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    legend(&mut chart, quietest_corner(curves, x, y, (log_x, log_y)))?;
    Ok(frame_of(&chart, x, y, log_x, log_y))
}

/// Where the legend hides the fewest points: the corner (upper left first,
/// on a tie) or side whose quarter of the plot holds the fewest curve
/// points, measured on the axes' scales.
fn quietest_corner(
    curves: &[Curve],
    x: (f64, f64),
    y: (f64, f64),
    (log_x, log_y): (bool, bool),
) -> SeriesLabelPosition {
    let share = |v: f64, (lo, hi): (f64, f64), log: bool| {
        if log {
            (v.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    let points: Vec<(f64, f64)> = curves
        .iter()
        .flat_map(|c| c.points.iter())
        .map(|p| (share(p.0, x, log_x), share(p.1, y, log_y)))
        .collect();
    // (position, x range, y range) in shares of the axes.
    let regions = [
        (SeriesLabelPosition::UpperLeft, (0.0, 0.5), (0.5, 1.01)),
        (SeriesLabelPosition::UpperRight, (0.5, 1.01), (0.5, 1.01)),
        (SeriesLabelPosition::MiddleRight, (0.5, 1.01), (0.25, 0.75)),
        (SeriesLabelPosition::LowerRight, (0.5, 1.01), (-0.01, 0.5)),
        (SeriesLabelPosition::LowerLeft, (0.0, 0.5), (-0.01, 0.5)),
        (SeriesLabelPosition::MiddleLeft, (0.0, 0.5), (0.25, 0.75)),
    ];
    let inside = |(x0, x1): (f64, f64), (y0, y1): (f64, f64)| {
        points
            .iter()
            .filter(|&&(px, py)| (x0..x1).contains(&px) && (y0..y1).contains(&py))
            .count()
    };
    regions
        .into_iter()
        .min_by_key(|&(_, xs, ys)| inside(xs, ys))
        .map_or(SeriesLabelPosition::UpperLeft, |(position, _, _)| position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_goes_where_the_curves_are_not() {
        let curve = |points: &[(f64, f64)]| Curve {
            label: String::new(),
            points: points.iter().map(|&(x, y)| (x, y, None)).collect(),
        };
        let rising = [curve(&[
            (0.0, 0.0),
            (1.0, 1.0),
            (2.0, 2.0),
            (3.0, 3.0),
            (4.0, 4.0),
        ])];
        // Along the diagonal: upper left and lower right are empty; upper
        // left wins the tie.
        let corner = quietest_corner(&rising, (0.0, 4.0), (0.0, 4.0), (false, false));
        assert_eq!(corner, SeriesLabelPosition::UpperLeft);
        // A curve high on the left: the legend moves off it.
        let high = [curve(&[
            (0.0, 4.0),
            (0.5, 4.0),
            (1.0, 4.0),
            (1.5, 3.5),
            (4.0, 0.0),
        ])];
        let corner = quietest_corner(&high, (0.0, 4.0), (0.0, 4.0), (false, false));
        assert_ne!(corner, SeriesLabelPosition::UpperLeft);
    }

    #[test]
    fn steps_break_where_a_window_has_no_value() {
        let runs = steps(&[Some(1.0), None, None, Some(2.0), Some(3.0)], 0.5);
        assert_eq!(
            runs,
            vec![
                vec![(0.0, 1.0), (0.5, 1.0)],
                vec![(1.5, 2.0), (2.0, 2.0), (2.0, 3.0), (2.5, 3.0)],
            ]
        );
        assert!(steps(&[None, None], 1.0).is_empty());
    }
}
