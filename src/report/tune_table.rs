//! `herdsim tune`'s answer for people: what was searched, the Pareto front
//! as a table, and the recommendation with the commands that reproduce it.

use crate::base::format::{group_thousands, trimmed};
use crate::base::time::format_duration;
use crate::experiment::assess::FAILURE_LOAD_US;
use crate::experiment::tune::{Front, Measure, SettingFigures, TuneSettings};
use crate::report::aligned_text_first;
use crate::spec::undecided::{Undecided, decided_line};

/// A mean and its 95% half-width: `1.083 ± 0.004`.
fn pm(v: (f64, f64), decimals: usize) -> String {
    format!("{:.decimals$} ± {:.decimals$}", v.0, v.1)
}

/// One setting in a sentence.
fn sentence(f: &SettingFigures, settings: &TuneSettings) -> String {
    format!(
        "{}: {} attempts per request in a full outage, success {} with {}% of attempts \
         failing, {} of {} {}runs stuck after {}{}",
        f.rule,
        pm(f.amplification, 3),
        pm(f.success, 4),
        trimmed(settings.partial * 100.0, 2),
        f.storm.stuck,
        f.storm.runs,
        if f.storm.unresolved > 0 {
            "decided "
        } else {
            ""
        },
        settings.stall,
        if f.storm.unresolved > 0 {
            format!(" ({} unresolved)", f.storm.unresolved)
        } else {
            String::new()
        }
    )
}

/// How many of the stall's runs were decided and what would decide the
/// rest, if some were left unresolved.
fn stall_decided(settings: &TuneSettings, figures: &[SettingFigures]) -> Option<String> {
    let unresolved: u64 = figures.iter().map(|f| f.storm.unresolved).sum();
    if unresolved == 0 {
        return None;
    }
    let decided: u64 = figures.iter().map(|f| f.storm.runs).sum();
    let specs: Vec<_> = figures
        .iter()
        .filter(|f| f.storm.unresolved > 0)
        .filter_map(|f| settings.spec(&f.rule, Measure::Stall).ok())
        .collect();
    Some(decided_line(
        decided,
        decided + unresolved,
        Undecided::of_all(&specs),
    ))
}

/// The warning `herdsim tune` gives when some stall runs were left
/// unresolved: how many were decided, and how many settings' survival is
/// not known.
pub fn tune_undecided_warning(
    settings: &TuneSettings,
    figures: &[SettingFigures],
) -> Option<String> {
    let line = stall_decided(settings, figures)?;
    let unknown = figures.iter().filter(|f| !f.decided()).count();
    Some(match unknown {
        0 => format!("the stall: {line}"),
        n if n == figures.len() => {
            format!("the stall: {line}; no setting is known to survive it: none is recommended")
        }
        n => format!(
            "the stall: {line}; whether {n} of {} settings survive it is not known: the \
             recommendation is among the others",
            figures.len()
        ),
    })
}

/// The answer: `service` says what the service is (its offered load),
/// `commands` reproduce the recommended setting's three run sets.
pub fn tune_text(
    settings: &TuneSettings,
    figures: &[SettingFigures],
    front: &Front,
    service: &str,
    commands: &[String],
) -> String {
    let varied: Vec<String> = settings
        .fields
        .iter()
        .filter(|f| f.varies())
        .map(|f| format!("{} ({}: {})", f.name, f.what, f.values.join(", ")))
        .collect();
    let control = settings.start.split(':').next().unwrap_or_default();
    // With every field fixed (a reproducing command) there is one setting
    // and nothing is searched: say which it is rather than "over" nothing.
    let what = match (varied.is_empty(), figures.first()) {
        (true, Some(only)) => format!(
            "measuring the {} {control} at {} (no field varies)",
            settings.family.key(),
            only.rule
        ),
        _ => format!(
            "tuning the {} {control} from {} over {}",
            settings.family.key(),
            settings.start,
            varied.join(" × ")
        ),
    };
    let mut out = format!(
        "{service}\n{what}\n\
         each setting: {} runs of a full outage and of {}% of attempts failing ({} of \
         requests, all inside the failure) and of the stall {}\n\
         allowed: at most {}× attempts per request in the outage, and no run of the stall \
         ends stuck\n\n",
        settings.seeds,
        trimmed(settings.partial * 100.0, 2),
        format_duration(FAILURE_LOAD_US),
        settings.stall,
        trimmed(settings.bound, 3),
    );
    let mut rows = Vec::new();
    for &i in &front.points {
        let f = &figures[i];
        let mut marks = Vec::new();
        if front.knee == Some(i) {
            marks.push("recommended");
        }
        if front.bend == Some(i) {
            marks.push("knee");
        }
        if front.best == Some(i) {
            marks.push("best within the bound");
        }
        if !f.within(settings.bound) {
            marks.push("beyond the bound");
        }
        let mark = marks.join(", ");
        let mut row = vec![f.rule.clone()];
        row.extend([
            pm(f.amplification, 3),
            pm(f.success, 4),
            format!("{} of {}", f.storm.stuck, f.storm.runs),
            mark,
        ]);
        rows.push(row);
    }
    let header = [
        "setting",
        "attempts/request (outage)",
        "success (partial failure)",
        "stall stuck",
        "",
    ];
    out.push_str(&format!(
        "Pareto front: {} of {} settings (survived the stall, and none beats them on both \
         amplification and success)\n{}\n",
        front.points.len(),
        figures.len(),
        aligned_text_first(&header, &rows, 1)
    ));
    let within = figures.iter().filter(|f| f.within(settings.bound)).count();
    let survive = figures.iter().filter(|f| f.survives()).count();
    let unknown = figures.iter().filter(|f| !f.decided()).count();
    out.push_str(&format!(
        "{within} of {} settings are within the bound, {survive} survive the stall{}; {} runs\n",
        figures.len(),
        if unknown > 0 {
            format!(", {unknown} not known (no run of the stall decided)")
        } else {
            String::new()
        },
        group_thousands(figures.iter().map(|f| 3 * u64::from(f.seeds)).sum())
    ));
    if let Some(line) = stall_decided(settings, figures) {
        out.push_str(&format!("the stall: {line}\n"));
    }
    out.push('\n');
    match (front.knee, front.best) {
        _ if unknown > 0 && unknown == figures.len() => {
            out.push_str(
                "no recommendation: no run of the stall was decided, so no setting is known to \
                 survive it\n",
            );
        }
        (Some(knee), Some(best)) => {
            let why = if front.bend == Some(knee) {
                "the knee of the front, where more amplification stops buying success".to_string()
            } else {
                match front.bend {
                    Some(bend) => format!(
                        "the most success within the bound; the front bends at {}, beyond it",
                        figures[bend].rule
                    ),
                    None => "the most success within the bound".to_string(),
                }
            };
            let among = if unknown > 0 {
                format!(
                    ", among the {} settings whose stall was decided",
                    figures.len() - unknown
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "recommended ({why}{among}):\n  {}\n",
                sentence(&figures[knee], settings)
            ));
            if best != knee {
                out.push_str(&format!(
                    "the most success within the bound:\n  {}\n",
                    sentence(&figures[best], settings)
                ));
            }
            if !commands.is_empty() {
                out.push_str("reproduce the recommended setting's runs:\n");
                for c in commands {
                    out.push_str(&format!("  {c}\n"));
                }
            }
        }
        _ => {
            let least = figures
                .iter()
                .filter(|f| f.survives())
                .map(|f| f.amplification.0)
                .fold(f64::INFINITY, f64::min);
            let known = if unknown > 0 {
                format!(
                    " of the {} whose stall was decided",
                    figures.len() - unknown
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "no setting{known} is allowed: {}; widen the search (--param) or raise --bound\n",
                if least.is_finite() {
                    format!(
                        "the least amplification of a setting that survives the stall is {least:.3}×"
                    )
                } else {
                    "none survives the stall".to_string()
                }
            ));
        }
    }
    out
}
