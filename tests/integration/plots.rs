//! Pictures: each SVG parses as XML, carries the expected series, and its
//! drawn coordinates map back to the values herdsim computed.

use crate::common::workdir;

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::base::seeding::Seeds;
use herdsim::experiment::schedule::schedule;
use herdsim::experiment::timelines::run_timeline;
use herdsim::measure::server_metrics::ServerMetrics;
use herdsim::model::server::{NS_PER_MS, ServerSpec, Triggers};
use herdsim::report::series_svg::{SeriesPicture, TRIGGER_COLOR, server_series};
use herdsim::report::svg::{
    CAPACITY_COLOR, Curve, Frame, PALETTE, RETRIES_COLOR, curves, delay_bands, timelines,
};
use herdsim::sim::server_loop::{ServerRetry, simulate_server};
use herdsim::{PolicyKind, RunSpec};
use plotters::style::RGBColor;

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Every polyline of `color` in `svg`, as pixel points.
fn polylines(svg: &str, color: RGBColor) -> Vec<Vec<(f64, f64)>> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    doc.descendants()
        .filter(|n| {
            n.has_tag_name("polyline") && n.attribute("stroke") == Some(hex(color).as_str())
        })
        .map(|n| {
            n.attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// The data size of one pixel in each direction, near a point (log axes vary).
fn pixel(frame: &Frame, (px, py): (f64, f64)) -> (f64, f64) {
    (
        (frame.data_x(px + 1.0) - frame.data_x(px)).abs(),
        (frame.data_y(py - 1.0) - frame.data_y(py))
            .abs()
            .max((frame.data_y(py) - frame.data_y(py + 1.0)).abs()),
    )
}

#[test]
fn a_timeline_draws_the_computed_retry_rates_and_the_capacity() {
    let spec = RunSpec::seed_002(PolicyKind::Equal, 200);
    let timeline = run_timeline(&spec, Seeds::for_job(5, 0, 0), 120);
    let figure = timelines(
        "equal, 200 clients",
        &[("equal".into(), &timeline)],
        Some(1.0),
    )
    .unwrap();
    let frame = &figure.frames[0];
    // The series spans the plot (the legend's sample line is 18 px wide).
    let series: Vec<_> = polylines(&figure.svg, RETRIES_COLOR)
        .into_iter()
        .filter(|p| p.len() > 2)
        .collect();
    assert_eq!(series.len(), 1, "one retries series");
    let rates = timeline.rates_per_ms();
    let points = &series[0];
    assert_eq!(
        points.len(),
        2 * rates.len(),
        "two vertices per bin (a step line)"
    );
    // The run is under 10 s, so the time axis is in ms.
    let bin_ms = timeline.bin_us as f64 / 1e3;
    for (i, rate) in rates.iter().enumerate() {
        for (vertex, &(px, py)) in points[2 * i..2 * i + 2].iter().enumerate() {
            let (dx, dy) = pixel(frame, (px, py));
            assert!(
                (frame.data_y(py) - rate).abs() <= dy,
                "bin {i}: drawn {} vs {rate}",
                frame.data_y(py)
            );
            let edge = (i + vertex) as f64 * bin_ms;
            assert!(
                (frame.data_x(px) - edge).abs() <= dx,
                "bin {i}: drawn at {} ms, edge {edge} ms",
                frame.data_x(px)
            );
        }
    }
    let drawn_retries: f64 = rates.iter().sum::<f64>() * bin_ms;
    assert!((drawn_retries - timeline.metrics.retries as f64).abs() < 1e-6);
    let capacity: Vec<_> = polylines(&figure.svg, CAPACITY_COLOR)
        .into_iter()
        .filter(|p| p[1].0 - p[0].0 > 50.0)
        .collect();
    assert_eq!(capacity.len(), 1);
    for &(px, py) in &capacity[0] {
        assert!(
            (frame.data_y(py) - 1.0).abs() <= pixel(frame, (px, py)).1,
            "capacity at 1 per ms"
        );
    }
    assert!(figure.svg.contains("retries per ms") && figure.svg.contains("capacity (1 per ms)"));
    assert!(figure.svg.contains("time since the first call (ms)"));
}

#[test]
fn delay_bands_mark_each_retrys_median() {
    let policies: Vec<_> = [PolicyKind::Full, PolicyKind::Decorrelated]
        .into_iter()
        .map(|k| schedule(&RunSpec::seed_002(k, 1).policy, 8, 2_000, 3))
        .collect();
    let figure = delay_bands("delays", &policies).unwrap();
    let doc = roxmltree::Document::parse(&figure.svg).unwrap();
    for (row, (s, frame)) in policies.iter().zip(&figure.frames).enumerate() {
        let color = hex(PALETTE[row]);
        let medians: Vec<(f64, f64)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some(color.as_str()))
            .map(|n| {
                (
                    n.attribute("cx").unwrap().parse().unwrap(),
                    n.attribute("cy").unwrap().parse().unwrap(),
                )
            })
            .filter(|&(x, y)| {
                x > f64::from(frame.px.0)
                    && (f64::from(frame.py.0)..=f64::from(frame.py.1)).contains(&y)
            })
            .collect();
        // One per retry, plus the legend's sample.
        assert_eq!(medians.len(), s.retries.len() + 1, "{}", s.policy.kind);
        for r in &s.retries {
            let expected = r.p50 as f64 / 1e3;
            let hit = medians.iter().any(|&(px, py)| {
                let (dx, dy) = pixel(frame, (px, py));
                (frame.data_x(px) - f64::from(r.retry)).abs() <= dx
                    && (frame.data_y(py) - expected).abs() <= dy
            });
            assert!(
                hit,
                "{} retry {}: no median drawn at {expected} ms",
                s.policy.kind, r.retry
            );
        }
    }
    assert!(figure.svg.contains("delay (ms)") && figure.svg.contains("p1 to p99"));
}

#[test]
fn curves_draw_each_group_through_its_points() {
    let data = vec![
        Curve {
            label: "full".into(),
            points: vec![
                (10.0, 20.0, Some(1.0)),
                (100.0, 270.0, Some(3.0)),
                (1_000.0, 4_725.0, Some(4.0)),
            ],
        },
        Curve {
            label: "decorrelated".into(),
            points: vec![
                (10.0, 19.0, None),
                (100.0, 234.0, None),
                (1_000.0, 3_743.0, None),
            ],
        },
    ];
    let figure = curves("calls", "clients", "calls_mean", &data, true, true).unwrap();
    let frame = &figure.frames[0];
    for (i, curve) in data.iter().enumerate() {
        let drawn: Vec<_> = polylines(&figure.svg, PALETTE[i])
            .into_iter()
            .filter(|p| p.len() == curve.points.len())
            .collect();
        assert_eq!(drawn.len(), 1, "{}", curve.label);
        for (&(px, py), &(x, y, _)) in drawn[0].iter().zip(&curve.points) {
            let (dx, dy) = pixel(frame, (px, py));
            assert!(
                (frame.data_x(px) - x).abs() <= dx && (frame.data_y(py) - y).abs() <= dy,
                "{}: {x}, {y}",
                curve.label
            );
        }
        assert!(figure.svg.contains(&curve.label));
    }
    assert!(curves("empty", "x", "y", &[], false, false).is_err());
}

#[test]
fn every_plot_option_writes_an_svg() {
    let dir = workdir("cli");
    let p = |name: &str| dir.join(name).display().to_string();
    let runs: [Vec<String>; 5] = [
        ["run", "--clients", "200", "--plot", &p("run.svg")]
            .map(String::from)
            .to_vec(),
        [
            "run",
            "--resource",
            "server",
            "--duration",
            "3s",
            "--trigger",
            "outage@1s..1.2s",
            "-q",
            "--plot",
            &p("server.svg"),
        ]
        .map(String::from)
        .to_vec(),
        [
            "compare",
            "--seeds",
            "2",
            "--clients",
            "200",
            "--quiet",
            "--plot",
            &p("compare.svg"),
        ]
        .map(String::from)
        .to_vec(),
        ["policy", "none,full", "--plot", &p("policy.svg")]
            .map(String::from)
            .to_vec(),
        [
            "sweep",
            "--policy",
            "full,equal",
            "--clients",
            "10,100",
            "--seeds",
            "3",
            "--quiet",
            "--out",
            &p("s.csv"),
        ]
        .map(String::from)
        .to_vec(),
    ];
    for args in &runs {
        let out = cargo_bin_cmd!("herdsim").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "plot",
            &p("s.csv"),
            "--x",
            "clients",
            "--y",
            "calls_mean",
            "--by",
            "policy",
            "--log-x",
            "--out",
            &p("curves.svg"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (file, expect) in [
        ("run.svg", "retries per ms"),
        ("server.svg", "trigger 1: outage@1s..1.2s"),
        ("compare.svg", "decorrelated"),
        ("policy.svg", "median"),
        ("curves.svg", "equal"),
    ] {
        let svg = fs::read_to_string(dir.join(file)).unwrap();
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(svg.contains(expect), "{file} lacks {expect}");
    }
    // The run's summary ends with a sparkline of the same retries.
    let out = cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "200"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("retries over time, replicate 0") && last.contains('█'),
        "{last}"
    );
}

#[test]
fn a_bad_plot_path_is_refused_before_any_work() {
    let dir = workdir("bad");
    let missing = dir.join("no/such/dir/x.svg").display().to_string();
    let folder = dir.display().to_string();
    let same = dir.join("same.out").display().to_string();
    for args in [
        vec!["run", "--plot", &folder],
        vec!["run", "--resource", "server", "--plot", &missing],
        vec![
            "run",
            "--resource",
            "server",
            "--plot",
            &same,
            "--series",
            &same,
        ],
        vec!["run", "--plot", &missing],
        vec!["policy", "full", "--plot", &missing],
        vec!["compare", "--seeds", "1", "--plot", &folder],
    ] {
        let out = cargo_bin_cmd!("herdsim").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty(), "{args:?} ran before refusing");
    }
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "no partial file left"
    );
    let csv = dir.join("x.csv");
    fs::write(&csv, "a,b\n1,2\n").unwrap();
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "plot",
            csv.to_str().unwrap(),
            "--x",
            "a",
            "--y",
            "c",
            "--out",
            dir.join("y.svg").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'--y'"));
    assert!(!dir.join("y.svg").exists());
}

/// Every rectangle of `color` in `svg`, as pixel (x, y, width, height).
fn rectangles(svg: &str, color: RGBColor) -> Vec<(f64, f64, f64, f64)> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(hex(color).as_str()))
        .map(|n| {
            let number = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (number("x"), number("y"), number("width"), number("height"))
        })
        .collect()
}

#[test]
fn the_server_series_shades_each_trigger_and_draws_the_queue_it_measured() {
    let spec = ServerSpec {
        timeout: Some(100 * NS_PER_MS),
        triggers: "outage@2s..2.5s+capacity:0@3s..3.2s"
            .parse::<Triggers>()
            .unwrap()
            .0,
        duration: 5_000 * NS_PER_MS,
        ..ServerSpec::default()
    };
    let retry = ServerRetry {
        policy: RunSpec::seed_002(PolicyKind::NoBackoff, 1).policy,
        max_attempts: Some(4),
        controls: Vec::new(),
        fleet: None,
    };
    let run: ServerMetrics = simulate_server(&spec, &retry, Seeds::for_job(9, 0, 0), u64::MAX);
    let picture = SeriesPicture {
        title: "stuck".into(),
        windows: &run.windows,
        window_ns: spec.window,
        triggers: vec![
            (2.0, 2.5, "outage@2s..2.5s".into()),
            (3.0, 3.2, "capacity:0@3s..3.2s".into()),
        ],
        capacity_per_s: spec
            .capacity_steps()
            .map(|s| s.into_iter().map(|(t, c)| (t as f64 / 1e9, c)).collect()),
    };
    let figure = server_series(&picture).unwrap();
    assert_eq!(figure.frames.len(), 3, "load, queue and latency panels");
    // Each trigger is shaded in each panel, spanning its window to within a
    // pixel (the legend's swatches are 18 px wide and left out).
    let shades: Vec<_> = rectangles(&figure.svg, TRIGGER_COLOR)
        .into_iter()
        .filter(|r| r.2 != 18.0)
        .collect();
    assert_eq!(shades.len(), 6, "{shades:?}");
    for (i, &(x, _, width, _)) in shades.iter().enumerate() {
        let frame = &figure.frames[i / 2];
        let (from, to) = [(2.0, 2.5), (3.0, 3.2)][i % 2];
        let px = frame.data_x(x + 1.0) - frame.data_x(x);
        assert!(
            (frame.data_x(x) - from).abs() <= px,
            "shade {i} starts at {}",
            frame.data_x(x)
        );
        assert!(
            (frame.data_x(x + width) - to).abs() <= 2.0 * px,
            "shade {i} ends at {}",
            frame.data_x(x + width)
        );
    }
    // The queue panel's step line passes through every window's queue.
    let frame = &figure.frames[1];
    let queue_line = polylines(&figure.svg, PALETTE[0])
        .into_iter()
        .find(|p| {
            p.len() == 2 * run.windows.len()
                && p.iter()
                    .all(|&(_, y)| y >= f64::from(frame.py.0) && y <= f64::from(frame.py.1))
        })
        .expect("a queue line of two vertices per window");
    for (w, pair) in run.windows.iter().zip(queue_line.chunks(2)) {
        let (px, py) = pair[1];
        let (_, dy) = pixel(frame, (px, py));
        assert!(
            (frame.data_y(py) - w.queue as f64).abs() <= dy,
            "queue {} drawn as {}",
            w.queue,
            frame.data_y(py)
        );
    }
    assert!(
        run.windows.iter().any(|w| w.queue > 100),
        "the run's queue grew: a picture of a storm"
    );
}
