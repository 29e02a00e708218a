//! `herdsim run --resource server --series FILE.csv`: each run's time
//! series, one row per replicate and window, as tidy CSV.

use crate::base::format::csv_number;
use crate::base::time::Nanos;
use crate::measure::server_metrics::ServerMetrics;
use crate::measure::verdict::{Baseline, Goodput};
use crate::report::csv::line;

/// The columns of a series file.
pub const SERIES_HEADER: [&str; 17] = [
    "replicate",
    "window_start_ms",
    "arrivals",
    "attempts",
    "successes",
    "gave_up",
    "timeouts",
    "rejected",
    "success_rate",
    "queue",
    "busy_workers",
    "retries_waiting",
    "backlog",
    "latency_p50_ms",
    "latency_p99_ms",
    "latency_mean_ms",
    "healthy",
];

/// Every run's windows in replicate then time order (`success_rate` empty in
/// a window where no request ended, the latencies where none succeeded;
/// queue, busy workers and retries waiting as each window ends, and their
/// sum, the backlog the verdict's drain test reads; latencies are of the requests
/// that succeeded in the window, end to end, exact nearest-rank quantiles).
/// With a trigger starting at `first_trigger`, `healthy` says whether each
/// window, pooled with the next two as the verdict pools them, passes its
/// health test against the windows before the trigger
/// ([`Baseline::block_healthy`]); empty without a
/// trigger and in the last two windows.
/// `goodput` says how the health test reads goodput (as the run's verdict
/// did).
pub fn series_csv(
    runs: &[ServerMetrics],
    window_ns: Nanos,
    first_trigger: Option<Nanos>,
    goodput: Goodput,
) -> String {
    let mut text = series_header();
    for (replicate, run) in runs.iter().enumerate() {
        text += &series_rows(replicate as u32, run, window_ns, first_trigger, goodput);
    }
    text
}

/// The series file's header line.
pub fn series_header() -> String {
    line(&SERIES_HEADER)
}

/// One run's rows of [`series_csv`], as replicate `replicate`: a file of
/// many replicates is written a run at a time, none held.
pub fn series_rows(
    replicate: u32,
    run: &ServerMetrics,
    window_ns: Nanos,
    first_trigger: Option<Nanos>,
    goodput: Goodput,
) -> String {
    let mut text = String::new();
    let baseline = first_trigger.map(|t| Baseline::before(&run.windows, window_ns, t, goodput));
    for (i, w) in run.windows.iter().enumerate() {
        let healthy = baseline.and_then(|b| b.block_healthy(&run.windows, i));
        let start_ms = (i as u64 * window_ns).ticks() as f64 / 1e6;
        text += &line(&[
            replicate.to_string(),
            csv_number(start_ms),
            w.arrivals.to_string(),
            w.attempts.to_string(),
            w.successes.to_string(),
            w.gave_up.to_string(),
            w.timeouts.to_string(),
            w.rejected.to_string(),
            w.success_rate().map_or_else(String::new, csv_number),
            w.queue.to_string(),
            w.busy.to_string(),
            w.retries_waiting.to_string(),
            w.backlog().to_string(),
            ms(w.latency_p50_ns),
            ms(w.latency_p99_ns),
            w.latency_mean_ms().map_or_else(String::new, csv_number),
            healthy.map_or_else(String::new, |h| u8::from(h).to_string()),
        ]);
    }
    text
}

/// Milliseconds, or empty.
fn ms(ns: Option<Nanos>) -> String {
    ns.map_or_else(String::new, |ns| csv_number(ns.ticks() as f64 / 1e6))
}
