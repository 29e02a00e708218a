//! What a server workload offers and how long it runs: the offered load ρ
//! of each service, the backlog a trigger could leave, and from them the
//! verdict's patience window and the load's default duration (DESIGN Part
//! three: every server run states its offered load, and a default never
//! turns a verdict).

use super::server::{DEFAULT_RATE_PER_S, ServerParams};
use crate::base::time::Micros;
use crate::base::time::Nanos;
use crate::model::backlog::ServiceShape;
use crate::model::server::{NS_PER_US, TimeoutLaw, TriggerKind};

/// The load's duration without triggers, and its least with them, µs.
pub const DEFAULT_DURATION_US: Micros = Micros::from_s(10);
/// Retry cycles (the longest timeout plus the longest retry delay) the
/// default patience window spans: enough for every request caught in a
/// trigger to have made its last attempt several times over at the attempt
/// limits clients ship (3 to 5), and for a backlog built of them to drain.
pub const PATIENCE_CYCLES: u64 = 10;
/// Drain estimates the default patience window spans at least, so that a
/// service that works off its backlog at its spare capacity recovers well
/// inside the first three quarters of the window.
pub const PATIENCE_DRAINS: u64 = 3;
/// Patience windows after the load's end that a run may take to drain by
/// default before it is cut: a backlog that does not drain in three times
/// the patience is a service still stuck with retries that never run out,
/// whose run would otherwise grow without end (every stuck request retrying
/// into a queue that never empties).
pub const DRAIN_PATIENCES: u64 = 3;
/// The default patience window's least and most, µs (it is rounded up to
/// whole seconds): at least 10 s, 100 windows of the default series, enough
/// to see a recovery hold; at most 10 min, since a longer wait is a choice
/// to state with `--patience`.
pub const PATIENCE_RANGE_US: (Micros, Micros) = (Micros::from_s(10), Micros::from_s(600));

impl ServerParams {
    /// The longest per-attempt timeout, µs (0 without one).
    pub fn longest_timeout_us(&self) -> Micros {
        self.timeout_us
            .into_iter()
            .chain(self.timeout_choices.iter().copied())
            .max()
            .unwrap_or(Micros::ZERO)
    }

    /// The default patience window, µs, given the longest retry delay
    /// clients can wait: the longer of [`PATIENCE_CYCLES`] retry cycles (the
    /// longest timeout plus that delay) and [`PATIENCE_DRAINS`] times the
    /// drain estimate ([`Self::drain_estimate_us`]), within
    /// [`PATIENCE_RANGE_US`]. At an offered load of 1 or more there is no
    /// steady state to come back to, so no verdict to wait for: the least
    /// (a longer overloaded load only grows its queue, and with unbounded
    /// retries its memory).
    pub fn default_patience_us(&self, longest_delay_us: Micros) -> Micros {
        let (least, most) = PATIENCE_RANGE_US;
        if self.peak_offered_load().is_some_and(|rho| rho >= 1.0) {
            return least;
        }
        let cycle = self.longest_timeout_us().saturating_add(longest_delay_us);
        let cycles = cycle.saturating_mul(PATIENCE_CYCLES);
        let drains = self
            .drain_estimate_us()
            .map_or(Micros::ZERO, |d| d.saturating_mul(PATIENCE_DRAINS));
        // Whole seconds, so that the default reads as it is.
        let whole_s = cycles.max(drains).div_ceil(Micros::from_s(1));
        Micros::from_s(1).saturating_mul(whole_s).clamp(least, most)
    }

    /// Where the run is cut, µs, with patience window `patience_us`: the
    /// given horizon, none if `none` was given, or by default the load's
    /// end plus [`DRAIN_PATIENCES`] patience windows.
    pub fn horizon_with(&self, patience_us: Micros) -> Option<Micros> {
        self.horizon_us.unwrap_or_else(|| {
            Some(
                self.duration_with(patience_us)
                    .saturating_add(patience_us.saturating_mul(DRAIN_PATIENCES)),
            )
        })
    }

    /// How long the service needs, at its offered load ρ < 1, to work off
    /// the backlog its triggers could leave, µs: as if every trigger
    /// stopped service while arrivals kept coming (at a spike's factor k),
    /// `Σ length × k × ρ / (1 − ρ)`, the time spare capacity `(1 − ρ)`
    /// takes to serve `λ·k·length` queued requests. `None` without a
    /// trigger, or at ρ ≥ 1 (no steady state) or unbounded workers.
    pub fn drain_estimate_us(&self) -> Option<Micros> {
        let rho = self.peak_offered_load().filter(|&r| r < 1.0)?;
        let stalled: f64 = self
            .triggers
            .0
            .iter()
            .map(|t| {
                let k = match t.kind {
                    TriggerKind::LoadSpike(k) => k.max(1.0),
                    TriggerKind::Ramp { start, end } => start.max(end).max(1.0),
                    _ => 1.0,
                };
                (t.to - t.from).ticks() as f64 / NS_PER_US.ticks() as f64 * k
            })
            .sum();
        (stalled > 0.0).then(|| Micros::from_ticks((stalled * rho / (1.0 - rho)).ceil() as u64))
    }

    /// The requests per second the load offers each service: the open
    /// loop's rate, or for a closed loop the most its users can make (each
    /// thinks, then waits at least the mean service of every service in the
    /// chain: `users / (think + Σ E[S])`). Triggers' spikes and ramps are
    /// not in it: it is the load before and after them.
    pub fn offered_rate_per_s(&self) -> f64 {
        match self.users {
            None => self.rate_per_s.unwrap_or(DEFAULT_RATE_PER_S),
            Some(users) => {
                let uppers = (0..self.chain.depth as usize - 1)
                    .map(|i| self.chain.service_of(i).mean())
                    .sum::<f64>();
                let cycle_ns = self.think.mean() + uppers + self.service.mean();
                if cycle_ns > 0.0 {
                    f64::from(users) * 1e9 / cycle_ns
                } else {
                    f64::INFINITY
                }
            }
        }
    }

    /// The offered load ρ = λ·E[S]/c of each service, top first (the
    /// server last; one entry for the server alone): `λ` the offered rate,
    /// `E[S]` the service's mean service time, `c` its workers. `None` for
    /// unbounded workers, which never saturate. At ρ ≥ 1 the service has no
    /// steady state: its queue grows without a trigger, so a verdict of
    /// "stuck" says nothing about retries. Retries, failures and
    /// `service_per_busy` add to it; it is the load of first tries.
    pub fn offered_loads(&self) -> Vec<Option<f64>> {
        let rate_per_ns = self.offered_rate_per_s() / 1e9;
        let load = |service_ns: f64, workers: Option<u32>| {
            workers.map(|c| rate_per_ns * service_ns / f64::from(c))
        };
        (0..self.chain.depth as usize - 1)
            .map(|i| load(self.chain.service_of(i).mean(), self.chain.workers_of(i)))
            .chain(std::iter::once(load(self.service.mean(), self.workers)))
            .collect()
    }

    /// What the server's default backlog regions are derived from
    /// ([`crate::model::backlog::choose_regions`]): its workers, mean
    /// service, per-attempt timeout (the mean of per-request ones), queue
    /// limit and offered load.
    pub fn backlog_shape(&self) -> ServiceShape {
        let ns = |us: Micros| Nanos::of_us(us).ticks() as f64;
        let timeout = match (self.timeout_us, self.timeout_choices.as_slice()) {
            (Some(t), _) => Some((ns(t), self.timeout_law == TimeoutLaw::Exponential)),
            (None, []) => None,
            (None, choices) => Some((
                choices.iter().map(|&t| ns(t)).sum::<f64>() / choices.len() as f64,
                true,
            )),
        };
        ServiceShape {
            workers: self.workers,
            mean_service_ns: self.service.mean(),
            timeout,
            queue_limit: self.queue_limit,
            offered_load: self.offered_loads().last().copied().flatten(),
        }
    }

    /// The highest offered load of the chain's services (`None` if every
    /// one has unbounded workers).
    pub fn peak_offered_load(&self) -> Option<f64> {
        self.offered_loads().into_iter().flatten().reduce(f64::max)
    }

    /// The offered loads in words: "offered load ρ = 0.70" (or one per
    /// service of a chain), with a warning at ρ ≥ 1.
    pub fn describe_offered_load(&self) -> String {
        let loads = self.offered_loads();
        let show = |rho: Option<f64>| rho.map_or("unbounded".to_string(), |r| format!("{r:.3}"));
        let mut text = if loads.len() == 1 {
            format!(
                "offered load ρ = λ·E[S]/c = {}{}",
                show(loads[0]),
                if self.users.is_some() {
                    " (closed loop: λ = users / (think + mean service))"
                } else {
                    ""
                }
            )
        } else {
            let each: Vec<String> = loads
                .iter()
                .enumerate()
                .map(|(i, &rho)| {
                    let name = if i + 1 == loads.len() {
                        format!("{} (server)", i + 1)
                    } else {
                        (i + 1).to_string()
                    };
                    format!("{name} {}", show(rho))
                })
                .collect();
            format!(
                "offered load ρ = λ·E[S]/c of each service: {}",
                each.join(", ")
            )
        };
        if self.peak_offered_load().is_some_and(|rho| rho >= 1.0) {
            text += "; warning: at ρ ≥ 1 the queue grows without any trigger (no steady state), \
                     so recovery and \"stuck\" mean nothing here";
        }
        text
    }

    /// The triggers in numbers for a CSV: the first's start and length and
    /// the triggers' total length, ms (empty without a trigger).
    pub fn trigger_fields(&self) -> [Option<f64>; 3] {
        let Some(first) = self.triggers.0.iter().min_by_key(|t| t.from) else {
            return [None; 3];
        };
        let ms = |ns: Nanos| ns.ticks() as f64 / 1e6;
        let total: Nanos = self.triggers.0.iter().map(|t| t.to - t.from).sum();
        [
            Some(ms(first.from)),
            Some(ms(first.to - first.from)),
            Some(ms(total)),
        ]
    }

    /// The end of the last trigger, µs, if any.
    pub fn last_trigger_end_us(&self) -> Option<Micros> {
        self.triggers.0.iter().map(|t| t.to.whole_us()).max()
    }

    /// The load's duration with patience window `patience_us`: the given
    /// one, or the default: 10 s, and with triggers at least until the last
    /// one's end plus the patience window, so that the default run always
    /// reaches a verdict.
    pub fn duration_with(&self, patience_us: Micros) -> Micros {
        self.duration_us.unwrap_or_else(|| {
            self.last_trigger_end_us()
                .map_or(DEFAULT_DURATION_US, |end| {
                    end.saturating_add(patience_us).max(DEFAULT_DURATION_US)
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::server_spec_with as spec;

    /// The SRE case of issue 33.
    const SRE: [(&str, &str); 9] = [
        ("rate", "600"),
        ("workers", "16"),
        ("service", "lognormal:20ms/0.3"),
        ("timeout", "1s"),
        ("policy", "full"),
        ("base", "100ms"),
        ("cap", "1s"),
        ("max_attempts", "5"),
        ("trigger", "capacity:0@2s..5s"),
    ];

    #[test]
    fn the_offered_load_is_rate_times_mean_service_over_workers() {
        let s = spec(&SRE);
        let rho = 600.0 * 0.020 * (0.3f64 * 0.3 / 2.0).exp() / 16.0;
        assert!((s.server.offered_loads()[0].unwrap() - rho).abs() < 1e-12);
        // A closed loop offers what its users can: 10 users thinking 9 ms
        // over a 1 ms service make at most 1,000 requests/s.
        let closed = spec(&[("users", "10"), ("think", "exp:9ms")]);
        assert!((closed.server.offered_rate_per_s() - 1_000.0).abs() < 1e-9);
        assert!((closed.server.offered_loads()[0].unwrap() - 1.0).abs() < 1e-12);
        // Unbounded workers never saturate.
        assert_eq!(spec(&[("workers", "inf")]).server.offered_loads(), [None]);
    }

    #[test]
    fn the_default_patience_spans_ten_retry_cycles_or_three_drains() {
        // The SRE case: 10 × (1 s + 800 ms) = 18 s of cycles; the 3 s stall
        // at ρ = 0.785 drains in 3 × ρ/(1 − ρ) = 10.95 s, three times 32.9 s:
        // 33 s in whole seconds, and the load runs to 5 s + 33 s.
        let s = spec(&SRE);
        assert_eq!(s.longest_retry_delay_us(), Micros::from_ms(800));
        let drain = s.server.drain_estimate_us().unwrap();
        assert!(
            (10_900_000..11_000_000).contains(&drain.ticks()),
            "{drain:?}"
        );
        assert_eq!(s.patience_us(), Micros::from_s(33));
        assert_eq!(s.duration_us(), Micros::from_s(38));
        // Immediate retries with a 100 ms timeout: the 10 s floor.
        let immediate = spec(&[
            ("timeout", "100ms"),
            ("policy", "no-backoff"),
            ("max_attempts", "4"),
            ("trigger", "outage@2s..2.5s"),
        ]);
        assert_eq!(immediate.patience_us(), Micros::from_s(10));
        assert_eq!(immediate.duration_us(), Micros::from_ms(12_500));
        // Full jitter from 1 s, 4 attempts: the last retry's ceiling is 4 s,
        // so 10 × 4.1 s = 41 s.
        let jitter = spec(&[
            ("timeout", "100ms"),
            ("base", "1s"),
            ("max_attempts", "4"),
            ("trigger", "outage@2s..2.5s"),
        ]);
        assert_eq!(jitter.patience_us(), Micros::from_s(41));
        // Given values stand; without triggers the load is 10 s.
        let given = spec(&[("patience", "3s"), ("trigger", "outage@2s..2.5s")]);
        assert_eq!(
            (given.patience_us(), given.duration_us()),
            (Micros::from_s(3), Micros::from_s(10))
        );
        assert_eq!(spec(&[]).duration_us(), DEFAULT_DURATION_US);
        // Overloaded (ρ = 1.2): nothing to wait for, the least patience.
        let over = spec(&[
            ("rate", "1200"),
            ("timeout", "100ms"),
            ("trigger", "outage@2s..2.5s"),
        ]);
        assert_eq!(over.patience_us(), Micros::from_s(10));
    }
}
