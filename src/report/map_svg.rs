//! A metastability map as an SVG heatmap: a rectangle per cell coloured by
//! its storm probability, uncertain cells (Wilson interval straddling one
//! half) hatched, and the 50% contour through each row's crossing (where
//! an axis is categorical, nothing is interpolated across it: each row's
//! crossing stands alone, or none is drawn). Written
//! by hand rather than with plotters: the cells are rectangles of unequal
//! widths (refinement halves them near the boundary), and each carries a
//! tooltip (`<title>`) with its counts, which needs no script. A trigger
//! axis is shown by the trigger's length in seconds (the stall), not by
//! the number that varies in its text (an outage's end time).

use std::fmt::Write;

use crate::base::format::{group_thousands, significant, trimmed};
use crate::base::time::{Micros, Nanos, format_duration};
use crate::experiment::map::{
    CellCounts, MapAxis, MapSettings, Side, boundaries_of, places, rows_of,
};
use crate::model::server::Triggers;
use crate::report::html::escape;
use crate::report::series_svg::trigger_kind_label;
use crate::report::svg::title_block;

const WIDTH: f64 = 760.0;
const LEFT: f64 = 150.0;
const RIGHT: f64 = 120.0;
const TOP: f64 = 56.0;
const BOTTOM: f64 = 64.0;

/// The fill of a cell with no decided run: no storm probability to colour.
const UNDECIDED: &str = "#d9d9d9";

/// The colour of storm probability `p`: pale at 0, orange at one half,
/// dark red at 1 (a sequential scale readable in grey).
pub fn storm_colour(p: f64) -> (u8, u8, u8) {
    const STOPS: [(f64, [f64; 3]); 3] = [
        (0.0, [247.0, 251.0, 255.0]),
        (0.5, [253.0, 174.0, 97.0]),
        (1.0, [165.0, 0.0, 38.0]),
    ];
    let p = p.clamp(0.0, 1.0);
    let i = usize::from(p > 0.5);
    let ((p0, c0), (p1, c1)) = (STOPS[i], STOPS[i + 1]);
    let t = (p - p0) / (p1 - p0);
    let mix = |k: usize| (c0[k] + t * (c1[k] - c0[k])).round() as u8;
    (mix(0), mix(1), mix(2))
}

/// How a map's x axis is shown: what it measures, in which unit, and the
/// shown value of each place on it.
#[derive(Debug, Clone, PartialEq)]
pub struct XScale {
    /// What the axis measures, in brief: `outage length`, `rate`.
    pub name: String,
    /// What the axis measures, with its unit: `outage length (s), from t =
    /// 2s`, `rate (requests/s)`.
    pub title: String,
    /// What a value is, with its unit, for a table's header: `outage
    /// length, s`.
    pub heading: String,
    /// Shown value = `a + b` × place, where the shown value is not the
    /// place itself (a trigger's length from its end time).
    affine: Option<(f64, f64)>,
}

impl XScale {
    /// The value shown for place `x`.
    pub fn shown(&self, x: f64) -> f64 {
        self.affine.map_or(x, |(a, b)| a + b * x)
    }

    /// The shown size of a step of `dx` places.
    pub fn step(&self, dx: f64) -> f64 {
        self.affine.map_or(dx, |(_, b)| b * dx).abs()
    }
}

/// A parameter's unit where its values are numbers with one: a duration's
/// (placed in ms), requests per second for a rate.
fn unit_of(axis: &MapAxis) -> Option<&'static str> {
    let duration = crate::spec::params::Kind::Duration;
    match axis.param.key {
        _ if axis.param.kind == duration => Some("ms"),
        "rate" => Some("requests/s"),
        _ => None,
    }
}

/// An axis's title with its unit: `rate (requests/s)`, or as the axis
/// names itself (`timeout (ms)`, `trigger (outage@2s..Xs)`).
pub fn axis_title(axis: &MapAxis) -> String {
    match unit_of(axis) {
        Some("ms") => axis.title(),
        Some(unit) => format!("{} ({unit})", axis.param.key),
        None => axis.title(),
    }
}

/// The length of each value's triggers, s, and the first trigger of the
/// first value, if every value is a trigger list.
fn trigger_lengths(values: &[String]) -> Option<Vec<f64>> {
    values
        .iter()
        .map(|v| {
            let triggers: Triggers = v.parse().ok()?;
            (!triggers.0.is_empty()).then(|| {
                triggers
                    .0
                    .iter()
                    .map(|t| t.to - t.from)
                    .sum::<Nanos>()
                    .ticks() as f64
                    / 1e9
            })
        })
        .collect()
}

/// How `s`'s x axis is shown: a trigger axis by the triggers' length in
/// seconds, when that is a straight-line function of the place on the axis
/// (the refinement's midpoints are then midpoints of the lengths too);
/// any other axis by its values, with its unit.
pub fn x_scale(s: &MapSettings) -> XScale {
    axis_scale(&s.x)
}

/// How `axis` is shown (see [`x_scale`]).
fn axis_scale(axis: &MapAxis) -> XScale {
    let plain = || {
        let title = axis_title(axis);
        let heading = match unit_of(axis) {
            Some(unit) => format!("{}, {unit}", axis.param.key),
            None => title.clone(),
        };
        XScale {
            name: axis.param.key.to_string(),
            title,
            heading,
            affine: None,
        }
    };
    if axis.param.key != "trigger" {
        return plain();
    }
    let Some(lengths) = trigger_lengths(&axis.values) else {
        return plain();
    };
    let places: Vec<f64> = axis.values.iter().map(|v| axis.position(v)).collect();
    let (first, last) = (0, places.len() - 1);
    if places[last] == places[first] || places.iter().any(|p| !p.is_finite()) {
        return plain();
    }
    let b = (lengths[last] - lengths[first]) / (places[last] - places[first]);
    let a = lengths[first] - b * places[first];
    let fits = places
        .iter()
        .zip(&lengths)
        .all(|(p, l)| (a + b * p - l).abs() <= 1e-9 * l.abs().max(1.0));
    if !fits || b == 0.0 {
        return plain();
    }
    // What the trigger is, and where it starts if every value starts it at
    // the same time.
    let parsed: Vec<Triggers> = axis.values.iter().filter_map(|v| v.parse().ok()).collect();
    let single = parsed.iter().all(|t| t.0.len() == 1);
    let (what, context) = if single {
        let kind = trigger_kind_label(parsed[0].0[0].kind);
        let from = parsed[0].0[0].from;
        let same_start = parsed.iter().all(|t| t.0[0].from == from);
        let kinds_agree = parsed
            .iter()
            .all(|t| trigger_kind_label(t.0[0].kind) == kind);
        let what = if kinds_agree {
            format!("{kind} length")
        } else {
            "trigger length".to_string()
        };
        let context =
            same_start.then(|| format!(", from t = {}", format_duration(from.whole_us())));
        (what, context)
    } else {
        ("the triggers' total length".to_string(), None)
    };
    XScale {
        name: what.clone(),
        title: format!("{what} (s){}", context.unwrap_or_default()),
        heading: format!("{what}, s"),
        affine: Some((a, b)),
    }
}

/// A map's title when none is given: what it plots, by which axes, and
/// what was run, in brief (the retries and their controls; the load and
/// the server), leaving out what the axes vary: `Storm probability by
/// outage length and rate: no-backoff, at most 4 attempts, timeout 100ms;
/// 1 worker, service exp:1ms`.
pub fn default_title(s: &MapSettings) -> String {
    let varied = |key: &str| s.x.param.key == key || s.y.param.key == key;
    let given = |key: &'static str, text: String| (!varied(key)).then_some(text);
    let spec = &s.base;
    let server = &spec.server;
    let policy = (!varied("policy")).then(|| {
        let kind = spec.policy.kind;
        let mut shape = Vec::new();
        if kind != crate::policy::PolicyKind::NoBackoff {
            shape.extend(given(
                "base",
                format!("base {}", format_duration(spec.policy.base_us)),
            ));
            shape.extend(given(
                "cap",
                format!("cap {}", format_duration(spec.policy.cap_us)),
            ));
        }
        if shape.is_empty() {
            kind.to_string()
        } else {
            format!("{kind} ({})", shape.join(", "))
        }
    });
    let attempts = given(
        "max_attempts",
        spec.max_attempts
            .map_or("unlimited attempts".to_string(), |n| {
                format!("at most {n} attempts")
            }),
    );
    // A control by its rule's name: its whole rule is a line of numbers.
    let controls = [
        ("budget", &spec.budget),
        ("breaker", &spec.breaker),
        ("throttle", &spec.throttle),
    ]
    .into_iter()
    .filter_map(|(key, control)| {
        let rule = control.as_ref()?.to_string();
        given(
            key,
            format!("{key} {}", rule.split(':').next().unwrap_or(&rule)),
        )
    });
    let timeout = given(
        "timeout",
        match server.timeout_us {
            Some(t) => format!("timeout {}", format_duration(t)),
            None if server.timeout_choices.is_empty() => "no timeout".to_string(),
            None => format!(
                "timeout {}",
                crate::spec::server::show_timeout_choices(&server.timeout_choices)
            ),
        },
    );
    let retries: Vec<String> = policy
        .into_iter()
        .chain(attempts)
        .chain(controls)
        .chain(timeout)
        .collect();
    let load = match server.users {
        Some(users) => given("users", format!("{users} users")),
        None => given(
            "rate",
            format!(
                "{} requests/s",
                trimmed(
                    server
                        .rate_per_s
                        .unwrap_or(crate::spec::server::DEFAULT_RATE_PER_S),
                    6
                )
            ),
        ),
    };
    let workers = given(
        "workers",
        server.workers.map_or("unbounded workers".to_string(), |c| {
            format!("{c} worker{}", if c == 1 { "" } else { "s" })
        }),
    );
    let depth = (server.chain.depth > 1)
        .then(|| given("depth", format!("depth {}", server.chain.depth)))
        .flatten();
    let workload: Vec<String> = load
        .into_iter()
        .chain(workers)
        .chain(given("service", format!("service {}", server.service)))
        .chain(depth)
        .chain(
            (!server.triggers.0.is_empty())
                .then(|| given("trigger", format!("trigger {}", server.triggers)))
                .flatten(),
        )
        .collect();
    let run: Vec<String> = [retries, workload]
        .iter()
        .map(|part| part.join(", "))
        .filter(|part| !part.is_empty())
        .collect();
    format!(
        "Storm probability by {} and {}: {}",
        axis_scale(&s.x).name,
        axis_scale(&s.y).name,
        run.join("; ")
    )
}

/// A patience span for people: `10s`, or `10s to 478s`.
pub fn patience_text((least, most): (Micros, Micros)) -> String {
    if least == most {
        format_duration(least)
    } else {
        format!("{} to {}", format_duration(least), format_duration(most))
    }
}

/// The line under a map that says what its verdicts were judged over: the
/// window given, or each cell's default and how far they differ (a storm
/// probability that changes along an axis may be the patience changing).
pub fn patience_note(s: &MapSettings, cells: &[CellCounts]) -> Option<String> {
    let span = s.patience_span(cells)?;
    Some(patience_words(s.patience_given(), span))
}

/// [`patience_note`]'s words: short enough for one line under the map.
fn patience_words(given: bool, span: (Micros, Micros)) -> String {
    if given {
        format!(
            "verdicts judged over a patience window of {} after the last trigger (given)",
            patience_text(span)
        )
    } else if span.0 == span.1 {
        format!(
            "verdicts judged over the default patience window, {} after the last trigger",
            patience_text(span)
        )
    } else {
        format!(
            "patience: each cell's default, {} (in its tooltip); --patience sets one for all",
            patience_text(span)
        )
    }
}

/// The heatmap of the map `s` whose cells are `cells` (a map's own, or
/// read back from its CSV), titled `title`.
pub fn map_svg(s: &MapSettings, cells: &[CellCounts], title: &str) -> String {
    let rows = rows_of(places(cells), s.y.values.len());
    let row_height = (360.0 / rows.len() as f64).clamp(22.0, 60.0);
    // Clear of the legend's heading, which starts at its left edge.
    let (title, title_extra) = title_block(title, WIDTH - RIGHT + 24.0 - 20.0 - 16.0);
    let plot_top = TOP + title_extra;
    let contour = Contour::of(s);
    let notes: Vec<String> = contour
        .note(s)
        .into_iter()
        .chain(patience_note(s, cells))
        .collect();
    let height =
        plot_top + BOTTOM + NOTE_LINE * notes.len() as f64 + row_height * rows.len() as f64;
    let plot_width = WIDTH - LEFT - RIGHT;
    // The x range: the coarse values, with half a step beyond each end.
    let mut coarse: Vec<f64> = s.x.values.iter().map(|v| s.x.position(v)).collect();
    coarse.sort_by(f64::total_cmp);
    let half_step = |a: f64, b: f64| (b - a).abs() / 2.0;
    let (first, last) = (coarse[0], coarse[coarse.len() - 1]);
    let (x0, x1) = if coarse.len() > 1 {
        (
            first - half_step(first, coarse[1]),
            last + half_step(coarse[coarse.len() - 2], last),
        )
    } else {
        (first - 0.5, first + 0.5)
    };
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * plot_width;
    let decided: u64 = cells.iter().map(|c| c.runs).sum();
    let unresolved: u64 = cells.iter().map(|c| c.unresolved).sum();
    // The first y value at the bottom, as on any chart.
    let row_top = |y: usize| plot_top + row_height * (rows.len() - 1 - y) as f64;

    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">
<defs><pattern id="uncertain" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#000" stroke-opacity="0.45" stroke-width="1.5"/></pattern></defs>
<rect width="100%" height="100%" fill="#fff"/>
{title}"##
    );
    for (y, row) in rows.iter().enumerate() {
        let top = row_top(y);
        for (k, &i) in row.iter().enumerate() {
            let cell = &cells[i];
            let left = k
                .checked_sub(1)
                .map_or(x0, |j| (cells[row[j]].x_at + cell.x_at) / 2.0);
            let right = row
                .get(k + 1)
                .map_or(x1, |&j| (cells[j].x_at + cell.x_at) / 2.0);
            let storm = cell.storm();
            let (l, w) = (px(left), px(right) - px(left));
            if storm.runs == 0 {
                // No storm probability to colour: grey, and said so.
                let _ = writeln!(
                    svg,
                    r##"<rect class="cell undecided" x="{l:.2}" y="{top:.2}" width="{w:.2}" height="{row_height:.2}" fill="{UNDECIDED}"><title>{} = {}, {} = {}: no run decided ({} unresolved: each ended before its patience window did)</title></rect>"##,
                    s.x.param.key,
                    escape(&cell.x),
                    s.y.param.key,
                    escape(&s.y.values[cell.y]),
                    group_thousands(storm.unresolved),
                );
                continue;
            }
            let (r, g, b) = storm_colour(storm.probability());
            let _ = writeln!(
                svg,
                r##"<rect class="cell" x="{l:.2}" y="{top:.2}" width="{w:.2}" height="{row_height:.2}" fill="rgb({r},{g},{b})" data-p="{}"><title>{} = {}, {} = {}: {} of {} runs stuck ({} to {}){}{}{}</title></rect>"##,
                trimmed(storm.probability(), 4),
                s.x.param.key,
                escape(&cell.x),
                s.y.param.key,
                escape(&s.y.values[cell.y]),
                storm.stuck,
                group_thousands(storm.runs),
                trimmed(storm.low, 4),
                trimmed(storm.high, 4),
                if storm.unresolved > 0 {
                    format!("; {} unresolved", group_thousands(storm.unresolved))
                } else {
                    String::new()
                },
                cell.split.map_or_else(String::new, |f| format!(
                    "; backlog storm before calm, by splitting: {}{}",
                    significant(f.probability),
                    f.ci95
                        .map_or_else(String::new, |ci| format!(" ± {}", significant(ci)))
                )),
                s.patience_us(&cell.x, cell.y)
                    .map_or_else(String::new, |p| format!(
                        "; patience {}",
                        format_duration(p)
                    )),
            );
            if cell.side() == Side::Uncertain {
                let _ = writeln!(
                    svg,
                    r##"<rect class="uncertain" x="{l:.2}" y="{top:.2}" width="{w:.2}" height="{row_height:.2}" fill="url(#uncertain)"/>"##
                );
            }
        }
        let label = shortened(&s.y.values[y]);
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{:.2}" text-anchor="end" dominant-baseline="middle">{}</text>"##,
            LEFT - 6.0,
            top + row_height / 2.0,
            escape(&label)
        );
    }
    // The frame, the x ticks at the coarse values, and the axis titles.
    let bottom = plot_top + row_height * rows.len() as f64;
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT}" y="{plot_top}" width="{plot_width}" height="{:.2}" fill="none" stroke="#444"/>"##,
        bottom - plot_top
    );
    let scale = x_scale(s);
    // A label where it does not run into the one before it.
    let mut free_from = f64::NEG_INFINITY;
    for &x in &coarse {
        // A category by its value (its place is only its order).
        let label = if s.x.categorical() {
            shortened(&s.x.values[x as usize])
        } else {
            trimmed(scale.shown(x), 4)
        };
        let half = f64::from(crate::report::svg::text_width(&label, 12.0)) / 2.0;
        let shown = if px(x) - half >= free_from + 4.0 {
            free_from = px(x) + half;
            format!(
                r##"<text x="{:.2}" y="{:.2}" text-anchor="middle">{label}</text>"##,
                px(x),
                bottom + 18.0
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.2}" y1="{bottom:.2}" x2="{0:.2}" y2="{1:.2}" stroke="#444"/>{shown}"##,
            px(x),
            bottom + 5.0,
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{:.2}" y="{:.2}" text-anchor="middle">{}</text>
<text transform="translate(16,{:.2}) rotate(-90)" text-anchor="middle">{}</text>"##,
        LEFT + plot_width / 2.0,
        bottom + 40.0,
        escape(&scale.title),
        plot_top + (bottom - plot_top) / 2.0,
        escape(&axis_title(&s.y))
    );
    // The 50% contour: each row's crossing, joined between neighbouring rows
    // where both axes are numbers; alone in its row where the rows are
    // categories; none where the columns are.
    let boundaries = boundaries_of(cells, rows.len());
    let crossings = boundaries
        .iter()
        .map(|b| b.crossing.at().map(|x| (px(x), row_top(b.y))));
    match contour {
        Contour::Joined => {
            let mut segment: Vec<String> = Vec::new();
            let mut segments = Vec::new();
            for crossing in crossings {
                match crossing {
                    Some((x, top)) => {
                        segment.push(format!("{x:.2},{:.2}", top + row_height / 2.0));
                    }
                    None => segments.push(std::mem::take(&mut segment)),
                }
            }
            segments.push(segment);
            for points in segments.iter().filter(|p| !p.is_empty()) {
                let points = points.join(" ");
                let _ = writeln!(
                    svg,
                    r##"<polyline class="contour" points="{points}" fill="none" stroke="#fff" stroke-width="5" stroke-linejoin="round"/><polyline points="{points}" fill="none" stroke="#000" stroke-width="2" stroke-linejoin="round"/>"##
                );
                for point in points.split(' ') {
                    let (cx, cy) = point.split_once(',').expect("x,y");
                    let _ = writeln!(svg, r##"<circle cx="{cx}" cy="{cy}" r="3" fill="#000"/>"##);
                }
            }
        }
        Contour::PerRow => {
            for (x, top) in crossings.flatten() {
                let (y1, y2) = (top + 3.0, top + row_height - 3.0);
                let _ = writeln!(
                    svg,
                    r##"<line class="crossing" x1="{x:.2}" y1="{y1:.2}" x2="{x:.2}" y2="{y2:.2}" stroke="#fff" stroke-width="5"/><line x1="{x:.2}" y1="{y1:.2}" x2="{x:.2}" y2="{y2:.2}" stroke="#000" stroke-width="2"/><circle cx="{x:.2}" cy="{:.2}" r="3" fill="#000"/>"##,
                    top + row_height / 2.0
                );
            }
        }
        Contour::Omitted => {}
    }
    // The legend: the colour scale, the hatching and the contour.
    let lx = WIDTH - RIGHT + 24.0;
    let bar = (bottom - plot_top).min(160.0);
    for k in 0..20 {
        let p = 1.0 - (f64::from(k) + 0.5) / 20.0;
        let (r, g, b) = storm_colour(p);
        let _ = writeln!(
            svg,
            r##"<rect x="{lx}" y="{:.2}" width="14" height="{:.2}" fill="rgb({r},{g},{b})"/>"##,
            plot_top + bar * f64::from(k) / 20.0,
            bar / 20.0 + 0.5
        );
    }
    for (p, text) in [(1.0, "1"), (0.5, "0.5"), (0.0, "0")] {
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{:.2}" dominant-baseline="middle">{text}</text>"##,
            lx + 19.0,
            plot_top + bar * (1.0 - p)
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{lx}" y="{:.2}" font-size="11">storm</text>
<text x="{lx}" y="{:.2}" font-size="11">probability</text>
<rect x="{lx}" y="{:.2}" width="14" height="14" fill="url(#uncertain)" stroke="#444"/>
<text x="{}" y="{:.2}" font-size="11" dominant-baseline="middle">uncertain</text>"##,
        plot_top - 28.0,
        plot_top - 15.0,
        plot_top + bar + 12.0,
        lx + 19.0,
        plot_top + bar + 19.0,
    );
    let sample_y = plot_top + bar + 40.0;
    let sample = match contour {
        Contour::Joined => format!(
            r##"<line x1="{lx}" y1="{sample_y:.2}" x2="{}" y2="{sample_y:.2}" stroke="#000" stroke-width="2"/>
"##,
            lx + 14.0
        ),
        Contour::PerRow => format!(
            r##"<line x1="{0}" y1="{1:.2}" x2="{0}" y2="{2:.2}" stroke="#000" stroke-width="2"/>
"##,
            lx + 7.0,
            sample_y - 7.0,
            sample_y + 7.0
        ),
        Contour::Omitted => String::new(),
    };
    let _ = writeln!(
        svg,
        r##"{sample}<text x="{}" y="{sample_y:.2}" font-size="11" dominant-baseline="middle">{}</text>"##,
        if contour == Contour::Omitted {
            lx
        } else {
            lx + 19.0
        },
        contour.legend()
    );
    let mut foot = vec![format!(
        "{}; hatched: the 95% Wilson interval straddles 50%{}",
        if unresolved > 0 {
            format!(
                "{} of {} runs decided",
                group_thousands(decided),
                group_thousands(decided + unresolved)
            )
        } else {
            format!("{} runs", group_thousands(decided))
        },
        if unresolved > 0 {
            "; grey: no run decided"
        } else {
            ""
        }
    )];
    foot.extend(notes);
    let first = height - 6.0 - NOTE_LINE * (foot.len() - 1) as f64;
    for (i, line) in foot.iter().enumerate() {
        let _ = writeln!(
            svg,
            r##"<text x="{LEFT}" y="{:.2}" font-size="11" fill="#444">{}</text>"##,
            first + NOTE_LINE * i as f64,
            escape(line)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// A value as an axis label: whole up to 22 characters, else its first 21
/// and an ellipsis, so a cut label says it is cut (the tooltips and the
/// CSV hold the whole value).
fn shortened(value: &str) -> String {
    if value.chars().count() <= 22 {
        value.to_string()
    } else {
        value.chars().take(21).chain(std::iter::once('…')).collect()
    }
}

/// The height of a footnote line under a map, px.
const NOTE_LINE: f64 = 14.0;

/// How a map draws where storm probability crosses 50%.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Contour {
    /// Both axes numbers: each row's crossing, joined to the next row's.
    Joined,
    /// Categorical rows: each row's crossing alone, nothing between rows.
    PerRow,
    /// Categorical columns: no crossing lies between two categories.
    Omitted,
}

impl Contour {
    fn of(s: &MapSettings) -> Contour {
        if s.x.categorical() {
            Contour::Omitted
        } else if s.y.categorical() {
            Contour::PerRow
        } else {
            Contour::Joined
        }
    }

    /// The legend's words.
    fn legend(self) -> &'static str {
        match self {
            Contour::Joined => "50% contour",
            Contour::PerRow => "50% crossing",
            Contour::Omitted => "no 50% line",
        }
    }

    /// Why the contour is drawn as it is, under the map (none if joined).
    fn note(self, s: &MapSettings) -> Option<String> {
        match self {
            Contour::Joined => None,
            Contour::PerRow => Some(format!(
                "{} is categorical: each row's 50% crossing stands alone, not joined to the next",
                s.y.param.key
            )),
            Contour::Omitted => Some(format!(
                "{} is categorical: nothing lies between two of its values, so no 50% crossing \
                 is drawn",
                s.x.param.key
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each patience note fits on one line under the map (it is not
    /// wrapped): a span of defaults within the 10 s to 10 min they are
    /// bounded to, printed wider (whole ms) than a default is (whole s).
    #[test]
    fn the_patience_note_fits_under_the_map() {
        let wide = (Micros::from_ms(10_001), Micros::from_ms(599_999));
        for (given, span) in [(true, wide), (false, (wide.1, wide.1)), (false, wide)] {
            let line = patience_words(given, span);
            let width = crate::report::svg::text_width(&line, 11.0);
            assert!(f64::from(width) <= WIDTH - LEFT, "{width} px: {line}");
        }
    }
}
