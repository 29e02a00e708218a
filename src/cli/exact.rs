//! `herdsim exact`: a Markovian service solved as a continuous-time Markov
//! chain, with no seeds: its stationary figures, the mean time an untouched
//! service takes to fall into a storm, how long a storm lasts, and what a
//! trigger leaves behind.

use std::path::PathBuf;

use clap::Args;

use super::backlog::RegionFlags;
use super::exact_metafor::{MetaforFlags, metafor_command, timeout_seconds};
use super::sweep::{GridArgs, read_scenario};
use super::{CliError, write_stdout};
use crate::base::format::{counted, readable_seconds as time, significant as sig};
use crate::exact::markovian::ChainTrigger;
use crate::exact::server_chain::{ChainError, ChainModel, NEGLIGIBLE_CAP, ServerChain};
use crate::exact::server_figures::{Passage, ServerFigures, server_figures};
use crate::model::backlog::ChosenRegions;
use crate::report::backlog::{calm_reason, storm_reason};
use crate::spec::{self, ParamError};

/// The heading of exact's own flags.
const EXACT: &str = "Exact";

/// The most states by default: about 20 s of solves on one core.
pub const DEFAULT_MAX_STATES: usize = 200_000;

/// The highest arrival rate the chain takes, per second: the most the
/// simulator runs over its default load of 10 s (10⁹ requests), so that the
/// same service runs in `herdsim run` beside it.
pub const MAX_EXACT_RATE: f64 = 1e8;

/// The most state-steps a trigger's follow-up may take (states × the
/// uniformisation steps over its length, [`crate::exact::ctmc::Generator::transient_steps`]):
/// metafor's fault bound, about a minute of a release build.
pub const MAX_TRIGGER_WORK: f64 = super::exact_metafor::MAX_FAULT_WORK;

/// Which chain `herdsim exact` solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Chain {
    /// herdsim's server model, from the scenario and the registry's flags
    Server,
    /// metafor's single-server chain (HotOS 2025), from its own flags
    Metafor,
}

#[derive(Debug, Args)]
pub struct ExactArgs {
    /// The chain: server (herdsim's server model, from the scenario and
    /// the registry's flags) or metafor (metafor's single-server chain,
    /// from its own flags and --timeout)
    #[arg(long, value_enum, default_value_t = Chain::Server, hide_possible_values = true, help_heading = EXACT)]
    chain: Chain,

    /// Scenario file (TOML) of a Markovian service: Poisson arrivals,
    /// exponential service, a queue limit, random order, exponential
    /// timeouts and memoryless retries
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    #[command(flatten)]
    grid: GridArgs,

    #[command(flatten)]
    regions: RegionFlags,

    #[command(flatten)]
    metafor: MetaforFlags,

    /// The most retries the chain keeps waiting; one more is lost (the
    /// figures say how likely the cap is) [default: the smallest of 2 ×
    /// (workers + queue_limit) + 20, then × 1.5, where the cap's chance is
    /// at most 1e-9]
    #[arg(long, value_name = "N", value_parser = parse_backlog, allow_hyphen_values = true, help_heading = EXACT)]
    orbit_cap: Option<usize>,

    /// Refuse a chain of more states than this (solve time grows as states
    /// × the states of one orbit count, squared)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STATES, value_parser = parse_states, allow_hyphen_values = true, help_heading = EXACT)]
    max_states: usize,

    /// Print the figures as JSON instead of text (times in seconds, rates
    /// per second)
    #[arg(long, help_heading = super::run::OUTPUTS)]
    json: bool,
}

fn parse_backlog(text: &str) -> Result<usize, ParamError> {
    spec::parse_count(text, 0, 1_000_000).map(|n| n as usize)
}

fn parse_states(text: &str) -> Result<usize, ParamError> {
    spec::parse_count(text, 1, 1_000_000).map(|n| n as usize)
}

/// The long help of `herdsim exact`.
pub fn exact_help() -> String {
    "The chain's state is (live and abandoned attempts in service, live and abandoned attempts \
     waiting, retries waiting out their delay): an attempt whose client timed out stays and is \
     served. It is exact where the simulator's model is Markovian, so exact refuses, naming the \
     key, any setting that is not: give rate, workers, queue_limit, service = \"exp:MEAN\", and \
     with timeouts timeout_law = \"exponential\" and discipline = \"random\"; retries need policy \
     = \"memoryless\" (base is the mean delay, cap at least 40 × base), max_attempts 1 or \
     unlimited, and budget = \"persistence:P\" for a geometric number of attempts. One trigger \
     (outage, fail:P, spike:K) is followed from the stationary state. The same scenario runs in \
     the simulator (herdsim run, sweep) for a side-by-side check.\n\n\
     --chain metafor solves metafor's single-server chain instead (HotOS 2025; the reference \
     table reference/metafor-ctmc.csv holds its own figures): (q, o), q jobs at the server and o \
     pending retries, set by the flags of its heading and --timeout (its τ, default 9s), \
     defaults metafor's nominal cell. It prints metafor's figures: the stationary ones, the \
     mixing time, the return and entry times, and a fault from an empty system (--fault-rate \
     from --fault-start for --fault-length); --json gives them under the reference table's \
     column names."
        .to_string()
}

/// `herdsim exact`.
pub fn exact_command(args: &ExactArgs) -> Result<(), CliError> {
    let usage = CliError::Usage;
    if args.grid.seeds().is_some() || args.grid.seed().is_some() || args.grid.max_events().is_some()
    {
        return Err(usage(
            "exact draws nothing: --seeds, --seed and --max-events do not apply".to_string(),
        ));
    }
    if args.chain == Chain::Metafor {
        return metafor_exact(args);
    }
    if let Some(flag) = args.metafor.given().first() {
        return Err(usage(format!(
            "{flag} is a setting of metafor's chain: give --chain metafor (the server chain \
             takes a scenario and the registry's flags)"
        )));
    }
    let scenario = match args.scenario.as_deref() {
        Some(path) => read_scenario(path)?,
        None => {
            // Without a file the service is given by flags: the server
            // model's, the only one the chain solves.
            let mut scenario = crate::experiment::scenario::Scenario::default();
            let resource = crate::spec::params::param("resource").expect("resource is a key");
            scenario
                .grid
                .set(resource, vec!["server".into()])
                .expect("server is a resource");
            scenario
        }
    };
    check_rate(args, &scenario)?;
    let scenario = args.grid.apply(scenario)?;
    if scenario.grid.len() != 1 {
        return Err(usage(format!(
            "the scenario has {} points ({}): exact solves one service; give each key one value",
            scenario.grid.len(),
            scenario.grid.shape()
        )));
    }
    let spec = scenario.grid.point(0);
    let queue_limit = spec.server.queue_limit.unwrap_or(0) as usize;
    let (model, trigger) =
        ChainModel::of(&spec, args.orbit_cap.unwrap_or(1)).map_err(|e| usage(e.to_string()))?;
    let chosen = args.regions.for_service(&spec.server, "the service")?;
    let regions = chosen.regions;
    let too_large = |e: ChainError| match e {
        ChainError::TooLarge { .. } => usage(format!("--max-states: {e}")),
        ChainError::TooMuchMemory { .. } => usage(format!(
            "the service's {} and queue_limit {}: {e}",
            counted(model.workers as u64, "worker", "workers"),
            model.queue_limit
        )),
        ChainError::Solve(e) => usage(format!("the chain cannot be solved: {e}")),
    };
    let (chain, cap_negligible, known) = match args.orbit_cap {
        Some(_) => (
            ServerChain::new(model, args.max_states).map_err(too_large)?,
            true,
            None,
        ),
        None => {
            let (chain, negligible, pi) =
                ServerChain::with_negligible_cap(model, args.max_states).map_err(too_large)?;
            (chain, negligible, Some(pi))
        }
    };
    let most_backlog = queue_limit + chain.model.orbit_cap;
    if regions.high > most_backlog {
        return Err(usage(format!(
            "--high {}{}: expected at most {most_backlog} (queue_limit + the orbit cap)",
            regions.high,
            if args.regions.high.is_none() {
                " (its default)"
            } else {
                ""
            }
        )));
    }
    if let Some(t) = trigger {
        check_trigger_work(&chain, &t)?;
    }
    let figures = server_figures(&chain, regions, trigger, known)
        .map_err(|e| usage(format!("the chain cannot be solved: {e}")))?;
    let shown = Shown {
        args,
        chosen,
        chain: &chain,
        cap_negligible,
        trigger,
    };
    if args.json {
        write_stdout(
            &(serde_json::to_string_pretty(&shown.json(&figures)).expect("plain values") + "\n"),
        )
    } else {
        write_stdout(&shown.text(&figures))
    }
}

/// Refuses an arrival rate past [`MAX_EXACT_RATE`] in exact's own words
/// (the simulator's request-count bound would name its `--duration`, which
/// exact does not take).
fn check_rate(
    args: &ExactArgs,
    scenario: &crate::experiment::scenario::Scenario,
) -> Result<(), CliError> {
    let words = args.grid.flag_words(&[]);
    let (given, place) = match words.iter().position(|w| w == "--rate") {
        Some(at) => (words[at + 1].clone(), "--rate".to_string()),
        None => match scenario.grid.values("rate") {
            Some([one]) => (
                one.clone(),
                scenario
                    .origin("rate", 0)
                    .map_or_else(|| "rate".to_string(), |o| o.to_string()),
            ),
            _ => return Ok(()),
        },
    };
    match given.parse::<f64>() {
        Ok(rate) if rate > MAX_EXACT_RATE => Err(CliError::Usage(format!(
            "{place} {given}: exact takes arrival rates up to {MAX_EXACT_RATE:e} per second (the \
             most the simulator runs over its default 10 s, for the side-by-side check); it \
             takes the service's rate, workers, queue_limit, service, timeout and retry \
             settings, no --duration"
        ))),
        _ => Ok(()),
    }
}

/// Refuses a trigger whose follow-up would pass [`MAX_TRIGGER_WORK`],
/// with the longest trigger this chain follows within it: the transient
/// costs the chain's states × its fastest exit rate × the trigger's
/// length, about 1.4 s a second of trigger on `exact-small`.
fn check_trigger_work(chain: &ServerChain, t: &ChainTrigger) -> Result<(), CliError> {
    let during = chain.generator(t.conditions);
    let states = chain.size() as f64;
    let work = states * during.transient_steps(t.length_s);
    if work <= MAX_TRIGGER_WORK {
        return Ok(());
    }
    let per_second = states * during.transient_steps(1.0);
    Err(CliError::Usage(format!(
        "--trigger: following the chain's {} states over the trigger's {} takes {} state-steps \
         (states × the fastest exit rate × the length); at most {}: this chain follows a \
         trigger of at most {}: shorten it (or lower the rates or sizes)",
        crate::base::format::group_thousands(chain.size() as u64),
        time(t.length_s),
        sig(work),
        sig(MAX_TRIGGER_WORK),
        time(MAX_TRIGGER_WORK / per_second)
    )))
}

/// `herdsim exact --chain metafor`: the server chain's scenario and flags
/// refused by name, but `--timeout`, which is metafor's τ too.
fn metafor_exact(args: &ExactArgs) -> Result<(), CliError> {
    let refuse = |flag: &str| {
        Err(CliError::Usage(format!(
            "{flag} does not apply to --chain metafor: metafor's chain takes --arrival-rate, \
             --service-rate, --timeout, --retries, --queue-size, --orbit-size, --threads, \
             --alpha, --retry-when-full and the --fault-* flags"
        )))
    };
    if let Some(path) = &args.scenario {
        return refuse(&format!("the scenario file {}", path.display()));
    }
    if let Some(flag) = args.grid.flag_words(&["timeout"]).first() {
        return refuse(flag);
    }
    for (flag, given) in [
        ("--high", args.regions.high.is_some()),
        ("--low", args.regions.low.is_some()),
        ("--orbit-cap", args.orbit_cap.is_some()),
    ] {
        if given {
            return refuse(flag);
        }
    }
    let words = args.grid.flag_words(&[]);
    let timeout = match words.iter().position(|w| w == "--timeout") {
        Some(at) => Some(timeout_seconds(&words[at + 1])?),
        None => None,
    };
    metafor_command(&args.metafor, timeout, args.max_states, args.json)
}

fn passage_json(p: Option<Passage>) -> serde_json::Value {
    match p {
        Some(p) => serde_json::json!({ "mean_s": p.mean, "sd_s": p.sd }),
        None => serde_json::Value::Null,
    }
}

struct Shown<'a> {
    args: &'a ExactArgs,
    /// The regions, and how each was chosen.
    chosen: ChosenRegions,
    chain: &'a ServerChain,
    /// False if no cap within --max-states made the cap's chance negligible.
    cap_negligible: bool,
    trigger: Option<ChainTrigger>,
}

fn passage(p: Option<Passage>) -> String {
    match p {
        Some(p) => format!("{} (sd {})", time(p.mean), time(p.sd)),
        None => "never (the region cannot be reached)".into(),
    }
}

fn per_second(rate: f64) -> String {
    format!("{}/s", sig(rate))
}

impl Shown<'_> {
    fn json(&self, f: &ServerFigures) -> serde_json::Value {
        let m = &self.chain.model;
        let s = &f.stationary;
        serde_json::json!({
            "model": {
                "arrival_rate_per_s": m.arrival_rate,
                "service_rate_per_s": m.service_rate,
                "workers": m.workers,
                "queue_limit": m.queue_limit,
                "offered_load": m.arrival_rate / (m.workers as f64 * m.service_rate),
                "timeout_rate_per_s": m.timeout_rate,
                "retry_rate_per_s": m.retry_rate,
                "persistence": m.persistence,
                "retry_on": {
                    "failure": m.retry_on_failure,
                    "rejected": m.retry_on_rejected,
                    "timeout": m.retry_on_timeout,
                },
                "fail_rate": m.fail_rate,
                "orbit_cap": m.orbit_cap,
                "orbit_cap_chosen": self.args.orbit_cap.is_none(),
            },
            "states": self.chain.size(),
            "regions": {
                "high_backlog_at_least": f.regions.high,
                "high_default": self.args.regions.high.is_none(),
                "high_reason": storm_reason(&self.chosen.storm),
                "low_backlog_at_most": f.regions.low,
                "low_default": self.args.regions.low.is_none(),
                "low_reason": calm_reason(&self.chosen),
            },
            "stationary": {
                "mean_waiting": s.mean_waiting,
                "mean_busy": s.mean_busy,
                "mean_orbit": s.mean_orbit,
                "attempts_per_s": s.attempts_per_s,
                "amplification": s.attempts_per_s / m.arrival_rate,
                "throughput_per_s": s.throughput_per_s,
                "goodput_per_s": s.goodput_per_s,
                "success_share": s.goodput_per_s / m.arrival_rate,
                "wasted_share": s.wasted_share,
                "p_storm": s.p_high,
                "p_calm": s.p_low,
                "p_orbit_cap": s.p_orbit_cap,
                "cut_per_s": s.cut_per_s,
                "residual": s.residual,
            },
            "time_to_storm": passage_json(f.time_to_storm),
            "storm_length": passage_json(f.storm_length),
            "relaxation_s": f.relaxation_s,
            "after_trigger": f.after_trigger.map(|a| serde_json::json!({
                "start_s": a.trigger.start_s,
                "length_s": a.trigger.length_s,
                "load_factor": a.trigger.conditions.load_factor,
                "fail_rate": a.trigger.conditions.fail_rate,
                "p_storm_at_end": a.p_high_at_end,
                "mean_backlog_at_end": a.mean_backlog_at_end,
                "storm_probability": a.escape,
                "return_time": passage_json(Some(a.return_time)),
            })),
        })
    }

    fn text(&self, f: &ServerFigures) -> String {
        let m = &self.chain.model;
        let rho = m.arrival_rate / (m.workers as f64 * m.service_rate);
        let mut out = String::new();
        out += "herdsim exact: the service as a continuous-time Markov chain (no seeds)\n";
        out += &format!(
            "  offered load ρ = {:.3}: {} first tries on {} at {} each, queue limit {}, \
             random order\n",
            rho,
            per_second(m.arrival_rate),
            counted(m.workers as u64, "worker", "workers"),
            per_second(m.service_rate),
            m.queue_limit
        );
        out += &format!("  {}\n", self.clients());
        out += &match self.trigger {
            Some(t) => format!(
                "  trigger: {} for {}, from the stationary state\n",
                trigger_words(&t, m.fail_rate),
                time(t.length_s)
            ),
            None => "  trigger: none\n".into(),
        };
        let cap_note = match self.args.orbit_cap {
            Some(_) => "given".to_string(),
            None if m.orbit_cap == 0 => "no retries".to_string(),
            None if self.cap_negligible => format!(
                "the first of 2 × (workers + queue_limit) + 20, then × 1.5, where P(cap) ≤ {}",
                sig(NEGLIGIBLE_CAP)
            ),
            None => format!(
                "the largest within --max-states and the solves' memory bound; P(cap) ≤ {} \
                 was not reached",
                sig(NEGLIGIBLE_CAP)
            ),
        };
        out += &format!(
            "  states: {} ({} per orbit count; orbit capped at {}, {})\n",
            crate::base::format::group_thousands(self.chain.size() as u64),
            self.chain.slice(),
            m.orbit_cap,
            cap_note
        );
        let default_note =
            |why: Option<String>| why.map_or(String::new(), |why| format!(" (default: {why})"));
        out += &format!(
            "  storm: backlog ≥ {}{}; calm: backlog ≤ {}{} (backlog = waiting attempts + \
             waiting retries)\n",
            f.regions.high,
            default_note(storm_reason(&self.chosen.storm)),
            f.regions.low,
            default_note(calm_reason(&self.chosen))
        );
        let s = &f.stationary;
        out += "\nStationary\n";
        let rows: Vec<(&str, String)> = vec![
            ("attempts waiting (mean)", sig(s.mean_waiting)),
            ("attempts in service (mean)", sig(s.mean_busy)),
            ("retries waiting (mean)", sig(s.mean_orbit)),
            ("attempts sent", per_second(s.attempts_per_s)),
            (
                "  per first try (amplification)",
                sig(s.attempts_per_s / m.arrival_rate),
            ),
            ("throughput (completions)", per_second(s.throughput_per_s)),
            ("goodput (successes)", per_second(s.goodput_per_s)),
            (
                "  share of first tries",
                sig(s.goodput_per_s / m.arrival_rate),
            ),
            (
                "service on attempts whose reply is ignored",
                format!("{}%", sig(100.0 * s.wasted_share)),
            ),
            ("P(storm)", sig(s.p_high)),
            ("P(calm)", sig(s.p_low)),
            ("P(orbit at its cap)", sig(s.p_orbit_cap)),
            ("retries lost at the cap", per_second(s.cut_per_s)),
            ("max |πQ| (solve residual)", sig(s.residual)),
        ];
        out += &table(&rows);
        out += "\nPassage times\n";
        let mut rows: Vec<(&str, String)> = vec![
            ("empty → storm, no trigger", passage(f.time_to_storm)),
            (
                "storm → calm (from π in the storm)",
                passage(f.storm_length),
            ),
            ("relaxation time 1/|λ₂|", time(f.relaxation_s)),
        ];
        if let Some(a) = &f.after_trigger {
            out += &table(&rows);
            out += "\nAfter the trigger\n";
            rows = vec![
                ("P(storm) at its end", sig(a.p_high_at_end)),
                ("backlog at its end (mean)", sig(a.mean_backlog_at_end)),
                ("P(storm before calm): storm probability", sig(a.escape)),
                ("its end → calm", passage(Some(a.return_time))),
            ];
        }
        out += &table(&rows);
        if s.p_orbit_cap > 1e-6 {
            out += &format!(
                "\nwarning: the orbit sits at its cap with probability {}: the cap, not the \
                 service, bounds the retries there; raise --orbit-cap\n",
                sig(s.p_orbit_cap)
            );
        }
        out
    }

    fn clients(&self) -> String {
        let m = &self.chain.model;
        let timeout = if m.timeout_rate > 0.0 {
            format!("timeouts exponential, mean {}", time(1.0 / m.timeout_rate))
        } else {
            "no timeout".into()
        };
        if m.orbit_cap == 0 {
            return format!("{timeout}; one attempt per request");
        }
        let on: Vec<&str> = [
            (m.retry_on_failure, "failure"),
            (m.retry_on_rejected, "rejected"),
            (m.retry_on_timeout, "timeout"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, w)| *w)
        .collect();
        let attempts = if m.persistence < 1.0 {
            format!(
                "each going with P = {} ({} attempts on average)",
                m.persistence,
                sig(1.0 / (1.0 - m.persistence))
            )
        } else {
            "every one going (attempts unlimited)".into()
        };
        format!(
            "{timeout}; retries on {} after exponential delays of mean {}, {attempts}",
            if on.is_empty() {
                "nothing".to_string()
            } else {
                on.join(", ")
            },
            time(1.0 / m.retry_rate)
        )
    }
}

fn trigger_words(t: &ChainTrigger, base_fail: f64) -> String {
    let c = t.conditions;
    if c.load_factor != 1.0 {
        format!("the arrival rate × {}", c.load_factor)
    } else if c.fail_rate >= 1.0 {
        "an outage (every completion fails)".into()
    } else {
        format!(
            "{}% of completions failing (from {}%)",
            sig(100.0 * c.fail_rate),
            sig(100.0 * base_fail)
        )
    }
}

/// Rows of `name  value`, the names padded to the longest (also
/// metafor's chain's figures).
pub(super) fn table(rows: &[(&str, String)]) -> String {
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("  {k:<width$}  {v}\n"))
        .collect()
}
