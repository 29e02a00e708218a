//! The typed description of one simulated workload, and the accepted range of
//! every parameter.
//!
//! Each parameter has one checker here, used both by the command line (so an
//! error names the flag) and by [`RunSpec::validate`] (for specs built in code
//! or read from files), so the accepted ranges are stated once.

use crate::base::names::named;
use crate::base::time::Micros;
use crate::base::time::Nanos;
use crate::control::ControlSpec;
use crate::control::retry_after::RetryAfter;
use crate::model::arrivals::Arrivals;
use crate::model::{ResourceKind, SlotResource};
use crate::policy::{CapMode, PolicyKind, PolicySpec};

/// Most clients in one run: a million-client run takes ~40 MB; this bound keeps
/// a typo from asking for terabytes.
pub const MAX_CLIENTS: u64 = 100_000_000;
/// Most replicate seeds in one command.
pub const MAX_SEEDS: u64 = 1_000_000;
/// Capacity bounds, requests per ms: from one per second to one per µs (the
/// clock's resolution).
pub const CAPACITY_RANGE: (f64, f64) = (0.001, 1_000.0);

/// Most attempts a client may be allowed.
pub const MAX_ATTEMPTS: u64 = 1_000_000_000;

/// One simulated workload: everything but the seed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// Clients, each wanting one successful call.
    pub clients: u32,
    /// What decides whether a call succeeds.
    pub resource: ResourceKind,
    /// The slot resource's capacity, requests per ms.
    pub capacity_per_ms: f64,
    /// When the clients make their first calls.
    pub arrivals: Arrivals,
    /// A window `[from, to)` in which every call to the slot resource fails, µs.
    pub down: Option<(Micros, Micros)>,
    /// The backoff policy and its parameters.
    pub policy: PolicySpec,
    /// Most attempts per client, first call included; `None` is unlimited.
    pub max_attempts: Option<u32>,
    /// No attempt starts later than this after the client's first call, µs.
    pub deadline_us: Option<Micros>,
    /// Which failed attempts are retried (server model).
    pub retry_on: crate::model::retry_on::RetryOn,
    /// Hedged requests (server model): the delay between one copy of a
    /// request and the next, µs; `None` sends one attempt at a time.
    pub hedge_delay_us: Option<Micros>,
    /// Hedging on per-attempt timeout (server model, Envoy's
    /// `hedge_on_per_try_timeout`).
    pub hedge_on_timeout: crate::model::timeout_hedging::HedgeOnTimeout,
    /// The window of the peak-retries metric, µs; `None` is one service time
    /// of the slot resource, or 1 ms for the others.
    pub window_us: Option<Micros>,
    /// How the clients' policy generators are seeded.
    pub seeding: Seeding,
    /// A retry budget (`budget`); `None` is unlimited.
    pub budget: Option<ControlSpec>,
    /// A circuit breaker, on retries or on calls (`breaker`).
    pub breaker: Option<ControlSpec>,
    /// A client-side throttle (`throttle`).
    pub throttle: Option<ControlSpec>,
    /// Clients (sources) per scope of the controls' state; `None` is one
    /// scope of all.
    pub fleet: Option<u32>,
    /// What clients do with the slot resource's retry hint.
    pub retry_after: RetryAfter,
    /// The server model's load and server (used when `resource` is
    /// `server`).
    pub server: ServerParams,
    /// The occ model's server, write time and end (used when `resource` is
    /// `occ`).
    pub occ: crate::model::occ::OccParams,
}

/// How the clients' policy generators are seeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Seeding {
    /// Every client's draws independent of every other's.
    #[default]
    Independent,
    /// Every client's generator seeded alike: the fleet bug of seed 002's
    /// failure table ("every client seeds its RNG from the same fixed value").
    Shared,
}

named!(Seeding, "seeding", {
    Seeding::Independent => "independent",
    Seeding::Shared => "shared",
});

pub mod bounds;
pub mod error;
pub mod params;
pub mod server;
pub mod server_load;
pub mod undecided;
mod values;

pub use error::{ParamError, SpecError, Years};
pub use server::ServerParams;
pub use values::*;

/// Why `backoff:uncounted` cannot go with hedging on timeout.
const UNCOUNTED_KEPT: &str = "backoff:uncounted counts a retry while its attempt is in flight, \
                              and Envoy's count of a kept attempt's retry ends at its timeout: \
                              leave backoff counted (Envoy's code)";

/// The default first-retry delay: 100 ms (seed 002's `BASE_MS`).
pub const DEFAULT_BASE_US: Micros = Micros::from_ms(100);
/// resilience4j's `IntervalFunction.DEFAULT_RANDOMIZATION_FACTOR`.
pub const DEFAULT_RANDOMIZATION_FACTOR: f64 = 0.5;
/// `aws-2026`'s default base after a throttle: botocore's
/// `throttling_base_scale`, 1 s.
pub const DEFAULT_THROTTLE_BASE_US: Micros = Micros::from_s(1);
/// The default cap: 20 s (seed 002's `CAP_MS`).
pub const DEFAULT_CAP_US: Micros = Micros::from_s(20);
/// The default herd: 1,000 clients (seed 002's table).
pub const DEFAULT_CLIENTS: u32 = 1_000;

impl Default for RunSpec {
    /// The default workload of `herdsim run`, `sweep` and scenario files:
    /// seed 002's, with 1,000 clients under full jitter.
    fn default() -> Self {
        RunSpec::seed_002(PolicyKind::Full, DEFAULT_CLIENTS)
    }
}

impl RunSpec {
    /// Seed 002's workload for `clients` clients under `kind`: capacity 1 per
    /// ms, base 100 ms, cap 20 s, linear step equal to the base, no jitter
    /// factor, a one-slot peak window. The defaults of `herdsim run`.
    pub fn seed_002(kind: PolicyKind, clients: u32) -> RunSpec {
        RunSpec {
            clients,
            resource: ResourceKind::Slot,
            capacity_per_ms: 1.0,
            arrivals: Arrivals::Herd,
            down: None,
            policy: PolicySpec {
                kind,
                base_us: DEFAULT_BASE_US,
                cap_us: DEFAULT_CAP_US,
                step_us: None,
                jitter_factor: 0.0,
                first_exponent: 0,
                multiplier: 2.0,
                cap_mode: CapMode::Before,
                randomization_factor: DEFAULT_RANDOMIZATION_FACTOR,
                throttle_base_us: DEFAULT_THROTTLE_BASE_US,
            },
            max_attempts: None,
            deadline_us: None,
            retry_on: crate::model::retry_on::RetryOn::ALL,
            hedge_delay_us: None,
            hedge_on_timeout: crate::model::timeout_hedging::HedgeOnTimeout::Off,
            window_us: None,
            seeding: Seeding::Independent,
            budget: None,
            breaker: None,
            throttle: None,
            fleet: None,
            retry_after: RetryAfter::Ignore,
            server: ServerParams::default(),
            occ: crate::model::occ::OccParams::default(),
        }
    }

    /// The slot's service time, ns.
    pub fn service_ns(&self) -> Nanos {
        SlotResource::service_ns_for(self.capacity_per_ms)
    }

    /// The peak-retries window actually used, µs: the given one, or one service
    /// time rounded to the nearest µs.
    pub fn window(&self) -> Micros {
        self.window_us.unwrap_or_else(|| match self.resource {
            ResourceKind::Slot => self.service_ns().round_us().max(Micros::from_us(1)),
            ResourceKind::Server => server::DEFAULT_SERVER_WINDOW_US,
            _ => crate::base::time::US_PER_MS,
        })
    }

    /// Roughly the latest simulated time this workload could reach, µs, as
    /// its three parts with the parameter each comes from: the last first
    /// call (Poisson arrivals: 50 times their mean span), the end of any
    /// outage window (and the outage model's 30 s), and the longest client
    /// life after its first call. A client's life is at most `clients` waits
    /// of the largest delay (plus a retry hint of the whole backlog) and
    /// service times; with `max_attempts` m, at most m − 1 waits; with a
    /// deadline, at most the deadline and one service. A guard against
    /// clocks wrapping, not a prediction.
    fn horizon_parts(&self) -> [(&'static str, f64); 3] {
        let clients = f64::from(self.clients);
        let service = (self.service_ns().ticks() as f64 / 1e3).max(1.0);
        let hint = if self.retry_after == RetryAfter::Ignore {
            0.0
        } else {
            clients * service
        };
        let arrivals = match self.arrivals {
            Arrivals::Herd => 0.0,
            Arrivals::Uniform { window_us } => window_us.ticks() as f64,
            Arrivals::Poisson { rate_per_ms } => clients * 1e3 / rate_per_ms * 50.0,
        };
        let outage = self.down.map_or(0.0, |(_, to)| to.ticks() as f64) + 30e6 + 1e6;
        let wait = self.policy.max_delay_us().ticks() as f64 + hint;
        let mut life = ("cap", clients * (wait + service));
        if let Some(m) = self.max_attempts {
            let m = f64::from(m);
            life.1 = life.1.min((m - 1.0) * wait + m * service);
        }
        if let Some(deadline) = self.deadline_us
            && (deadline.ticks() as f64 + service) < life.1
        {
            life = ("deadline", deadline.ticks() as f64 + service);
        }
        [("arrivals", arrivals), ("down", outage), life]
    }

    /// Simulated time is whole µs in a `u64`, and the slot's clock counts ns:
    /// a workload that could run past `u64::MAX` ns (584 years) is refused
    /// rather than let its clock wrap, naming the parameter that makes it so
    /// long.
    fn check_horizon(&self) -> Result<(), (&'static str, ParamError)> {
        const LIMIT_US: f64 = u64::MAX as f64 / 1e3;
        let parts = self.horizon_parts();
        let horizon: f64 = parts.iter().map(|(_, us)| us).sum();
        if horizon < LIMIT_US {
            return Ok(());
        }
        let (key, _) = parts
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("three parts");
        Err((
            key,
            ParamError::Horizon {
                clients: self.clients,
                years: Years(horizon / 1e6 / 3.156e7),
                lower: match *key {
                    "arrivals" => "raise the arrival rate or lower clients",
                    "down" => "end the outage window sooner",
                    "deadline" => "lower the deadline",
                    _ => "lower cap, clients or max_attempts",
                },
            },
        ))
    }

    /// The longest delay a client can wait before a retry, µs: the policy's
    /// largest ([`PolicySpec::max_delay_us`]), none for immediate retries,
    /// and for the exponential family with an attempt limit the ceiling of
    /// the last retry allowed. It sets the default patience window.
    pub fn longest_retry_delay_us(&self) -> Micros {
        let p = &self.policy;
        let largest = p.max_delay_us();
        match (p.kind, self.max_attempts) {
            (PolicyKind::NoBackoff, _) => Micros::ZERO,
            (PolicyKind::None | PolicyKind::Equal | PolicyKind::Full, Some(m)) => {
                let retries = m.saturating_sub(1);
                if retries == 0 {
                    return Micros::ZERO;
                }
                let ceiling = crate::policy::exponential_ceiling(
                    p.base_us,
                    p.cap_us,
                    retries.saturating_add(p.first_exponent),
                );
                // The jitter factor's overshoot, as in `max_delay_us`.
                let overshoot = Micros::from_ticks(
                    (ceiling.ticks() as f64 * p.jitter_factor / 2.0).ceil() as u64,
                );
                (ceiling + overshoot).min(largest)
            }
            _ => largest,
        }
    }

    /// The server model's patience window, µs: the given one or the default
    /// ([`server::ServerParams::default_patience_us`]).
    pub fn patience_us(&self) -> Micros {
        self.server.patience_us.unwrap_or_else(|| {
            self.server
                .default_patience_us(self.longest_retry_delay_us())
        })
    }

    /// Where the server model's run is cut, µs, defaults resolved (`None`:
    /// never).
    pub fn horizon_us(&self) -> Option<Micros> {
        self.server.horizon_with(self.patience_us())
    }

    /// The server model's load duration, µs, defaults resolved.
    pub fn duration_us(&self) -> Micros {
        self.server.duration_with(self.patience_us())
    }

    /// The run's retry controls: its budget, breaker and throttle, those
    /// given.
    pub fn controls(&self) -> Vec<ControlSpec> {
        [self.budget, self.breaker, self.throttle]
            .into_iter()
            .flatten()
            .collect()
    }

    /// Of the parameters `given` (registry keys), those this workload does not
    /// use, each with why: a step with a policy that has none, a fleet with no
    /// budget. They are not errors (a grid may give them for its other
    /// points); a single run says so.
    pub fn unused(&self, given: &[&'static str]) -> Vec<(&'static str, String)> {
        let kind = self.policy.kind;
        given
            .iter()
            .filter_map(|&key| {
                let why = match key {
                    "step" | "first_exponent" | "cap_mode" | "multiplier"
                        if !kind.parameters().contains(&key.replace('_', "-")) =>
                    {
                        format!("the {kind} policy does not use it")
                    }
                    _ if params::param(key).is_some_and(|p| !p.applies_to(self.resource)) => {
                        if params::param(key).is_some_and(|p| p.group == params::Group::Occ) {
                            format!(
                                "only the occ model uses it (this run is on {})",
                                self.resource
                            )
                        } else if self.resource == ResourceKind::Server {
                            "the server model does not use it (its load is rate, users or \
                             concurrency)"
                                .to_string()
                        } else {
                            format!(
                                "only the server model uses it (this run is on {})",
                                self.resource
                            )
                        }
                    }
                    "fleet" if self.controls().is_empty() => {
                        "there is no budget, breaker or throttle to share".to_string()
                    }
                    "fleet" if self.fleet.is_some_and(|n| n > self.clients) => format!(
                        "a fleet larger than the {} clients is one fleet of all of them",
                        self.clients
                    ),
                    _ => return None,
                };
                Some((key, why))
            })
            .collect()
    }

    /// With hedged requests, the parameter that cannot go with them and
    /// why, if any ([`crate::model::hedging`] says what is modelled: gRPC's
    /// hedging, with its retry throttle and the call's deadline alone).
    fn hedging_conflict(&self) -> Option<(&'static str, String)> {
        let only_throttle = "hedging is modelled with gRPC's retry throttle alone (budget \
                             grpc:...): how other controls count copies sent at once is not \
                             known";
        if self.max_attempts.is_none_or(|n| n < 2) {
            return Some((
                "max_attempts",
                "hedging needs its most copies per request: give max_attempts of at least 2 \
                 (gRPC refuses fewer)"
                    .to_string(),
            ));
        }
        let no_timeout = "a hedged copy has no timeout of its own (gRPC's hedgingPolicy has \
                          none; the deadline ends every copy): leave it out";
        if self.server.timeout_us.is_some() {
            return Some(("timeout", no_timeout.to_string()));
        }
        if !self.server.timeout_choices.is_empty() {
            return Some(("timeout_choices", no_timeout.to_string()));
        }
        if self.server.chain.depth > 1 {
            return Some((
                "depth",
                "hedging is modelled for the users' requests to one service, not in a chain"
                    .to_string(),
            ));
        }
        if self.breaker.is_some() {
            return Some(("breaker", only_throttle.to_string()));
        }
        if self.throttle.is_some() {
            return Some(("throttle", only_throttle.to_string()));
        }
        match self.budget {
            Some(b) if b.about().name != crate::control::grpc_throttle::ABOUT.name => {
                Some(("budget", only_throttle.to_string()))
            }
            Some(_) if self.deadline_us.is_none() => Some((
                "deadline",
                "with gRPC's retry throttle a hedged request can wait with no copy in flight \
                 and no hedge to come (grpc-java freezes no hedging when the throttle stops \
                 the first hedge): give a deadline to end it"
                    .to_string(),
            )),
            _ => None,
        }
    }

    /// With hedging on timeout, the parameter that cannot go with it and
    /// why, if any ([`crate::model::timeout_hedging`] says what is
    /// modelled: Envoy's router with its retry limits).
    fn timeout_hedging_conflict(&self) -> Option<(&'static str, String)> {
        use crate::control::ControlSpec;
        use crate::control::envoy_budget::BackoffCounting;
        let envoy_only = "hedging on timeout is modelled with Envoy's controls alone (budget envoy \
                          or envoy-max-retries, throttle envoy-max-requests): how others count \
                          an attempt kept past its timeout is not known";
        if self.hedge_delay_us.is_some() {
            return Some((
                "hedge_delay",
                "Envoy's hedging on timeout and gRPC's copies at a fixed delay are two \
                 mechanisms no client combines: give one"
                    .to_string(),
            ));
        }
        if self.server.timeout_us.is_none() && self.server.timeout_choices.is_empty() {
            return Some((
                "timeout",
                "hedging on timeout needs a per-attempt timeout: without one it never fires \
                 (as in Envoy without a per_try_timeout)"
                    .to_string(),
            ));
        }
        if self.server.timeout_noticed == crate::model::server::TimeoutNoticed::Reply {
            return Some((
                "timeout_noticed",
                "the attempt is kept when its timeout passes: leave timeout_noticed at deadline"
                    .to_string(),
            ));
        }
        if self.server.chain.depth > 1 {
            return Some((
                "depth",
                "hedging on timeout is modelled for the users' requests to one service, not in \
                 a chain"
                    .to_string(),
            ));
        }
        if self.server.deadline_propagation
            != crate::control::deadline_propagation::DeadlinePropagation::Off
        {
            return Some((
                "deadline_propagation",
                "a kept attempt's deadline is not modelled (Envoy then tells the upstream the \
                 route's timeout, not the per-try one)"
                    .to_string(),
            ));
        }
        if self.breaker.is_some() {
            return Some(("breaker", envoy_only.to_string()));
        }
        if self
            .throttle
            .is_some_and(|t| !matches!(t, ControlSpec::EnvoyMaxRequests(_)))
        {
            return Some(("throttle", envoy_only.to_string()));
        }
        match self.budget {
            Some(ControlSpec::Envoy(b)) if b.backoff == BackoffCounting::Uncounted => {
                Some(("budget", UNCOUNTED_KEPT.to_string()))
            }
            Some(ControlSpec::EnvoyMaxRetries(b)) if b.backoff == BackoffCounting::Uncounted => {
                Some(("budget", UNCOUNTED_KEPT.to_string()))
            }
            Some(ControlSpec::Envoy(_) | ControlSpec::EnvoyMaxRetries(_)) | None => None,
            Some(_) => Some(("budget", envoy_only.to_string())),
        }
    }

    /// A value that cannot go with `other`'s: named as given, or as its
    /// default when it has the default's value (a message must not name a
    /// flag as if the user gave it when nobody did).
    fn conflict(&self, other: &'static str, why: String) -> ParamError {
        let param = params::param(other).expect("a registry key");
        let shown = (param.show)(self);
        if shown == (param.show)(&RunSpec::default()) {
            let shown = shown.unwrap_or_else(|| param.absent.unwrap_or("none").to_string());
            ParamError::ConflictWithDefault { other, shown, why }
        } else {
            ParamError::Conflict { other, why }
        }
    }

    /// Checks every parameter against its accepted range (each value shown
    /// and read back through its registry entry, so a spec built in code
    /// meets the same ranges as the command line and scenario files), then
    /// the rules that tie parameters together.
    pub fn validate(&self) -> Result<(), SpecError> {
        let mut scratch = self.clone();
        for param in &params::PARAMS {
            if let Some(value) = (param.show)(self)
                && let Err(reason) = (param.set)(&mut scratch, &value)
            {
                return Err(SpecError {
                    key: param.key,
                    value,
                    reason,
                });
            }
        }
        let fail = |key, value: String, reason| Err(SpecError { key, value, reason });
        let p = &self.policy;
        // A zero delay never lets simulated time pass for the client that
        // draws it: with a resource that answers at once, it would spin. On
        // the server a budget of tokens ends it: every retry spends what only
        // new requests and time earn back (Brooker's adaptive bucket has no
        // cap of its own). Envoy's counts retries in flight, spending nothing.
        // A timeout noticed at the late reply lets at least the timeout pass
        // before each retry, and a horizon given ends the run (the default
        // one would too, but a spin until it is a mistake to name).
        let paced = self.server.timeout_noticed == crate::model::server::TimeoutNoticed::Reply
            && self.server.horizon_us.is_some_and(|h| h.is_some());
        let spends = |budget: Option<ControlSpec>| {
            budget.is_some_and(|b| {
                ![
                    crate::control::envoy_budget::ABOUT.name,
                    crate::control::envoy_max_retries::ABOUT.name,
                ]
                .contains(&b.about().name)
            })
        };
        let spends_tokens = spends(self.budget);
        if p.kind == PolicyKind::NoBackoff
            && self.resource != ResourceKind::Occ
            && self.max_attempts.is_none()
            && !(self.resource == ResourceKind::Server && (spends_tokens || paced))
        {
            return fail(
                "policy",
                p.kind.name().to_string(),
                ParamError::NoBackoffSpins {
                    resource: self.resource.name(),
                    hint: if self.resource == ResourceKind::Server {
                        ", a budget that spends tokens, or a timeout noticed at the reply and a horizon"
                    } else {
                        ", or use the occ resource"
                    },
                },
            );
        }
        // Envoy refuses a max_interval below its base_interval (in the whole
        // ms it keeps them in), and its backoff asserts the order.
        if p.kind == PolicyKind::Envoy
            && crate::policy::envoy_ms(p.cap_us) < crate::policy::envoy_ms(p.base_us)
        {
            return fail(
                "cap",
                crate::base::time::format_duration(p.cap_us),
                self.conflict(
                    "base",
                    "the envoy policy needs a cap (max_interval) of at least the base \
                     (base_interval), in whole ms, as Envoy refuses a smaller one"
                        .to_string(),
                ),
            );
        }
        // The same for a service of a chain that backs off by no-backoff
        // of its own: an attempt limit or a budget that spends ends it.
        if self.resource == ResourceKind::Server {
            let chain = &self.server.chain;
            let users = [self.budget, self.breaker, self.throttle];
            let limits = chain.attempt_limits(self.max_attempts);
            for i in 0..chain.depth.saturating_sub(1) as usize {
                let [budget, ..] = chain.own_controls(i, users);
                if chain.policy_of(i, p).kind == PolicyKind::NoBackoff
                    && limits[i + 1].is_none()
                    && !spends(budget)
                {
                    let own = chain.layers.get(i).is_some_and(|l| l.policy.is_some());
                    return fail(
                        "layer_specs",
                        server::show_layer_specs(&chain.layers),
                        ParamError::LayerSetting {
                            service: i + 1,
                            key: "policy",
                            why: format!(
                                "it backs off by no-backoff ({}) with no attempt limit and no \
                                 budget that spends, so its retries never end: give it \
                                 max_attempts",
                                if own { "its own" } else { "the users' policy" }
                            ),
                        },
                    );
                }
            }
        }
        if self.resource != ResourceKind::Slot && self.retry_after != RetryAfter::Ignore {
            return fail(
                "retry_after",
                self.retry_after.name().to_string(),
                ParamError::HintsFromSlotOnly,
            );
        }
        if self.resource != ResourceKind::Server
            && let Some(delaying) = self
                .controls()
                .into_iter()
                .find(|c| c.about().delays_attempts)
        {
            return fail(
                delaying.family().key(),
                delaying.to_string(),
                self.conflict(
                    "resource",
                    format!(
                        "a rate limiter delays attempts, which only the server model can do \
                         (this run is on {})",
                        self.resource
                    ),
                ),
            );
        }
        if self.resource == ResourceKind::Server
            && let Some(deadline) = self.deadline_us
            && self.server.timeout_noticed == crate::model::server::TimeoutNoticed::Reply
        {
            return fail(
                "deadline",
                crate::base::time::format_duration(deadline),
                self.conflict(
                    "timeout_noticed",
                    "a request's deadline is noticed when it passes: leave timeout_noticed at \
                     deadline"
                        .to_string(),
                ),
            );
        }
        if self.resource == ResourceKind::Server
            && self.hedge_on_timeout == crate::model::timeout_hedging::HedgeOnTimeout::On
            && let Some((other, why)) = self.timeout_hedging_conflict()
        {
            return fail(
                "hedge_on_timeout",
                "on".to_string(),
                self.conflict(other, why),
            );
        }
        if self.resource == ResourceKind::Server
            && let Some(delay) = self.hedge_delay_us
            && let Some((other, why)) = self.hedging_conflict()
        {
            return fail(
                "hedge_delay",
                crate::base::time::format_duration(delay),
                self.conflict(other, why),
            );
        }
        if self.resource == ResourceKind::Server
            && let Some((key, other, why)) = self.server.conflicts()
        {
            let value = (params::param(key).expect("a registry key").show)(self);
            return fail(key, value.unwrap_or_default(), self.conflict(other, why));
        }
        // The server model's clock is u64 ns and every duration at most 365
        // days, so no sum of the few it adds can wrap: the guard is the herd
        // models'.
        if self.resource != ResourceKind::Server
            && let Err((key, reason)) = self.check_horizon()
        {
            let param = params::param(key).expect("a registry key");
            let value = (param.show)(self).unwrap_or_default();
            return fail(param.key, value, reason);
        }
        if self.resource != ResourceKind::Slot && self.down.is_some() {
            return fail(
                "down",
                self.down
                    .map(|(a, b)| format_window(a, b))
                    .unwrap_or_default(),
                ParamError::DownOnSlotOnly,
            );
        }
        bounds::check_fits(self)
    }
}

/// The server model's spec with `flags` (key, value) set, for tests.
#[cfg(test)]
pub(crate) fn server_spec_with(flags: &[(&str, &str)]) -> RunSpec {
    let mut spec = RunSpec {
        resource: crate::model::ResourceKind::Server,
        ..RunSpec::default()
    };
    for (key, value) in flags {
        (params::param(key).unwrap().set)(&mut spec, value).unwrap();
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyKind;

    fn spec() -> RunSpec {
        RunSpec::seed_002(PolicyKind::Full, DEFAULT_CLIENTS)
    }

    #[test]
    fn the_default_workload_is_valid_and_its_window_is_one_slot() {
        assert_eq!(spec().validate(), Ok(()));
        assert_eq!(spec().window(), Micros::from_ms(1));
        let fast = RunSpec {
            capacity_per_ms: 3.0,
            ..spec()
        };
        assert_eq!(fast.window(), Micros::from_us(333));
    }

    #[test]
    fn each_bad_parameter_is_named() {
        let mut s = spec();
        s.clients = 0;
        assert_eq!(s.validate().unwrap_err().key, "clients");
        let mut s = spec();
        s.capacity_per_ms = 0.0;
        assert_eq!(s.validate().unwrap_err().key, "capacity");
        s.capacity_per_ms = f64::NAN;
        assert_eq!(s.validate().unwrap_err().key, "capacity");
        let mut s = spec();
        s.policy.base_us = Micros::ZERO;
        assert_eq!(s.validate().unwrap_err().key, "base");
        let mut s = spec();
        s.policy.jitter_factor = 1.5;
        let err = s.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value '1.5' for jitter_factor: expected a number from 0 to 1 (0 is off)"
        );
        let mut s = spec();
        s.window_us = Some(Micros::ZERO);
        assert_eq!(s.validate().unwrap_err().key, "window");
    }

    #[test]
    fn the_clock_guard_names_the_parameter_that_makes_a_run_too_long() {
        const YEAR_US: u64 = 8_760 * 3_600_000_000;
        let mut s = spec();
        s.arrivals = Arrivals::Poisson {
            rate_per_ms: 5e-324,
        };
        assert_eq!(s.validate().unwrap_err().key, "arrivals");
        let mut s = spec();
        s.clients = 100_000_000;
        s.policy.cap_us = Micros::from_ticks(YEAR_US);
        let err = s.validate().unwrap_err();
        assert_eq!(err.key, "cap");
        assert!(
            err.to_string()
                .contains("lower cap, clients or max_attempts"),
            "{err}"
        );
        // Two attempts bound each client to one wait: 2,000 clients with a
        // one-year cap last at most a year, not 2,000.
        let mut s = spec();
        s.clients = 2_000;
        s.policy.cap_us = Micros::from_ticks(YEAR_US);
        assert!(s.validate().is_err());
        s.max_attempts = Some(2);
        assert_eq!(s.validate(), Ok(()));
        // So does a deadline.
        s.max_attempts = None;
        s.deadline_us = Some(Micros::from_s(3600));
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn parameters_a_workload_does_not_use_are_named() {
        let mut s = spec();
        assert_eq!(
            s.unused(&["cap_mode", "first_exponent", "multiplier", "clients"]),
            vec![]
        );
        s.policy.kind = PolicyKind::GrpcRetry;
        assert_eq!(s.unused(&["multiplier"]), vec![]);
        s.policy.kind = PolicyKind::GrpcConnection;
        assert_eq!(s.unused(&["multiplier"]).len(), 1);
        s.policy.kind = PolicyKind::Decorrelated;
        let unused: Vec<_> = s
            .unused(&["step", "cap_mode", "first_exponent", "multiplier", "fleet"])
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        assert_eq!(
            unused,
            ["step", "cap_mode", "first_exponent", "multiplier", "fleet"]
        );
        s.policy.kind = PolicyKind::Linear;
        s.budget = parse_control(crate::control::Family::Budget, "ratio:0.1,min:1").unwrap();
        s.fleet = Some(5_000);
        let unused = s.unused(&["step", "fleet"]);
        assert_eq!(unused.len(), 1);
        assert!(
            unused[0].1.contains("larger than the 1000 clients"),
            "{unused:?}"
        );
    }

    #[test]
    fn a_cap_below_the_base_is_valid() {
        let mut s = spec();
        s.policy.cap_us = Micros::from_ms(1);
        assert_eq!(s.validate(), Ok(()));
    }
}
