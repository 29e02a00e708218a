//! Up-front refusals of settings each in its range that together do not
//! fit: the clock's resolution, or memory that follows simulated time or
//! clients rather than work. Each names the parameters whose product is too
//! large, the figure and the bound, before any work is done.
//!
//! What cannot be known before a run (how long a drain lasts, how many
//! requests pile up) is bounded while it runs instead: see
//! [`crate::measure::server_metrics::Cut`].

use super::{ParamError, RunSpec, SpecError};
use crate::base::format::group_thousands;
use crate::base::time::format_duration;
use crate::model::ResourceKind;
use crate::model::server::{NS_PER_S, peak_load_factor_of};

/// The highest arrival rate in force at any instant, per second: one
/// arrival per ns, the clock's resolution. Above it the gaps between
/// arrivals (and between thinning's proposals) round to 0 ns and time stops.
pub const MAX_ARRIVALS_PER_S: f64 = NS_PER_S.ticks() as f64;

/// Most requests an open loop's rate may bring over its duration: as many as
/// `--requests` may ask for.
pub const MAX_LOAD_REQUESTS: f64 = super::server::MAX_REQUESTS as f64;

/// Most windows of one run's time series: 680 MB of them. The series keeps
/// a window per window of simulated time, whether anything happens in it or
/// not, so a run spanning a year of 100 ms windows asked for 43 GB.
pub const MAX_WINDOWS: u64 = 5_000_000;

/// A window of the series in memory, bytes (its size, tested beside it in
/// [`crate::measure::server_metrics`]).
pub const WINDOW_BYTES: usize = 144;

/// Most requests in flight at once in an open loop: about 0.7 GB of request
/// state at its largest (`--rate 1e9` against one worker grew without
/// bound, 14.7 GB in a minute). A closed loop is bounded by its users.
pub const MAX_IN_FLIGHT: u64 = 10_000_000;

/// Most clients of the occ model: it keeps every client's state and first
/// event from the start (about [`OCC_CLIENT_BYTES`] each), before
/// `--max-events` can act.
pub const MAX_OCC_CLIENTS: u32 = 10_000_000;

/// The occ model's memory per client, bytes, measured: 100,000,000 clients
/// took 4.0 GB before the first event.
pub const OCC_CLIENT_BYTES: u64 = 40;

/// Refuses `spec` if its settings, each valid, do not fit together.
pub fn check_fits(spec: &RunSpec) -> Result<(), SpecError> {
    match spec.resource {
        ResourceKind::Server => check_server(spec),
        ResourceKind::Occ => check_occ(spec),
        _ => Ok(()),
    }
}

fn refuse(spec: &RunSpec, key: &'static str, other: &'static str, why: String) -> SpecError {
    let value = super::params::param(key)
        .and_then(|p| (p.show)(spec))
        .unwrap_or_default();
    SpecError {
        key,
        value,
        reason: ParamError::Conflict { other, why },
    }
}

fn check_occ(spec: &RunSpec) -> Result<(), SpecError> {
    if spec.clients <= MAX_OCC_CLIENTS {
        return Ok(());
    }
    let gb = f64::from(spec.clients) * OCC_CLIENT_BYTES as f64 / 1e9;
    Err(refuse(
        spec,
        "clients",
        "resource",
        format!(
            "the occ model keeps every client's state and first event from the start, about \
             {OCC_CLIENT_BYTES} bytes each: {} clients would take {gb:.1} GB before the first \
             event; it takes at most {} clients",
            group_thousands(u64::from(spec.clients)),
            group_thousands(u64::from(MAX_OCC_CLIENTS)),
        ),
    ))
}

/// A rate as it reads best: 1e9, not 1000000000.
pub fn show_rate(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{rate:e}")
    } else {
        rate.to_string()
    }
}

fn check_server(spec: &RunSpec) -> Result<(), SpecError> {
    let server = &spec.server;
    let duration_us = spec.duration_us();
    let window_us = spec.window();
    if server.users.is_none() {
        let rate = server
            .rate_per_s
            .unwrap_or(super::server::DEFAULT_RATE_PER_S);
        let factor = peak_load_factor_of(&server.triggers.0);
        if rate * factor > MAX_ARRIVALS_PER_S {
            return Err(refuse(
                spec,
                "rate",
                "trigger",
                format!(
                    "{}/s × {factor} (the largest load factor of --trigger in force at one \
                     instant) is {:.3e} arrivals/s; the clock counts whole ns, so the rate in \
                     force may be at most 1e9/s",
                    show_rate(rate),
                    rate * factor
                ),
            ));
        }
        let expected = rate * duration_us.ticks() as f64 / 1e6;
        if server.requests.is_none() && expected > MAX_LOAD_REQUESTS {
            // A default length follows the triggers: name what set it.
            let (other, length, shorten) = match (server.duration_us, server.last_trigger_end_us())
            {
                (None, Some(_)) => (
                    "trigger",
                    format!(
                        "the load's default length {} (until the last trigger's end plus the \
                         patience window)",
                        format_duration(duration_us)
                    ),
                    "shorten the trigger",
                ),
                _ => (
                    "duration",
                    format!("--duration {}", format_duration(duration_us)),
                    "shorten the load",
                ),
            };
            return Err(refuse(
                spec,
                "rate",
                other,
                format!(
                    "{}/s over {length} brings about {expected:.3e} requests; at most {} (as \
                     --requests): lower the rate or {shorten}",
                    show_rate(rate),
                    group_thousands(super::server::MAX_REQUESTS)
                ),
            ));
        }
    }
    // The load spans its duration (unless a fixed request count ends it
    // sooner), and the series keeps one window per window of it.
    let windows = duration_us.div_ceil(window_us);
    if server.requests.is_none() && windows > MAX_WINDOWS {
        return Err(refuse(
            spec,
            "window",
            "duration",
            format!(
                "--duration {} over --window {} is {} windows of the time series, {WINDOW_BYTES} \
                 bytes each in memory; at most {}: widen the window or shorten the load",
                format_duration(duration_us),
                format_duration(window_us),
                group_thousands(windows),
                group_thousands(MAX_WINDOWS)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;
    use crate::policy::PolicyKind;

    fn server() -> RunSpec {
        let mut spec = RunSpec::seed_002(PolicyKind::Full, 1_000);
        spec.resource = ResourceKind::Server;
        spec
    }

    #[test]
    fn the_default_server_and_the_committed_loads_fit() {
        assert_eq!(check_fits(&server()), Ok(()));
        let mut spec = server();
        spec.server.rate_per_s = Some(1e9);
        spec.server.duration_us = Some(Micros::from_s(1));
        assert_eq!(check_fits(&spec), Ok(()));
        spec.server.triggers = "spike:1000@1s..2s+spike:1000@3s..4s".parse().unwrap();
        spec.server.rate_per_s = Some(1e6);
        spec.server.duration_us = Some(Micros::from_s(10));
        assert_eq!(check_fits(&spec), Ok(()));
    }

    #[test]
    fn a_rate_in_force_above_one_per_ns_is_refused_with_the_product() {
        let mut spec = server();
        spec.server.rate_per_s = Some(1e7);
        spec.server.duration_us = Some(Micros::from_s(1));
        spec.server.triggers = "spike:200@100ms..200ms".parse().unwrap();
        let err = check_fits(&spec).unwrap_err();
        assert_eq!((err.key, err.value.as_str()), ("rate", "10000000"));
        assert!(err.to_string().contains("× 200"), "{err}");
        assert!(err.to_string().contains("2.000e9"), "{err}");
    }

    #[test]
    fn a_load_of_more_windows_or_requests_than_fit_is_refused() {
        let mut spec = server();
        spec.window_us = Some(Micros::from_us(1));
        spec.server.duration_us = Some(Micros::from_s(3600));
        let err = check_fits(&spec).unwrap_err();
        assert_eq!(err.key, "window");
        assert!(err.to_string().contains("3,600,000,000 windows"), "{err}");
        let mut spec = server();
        spec.server.rate_per_s = Some(1e9);
        let err = check_fits(&spec).unwrap_err();
        assert_eq!(err.key, "rate");
        assert!(err.to_string().contains("1.000e10 requests"), "{err}");
    }

    #[test]
    fn the_occ_model_takes_at_most_ten_million_clients() {
        let mut spec = RunSpec::seed_002(PolicyKind::Full, MAX_OCC_CLIENTS);
        spec.resource = ResourceKind::Occ;
        assert_eq!(check_fits(&spec), Ok(()));
        spec.clients = 100_000_000;
        let err = check_fits(&spec).unwrap_err();
        assert_eq!(err.key, "clients");
        assert!(err.to_string().contains("4.0 GB"), "{err}");
    }
}
