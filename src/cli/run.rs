//! `herdsim run`: one workload over replicate seeds.

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::ProgressBar;

use super::backlog::{RegionFlags, SplitFlags, backlog_report};
use super::import::ImportFlags;
use super::output::{WholeFile, check_distinct, check_output, warn_extensions, write_svg};
use super::params::{ParamFlags, Single};
use super::progress::{events_spinner, runs_bar};
use super::sweep::{read_scenario, with_imports};
use super::{CliError, point_message, spec_error, write_stdout};
use crate::base::error::BaseError;
use crate::base::format::{group_thousands, trimmed};
use crate::base::time::{Micros, Nanos, format_duration};
use crate::experiment::replicates::{replicates_with_timeline, summarize};
use crate::experiment::scenario::Scenario;
use crate::experiment::server_runs::{CutRun, Keep, run_server_streamed, server_parts};
use crate::measure::metrics::Metric;
use crate::measure::metrics::RunMetrics;
use crate::measure::observer::Watch;
use crate::measure::server_metrics::{Cut, MAX_IN_FLIGHT, MAX_WINDOWS, WINDOW_BYTES};
use crate::measure::server_metrics::{ServerMetric, ServerMetrics};
use crate::measure::timeline::Timeline;
use crate::measure::verdict::{Goodput, Verdict};
use crate::model::ResourceKind;
use crate::model::server::{NS_PER_S, ServerSpec};
use crate::policy::PolicyKind;
use crate::report::herd_svg::{HerdPicture, herd_timeline};
use crate::report::series::{series_header, series_rows};
use crate::report::series_svg::{SeriesPicture, server_series, trigger_label};
use crate::report::{
    RunReport, ServerRunReport, run_json, run_table, server_run_json, server_run_table,
};
use crate::sim::queue::QueueKind;
use crate::spec::{self, RunSpec};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML) of one point; without one, the workload comes
    /// from the flags alone
    ///
    /// As sweep, compare, map and assess read it: its imports apply, then
    /// its keys, then the flags, which replace its values. A key with several
    /// values (a grid) is refused: sweep or compare run grids.
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    params: ParamFlags<Single>,

    #[command(flatten)]
    import: ImportFlags,

    #[command(flatten)]
    regions: RegionFlags,

    #[command(flatten)]
    split: SplitFlags,

    /// Master seed; every replicate's seed is mixed from it and its index
    /// [default: the scenario's, or 42]
    #[arg(long, value_name = "SEED", value_parser = spec::parse_master_seed, allow_hyphen_values = true, help_heading = SEEDS)]
    seed: Option<u64>,

    /// Replicates (independent seeds), run in parallel [default: the
    /// scenario's, or 1]
    #[arg(long, value_name = "R", value_parser = spec::parse_replicates, allow_hyphen_values = true, help_heading = SEEDS)]
    seeds: Option<u32>,

    /// Also draw replicate 0 over time as SVG
    ///
    /// Retries per ms against the capacity line, or on the server model
    /// stacked panels of load and goodput, queue and latency with each
    /// trigger shaded, the patience window after the last one and the
    /// verdict marked (and every replicate's recovery as a rug under the
    /// first panel), from t = 0 to the end of the load plus a tenth (see
    /// --plot-all)
    #[arg(long, value_name = "FILE.svg", allow_hyphen_values = true, help_heading = OUTPUTS)]
    plot: Option<std::path::PathBuf>,

    /// With --plot: draw the whole run, to the end of the drain [server model]
    ///
    /// A stuck run's backlog can take far longer to drain than the load
    /// lasted.
    #[arg(long, requires = "plot", help_heading = OUTPUTS)]
    plot_all: bool,

    /// Also write replicate 0's time series as CSV [server model]
    ///
    /// One row per window: arrivals, attempts, successes, gave_up, timeouts,
    /// rejected, success rate, queue, busy workers, latency p50 and p99.
    #[arg(long, value_name = "FILE.csv", allow_hyphen_values = true, help_heading = OUTPUTS)]
    series: Option<std::path::PathBuf>,

    /// With --series: every replicate's windows, not only replicate 0's
    ///
    /// The replicate column tells them apart.
    #[arg(long, requires = "series", help_heading = OUTPUTS)]
    series_all: bool,

    /// Replace the --plot or --series file if it exists
    #[arg(long, help_heading = OUTPUTS)]
    force: bool,

    /// Stop a run that reaches this many calls, and report it [default: no limit]
    ///
    /// Checked every 1,048,576 calls; a run stopped so exits with code 1.
    /// No jitter at 100,000 clients is 5·10^9 calls.
    #[arg(long, value_name = "N", value_parser = super::sweep::parse_max_events, allow_hyphen_values = true, help_heading = OUTPUTS)]
    max_events: Option<u64>,

    /// Event queue: radix, heap or auto; all give identical results
    ///
    /// radix (a monotone radix heap), heap (the reference binary heap), or
    /// auto (whichever is faster for the model: heap for occ, radix
    /// otherwise).
    #[arg(long, value_name = "QUEUE", default_value = "auto", value_parser = parse_queue, allow_hyphen_values = true, help_heading = OUTPUTS)]
    queue: QueueKind,

    /// Print the results as one JSON object instead of a table
    #[arg(long, help_heading = OUTPUTS)]
    json: bool,

    /// With --json: also every replicate's value of every metric
    ///
    /// And, on the server model, its verdict, under "runs".
    #[arg(long, requires = "json", help_heading = OUTPUTS)]
    per_run: bool,

    /// Hide the progress bar (it is hidden anyway when stderr is not a terminal)
    #[arg(long, short, help_heading = OUTPUTS)]
    quiet: bool,
}

/// The heading of the flags that choose seeds and replicates.
pub const SEEDS: &str = "Replicates and seeds";
/// The heading of the flags that choose what is written and when a run stops.
pub const OUTPUTS: &str = "Outputs and limits";

/// The metrics `run` reports, for `herdsim run --help`.
pub fn metrics_help() -> String {
    let width = Metric::ALL
        .iter()
        .map(|m| m.name().len())
        .max()
        .unwrap_or(0);
    let mut text = String::from("Metrics (times in ms, from each client's first call):\n");
    for metric in Metric::ALL {
        text += &format!("  {:<width$}  {}\n", metric.name(), metric.description());
    }
    text += "\nThe server model's metrics and its verdict (recovered, draining, stuck or \
             unresolved, judged over --patience after the last trigger): herdsim metrics.\n";
    text += "\nDurations take a unit: 250us, 100ms, 1.5s, 2m, 1h; a bare number is ms.";
    text
}

fn parse_queue(text: &str) -> Result<QueueKind, BaseError> {
    text.parse()
}

pub fn run(args: &RunArgs) -> Result<(), CliError> {
    warn_extensions(&[
        ("--plot", args.plot.as_deref(), "svg"),
        ("--series", args.series.as_deref(), "csv"),
    ]);
    let setup = args.setup()?;
    let spec = &setup.spec;
    if spec.resource == ResourceKind::Server {
        return run_server(args, &setup);
    }
    if args.series.is_some() {
        return Err(CliError::Usage(format!(
            "--series writes the server model's time series; this run is on {} (use --plot)",
            spec.resource
        )));
    }
    let backlog_flag = [
        ("--high", args.regions.high.is_some()),
        ("--low", args.regions.low.is_some()),
        ("--splitting", args.split.splitting.is_some()),
    ]
    .into_iter()
    .find(|(_, given)| *given);
    if let Some((flag, _)) = backlog_flag {
        return Err(CliError::Usage(format!(
            "{flag} follows the server model's backlog; this run is on {} (use --resource server)",
            spec.resource
        )));
    }
    if let Some(path) = &args.plot {
        check_output(path, args.force)?;
    }
    let progress = setup.progress(args.quiet);
    let on_progress = |time: Micros, calls: u64| setup.show(&progress, time, calls, "calls");
    let max_events = args.max_events.unwrap_or(u64::MAX);
    let watch = Watch {
        max_events,
        on_progress: &on_progress,
        window_latencies: false,
    };
    let on_done = || progress.inc(1);
    let (timeline, runs) = replicates_with_timeline(
        spec,
        setup.seed,
        setup.seeds,
        watch,
        on_done,
        args.queue,
        200,
    );
    progress.finish_and_clear();
    if let Some(stopped) = runs.iter().find(|m| !m.complete) {
        return Err(CliError::Limit(stopped_message(stopped, max_events)));
    }
    if let Some(path) = &args.plot {
        plot_timeline(path, args.force, spec, setup.seed, &timeline)?;
    }
    let report = RunReport {
        spec,
        master_seed: setup.seed,
        summaries: summarize(&runs),
    };
    let text = if args.json {
        run_json(&report, args.per_run.then_some(&runs[..]))
    } else {
        let end = timeline.bin_us * timeline.retries.len() as u64;
        format!(
            "{}\nretries over time, replicate 0, 0 to {}: {}\n",
            run_table(&report),
            format_duration(end),
            timeline.sparkline(64)
        )
    };
    write_stdout(&text)
}

/// `run` on the server model: replicates, the server metrics and the storm
/// probability.
fn run_server(args: &RunArgs, setup: &Setup) -> Result<(), CliError> {
    let (spec, seed, seeds) = (&setup.spec, setup.seed, setup.seeds);
    for path in [&args.plot, &args.series].into_iter().flatten() {
        check_output(path, args.force)?;
    }
    if let (Some(plot), Some(series)) = (&args.plot, &args.series) {
        check_distinct(&[("--plot", plot), ("--series", series)])?;
    }
    let progress = setup.progress(args.quiet);
    let on_progress =
        |time: Micros, ended: u64| setup.show(&progress, time, ended, "requests ended");
    let max_events = args.max_events.unwrap_or(u64::MAX);
    let watch = Watch {
        max_events,
        on_progress: &on_progress,
        // Read by the series and the plot only.
        window_latencies: args.series.is_some() || args.plot.is_some(),
    };
    // Only the runs drawn or listed are kept whole: the rest are reduced
    // to their metrics' values as they end. The series is written a run at
    // a time as the runs end, in replicate order, so that --series-all
    // holds no run's windows but the one drawn.
    let drawn = u32::from(args.series.is_some() || args.plot.is_some());
    let keep = Keep {
        whole: if args.per_run { seeds } else { drawn },
        windows: drawn,
    };
    let (server, _) = server_parts(spec);
    let mut series = match &args.series {
        Some(path) => {
            let mut file = WholeFile::begin(path, args.force)?;
            file.write(&series_header())?;
            Some(file)
        }
        None => None,
    };
    let listed = if args.series_all { seeds } else { 1 };
    let goodput = Goodput::of(&server.load);
    let done = run_server_streamed(
        spec,
        seed,
        0,
        seeds,
        &watch,
        args.queue,
        || progress.inc(1),
        keep,
        |replicate, run| match series.as_mut() {
            Some(file) if replicate < listed => file.write(&series_rows(
                replicate,
                run,
                server.window,
                server.first_trigger_start(),
                goodput,
            )),
            _ => Ok(()),
        },
    );
    progress.finish_and_clear();
    let done = done?;
    progress.finish_and_clear();
    if let Some((stopped, ended, requests)) = done.event_limit {
        return Err(CliError::Limit(format!(
            "replicate {stopped} reached --max-events {} (events and thinning's proposals) with \
             requests still in flight ({} of {} requests ended); raise it to let the run drain",
            group_thousands(max_events),
            group_thousands(ended),
            group_thousands(requests),
        )));
    }
    if let Some(cut) = &done.cut {
        return Err(CliError::Limit(cut_message(cut, spec)));
    }
    let cut = done.incomplete;
    if cut > 0 {
        // The horizon is the workload's own end: say so, and report.
        let (what, were) = if done.replicates == 1 {
            ("the run was".to_string(), "its figures count")
        } else {
            (
                format!("{cut} of {} replicates were", done.replicates),
                "their figures count",
            )
        };
        let horizon = match spec.server.horizon_us {
            Some(_) => "the horizon".to_string(),
            None => format!(
                "the default horizon ({}: the load's end plus {} patience windows; --horizon none \
                 runs to the end, which a service stuck with unlimited retries never reaches)",
                crate::base::time::format_duration(spec.horizon_us().unwrap_or(Micros::ZERO)),
                crate::spec::server_load::DRAIN_PATIENCES
            ),
        };
        super::note(&format!(
            "{what} cut at {horizon} with requests still in flight; {were} only what happened \
             before it"
        ));
    }
    let backlog_progress = if args.split.splitting.is_some() {
        runs_bar(u64::from(seeds + args.split.batches), args.quiet)
    } else {
        runs_bar(u64::from(seeds), args.quiet)
    };
    let backlog = backlog_report(
        &args.regions,
        &args.split,
        spec,
        (seed, seeds),
        max_events,
        &|| backlog_progress.inc(1),
    )?;
    backlog_progress.finish_and_clear();
    let runs = &done.kept;
    if let Some(file) = series {
        file.finish()?;
    }
    if let Some(path) = &args.plot {
        let plot = ServerPlot {
            path,
            force: args.force,
            all: args.plot_all,
            master_seed: seed,
            live: false,
        };
        let recoveries = done
            .values(ServerMetric::RecoveryMs)
            .iter()
            .map(|ms| ms / 1e3)
            .collect();
        plot_server_series(
            &plot,
            spec,
            &server,
            &runs[0],
            (recoveries, done.replicates),
        )?;
    }
    let report = ServerRunReport {
        spec,
        master_seed: seed,
        window_us: server.window.whole_us(),
        summaries: done.summaries(),
        layers: done.layer_summaries(),
        backlog,
    };
    let text = if args.json {
        server_run_json(&report, args.per_run.then_some(&runs[..]))
    } else {
        server_run_table(&report)
    };
    write_stdout(&text)
}

/// What `run` runs: the workload, checked, and its seeds.
struct Setup {
    spec: RunSpec,
    /// The master seed.
    seed: u64,
    /// The replicates.
    seeds: u32,
}

impl Setup {
    /// One run: a spinner with simulated time and what is done (calls, or
    /// requests ended), so a long run never looks hung. Several: a bar of
    /// runs done.
    fn progress(&self, quiet: bool) -> ProgressBar {
        if self.seeds == 1 {
            events_spinner(quiet)
        } else {
            runs_bar(u64::from(self.seeds), quiet)
        }
    }

    /// Shows a single run's simulated time and `count` `what` on `progress`.
    fn show(&self, progress: &ProgressBar, time: Micros, count: u64, what: &str) {
        if self.seeds == 1 {
            progress.set_message(format!(
                "simulated {}, {} {what}",
                format_duration(time - time % Micros::from_ms(1)),
                group_thousands(count)
            ));
        }
    }
}

impl RunArgs {
    /// The workload the scenario file (if any) and the flags describe, one
    /// point, checked, with its seeds: the file's imports, then its keys,
    /// then the flags, as the grid commands apply them.
    fn setup(&self) -> Result<Setup, CliError> {
        let scenario = match &self.scenario {
            Some(path) => {
                let outputs = [("--plot", &self.plot), ("--series", &self.series)];
                for (flag, output) in outputs {
                    if let Some(output) = output {
                        check_distinct(&[
                            ("the scenario", path.as_path()),
                            (flag, output.as_path()),
                        ])?;
                    }
                }
                read_scenario(path)?
            }
            None => Scenario::default(),
        };
        let mut scenario = with_imports(scenario, &self.import)?;
        self.params.apply_to(&mut scenario.grid);
        one_point(&scenario)?;
        let spec = scenario.grid.point(0);
        spec.validate().map_err(|e| match self.scenario {
            Some(_) => CliError::Usage(point_message(&scenario, 0, &e)),
            None => spec_error(e),
        })?;
        for (key, why) in spec.unused(&self.params.keys()) {
            super::warn(&format!("--{} has no effect: {why}", key.replace('_', "-")));
        }
        Ok(Setup {
            spec,
            seed: self.seed.unwrap_or(scenario.master_seed),
            seeds: self.seeds.unwrap_or(scenario.replicates),
        })
    }
}

/// Refuses a scenario of more than one point (the flags applied), naming
/// the first key that has several values, where the file gives it.
pub(super) fn one_point(scenario: &Scenario) -> Result<(), CliError> {
    let grid = &scenario.grid;
    if grid.checked_len() == Some(1) {
        return Ok(());
    }
    let grids = "run takes one point: give it one value, or run the grid with herdsim sweep or \
                 herdsim compare";
    if grid.variants() > 1 {
        return Err(CliError::Usage(format!(
            "{}: the scenario has {} [[variant]] tables: {grids}",
            scenario.file(),
            grid.variants()
        )));
    }
    let several = grid
        .varying()
        .into_iter()
        .find(|p| grid.values(p.key).is_some_and(|v| v.len() != 1));
    let Some(param) = several else {
        return Err(CliError::Usage(format!(
            "the scenario has {} points ({}): {grids}",
            grid.checked_len()
                .map_or("too many".to_string(), |n| n.to_string()),
            grid.shape()
        )));
    };
    let values = grid.values(param.key).unwrap_or_default();
    let place = scenario
        .origin(param.key, 0)
        .map_or_else(|| format!("key '{}'", param.key), |o| o.to_string());
    Err(CliError::Usage(format!(
        "{place}: {} values ({}): {grids} (or --{} V)",
        values.len(),
        values.join(", "),
        param.flag()
    )))
}

/// Why a bound cut a server run, in one line naming the flags that made it
/// so long or so large and the figure.
fn cut_message(cut: &CutRun, spec: &RunSpec) -> String {
    let when = if cut.end_ns >= 86_400 * NS_PER_S {
        format!(
            "{:.1} days",
            cut.end_ns.ticks() as f64 / (86_400 * NS_PER_S).ticks() as f64
        )
    } else {
        format_duration(cut.end_ns.whole_us())
    };
    let at = format!(
        "replicate {} stopped at simulated {when} ({} of {} requests ended)",
        cut.replicate,
        group_thousands(cut.ended),
        group_thousands(cut.requests)
    );
    let attempts = spec
        .max_attempts
        .map_or("unlimited".to_string(), group_thousands_u32);
    let server = &spec.server;
    let timeout = server.timeout_us.map_or(String::new(), |t| {
        format!(", --timeout {}", format_duration(t))
    });
    match cut.cut {
        Cut::ClockEnd => format!(
            "{at}: its next event lay past the end of the simulated clock, 292 years (2^63 ns): \
             the retry delays (--policy {}, --cap {}, --max-attempts {attempts}), --service {}\
             {timeout} add up past it; give --horizon to cut it sooner",
            spec.policy.kind,
            format_duration(spec.policy.cap_us),
            server.service,
        ),
        Cut::Windows { at_ns } => format!(
            "{at}: its next event, at simulated {:.1} days, lies past {} windows of --window {} \
             ({WINDOW_BYTES} bytes each in memory), the most one run's time series keeps; \
             widen --window or give --horizon",
            at_ns.ticks() as f64 / 86_400e9,
            group_thousands(MAX_WINDOWS),
            format_duration(spec.window()),
        ),
        Cut::InFlight => format!(
            "{at}: it had more than {} requests in flight at once, the most an open loop keeps \
             (--rate {}/s against --workers {} of --service {}: the backlog grows without \
             bound); lower --rate, add --workers or bound the queue with --queue-limit",
            group_thousands(MAX_IN_FLIGHT),
            crate::spec::bounds::show_rate(
                server
                    .rate_per_s
                    .unwrap_or(crate::spec::server::DEFAULT_RATE_PER_S)
            ),
            crate::spec::server::show_workers(server.workers),
            server.service,
        ),
    }
}

fn group_thousands_u32(n: u32) -> String {
    group_thousands(u64::from(n))
}

/// What a run stopped by `--max-events` had done.
fn stopped_message(stopped: &RunMetrics, max_events: u64) -> String {
    format!(
        "a run reached --max-events {} after {} calls, {} of {} clients done, the last success \
         at simulated {}; raise --max-events to let it finish",
        group_thousands(max_events),
        group_thousands(stopped.calls),
        group_thousands(stopped.successes + stopped.gave_up),
        group_thousands(stopped.clients),
        format_duration(stopped.last_success_us)
    )
}

/// Where and how `run --plot` draws a server run.
pub(super) struct ServerPlot<'a> {
    pub(super) path: &'a Path,
    pub(super) force: bool,
    /// `--plot-all`: to the end of the drain.
    pub(super) all: bool,
    pub(super) master_seed: u64,
    /// A live run's (`herdsim drill`'s): one run, not a replicate, and its
    /// clients' view of the backlog.
    pub(super) live: bool,
}

/// Draws replicate 0's time series: load and goodput, queue, latency, each
/// trigger shaded and labelled, the patience window and the verdict marked;
/// titled with the service's depth and offered load, the triggers and the
/// retry policy.
pub(super) fn plot_server_series(
    plot: &ServerPlot<'_>,
    spec: &RunSpec,
    server: &ServerSpec,
    run: &ServerMetrics,
    recoveries: (Vec<f64>, u32),
) -> Result<(), CliError> {
    let seconds = |ns: Nanos| ns.ticks() as f64 / 1e9;
    let loads: Vec<String> = spec
        .server
        .offered_loads()
        .iter()
        .map(|rho| rho.map_or("unbounded".to_string(), |r| format!("{r:.2}")))
        .collect();
    let load = if loads.len() == 1 {
        format!("offered load ρ = {}", loads[0])
    } else {
        format!("offered load ρ = {} (top to server)", loads.join(", "))
    };
    let triggers = if server.triggers.is_empty() {
        "no trigger".to_string()
    } else {
        let labels: Vec<String> = server.triggers.iter().map(trigger_label).collect();
        labels.join("; ")
    };
    let policy = match spec.policy.kind {
        PolicyKind::NoBackoff => "no-backoff".to_string(),
        kind => format!(
            "{kind} (base {}, cap {})",
            format_duration(spec.policy.base_us),
            format_duration(spec.policy.cap_us)
        ),
    };
    let attempts = spec
        .max_attempts
        .map_or("unlimited attempts".to_string(), |n| {
            format!("at most {n} attempts")
        });
    let timeout = match server.timeout {
        Some(t) => format_duration(t.whole_us()),
        None if spec.server.timeout_choices.is_empty() => "none".to_string(),
        None => crate::spec::server::show_timeout_choices(&spec.server.timeout_choices),
    };
    let controls: String = spec.controls().iter().map(|c| format!(", {c}")).collect();
    let verdict = match run.verdict {
        Some(Verdict::Recovered(ns)) => format!(
            ": recovered {} s after the last trigger",
            trimmed(ns.ticks() as f64 / 1e9, 3)
        ),
        Some(Verdict::Draining(ns)) => format!(
            ": draining, healthy by about {} s after the last trigger",
            trimmed(ns.ticks() as f64 / 1e9, 3)
        ),
        Some(v) => format!(": {}", v.name()),
        None => String::new(),
    };
    let last_end = server.last_trigger_end();
    let picture = SeriesPicture {
        title: format!(
            "server, depth {}, {load}: {triggers}\n{policy}, {attempts}, timeout {timeout}\
             {controls}; {}{verdict}",
            spec.server.chain.depth,
            if plot.live {
                "a live run (herdsim drill)".to_string()
            } else {
                format!("replicate 0 of master seed {}", plot.master_seed)
            }
        ),
        windows: &run.windows,
        window_ns: server.window,
        triggers: server
            .triggers
            .iter()
            .map(|t| (seconds(t.from), seconds(t.to), trigger_label(t)))
            .collect(),
        capacity_per_s: server.capacity_steps().map(|steps| {
            steps
                .into_iter()
                .map(|(from, c)| (seconds(from), c))
                .collect()
        }),
        load_end_s: seconds(run.load_end_ns),
        patience_s: last_end.map(|end| (seconds(end), seconds(end + server.patience))),
        verdict: run.verdict,
        recoveries,
        all: plot.all,
        live: plot.live,
    };
    write_svg(plot.path, plot.force, &server_series(&picture)?)
}

/// Draws replicate 0's retries over time to `path`, the outage window
/// shaded and the share of clients succeeded beside them.
fn plot_timeline(
    path: &Path,
    force: bool,
    spec: &RunSpec,
    master_seed: u64,
    timeline: &Timeline,
) -> Result<(), CliError> {
    let title = format!(
        "{} clients, {} (base {}, cap {}): retries per ms and clients succeeded over time",
        group_thousands(u64::from(spec.clients)),
        spec.policy.kind,
        format_duration(spec.policy.base_us),
        format_duration(spec.policy.cap_us)
    );
    let label = format!(
        "{}: replicate 0 of master seed {master_seed}",
        spec.policy.kind
    );
    let slot = spec.resource == ResourceKind::Slot;
    let picture = HerdPicture {
        title,
        label,
        timeline,
        capacity_per_ms: slot.then_some(spec.capacity_per_ms),
        outage_us: spec.down.filter(|_| slot),
    };
    write_svg(path, force, &herd_timeline(&picture)?)
}
