//! Pictures as SVG (plotters' SVG backend, no system libraries): retries over
//! time against capacity, delay bands per retry, and a sweep's curves.
//!
//! Each figure comes back with the frames of its panels (data ranges and
//! pixel areas), so a test can map the drawn coordinates back to data and
//! check them against what was computed.

use plotters::coord::Shift;
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::base::time::Micros;
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
    /// Each legend's box in pixels: never inside a plotting area where data
    /// is drawn.
    pub legends: Vec<PixelBox>,
}

/// A box in a figure's pixels: (left, top, right, bottom).
pub type PixelBox = (i32, i32, i32, i32);

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
        .unwrap_or(Micros::from_us(1));
    let (scale, unit) = if span_us > Micros::from_s(10) {
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
    let x = (0.0, span_us.ticks() as f64 * scale);
    let legends: Vec<Vec<Entry>> = panels
        .iter()
        .map(|(_, timeline)| {
            let mut entries = vec![Entry::new(
                format!(
                    "retries per ms ({} bins)",
                    crate::base::time::format_duration(timeline.bin_us)
                ),
                Swatch::Line(RETRIES_COLOR, false),
            )];
            if let Some(c) = capacity_per_ms {
                entries.push(Entry::new(
                    format!("capacity ({c} per ms)"),
                    Swatch::Line(CAPACITY_COLOR, false),
                ));
            }
            entries
        })
        .collect();
    stacked(title, 220, panels.len(), &legends, |i, area| {
        let (label, timeline) = &panels[i];
        {
            let mut chart = panel_builder(area, label)
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
            let bin = timeline.bin_us.ticks() as f64 * scale;
            let rates: Vec<Option<f64>> = timeline.rates_per_ms().into_iter().map(Some).collect();
            chart
                .draw_series(LineSeries::new(
                    steps(&rates, bin).concat(),
                    RETRIES_COLOR.stroke_width(1),
                ))
                .map_err(err)?;
            if let Some(c) = capacity_per_ms {
                chart
                    .draw_series(LineSeries::new(
                        vec![(x.0, c), (x.1, c)],
                        CAPACITY_COLOR.stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            Ok(frame_of(&chart, x, (0.0, top), false, false))
        }
    })
}

/// Each policy's delay per retry number: the p1–p99 band and the median, on a
/// log delay axis, one row per policy on shared axes.
pub fn delay_bands(title: &str, schedules: &[Schedule]) -> PlotResult<Figure> {
    let retries = schedules.iter().map(|s| s.retries.len()).max().unwrap_or(1);
    let positive = |v: Micros| (v > Micros::ZERO).then_some(v.ticks() as f64 / 1e3);
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
        .flat_map(|s| s.retries.iter().map(|r| r.p99.ticks() as f64 / 1e3))
        .fold(0.0, f64::max);
    let y = ((low / 2.0).max(1e-3), (high * 2.0).max(1e-2));
    let x = (0.5, retries as f64 + 0.5);
    let legends: Vec<Vec<Entry>> = (0..schedules.len())
        .map(|i| {
            let color = PALETTE[i % PALETTE.len()];
            vec![
                Entry::new("p1 to p99", Swatch::Shade(color.mix(0.35))),
                Entry::new("median", Swatch::Dot(color)),
            ]
        })
        .collect();
    stacked(title, 170, schedules.len(), &legends, |i, area| {
        let schedule = &schedules[i];
        {
            let color = PALETTE[i % PALETTE.len()];
            let mut chart = ChartBuilder::on(area)
                .caption(schedule.policy.kind.name(), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(64)
                .build_cartesian_2d(x.0..x.1, log_axis(y))
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
                    let p1 = (r.p1.ticks() as f64 / 1e3).max(y.0);
                    Rectangle::new(
                        [
                            (k - 0.3, p1),
                            (k + 0.3, (r.p99.ticks() as f64 / 1e3).max(y.0)),
                        ],
                        color.mix(0.35).filled(),
                    )
                }))
                .map_err(err)?;
            chart
                .draw_series(schedule.retries.iter().map(|r| {
                    Circle::new(
                        (f64::from(r.retry), (r.p50.ticks() as f64 / 1e3).max(y.0)),
                        3,
                        color.filled(),
                    )
                }))
                .map_err(err)?;
            Ok(frame_of(&chart, x, y, false, true))
        }
    })
}

/// Ticks of a log axis over `[lo, hi]` (both above 0): the labelled ones
/// and the light grid between them. Under three decades the labels go 1, 2,
/// 5 per decade (under one decade, every whole multiple of its power of
/// ten), so a short axis still has values to read; from three decades, each
/// power of ten (every other one past twelve decades).
pub(crate) fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let decades = (hi / lo).log10();
    let mantissas: &[f64] = if decades < 1.0 {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    } else if decades < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let every = if decades > 12.0 { 2 } else { 1 };
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    // Within a part in 10^9 of the ends: a tick at the range's own edge.
    let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    for k in first..=last {
        let power = 10f64.powi(k);
        for m in 1..=9 {
            let v = f64::from(m) * power;
            if !inside(v) {
                continue;
            }
            let labelled = mantissas.contains(&f64::from(m)) && (m > 1 || k.rem_euclid(every) == 0);
            if labelled {
                bold.push(v);
            } else {
                light.push(v);
            }
        }
    }
    (bold, light)
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

/// What a legend entry's sample looks like.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    /// A line of this colour, dashed if true.
    Line(RGBColor, bool),
    /// A dotted line of this colour.
    Dotted(RGBColor),
    /// A shaded box (a window of time, a band).
    Shade(RGBAColor),
    /// A dot (a point).
    Dot(RGBColor),
    /// A vertical line (a moment marked), dashed if true.
    Mark(RGBColor, bool),
    /// Words only.
    Words,
}

/// One row of a legend.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its words.
    pub label: String,
    /// Its sample.
    pub swatch: Swatch,
}

impl Entry {
    pub(crate) fn new(label: impl Into<String>, swatch: Swatch) -> Entry {
        Entry {
            label: label.into(),
            swatch,
        }
    }
}

/// The legend's font size, px.
const LEGEND_FONT: f64 = 12.0;
/// A legend row's height, its inner margin and its sample's width, px.
const LEGEND_ROW: i32 = 18;
const LEGEND_PAD: i32 = 8;
const LEGEND_SAMPLE: i32 = 22;

/// A generous width of `text` in a sans-serif font of `size` px (SVG text is
/// measured by the viewer; 0.55 em a character is above the mean width of
/// DejaVu Sans's and Helvetica's lower case and digits).
pub(crate) fn text_width(text: &str, size: f64) -> i32 {
    (text.chars().count() as f64 * size * 0.55).ceil() as i32
}

/// A figure's title as SVG text from x = 20 within `width` px, above a plot
/// whose top is at y = 56: one line at 15 px, or, where it would not fit
/// (a long scenario description), two lines broken between words, the font
/// shrunk until the longer fits. A title never runs under a legend or off
/// the figure.
pub(crate) fn title_svg(title: &str, width: f64) -> String {
    let (lines, size) = title_in_two(title, width);
    title_text(&lines, size)
}

/// The smallest font, px, [`title_block`] shrinks a title to before it
/// takes a third line.
const TITLE_FONT_MIN: f64 = 12.0;

/// As [`title_svg`], but a title that two lines would shrink below 12 px
/// takes as many lines at 12 px as it needs; returns the SVG text and the
/// height, px, its lines past the second take (0 for up to two), by which
/// the figure below must move down.
pub(crate) fn title_block(title: &str, width: f64) -> (String, f64) {
    let (lines, size) = title_in_two(title, width);
    if size >= TITLE_FONT_MIN {
        return (title_text(&lines, size), 0.0);
    }
    let lines = wrap(title, TITLE_FONT_MIN, width as i32);
    let extra = (lines.len().saturating_sub(2)) as f64 * TITLE_FONT_MIN * 1.25;
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    (title_text(&lines, TITLE_FONT_MIN), extra)
}

/// `lines` of a title at `size` px from x = 20: one at y = 24, more from
/// y = 22 a line and a quarter apart.
fn title_text(lines: &[&str], size: f64) -> String {
    use crate::report::html::escape;
    if let [only] = lines {
        return format!(
            "<text x=\"20\" y=\"24\" font-size=\"{size}\">{}</text>\n",
            escape(only)
        );
    }
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            format!(
                "<text x=\"20\" y=\"{:.0}\" font-size=\"{size}\">{}</text>\n",
                22.0 + size * 1.25 * i as f64,
                escape(line)
            )
        })
        .collect()
}

/// `title` in one line at 15 px if it fits `width`, else in two and the
/// font size that fits them.
fn title_in_two(title: &str, width: f64) -> (Vec<&str>, f64) {
    const SIZE: f64 = 15.0;
    if f64::from(text_width(title, SIZE)) <= width {
        return (vec![title], SIZE);
    }
    // After a colon if both lines then fit at full size (a title's own
    // break: "what: by what"), else between the words nearest the middle.
    let split = |i: usize| (&title[..i], &title[i + 1..]);
    let fits =
        |(a, b): (&str, &str)| f64::from(text_width(a, SIZE).max(text_width(b, SIZE))) <= width;
    let middle = title.chars().count() / 2;
    let (first, second) = title
        .match_indices(": ")
        .map(|(i, _)| split(i + 1))
        .find(|&lines| fits(lines))
        .or_else(|| {
            title
                .char_indices()
                .filter(|&(_, c)| c == ' ')
                .min_by_key(|&(i, _)| title[..i].chars().count().abs_diff(middle))
                .map(|(i, _)| split(i))
        })
        .unwrap_or((title, ""));
    let longer = text_width(first, 1.0).max(text_width(second, 1.0));
    let size = (width / f64::from(longer.max(1))).min(SIZE).floor();
    (vec![first, second], size)
}

/// A legend's size in pixels (width, height); (0, 0) without entries.
pub(crate) fn legend_size(entries: &[Entry]) -> (i32, i32) {
    if entries.is_empty() {
        return (0, 0);
    }
    let words = entries
        .iter()
        .map(|e| text_width(&e.label, LEGEND_FONT))
        .max()
        .unwrap_or(0);
    (
        2 * LEGEND_PAD + LEGEND_SAMPLE + 6 + words,
        2 * LEGEND_PAD + LEGEND_ROW * entries.len() as i32 - 6,
    )
}

/// Draws the legend of `entries` on `area` with its top left corner at
/// `(x, y)` (pixels of `area`); returns its box in the figure's pixels.
pub(crate) fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[Entry],
    (x, y): (i32, i32),
) -> PlotResult<PixelBox> {
    let (w, h) = legend_size(entries);
    let (bx, by) = area.get_base_pixel();
    area.draw(&Rectangle::new([(x, y), (x + w, y + h)], WHITE.filled()))
        .map_err(err)?;
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    let font = ("sans-serif", LEGEND_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, entry) in entries.iter().enumerate() {
        let cy = y + LEGEND_PAD + 6 + LEGEND_ROW * i as i32;
        let (x0, x1) = (x + LEGEND_PAD, x + LEGEND_PAD + LEGEND_SAMPLE);
        let dashed = |color: RGBColor, from: (i32, i32), to: (i32, i32)| {
            // Three dashes along the sample.
            let pieces = 3;
            (0..pieces)
                .map(|k| {
                    let at = |f: f64| {
                        (
                            from.0 + ((to.0 - from.0) as f64 * f) as i32,
                            from.1 + ((to.1 - from.1) as f64 * f) as i32,
                        )
                    };
                    let f0 = k as f64 / pieces as f64;
                    area.draw(&PathElement::new(
                        vec![at(f0), at(f0 + 0.6 / pieces as f64)],
                        color.stroke_width(2),
                    ))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|_| ())
        };
        match entry.swatch {
            Swatch::Line(color, false) => area
                .draw(&PathElement::new(
                    vec![(x0, cy), (x1, cy)],
                    color.stroke_width(2),
                ))
                .map_err(err)?,
            Swatch::Line(color, true) => dashed(color, (x0, cy), (x1, cy)).map_err(err)?,
            Swatch::Dotted(color) => (0..5)
                .map(|k| {
                    let at = x0 + k * LEGEND_SAMPLE / 5;
                    area.draw(&PathElement::new(
                        vec![(at, cy), (at + 2, cy)],
                        color.stroke_width(2),
                    ))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|_| ())
                .map_err(err)?,
            Swatch::Shade(color) => area
                .draw(&Rectangle::new(
                    [(x0, cy - 6), (x1, cy + 6)],
                    color.filled(),
                ))
                .map_err(err)?,
            Swatch::Dot(color) => area
                .draw(&Circle::new(((x0 + x1) / 2, cy), 3, color.filled()))
                .map_err(err)?,
            Swatch::Mark(color, false) => area
                .draw(&PathElement::new(
                    vec![((x0 + x1) / 2, cy - 7), ((x0 + x1) / 2, cy + 7)],
                    color.stroke_width(2),
                ))
                .map_err(err)?,
            Swatch::Mark(color, true) => {
                let mid = (x0 + x1) / 2;
                dashed(color, (mid, cy - 7), (mid, cy + 7)).map_err(err)?;
            }
            Swatch::Words => {}
        }
        area.draw(&Text::new(entry.label.clone(), (x1 + 6, cy), font.clone()))
            .map_err(err)?;
    }
    Ok((bx + x, by + y, bx + x + w, by + y + h))
}

/// The figures' width, px, without a legend column.
pub(crate) const WIDTH: u32 = 960;

/// The font size of a figure's first title line, and of the lines after it.
const TITLE_FONT: f64 = 18.0;
const SUBTITLE_FONT: f64 = 14.0;
/// The height of a title line, px.
const TITLE_LINE: i32 = 22;

/// `text` in lines of at most `width` px at `size` px (as [`text_width`]
/// estimates), broken between words and balanced: as few lines as fit, each
/// as long as the others as far as the words allow. A word too long for a
/// line of its own is broken between characters, so nothing is cut off.
pub(crate) fn wrap(text: &str, size: f64, width: i32) -> Vec<String> {
    let lines = wrap_greedy(text, size, width);
    if lines.len() < 2 {
        return lines;
    }
    // The narrowest width that needs no more lines, no narrower than the
    // widest word that fits (which would then be broken).
    let widest_word = text
        .split(' ')
        .map(|w| text_width(w, size))
        .filter(|&w| w <= width)
        .max()
        .unwrap_or(1);
    let (mut low, mut high) = (widest_word.max(1), width);
    while low < high {
        let middle = low + (high - low) / 2;
        if wrap_greedy(text, size, middle).len() <= lines.len() {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    wrap_greedy(text, size, high)
}

/// `text` in lines of at most `width` px, each filled before the next.
fn wrap_greedy(text: &str, size: f64, width: i32) -> Vec<String> {
    let fits = |line: &str| text_width(line, size) <= width;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        // A word wider than a whole line: as many characters as fit.
        for c in word.chars() {
            if !line.is_empty() && !fits(&format!("{line}{c}")) {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    lines.push(line);
    lines
}

/// A figure's title (lines split at `\n`) as drawn within `width` px: each
/// line wrapped to fit, with its font size (the first line's larger).
fn title_lines(title: &str, width: u32) -> Vec<(String, f64)> {
    // 20 px clear of each edge.
    let room = width as i32 - 40;
    title
        .lines()
        .enumerate()
        .flat_map(|(i, line)| {
            let size = if i == 0 { TITLE_FONT } else { SUBTITLE_FONT };
            wrap(line, size, room).into_iter().map(move |l| (l, size))
        })
        .collect()
}

/// The title's `lines` ([`title_lines`]) across the top of `root`; returns
/// the area below them.
fn titled<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    lines: &[(String, f64)],
) -> PlotResult<DrawingArea<SVGBackend<'a>, Shift>> {
    let height = 16 + TITLE_LINE * lines.len() as i32;
    let (top, rest) = root.split_vertically(height);
    let width = top.dim_in_pixel().0 as i32;
    for (i, (line, size)) in lines.iter().enumerate() {
        let style = ("sans-serif", *size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        top.draw(&Text::new(
            line.clone(),
            (width / 2, 8 + TITLE_LINE * i as i32),
            style,
        ))
        .map_err(err)?;
    }
    Ok(rest)
}

/// A figure of `count` panels stacked top to bottom under `title` (lines
/// split at `\n`, each wrapped to the figure's width), each `panel_height` px tall, drawn by `panel(i, area)`,
/// which returns its frame. Panel `i`'s legend, `legends[i]` (none if
/// missing or empty), goes in a column right of the panels, level with the
/// top of its plotting area, so it never covers data.
pub(crate) fn stacked(
    title: &str,
    panel_height: u32,
    count: usize,
    legends: &[Vec<Entry>],
    mut panel: impl FnMut(usize, &DrawingArea<SVGBackend<'_>, Shift>) -> PlotResult<Frame>,
) -> PlotResult<Figure> {
    let mut svg = String::new();
    let mut frames = Vec::with_capacity(count);
    let mut boxes = Vec::new();
    let column = legends
        .iter()
        .map(|l| legend_size(l).0)
        .max()
        .filter(|&w| w > 0)
        .map_or(0, |w| w as u32 + 12);
    {
        let lines = title_lines(title, WIDTH + column);
        let height =
            82 + TITLE_LINE as u32 * lines.len().max(1) as u32 + panel_height * count as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDTH + column, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = titled(&root, &lines)?;
        for (i, area) in root.split_evenly((count, 1)).iter().enumerate() {
            let (left, right) = area.split_horizontally(WIDTH);
            let frame = panel(i, &left)?;
            if let Some(entries) = legends.get(i).filter(|l| !l.is_empty()) {
                let top = frame.py.0 - right.get_base_pixel().1;
                boxes.push(draw_legend(&right, entries, (4, top))?);
            }
            frames.push(frame);
        }
        root.present().map_err(err)?;
    }
    Ok(Figure {
        svg,
        frames,
        legends: boxes,
    })
}

/// A stacked panel's chart, before its axes: its caption, margin and the
/// room for its tick labels, the same in every picture of panels.
pub(crate) fn panel_builder<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(64);
    builder
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
    let mut chart = panel_builder(area, caption)
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

/// A confidence interval's `(low, high)`: symmetric for a mean's, not for
/// a proportion's Wilson interval.
pub type Band = (f64, f64);

/// A point of a curve: `(x, y, band)`.
pub type CurvePoint = (f64, f64, Option<Band>);

/// One curve of a sweep: its label and points.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The group's label (the `--by` value).
    pub label: String,
    /// Points in x order.
    pub points: Vec<CurvePoint>,
}

/// A sweep's curves with their 95% CI bands, one colour per group. The
/// legend goes inside the plot where its box crosses no curve or band (the
/// upper left first), else in a column to the plot's right.
pub fn curves(
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    log_x: bool,
    log_y: bool,
) -> PlotResult<Figure> {
    curves_within(title, x_label, y_label, curves, log_x, log_y, None)
}

/// Curves of proportions (storm probabilities): as [`curves`], on a y axis
/// from 0 to 1 whatever the data, so a flat 0 reads as 0 of 1 at a glance.
pub fn proportion_curves(
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    log_x: bool,
) -> PlotResult<Figure> {
    curves_within(
        title,
        x_label,
        y_label,
        curves,
        log_x,
        false,
        Some((-0.02, 1.02)),
    )
}

/// [`curves`] on the y range `fixed_y` if given, else the data's, padded.
fn curves_within(
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[Curve],
    log_x: bool,
    log_y: bool,
    fixed_y: Option<(f64, f64)>,
) -> PlotResult<Figure> {
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let lo_y = all()
        .map(|p| p.2.map_or(p.1, |b| b.0.min(p.1)))
        .fold(f64::INFINITY, f64::min);
    let hi_y = all()
        .map(|p| p.2.map_or(p.1, |b| b.1.max(p.1)))
        .fold(f64::NEG_INFINITY, f64::max);
    let lo_x = all().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi_x = all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if !(lo_x.is_finite() && lo_y.is_finite()) {
        return Err(ReportError::NothingToPlot);
    }
    for (axis, label, log, lowest) in [("x", x_label, log_x, lo_x), ("y", y_label, log_y, lo_y)] {
        if log && lowest <= 0.0 {
            return Err(ReportError::LogOfNonPositive {
                axis,
                label: label.to_string(),
                lowest: lowest.to_string(),
            });
        }
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
    let y = fixed_y.unwrap_or_else(|| pad(lo_y, hi_y, log_y));
    check_range("x", x_label, (lo_x, hi_x), x, log_x)?;
    check_range("y", y_label, (lo_y, hi_y), y, log_y)?;
    let entries: Vec<Entry> = curves
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let color = PALETTE[i % PALETTE.len()];
            let swatch = match curve_dash(i) {
                None => Swatch::Line(color, false),
                Some((_, 3)) => Swatch::Dotted(color),
                Some(_) => Swatch::Line(color, true),
            };
            Entry::new(c.label.clone(), swatch)
        })
        .collect();
    let page = CurvesPage {
        title,
        x_label,
        y_label,
        curves,
        entries: &entries,
        x,
        y,
    };
    match page.render(log_x, log_y, false)? {
        Some(figure) => Ok(figure),
        None => Ok(page
            .render(log_x, log_y, true)?
            .expect("a legend beside the plot always has room")),
    }
}

/// Refuses an axis over `data` (padded to `padded`) that no picture can
/// draw: an end, the span or the tick step not finite (the ticks of a
/// range past f64's largest number never end), or, on a log axis, the
/// ratio of its ends.
fn check_range(
    axis: &str,
    label: &str,
    data: (f64, f64),
    padded: (f64, f64),
    log: bool,
) -> PlotResult<()> {
    let (lo, hi) = padded;
    let span = if log { hi / lo } else { hi - lo };
    let step = if log { span.log10() } else { span / 10.0 };
    if [lo, hi, span, step].iter().all(|v| v.is_finite()) && span > 0.0 && step > 0.0 {
        return Ok(());
    }
    Err(ReportError::Plot(format!(
        "the {axis} axis ({label}) would run from {} to {}{}, past the largest finite number \
         (about 1.8e308): no picture can place it",
        crate::base::format::csv_number(data.0),
        crate::base::format::csv_number(data.1),
        if axis == "y" {
            " (with any 95% CI band)"
        } else {
            ""
        }
    )))
}

/// Curve `i`'s dashes (dash, gap, px): solid for the palette's first
/// round of colours, dashed for the second, dotted for the third and on,
/// so no two of 24 curves look alike.
fn curve_dash(i: usize) -> Option<(u32, u32)> {
    match i / PALETTE.len() {
        0 => None,
        1 => Some((9, 5)),
        _ => Some((2, 3)),
    }
}

/// What [`curves`] draws, on either layout.
struct CurvesPage<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    curves: &'a [Curve],
    entries: &'a [Entry],
    x: (f64, f64),
    y: (f64, f64),
}

/// A log axis over `range` with [`log_ticks`]'s ticks.
pub(crate) fn log_axis(range: (f64, f64)) -> WithKeyPoints<LogCoord<f64>> {
    let (bold, light) = log_ticks(range.0, range.1);
    (range.0..range.1)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

impl CurvesPage<'_> {
    /// The figure with its legend inside the plot (`None` if no place there
    /// is free) or, if `beside`, right of it.
    fn render(&self, log_x: bool, log_y: bool, beside: bool) -> PlotResult<Option<Figure>> {
        let column = if beside {
            legend_size(self.entries).0 as u32 + 16
        } else {
            0
        };
        let (x, y) = (self.x, self.y);
        let mut svg = String::new();
        let placed;
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH + column, 600)).into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            placed = match (log_x, log_y) {
                (false, false) => self.draw(&root, x.0..x.1, y.0..y.1, (false, false), column),
                (true, false) => self.draw(&root, log_axis(x), y.0..y.1, (true, false), column),
                (false, true) => self.draw(&root, x.0..x.1, log_axis(y), (false, true), column),
                (true, true) => self.draw(&root, log_axis(x), log_axis(y), (true, true), column),
            }?;
            root.present().map_err(err)?;
        }
        Ok(placed.map(|(frame, legend)| Figure {
            svg,
            frames: vec![frame],
            legends: vec![legend],
        }))
    }

    fn draw<X, Y>(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        x_spec: X,
        y_spec: Y,
        (log_x, log_y): (bool, bool),
        column: u32,
    ) -> PlotResult<Option<(Frame, PixelBox)>>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let (x, y) = (self.x, self.y);
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, ("sans-serif", 18))
            .margin(12)
            .margin_right(12 + column)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(x_spec, y_spec)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .draw()
            .map_err(err)?;
        // What the legend must not cover, in pixels: each curve's segments
        // and each band's extent.
        let mut drawn: Vec<(i32, i32)> = Vec::new();
        for (i, curve) in self.curves.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let upper: Vec<(f64, f64)> = curve
                .points
                .iter()
                .map(|p| (p.0, p.2.map_or(p.1, |b| b.1)))
                .collect();
            let lower: Vec<(f64, f64)> = curve
                .points
                .iter()
                .map(|p| (p.0, p.2.map_or(p.1, |b| b.0).max(y.0)))
                .collect();
            if curve.points.iter().any(|p| p.2.is_some()) {
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        upper
                            .iter()
                            .chain(lower.iter().rev())
                            .copied()
                            .collect::<Vec<_>>(),
                        color.mix(0.2).filled(),
                    )))
                    .map_err(err)?;
                for (u, l) in upper.windows(2).zip(lower.windows(2)) {
                    let px = |p: (f64, f64)| chart.backend_coord(&p);
                    let (u0, u1, l0, l1) = (px(u[0]), px(u[1]), px(l[0]), px(l[1]));
                    let n = (u1.0 - u0.0).abs().max(1);
                    for k in 0..=n {
                        let f = f64::from(k) / f64::from(n);
                        let lerp = |a: (i32, i32), b: (i32, i32)| {
                            (
                                a.0 + (f64::from(b.0 - a.0) * f) as i32,
                                a.1 + (f64::from(b.1 - a.1) * f) as i32,
                            )
                        };
                        sample_segment(&mut drawn, lerp(u0, u1), lerp(l0, l1));
                    }
                }
            }
            let points = curve.points.iter().map(|p| (p.0, p.1));
            match curve_dash(i) {
                None => chart.draw_series(LineSeries::new(points, color.stroke_width(2))),
                Some((dash, gap)) => chart.draw_series(DashedLineSeries::new(
                    points,
                    dash,
                    gap,
                    color.stroke_width(2),
                )),
            }
            .map_err(err)?;
            let line: Vec<(i32, i32)> = curve
                .points
                .iter()
                .map(|p| chart.backend_coord(&(p.0, p.1)))
                .collect();
            for pair in line.windows(2) {
                sample_segment(&mut drawn, pair[0], pair[1]);
            }
            if let [only] = line[..] {
                drawn.push(only);
            }
        }
        let frame = frame_of(&chart, x, y, log_x, log_y);
        let size = legend_size(self.entries);
        let place = if column > 0 {
            Some((frame.px.1 + 16, frame.py.0))
        } else {
            free_place(&frame, size, &drawn)
        };
        let Some(place) = place else {
            return Ok(None);
        };
        let legend = draw_legend(root, self.entries, place)?;
        Ok(Some((frame, legend)))
    }
}

/// Pushes the pixels along the segment from `a` to `b`, a pixel apart.
fn sample_segment(into: &mut Vec<(i32, i32)>, a: (i32, i32), b: (i32, i32)) {
    let n = (b.0 - a.0).abs().max((b.1 - a.1).abs()).max(1);
    for k in 0..=n {
        let f = f64::from(k) / f64::from(n);
        into.push((
            a.0 + (f64::from(b.0 - a.0) * f).round() as i32,
            a.1 + (f64::from(b.1 - a.1) * f).round() as i32,
        ));
    }
}

/// The top left corner of a box of `size` inside `frame`'s plotting area,
/// 10 px in from its edges, that holds none of the `drawn` pixels (with 4 px
/// to spare): its corners first (upper left, upper right, lower right,
/// lower left), then the middles of its sides; `None` if none is free.
fn free_place(frame: &Frame, (w, h): (i32, i32), drawn: &[(i32, i32)]) -> Option<(i32, i32)> {
    let inset = 10;
    let (left, right) = (frame.px.0 + inset, frame.px.1 - inset - w);
    let (top, bottom) = (frame.py.0 + inset, frame.py.1 - inset - h);
    if right < left || bottom < top {
        return None;
    }
    let (centre_x, middle_y) = ((left + right) / 2, (top + bottom) / 2);
    let candidates = [
        (left, top),
        (right, top),
        (right, bottom),
        (left, bottom),
        (centre_x, top),
        (centre_x, bottom),
        (right, middle_y),
        (left, middle_y),
    ];
    candidates.into_iter().find(|&(x, y)| {
        !drawn
            .iter()
            .any(|&(px, py)| px >= x - 4 && px <= x + w + 4 && py >= y - 4 && py <= y + h + 4)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> Frame {
        Frame {
            x: (0.0, 1.0),
            y: (0.0, 1.0),
            log_x: false,
            log_y: false,
            px: (100, 500),
            py: (50, 450),
        }
    }

    /// The lines of a title as drawn: (text, font size).
    fn title_lines(svg: &str) -> Vec<(String, String)> {
        svg.lines()
            .map(|l| {
                let size = l.split("font-size=\"").nth(1).unwrap();
                let size = size.split('"').next().unwrap().to_string();
                let text = l.split('>').nth(1).unwrap().split('<').next().unwrap();
                (text.to_string(), size)
            })
            .collect()
    }

    #[test]
    fn a_long_title_breaks_after_its_colon_or_near_its_middle() {
        // Short enough: one line at full size.
        assert_eq!(
            title_lines(&title_svg("A map", 500.0)),
            [("A map".into(), "15".into())]
        );
        // Too long for 500 px: after the colon, both lines at full size.
        let title =
            "Full jitter from 1 s (4 attempts): storm probability by load and outage length";
        assert_eq!(
            title_lines(&title_svg(title, 500.0)),
            [
                ("Full jitter from 1 s (4 attempts):".into(), "15".into()),
                (
                    "storm probability by load and outage length".into(),
                    "15".into()
                )
            ]
        );
        // No colon: between the words nearest the middle.
        let lines = title_lines(&title_svg(&title.replace(": ", " and "), 500.0));
        assert_eq!(lines[0].0, "Full jitter from 1 s (4 attempts) and");
        assert_eq!(lines[1].0, "storm probability by load and outage length");
    }

    #[test]
    fn wrapped_lines_keep_every_word_within_the_width() {
        // 600 px hold 77 characters at 14 px: the rule (64) fits a line.
        let text = "exponential (base 200ms, cap 2s), at most 4 attempts, timeout 1s, \
                    resilience4j:0.5,window:50,min:20,slow:0.8,slow-call:2s,open:10s; replicate 0";
        let lines = wrap(text, 14.0, 600);
        assert_eq!(lines.join(" "), text);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 14.0) <= 600));
        // Balanced: ten words of 9 letters in 60 characters' width fill
        // lines of 6 and 4 words greedily; wrapped, 5 and 5.
        let words = "abcdefghi ".repeat(10);
        let lines = wrap(words.trim_end(), 14.0, text_width(&"x".repeat(60), 14.0));
        let counts: Vec<usize> = lines.iter().map(|l| l.split(' ').count()).collect();
        assert_eq!(counts, [5, 5], "{lines:?}");
        // Short enough: one line, as given.
        assert_eq!(wrap("a title", 14.0, 400), ["a title"]);
        // A word wider than the line is broken between characters, whole.
        let long = "x".repeat(100);
        let lines = wrap(&long, 14.0, 200);
        assert!(lines.len() > 1 && lines.concat() == long, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 14.0) <= 200));
    }

    #[test]
    fn a_title_too_long_for_two_lines_takes_more() {
        let title = "word ".repeat(60);
        let title = title.trim_end();
        let (svg, extra) = title_block(title, 300.0);
        let lines = title_lines(&svg);
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines.iter().all(|(_, size)| size == "12"));
        assert_eq!(extra, (lines.len() - 2) as f64 * 15.0);
        let words: Vec<String> = lines.into_iter().map(|(l, _)| l).collect();
        assert_eq!(words.join(" "), title);
        // A title two lines hold is drawn as title_svg draws it.
        let two = "Full jitter from 1 s (4 attempts): storm probability by load and outage length";
        assert_eq!(title_block(two, 500.0), (title_svg(two, 500.0), 0.0));
    }

    #[test]
    fn the_legend_goes_where_nothing_is_drawn() {
        // Nothing drawn: the upper left corner.
        assert_eq!(free_place(&frame(), (100, 60), &[]), Some((110, 60)));
        // A line along the top: a lower corner.
        let mut top = Vec::new();
        sample_segment(&mut top, (100, 70), (500, 70));
        let place = free_place(&frame(), (100, 60), &top).unwrap();
        assert!(place.1 > 100, "{place:?}");
        // Lines everywhere: no place inside.
        let mut grid = Vec::new();
        for y in (50..=450).step_by(40) {
            sample_segment(&mut grid, (100, y), (500, y));
        }
        assert_eq!(free_place(&frame(), (100, 60), &grid), None);
        // Too big for the plot.
        assert_eq!(free_place(&frame(), (500, 60), &[]), None);
    }

    #[test]
    fn a_log_axis_labels_enough_values() {
        // Two decades: 1, 2, 5 in each.
        let (bold, light) = log_ticks(0.8, 120.0);
        assert_eq!(bold, vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert!(light.contains(&3.0) && !light.contains(&2.0));
        // Under a decade: every whole multiple.
        let (bold, _) = log_ticks(2.0, 9.0);
        assert_eq!(bold.len(), 8, "{bold:?}");
        // Six decades: the powers of ten.
        let (bold, _) = log_ticks(1.0, 1e6);
        assert_eq!(bold.len(), 7, "{bold:?}");
        // Twenty: every other power.
        let (bold, _) = log_ticks(1.0, 1e20);
        assert_eq!(bold.len(), 11, "{bold:?}");
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
