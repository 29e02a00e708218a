//! The backlog regions of a service: how a storm and calm are told apart
//! by the exact chain ([`crate::exact`]), the simulator's backlog paths and
//! splitting ([`crate::sim::server_loop::backlog_paths`]) alike. The
//! backlog is the waiting attempts plus the retries waiting out their delay:
//! the work the service still owes, whether it sits in its queue or in its
//! clients.
//!
//! A region not given is derived from the service ([`choose_regions`]), and
//! the rule that gave it is kept so that the output can say why: a storm
//! threshold picked by hand changes the answer (the same blip gave 7% at a
//! backlog of 100 and 2.2% at 200 and at 1,000), one derived from the
//! service is the level past which a storm feeds itself.

/// Where a storm starts and where it has ended, by backlog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regions {
    /// The storm region: backlog at least this.
    pub high: usize,
    /// The calm region: backlog at most this.
    pub low: usize,
}

impl Regions {
    /// True in the storm region.
    pub fn storm(&self, backlog: usize) -> bool {
        backlog >= self.high
    }

    /// True in the calm region.
    pub fn calm(&self, backlog: usize) -> bool {
        backlog <= self.low
    }
}

/// What the default regions of a service are derived from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServiceShape {
    /// Workers; `None` is unbounded.
    pub workers: Option<u32>,
    /// The mean service time, ns.
    pub mean_service_ns: f64,
    /// The per-attempt timeout, ns (its mean when each attempt draws one),
    /// and whether it is a mean; `None` without one.
    pub timeout: Option<(f64, bool)>,
    /// Most attempts waiting; `None` is unbounded.
    pub queue_limit: Option<u32>,
    /// The offered load ρ = λ·E[S]/c of first tries (`None` with unbounded
    /// workers).
    pub offered_load: Option<f64>,
}

/// How the storm region's threshold was chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StormRule {
    /// Given (`--high`).
    Given,
    /// Twice the backlog the workers clear within one timeout,
    /// ⌈2 · c · T / E[S]⌉. At c · T / E[S] an attempt is served just as its
    /// client gives up: the tipping point, which a storm still leaves about
    /// as often as not (the metastable map's service after a 150 ms outage:
    /// 34% reach a backlog of 100, 19% reach 200 and the same 19% reach
    /// 400). At twice it every attempt served was abandoned a timeout ago,
    /// and the answer no longer moves with the threshold.
    Timeout {
        workers: u32,
        timeout_ns: f64,
        timeout_is_mean: bool,
        mean_service_ns: f64,
    },
    /// 90% of the queue limit, rounded up: the queue nearly full, where
    /// arrivals start to be refused and come back as retries.
    QueueFull { queue_limit: u32 },
}

/// How the calm region's threshold was chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CalmRule {
    /// Given (`--low`).
    Given,
    /// 10% of the queue limit, rounded down.
    QueueTenth { queue_limit: u32 },
    /// The waiting attempts the steady state exceeds at most
    /// [`CALM_EXCEEDED`] of the time, by the M/M/c queue at the offered
    /// load: a level the service comes back to.
    SteadyState { workers: u32, offered_load: f64 },
    /// An empty backlog: there is no steady state to take it from (ρ ≥ 1,
    /// or unbounded workers, where nothing waits: `None`).
    Empty { offered_load: Option<f64> },
}

/// How many timeouts of work the default storm region lies past:
/// [`StormRule::Timeout`].
pub const TIMEOUTS_DEEP: f64 = 2.0;

/// The share of time the steady state's queue may exceed the default calm
/// region (without a queue limit): calm is where the service spends 95% of
/// its time.
pub const CALM_EXCEEDED: f64 = 0.05;

/// The regions of a service, and how each threshold was chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChosenRegions {
    pub regions: Regions,
    pub storm: StormRule,
    pub calm: CalmRule,
    /// True if the calm default was lowered to one below the storm region
    /// (a storm threshold given below it).
    pub calm_held_below: bool,
}

/// The regions given, each one missing derived from `service`: the storm
/// region from the lower of [`StormRule::Timeout`] and
/// [`StormRule::QueueFull`] that apply, calm from the queue limit if there
/// is one ([`CalmRule::QueueTenth`]), else from the steady state
/// ([`CalmRule::SteadyState`]), and held below the storm region. `None`
/// if the storm region is not given and no rule applies (no timeout on
/// bounded workers, no queue limit).
pub fn choose_regions(
    high: Option<usize>,
    low: Option<usize>,
    service: &ServiceShape,
) -> Option<ChosenRegions> {
    let (high, storm) = match high {
        Some(high) => (high, StormRule::Given),
        None => storm_default(service)?,
    };
    let (low, calm, calm_held_below) = match low {
        Some(low) => (low, CalmRule::Given, false),
        None => {
            let (low, rule) = calm_default(service);
            let below = high.saturating_sub(1);
            (low.min(below), rule, low > below)
        }
    };
    Some(ChosenRegions {
        regions: Regions { high, low },
        storm,
        calm,
        calm_held_below,
    })
}

/// The storm region's default and its rule, if any applies.
fn storm_default(service: &ServiceShape) -> Option<(usize, StormRule)> {
    let by_timeout = match (service.workers, service.timeout) {
        (Some(workers), Some((timeout_ns, timeout_is_mean))) if service.mean_service_ns > 0.0 => {
            let level = TIMEOUTS_DEEP * f64::from(workers) * timeout_ns / service.mean_service_ns;
            // Rounded up, but not past a whole number by rounding error.
            let level = (level - 1e-9 * level.max(1.0)).ceil();
            // At least 1; beyond u32 it is no level a run reaches anyway.
            let level = level.clamp(1.0, f64::from(u32::MAX)) as usize;
            Some((
                level,
                StormRule::Timeout {
                    workers,
                    timeout_ns,
                    timeout_is_mean,
                    mean_service_ns: service.mean_service_ns,
                },
            ))
        }
        _ => None,
    };
    let by_queue = service.queue_limit.map(|queue_limit| {
        let level = (queue_limit as usize * 9).div_ceil(10).max(1);
        (level, StormRule::QueueFull { queue_limit })
    });
    match (by_timeout, by_queue) {
        (Some(t), Some(q)) => Some(if q.0 < t.0 { q } else { t }),
        (t, q) => t.or(q),
    }
}

/// The calm region's default and its rule.
fn calm_default(service: &ServiceShape) -> (usize, CalmRule) {
    if let Some(queue_limit) = service.queue_limit {
        return (
            queue_limit as usize / 10,
            CalmRule::QueueTenth { queue_limit },
        );
    }
    match (service.workers, service.offered_load) {
        (Some(workers), Some(rho)) if rho < 1.0 => (
            steady_queue_exceeded(workers, rho, CALM_EXCEEDED),
            CalmRule::SteadyState {
                workers,
                offered_load: rho,
            },
        ),
        (_, rho) => (0, CalmRule::Empty { offered_load: rho }),
    }
}

/// Erlang's C formula: the chance an arrival waits in an M/M/c queue of
/// `workers` at offered load `rho` < 1 (by Erlang B's recursion, which
/// stays within [0, 1] at any number of workers).
pub fn erlang_c(workers: u32, rho: f64) -> f64 {
    let a = rho * f64::from(workers);
    let mut b = 1.0;
    for k in 1..=workers {
        b = a * b / (f64::from(k) + a * b);
    }
    b / (1.0 - rho * (1.0 - b))
}

/// The least number of waiting attempts an M/M/c queue (`workers`, offered
/// load `rho` < 1) exceeds at most `share` of the time: P(Lq > k) =
/// C(c, a)·ρ^(k+1).
pub fn steady_queue_exceeded(workers: u32, rho: f64, share: f64) -> usize {
    if rho <= 0.0 {
        return 0;
    }
    let mut k = 0;
    let mut above = erlang_c(workers, rho) * rho;
    while above > share {
        k += 1;
        above *= rho;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service of `workers` of 10 ms, at `rho`, with a timeout and a
    /// queue limit if given.
    fn shape(
        workers: u32,
        timeout_ms: Option<f64>,
        queue_limit: Option<u32>,
        rho: f64,
    ) -> ServiceShape {
        ServiceShape {
            workers: Some(workers),
            mean_service_ns: 10e6,
            timeout: timeout_ms.map(|t| (t * 1e6, false)),
            queue_limit,
            offered_load: Some(rho),
        }
    }

    #[test]
    fn the_storm_is_twice_the_backlog_the_workers_clear_within_a_timeout() {
        // 8 workers × 1 s / 10 ms: an attempt behind 800 waits 1 s; twice
        // that.
        let r = choose_regions(None, None, &shape(8, Some(1000.0), None, 0.5)).unwrap();
        assert_eq!(r.regions.high, 1600);
        assert!(matches!(r.storm, StormRule::Timeout { workers: 8, .. }));
        // Rounded up: 2 × 3 × 12.5 ms / 10 ms = 7.5.
        let r = choose_regions(None, None, &shape(3, Some(12.5), None, 0.5)).unwrap();
        assert_eq!(r.regions.high, 8);
        // A whole number stays one, rounding error and all: 2 × 7 × 0.7 ms
        // / 10 ms is 0.98 exactly, 0.9799999999999999 in floating point.
        let r = choose_regions(None, None, &shape(7, Some(0.7), None, 0.5)).unwrap();
        assert_eq!(r.regions.high, 1);
        let r = choose_regions(None, None, &shape(30, Some(10.0 / 3.0), None, 0.5)).unwrap();
        assert_eq!(r.regions.high, 20);
        // A queue limit that fills first wins: 90% of 100, not 1600.
        let r = choose_regions(None, None, &shape(8, Some(1000.0), Some(100), 0.5)).unwrap();
        assert_eq!(
            (r.regions.high, r.storm),
            (90, StormRule::QueueFull { queue_limit: 100 })
        );
        // One that does not, loses: the timeout's 160 is below 900.
        let r = choose_regions(None, None, &shape(8, Some(100.0), Some(1000), 0.5)).unwrap();
        assert_eq!(r.regions.high, 160);
        // Neither a timeout nor a queue limit: no default.
        assert_eq!(choose_regions(None, None, &shape(8, None, None, 0.5)), None);
        // Unbounded workers never queue: a timeout alone gives none.
        let unbounded = ServiceShape {
            workers: None,
            ..shape(1, Some(1000.0), None, 0.5)
        };
        assert_eq!(choose_regions(None, None, &unbounded), None);
        // Given, it is kept, rule or no rule.
        let r = choose_regions(Some(123), None, &shape(8, None, None, 0.5)).unwrap();
        assert_eq!((r.regions.high, r.storm), (123, StormRule::Given));
    }

    #[test]
    fn calm_is_a_tenth_of_the_queue_or_what_the_steady_state_keeps() {
        // With a queue limit, the former default: 90% and 10% of it.
        let r = choose_regions(None, None, &shape(1, None, Some(25), 0.5)).unwrap();
        assert_eq!((r.regions.high, r.regions.low), (23, 2));
        assert_eq!(r.calm, CalmRule::QueueTenth { queue_limit: 25 });
        // M/M/1 at ρ 0.5: P(Lq > k) = 0.5^(k+2), at most 5% from k = 3
        // (0.0625 at k = 2, 0.03125 at k = 3).
        let r = choose_regions(None, None, &shape(1, Some(1000.0), None, 0.5)).unwrap();
        assert_eq!(r.regions.low, 3);
        // At ρ ≥ 1 no steady state: calm is an empty backlog.
        let r = choose_regions(None, None, &shape(1, Some(1000.0), None, 1.2)).unwrap();
        assert_eq!(
            (r.regions.low, r.calm),
            (
                0,
                CalmRule::Empty {
                    offered_load: Some(1.2)
                }
            )
        );
        // Held one below a storm region given below it.
        let r = choose_regions(Some(2), None, &shape(1, None, None, 0.5)).unwrap();
        assert_eq!(r.regions, Regions { high: 2, low: 1 });
        assert!(r.calm_held_below);
        let r = choose_regions(Some(2), Some(7), &shape(1, None, None, 0.5)).unwrap();
        assert_eq!((r.regions.low, r.calm), (7, CalmRule::Given));
        assert!(r.regions.storm(2) && !Regions { high: 4, low: 1 }.storm(3));
        assert!(r.regions.calm(7) && !r.regions.calm(8));
    }

    #[test]
    fn erlang_c_meets_its_closed_forms() {
        // One worker: the chance of waiting is ρ.
        assert!((erlang_c(1, 0.4) - 0.4).abs() < 1e-12);
        // Two workers at ρ 0.8 (a = 1.6): C = 2ρ²/(1 + ρ) = 0.71111...
        assert!((erlang_c(2, 0.8) - 1.28 / 1.8).abs() < 1e-12);
        // Many workers stay finite and in [0, 1].
        let c = erlang_c(100_000, 0.99);
        assert!((0.0..=1.0).contains(&c), "{c}");
    }
}
