//! `herdsim tune --svg`: every setting as a point of amplification in a
//! full outage (x) against success under the partial failure (y), the
//! Pareto front joined with its 95% intervals as bars, the bound as a
//! dashed line and the recommended setting ringed. Written by hand, as the map's heatmap
//! is, so each point carries a tooltip (`<title>`) with its rule and
//! figures; settings the stall left stuck are crosses, off the front.

use std::fmt::Write;

use crate::base::format::trimmed;
use crate::experiment::tune::{Front, SettingFigures, TuneSettings};
use crate::report::html::escape;
use crate::report::svg::{PALETTE, tick, title_svg};

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 500.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 56.0;
const BOTTOM: f64 = 126.0;

/// Ticks of about five steps of 1, 2 or 5 × 10^k covering `lo..hi`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * power);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 {
        // k × step in decimal, not in binary: 6 × 0.2 is 1.2, not
        // 1.2000000000000002.
        let k = (v / step).round();
        out.push(format!("{:.10e}", k * step).parse().unwrap_or(k * step));
        v += step;
    }
    out
}

/// The data range of `values` with a twentieth of its span either side.
fn padded(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(hi.abs() * 1e-3).max(1e-6);
    (lo - span * 0.05, hi + span * 0.05)
}

/// The picture of a search's settings and front.
pub fn tune_svg(
    settings: &TuneSettings,
    figures: &[SettingFigures],
    front: &Front,
    title: &str,
) -> String {
    let amp = |f: &SettingFigures| f.amplification;
    let ok = |f: &SettingFigures| f.success;
    // The x axis spans the front and the bound, and as far again: a
    // setting far beyond (one a stall left stuck, at the attempt limit)
    // would squeeze the front into a sliver, so it is drawn at the axis's
    // end and counted instead.
    let low = figures
        .iter()
        .map(|f| amp(f).0 - amp(f).1)
        .fold(settings.bound, f64::min);
    let reach = front
        .points
        .iter()
        .map(|&i| amp(&figures[i]).0 + amp(&figures[i]).1)
        .fold(settings.bound, f64::max);
    let limit = reach + (reach - low).max(0.05);
    let beyond = |f: &SettingFigures| amp(f).0 > limit;
    let (x0, x1) = padded(
        figures
            .iter()
            .filter(|f| !beyond(f))
            .flat_map(|f| [amp(f).0 - amp(f).1, amp(f).0 + amp(f).1])
            .chain([settings.bound]),
    );
    let (y0, y1) = padded(
        figures
            .iter()
            .flat_map(|f| [ok(f).0 - ok(f).1, (ok(f).0 + ok(f).1).min(1.0)]),
    );
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let py = |y: f64| TOP + (1.0 - (y - y0) / (y1 - y0)) * ph;
    let colour = |c: plotters::style::RGBColor| format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
    let (front_c, knee_c, bound_c) = (colour(PALETTE[0]), colour(PALETTE[1]), colour(PALETTE[6]));
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#fff"/>
{}<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>
"##,
        title_svg(title, WIDTH - 40.0)
    );
    for t in ticks(x0, x1) {
        let x = px(t);
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#000" stroke-opacity="0.08"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 16.0,
            tick(t)
        );
    }
    for t in ticks(y0, y1) {
        let y = py(t);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#000" stroke-opacity="0.08"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            tick(t)
        );
    }
    let share = format!("{}%", trimmed(settings.partial * 100.0, 2));
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">attempts per request in a full outage</text>
<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">success with {share} of attempts failing</text>"##,
        LEFT + pw / 2.0,
        TOP + ph + 36.0,
        TOP + ph / 2.0
    );
    // The bound.
    let bx = px(settings.bound);
    let _ = writeln!(
        svg,
        r##"<line x1="{bx:.1}" y1="{TOP}" x2="{bx:.1}" y2="{:.1}" stroke="{bound_c}" stroke-dasharray="6 4"/><text x="{:.1}" y="{:.1}">bound {}×</text>"##,
        TOP + ph,
        bx + 4.0,
        TOP + ph - 6.0,
        trimmed(settings.bound, 3)
    );
    let tooltip = |f: &SettingFigures| {
        escape(&format!(
            "{}: {:.3} ± {:.3} attempts per request in the outage; success {:.4} ± {:.4}; \
             stall: {}",
            f.rule,
            f.amplification.0,
            f.amplification.1,
            f.success.0,
            f.success.1,
            if f.decided() {
                format!("{} of {} stuck", f.storm.stuck, f.storm.runs)
            } else {
                format!(
                    "no run decided ({} unresolved: each ended before its patience window did)",
                    f.storm.unresolved
                )
            }
        ))
    };
    // Every setting off the front: grey dots, crosses where stuck.
    for (i, f) in figures.iter().enumerate() {
        if front.points.contains(&i) {
            continue;
        }
        let (x, y) = (px(f.amplification.0.min(x1)), py(f.success.0));
        if !f.decided() && !beyond(f) {
            // Neither survived nor stuck: not known.
            let _ = writeln!(
                svg,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="none" stroke="#999" stroke-width="1.5"><title>{}</title></circle>"##,
                tooltip(f)
            );
        } else if beyond(f) {
            let _ = writeln!(
                svg,
                r##"<path d="M{:.1} {:.1}l7 4l-7 4z" fill="{}"><title>{}</title></path>"##,
                x - 8.0,
                y - 4.0,
                if f.survives() { "#999" } else { "#b2182b" },
                tooltip(f)
            );
        } else if f.survives() {
            let _ = writeln!(
                svg,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="#999"><title>{}</title></circle>"##,
                tooltip(f)
            );
        } else {
            let _ = writeln!(
                svg,
                r##"<path d="M{:.1} {:.1}l8 8m0 -8l-8 8" stroke="#b2182b" stroke-width="1.5"><title>{}</title></path>"##,
                x - 4.0,
                y - 4.0,
                tooltip(f)
            );
        }
    }
    // The front: its line, its bars, its points.
    let path: Vec<String> = front
        .points
        .iter()
        .map(|&i| {
            format!(
                "{:.1},{:.1}",
                px(figures[i].amplification.0),
                py(figures[i].success.0)
            )
        })
        .collect();
    let _ = writeln!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="{front_c}" stroke-width="2"/>"##,
        path.join(" ")
    );
    for &i in &front.points {
        let f = &figures[i];
        let (x, y) = (px(f.amplification.0), py(f.success.0));
        let (a, s) = (f.amplification, f.success);
        let _ = writeln!(
            svg,
            r##"<path d="M{:.1} {y:.1}H{:.1}M{x:.1} {:.1}V{:.1}" stroke="{front_c}" stroke-opacity="0.5"/><circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{front_c}"><title>{}</title></circle>"##,
            px(a.0 - a.1),
            px(a.0 + a.1),
            py(s.0 - s.1),
            py((s.0 + s.1).min(1.0)),
            tooltip(f)
        );
    }
    if let Some(k) = front.knee {
        let f = &figures[k];
        let (x, y) = (px(f.amplification.0), py(f.success.0));
        let anchor = if x > LEFT + pw * 0.6 { "end" } else { "start" };
        let dx = if anchor == "end" { -12.0 } else { 12.0 };
        let _ = writeln!(
            svg,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="8" fill="none" stroke="{knee_c}" stroke-width="2.5"/><text x="{:.1}" y="{:.1}" text-anchor="{anchor}" fill="{knee_c}">recommended: {}</text>"##,
            x + dx,
            y + 18.0,
            escape(&f.rule)
        );
    }
    // The legend, below the plot.
    let ly = TOP + ph + 62.0;
    let _ = write!(
        svg,
        r##"<circle cx="{LEFT}" cy="{:.1}" r="4" fill="{front_c}"/><text x="{:.1}" y="{ly:.1}">Pareto front (95% CI bars)</text>
<circle cx="{:.1}" cy="{:.1}" r="3" fill="#999"/><text x="{:.1}" y="{ly:.1}">other settings</text>
<path d="M{:.1} {:.1}l8 8m0 -8l-8 8" stroke="#b2182b" stroke-width="1.5"/><text x="{:.1}" y="{ly:.1}">stuck after the stall ({})</text>
<text x="{LEFT}" y="{:.1}" fill="#555">{} settings of {}; survived: no run of the stall ends stuck{}</text>{}
</svg>
"##,
        ly - 4.0,
        LEFT + 10.0,
        LEFT + 210.0,
        ly - 4.0,
        LEFT + 220.0,
        LEFT + 340.0,
        ly - 8.0,
        LEFT + 354.0,
        escape(&settings.stall),
        ly + 22.0,
        figures.len(),
        escape(settings.start.split(':').next().unwrap_or_default()),
        match figures.iter().filter(|f| !f.decided()).count() {
            0 => String::new(),
            n => format!("; {n} not known (hollow: no stall run decided)"),
        },
        match figures.iter().filter(|f| beyond(f)).count() {
            0 => String::new(),
            n => format!(
                "\n<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#555\">{n} beyond the axis's end, drawn as \
                 triangles there (up to {}×)</text>",
                ly + 40.0,
                trimmed(
                    figures
                        .iter()
                        .map(|f| amp(f).0)
                        .fold(f64::NEG_INFINITY, f64::max),
                    2
                )
            ),
        },
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_steps_inside_the_range() {
        assert_eq!(ticks(0.95, 2.05), vec![1.0, 1.2, 1.4, 1.6, 1.8, 2.0]);
        assert_eq!(ticks(0.0, 1.0), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }
}
