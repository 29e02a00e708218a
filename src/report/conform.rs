//! `herdsim conform`'s report: what the trace is and what it is held to,
//! the delay tests per retry number, the retry decisions, and one verdict
//! line; or all of it as JSON.

use std::fmt::Write as _;

use serde_json::json;

use super::format_number;
use super::table::aligned_text_first;
use crate::base::format::group_thousands;
use crate::conform::{Conformance, MIN_TESTED, Options};

/// Words for the outcomes, in [`Conformance::outcomes`]' order.
const OUTCOMES: [&str; 4] = ["success", "failure", "throttled", "timeout"];

/// The report as text: `trace` the file's name, `held` the lines saying
/// what it is held to.
pub fn conform_text(trace: &str, held: &[String], options: &Options, c: &Conformance) -> String {
    let mut out = String::new();
    let outcomes: Vec<String> = c
        .outcomes
        .iter()
        .zip(OUTCOMES)
        .filter(|(n, _)| **n > 0)
        .map(|(n, word)| format!("{} {word}", group_thousands(*n as u64)))
        .collect();
    let _ = writeln!(
        out,
        "herdsim conform {trace}: {} calls, {} attempts ({})",
        group_thousands(c.calls as u64),
        group_thousands(c.attempts as u64),
        outcomes.join(", ")
    );
    for line in held {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "gaps from each attempt's {} to the next send, less an overhead shift of {} ms \
         (estimated); timing resolution {} ms; {} resamples, seed {}",
        if c.from_outcomes {
            "outcome (done times)"
        } else {
            "send (no done times: the attempt's own duration is in the shift)"
        },
        format_number(c.shift_ms, 2),
        options.resolution_ms,
        options.resamples,
        options.seed
    );
    out.push('\n');
    let ms = |v: [f64; 3]| v.map(|x| format_number(x, 1)).join(" / ");
    let rows: Vec<Vec<String>> = c
        .delays
        .iter()
        .map(|d| {
            vec![
                d.retry.to_string(),
                group_thousands(d.gaps as u64),
                ms(d.trace_ms),
                ms(d.policy_ms),
                d.distance.map_or("-".to_string(), |x| format_number(x, 3)),
                d.p_value.map_or("-".to_string(), |p| format_number(p, 3)),
                match (d.distance, d.rejected) {
                    (None, _) => format!("untested (< {MIN_TESTED} gaps)"),
                    (Some(_), true) => "differs".to_string(),
                    (Some(_), false) => "as the policy".to_string(),
                },
            ]
        })
        .collect();
    out += &aligned_text_first(
        &[
            "retry",
            "gaps",
            "trace ms p10 / p50 / p90",
            "policy ms p10 / p50 / p90",
            "distance",
            "p",
            "",
        ],
        &rows,
        1,
    );
    out.push('\n');
    let per_call: Vec<String> = c
        .attempts_per_call
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(i, n)| format!("{} ×{}", i + 1, group_thousands(*n as u64)))
        .collect();
    let _ = writeln!(out, "attempts per call: {}", per_call.join(", "));
    let d = &c.decisions;
    let _ = writeln!(
        out,
        "retry decisions: {} retried and {} stopped as the configuration says; {} retried where \
         it stops, {} stopped where it retries; {} censored",
        group_thousands(d.retried_as_predicted),
        group_thousands(d.stopped_as_predicted),
        group_thousands(d.retried_against),
        group_thousands(d.stopped_against),
        group_thousands(d.censored)
    );
    if c.decision_tolerance > 0 {
        let _ = writeln!(
            out,
            "retries the budget allowed: the trace made {}, the configuration allows {} (±{})",
            group_thousands(d.observed_retries()),
            group_thousands(d.predicted_retries()),
            c.decision_tolerance
        );
    }
    out.push('\n');
    out += &verdict_line(options, c);
    out.push('\n');
    out
}

/// The one verdict line.
pub fn verdict_line(options: &Options, c: &Conformance) -> String {
    if !c.conforms() {
        return format!("does not conform: {}", c.failures.join("; "));
    }
    let tested = c.delays.iter().filter(|d| d.distance.is_some()).count();
    format!(
        "conforms: the delays of {tested} retry number{} as the policy's (Holm-corrected at α = \
         {}), an overhead shift of {} ms (at most {} ms), every retry decision as the \
         configuration's{}",
        if tested == 1 { "" } else { "s" },
        options.alpha,
        format_number(c.shift_ms, 2),
        format_number(options.max_shift_ms, 0),
        if c.decision_tolerance > 0 {
            " (the budget's retries within its tolerance)"
        } else {
            ""
        }
    )
}

/// The report as JSON.
pub fn conform_json(trace: &str, held: &[String], options: &Options, c: &Conformance) -> String {
    let value = json!({
        "trace": trace,
        "held_to": held,
        "conforms": c.conforms(),
        "verdict": verdict_line(options, c),
        "options": {
            "alpha": options.alpha,
            "resolution_ms": options.resolution_ms,
            "max_shift_ms": options.max_shift_ms,
            "resamples": options.resamples,
            "seed": options.seed,
        },
        "test": c,
        "observed_retries": c.decisions.observed_retries(),
        "predicted_retries": c.decisions.predicted_retries(),
    });
    let mut text = serde_json::to_string_pretty(&value).expect("a report serialises");
    text.push('\n');
    text
}
