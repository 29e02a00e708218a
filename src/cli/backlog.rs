//! The backlog flags `exact` and `run` share (the regions), and `run`'s
//! splitting flags; and `run`'s backlog section, from them.

use clap::Args;

use super::CliError;
use crate::base::time::Micros;
use crate::experiment::backlog::{
    Splitting, passages, path_rules, split_estimate, summarise_passages,
};
use crate::model::backlog::{ChosenRegions, choose_regions};
use crate::report::backlog::BacklogReport;
use crate::spec::server::ServerParams;
use crate::spec::{self, ParamError, RunSpec};

/// The heading of the region flags.
const REGIONS: &str = "Backlog regions";
/// The heading of the splitting flags.
pub(super) const SPLITTING: &str = "Splitting";

/// The storm and calm regions, by backlog.
#[derive(Debug, Args)]
pub struct RegionFlags {
    /// The storm region: backlog (waiting attempts + retries waiting out
    /// their delay) at least this [default: 2 × workers × timeout / mean
    /// service, twice the backlog the workers clear within one timeout, or
    /// 90% of queue_limit if lower]
    #[arg(long, value_name = "N", value_parser = parse_backlog, allow_hyphen_values = true, help_heading = REGIONS)]
    pub high: Option<usize>,

    /// The calm region: backlog at most this [default: 10% of queue_limit;
    /// without one, the queue the steady state (M/M/c at the offered load)
    /// exceeds 5% of the time at most; below --high]
    #[arg(long, value_name = "N", value_parser = parse_backlog, allow_hyphen_values = true, help_heading = REGIONS)]
    pub low: Option<usize>,
}

impl RegionFlags {
    /// The regions of `server` (`what`, in words), a missing one derived
    /// from it: refused unless it has a storm region (`--high`, or a timeout
    /// on bounded workers or a queue limit to derive it from) with calm
    /// below it.
    pub fn for_service(
        &self,
        server: &ServerParams,
        what: &str,
    ) -> Result<ChosenRegions, CliError> {
        let Some(chosen) = choose_regions(self.high, self.low, &server.backlog_shape()) else {
            return Err(CliError::Usage(format!(
                "--high: give the storm region's backlog ({what} has neither a timeout on \
                 bounded workers nor a queue_limit to derive it from)"
            )));
        };
        let regions = chosen.regions;
        if regions.low >= regions.high {
            return Err(CliError::Usage(format!(
                "--high {} and --low {}: expected low < high (the calm region below the storm \
                 region)",
                regions.high, regions.low
            )));
        }
        Ok(chosen)
    }
}

/// The splitting `split` and `regions` ask of `whose` service (`a map's`,
/// `assess's`), or none; a region flag without `--splitting` is refused,
/// since there the regions are splitting's alone.
pub fn splitting_of(
    split: &SplitFlags,
    regions: &RegionFlags,
    whose: &str,
) -> Result<Option<Splitting>, CliError> {
    let Some(particles) = split.splitting else {
        if let Some(flag) = [("--high", regions.high), ("--low", regions.low)]
            .into_iter()
            .find_map(|(flag, given)| given.map(|_| flag))
        {
            return Err(CliError::Usage(format!(
                "{flag}: {whose} backlog regions are splitting's: give --splitting PATHS too"
            )));
        }
        return Ok(None);
    };
    Ok(Some(Splitting {
        high: regions.high,
        low: regions.low,
        particles,
        batches: split.batches,
    }))
}

/// `run`'s splitting flags.
#[derive(Debug, Args)]
pub struct SplitFlags {
    /// Also estimate the storm's chance by adaptive multilevel splitting,
    /// keeping this many paths a batch [server model]
    ///
    /// Unbiased however rare the storm (Bréhier et al. 2016): each batch
    /// copies the paths that reached the highest backlog. On the book's
    /// example service, 1,000 paths × 40 batches gave 1.4e-6 ± 24% in 14 s
    /// on two cores, where plain runs would need 50 million.
    #[arg(long, value_name = "PATHS", value_parser = parse_paths, allow_hyphen_values = true, help_heading = SPLITTING)]
    pub splitting: Option<usize>,

    /// With --splitting: independent batches, whose spread gives the
    /// interval
    #[arg(long, value_name = "M", default_value_t = 10, value_parser = parse_batches, allow_hyphen_values = true, requires = "splitting", help_heading = SPLITTING)]
    pub batches: u32,
}

fn parse_backlog(text: &str) -> Result<usize, ParamError> {
    spec::parse_count(text, 0, 1_000_000).map(|n| n as usize)
}

fn parse_paths(text: &str) -> Result<usize, ParamError> {
    spec::parse_count(text, 2, 1_000_000).map(|n| n as usize)
}

fn parse_batches(text: &str) -> Result<u32, ParamError> {
    spec::parse_count(text, 2, 100_000).map(|n| n as u32)
}

/// `run`'s backlog section for `spec` (server model): `replicates` plain
/// runs followed by their backlog and, with `--splitting`, its batches;
/// `None` unless a backlog flag was given.
pub fn backlog_report(
    regions: &RegionFlags,
    split: &SplitFlags,
    spec: &RunSpec,
    (master, replicates): (u64, u32),
    max_events: u64,
    on_done: &(impl Fn() + Sync),
) -> Result<Option<BacklogReport>, CliError> {
    if regions.high.is_none() && regions.low.is_none() && split.splitting.is_none() {
        return Ok(None);
    }
    let chosen = regions.for_service(&spec.server, "the service")?;
    let (server, retry) = crate::experiment::server_runs::server_parts(spec);
    let plain_rules = path_rules(&server, chosen.regions, false, max_events);
    let runs = passages(
        (&server, &retry),
        plain_rules,
        (master, 0),
        replicates,
        on_done,
    );
    let split = split.splitting.map(|particles| {
        let rules = path_rules(&server, chosen.regions, true, max_events);
        split_estimate(
            (&server, &retry),
            rules,
            (master, 0),
            particles,
            split.batches,
            on_done,
        )
    });
    Ok(Some(BacklogReport {
        chosen,
        rules: plain_rules,
        load_us: server.duration.whole_us(),
        horizon_us: spec.horizon_us().unwrap_or(Micros::ZERO),
        passages: summarise_passages(&runs, plain_rules),
        split,
    }))
}
