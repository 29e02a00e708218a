//! Pictures: each SVG parses as XML, carries the expected series, and its
//! drawn coordinates map back to the values herdsim computed.

use crate::common::workdir;

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::base::seeding::Seeds;
use herdsim::experiment::schedule::schedule;
use herdsim::experiment::timelines::run_timeline;
use herdsim::measure::server_metrics::{ServerMetrics, Window};
use herdsim::measure::verdict::Verdict;
use herdsim::model::server::NS_PER_S;
use herdsim::model::server::{NS_PER_MS, Nanos, ServerSpec, Triggers};
use herdsim::report::series_svg::{
    RUG_COLOR, STUCK_COLOR, SeriesPicture, TRIGGER_COLOR, server_series, trigger_label,
};
use herdsim::report::strategies_svg::{
    StrategiesPicture, StrategyRun, TriggerShades, strategies_series,
};
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
pub(crate) fn polylines(svg: &str, color: RGBColor) -> Vec<Vec<(f64, f64)>> {
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
    let bin_ms = timeline.bin_us.ticks() as f64 / 1e3;
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
            let expected = r.p50.ticks() as f64 / 1e3;
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
                (10.0, 20.0, Some((19.0, 21.0))),
                (100.0, 270.0, Some((267.0, 273.0))),
                (1_000.0, 4_725.0, Some((4_721.0, 4_729.0))),
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
        ("server.svg", "outage, 1s to 1.2s"),
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
pub(crate) fn rectangles(svg: &str, color: RGBColor) -> Vec<(f64, f64, f64, f64)> {
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
        deadline: None,
        retry_on: herdsim::model::retry_on::RetryOn::ALL,
        hedge: None,
        hedge_on_timeout: false,
    };
    let run: ServerMetrics = simulate_server(&spec, &retry, Seeds::for_job(9, 0, 0), u64::MAX);
    let picture = SeriesPicture {
        title: "stuck".into(),
        windows: &run.windows,
        window_ns: spec.window,
        triggers: spec
            .triggers
            .iter()
            .map(|t| {
                (
                    t.from.ticks() as f64 / 1e9,
                    t.to.ticks() as f64 / 1e9,
                    trigger_label(t),
                )
            })
            .collect(),
        capacity_per_s: spec.capacity_steps().map(|s| {
            s.into_iter()
                .map(|(t, c)| (t.ticks() as f64 / 1e9, c))
                .collect()
        }),
        load_end_s: run.load_end_ns.ticks() as f64 / 1e9,
        patience_s: None,
        verdict: None,
        recoveries: (Vec::new(), 1),
        all: true,
        live: false,
    };
    let figure = server_series(&picture).unwrap();
    assert_eq!(figure.frames.len(), 3, "load, queue and latency panels");
    // Each trigger is shaded in each panel, spanning its window to within a
    // pixel (the legend's swatches, right of the plot, left out).
    let plot_right = f64::from(figure.frames[0].px.1);
    let shades: Vec<_> = rectangles(&figure.svg, TRIGGER_COLOR)
        .into_iter()
        .filter(|r| r.0 < plot_right)
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

/// The stuck case of `results/metastable-stuck.svg` with a short patience
/// window: 500 requests/s on one 1 ms worker, 100 ms timeout, immediate
/// retries, a 0.5 s outage; its backlog drains for seconds after the load.
pub(crate) fn stuck_run() -> (ServerSpec, ServerMetrics) {
    let spec = ServerSpec {
        timeout: Some(100 * NS_PER_MS),
        triggers: "outage@2s..2.5s".parse::<Triggers>().unwrap().0,
        patience: 3 * NS_PER_S,
        duration: 5_500 * NS_PER_MS,
        ..ServerSpec::default()
    };
    let retry = ServerRetry {
        policy: RunSpec::seed_002(PolicyKind::NoBackoff, 1).policy,
        max_attempts: Some(4),
        controls: Vec::new(),
        fleet: None,
        deadline: None,
        retry_on: herdsim::model::retry_on::RetryOn::ALL,
        hedge: None,
        hedge_on_timeout: false,
    };
    let run = simulate_server(&spec, &retry, Seeds::for_job(9, 0, 0), u64::MAX);
    (spec, run)
}

pub(crate) fn stuck_picture<'a>(
    spec: &ServerSpec,
    run: &'a ServerMetrics,
    all: bool,
) -> SeriesPicture<'a> {
    let end = spec.last_trigger_end().unwrap();
    SeriesPicture {
        title: "stuck".into(),
        windows: &run.windows,
        window_ns: spec.window,
        triggers: spec
            .triggers
            .iter()
            .map(|t| {
                (
                    t.from.ticks() as f64 / 1e9,
                    t.to.ticks() as f64 / 1e9,
                    trigger_label(t),
                )
            })
            .collect(),
        capacity_per_s: None,
        load_end_s: run.load_end_ns.ticks() as f64 / 1e9,
        patience_s: Some((
            end.ticks() as f64 / 1e9,
            (end + spec.patience).ticks() as f64 / 1e9,
        )),
        verdict: run.verdict,
        recoveries: (Vec::new(), 1),
        all,
        live: false,
    }
}

/// The data polylines of `svg` (any colour) that are not a legend's
/// samples (those lie inside a legend box).
fn data_lines(svg: &str, legends: &[(i32, i32, i32, i32)]) -> Vec<Vec<(f64, f64)>> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let inside = |&(x, y): &(f64, f64), b: &(i32, i32, i32, i32)| {
        x >= f64::from(b.0) && x <= f64::from(b.2) && y >= f64::from(b.1) && y <= f64::from(b.3)
    };
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| {
            n.attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect::<Vec<(f64, f64)>>()
        })
        .filter(|line| !legends.iter().any(|b| line.iter().all(|p| inside(p, b))))
        .collect()
}

/// True if a segment of `lines` passes through the box (sampled every
/// half pixel).
fn crosses(lines: &[Vec<(f64, f64)>], b: (i32, i32, i32, i32)) -> bool {
    lines.iter().any(|line| {
        line.windows(2).any(|w| {
            let n = ((w[1].0 - w[0].0).abs().max((w[1].1 - w[0].1).abs()) * 2.0)
                .ceil()
                .max(1.0);
            (0..=n as usize).any(|k| {
                let f = k as f64 / n;
                let (x, y) = (
                    w[0].0 + f * (w[1].0 - w[0].0),
                    w[0].1 + f * (w[1].1 - w[0].1),
                );
                x > f64::from(b.0) && x < f64::from(b.2) && y > f64::from(b.1) && y < f64::from(b.3)
            })
        })
    })
}

/// Each legend box is drawn (a black frame at its place) and no data line
/// passes through it.
fn assert_legends_clear(svg: &str, legends: &[(i32, i32, i32, i32)]) {
    assert!(!legends.is_empty());
    let doc = roxmltree::Document::parse(svg).unwrap();
    let frames: Vec<(i32, i32, i32, i32)> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("rect")
                && n.attribute("stroke") == Some("#000000")
                && n.attribute("fill") == Some("none")
        })
        .map(|n| {
            let v = |a: &str| n.attribute(a).unwrap().parse::<i32>().unwrap();
            (v("x"), v("y"), v("x") + v("width"), v("y") + v("height"))
        })
        .collect();
    let lines = data_lines(svg, legends);
    assert!(!lines.is_empty());
    for &b in legends {
        assert!(frames.contains(&b), "legend {b:?} not drawn: {frames:?}");
        assert!(!crosses(&lines, b), "a line crosses the legend at {b:?}");
    }
}

#[test]
fn a_server_plot_shows_the_load_and_patience_not_the_drain() {
    let (spec, run) = stuck_run();
    assert_eq!(run.verdict, Some(Verdict::Stuck), "the storm case");
    let width_s = spec.window.ticks() as f64 / 1e9;
    let drain_end = run.windows.len() as f64 * width_s;
    let load_end = run.load_end_ns.ticks() as f64 / 1e9;
    assert!((load_end - 5.5).abs() < 1e-9);
    assert!(
        drain_end > load_end * 1.3,
        "the backlog drains long after the load: {drain_end} s"
    );
    let figure = server_series(&stuck_picture(&spec, &run, false)).unwrap();
    for frame in &figure.frames {
        // The load (to 5.5 s, the patience window's end too) plus a tenth,
        // to the next window.
        assert!(
            frame.x.1 >= load_end * 1.1 - 1e-9 && frame.x.1 < load_end * 1.1 + width_s,
            "the axis ends at {} s",
            frame.x.1
        );
    }
    assert!(figure.svg.contains("the run drains until"));
    // No line runs past the axis's end.
    let frame = &figure.frames[0];
    let right = f64::from(frame.px.1) + 1.0;
    assert!(
        data_lines(&figure.svg, &figure.legends)
            .iter()
            .flatten()
            .all(|&(x, _)| x <= right),
        "a line drawn past the axis"
    );
    // The stuck verdict: a vertical line at the patience window's end in
    // each panel.
    let stuck: Vec<_> = polylines(&figure.svg, STUCK_COLOR)
        .into_iter()
        .filter(|p| p.len() == 2 && p[0].0 == p[1].0 && (p[0].1 - p[1].1).abs() > 50.0)
        .collect();
    assert_eq!(stuck.len(), 3, "{stuck:?}");
    for (line, frame) in stuck.iter().zip(&figure.frames) {
        let at = frame.data_x(line[0].0);
        assert!((at - 5.5).abs() <= 2.0 * pixel(frame, line[0]).0, "{at}");
    }
    assert!(figure.svg.contains("stuck: still degraded at t = 5.5 s"));
    assert!(figure.svg.contains("patience window, 2.5 s to 5.5 s"));
    assert_legends_clear(&figure.svg, &figure.legends);
    for (b, frame) in figure.legends.iter().zip(&figure.frames) {
        assert!(b.0 > frame.px.1, "the legend stands right of the plot");
    }

    // All of it: to the drain's end.
    let figure = server_series(&stuck_picture(&spec, &run, true)).unwrap();
    assert!((figure.frames[0].x.1 - drain_end).abs() < 1e-9);
    assert!(!figure.svg.contains("the run drains until"));
    // The queue line: two vertices per window, every window.
    let queue = polylines(&figure.svg, PALETTE[0])
        .into_iter()
        .map(|p| p.len())
        .max()
        .unwrap();
    assert_eq!(queue, 2 * run.windows.len());
}

#[test]
fn a_recovery_is_marked_where_the_verdict_puts_it() {
    let (spec, mut run) = stuck_run();
    // The same picture, as if the run had recovered 1.2 s after the outage.
    run.verdict = Some(Verdict::Recovered(1_200 * NS_PER_MS));
    let figure = server_series(&stuck_picture(&spec, &run, false)).unwrap();
    let marks: Vec<_> = polylines(&figure.svg, RGBColor(0, 0, 0))
        .into_iter()
        .filter(|p| p.len() == 2 && p[0].0 == p[1].0 && (p[0].1 - p[1].1).abs() > 2.0)
        .collect();
    let frame = &figure.frames[0];
    assert!(
        marks
            .iter()
            .any(|m| (frame.data_x(m[0].0) - 3.7).abs() <= 2.0 * pixel(frame, m[0]).0),
        "no mark at 3.7 s: {marks:?}"
    );
    assert!(
        figure
            .svg
            .contains("recovered at t = 3.7 s (1.2 s after the last trigger)")
    );
}

#[test]
fn a_log_latency_axis_has_values_to_read() {
    // Latencies from 1 ms to 80 ms: under two decades, drawn on a log axis.
    let windows: Vec<Window> = (0..50u64)
        .map(|i| Window {
            arrivals: 50,
            attempts: 50,
            successes: 50,
            latency_p50_ns: Some(NS_PER_MS + Nanos::from_ticks(i * 20_000)),
            latency_p99_ns: Some(5 * NS_PER_MS + Nanos::from_ticks(i * 1_500_000)),
            ..Window::default()
        })
        .collect();
    let picture = SeriesPicture {
        title: "latency".into(),
        windows: &windows,
        window_ns: 100 * NS_PER_MS,
        triggers: Vec::new(),
        capacity_per_s: None,
        load_end_s: 5.0,
        patience_s: None,
        verdict: None,
        recoveries: (Vec::new(), 1),
        all: false,
        live: false,
    };
    let figure = server_series(&picture).unwrap();
    let frame = &figure.frames[2];
    assert!(frame.log_y, "latency spans more than a factor of 20");
    let doc = roxmltree::Document::parse(&figure.svg).unwrap();
    let labels: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("text-anchor") == Some("end"))
        .filter(|n| {
            let y: f64 = n.attribute("y").unwrap().parse().unwrap();
            let x: f64 = n.attribute("x").unwrap().parse().unwrap();
            x < f64::from(frame.px.0)
                && (f64::from(frame.py.0)..=f64::from(frame.py.1)).contains(&y)
        })
        .filter_map(|n| n.text()?.trim().replace(',', "").parse().ok())
        .collect();
    let decades = (frame.y.1 / frame.y.0).log10();
    assert!(decades < 3.0, "{:?}", frame.y);
    // 1, 2 and 5 in each decade: at least three labels a decade, less one.
    assert!(
        labels.len() as f64 >= (3.0 * decades).floor() - 1.0 && labels.len() >= 4,
        "{labels:?} over {:?}",
        frame.y
    );
    assert!(labels.iter().any(|&v| v == 2.0 || v == 5.0), "{labels:?}");
}

#[test]
fn triggers_are_labelled_by_what_they_do() {
    let label = |text: &str| {
        let triggers: Triggers = text.parse().unwrap();
        trigger_label(&triggers.0[0])
    };
    assert_eq!(label("spike:2@5s..6s"), "load spike ×2, 5s to 6s");
    assert_eq!(label("slow:3@2s..4s"), "slowdown ×3, 2s to 4s");
    assert_eq!(label("outage@2s..2.5s"), "outage, 2s to 2.5s");
    assert_eq!(
        label("fail:0.3@2s..5s"),
        "partial failure p = 0.3, 2s to 5s"
    );
    assert_eq!(
        label("user-fail:0.1@2s..4s"),
        "per-user failure p = 0.1, 2s to 4s"
    );
    assert_eq!(label("ramp:1/3@2s..8s"), "load ramp ×1 → ×3, 2s to 8s");
    assert_eq!(label("capacity:1@2s..3s"), "capacity → 1 worker, 2s to 3s");
    // The compare picture names a spike for what it is, not a failure.
    let spec = ServerSpec {
        timeout: Some(100 * NS_PER_MS),
        triggers: "spike:2@1s..1.5s".parse::<Triggers>().unwrap().0,
        duration: 2 * NS_PER_S,
        ..ServerSpec::default()
    };
    let retry = ServerRetry {
        policy: RunSpec::seed_002(PolicyKind::Full, 1).policy,
        max_attempts: Some(3),
        controls: Vec::new(),
        fleet: None,
        deadline: None,
        retry_on: herdsim::model::retry_on::RetryOn::ALL,
        hedge: None,
        hedge_on_timeout: false,
    };
    let run = simulate_server(&spec, &retry, Seeds::for_job(3, 0, 0), u64::MAX);
    let picture = StrategiesPicture {
        title: "spike".into(),
        runs: vec![StrategyRun {
            label: "full jitter".into(),
            windows: &run.windows,
            workers: spec.workers,
            rate_per_s: 500.0,
        }],
        window_ns: spec.window,
        end_s: 2.0,
        triggers: spec.triggers.iter().collect::<TriggerShades>(),
    };
    let figure = strategies_series(&picture).unwrap();
    assert!(figure.svg.contains("load spike ×2, 1s to 1.5s"));
    assert!(!figure.svg.contains("failure"));
    assert_legends_clear(&figure.svg, &figure.legends);
    // From bare windows, a neutral name.
    let bare: TriggerShades = [(1.0, 1.5)].into_iter().collect();
    let figure = strategies_series(&StrategiesPicture {
        triggers: bare,
        ..picture
    })
    .unwrap();
    assert!(figure.svg.contains("trigger window") && !figure.svg.contains("failure"));
}

#[test]
fn a_run_plot_clips_to_the_load_unless_asked_for_all() {
    let dir = workdir("plot-all");
    let p = |name: &str| dir.join(name).display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--resource",
            "server",
            "--rate",
            "500",
            "--timeout",
            "100ms",
            "--policy",
            "no-backoff",
            "--max-attempts",
            "4",
            "--trigger",
            "spike:3@1s..1.5s",
            "--patience",
            "2s",
            "-q",
        ];
        args.extend(extra);
        let out = cargo_bin_cmd!("herdsim").args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (clipped, all, series) = (p("clipped.svg"), p("all.svg"), p("series.csv"));
    run(&["--plot", &clipped, "--series", &series]);
    run(&["--plot", &all, "--plot-all"]);
    let windows = fs::read_to_string(&series).unwrap().lines().count() - 1;
    let longest = |file: &str| {
        let svg = fs::read_to_string(file).unwrap();
        polylines(&svg, PALETTE[0])
            .into_iter()
            .map(|p| p.len())
            .max()
            .unwrap()
    };
    // The load lasts 10 s (the default's least; the spike's end and 2 s of
    // patience come sooner): 11 s of 100 ms windows shown, of a run whose
    // backlog drains for longer.
    assert!(windows > 110, "{windows} windows");
    assert_eq!(longest(&clipped), 2 * 110);
    assert_eq!(longest(&all), 2 * windows);
    let svg = fs::read_to_string(&clipped).unwrap();
    for words in [
        "load spike ×3, 1s to 1.5s",
        "depth 1",
        "offered load ρ = 0.50",
        "no-backoff, at most 4 attempts",
    ] {
        assert!(svg.contains(words), "the picture lacks {words}");
    }
    // --plot-all needs --plot.
    let out = cargo_bin_cmd!("herdsim")
        .args(["run", "--resource", "server", "--plot-all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_curves_legend_covers_no_curve() {
    // Curves through every corner and side: the legend goes beside the plot.
    let crossing = |label: &str, points: &[(f64, f64)]| Curve {
        label: label.into(),
        points: points.iter().map(|&(x, y)| (x, y, None)).collect(),
    };
    let busy = vec![
        crossing("rising", &[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]),
        crossing("falling", &[(0.0, 2.0), (1.0, 1.0), (2.0, 0.0)]),
        crossing("top", &[(0.0, 1.9), (2.0, 1.9)]),
        crossing("bottom", &[(0.0, 0.1), (2.0, 0.1)]),
        crossing("middle", &[(0.0, 1.0), (2.0, 1.0)]),
        crossing("left", &[(0.05, 0.0), (0.05, 2.0)]),
        crossing("right", &[(1.95, 0.0), (1.95, 2.0)]),
        crossing("centre", &[(1.0, 0.0), (1.0, 2.0)]),
    ];
    let figure = curves("busy", "x", "y", &busy, false, false).unwrap();
    assert!(
        figure.legends[0].0 > figure.frames[0].px.1,
        "{:?}",
        figure.legends
    );
    assert_legends_clear(&figure.svg, &figure.legends);
    // One rising curve: inside, in a free corner.
    let quiet = vec![crossing("rising", &[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)])];
    let figure = curves("quiet", "x", "y", &quiet, false, false).unwrap();
    assert!(
        figure.legends[0].2 < figure.frames[0].px.1,
        "{:?}",
        figure.legends
    );
    assert_legends_clear(&figure.svg, &figure.legends);
}

/// Every replicate's recovery is a tick under the first panel, at the
/// last trigger's end plus its recovery time; the legend counts them.
#[test]
fn the_run_plot_draws_every_replicates_recovery_as_a_rug() {
    let (spec, run) = stuck_run();
    let end_s = spec.last_trigger_end().unwrap().ticks() as f64 / 1e9;
    let recoveries = vec![0.25, 0.5, 0.5, 1.75];
    let picture = SeriesPicture {
        recoveries: (recoveries.clone(), 7),
        ..stuck_picture(&spec, &run, false)
    };
    let figure = server_series(&picture).unwrap();
    let frame = &figure.frames[0];
    let ticks: Vec<f64> = polylines(&figure.svg, RUG_COLOR)
        .into_iter()
        .filter(|p| p.len() == 2 && p[0].0 == p[1].0 && p[0].1 != p[1].1)
        .filter(|p| p[0].0 >= f64::from(frame.px.0) && p[0].0 <= f64::from(frame.px.1))
        .map(|p| frame.data_x(p[0].0))
        .collect();
    assert_eq!(ticks.len(), recoveries.len(), "{ticks:?}");
    let px = frame.data_x(1.0) - frame.data_x(0.0);
    for (tick, after) in ticks.iter().zip(&recoveries) {
        assert!((tick - (end_s + after)).abs() <= px, "{tick} for {after}");
    }
    // The SVG escapes the apostrophe.
    assert!(
        figure
            .svg
            .contains("each replicate&apos;s recovery (4 of 7 recovered; median 0.5 s after"),
        "the legend counts the replicates: {}",
        figure
            .svg
            .lines()
            .filter(|l| l.contains("replicate"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // One replicate: no rug, and no legend line for it.
    let single = server_series(&stuck_picture(&spec, &run, false)).unwrap();
    assert!(!single.svg.contains("each replicate&apos;s recovery"));
}
