//! `herdsim compare --plot` on a study judged window by window (Brooker
//! 2023's collapse model): a panel per study metric, each point's mean over
//! its replicates in every window (solid) beside the reference's (dashed,
//! the same colour), so where the two part is seen at a glance.

use plotters::prelude::*;

use crate::report::svg::{
    Entry, Figure, PALETTE, PlotResult, Swatch, err, frame_of, stacked, steps, time_panel,
};

/// One point's figures in the picture.
#[derive(Debug, Clone)]
pub struct StudySeries {
    /// Its label in the legend.
    pub label: String,
    /// Per metric, per window from t = 0: herdsim's mean and the
    /// reference's (`None` where either has none).
    pub values: Vec<Vec<(Option<f64>, Option<f64>)>>,
}

/// What the picture shows.
#[derive(Debug, Clone)]
pub struct StudySeriesPicture {
    /// The figure's title.
    pub title: String,
    /// Each panel's caption and y-axis words, one per metric.
    pub panels: Vec<(String, String)>,
    /// The points, one colour each.
    pub points: Vec<StudySeries>,
    /// The window's length, s.
    pub window_s: f64,
}

/// The panels, stacked on one time axis.
pub fn study_series(picture: &StudySeriesPicture) -> PlotResult<Figure> {
    let windows = picture
        .points
        .iter()
        .flat_map(|p| p.values.iter().map(Vec::len))
        .max()
        .unwrap_or(0);
    let x = (
        0.0,
        (windows as f64 * picture.window_s).max(picture.window_s),
    );
    let legend: Vec<Entry> = picture
        .points
        .iter()
        .enumerate()
        .flat_map(|(i, point)| {
            let color = PALETTE[i % PALETTE.len()];
            [
                Entry::new(
                    format!("{} herdsim", point.label),
                    Swatch::Line(color, false),
                ),
                Entry::new(
                    format!("{} reference", point.label),
                    Swatch::Line(color, true),
                ),
            ]
        })
        .collect();
    stacked(
        &picture.title,
        200,
        picture.panels.len(),
        &[legend],
        |panel, area| {
            let (caption, y_desc) = &picture.panels[panel];
            // (label, colour, dashed, pieces)
            let mut lines = Vec::new();
            for (i, point) in picture.points.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let values = &point.values[panel];
                let ours: Vec<Option<f64>> = values.iter().map(|v| v.0).collect();
                let theirs: Vec<Option<f64>> = values.iter().map(|v| v.1).collect();
                lines.push((
                    format!("{} herdsim", point.label),
                    color,
                    false,
                    steps(&ours, picture.window_s),
                ));
                lines.push((
                    format!("{} reference", point.label),
                    color,
                    true,
                    steps(&theirs, picture.window_s),
                ));
            }
            let high = lines
                .iter()
                .flat_map(|(_, _, _, pieces)| pieces.iter().flatten().map(|p| p.1))
                .fold(0.0, f64::max);
            let y = (0.0, (high * 1.1).max(1e-3));
            let mut chart = time_panel(area, caption, y_desc, x, y)?;
            for (_, color, dashed, pieces) in &lines {
                let (color, dashed) = (*color, *dashed);
                for piece in pieces {
                    let style = color.stroke_width(2);
                    if dashed {
                        chart.draw_series(DashedLineSeries::new(piece.iter().copied(), 6, 4, style))
                    } else {
                        chart.draw_series(LineSeries::new(piece.iter().copied(), style))
                    }
                    .map_err(err)?;
                }
            }
            Ok(frame_of(&chart, x, y, false, false))
        },
    )
}
