//! Pictures that read: a run plot's long subtitle wrapped whole within the
//! figure, the herd plot's outage shaded and its clients' cumulative share
//! drawn, a map's contour never drawn across a categorical axis, and a
//! map's default title saying what was run.

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::base::seeding::Seeds;
use herdsim::base::time::Micros;
use herdsim::experiment::timelines::run_timeline;
use herdsim::report::herd_svg::{HerdPicture, SUCCEEDED_COLOR, herd_timeline};
use herdsim::report::series_svg::{TRIGGER_COLOR, server_series};
use herdsim::{PolicyKind, RunSpec};

use crate::common::{succeed, without, workdir};
use crate::map::MAP;
use crate::plots::{polylines, rectangles, stuck_picture, stuck_run};

/// The `<text>` elements of `svg` in document order: (x, drawn font size,
/// words), and the figure's width.
fn texts(svg: &str) -> (Vec<(f64, f64, String)>, f64) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
    let width = doc
        .root_element()
        .attribute("width")
        .unwrap()
        .parse()
        .unwrap();
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let number = |a: &str| n.attribute(a).unwrap_or("0").parse::<f64>().unwrap();
            let words: String = n
                .descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect();
            (number("x"), number("font-size"), words.trim().to_string())
        })
        .collect();
    (texts, width)
}

#[test]
fn a_long_run_plot_subtitle_wraps_whole_within_the_picture() {
    let (spec, run) = stuck_run();
    let mut picture = stuck_picture(&spec, &run, true);
    // The subtitle of the issue's resilience4j run: its breaker's whole rule.
    picture.title = "server, depth 1, offered load ρ = 0.80: slowdown ×5, 2s to 22s\n\
        exponential (base 200ms, cap 2s), at most 4 attempts, timeout 1s, \
        resilience4j:0.5,window:50,min:20,slow:0.8,slow-call:2s,open:10s,permits:10,auto:true,\
        half-open-max:0s,then:fail,refused:fail; replicate 0 of master seed 42: stuck"
        .to_string();
    let figure = server_series(&picture).unwrap();
    let (texts, width) = texts(&figure.svg);
    // The title's lines come first, before the first panel's caption.
    let caption = texts
        .iter()
        .position(|t| t.2 == "offered load and goodput")
        .unwrap();
    let lines = &texts[..caption];
    let words: Vec<&str> = lines.iter().map(|t| t.2.as_str()).collect();
    // Every word there, in order, none cut; the long line in two or more.
    assert_eq!(words.join(" "), picture.title.replace('\n', " "));
    assert!(lines.len() >= 3, "{words:#?}");
    // Each line within the figure (its width generously estimated, 0.55 em
    // a character at the size asked for, above the size drawn) and the
    // panels below the last line.
    for (x, size, line) in lines {
        let half = line.chars().count() as f64 * size * 1.24 * 0.55 / 2.0;
        assert!(x - half >= 0.0 && x + half <= width, "{line} runs off");
    }
    let last_line_bottom = 8.0 + 22.0 * lines.len() as f64;
    assert!(f64::from(figure.frames[0].py.0) > last_line_bottom + 20.0);
}

#[test]
fn the_issues_resilience4j_run_plot_keeps_its_subtitle_whole() {
    let dir = workdir("r4j-plot");
    let svg = dir.join("b.svg");
    succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--import",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/configs/resilience4j-application.yml"
        ),
        "--resource",
        "server",
        "--workers",
        "40",
        "--service",
        "lognormal:80ms/0.692",
        "--rate",
        "300",
        "--timeout",
        "1s",
        "--trigger",
        "slow:5@2s..22s",
        "--quiet",
        "--plot",
        svg.to_str().unwrap(),
    ]));
    let (texts, width) = texts(&fs::read_to_string(&svg).unwrap());
    let caption = texts
        .iter()
        .position(|t| t.2 == "offered load and goodput")
        .unwrap();
    let title = texts[..caption]
        .iter()
        .map(|t| t.2.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    // The breaker's rule and the verdict, from the middle and the end of
    // the subtitle, are there whole.
    assert!(title.contains("resilience4j:"), "{title}");
    assert!(title.contains("replicate 0 of master seed"), "{title}");
    for (x, size, line) in &texts[..caption] {
        let half = line.chars().count() as f64 * size * 1.24 * 0.55 / 2.0;
        assert!(x - half >= 0.0 && x + half <= width, "{line} runs off");
    }
}

/// A herd of 1,000 clients with decorrelated jitter behind a slot that is
/// down for its first 300 ms: every call then fails.
fn herd_under_an_outage() -> RunSpec {
    let mut spec = RunSpec::seed_002(PolicyKind::Decorrelated, 1_000);
    spec.down = Some((Micros::ZERO, Micros::from_ms(300)));
    spec
}

#[test]
fn the_herd_plot_shades_the_outage_and_draws_the_clients_through() {
    let spec = herd_under_an_outage();
    let timeline = run_timeline(&spec, Seeds::for_job(3, 0, 0), 200);
    assert_eq!(
        timeline.metrics.successes, 1_000,
        "every client gets through"
    );
    let picture = HerdPicture {
        title: "decorrelated, 1,000 clients".into(),
        label: "decorrelated".into(),
        timeline: &timeline,
        capacity_per_ms: Some(spec.capacity_per_ms),
        outage_us: spec.down,
    };
    let figure = herd_timeline(&picture).unwrap();
    let frame = &figure.frames[0];
    // One shade in the plot (the legend's swatch is right of it), from
    // t = 0 to 300 ms on the time axis, to within a pixel, full height.
    let shades: Vec<_> = rectangles(&figure.svg, TRIGGER_COLOR)
        .into_iter()
        .filter(|r| r.0 < f64::from(frame.px.1))
        .collect();
    assert_eq!(shades.len(), 1, "{shades:?}");
    let (x, y, w, h) = shades[0];
    let px = frame.data_x(x + 1.0) - frame.data_x(x);
    assert!(frame.data_x(x).abs() <= px, "from {}", frame.data_x(x));
    assert!(
        (frame.data_x(x + w) - 300.0).abs() <= 2.0 * px,
        "to {}",
        frame.data_x(x + w)
    );
    assert!((y - f64::from(frame.py.0)).abs() <= 1.0);
    assert!((y + h - f64::from(frame.py.1)).abs() <= 2.0);
    // The cumulative line (the longest of its colour: the legend's sample
    // has two points) runs from 0% at t = 0, never falls, and ends at 100%,
    // the top of the right axis, which spans the same rows.
    let line = polylines(&figure.svg, SUCCEEDED_COLOR)
        .into_iter()
        .max_by_key(Vec::len)
        .unwrap();
    let share = |py: f64| 100.0 * (f64::from(frame.py.1) - py) / f64::from(frame.py.1 - frame.py.0);
    let (first, last) = (line[0], line[line.len() - 1]);
    assert!(share(first.1).abs() < 1.0 && frame.data_x(first.0).abs() <= px);
    assert!(
        (share(last.1) - 100.0).abs() < 1.0,
        "ends at {}%",
        share(last.1)
    );
    assert!(line.windows(2).all(|w| w[1].1 <= w[0].1), "never falls");
    // Nobody succeeds during the outage: the line is still at 0% at 300 ms.
    let at_end_of_outage = line
        .iter()
        .rfind(|p| frame.data_x(p.0) <= 300.0 - px)
        .unwrap();
    assert!(share(at_end_of_outage.1) < 1.0);
    let svg = &figure.svg;
    assert!(
        svg.contains("outage, 0 to 300ms: every call fails"),
        "{svg}"
    );
    assert!(svg.contains("clients succeeded so far (% of 1,000, right axis)"));
}

#[test]
fn run_plot_on_the_slot_model_shows_its_down_window() {
    let dir = workdir("herd-plot");
    let svg = dir.join("x.svg");
    succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--clients",
        "1000",
        "--policy",
        "decorrelated",
        "--down",
        "0ms..300ms",
        "--plot",
        svg.to_str().unwrap(),
    ]));
    let svg = fs::read_to_string(&svg).unwrap();
    // The shade and its legend swatch, and the cumulative line and its.
    assert_eq!(rectangles(&svg, TRIGGER_COLOR).len(), 2);
    assert!(svg.contains("outage, 0 to 300ms: every call fails"));
    assert!(
        polylines(&svg, SUCCEEDED_COLOR)
            .iter()
            .any(|l| l.len() > 10)
    );
    assert!(svg.contains("clients succeeded (%)"));
}

/// A small map at 500 requests/s (the metastable case of
/// `tests/integration/map.rs`) with `extra` flags, its SVG's text.
fn small_map(name: &str, extra: &[&str]) -> String {
    let dir = workdir(name);
    let (out, svg) = (dir.join("m.csv"), dir.join("m.svg"));
    // The map tests' metastable case, its axes and sizes left to `extra`.
    let mut args = without(
        MAP,
        &["--rate", "--trigger", "--x", "--y", "--seeds", "--refine"],
    );
    args.extend([
        "--seeds",
        "10",
        "--refine",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    args.extend(extra);
    succeed(cargo_bin_cmd!("herdsim").args(&args));
    fs::read_to_string(svg).unwrap()
}

/// The rows of a map's SVG: each cell's (top, bottom).
fn rows_of(doc: &roxmltree::Document<'_>) -> Vec<(f64, f64)> {
    let mut rows: Vec<(f64, f64)> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("cell"))
        .map(|n| {
            let v = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (v("y"), v("y") + v("height"))
        })
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    rows.dedup();
    rows
}

/// The points of every line or polyline of the map's plot (the legend,
/// right of x = 640, the hatching's pattern, and the frame and ticks left
/// out).
fn drawn_lines(doc: &roxmltree::Document<'_>) -> Vec<Vec<(f64, f64)>> {
    doc.descendants()
        .filter(|n| !n.ancestors().any(|a| a.has_tag_name("defs")))
        .filter_map(|n| match n.tag_name().name() {
            "polyline" => Some(
                n.attribute("points")
                    .unwrap()
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect(),
            ),
            "line" if n.attribute("stroke") == Some("#000") => {
                let v = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
                Some(vec![(v("x1"), v("y1")), (v("x2"), v("y2"))])
            }
            _ => None,
        })
        .filter(|points: &Vec<(f64, f64)>| points.iter().all(|p| p.0 < 640.0))
        .collect()
}

#[test]
fn a_map_draws_no_contour_across_categorical_rows() {
    let svg = small_map(
        "map-budget-rows",
        &[
            "--rate",
            "500",
            "--trigger",
            "outage@2s..2.1s;outage@2s..2.3s;outage@2s..2.5s",
            "--budget",
            "none;tokens:500,cost:5,refund:1,timeout-cost:10",
            "--x",
            "trigger",
            "--y",
            "budget",
        ],
    );
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let rows = rows_of(&doc);
    assert_eq!(rows.len(), 2, "{rows:?}");
    // No joined contour; each row's crossing lies within its row.
    assert!(!svg.contains("class=\"contour\""));
    let crossings = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("crossing"))
        .count();
    assert!(crossings >= 1, "the row without a budget crosses 50%");
    for line in drawn_lines(&doc) {
        let within = rows.iter().any(|&(top, bottom)| {
            line.iter()
                .all(|&(_, y)| y >= top - 0.01 && y <= bottom + 0.01)
        });
        assert!(within, "a line across rows: {line:?}");
    }
    assert!(svg.contains("50% crossing"));
    assert!(svg.contains(
        "budget is categorical: each row's 50% crossing stands alone, not joined to the next"
    ));
    // The default title says what was mapped: the axes, the retries, the
    // load, and not the budget the rows vary.
    let (texts, _) = texts(&svg);
    let title = texts
        .iter()
        .take_while(|t| t.2 != "none")
        .map(|t| t.2.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        title.starts_with(
            "Storm probability by outage length and budget: no-backoff, at most 4 attempts, \
             timeout 100ms; 500 requests/s, 1 worker, service exp:1ms"
        ),
        "{title}"
    );
}

#[test]
fn a_map_draws_no_crossing_between_categorical_columns() {
    let svg = small_map(
        "map-budget-columns",
        &[
            "--rate",
            "300,500",
            "--trigger",
            "outage@2s..2.5s",
            "--budget",
            "none;tokens:500,cost:5,refund:1,timeout-cost:10",
            "--x",
            "budget",
            "--y",
            "rate",
        ],
    );
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(!svg.contains("class=\"contour\"") && !svg.contains("class=\"crossing\""));
    assert!(drawn_lines(&doc).is_empty(), "{:?}", drawn_lines(&doc));
    assert!(svg.contains("no 50% line"));
    assert!(svg.contains("budget is categorical: nothing lies between two of its values"));
    assert!(svg.contains("Storm probability by budget and rate: no-backoff"));
    // Its columns are labelled by their values, a long one shortened.
    let (texts, _) = texts(&svg);
    let labels: Vec<&str> = texts.iter().map(|t| t.2.as_str()).collect();
    assert!(labels.contains(&"none"), "{labels:?}");
    assert!(labels.contains(&"tokens:500,cost:5,ref…"), "{labels:?}");
}
