//! `herdsim assess`'s answer for people: what was assessed and how, the
//! margin and headroom tables, the failure figures, the recovery times, the
//! rare-storm table (with splitting), a verdict in plain words, and the
//! command behind every figure (numbered `[1]`, `[2]`, … in the tables).
//! Made once as an [`Answer`], then shown as text (the terminal), or as
//! Markdown inside an HTML page with the margin and headroom curves
//! (`--report`), so the two never disagree.

use std::fmt::Write as _;

use crate::base::format::{group_thousands, large_number, significant, trimmed};
use crate::base::time::{Micros, format_duration};
use crate::experiment::assess::{
    AssessMap, AssessRun, Assessment, FAILURE_LOAD_US, LENGTHS_MS, LOADS, MapPurpose,
    PARTIAL_LENGTH_US, RunPurpose, STALL_START_US, exact_under_failure, length_at, quantile,
    seconds,
};
use crate::experiment::map::{Crossing, Side};
use crate::measure::server_metrics::{ServerMetrics, Storm, wilson_interval};
use crate::model::backlog::ChosenRegions;
use crate::report::backlog::{calm_reason, storm_reason};
use crate::report::error::ReportError;
use crate::report::html::{ReportPage, report_html};
use crate::report::markdown::markdown_table;
use crate::report::svg::{Curve, Figure, proportion_curves};
use crate::report::{WorkloadSummary, aligned_text_first};
use crate::spec::undecided::{Undecided, decided_line};

/// Where a map's boundary lies, in words and numbers: the crossing and
/// the surely-below and surely-above places (already turned into what the
/// axis measures by `unit`), and how a place is shown.
struct Found {
    /// The crossing, or why there is none ("under 0.25 s", "unknown").
    at: String,
    /// Where the crossing is, as far as the decided runs tell.
    crossing: Crossing,
    /// The row's decided runs, and all its runs.
    decided: usize,
    runs: usize,
    /// The crossing's value, if it crosses.
    value: Option<f64>,
    /// The longest place surely below one half, and the shortest surely
    /// above, if any.
    below: Option<f64>,
    above: Option<f64>,
    show: fn(f64) -> String,
}

impl Found {
    /// A place as the tables show it ("-" for none).
    fn shown(&self, place: Option<f64>) -> String {
        place.map_or_else(|| "-".to_string(), self.show)
    }

    /// The row's runs as the tables count them: all of them, or the
    /// decided of all when some were left unresolved.
    fn runs_shown(&self) -> String {
        if self.decided == self.runs {
            group_thousands(self.runs as u64)
        } else {
            format!(
                "{} of {} decided",
                group_thousands(self.decided as u64),
                group_thousands(self.runs as u64)
            )
        }
    }

    /// "(decided 12 of 40 runs)" where some were left unresolved.
    fn decided_note(&self) -> String {
        if self.decided == self.runs {
            String::new()
        } else {
            format!(
                " (decided {} of {} runs)",
                group_thousands(self.decided as u64),
                group_thousands(self.runs as u64)
            )
        }
    }
}

/// Row `row`'s boundary of `map`, each place turned by `unit` and shown by
/// `show`; `first` and `last` are the coarse grid's ends, as shown.
fn found(
    map: &AssessMap,
    row: usize,
    unit: impl Fn(f64) -> f64,
    show: fn(f64) -> String,
    (first, last): (&str, &str),
) -> Found {
    let Some(b) = map.boundaries.iter().find(|b| b.y == row) else {
        return Found {
            at: "-".to_string(),
            crossing: Crossing::Unknown,
            decided: 0,
            runs: 0,
            value: None,
            below: None,
            above: None,
            show,
        };
    };
    let at = match b.crossing {
        Crossing::At(x) => show(unit(x)),
        Crossing::AtOrBefore => format!("under {first}"),
        Crossing::Beyond => format!("beyond {last}"),
        Crossing::Unknown => "unknown".to_string(),
    };
    Found {
        at,
        crossing: b.crossing,
        decided: b.runs,
        runs: b.runs + b.unresolved,
        value: b.crossing.at().map(&unit),
        below: b.below.map(&unit),
        above: b.above.map(&unit),
        show,
    }
}

/// A margin map's row as the verdict reads it: its name, whether it is
/// under the suggested budget, where it crosses, and its first cell surely
/// down (length place, stuck, decided).
type Margin = (String, bool, Found, Option<(f64, u64, u64)>);

/// A stall length, µs, in seconds for people.
fn length_s(us: f64) -> String {
    format!("{} s", trimmed(us / 1e6, 2))
}

/// The shortest stall of a margin map surely above one half: its length,
/// µs, its stuck runs and its decided runs.
fn first_down(map: &AssessMap) -> Option<(f64, u64, u64)> {
    map.curves
        .first()?
        .iter()
        .copied()
        .find(|&(_, stuck, runs)| Side::of(&Storm::of_counts(stuck, runs, 0)) == Side::Above)
}

/// The mean of `values` and its standard error.
fn mean_se(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n.max(1.0);
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// A measured mean beside its exact value: the z-score of the difference
/// (its standard error the runs' own).
fn against_exact(mean: f64, se: f64, exact: f64, decimals: usize) -> String {
    let exact_text = trimmed(exact, decimals);
    if se > 0.0 {
        format!("exact {exact_text}, z = {:+.1}", (mean - exact) / se)
    } else if (mean - exact).abs() <= 1e-9 * exact.abs().max(1.0) {
        format!("exact {exact_text}, met in every run")
    } else {
        format!(
            "exact {exact_text}; every run gave {}",
            trimmed(mean, decimals)
        )
    }
}

/// A measured success share beside its exact value `p`: the z-score of
/// `successes` of `requests` against the binomial `requests · p` (the
/// requests' outcomes are independent where the exact value holds, so
/// the binomial is their spread even when every run gave the same share).
fn share_against_exact(successes: u64, requests: u64, p: f64) -> String {
    let n = requests as f64;
    let sd = (n * p * (1.0 - p)).sqrt();
    let exact = trimmed(p, 6);
    if sd > 0.0 {
        format!(
            "exact {exact}, z = {:+.1} over {} requests",
            (successes as f64 - n * p) / sd,
            group_thousands(requests)
        )
    } else if successes as f64 == n * p {
        format!("exact {exact}, met in every run")
    } else {
        format!(
            "exact {exact}; the runs gave {}",
            trimmed(successes as f64 / n, 6)
        )
    }
}

/// The runs of `purpose`.
fn runs_of(a: &Assessment, purpose: RunPurpose) -> (usize, &AssessRun) {
    a.runs
        .iter()
        .enumerate()
        .find(|(_, r)| r.what == purpose)
        .expect("assess makes every kind of run")
}

/// Storm counts of a set of runs.
fn storm_of(runs: &[ServerMetrics]) -> Storm {
    let stuck = runs.iter().filter(|m| m.stuck()).count() as u64;
    let unresolved = runs
        .iter()
        .filter(|m| m.verdict == Some(crate::measure::verdict::Verdict::Unresolved))
        .count() as u64;
    Storm::of_counts(stuck, runs.len() as u64 - unresolved, unresolved)
}

/// A part of the answer, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Lines that belong together (the failure figures).
    Lines(Vec<String>),
    /// A table under its caption; its first column is text, the rest
    /// numbers.
    Table {
        /// What the table is, as a key (`margin`, `headroom`, `rare`).
        name: &'static str,
        caption: String,
        header: Vec<&'static str>,
        rows: Vec<Vec<String>>,
        /// Its figures as numbers (in SI units, named so), a value per
        /// row, for a program to read (`--json`); None where a row has
        /// none ("beyond 16 s").
        numbers: Vec<(&'static str, Vec<Option<f64>>)>,
    },
}

/// The whole answer, before it is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The workload in words, a line each.
    pub workload: Vec<String>,
    /// How it was assessed: seeds, master seed, stall start, rounds.
    pub method: String,
    /// The figures.
    pub parts: Vec<Part>,
    /// The figures of the lines as numbers, named, for a program to read
    /// (`--json`); None where there is none (no exact value, no recovery).
    pub figures: Vec<(&'static str, Option<f64>)>,
    /// The verdict, one paragraph.
    pub verdict: String,
    /// The command behind each `[n]`, in order.
    pub commands: Vec<String>,
}

/// The whole answer. `commands` are the reproducing commands of the maps
/// and then the runs, in the assessment's order.
pub fn answer(a: &Assessment, commands: &[String]) -> Answer {
    let s = &a.settings;
    let rho = s.base.server.peak_offered_load().unwrap_or(f64::NAN);
    let method = format!(
        "assessed with {} seeds per cell and per run from master seed {}; every stall starts at \
         {} (the verdict's baseline is the service before it), each run's patience and length \
         as its own trigger gives them; maps refined {} rounds",
        s.seeds,
        s.master_seed,
        seconds(STALL_START_US),
        s.rounds
    );
    let number = |i: usize| format!("[{}]", i + 1);
    let first_ms = LENGTHS_MS[0] as f64 * 1e3;
    let last_ms = LENGTHS_MS[LENGTHS_MS.len() - 1] as f64 * 1e3;
    let (first_len, last_len) = (length_s(first_ms), length_s(last_ms));
    let mut parts = Vec::new();

    // Margins.
    let mut rows = Vec::new();
    // Per margin map: its name, whether under the suggested budget, where
    // it crosses, and its first surely-down cell.
    let mut margins: Vec<Margin> = Vec::new();
    let mut runs_column = Vec::new();
    let (mut decided_column, mut unresolved_column) = (Vec::new(), Vec::new());
    for (i, map) in a.maps.iter().enumerate() {
        let MapPurpose::Margin { suggested, .. } = &map.purpose else {
            continue;
        };
        let f = found(map, 0, length_at, length_s, (&first_len, &last_len));
        let down = first_down(map);
        let name = margin_name(map, s.suggest.as_deref());
        rows.push(vec![
            name.clone(),
            f.at.clone(),
            f.shown(f.below),
            f.shown(f.above),
            down.map_or("-".to_string(), |(x, stuck, runs)| {
                format!("{}: {stuck} of {runs}", length_s(length_at(x)))
            }),
            f.runs_shown(),
            number(i),
        ]);
        runs_column.push(Some(map.runs as f64));
        decided_column.push(Some(f.decided as f64));
        unresolved_column.push(Some((f.runs - f.decided) as f64));
        margins.push((name, *suggested, f, down));
    }
    let seconds_of = |pick: fn(&Found) -> Option<f64>| -> Vec<Option<f64>> {
        margins
            .iter()
            .map(|m| pick(&m.2).map(|us| us / 1e6))
            .collect()
    };
    let numbers = vec![
        ("margin_s", seconds_of(|f| f.value)),
        ("surely_survived_s", seconds_of(|f| f.below)),
        ("surely_down_s", seconds_of(|f| f.above)),
        ("runs", runs_column),
        ("decided_runs", decided_column),
        ("unresolved_runs", unresolved_column),
    ];
    parts.push(Part::Table {
        name: "margin",
        caption: "margin: the longest stall survived, where the storm probability (runs stuck \
                  of those decided) crosses 50%, between the longest surely below and the \
                  shortest surely above (Wilson 95%)"
            .to_string(),
        header: vec![
            "stall",
            "margin",
            "surely survived",
            "surely down",
            "first surely down: stuck",
            "runs",
            "command",
        ],
        rows,
        numbers,
    });

    // Headroom.
    let (hi, headroom) = headroom_map(a);
    let to_rho = |place: f64| s.load_at(place);
    let (first_rho, last_rho) = (show_rho(LOADS[0]), show_rho(LOADS[LOADS.len() - 1]));
    let mut headrooms = Vec::new();
    let rows: Vec<Vec<String>> = s
        .blips
        .iter()
        .enumerate()
        .map(|(row, &blip)| {
            let f = found(headroom, row, to_rho, show_rho, (&first_rho, &last_rho));
            let line = vec![
                blip_name(s, blip),
                f.at.clone(),
                f.shown(f.below),
                f.shown(f.above),
                if f.decided == f.runs {
                    group_thousands(headroom.runs)
                } else {
                    f.runs_shown()
                },
                number(hi),
            ];
            headrooms.push((blip, f));
            line
        })
        .collect();
    let rho_of = |pick: fn(&Found) -> Option<f64>| -> Vec<Option<f64>> {
        headrooms.iter().map(|(_, f)| pick(f)).collect()
    };
    let numbers = vec![
        ("headroom_rho", rho_of(|f| f.value)),
        ("surely_survived_rho", rho_of(|f| f.below)),
        ("surely_down_rho", rho_of(|f| f.above)),
        ("runs", vec![Some(headroom.runs as f64); headrooms.len()]),
        (
            "decided_runs",
            headrooms
                .iter()
                .map(|(_, f)| Some(f.decided as f64))
                .collect(),
        ),
        (
            "unresolved_runs",
            headrooms
                .iter()
                .map(|(_, f)| Some((f.runs - f.decided) as f64))
                .collect(),
        ),
    ];
    parts.push(Part::Table {
        name: "headroom",
        caption: format!(
            "headroom: the highest offered load at which the stall is survived (the {} scaled; \
             now ρ = {})",
            s.load_param().key,
            trimmed(rho, 3)
        ),
        header: vec![
            "stall",
            "headroom",
            "surely survived",
            "surely down",
            "runs",
            "command",
        ],
        rows,
        numbers,
    });

    // Failures.
    let (ai, amp) = runs_of(a, RunPurpose::Amplification);
    let amps: Vec<f64> = amp.runs.iter().map(ServerMetrics::amplification).collect();
    let (amp_mean, amp_se) = mean_se(&amps);
    let amp_exact = exact_under_failure(&amp.spec, 1.0).map(|(x, _)| x);
    let (pi, partial) = runs_of(a, RunPurpose::PartialDuring);
    let successes: Vec<f64> = partial
        .runs
        .iter()
        .map(ServerMetrics::success_rate)
        .collect();
    let (ok_mean, ok_se) = mean_se(&successes);
    let ok_ci = 1.96 * ok_se;
    let partial_amps: Vec<f64> = partial
        .runs
        .iter()
        .map(ServerMetrics::amplification)
        .collect();
    let (pamp_mean, pamp_se) = mean_se(&partial_amps);
    let partial_exact = exact_under_failure(&partial.spec, s.partial);
    let (qi, after) = runs_of(a, RunPurpose::PartialAfter);
    let after_storm = storm_of(&after.runs);
    let share = format!("{}%", trimmed(s.partial * 100.0, 2));
    let load = format_duration(FAILURE_LOAD_US);
    let mut lines = vec![format!(
        "in a full outage ({load} of requests, every attempt failing): {:.3} ± {:.3} attempts \
         per request at the server ({}) {}",
        amp_mean,
        1.96 * amp_se,
        amp_exact.map_or_else(
            || "no exact value: a control, deadline or hedging decides".to_string(),
            |x| against_exact(amp_mean, amp_se, x, 4)
        ),
        number(a.maps.len() + ai)
    )];
    if let Some(first) = amp.runs.first()
        && first.layers.len() > 1
    {
        let per_layer: Vec<String> = (0..first.layers.len())
            .map(|i| {
                let per_request: Vec<f64> = amp
                    .runs
                    .iter()
                    .map(|m| m.layers[i].attempts as f64 / m.requests.max(1) as f64)
                    .collect();
                let (mean, se) = mean_se(&per_request);
                format!("service {}: {:.3} ± {:.3}", i + 1, mean, 1.96 * se)
            })
            .collect();
        lines.push(format!(
            "attempts per request at each service of the chain (1 is the one users call): {}",
            per_layer.join("; ")
        ));
    }
    lines.push(format!(
        "with {share} of attempts failing ({load} of requests): success {:.5} ± {:.5} ({}), \
         {:.3} attempts per request ({}) {}",
        ok_mean,
        ok_ci,
        partial_exact.map_or_else(
            || "no exact value".to_string(),
            |(_, ok)| share_against_exact(
                partial.runs.iter().map(|m| m.successes).sum(),
                partial.runs.iter().map(|m| m.requests).sum(),
                ok
            )
        ),
        pamp_mean,
        partial_exact.map_or_else(
            || "no exact value".to_string(),
            |(x, _)| against_exact(pamp_mean, pamp_se, x, 4)
        ),
        number(a.maps.len() + pi)
    ));
    lines.push(format!(
        "after {} of it: stuck in {} of {} decided runs ({:.3}, 95% CI {:.3}–{:.3}){} {}",
        format_duration(PARTIAL_LENGTH_US),
        after_storm.stuck,
        after_storm.runs,
        after_storm.probability(),
        after_storm.low,
        after_storm.high,
        if after_storm.unresolved > 0 {
            format!(", {} unresolved", after_storm.unresolved)
        } else {
            String::new()
        },
        number(a.maps.len() + qi)
    ));

    // Recovery.
    let (ri, recovery) = runs_of(a, RunPurpose::Recovery);
    let recovery_storm = storm_of(&recovery.runs);
    let recovery_cause = Some(recovery.spec.undecided_cause());
    let times: Vec<f64> = recovery
        .runs
        .iter()
        .filter_map(|m| m.recovery_ns().map(|ns| ns.ticks() as f64 / 1e6))
        .collect();
    lines.push(format!(
        "recovery after {}: {} {}",
        blip_name(s, s.blips[0]),
        match (quantile(&times, 0.5), quantile(&times, 0.9)) {
            (Some(p50), Some(p90)) => format!(
                "median {} ms, p90 {} ms over the {} of {} runs that recovered (from the \
                 stall's end to the first of the healthy windows, 100 ms each)",
                trimmed(p50, 0),
                trimmed(p90, 0),
                times.len(),
                recovery.runs.len()
            ),
            _ if recovery_storm.runs == 0 => format!(
                "not known: {}",
                decided_line(0, recovery.runs.len() as u64, recovery_cause)
            ),
            _ => format!(
                "none of the {} runs recovered: the stall is beyond this service's margin; \
                 give a shorter --blip",
                recovery.runs.len()
            ),
        },
        number(a.maps.len() + ri)
    ));
    parts.push(Part::Lines(lines));
    let figures = vec![
        ("offered_load", Some(rho)),
        ("outage_attempts_per_request", Some(amp_mean)),
        ("outage_attempts_ci95", Some(1.96 * amp_se)),
        ("outage_attempts_exact", amp_exact),
        ("partial_failing_share", Some(s.partial)),
        ("partial_success", Some(ok_mean)),
        ("partial_success_ci95", Some(ok_ci)),
        ("partial_success_exact", partial_exact.map(|(_, ok)| ok)),
        ("partial_attempts_per_request", Some(pamp_mean)),
        ("partial_attempts_ci95", Some(1.96 * pamp_se)),
        ("partial_attempts_exact", partial_exact.map(|(x, _)| x)),
        ("after_partial_stuck", Some(after_storm.stuck as f64)),
        ("after_partial_decided", Some(after_storm.runs as f64)),
        (
            "after_partial_unresolved",
            Some(after_storm.unresolved as f64),
        ),
        ("after_partial_wilson_low", Some(after_storm.low)),
        ("after_partial_wilson_high", Some(after_storm.high)),
        ("recovery_blip_s", Some(s.blips[0].ticks() as f64 / 1e6)),
        ("recovery_median_ms", quantile(&times, 0.5)),
        ("recovery_p90_ms", quantile(&times, 0.9)),
        ("recovered_runs", Some(times.len() as f64)),
        ("recovery_runs", Some(recovery.runs.len() as f64)),
        ("recovery_decided_runs", Some(recovery_storm.runs as f64)),
    ];

    // Rare storms, by splitting.
    if let Some(how) = &s.splitting {
        let first = a.maps.len() + a.runs.len();
        let rows = a
            .rare
            .iter()
            .enumerate()
            .map(|(k, storm)| {
                let e = storm
                    .estimate
                    .as_ref()
                    .expect("assess makes every estimate");
                let p = e.estimate.mean;
                vec![
                    blip_name(s, storm.blip_us),
                    significant(p),
                    match e.estimate.ci95 {
                        Some(ci) if p > 0.0 => format!("± {:.0}%", 100.0 * ci / p),
                        Some(ci) => format!("± {}", significant(ci)),
                        None => "-".to_string(),
                    },
                    e.plain_runs
                        .map_or_else(|| "-".to_string(), |n| large_number(n, 0)),
                    format!(
                        "≥ {} / ≤ {}",
                        storm.chosen.regions.high, storm.chosen.regions.low
                    ),
                    number(first + k),
                ]
            })
            .collect();
        let estimates = || {
            a.rare.iter().map(|storm| {
                storm
                    .estimate
                    .as_ref()
                    .expect("assess makes every estimate")
            })
        };
        let numbers = vec![
            (
                "blip_s",
                a.rare
                    .iter()
                    .map(|r| Some(r.blip_us.ticks() as f64 / 1e6))
                    .collect(),
            ),
            (
                "probability",
                estimates().map(|e| Some(e.estimate.mean)).collect(),
            ),
            ("ci95", estimates().map(|e| e.estimate.ci95).collect()),
            ("plain_runs", estimates().map(|e| e.plain_runs).collect()),
            (
                "high",
                a.rare
                    .iter()
                    .map(|r| Some(r.chosen.regions.high as f64))
                    .collect(),
            ),
            (
                "low",
                a.rare
                    .iter()
                    .map(|r| Some(r.chosen.regions.low as f64))
                    .collect(),
            ),
        ];
        parts.push(Part::Table {
            name: "rare",
            caption: format!(
                "rare storms: the chance a blip drives the backlog (waiting attempts + retries \
                 waiting out their delay) into the storm region before calm, by adaptive \
                 multilevel splitting ({} batches of {} paths); the backlog's question, not the \
                 verdict's stuck (a run can pass through the storm region and recover){}",
                how.batches,
                group_thousands(how.particles as u64),
                a.rare
                    .first()
                    .map_or_else(String::new, |storm| region_reasons(&storm.chosen))
            ),
            header: vec![
                "blip",
                "storm before calm",
                "95%",
                "plain runs for as narrow",
                "backlog storm / calm",
                "command",
            ],
            rows,
            numbers,
        });
    }

    // The verdict.
    let mut verdict = format!("At ρ = {} this service", trimmed(rho, 3));
    let clauses: Vec<String> = margins
        .iter()
        .filter(|m| !m.1)
        .map(|(name, _, f, _)| match f.crossing {
            Crossing::At(_) => format!(
                "survives a stall of {name} up to about {} ({}){}",
                length_s(f.value.unwrap_or(f64::NAN)),
                match (f.below, f.above) {
                    (None, None) => "no length tried is sure either way".to_string(),
                    (None, Some(above)) => format!("surely not {}", length_s(above)),
                    (Some(below), None) => format!("surely {}", length_s(below)),
                    (Some(below), Some(above)) =>
                        format!("surely {}, surely not {}", length_s(below), length_s(above)),
                },
                f.decided_note()
            ),
            Crossing::AtOrBefore => format!(
                "does not survive even a {first_len} stall of {name}{}",
                f.decided_note()
            ),
            Crossing::Beyond => format!(
                "survives every stall of {name} tried, up to {last_len}{}",
                f.decided_note()
            ),
            Crossing::Unknown => format!(
                "has no known margin for a stall of {name}{}",
                f.decided_note()
            ),
        })
        .collect();
    verdict += &format!(" {}.", clauses.join("; "));
    if let Some((name, _, _, Some((x, stuck, runs)))) = margins.first() {
        let _ = write!(
            verdict,
            " A {} stall of {name} leaves it down in {stuck} of {runs} runs.",
            length_s(length_at(*x))
        );
    }
    if let (Some(budget), Some((_, _, f, _))) = (s.suggest.as_deref(), margins.iter().find(|m| m.1))
    {
        let kind = &s.kinds[0];
        let _ = write!(
            verdict,
            " With the retry budget {budget} its margin for {kind} would be {}.",
            match f.crossing {
                Crossing::At(_) => format!(
                    "about {}{}",
                    length_s(f.value.unwrap_or(f64::NAN)),
                    f.decided_note()
                ),
                Crossing::AtOrBefore => format!("under {first_len}"),
                Crossing::Beyond => format!("beyond {last_len}, the longest tried"),
                Crossing::Unknown => format!("not known{}", f.decided_note()),
            }
        );
    }
    if let Some((blip, f)) = headrooms.first() {
        let blip = blip_name(s, *blip);
        let note = f.decided_note();
        let _ = match f.crossing {
            Crossing::At(_) => write!(
                verdict,
                " It survives {blip} at offered loads up to about {}{note}.",
                show_rho(f.value.unwrap_or(f64::NAN))
            ),
            Crossing::AtOrBefore => {
                write!(
                    verdict,
                    " It does not survive {blip} even at {first_rho}{note}."
                )
            }
            Crossing::Beyond => write!(
                verdict,
                " It survives {blip} at every offered load tried, up to {last_rho}{note}."
            ),
            Crossing::Unknown => write!(verdict, " Its headroom for {blip} is not known{note}."),
        };
    }
    if let Some(line) = maps_decided(a) {
        let _ = write!(verdict, " Of its maps' runs, {line}.");
    }
    let _ = write!(
        verdict,
        " In a full outage each request makes {:.2} attempts at the server; with {share} of \
         attempts failing, {:.3}% of requests succeed.",
        amp_mean,
        ok_mean * 100.0
    );
    if let Some(storm) = a.rare.first()
        && let Some(e) = &storm.estimate
    {
        let _ = write!(
            verdict,
            " {} drives its backlog to {} before calm with chance {}{}.",
            capitalised(&blip_name(s, storm.blip_us)),
            storm.chosen.regions.high,
            significant(e.estimate.mean),
            e.estimate
                .ci95
                .map_or_else(String::new, |ci| format!(" ± {}", significant(ci)))
        );
    }
    Answer {
        workload: WorkloadSummary::lines(&s.base),
        method,
        parts,
        figures,
        verdict,
        commands: commands.to_vec(),
    }
}

/// How many of the maps' runs were decided and what would decide the
/// rest, if some were left unresolved.
pub fn maps_decided(a: &Assessment) -> Option<String> {
    let runs: u64 = a.maps.iter().map(|m| m.runs).sum();
    let decided: u64 = a.maps.iter().map(|m| m.decided).sum();
    (decided < runs).then(|| {
        decided_line(
            decided,
            runs,
            Undecided::merged(a.maps.iter().filter_map(|m| m.undecided)),
        )
    })
}

/// The warning `herdsim assess` gives when some of its maps' runs were
/// left unresolved: how many were decided, and which figures are not
/// known.
pub fn undecided_warning(a: &Assessment) -> Option<String> {
    let line = maps_decided(a)?;
    let unknown: Vec<String> = a
        .maps
        .iter()
        .flat_map(|m| {
            m.boundaries
                .iter()
                .filter(|b| b.crossing == Crossing::Unknown)
                .map(|b| match m.purpose {
                    MapPurpose::Headroom => {
                        format!("the headroom for {}", m.settings.y.values[b.y])
                    }
                    _ => format!("the {}", m.purpose.title()),
                })
        })
        .collect();
    Some(if unknown.is_empty() {
        format!("{line}; every margin and headroom is known from the decided runs")
    } else {
        format!("{line}; not known: {}", unknown.join(", "))
    })
}

/// `text` with its first letter a capital.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// ρ for people.
fn show_rho(r: f64) -> String {
    format!("ρ = {}", trimmed(r, 3))
}

/// A margin map's stall, as its row and curve name it.
fn margin_name(map: &AssessMap, budget: Option<&str>) -> String {
    match &map.purpose {
        MapPurpose::Margin {
            kind,
            suggested: true,
        } => format!("{kind}, budget {}", budget.unwrap_or_default()),
        MapPurpose::Margin { kind, .. } => kind.clone(),
        MapPurpose::Headroom => "headroom".to_string(),
    }
}

/// A blip of the first stall kind, in words ("0.5 s of outage").
fn blip_name(s: &crate::experiment::assess::AssessSettings, blip: Micros) -> String {
    format!("{} of {}", length_s(blip.ticks() as f64), s.kinds[0])
}

/// The headroom map and its place among the maps.
fn headroom_map(a: &Assessment) -> (usize, &AssessMap) {
    a.maps
        .iter()
        .enumerate()
        .find(|(_, m)| m.purpose == MapPurpose::Headroom)
        .expect("assess makes a headroom map")
}

/// The answer as text, for a terminal.
pub fn assessment_text(a: &Assessment, commands: &[String]) -> String {
    let answer = answer(a, commands);
    let mut out = String::new();
    for line in &answer.workload {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{}", answer.method);
    for part in &answer.parts {
        out.push('\n');
        match part {
            Part::Lines(lines) => {
                for line in lines {
                    let _ = writeln!(out, "{line}");
                }
            }
            Part::Table {
                caption,
                header,
                rows,
                ..
            } => {
                let _ = write!(out, "{caption}\n{}", aligned_text_first(header, rows, 1));
            }
        }
    }
    let _ = writeln!(out, "\nverdict: {}", answer.verdict);
    out.push_str("\nreproduce each figure:\n");
    for (i, command) in answer.commands.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {command}", i + 1);
    }
    out
}

/// The figures, verdict and commands as Markdown (the HTML page's body;
/// the workload is the page's own list).
fn answer_markdown(answer: &Answer) -> String {
    let mut out = format!("{}\n\n", answer.method);
    for part in &answer.parts {
        match part {
            Part::Lines(lines) => {
                for line in lines {
                    let _ = writeln!(out, "- {line}");
                }
                out.push('\n');
            }
            Part::Table {
                caption,
                header,
                rows,
                ..
            } => {
                let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
                let _ = write!(out, "{caption}\n\n{}\n", markdown_table(&header, rows));
            }
        }
    }
    let _ = write!(
        out,
        "**Verdict.** {}\n\nReproduce each figure:\n\n",
        answer.verdict
    );
    for (i, command) in answer.commands.iter().enumerate() {
        let _ = writeln!(out, "- [{}] `{command}`", i + 1);
    }
    out
}

/// The margin curves' axis.
pub const LENGTH_AXIS: &str = "stall length, s";
/// The headroom curves' axis.
pub const LOAD_AXIS: &str = "offered load ρ";

/// One row of a map as a curve: its storm counts along what the axis
/// measures.
#[derive(Debug, Clone, PartialEq)]
pub struct StormCurve {
    /// `margin` (against stall length, s) or `headroom` (against ρ).
    pub figure: &'static str,
    /// What a cell's place measures: [`LENGTH_AXIS`] or [`LOAD_AXIS`].
    pub axis: &'static str,
    /// The stall kind (margin) or the blip (headroom), as the tables name it.
    pub label: String,
    /// Each cell's place on the axis, its stuck runs and its decided runs.
    pub cells: Vec<(f64, u64, u64)>,
}

/// Every map row's storm curve: each margin map's against the stall's
/// length in seconds, then the headroom map's rows (one per blip) against
/// the offered load ρ.
pub fn storm_curves(a: &Assessment) -> Vec<StormCurve> {
    let s = &a.settings;
    let margins = a
        .maps
        .iter()
        .filter(|m| matches!(m.purpose, MapPurpose::Margin { .. }))
        .filter_map(|m| {
            let cells = m.curves.first()?;
            Some(StormCurve {
                figure: "margin",
                axis: LENGTH_AXIS,
                label: margin_name(m, s.suggest.as_deref()),
                cells: cells
                    .iter()
                    .map(|&(x, stuck, runs)| (length_at(x) / 1e6, stuck, runs))
                    .collect(),
            })
        });
    let (_, headroom) = headroom_map(a);
    let blips = s
        .blips
        .iter()
        .zip(&headroom.curves)
        .map(|(&blip, cells)| StormCurve {
            figure: "headroom",
            axis: LOAD_AXIS,
            label: blip_name(s, blip),
            cells: cells
                .iter()
                .map(|&(x, stuck, runs)| (s.load_at(x), stuck, runs))
                .collect(),
        });
    margins.chain(blips).collect()
}

/// The curves of `figure` drawn: each cell with a decided run a point, its
/// Wilson 95% interval the band.
fn drawn(curves: &[StormCurve], figure: &str) -> Vec<Curve> {
    curves
        .iter()
        .filter(|c| c.figure == figure)
        .map(|c| Curve {
            label: c.label.clone(),
            points: c
                .cells
                .iter()
                .filter(|&&(_, _, runs)| runs > 0)
                .map(|&(x, stuck, runs)| {
                    (
                        x,
                        stuck as f64 / runs as f64,
                        Some(wilson_interval(stuck, runs)),
                    )
                })
                .collect(),
        })
        .filter(|c| !c.points.is_empty())
        .collect()
}

/// The margin curve (storm probability against stall length, one curve
/// per stall kind) and the headroom curve (against ρ, one per blip), with
/// their captions.
pub fn assessment_figures(a: &Assessment) -> Result<Vec<(String, Figure)>, ReportError> {
    let curves = storm_curves(a);
    let margin = proportion_curves(
        "Storm probability against stall length",
        LENGTH_AXIS,
        "storm probability (stuck of decided runs)",
        &drawn(&curves, "margin"),
        true,
    )?;
    let load = proportion_curves(
        "Storm probability against offered load",
        LOAD_AXIS,
        "storm probability (stuck of decided runs)",
        &drawn(&curves, "headroom"),
        false,
    )?;
    Ok(vec![
        (
            "The margin curve: each stall kind's storm probability by its length, the band its \
             Wilson 95% interval; the margin is where it crosses 0.5"
                .to_string(),
            margin,
        ),
        (
            "The headroom curve: each blip's storm probability by the offered load, the band \
             its Wilson 95% interval"
                .to_string(),
            load,
        ),
    ])
}

/// The answer as one self-contained HTML page: the workload, the tables,
/// the verdict, the curves and every command. `title` names the service,
/// `command` the assess command that made it.
pub fn assessment_html(
    a: &Assessment,
    commands: &[String],
    title: &str,
    command: &str,
) -> Result<String, ReportError> {
    let answer = answer(a, commands);
    let figures = assessment_figures(a)?;
    let markdown = answer_markdown(&answer);
    let page = ReportPage {
        title,
        description: None,
        summary: "",
        workload: answer.workload.clone(),
        markdown: &markdown,
        services: "",
        figures: figures
            .iter()
            .map(|(caption, f)| (caption.as_str(), f.svg.as_str()))
            .collect(),
        command,
        version: env!("CARGO_PKG_VERSION"),
    };
    Ok(report_html(&page))
}

/// Why each default region of the rare storms is where it is, after the
/// table's caption ("; storm ≥ N by default: ..."); nothing for regions
/// given.
fn region_reasons(chosen: &ChosenRegions) -> String {
    let mut text = String::new();
    if let Some(why) = storm_reason(&chosen.storm) {
        let _ = write!(text, "; storm ≥ {} by default: {why}", chosen.regions.high);
    }
    if let Some(why) = calm_reason(chosen) {
        let _ = write!(text, "; calm ≤ {} by default: {why}", chosen.regions.low);
    }
    text
}
