//! `herdsim metrics`: every metric herdsim reports, what it is and how it
//! is computed, and the server model's verdict rule, from the same
//! definitions the runs use.

use std::fmt::Write;

use crate::measure::layer_metrics::LayerMetric;
use crate::measure::metrics::Metric;
use crate::measure::server_metrics::{MIN_ENDED_FOR_A_RATE, ServerMetric};
use crate::spec::server_load::{PATIENCE_CYCLES, PATIENCE_DRAINS};

/// Rows `name  description`, names padded to the widest, descriptions
/// wrapped under themselves.
fn rows<'a>(out: &mut String, entries: impl Iterator<Item = (&'a str, &'a str)>) {
    let entries: Vec<_> = entries.collect();
    let width = entries.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, description) in entries {
        let wrapped =
            super::table::wrapped(description, "", 76usize.saturating_sub(width + 4).max(30));
        let mut lines = wrapped.lines();
        let _ = writeln!(out, "  {name:<width$}  {}", lines.next().unwrap_or(""));
        for line in lines {
            let _ = writeln!(out, "  {:<width$}  {line}", "");
        }
    }
}

/// The whole listing.
pub fn metrics_table() -> String {
    let mut out = String::from(
        "The herd models (slot, outage, occ), each run; times in ms from each client's \
         first call:\n\n",
    );
    rows(
        &mut out,
        Metric::ALL.iter().map(|m| (m.name(), m.description())),
    );
    out.push_str("\nThe server model, each run (`run --resource server`):\n\n");
    rows(
        &mut out,
        ServerMetric::ALL
            .iter()
            .map(|m| (m.name(), m.description())),
    );
    out.push_str(
        "\nEach service of a call chain (--depth 2 or more), service 1 the one users call:\n\n",
    );
    rows(
        &mut out,
        LayerMetric::ALL.iter().map(|m| (m.name(), m.description())),
    );
    let _ = write!(
        out,
        "\nThe verdict of a server run with triggers (recovery_ms, draining, stuck, \
         unresolved):\n\n\
         {}\n\nOver replicates, runs: mean, 95% CI (Student t), min and max over the runs \
         that have the metric; the storm probability is the share of decided runs (stuck, \
         draining or recovered) that ended stuck, with its Wilson 95% interval, and the unresolved \
         are counted beside it. A rate over fewer than {MIN_ENDED_FOR_A_RATE} requests is \
         left empty (ended_during_trigger says how many it would be over).\n",
        super::table::wrapped(&verdict_rule_text(), "", 78).trim_end()
    );
    out
}

/// The verdict rule in prose.
pub fn verdict_rule_text() -> String {
    format!(
        "The baseline is what the windows wholly before the first trigger saw: their \
         success rate, successes per window, backlog, and the mean and spread of a \
         success's latency. The patience window runs from the last trigger's end E for --patience \
         (default: the longer of {PATIENCE_CYCLES} retry cycles, the longest timeout plus \
         the longest retry delay, and {PATIENCE_DRAINS} times the time the backlog of a \
         stall as long as the triggers takes to drain at the offered load, rounded up to \
         whole seconds, from 10s to 10min). Without --duration the load runs until E plus \
         the patience window (at least 10s), so a default run always reaches a verdict. \
         In it, a window is healthy when, pooled with the next two (300 ms at the default \
         window, so that one window's burst is no relapse), the requests made after E that \
         ended in them (fresh traffic; the incident's stragglers finishing late from their backoff are left \
         out) have a success rate, goodput and mean latency no worse than the baseline's, \
         less a margin (1% of success rate; four times the baseline latency) and four standard \
         errors; goodput is judged against the block's own arrivals in an open loop (a block \
         thin in arrivals is no relapse) and against the baseline's goodput in a closed one. \
         Recovered: every window is healthy from some time in the first three \
         quarters of the patience window to its end, and a fresh request succeeded in its \
         last quarter; recovery_ms is that time less E. Draining: not so, but the backlog \
         (queue, attempts in service and retries waiting) still falls steadily over the \
         window's second half: a line through ten segment means falls at least 4 standard \
         errors below flat (backlog_trend_t) and by a fifth of its level; \
         projected_recovery_ms is when it reaches the baseline's backlog. Stuck: neither, \
         with the load on. \
         Unresolved: the load (or --horizon) ended before the patience window did. Nothing \
         after the patience window is read, so the verdict and recovery_ms are the same \
         for any load that lasts at least until its end."
    )
}
