//! `herdsim run --resource server --plot`: one run's time series in stacked
//! panels (offered load and goodput, queue length, latency), every trigger
//! window shaded and labelled by what it does, the patience window after
//! the last one shaded and the verdict marked, so a storm and its recovery
//! (or not) show at a glance. By default the picture ends a little after
//! the load (the drain of a stuck run's backlog can take far longer than the
//! incident, which would shrink to a sliver); `all` draws to the drain's end.

use plotters::prelude::*;

use crate::base::format::trimmed;
use crate::base::time::{Nanos, format_duration};
use crate::measure::server_metrics::Window;
use crate::measure::verdict::Verdict;
use crate::model::server::{Trigger, TriggerKind};
use crate::report::svg::{
    CAPACITY_COLOR, Entry, Figure, PALETTE, PlotResult, Swatch, err, frame_of, log_axis,
    panel_builder, stacked, steps, tick,
};

/// The shade of trigger windows.
pub const TRIGGER_COLOR: RGBColor = RGBColor(214, 39, 40);
/// The shade of the patience window.
pub const PATIENCE_COLOR: RGBColor = RGBColor(110, 110, 110);
/// The line of a recovery.
pub const RECOVERED_COLOR: RGBColor = RGBColor(0, 0, 0);
/// The line of a stuck run's end of patience.
pub const STUCK_COLOR: RGBColor = RGBColor(165, 0, 38);
/// The ticks of every replicate's recovery, drawn translucent so that
/// where many fall together reads darker.
pub const RUG_COLOR: RGBColor = RGBColor(70, 70, 70);
/// The rug ticks' opacity and height (a share of the first panel's).
const RUG_OPACITY: f64 = 0.55;
const RUG_HEIGHT: f64 = 0.1;
/// The line where the load ends.
pub const LOAD_END_COLOR: RGBColor = RGBColor(120, 120, 120);

/// What a trigger of `kind` does, in words: `outage`, `load spike ×2`,
/// `partial failure p = 0.3`, `capacity → 1 worker`.
pub fn trigger_kind_label(kind: TriggerKind) -> String {
    match kind {
        TriggerKind::Outage => "outage".to_string(),
        TriggerKind::PartialFailure(p) => format!("partial failure p = {p}"),
        TriggerKind::PerUserFailure(p) => format!("per-user failure p = {p}"),
        TriggerKind::LoadSpike(k) => format!("load spike ×{k}"),
        TriggerKind::Ramp { start, end } => format!("load ramp ×{start} → ×{end}"),
        TriggerKind::Slowdown(k) => format!("slowdown ×{k}"),
        TriggerKind::CapacityDrop(c) => {
            format!("capacity → {c} worker{}", if c == 1 { "" } else { "s" })
        }
    }
}

/// A trigger in words with its window: `load spike ×2, 5s to 6s`.
pub fn trigger_label(trigger: &Trigger) -> String {
    format!(
        "{}, {} to {}",
        trigger_kind_label(trigger.kind),
        format_duration(trigger.from.whole_us()),
        format_duration(trigger.to.whole_us())
    )
}

/// What the series picture shows.
#[derive(Debug, Clone)]
pub struct SeriesPicture<'a> {
    /// The figure's title (lines split at `\n`).
    pub title: String,
    /// One run's windows, from t = 0.
    pub windows: &'a [Window],
    /// The window's length, ns.
    pub window_ns: Nanos,
    /// Each trigger's window in seconds and its label ([`trigger_label`]).
    pub triggers: Vec<(f64, f64, String)>,
    /// The server's capacity in attempts per second over time, as steps
    /// `(from s, capacity)`, when the workers are bounded.
    pub capacity_per_s: Option<Vec<(f64, f64)>>,
    /// When new requests stopped, s.
    pub load_end_s: f64,
    /// The patience window after the last trigger, s (`None` without one).
    pub patience_s: Option<(f64, f64)>,
    /// The run's verdict (`None` without a trigger).
    pub verdict: Option<Verdict>,
    /// Every replicate's recovery, s after the last trigger's end, and how
    /// many replicates ran: the one run drawn beside the spread of all (a
    /// rug under the first panel; none for a single replicate).
    pub recoveries: (Vec<f64>, u32),
    /// Draw every window, to the end of the drain; otherwise to the end of
    /// the load (or of the patience window, if later) plus a tenth.
    pub all: bool,
    /// A live run seen from its clients (`herdsim drill`): the middle
    /// panel is their attempts in flight, not the server's queue, which a
    /// client cannot see.
    pub live: bool,
}

impl SeriesPicture<'_> {
    /// The end of the time axis, s: the last window's end, or by default the
    /// end of the load or of the patience window (whichever is later) plus a
    /// tenth of it, rounded up to a window, if the run goes on past that.
    pub fn shown_end_s(&self) -> f64 {
        let width_s = self.window_ns.ticks() as f64 / 1e9;
        let data_end = (self.windows.len() as f64 * width_s).max(width_s);
        if self.all {
            return data_end;
        }
        let load = self
            .load_end_s
            .max(self.patience_s.map_or(0.0, |(_, to)| to));
        let wanted = ((load * 1.1 / width_s).ceil() * width_s).max(width_s);
        wanted.min(data_end)
    }
}

/// A labelled line of one colour, in pieces.
type Line<'a> = (&'a str, RGBColor, Vec<Vec<(f64, f64)>>);

/// Seconds as the picture writes them: `12.5 s`.
fn seconds(v: f64) -> String {
    format!("{} s", trimmed(v, 3))
}

/// The three panels of `picture`: offered load (arrivals and attempts per
/// second), goodput and capacity; the queue at each window's end; latency
/// p50 and p99 of the window's successes (a log axis when it spans more than
/// a factor of 20). Each panel's legend stands right of it.
pub fn server_series(picture: &SeriesPicture<'_>) -> PlotResult<Figure> {
    let width_s = picture.window_ns.ticks() as f64 / 1e9;
    let per_s = |count: u64| Some(count as f64 / width_s);
    let end_s = picture.shown_end_s();
    let data_end = picture.windows.len() as f64 * width_s;
    let shown = ((end_s / width_s).round() as usize).min(picture.windows.len());
    let windows = &picture.windows[..shown];
    let x = (0.0, end_s);
    let arrivals: Vec<_> = windows.iter().map(|w| per_s(w.arrivals)).collect();
    let attempts: Vec<_> = windows.iter().map(|w| per_s(w.attempts)).collect();
    let goodput: Vec<_> = windows.iter().map(|w| per_s(w.successes)).collect();
    let queue: Vec<_> = windows.iter().map(|w| Some(w.queue as f64)).collect();
    let ms = |ns: Option<Nanos>| ns.map(|v| v.ticks() as f64 / 1e6);
    let p50: Vec<_> = windows.iter().map(|w| ms(w.latency_p50_ns)).collect();
    let p99: Vec<_> = windows.iter().map(|w| ms(w.latency_p99_ns)).collect();
    let capacity: Vec<Vec<(f64, f64)>> = picture
        .capacity_per_s
        .iter()
        .map(|steps| {
            let mut line = Vec::new();
            for (i, &(from, c)) in steps.iter().enumerate() {
                if from >= end_s {
                    break;
                }
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
    let load_top = top(&[&arrivals, &attempts, &goodput], capacity_top);
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

    // The moments marked on every panel: (time, colour, dashed).
    let mut marks: Vec<(f64, RGBColor, bool)> = Vec::new();
    let mut first_legend: Vec<Entry> = Vec::new();
    let shade = TRIGGER_COLOR.mix(0.15);
    let patience_shade = PATIENCE_COLOR.mix(0.12);
    for (i, (from, to, label)) in picture.triggers.iter().enumerate() {
        let label = if picture.triggers.len() == 1 {
            label.clone()
        } else {
            format!("trigger {}: {label}", i + 1)
        };
        first_legend.push(Entry::new(
            format!("{label} ({} long)", seconds(to - from)),
            Swatch::Shade(shade),
        ));
    }
    let mut stops_at_verdict = false;
    if let Some((from, to)) = picture.patience_s {
        first_legend.push(Entry::new(
            format!(
                "patience window, {} to {} (judged here)",
                seconds(from),
                seconds(to)
            ),
            Swatch::Shade(patience_shade),
        ));
        // The load's end, where the verdict is read if they coincide.
        let ends_there = (picture.load_end_s - to).abs() < width_s / 2.0;
        let load_too = if ends_there {
            ", where new requests stop"
        } else {
            ""
        };
        match picture.verdict {
            Some(Verdict::Recovered(after_ns)) => {
                let at = from + after_ns.ticks() as f64 / 1e9;
                marks.push((at, RECOVERED_COLOR, true));
                first_legend.push(Entry::new(
                    format!(
                        "recovered at t = {} ({} after the last trigger)",
                        seconds(at),
                        seconds(at - from)
                    ),
                    Swatch::Mark(RECOVERED_COLOR, true),
                ));
            }
            Some(Verdict::Draining(after_ns)) => {
                marks.push((to, STUCK_COLOR, true));
                first_legend.push(Entry::new(
                    format!(
                        "draining: backlog still falling at t = {}, healthy by about t = {}",
                        seconds(to),
                        seconds(from + after_ns.ticks() as f64 / 1e9)
                    ),
                    Swatch::Mark(STUCK_COLOR, true),
                ));
            }
            Some(Verdict::Stuck) => {
                marks.push((to, STUCK_COLOR, false));
                first_legend.push(Entry::new(
                    format!("stuck: still degraded at t = {}{load_too}", seconds(to)),
                    Swatch::Mark(STUCK_COLOR, false),
                ));
            }
            Some(Verdict::Unresolved) => first_legend.push(Entry::new(
                "unresolved: the load ended before the patience window did",
                Swatch::Words,
            )),
            None => {}
        }
        stops_at_verdict = ends_there && picture.verdict == Some(Verdict::Stuck);
    }
    // Every replicate's recovery, as a rug under the first panel.
    let rug: Vec<f64> = match (picture.patience_s, &picture.recoveries) {
        (Some((from, _)), (after, replicates)) if *replicates > 1 => {
            let rug: Vec<f64> = after.iter().map(|a| from + a).collect();
            let mut sorted = after.clone();
            sorted.sort_by(f64::total_cmp);
            let median = (!sorted.is_empty())
                .then(|| crate::measure::stats::quantile_of_sorted(&sorted, 0.5));
            first_legend.push(Entry::new(
                match median {
                    Some(m) => format!(
                        "each replicate's recovery ({} of {replicates} recovered; median {} after \
                         the last trigger)",
                        rug.len(),
                        seconds(m)
                    ),
                    None => format!("no replicate of {replicates} recovered"),
                },
                Swatch::Mark(RUG_COLOR, false),
            ));
            rug
        }
        _ => Vec::new(),
    };
    if picture.load_end_s < end_s && !stops_at_verdict {
        marks.push((picture.load_end_s, LOAD_END_COLOR, true));
        first_legend.push(Entry::new(
            format!("new requests stop (t = {})", seconds(picture.load_end_s)),
            Swatch::Mark(LOAD_END_COLOR, true),
        ));
    }
    let lines_of = |panel: usize| -> Vec<Line<'_>> {
        match panel {
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
            1 if picture.live => vec![(
                "in flight at window end",
                PALETTE[0],
                steps(&queue, width_s),
            )],
            1 => vec![("queue at window end", PALETTE[0], steps(&queue, width_s))],
            _ => vec![
                ("p50", PALETTE[0], steps(&p50, width_s)),
                ("p99", PALETTE[1], steps(&p99, width_s)),
            ],
        }
    };
    let legends: Vec<Vec<Entry>> = (0..3)
        .map(|panel| {
            let mut entries = if panel == 0 {
                first_legend.clone()
            } else {
                Vec::new()
            };
            entries.extend(
                lines_of(panel)
                    .iter()
                    .map(|(label, color, _)| Entry::new(*label, Swatch::Line(*color, false))),
            );
            entries
        })
        .collect();
    let mut title = picture.title.clone();
    if end_s + 1e-9 < data_end {
        title += &format!(
            "\n0 to {} shown: the load and a tenth more; the run drains until {}",
            seconds(end_s),
            seconds(data_end)
        );
    }

    stacked(&title, 230, 3, &legends, |panel, area| {
        let (caption, y_desc, y, log_y) = match panel {
            0 => (
                "offered load and goodput",
                "per second",
                (0.0, load_top),
                false,
            ),
            1 if picture.live => (
                "the clients' attempts in flight (queue, service and the wire)",
                "attempts",
                (0.0, queue_top),
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
        let lines = lines_of(panel);
        let builder = |area| panel_builder(area, caption);
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
                if let Some((from, to)) = picture.patience_s {
                    if from < end_s {
                        chart
                            .draw_series(std::iter::once(Rectangle::new(
                                [(from, y.0), (to.min(end_s), y.1)],
                                patience_shade.filled(),
                            )))
                            .map_err(err)?;
                    }
                }
                for (from, to, _) in picture.triggers.iter().filter(|t| t.0 < end_s) {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(*from, y.0), (to.min(end_s), y.1)],
                            shade.filled(),
                        )))
                        .map_err(err)?;
                }
                for &(at, color, dashed) in marks.iter().filter(|m| m.0 <= end_s) {
                    let points = vec![(at, y.0), (at, y.1)];
                    if dashed {
                        chart
                            .draw_series(DashedLineSeries::new(points, 6, 4, color.stroke_width(2)))
                            .map_err(err)?;
                    } else {
                        chart
                            .draw_series(LineSeries::new(points, color.stroke_width(2)))
                            .map_err(err)?;
                    }
                }
                if panel == 0 {
                    let tick_top = y.0 + (y.1 - y.0) * RUG_HEIGHT;
                    chart
                        .draw_series(rug.iter().filter(|&&at| at <= end_s).map(|&at| {
                            PathElement::new(
                                vec![(at, y.0), (at, tick_top)],
                                RUG_COLOR.mix(RUG_OPACITY).stroke_width(2),
                            )
                        }))
                        .map_err(err)?;
                }
                for (_, color, runs) in &lines {
                    let color = *color;
                    for run in runs {
                        let points = run.iter().map(|&(px, py)| (px, py.max(y.0)));
                        chart
                            .draw_series(LineSeries::new(points, color.stroke_width(2)))
                            .map_err(err)?;
                    }
                }
                Ok(frame_of(&chart, x, y, false, log_y))
            }};
        }
        if log_y {
            draw!(
                builder(area)
                    .build_cartesian_2d(x.0..x.1, log_axis(y))
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
