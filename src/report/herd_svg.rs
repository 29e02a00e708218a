//! `herdsim run --plot` on a herd model (slot, outage, occ): one run's
//! retries per ms against the capacity line, the outage window shaded, and
//! the cumulative share of clients that have succeeded on a right-hand axis
//! from 0 to 100%, so when the herd gets through reads beside how hard it
//! pushed.

use plotters::prelude::*;

use crate::base::format::group_thousands;
use crate::base::time::{Micros, format_duration};
use crate::measure::timeline::Timeline;
use crate::report::series_svg::TRIGGER_COLOR;
use crate::report::svg::{
    CAPACITY_COLOR, Entry, Figure, PALETTE, PlotResult, RETRIES_COLOR, Swatch, err, frame_of,
    panel_builder, stacked, steps, tick,
};

/// The colour of the cumulative share of clients succeeded.
pub const SUCCEEDED_COLOR: RGBColor = PALETTE[2];

/// What the herd picture shows.
#[derive(Debug, Clone)]
pub struct HerdPicture<'a> {
    /// The figure's title (lines split at `\n`).
    pub title: String,
    /// The panel's caption.
    pub label: String,
    /// One run's retries and successes over time.
    pub timeline: &'a Timeline,
    /// The slot's capacity, calls per ms (`None` on a model without one).
    pub capacity_per_ms: Option<f64>,
    /// The outage window `[from, to)`, µs, in which every call fails.
    pub outage_us: Option<(Micros, Micros)>,
}

/// The herd picture: retries per ms (left axis) with the capacity line and
/// the outage shaded, and the cumulative share of clients succeeded (right
/// axis, 0 to 100%). The figure's one frame is the left axis's; the right
/// axis spans the same pixel rows.
pub fn herd_timeline(picture: &HerdPicture<'_>) -> PlotResult<Figure> {
    let timeline = picture.timeline;
    let span_us = (timeline.bin_us * timeline.retries.len() as u64).max(Micros::from_us(1));
    let (scale, unit) = if span_us > Micros::from_s(10) {
        (1e-6, "s")
    } else {
        (1e-3, "ms")
    };
    let top = timeline
        .rates_per_ms()
        .into_iter()
        .fold(picture.capacity_per_ms.unwrap_or(0.0), f64::max)
        .max(1e-9)
        * 1.1;
    let x = (0.0, span_us.ticks() as f64 * scale);
    let bin = timeline.bin_us.ticks() as f64 * scale;
    let shade = TRIGGER_COLOR.mix(0.15);
    let mut legend = vec![Entry::new(
        format!("retries per ms ({} bins)", format_duration(timeline.bin_us)),
        Swatch::Line(RETRIES_COLOR, false),
    )];
    if let Some(c) = picture.capacity_per_ms {
        legend.push(Entry::new(
            format!("capacity ({c} per ms)"),
            Swatch::Line(CAPACITY_COLOR, false),
        ));
    }
    if let Some((from, to)) = picture.outage_us {
        let at = |us: Micros| {
            if us == Micros::ZERO {
                "0".to_string()
            } else {
                format_duration(us)
            }
        };
        legend.push(Entry::new(
            format!("outage, {} to {}: every call fails", at(from), at(to)),
            Swatch::Shade(shade),
        ));
    }
    legend.push(Entry::new(
        format!(
            "clients succeeded so far (% of {}, right axis)",
            group_thousands(timeline.metrics.clients)
        ),
        Swatch::Line(SUCCEEDED_COLOR, false),
    ));
    // The share at each bin's end, from 0 at t = 0.
    let succeeded: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
        .chain(
            timeline
                .succeeded_shares()
                .into_iter()
                .enumerate()
                .map(|(i, share)| ((i + 1) as f64 * bin, share * 100.0)),
        )
        .collect();
    stacked(&picture.title, 300, 1, &[legend], |_, area| {
        let mut chart = panel_builder(area, &picture.label)
            .right_y_label_area_size(64)
            .build_cartesian_2d(x.0..x.1, 0.0..top)
            .map_err(err)?
            .set_secondary_coord(x.0..x.1, 0.0..100.0);
        chart
            .configure_mesh()
            .x_desc(format!("time since the first call ({unit})"))
            .y_desc("retries per ms")
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .draw()
            .map_err(err)?;
        chart
            .configure_secondary_axes()
            .y_desc("clients succeeded (%)")
            .y_labels(6)
            .y_label_formatter(&|v| format!("{}%", tick(*v)))
            .draw()
            .map_err(err)?;
        if let Some((from, to)) = picture.outage_us {
            let (from, to) = (
                from.ticks() as f64 * scale,
                (to.ticks() as f64 * scale).min(x.1),
            );
            if from < x.1 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(from, 0.0), (to, top)],
                        shade.filled(),
                    )))
                    .map_err(err)?;
            }
        }
        let rates: Vec<Option<f64>> = timeline.rates_per_ms().into_iter().map(Some).collect();
        chart
            .draw_series(LineSeries::new(
                steps(&rates, bin).concat(),
                RETRIES_COLOR.stroke_width(1),
            ))
            .map_err(err)?;
        if let Some(c) = picture.capacity_per_ms {
            chart
                .draw_series(LineSeries::new(
                    vec![(x.0, c), (x.1, c)],
                    CAPACITY_COLOR.stroke_width(2),
                ))
                .map_err(err)?;
        }
        chart
            .draw_secondary_series(LineSeries::new(
                succeeded.iter().copied(),
                SUCCEEDED_COLOR.stroke_width(2),
            ))
            .map_err(err)?;
        Ok(frame_of(&chart, x, (0.0, top), false, false))
    })
}
