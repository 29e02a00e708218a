//! `herdsim exact --chain metafor`: metafor's single-server chain (HotOS
//! 2025) from flags named after its parameters, so its figures can be had
//! without Rust; as text, or with `--json` under the names of the reference
//! table's columns (`reference/metafor-ctmc.csv`).

use clap::Args;

use super::exact::table;
use super::{CliError, write_stdout};
use crate::base::format::{counted, group_thousands, readable_seconds as time, significant as sig};
use crate::base::time::{Micros, parse_duration};
use crate::exact::metafor::{FaultFigures, MetaforChain, MetaforFigures};
use crate::exact::metafor_columns::{MetaforFault, figure_columns, setting_columns};
use crate::spec::{self, ParamError};

/// The heading of metafor's flags.
const METAFOR: &str = "metafor's chain (with --chain metafor)";

/// The most bytes the chain's solves may hold ([`MetaforChain::solve_bytes`]).
pub const MAX_SOLVE_BYTES: u64 = 1 << 30;

/// The most state-steps the fault's transients may take (states × the
/// uniformisation steps of its two phases): about a minute of a release
/// build; metafor's nominal fault takes 4·10⁷.
pub const MAX_FAULT_WORK: f64 = 1e10;

/// metafor's parameters, each unset unless given (its defaults are
/// [`MetaforChain::nominal`]'s and [`MetaforFault::nominal`]'s). Its
/// timeout τ is the registry's `--timeout`.
#[derive(Debug, Args)]
pub struct MetaforFlags {
    /// λ: the source's arrival rate, requests per second [default: 9.5]
    #[arg(long, value_name = "PER_S", value_parser = spec::server::parse_rate, allow_hyphen_values = true, help_heading = METAFOR)]
    arrival_rate: Option<f64>,

    /// μ: one thread's service rate, requests per second [default: 10]
    #[arg(long, value_name = "PER_S", value_parser = spec::server::parse_rate, allow_hyphen_values = true, help_heading = METAFOR)]
    service_rate: Option<f64>,

    /// R: the source's retries; an orbit job leaves at 1/τ, R/(R + 1) of
    /// those as retries (a split, not a cap) [default: 3]
    #[arg(long, value_name = "R", value_parser = parse_retries, allow_hyphen_values = true, help_heading = METAFOR)]
    retries: Option<u32>,

    /// N, metafor's qsize: jobs at the server run from 0 to N − 1
    /// [default: 100]
    #[arg(long, value_name = "N", value_parser = parse_queue_size, allow_hyphen_values = true, help_heading = METAFOR)]
    queue_size: Option<usize>,

    /// M, metafor's orbit_size: pending retries run from 0 to M − 1
    /// [default: 20]
    #[arg(long, value_name = "M", value_parser = parse_size, allow_hyphen_values = true, help_heading = METAFOR)]
    orbit_size: Option<usize>,

    /// c, metafor's thread_pool: q jobs are served at min(q, c) μ
    /// [default: 1]
    #[arg(long, value_name = "C", value_parser = parse_size, allow_hyphen_values = true, help_heading = METAFOR)]
    threads: Option<usize>,

    /// α: the share of arrivals predicted to time out that add a pending
    /// retry (metafor's hidden constructor argument) [default: 0.25]
    #[arg(long, value_name = "A", value_parser = parse_alpha, allow_hyphen_values = true, help_heading = METAFOR)]
    alpha: Option<f64>,

    /// At a full queue the orbit still grows, at α (λ + o · r_ret) (metafor's
    /// retry_when_full; without it, arrivals and retries are lost there)
    #[arg(long, help_heading = METAFOR)]
    retry_when_full: bool,

    /// The fault's arrival rate, requests per second (0 allowed)
    /// [default: 20]
    #[arg(long, value_name = "PER_S", value_parser = parse_fault_rate, allow_hyphen_values = true, help_heading = METAFOR)]
    fault_rate: Option<f64>,

    /// When the fault starts, from an empty system [default: 200s]
    #[arg(long, value_name = "DURATION", value_parser = parse_time, allow_hyphen_values = true, help_heading = METAFOR)]
    fault_start: Option<Micros>,

    /// How long the fault lasts [default: 200s]
    #[arg(long, value_name = "DURATION", value_parser = parse_time, allow_hyphen_values = true, help_heading = METAFOR)]
    fault_length: Option<Micros>,
}

fn parse_retries(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 0, 1_000_000).map(|n| n as u32)
}

/// N ≥ 10: the return time's target, q < ⌊0.1 N⌋, must hold a state.
fn parse_queue_size(text: &str) -> Result<usize, ParamError> {
    spec::parse_count(text, 10, 1_000_000).map(|n| n as usize)
}

fn parse_size(text: &str) -> Result<usize, ParamError> {
    spec::parse_count(text, 1, 1_000_000).map(|n| n as usize)
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    let alpha: f64 = text.trim().parse().unwrap_or(f64::NAN);
    if (0.0..=100.0).contains(&alpha) {
        Ok(alpha)
    } else {
        Err("expected a number from 0 to 100 (metafor's default is 0.25)".into())
    }
}

fn parse_fault_rate(text: &str) -> Result<f64, String> {
    let rate: f64 = text.trim().replace('_', "").parse().unwrap_or(f64::NAN);
    if (0.0..=spec::server::MAX_RATE_PER_S).contains(&rate) {
        Ok(rate)
    } else {
        Err("expected requests per second, a number from 0 to 1e9".into())
    }
}

fn parse_time(text: &str) -> Result<Micros, ParamError> {
    Ok(parse_duration(text)?)
}

/// Seconds of a duration.
fn seconds(us: Micros) -> f64 {
    us.ticks() as f64 / 1e6
}

impl MetaforFlags {
    /// The flags given, as typed (for refusing them off `--chain metafor`).
    pub fn given(&self) -> Vec<&'static str> {
        let flags = [
            ("--arrival-rate", self.arrival_rate.is_some()),
            ("--service-rate", self.service_rate.is_some()),
            ("--retries", self.retries.is_some()),
            ("--queue-size", self.queue_size.is_some()),
            ("--orbit-size", self.orbit_size.is_some()),
            ("--threads", self.threads.is_some()),
            ("--alpha", self.alpha.is_some()),
            ("--retry-when-full", self.retry_when_full),
            ("--fault-rate", self.fault_rate.is_some()),
            ("--fault-start", self.fault_start.is_some()),
            ("--fault-length", self.fault_length.is_some()),
        ];
        flags
            .iter()
            .filter(|(_, given)| *given)
            .map(|(flag, _)| *flag)
            .collect()
    }

    /// The chain and its fault, defaults where a flag was not given;
    /// `timeout` is τ in seconds, if `--timeout` was given.
    fn chain(&self, timeout: Option<f64>) -> (MetaforChain, MetaforFault) {
        let nominal = MetaforChain::nominal();
        let fault = MetaforFault::nominal();
        (
            MetaforChain {
                arrival_rate: self.arrival_rate.unwrap_or(nominal.arrival_rate),
                service_rate: self.service_rate.unwrap_or(nominal.service_rate),
                timeout: timeout.unwrap_or(nominal.timeout),
                retries: self.retries.unwrap_or(nominal.retries),
                queue_size: self.queue_size.unwrap_or(nominal.queue_size),
                orbit_size: self.orbit_size.unwrap_or(nominal.orbit_size),
                threads: self.threads.unwrap_or(nominal.threads),
                alpha: self.alpha.unwrap_or(nominal.alpha),
                retry_when_full: self.retry_when_full,
            },
            MetaforFault {
                arrival_rate: self.fault_rate.unwrap_or(fault.arrival_rate),
                start: self.fault_start.map_or(fault.start, seconds),
                length: self.fault_length.map_or(fault.length, seconds),
            },
        )
    }
}

/// τ from the registry's `--timeout` (the words `GridArgs::flag_words`
/// gives), refused unless one duration.
pub fn timeout_seconds(value: &str) -> Result<f64, CliError> {
    spec::parse_positive_duration(value)
        .map(seconds)
        .map_err(|_| {
            CliError::Usage(format!(
                "--timeout {value}: metafor's chain takes one timeout τ, a duration of at least \
                 1us such as 9s"
            ))
        })
}

/// `herdsim exact --chain metafor`, once the flags of the other chain are
/// refused: `timeout` is τ in seconds if given, `max_states` the size
/// allowed.
pub fn metafor_command(
    flags: &MetaforFlags,
    timeout: Option<f64>,
    max_states: usize,
    json: bool,
) -> Result<(), CliError> {
    let usage = CliError::Usage;
    let (chain, fault) = flags.chain(timeout);
    let sizes = format!(
        "--queue-size {} × --orbit-size {}",
        chain.queue_size, chain.orbit_size
    );
    let states = chain.states();
    if states > max_states {
        return Err(usage(format!(
            "--max-states: {sizes} is {} states, more than the {} allowed: lower them, or allow \
             more (time grows as states × --queue-size²)",
            group_thousands(states as u64),
            group_thousands(max_states as u64)
        )));
    }
    let bytes = chain.solve_bytes();
    if bytes > MAX_SOLVE_BYTES {
        return Err(usage(format!(
            "{sizes} is {} states, whose solves would hold {} MB (about 32 bytes × \
             --queue-size per state); at most {} MB: lower --queue-size or --orbit-size",
            group_thousands(states as u64),
            group_thousands(bytes / 1_000_000),
            group_thousands(MAX_SOLVE_BYTES / 1_000_000)
        )));
    }
    let work = states as f64 * chain.fault_steps(fault.arrival_rate, fault.start, fault.length);
    if work > MAX_FAULT_WORK {
        return Err(usage(format!(
            "--fault-start {} and --fault-length {}: following the chain's {} states over them \
             takes {} state-steps (states × the fastest rate × the time); at most {}: shorten \
             them (or lower the rates or sizes)",
            time(fault.start),
            time(fault.length),
            group_thousands(states as u64),
            sig(work),
            sig(MAX_FAULT_WORK)
        )));
    }
    let solve_error = |e| usage(format!("metafor's chain cannot be solved: {e}"));
    // Independent solves, each deterministic: two cores share them and the
    // figures do not depend on the thread count.
    let (figures, after) = rayon::join(
        || chain.figures(),
        || chain.fault(fault.arrival_rate, fault.start, fault.length),
    );
    let (figures, after) = (figures.map_err(solve_error)?, after.map_err(solve_error)?);
    if json {
        write_stdout(&json_text(&chain, &fault, &figures, &after))
    } else {
        write_stdout(&text(&chain, &fault, &figures, &after))
    }
}

/// The columns that are counts, written as whole numbers.
const COUNTS: [&str; 5] = ["retries", "qsize", "orbit", "threads", "n_states"];

/// One JSON object whose keys are the reference table's columns, in its
/// order (all but its second λ₂ solver's): the settings, then the figures.
fn json_text(
    chain: &MetaforChain,
    fault: &MetaforFault,
    figures: &MetaforFigures,
    after: &FaultFigures,
) -> String {
    let mut columns = setting_columns(chain, fault);
    // The table puts the fault's settings after the figures before them.
    let fault_settings = columns.split_off(columns.len() - 3);
    let all_figures = figure_columns(chain, figures, after);
    let at_fault = all_figures
        .iter()
        .position(|(name, _)| *name == "prefault_mean_queue_jobs")
        .expect("a fault column");
    columns.extend_from_slice(&all_figures[..at_fault]);
    columns.extend(fault_settings);
    columns.extend_from_slice(&all_figures[at_fault..]);
    let lines: Vec<String> = columns
        .iter()
        .map(|(name, value)| {
            let value = if *name == "retry_when_full" {
                serde_json::Value::from(*value != 0.0)
            } else if COUNTS.contains(name) {
                serde_json::Value::from(*value as u64)
            } else {
                serde_json::Value::from(*value)
            };
            format!("  \"{name}\": {value}")
        })
        .collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

fn per_second(rate: f64) -> String {
    format!("{}/s", sig(rate))
}

fn passage(mean: f64, sd: Option<f64>) -> String {
    match sd {
        Some(sd) => format!("{}, sd {}", time(mean), time(sd)),
        None => time(mean),
    }
}

fn text(
    chain: &MetaforChain,
    fault: &MetaforFault,
    f: &MetaforFigures,
    after: &FaultFigures,
) -> String {
    let (n, m) = (chain.queue_size, chain.orbit_size);
    let (low, high) = chain.thresholds();
    let (low_regime, high_regime) = (chain.low_regime(), chain.high_regime());
    let mut out = String::new();
    out += "herdsim exact --chain metafor: metafor's single-server chain (HotOS 2025, its code \
            at 5355c17), no seeds\n";
    out += &format!(
        "  arrivals {} on {} at {} each (offered load {:.3}); q = 0 to {} jobs at the server, \
         o = 0 to {} pending retries: {}\n",
        per_second(chain.arrival_rate),
        counted(chain.threads as u64, "thread", "threads"),
        per_second(chain.service_rate),
        chain.arrival_rate / (chain.threads as f64 * chain.service_rate),
        n - 1,
        m - 1,
        counted(chain.states() as u64, "state", "states"),
    );
    out += &format!(
        "  timeout τ {}: an arrival at q times out with metafor's Chebyshev bound p(q), adding a \
         pending retry at α = {} of λ; orbit jobs leave at 1/τ, {} of them retrying (R = {})\n",
        time(chain.timeout),
        chain.alpha,
        sig(f64::from(chain.retries) / (f64::from(chain.retries) + 1.0)),
        chain.retries
    );
    out += if chain.retry_when_full {
        "  full queue: the orbit still grows, at α (λ + o · retry rate) (retry when full)\n"
    } else {
        "  full queue: arrivals and retries lost without trace, the orbit drains at o/τ\n"
    };
    out += &format!(
        "  fault: from empty, {} at {}, then {} at {}, then back\n",
        time(fault.start),
        per_second(chain.arrival_rate),
        time(fault.length),
        per_second(fault.arrival_rate)
    );
    out += "\nStationary\n";
    let low_words = format!("P(q < {low_regime}), low");
    let mid_words = format!("P({low_regime} ≤ q < {high_regime})");
    let high_words = format!("P(q ≥ {high_regime}), high");
    let full_words = format!("P(q = {}), full", n - 1);
    out += &table(&[
        ("jobs at the server (mean)", sig(f.mean_queue)),
        ("  sd", sig(f.sd_queue)),
        ("pending retries (mean)", sig(f.mean_orbit)),
        (low_words.as_str(), sig(f.p_low)),
        (mid_words.as_str(), sig(f.p_mid)),
        (high_words.as_str(), sig(f.p_high)),
        (full_words.as_str(), sig(f.p_full)),
        ("throughput μ (1 − P(q = 0))", per_second(f.throughput)),
        ("pending retries dropped", per_second(f.orbit_drop_rate)),
        ("latency (1 + E[q]) / μ", time(f.mean_latency)),
        ("max |πQ| (solve residual)", sig(f.residual)),
    ]);
    out += "\nMixing and passage times\n";
    let back_words = format!("({high}, 0) → q < {low}");
    let entry_low_words = format!("({low}, {}) → q ≥ {high}", m - 1);
    let entry_empty_words = format!("(0, 0) → q ≥ {high}");
    out += &table(&[
        ("λ₂", per_second(f.lambda2)),
        ("mixing time log₂(100) / |λ₂|", time(f.mixing_time)),
        (
            back_words.as_str(),
            passage(f.return_time.0, Some(f.return_time.1)),
        ),
        (
            entry_low_words.as_str(),
            passage(f.entry_time_from_low, None),
        ),
        (
            entry_empty_words.as_str(),
            passage(f.entry_time_from_empty.0, Some(f.entry_time_from_empty.1)),
        ),
    ]);
    out += "\nThe fault\n";
    let high_end = format!("P(q ≥ {high_regime}) at its end");
    let low_end = format!("P(q < {low_regime}) at its end");
    let back_end = format!("its end → q < {low}");
    out += &table(&[
        (
            "jobs at the server when it starts",
            sig(after.prefault_mean_queue),
        ),
        (
            "jobs at the server at its end",
            sig(after.postfault_mean_queue),
        ),
        (
            "pending retries at its end",
            sig(after.postfault_mean_orbit),
        ),
        (high_end.as_str(), sig(after.postfault_p_high)),
        (low_end.as_str(), sig(after.postfault_p_low)),
        (
            back_end.as_str(),
            passage(after.return_time.0, Some(after.return_time.1)),
        ),
    ]);
    out
}
