//! `run`'s backlog section, as text and as JSON: the regions and where
//! scoring starts first (what the figures are about), then what plain runs
//! saw, then splitting's estimate with its interval and its cost.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::base::format::{
    counted, format_number, group_thousands, large_number, readable_seconds, significant,
};
use crate::base::time::Micros;
use crate::base::time::format_duration;
use crate::experiment::backlog::{PassageSummary, SplitEstimate};
use crate::measure::stats::Summary;
use crate::model::backlog::{CALM_EXCEEDED, CalmRule, ChosenRegions, StormRule, TIMEOUTS_DEEP};
use crate::sim::server_loop::backlog_paths::PathRules;

/// What `run` found of the backlog.
#[derive(Debug, Clone, PartialEq)]
pub struct BacklogReport {
    /// The regions, and how each was chosen.
    pub chosen: ChosenRegions,
    pub rules: PathRules,
    /// The load's length and the run's horizon, µs (what bounds a path
    /// without a trigger).
    pub load_us: Micros,
    pub horizon_us: Micros,
    pub passages: PassageSummary,
    pub split: Option<SplitEstimate>,
}

impl BacklogReport {
    /// The question plain runs and splitting answer, in words.
    fn question(&self) -> String {
        if self.passages.after_trigger {
            "storm before calm after the trigger".to_string()
        } else {
            format!(
                "storm within the run (load {}, horizon {})",
                format_duration(self.load_us),
                format_duration(self.horizon_us)
            )
        }
    }
}

/// A chance, to 5 significant digits.
fn chance(p: f64) -> String {
    significant(p)
}

/// Seconds: mean ± 95% half-width, and how many runs.
fn seconds(s: &Summary) -> String {
    let time = readable_seconds;
    match (s.n, s.ci95) {
        (0, _) => "none reached it".to_string(),
        (_, Some(ci)) => format!("{} ± {} (n {})", time(s.mean), time(ci), s.n),
        (_, None) => format!("{} (n 1)", time(s.mean)),
    }
}

/// Why the storm region is where it is, in words; `None` if given.
pub fn storm_reason(rule: &StormRule) -> Option<String> {
    match *rule {
        StormRule::Given => None,
        StormRule::Timeout {
            workers,
            timeout_ns,
            timeout_is_mean,
            mean_service_ns,
        } => Some(format!(
            "{} × {} × {} {}timeout / {} mean service: at half this backlog an attempt is \
             served just as its client gives up, the tipping point a storm can still leave; at \
             this one every attempt served was abandoned a timeout ago",
            format_number(TIMEOUTS_DEEP, 0),
            counted(u64::from(workers), "worker", "workers"),
            readable_seconds(timeout_ns / 1e9),
            if timeout_is_mean { "mean " } else { "" },
            readable_seconds(mean_service_ns / 1e9),
        )),
        StormRule::QueueFull { queue_limit } => Some(format!(
            "90% of queue_limit {}, rounded up: the queue nearly full, refusing arrivals that \
             come back as retries",
            group_thousands(u64::from(queue_limit))
        )),
    }
}

/// Why the calm region is where it is, in words; `None` if given.
pub fn calm_reason(chosen: &ChosenRegions) -> Option<String> {
    let why = match chosen.calm {
        CalmRule::Given => return None,
        CalmRule::QueueTenth { queue_limit } => format!(
            "10% of queue_limit {}, rounded down",
            group_thousands(u64::from(queue_limit))
        ),
        CalmRule::SteadyState {
            workers,
            offered_load,
        } => format!(
            "the queue an M/M/{workers} service at ρ = {:.3} exceeds {}% of the time at most: \
             a level the steady state comes back to",
            offered_load,
            format_number(100.0 * CALM_EXCEEDED, 0)
        ),
        CalmRule::Empty {
            offered_load: Some(rho),
        } => format!("an empty backlog: at ρ = {rho:.3} there is no steady state to take it from"),
        CalmRule::Empty { offered_load: None } => {
            "an empty backlog: unbounded workers keep no queue to take it from".to_string()
        }
    };
    Some(if chosen.calm_held_below {
        format!("{why}, held one below the storm region")
    } else {
        why
    })
}

/// What plain runs left open at the load's end (or a bound of the run),
/// after their count: after a trigger, the runs that reached the storm and
/// were not back to calm, and those that reached neither region. Without
/// a trigger a run that reached no storm by then has its answer (no), so
/// nothing is said.
fn open_paths(p: &PassageSummary, load_us: Micros) -> String {
    if !p.after_trigger || p.cut == 0 {
        return String::new();
    }
    let neither = p.cut - p.cut_after_storm;
    let mut parts = Vec::new();
    if p.cut_after_storm > 0 {
        parts.push(format!(
            "{} reached the storm, not back to calm",
            group_thousands(p.cut_after_storm)
        ));
    }
    if neither > 0 {
        parts.push(format!(
            "{} reached neither region",
            group_thousands(neither)
        ));
    }
    format!(
        " ({} by the load's end ({}) or a bound of the run)",
        parts.join(", "),
        format_duration(load_us)
    )
}

/// The text section.
pub fn backlog_table(r: &BacklogReport) -> String {
    let mut out = String::new();
    let regions = &r.chosen.regions;
    let _ = writeln!(
        out,
        "\nBacklog (waiting attempts + retries waiting out their delay): storm ≥ {}, calm ≤ {}",
        regions.high, regions.low,
    );
    if let Some(why) = storm_reason(&r.chosen.storm) {
        let _ = writeln!(out, "  storm ≥ {} by default: {why}", regions.high);
    }
    if let Some(why) = calm_reason(&r.chosen) {
        let _ = writeln!(out, "  calm ≤ {} by default: {why}", regions.low);
    }
    let p = &r.passages;
    let scored = if p.after_trigger {
        format!(
            "  judged from the trigger's end ({}), where a path ends at calm{}",
            format_duration(r.rules.from.whole_us()),
            if r.split.is_some() {
                format!(
                    "; splitting scores from its start ({})",
                    format_duration(r.rules.scored_from.whole_us())
                )
            } else {
                String::new()
            }
        )
    } else {
        "  judged from the start (an empty service, no trigger); a path ends at the storm or \
         the run's end"
            .to_string()
    };
    let _ = writeln!(out, "{scored}");
    let _ = writeln!(
        out,
        "  plain runs                           {}{}",
        group_thousands(p.runs),
        open_paths(p, r.load_us)
    );
    let share = if p.runs > 0 {
        p.storm as f64 / p.runs as f64
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "  {:<36} {} of {} = {} [{}, {}] (Wilson 95%)",
        r.question(),
        group_thousands(p.storm),
        group_thousands(p.runs),
        chance(share),
        chance(p.storm_interval.0),
        chance(p.storm_interval.1),
    );
    let from = if p.after_trigger {
        "the trigger's end"
    } else {
        "the start"
    };
    let _ = writeln!(
        out,
        "  {:<36} {}",
        format!("{from} → storm"),
        seconds(&p.to_storm)
    );
    if p.after_trigger {
        let _ = writeln!(
            out,
            "  {:<36} {}",
            format!("{from} → calm"),
            seconds(&p.to_calm)
        );
    }
    if let Some(s) = &r.split {
        let e = &s.estimate;
        let _ = writeln!(
            out,
            "Splitting (adaptive multilevel, score = backlog): {} × {}",
            counted(s.particles as u64, "path", "paths"),
            counted(e.n as u64, "batch", "batches"),
        );
        let interval = match e.ci95 {
            Some(ci) if e.mean > 0.0 => format!(
                " ± {} (95%, ±{}%)",
                chance(ci),
                format_number(100.0 * ci / e.mean, 1)
            ),
            Some(ci) => format!(" ± {}", chance(ci)),
            None => " (one batch: no interval)".to_string(),
        };
        let _ = writeln!(out, "  {:<36} {}{interval}", r.question(), chance(e.mean));
        let _ = writeln!(
            out,
            "  paths run                            {} ({} first, {} copies), {}",
            group_thousands(s.paths),
            group_thousands((s.particles * e.n) as u64),
            group_thousands(s.paths - (s.particles * e.n) as u64),
            counted(s.events, "event", "events"),
        );
        if let (Some(n), Some(gain)) = (s.plain_runs, s.gain) {
            let _ = writeln!(
                out,
                "  plain runs for as narrow an interval {} ({}× splitting's events, each run from \
                 the start)",
                large_number(n, 0),
                large_number(gain, 1)
            );
        }
        if s.cut > 0 {
            let _ = writeln!(
                out,
                "  note: {} neither region by the load's end or a bound of the run, counted \
                 as no storm",
                counted(s.cut, "path reached", "paths reached")
            );
        }
    }
    out
}

/// The JSON object (times in seconds).
pub fn backlog_json(r: &BacklogReport) -> Value {
    let summary = |s: &Summary| {
        json!({
            "n": s.n,
            "mean_s": (s.n > 0).then_some(s.mean),
            "ci95_s": s.ci95,
        })
    };
    let p = &r.passages;
    let mut value = json!({
        "storm_backlog_at_least": r.chosen.regions.high,
        "storm_default": r.chosen.storm != StormRule::Given,
        "storm_reason": storm_reason(&r.chosen.storm),
        "calm_backlog_at_most": r.chosen.regions.low,
        "calm_default": r.chosen.calm != CalmRule::Given,
        "calm_reason": calm_reason(&r.chosen),
        "judged_from_s": r.rules.from.ticks() as f64 / 1e9,
        "scored_from_s": r.rules.scored_from.ticks() as f64 / 1e9,
        "after_trigger": p.after_trigger,
        "question": r.question(),
        "plain": {
            "runs": p.runs,
            "cut": p.cut,
            "cut_after_storm": p.cut_after_storm,
            "storm": p.storm,
            "wilson_low": p.storm_interval.0,
            "wilson_high": p.storm_interval.1,
            "to_storm": summary(&p.to_storm),
            "to_calm": p.after_trigger.then(|| summary(&p.to_calm)),
        },
    });
    if let Some(s) = &r.split {
        value["splitting"] = json!({
            "paths_per_batch": s.particles,
            "batches": s.estimate.n,
            "probability": s.estimate.mean,
            "ci95": s.estimate.ci95,
            "batch_estimates": s.batches.iter().map(|b| b.estimate).collect::<Vec<_>>(),
            "paths": s.paths,
            "events": s.events,
            "cut": s.cut,
            "first_paths_at_storm": s.batches.iter().map(|b| u64::from(b.first_reached)).sum::<u64>(),
            "extinct_batches": s.batches.iter().filter(|b| b.extinct).count(),
            "plain_runs_for_same_interval": s.plain_runs,
            "gain_in_events": s.gain,
        });
    }
    value
}
