//! The `server` model (DESIGN Part two): open- or closed-loop load against c
//! workers behind a FIFO queue, with network delays, per-attempt timeouts
//! that do not cancel the server's work, and triggers over time windows.
//!
//! This file holds what a server run is (its load, server, distributions and
//! triggers) and the draws of its distributions; the event loop is
//! [`crate::sim::server_loop`]. Time here is integer nanoseconds: whole
//! microseconds would bias short service times (an exponential of mean
//! 100 µs loses about 0.5% to rounding), and u64 ns still spans 584 years.

use crate::base::draws::Draws;
use crate::base::special::{ln_gamma, normal_upper_quantile};
use crate::base::time::{format_duration, parse_duration};
use crate::control::deadline_propagation::DeadlinePropagation;
use crate::control::queue_discipline::Discipline;
use crate::model::chain::Chain;
use crate::model::error::ModelError;

pub use crate::base::time::{NS_PER_MS, NS_PER_S, NS_PER_US, Nanos};
/// The end of the server model's clock, 2^63 ns (292 years): a run whose
/// next event lies at or past it stops there. Half the `u64` range, so any
/// duration the model adds to a time before it (each saturating) cannot
/// wrap to the start.
pub const CLOCK_END_NS: Nanos = Nanos::from_ticks(1 << 63);

/// A distribution of durations (service times, network delays, think times).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Always the same.
    Const(Nanos),
    /// Exponential with this mean.
    Exp {
        /// The mean, ns.
        mean: Nanos,
    },
    /// Lognormal by its median and the sigma of its logarithm.
    LogNormal {
        /// The median, ns.
        median: Nanos,
        /// The standard deviation of ln(duration).
        sigma: f64,
        /// The quantile sigma was found from, when the user gave one
        /// (`lognormal:80ms@p99=400ms`): kept so the distribution is shown
        /// back as it was written, exactly, beside its sigma.
        given_by: Option<Quantile>,
    },
    /// |Normal(mean, sd)|: a normal folded at 0, as backoff-simulator draws
    /// its write times (`abs(random.gauss(mu, sigma))`).
    FoldedNormal {
        /// The normal's mean, ns.
        mean: Nanos,
        /// Its standard deviation, ns.
        sd: Nanos,
    },
    /// Weibull by its mean and shape, as Brooker 2023's code gives its
    /// service times (`weibullvariate(mean / Γ(1 + 1/k), k)`).
    Weibull {
        /// The mean, ns.
        mean: Nanos,
        /// The shape k.
        shape: f64,
        /// The scale, mean / Γ(1 + 1/k), ns (derived, kept for the draws).
        scale: f64,
    },
}

/// A percentile of a distribution and its value: `p99=400ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantile {
    /// The percentile, strictly between 50 and 100 (99 for p99).
    pub percent: f64,
    /// Its value, ns.
    pub value: Nanos,
}

/// `x.round() as Nanos` (half away from zero, saturating, NaN to 0) without
/// a call into libm's `round` (a tenth of the event loop's time on an M/M/c
/// run). Inline: every draw of a run ends here.
///
/// Every draw of a run is far below 2^52, where truncating `x + 0.5` is
/// the rounding. From 0.5 up, 0.5 is a whole number of `x`'s units in the
/// last place (at most 1/2), so the sum is exact, unless it crosses a power
/// of two: then it lies below the power plus 1/2 and is rounded by at most
/// one unit, staying between the power (whole) and the next whole number,
/// so it truncates to the power, as the exact sum does. That is an addition
/// and one conversion between a draw and its event's time, where taking
/// the fraction `x − trunc(x)` and comparing it were four steps, one after
/// the other, on the path to the queue. Elsewhere (below 0.5, where the
/// sum can round up to 1; from 2^52, where `x` is whole and the sum a tie;
/// negative, huge, NaN) the fraction decides, exact there since `x` is
/// whole or below 2^52.
#[inline(always)]
pub fn round_ns(x: f64) -> Nanos {
    if (0.5..ROUND_FAST_BELOW).contains(&x) {
        // Through i64: one instruction (through u64, a dozen).
        return Nanos::from_ticks((x + 0.5) as i64 as u64);
    }
    let whole = Nanos::from_ticks(x as u64);
    if x - whole.ticks() as f64 >= 0.5 {
        whole.saturating_add(Nanos::from_ticks(1))
    } else {
        whole
    }
}

/// 2^52: [`round_ns`] takes its short path from 0.5 to below it.
const ROUND_FAST_BELOW: f64 = (1u64 << 52) as f64;

impl Dist {
    /// One draw, in whole ns (rounded to nearest). The constant and the
    /// exponential, a server run's usual draws, are inline; the shaped
    /// distributions are a call away.
    #[inline(always)]
    pub fn sample<D: Draws + ?Sized>(&self, draws: &mut D) -> Nanos {
        match *self {
            Dist::Const(d) => d,
            Dist::Exp { mean } => round_ns(mean.ticks() as f64 * draws.exp1()),
            _ => self.sample_shaped(draws),
        }
    }

    /// [`Self::sample`] of the distributions with a shape.
    #[inline(never)]
    fn sample_shaped<D: Draws + ?Sized>(&self, draws: &mut D) -> Nanos {
        match *self {
            Dist::Const(_) | Dist::Exp { .. } => self.sample(draws),
            Dist::LogNormal { median, sigma, .. } => {
                let z = standard_normal(draws);
                round_ns((median.ticks() as f64 * (sigma * z).exp()).min(u64::MAX as f64 / 4.0))
            }
            Dist::FoldedNormal { mean, sd } => {
                let z = standard_normal(draws);
                round_ns(
                    (mean.ticks() as f64 + sd.ticks() as f64 * z)
                        .abs()
                        .min(u64::MAX as f64 / 4.0),
                )
            }
            Dist::Weibull { scale, shape, .. } => {
                // Inverse transform: scale · (−ln U)^(1/k).
                let e = draws.exp1();
                round_ns((scale * e.powf(1.0 / shape)).min(u64::MAX as f64 / 4.0))
            }
        }
    }

    /// The mean, ns.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Const(d) => d.ticks() as f64,
            Dist::Exp { mean } => mean.ticks() as f64,
            Dist::LogNormal { median, sigma, .. } => {
                median.ticks() as f64 * (sigma * sigma / 2.0).exp()
            }
            Dist::Weibull { mean, .. } => mean.ticks() as f64,
            Dist::FoldedNormal { mean, sd } => {
                // E|X| for X ~ N(μ, σ²): σ√(2/π)·e^(−μ²/2σ²) + μ(1 − 2Φ(−μ/σ)).
                let (m, s) = (mean.ticks() as f64, sd.ticks() as f64);
                if s == 0.0 {
                    return m;
                }
                let ratio = m / s;
                s * (2.0 / std::f64::consts::PI).sqrt() * (-ratio * ratio / 2.0).exp()
                    + m * (1.0 - 2.0 * normal_cdf(-ratio))
            }
        }
    }

    /// True if every draw is 0 (no draw is taken then).
    pub fn is_zero(&self) -> bool {
        matches!(self, Dist::Const(Nanos::ZERO))
    }
}

/// Φ(x), the standard normal's distribution function (Abramowitz and
/// Stegun 7.1.26 for erf: error below 1.5e-7, plenty for a mean shown).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// A standard normal deviate (Box–Muller, one of the pair).
fn standard_normal<D: Draws + ?Sized>(draws: &mut D) -> f64 {
    let u1 = draws.unit_above_zero();
    let u2 = draws.unit_above_zero();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Service time: one distribution, or a two-part mixture (bimodal service:
/// most requests fast, a share slow).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Service {
    /// Every attempt from one distribution.
    One(Dist),
    /// With probability `share_second`, from `second`; else from `first`.
    Mixture {
        /// The common part.
        first: Dist,
        /// The other part.
        second: Dist,
        /// The probability of `second`, in [0, 1].
        share_second: f64,
    },
}

/// [`Service::sample`] of a mixture: which part, then its draw (a call
/// away, so the one-distribution draw stays short inline).
#[inline(never)]
fn sample_mixture<D: Draws + ?Sized>(
    first: &Dist,
    second: &Dist,
    share_second: f64,
    draws: &mut D,
) -> Nanos {
    if draws.unit_above_zero() <= share_second {
        second.sample(draws)
    } else {
        first.sample(draws)
    }
}

impl Service {
    /// One service time, ns: one distribution's draw inline (a draw a
    /// served attempt), the mixture's a call away.
    #[inline(always)]
    pub fn sample<D: Draws + ?Sized>(&self, draws: &mut D) -> Nanos {
        match self {
            Service::One(d) => d.sample(draws),
            Service::Mixture {
                first,
                second,
                share_second,
            } => sample_mixture(first, second, *share_second, draws),
        }
    }

    /// The mean, ns.
    pub fn mean(&self) -> f64 {
        match self {
            Service::One(d) => d.mean(),
            Service::Mixture {
                first,
                second,
                share_second,
            } => (1.0 - share_second) * first.mean() + share_second * second.mean(),
        }
    }

    /// The service time as a report describes it: each part as
    /// [`Dist::described`] gives it.
    pub fn described(&self) -> String {
        match self {
            Service::One(d) => d.described(),
            Service::Mixture {
                first,
                second,
                share_second,
            } => format!(
                "mix:{share_second}/{}/{}",
                first.described(),
                second.described()
            ),
        }
    }
}

/// Where requests come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Poisson arrivals at `rate_per_s` during `[0, duration)`, each from one
    /// of `sources` independent sources (a source owns per-client control
    /// state: its budget). With `concurrency`, a request waits at its client
    /// (FIFO, all sources together) for one of that many slots and holds it
    /// for its whole life; its latency counts from when it gets one.
    Open {
        /// Requests per second.
        rate_per_s: f64,
        /// Independent sources the arrivals are split among.
        sources: u32,
        /// Client-side concurrency limit, if any.
        concurrency: Option<u32>,
    },
    /// `users` users, each with one request at a time, thinking for a draw of
    /// `think` between the end of one and the start of the next (the first
    /// request after a first think), until the load's duration ends.
    Closed {
        /// Users.
        users: u32,
        /// Think time.
        think: Dist,
    },
}

impl Load {
    /// The open loop's arrival rate per second; `None` in a closed loop.
    pub fn rate_per_s(&self) -> Option<f64> {
        match *self {
            Load::Open { rate_per_s, .. } => Some(rate_per_s),
            Load::Closed { .. } => None,
        }
    }

    /// The sources whose control state is kept apart.
    pub fn sources(&self) -> u32 {
        match *self {
            Load::Open { sources, .. } => sources,
            Load::Closed { users, .. } => users,
        }
    }
}

/// What a trigger does during its window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TriggerKind {
    /// Every attempt completing inside fails.
    Outage,
    /// Each attempt completing inside fails with this probability, in place
    /// of the base failure rate.
    PartialFailure(f64),
    /// The same share of requests fail on every attempt completing inside
    /// (a request's fate is one draw, made when it is created); the others
    /// do not fail inside (the share replaces the base failure rate).
    PerUserFailure(f64),
    /// The arrival rate (open loop) is multiplied by this.
    LoadSpike(f64),
    /// The arrival rate (open loop) is multiplied by a factor that goes in a
    /// straight line from `start` at the window's start to `end` at its end
    /// (Brooker 2023's ramp load: up, then down to nothing).
    Ramp {
        /// The factor at the window's start.
        start: f64,
        /// The factor at its end.
        end: f64,
    },
    /// Service times of attempts started inside are multiplied by this.
    Slowdown(f64),
    /// The workers drop to this many (busy workers finish what they hold).
    CapacityDrop(u32),
}

/// What `herdsim triggers` says of a trigger kind: its syntax, what the
/// server loop (`crate::sim::server_loop`) does with it, and an example.
#[derive(Debug, Clone, Copy)]
pub struct TriggerAbout {
    /// The kind's syntax.
    pub syntax: &'static str,
    /// What it does, exactly as the loop does it.
    pub meaning: &'static str,
    /// A trigger of the kind, which parses.
    pub example: &'static str,
}

/// Every trigger kind, in the order `herdsim triggers` lists them
/// ([`TriggerKind::about`]).
pub static TRIGGERS: [TriggerAbout; 7] = [
    TriggerAbout {
        syntax: "outage@FROM..TO",
        meaning: "Every attempt whose service ends at the server inside [FROM, TO) fails, \
                  whatever --fail-rate says; its failure travels back as a reply. The server \
                  keeps working: attempts still arrive, queue and hold a worker for their whole \
                  service time, so an outage wastes work rather than stopping it. An attempt in \
                  service at FROM that ends inside fails; one ending at TO or later does not. \
                  With --failure-end next-start it keeps failing attempts that end after TO \
                  until a worker starts an attempt after TO.",
        example: "outage@2s..2.5s",
    },
    TriggerAbout {
        syntax: "fail:P@FROM..TO",
        meaning: "Each attempt whose service ends inside [FROM, TO) fails with probability P \
                  (0 to 1) in place of --fail-rate (the base rate is replaced, not added to); \
                  overlapping fail triggers compound, 1 − ∏(1 − P), and an overlapping outage \
                  fails every attempt. --failure-end next-start prolongs it as for outage.",
        example: "fail:0.3@2s..5s",
    },
    TriggerAbout {
        syntax: "user-fail:P@FROM..TO",
        meaning: "Each request draws one fate, uniform on (0, 1], when it is made (a call \
                  below carries its request's); every attempt of a request whose fate is at \
                  most P, ending inside [FROM, TO), fails, whichever retry it is, and the other \
                  requests' attempts do not fail there (--fail-rate is replaced by 0, or by an \
                  overlapping fail:P). The same share P of requests fail throughout: retrying \
                  them does not help. --failure-end next-start prolongs it as for outage.",
        example: "user-fail:0.1@2s..4s",
    },
    TriggerAbout {
        syntax: "spike:K@FROM..TO",
        meaning: "The open loop's rate of new requests (--rate) is multiplied by K (above 0, at \
                  most 1000) during [FROM, TO); retries are not multiplied, only new requests. \
                  With --rate-changes exact (the default) the arrivals are a non-homogeneous \
                  Poisson process (thinning), so the rate changes exactly at FROM and TO; with \
                  at-arrival each gap is drawn at the rate in force at the arrival before it, \
                  so the spike starts at the first arrival at or after FROM and ends at the \
                  first at or after TO. \
                  Overlapping spikes and ramps multiply. Needs the open loop (not --users).",
        example: "spike:2@5s..6s",
    },
    TriggerAbout {
        syntax: "ramp:A/B@FROM..TO",
        meaning: "The open loop's rate of new requests is multiplied by a factor that goes in \
                  a straight line from A at FROM to B at TO (each 0 to 1000): at t it is \
                  A + (B − A)·(t − FROM)/(TO − FROM), and 1 again from TO. Arrivals follow it \
                  as for spike (exactly, or at arrivals; with at-arrival, an arrival where the \
                  rate is 0 is the last one of the run). Needs the open loop.",
        example: "ramp:1/3@2s..8s",
    },
    TriggerAbout {
        syntax: "slow:K@FROM..TO",
        meaning: "An attempt a worker starts inside [FROM, TO) takes K times its drawn service \
                  time (with --service-per-busy's addition; rounded to whole ns; K above 0, at \
                  most 1000, below 1 a speed-up). Attempts in service at FROM keep their times, \
                  and one started just before TO keeps its longer time past TO. Overlapping \
                  slowdowns multiply.",
        example: "slow:3@2s..4s",
    },
    TriggerAbout {
        syntax: "capacity:C@FROM..TO",
        meaning: "During [FROM, TO) the server has min(--workers, C) workers (unbounded workers \
                  become C; overlapping drops: the lowest). Busy workers are not preempted: \
                  they finish what they hold, and no waiting attempt starts until fewer than C \
                  are busy. At TO the workers come back and take waiting attempts at once. \
                  C = 0 stops service: attempts queue (or are rejected by --queue-limit).",
        example: "capacity:1@2s..3s",
    },
];

impl TriggerKind {
    /// What `herdsim triggers` says of this kind.
    pub fn about(self) -> &'static TriggerAbout {
        &TRIGGERS[match self {
            TriggerKind::Outage => 0,
            TriggerKind::PartialFailure(_) => 1,
            TriggerKind::PerUserFailure(_) => 2,
            TriggerKind::LoadSpike(_) => 3,
            TriggerKind::Ramp { .. } => 4,
            TriggerKind::Slowdown(_) => 5,
            TriggerKind::CapacityDrop(_) => 6,
        }]
    }
}

/// Which effects a spec's triggers have ([`ServerSpec::trigger_effects`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TriggerEffects {
    /// Some trigger fails attempts (outage, partial or per-user failure).
    pub failures: bool,
    /// Some trigger fails the same users' requests (each request then
    /// draws its fate).
    pub per_user_failures: bool,
    /// Some trigger changes the arrival rate (load spike, ramp).
    pub load: bool,
    /// Some trigger slows service down.
    pub slowdown: bool,
    /// Some trigger drops the workers.
    pub capacity: bool,
}

/// When a failure trigger (outage, partial or per-user failure) stops
/// failing the attempts that complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureEnd {
    /// At the end of its window: attempts completing in `[from, to)` fail.
    #[default]
    Window,
    /// At the first service start after its window: attempts completing from
    /// `from` fail until a worker takes an attempt past `to`. The Yandex
    /// study's server drops an injected failure only when a request starts
    /// service after it, so requests in service at its end still fail.
    NextStart,
}

crate::base::names::named!(FailureEnd, "failure end", {
    FailureEnd::Window => "window",
    FailureEnd::NextStart => "next-start",
});

/// When a client notices that an attempt took longer than its timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeoutNoticed {
    /// When the timeout passes: the attempt is given up then, and its reply
    /// is ignored if it comes.
    #[default]
    Deadline,
    /// When the late reply comes: it counts as a timeout (whatever it says)
    /// and the retry is decided then. Brooker 2023's omission client
    /// ("retry if latency > 15 ms") checks only at completion.
    Reply,
}

crate::base::names::named!(TimeoutNoticed, "timeout noticed", {
    TimeoutNoticed::Deadline => "deadline",
    TimeoutNoticed::Reply => "reply",
});

/// How long an attempt's timeout is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeoutLaw {
    /// Exactly the configured timeout, as clients set it.
    #[default]
    Fixed,
    /// A fresh exponential draw per attempt, of the configured mean: the
    /// memoryless timeout of a Markov chain (`herdsim exact`), so that the
    /// simulator can be checked against the chain on the same settings.
    Exponential,
}

crate::base::names::named!(TimeoutLaw, "timeout law", {
    TimeoutLaw::Fixed => "fixed",
    TimeoutLaw::Exponential => "exponential",
});

/// How an open loop's arrivals follow a rate that changes (load spikes and
/// ramps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateChanges {
    /// Exactly: a non-homogeneous Poisson process, by thinning.
    #[default]
    Exact,
    /// At arrivals: the gap after an arrival is drawn at the rate in force
    /// at that arrival, and arrivals stop at one where the rate is 0 (Brooker
    /// 2023's collapse generator, a step approximation).
    AtArrival,
}

crate::base::names::named!(RateChanges, "rate changes", {
    RateChanges::Exact => "exact",
    RateChanges::AtArrival => "at-arrival",
});

/// A trigger over the window `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trigger {
    /// What it does.
    pub kind: TriggerKind,
    /// Its start, ns.
    pub from: Nanos,
    /// Its end (excluded), ns.
    pub to: Nanos,
}

impl Trigger {
    /// True if `t` is inside the window.
    #[inline]
    pub fn covers(&self, t: Nanos) -> bool {
        self.from <= t && t < self.to
    }
}

/// One server run's workload, apart from the retry policy and its controls.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Where requests come from.
    pub load: Load,
    /// Exactly this many open-loop arrivals, the last ones not cut at the
    /// duration (the Yandex study's generator); `None`: those the rate
    /// brings during the duration.
    pub requests: Option<u64>,
    /// Each source's (closed loop: user's) first request at a draw of this:
    /// in the open loop one more request beside the Poisson arrivals
    /// (Brooker 2022's clients each start with a call at Exp(10 ms)), in a
    /// closed loop instead of a first think. `None`: no such request.
    pub first_call: Option<Dist>,
    /// New requests start during `[0, duration)`; then the run drains.
    pub duration: Nanos,
    /// Workers; `None` is unbounded (every attempt served at once).
    pub workers: Option<u32>,
    /// Most attempts waiting in the queue; `None` is unbounded. An attempt
    /// arriving at a full queue is rejected at once.
    pub queue_limit: Option<u32>,
    /// Service time of an attempt, drawn when a worker takes it.
    pub service: Service,
    /// Added to an attempt's service time for every attempt in service when
    /// it starts, itself included, and fixed then (Brooker 2023's collapse
    /// server: 1 s + 10 ms × in service); 0 for none.
    pub service_per_busy: Nanos,
    /// Probability an attempt fails, decided when its service completes.
    pub fail_rate: f64,
    /// Client → server delay per attempt.
    pub request_delay: Dist,
    /// Server → client delay per attempt.
    pub reply_delay: Dist,
    /// Per-attempt timeout: no reply this long after sending, the client
    /// counts the attempt failed (the server keeps working on it).
    pub timeout: Option<Nanos>,
    /// Per-request timeouts instead: each request draws one of these,
    /// uniformly, when it is made (the Yandex study's clients with timeouts
    /// of 100, 200 or 300 ms); empty for none.
    pub timeout_choices: Vec<Nanos>,
    /// When the client notices a timeout.
    pub timeout_noticed: TimeoutNoticed,
    /// Whether `timeout` is each attempt's timeout or its mean.
    pub timeout_law: TimeoutLaw,
    /// Triggers, any number.
    pub triggers: Vec<Trigger>,
    /// How arrivals follow a changing rate.
    pub rate_changes: RateChanges,
    /// When failure triggers stop failing attempts.
    pub failure_end: FailureEnd,
    /// The window of the time series and of recovery.
    pub window: Nanos,
    /// How long after the last trigger's end the verdict watches the run
    /// (its load must last that long for a verdict; see
    /// [`crate::measure::verdict`]).
    pub patience: Nanos,
    /// Stop the run here even if requests are still in flight.
    pub horizon: Option<Nanos>,
    /// Whose deadline attempts carry to the server, if any.
    pub deadline_propagation: DeadlinePropagation,
    /// Which waiting attempt a free worker takes.
    pub discipline: Discipline,
    /// Refuse an arriving attempt whose expected wait passes this, ns.
    pub shed_wait: Option<Nanos>,
    /// Services in front of the server, each calling the one below
    /// (depth 1: the server alone).
    pub chain: Chain,
}

impl Default for ServerSpec {
    /// An M/M/1 server at 50% load for 10 s: 500 requests/s of 1 ms mean
    /// service, no timeout, no trigger.
    fn default() -> Self {
        ServerSpec {
            load: Load::Open {
                rate_per_s: 500.0,
                sources: 1,
                concurrency: None,
            },
            requests: None,
            first_call: None,
            duration: 10 * NS_PER_S,
            workers: Some(1),
            queue_limit: None,
            service: Service::One(Dist::Exp { mean: NS_PER_MS }),
            service_per_busy: Nanos::ZERO,
            fail_rate: 0.0,
            request_delay: Dist::Const(Nanos::ZERO),
            reply_delay: Dist::Const(Nanos::ZERO),
            timeout: None,
            timeout_choices: Vec::new(),
            timeout_noticed: TimeoutNoticed::Deadline,
            timeout_law: TimeoutLaw::Fixed,
            triggers: Vec::new(),
            rate_changes: RateChanges::Exact,
            failure_end: FailureEnd::Window,
            window: 100 * NS_PER_MS,
            patience: 10 * NS_PER_S,
            horizon: None,
            deadline_propagation: DeadlinePropagation::Off,
            discipline: Discipline::Fifo,
            shed_wait: None,
            chain: Chain::default(),
        }
    }
}

impl ServerSpec {
    /// The workers at `t`: the configured count, or the lowest capacity drop
    /// covering `t`. `u32::MAX` stands for unbounded.
    #[inline]
    pub fn workers_at(&self, t: Nanos) -> u32 {
        let mut workers = self.workers.unwrap_or(u32::MAX);
        for trigger in &self.triggers {
            if let TriggerKind::CapacityDrop(c) = trigger.kind
                && trigger.covers(t)
            {
                workers = workers.min(c);
            }
        }
        workers
    }

    /// The service-time factor for an attempt started at `t`.
    #[inline]
    pub fn slowdown_at(&self, t: Nanos) -> f64 {
        self.triggers
            .iter()
            .filter_map(|tr| match tr.kind {
                TriggerKind::Slowdown(k) if tr.covers(t) => Some(k),
                _ => None,
            })
            .product()
    }

    /// The arrival-rate factor at `t`.
    #[inline]
    pub fn load_factor_at(&self, t: Nanos) -> f64 {
        self.triggers
            .iter()
            .filter_map(|tr| match tr.kind {
                TriggerKind::LoadSpike(k) if tr.covers(t) => Some(k),
                TriggerKind::Ramp { start, end } if tr.covers(t) => {
                    let along = (t - tr.from).ticks() as f64 / (tr.to - tr.from).ticks() as f64;
                    Some(start + (end - start) * along)
                }
                _ => None,
            })
            .product()
    }

    /// The failure probability of an attempt completing at `t` under the
    /// spec's failure triggers; `None` if it fails for certain (an outage,
    /// or its user's fate). `latest_start` is when a worker last started
    /// on an attempt (a failure that ends at the next start lasts while it
    /// is inside the trigger's window); `fails_by_fate(p)` says whether the
    /// attempt's user is among the share `p` a per-user trigger fails. The
    /// simulator and the live server (`herdsim serve`) both decide here.
    #[inline]
    pub fn failure_share(
        &self,
        t: Nanos,
        latest_start: Nanos,
        mut fails_by_fate: impl FnMut(f64) -> bool,
    ) -> Option<f64> {
        // A failure trigger's share is the failure rate inside its window,
        // in place of the base rate (the Yandex study's injected failures
        // replace its baseline); overlapping partial failures compound.
        let mut fail_p = self.fail_rate;
        let mut replaced = false;
        let lingers = self.failure_end == FailureEnd::NextStart;
        for trigger in &self.triggers {
            // With the Yandex study's failure end, a failure lasts past its
            // window until a worker starts on an attempt after it.
            let failing =
                trigger.covers(t) || (lingers && trigger.from <= t && latest_start <= trigger.to);
            if !failing {
                continue;
            }
            if !replaced
                && matches!(
                    trigger.kind,
                    TriggerKind::PartialFailure(_) | TriggerKind::PerUserFailure(_)
                )
            {
                fail_p = 0.0;
                replaced = true;
            }
            match trigger.kind {
                TriggerKind::Outage => return None,
                TriggerKind::PartialFailure(p) => fail_p = 1.0 - (1.0 - fail_p) * (1.0 - p),
                TriggerKind::PerUserFailure(p) if fails_by_fate(p) => return None,
                _ => {}
            }
        }
        Some(fail_p)
    }

    /// What the spec's triggers act on, so a loop can skip the checks of
    /// effects no trigger has (a run without triggers pays none per event).
    pub fn trigger_effects(&self) -> TriggerEffects {
        let mut effects = TriggerEffects::default();
        for trigger in &self.triggers {
            match trigger.kind {
                TriggerKind::Outage | TriggerKind::PartialFailure(_) => effects.failures = true,
                TriggerKind::PerUserFailure(_) => {
                    effects.failures = true;
                    effects.per_user_failures = true;
                }
                TriggerKind::LoadSpike(_) | TriggerKind::Ramp { .. } => effects.load = true,
                TriggerKind::Slowdown(_) => effects.slowdown = true,
                TriggerKind::CapacityDrop(_) => effects.capacity = true,
            }
        }
        effects
    }

    /// The highest arrival-rate factor at any instant (thinning's bound):
    /// [`peak_load_factor_of`] the spec's triggers.
    pub fn peak_load_factor(&self) -> f64 {
        peak_load_factor_of(&self.triggers)
    }

    /// The end of the last trigger, if any.
    pub fn last_trigger_end(&self) -> Option<Nanos> {
        self.triggers.iter().map(|t| t.to).max()
    }

    /// The start of the first trigger, if any.
    pub fn first_trigger_start(&self) -> Option<Nanos> {
        self.triggers.iter().map(|t| t.from).min()
    }

    /// The times at which the workers change (capacity drops begin or end).
    pub fn capacity_changes(&self) -> Vec<Nanos> {
        let mut times: Vec<Nanos> = self
            .triggers
            .iter()
            .filter(|t| matches!(t.kind, TriggerKind::CapacityDrop(_)))
            .flat_map(|t| [t.from, t.to])
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }

    /// The attempts per second the workers can complete, as steps `(from,
    /// capacity)` from t = 0 (workers over mean service time, slowdowns
    /// included), changing only where a trigger begins or ends; `None` with
    /// unbounded workers.
    pub fn capacity_steps(&self) -> Option<Vec<(Nanos, f64)>> {
        self.workers?;
        let mean_s = self.service.mean() / NS_PER_S.ticks() as f64;
        if mean_s <= 0.0 {
            return None;
        }
        let mut times: Vec<Nanos> = std::iter::once(Nanos::ZERO)
            .chain(self.triggers.iter().flat_map(|t| [t.from, t.to]))
            .collect();
        times.sort_unstable();
        times.dedup();
        let mut steps: Vec<(Nanos, f64)> = Vec::new();
        for t in times {
            let capacity = f64::from(self.workers_at(t)) / (mean_s * self.slowdown_at(t));
            if steps.last().is_none_or(|last| last.1 != capacity) {
                steps.push((t, capacity));
            }
        }
        Some(steps)
    }
}

/// The highest arrival-rate factor at any instant of `triggers`, the bound
/// thinning proposes at: over each stretch between trigger boundaries, the
/// product of the spikes' and ramps' factors in force there (each at least
/// 1, a ramp at its larger end), and at least 1. Why not the product of all
/// of them: spikes that never overlap multiplied to 1000³ made the
/// proposals' gap round to 0 ns, and time stood still. Where every spike
/// and ramp overlaps at some instant this is that product, in the same
/// order, so it is the bound the runs of such triggers always had.
pub fn peak_load_factor_of(triggers: &[Trigger]) -> f64 {
    let bound = |tr: &Trigger| match tr.kind {
        TriggerKind::LoadSpike(k) => Some(k.max(1.0)),
        TriggerKind::Ramp { start, end } => Some(start.max(end).max(1.0)),
        _ => None,
    };
    let mut starts: Vec<Nanos> = triggers
        .iter()
        .filter(|tr| bound(tr).is_some())
        .flat_map(|tr| [tr.from, tr.to])
        .collect();
    starts.sort_unstable();
    starts.dedup();
    starts
        .iter()
        .map(|&t| {
            triggers
                .iter()
                .filter(|tr| tr.covers(t))
                .filter_map(bound)
                .product::<f64>()
        })
        .fold(1.0, f64::max)
}

/// The most a trigger may multiply the load or service time by.
pub const MAX_FACTOR: f64 = 1_000.0;

/// A duration's text as ns (whole µs, as every duration herdsim reads).
fn duration_ns(text: &str) -> Result<Nanos, String> {
    parse_duration(text)
        .map(Nanos::of_us)
        .map_err(|e| e.to_string())
}

/// A duration in ns as the text `duration_ns` reads back.
pub fn show_ns(ns: Nanos) -> String {
    format_duration(ns.whole_us())
}

/// The largest sigma of a lognormal herdsim takes.
const MAX_SIGMA: f64 = 5.0;

/// A lognormal from its median and one quantile above it (`80ms` and
/// `p99=400ms`): ln S is normal with mean ln(median), so the p-th quantile
/// is median·e^(σ·z_p) and σ = ln(value/median)/z_p, z_p the standard
/// normal's p-quantile (z_0.99 = 2.326: p99 = 5 × median gives σ 0.692).
fn lognormal_by_quantile(median: &str, quantile: &str) -> Result<Dist, String> {
    let form = "a quantile is pNN=VALUE with 50 < NN < 100, such as p99=400ms";
    let (name, value) = quantile
        .trim()
        .split_once('=')
        .ok_or_else(|| form.to_string())?;
    let percent: f64 = name
        .trim()
        .strip_prefix('p')
        .and_then(|n| n.parse().ok())
        .filter(|q: &f64| *q > 50.0 && *q < 100.0)
        .ok_or_else(|| form.to_string())?;
    let median = duration_ns(median)?;
    let value = duration_ns(value)?;
    let shown = Quantile { percent, value };
    if median == Nanos::ZERO {
        return Err("the median must be at least 1us".to_string());
    }
    if value <= median {
        return Err(format!(
            "the p{percent} ({}) must be above the median ({})",
            show_ns(value),
            show_ns(median)
        ));
    }
    let z = normal_upper_quantile((100.0 - percent) / 100.0);
    let sigma = (value.ticks() as f64 / median.ticks() as f64).ln() / z;
    if sigma > MAX_SIGMA {
        return Err(format!(
            "the p{percent} ({}) gives sigma {sigma:.3}, above 5: give a value nearer the median",
            show_ns(value)
        ));
    }
    Ok(Dist::LogNormal {
        median,
        sigma,
        given_by: Some(shown),
    })
}

impl Dist {
    /// The distribution as a report describes it: as written, and for a
    /// lognormal given by a quantile its median and sigma too
    /// (`lognormal:80ms@p99=400ms (median 80ms, σ 0.692)`), so both forms
    /// are in front of the reader.
    pub fn described(&self) -> String {
        match *self {
            Dist::LogNormal {
                median,
                sigma,
                given_by: Some(_),
            } => format!("{self} (median {}, σ {sigma:.3})", show_ns(median)),
            _ => self.to_string(),
        }
    }
}

impl std::str::FromStr for Dist {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Self, ModelError> {
        let fail = |why: String| ModelError::Dist {
            text: text.to_string(),
            why,
        };
        let trimmed = text.trim();
        let (kind, rest) = trimmed.split_once(':').unwrap_or(("const", trimmed));
        match kind {
            "const" => Ok(Dist::Const(duration_ns(rest).map_err(fail)?)),
            "exp" => {
                let mean = duration_ns(rest).map_err(fail)?;
                if mean == Nanos::ZERO {
                    return Err(fail("an exponential's mean must be at least 1us".into()));
                }
                Ok(Dist::Exp { mean })
            }
            "lognormal" => {
                if let Some((median, quantile)) = rest.split_once('@') {
                    return lognormal_by_quantile(median, quantile).map_err(fail);
                }
                let (median, sigma) = rest.split_once('/').ok_or_else(|| {
                    fail("lognormal needs MEDIAN/SIGMA or MEDIAN@pNN=VALUE".into())
                })?;
                let median = duration_ns(median).map_err(fail)?;
                let sigma: f64 = sigma
                    .trim()
                    .parse()
                    .ok()
                    .filter(|s: &f64| (0.0..=MAX_SIGMA).contains(s))
                    .ok_or_else(|| fail("sigma must be a number from 0 to 5".into()))?;
                Ok(Dist::LogNormal {
                    median,
                    sigma,
                    given_by: None,
                })
            }
            "normal" => {
                let (mean, sd) = rest
                    .split_once('/')
                    .ok_or_else(|| fail("normal needs MEAN/SD".into()))?;
                Ok(Dist::FoldedNormal {
                    mean: duration_ns(mean).map_err(fail)?,
                    sd: duration_ns(sd).map_err(fail)?,
                })
            }
            "weibull" => {
                let (mean, shape) = rest
                    .split_once('/')
                    .ok_or_else(|| fail("weibull needs MEAN/SHAPE".into()))?;
                let mean = duration_ns(mean).map_err(fail)?;
                let shape: f64 = shape
                    .trim()
                    .parse()
                    .ok()
                    .filter(|k: &f64| (0.1..=100.0).contains(k))
                    .ok_or_else(|| fail("shape must be a number from 0.1 to 100".into()))?;
                if mean == Nanos::ZERO {
                    return Err(fail("a Weibull's mean must be at least 1us".into()));
                }
                Ok(Dist::Weibull {
                    mean,
                    shape,
                    scale: mean.ticks() as f64 / ln_gamma(1.0 + 1.0 / shape).exp(),
                })
            }
            other => Err(fail(format!("unknown distribution '{other}'"))),
        }
    }
}

impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Dist::Const(d) => write!(f, "const:{}", show_ns(d)),
            Dist::Exp { mean } => write!(f, "exp:{}", show_ns(mean)),
            Dist::LogNormal {
                median,
                given_by: Some(q),
                ..
            } => write!(
                f,
                "lognormal:{}@p{}={}",
                show_ns(median),
                q.percent,
                show_ns(q.value)
            ),
            Dist::LogNormal { median, sigma, .. } => {
                write!(f, "lognormal:{}/{sigma}", show_ns(median))
            }
            Dist::Weibull { mean, shape, .. } => write!(f, "weibull:{}/{shape}", show_ns(mean)),
            Dist::FoldedNormal { mean, sd } => {
                write!(f, "normal:{}/{}", show_ns(mean), show_ns(sd))
            }
        }
    }
}

impl std::str::FromStr for Service {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Self, ModelError> {
        let fail = |why: String| ModelError::Service {
            text: text.to_string(),
            why,
        };
        let Some(rest) = text.trim().strip_prefix("mix:") else {
            return text.parse().map(Service::One);
        };
        let parts: Vec<&str> = rest.splitn(3, '/').collect();
        let [share, first, second] = parts[..] else {
            return Err(fail("mix needs P/DIST/DIST".into()));
        };
        let share_second: f64 = share
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| (0.0..=1.0).contains(p))
            .ok_or_else(|| fail("P must be a number from 0 to 1".into()))?;
        // A lognormal part has a '/' of its own: split the rest at the
        // second part's kind.
        let joined = format!("{first}/{second}");
        // Past the first character, whatever its width (`/é…` is not a
        // boundary at byte 1).
        let skip = joined.chars().next().map_or(0, char::len_utf8);
        let split = ["const:", "exp:", "lognormal:", "weibull:", "normal:"]
            .iter()
            .filter_map(|k| joined[skip..].find(&format!("/{k}")).map(|i| i + skip))
            .min()
            .unwrap_or(first.len());
        let (first, second) = (&joined[..split], &joined[split + 1..]);
        Ok(Service::Mixture {
            first: first.parse().map_err(|e: ModelError| fail(e.to_string()))?,
            second: second
                .parse()
                .map_err(|e: ModelError| fail(e.to_string()))?,
            share_second,
        })
    }
}

impl std::fmt::Display for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Service::One(d) => write!(f, "{d}"),
            Service::Mixture {
                first,
                second,
                share_second,
            } => write!(f, "mix:{share_second}/{first}/{second}"),
        }
    }
}

/// The triggers of a run, as one value (`outage@1s..1.5s+spike:2@3s..4s`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Triggers(pub Vec<Trigger>);

impl std::str::FromStr for Triggers {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Self, ModelError> {
        if text.trim() == "none" {
            return Ok(Triggers(Vec::new()));
        }
        if text.contains(',') {
            return Err(ModelError::Trigger {
                text: text.trim().to_string(),
                why: "join triggers with +, not commas".to_string(),
            });
        }
        text.split('+')
            .map(parse_trigger)
            .collect::<Result<_, _>>()
            .map(Triggers)
    }
}

fn parse_trigger(text: &str) -> Result<Trigger, ModelError> {
    let fail = |why: &str| ModelError::Trigger {
        text: text.trim().to_string(),
        why: why.to_string(),
    };
    let (kind, window) = text
        .trim()
        .split_once('@')
        .ok_or_else(|| fail("no window (@FROM..TO)"))?;
    let (from, to) = window
        .split_once("..")
        .ok_or_else(|| fail("the window is not FROM..TO"))?;
    let from = duration_ns(from).map_err(|e| fail(&e))?;
    let to = duration_ns(to).map_err(|e| fail(&e))?;
    if from >= to {
        return Err(fail("the window must start before it ends"));
    }
    let (name, arg) = kind.split_once(':').unwrap_or((kind, ""));
    let share = || -> Result<f64, ModelError> {
        arg.trim()
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=1.0).contains(p))
            .ok_or_else(|| fail("the share must be a number from 0 to 1"))
    };
    let factor = || -> Result<f64, ModelError> {
        arg.trim()
            .parse::<f64>()
            .ok()
            .filter(|k| *k > 0.0 && *k <= MAX_FACTOR)
            .ok_or_else(|| fail("the factor must be above 0 and at most 1000"))
    };
    let kind = match name.trim() {
        "outage" if arg.is_empty() => TriggerKind::Outage,
        "fail" => TriggerKind::PartialFailure(share()?),
        "user-fail" => TriggerKind::PerUserFailure(share()?),
        "spike" => TriggerKind::LoadSpike(factor()?),
        "ramp" => {
            let ends = arg.split_once('/').and_then(|(a, b)| {
                let factor = |x: &str| {
                    x.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|k| (0.0..=MAX_FACTOR).contains(k))
                };
                Some((factor(a)?, factor(b)?))
            });
            let (start, end) =
                ends.ok_or_else(|| fail("a ramp is ramp:START/END, factors from 0 to 1000"))?;
            TriggerKind::Ramp { start, end }
        }
        "slow" => TriggerKind::Slowdown(factor()?),
        "capacity" => TriggerKind::CapacityDrop(
            arg.trim()
                .parse::<u32>()
                .ok()
                .filter(|c| *c <= 1_000_000)
                .ok_or_else(|| {
                    fail("capacity must be a whole number of workers from 0 to 1,000,000")
                })?,
        ),
        _ => return Err(fail("unknown kind")),
    };
    Ok(Trigger { kind, from, to })
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            TriggerKind::Outage => write!(f, "outage")?,
            TriggerKind::PartialFailure(p) => write!(f, "fail:{p}")?,
            TriggerKind::PerUserFailure(p) => write!(f, "user-fail:{p}")?,
            TriggerKind::LoadSpike(k) => write!(f, "spike:{k}")?,
            TriggerKind::Ramp { start, end } => write!(f, "ramp:{start}/{end}")?,
            TriggerKind::Slowdown(k) => write!(f, "slow:{k}")?,
            TriggerKind::CapacityDrop(c) => write!(f, "capacity:{c}")?,
        }
        write!(f, "@{}..{}", show_ns(self.from), show_ns(self.to))
    }
}

impl std::fmt::Display for Triggers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return write!(f, "none");
        }
        let shown: Vec<String> = self.0.iter().map(Trigger::to_string).collect();
        write!(f, "{}", shown.join("+"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::seeding::job_rng;

    /// Sample mean of `n` draws.
    fn mean_of(d: &Service, n: usize) -> f64 {
        let mut rng = job_rng(7);
        (0..n)
            .map(|_| d.sample(&mut rng).ticks() as f64)
            .sum::<f64>()
            / n as f64
    }

    /// backoff-simulator's write time |N(2 ms, 1 ms)|: its mean is
    /// σ√(2/π)e^(−2) + μ(1 − 2Φ(−2)) = 2.01698 ms. Over 200,000 draws its
    /// standard error is below 1 ms/√200,000 = 2.2 µs: 4 of them allowed.
    #[test]
    fn a_folded_normal_has_the_mean_of_backoff_simulators_writes() {
        let d: Dist = "normal:2ms/1ms".parse().unwrap();
        assert_eq!(d.to_string(), "normal:2ms/1ms");
        assert!((d.mean() - 2_016_981.4).abs() < 5.0, "{}", d.mean());
        let mut rng = crate::base::seeding::job_rng(4);
        let n = 200_000;
        let mean = (0..n)
            .map(|_| d.sample(&mut rng).ticks() as f64)
            .sum::<f64>()
            / n as f64;
        assert!((mean - d.mean()).abs() < 4.0 * 2_236.0, "{mean}");
    }

    /// Brooker 2023's Weibull service: mean 0.1 ms at shape 2 is scale
    /// 0.1 / Γ(1.5) = 112.838 µs, second moment 0.0127324 ms² (the model
    /// file's). Over 200,000 draws the mean's standard error is
    /// √(0.0127324 − 0.01) / √200,000 = 0.117 µs: 4 of them allowed.
    #[test]
    fn a_weibull_has_the_mean_and_spread_of_brookers_service() {
        let d: Dist = "weibull:100us/2".parse().unwrap();
        let Dist::Weibull { scale, .. } = d else {
            panic!("not a Weibull")
        };
        assert!((scale - 112_837.9).abs() < 0.1, "scale {scale} ns");
        assert_eq!(d.to_string(), "weibull:100us/2");
        let mut rng = crate::base::seeding::job_rng(9);
        let n = 200_000;
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..n {
            let x = d.sample(&mut rng).ticks() as f64 / 1e6;
            sum += x;
            sum2 += x * x;
        }
        let mean = sum / n as f64;
        assert!((mean - 0.1).abs() < 4.0 * 0.000_117, "mean {mean} ms");
        let second = sum2 / n as f64;
        assert!((second - 0.012_732_4).abs() < 0.000_2, "E[S²] {second}");
        assert!("weibull:1ms/0".parse::<Dist>().is_err());
        assert!("weibull:1ms".parse::<Dist>().is_err());
    }

    #[test]
    fn draws_have_their_distributions_means() {
        let n = 200_000;
        let cases = [
            Service::One(Dist::Const(Nanos::from_us(5))),
            Service::One(Dist::Exp {
                mean: Nanos::from_us(100),
            }),
            Service::One(Dist::LogNormal {
                median: Nanos::from_ms(1),
                sigma: 0.5,
                given_by: None,
            }),
            Service::Mixture {
                first: Dist::Const(Nanos::from_us(1)),
                second: Dist::Exp {
                    mean: Nanos::from_us(50),
                },
                share_second: 0.1,
            },
        ];
        for d in cases {
            // sd of these draws is at most ~1.2 × mean (the mixture's is
            // about 2.5 × its mean); 5 standard errors of the sample mean.
            let se = 2.5 * d.mean() / (n as f64).sqrt();
            let got = mean_of(&d, n);
            assert!(
                (got - d.mean()).abs() < 5.0 * se,
                "{d:?}: {got} vs {}",
                d.mean()
            );
        }
    }

    #[test]
    fn triggers_change_workers_service_and_load_inside_their_windows() {
        let spec = ServerSpec {
            workers: Some(4),
            triggers: vec![
                Trigger {
                    kind: TriggerKind::CapacityDrop(1),
                    from: Nanos::from_ticks(10),
                    to: Nanos::from_ticks(20),
                },
                Trigger {
                    kind: TriggerKind::Slowdown(3.0),
                    from: Nanos::from_ticks(15),
                    to: Nanos::from_ticks(30),
                },
                Trigger {
                    kind: TriggerKind::LoadSpike(2.0),
                    from: Nanos::ZERO,
                    to: Nanos::from_ticks(5),
                },
            ],
            ..ServerSpec::default()
        };
        assert_eq!(spec.workers_at(Nanos::from_ticks(9)), 4);
        assert_eq!(spec.workers_at(Nanos::from_ticks(10)), 1);
        assert_eq!(spec.workers_at(Nanos::from_ticks(20)), 4);
        assert_eq!(spec.slowdown_at(Nanos::from_ticks(14)), 1.0);
        assert_eq!(spec.slowdown_at(Nanos::from_ticks(29)), 3.0);
        assert_eq!(spec.load_factor_at(Nanos::from_ticks(4)), 2.0);
        assert_eq!(spec.load_factor_at(Nanos::from_ticks(5)), 1.0);
        assert_eq!(spec.peak_load_factor(), 2.0);
        let t = Nanos::from_ticks;
        assert_eq!(spec.capacity_changes(), [t(10), t(20)]);
        assert_eq!(spec.last_trigger_end(), Some(t(30)));
    }

    #[test]
    fn thinning_is_bounded_by_the_largest_factor_in_force_at_one_instant() {
        let peak = |text: &str| peak_load_factor_of(&text.parse::<Triggers>().unwrap().0);
        // Apart, the largest alone (the product was 1000³, a 0 ns gap).
        assert_eq!(
            peak("spike:1000@1s..2s+spike:1000@3s..4s+spike:1000@5s..6s"),
            1_000.0
        );
        let ten: Vec<String> = (0..10)
            .map(|i| format!("spike:10@{}ms..{}ms", i * 1_000, i * 1_000 + 500))
            .collect();
        assert_eq!(peak(&ten.join("+")), 10.0);
        // Overlapping, their product where they overlap (as before).
        assert_eq!(peak("spike:3@1s..3s+spike:5@2s..4s+outage@0s..9s"), 15.0);
        assert_eq!(peak("spike:3@1s..3s+spike:5@3s..4s"), 5.0);
        assert_eq!(
            peak("ramp:1/2@0s..25s+ramp:2/0@25s..75s+ramp:0/0@75s..80s"),
            2.0
        );
        // Factors below 1 never lower the bound under the base rate's 1.
        assert_eq!(peak("spike:0.5@1s..2s"), 1.0);
        assert_eq!(peak("spike:4@1s..2s+spike:0.5@1s..2s"), 4.0);
        assert_eq!(peak("outage@1s..2s"), 1.0);
    }

    #[test]
    fn values_read_back_as_they_are_shown() {
        for text in [
            "const:1ms",
            "exp:100us",
            "lognormal:2ms/0.5",
            "mix:0.1/exp:1ms/exp:50ms",
            "mix:0.25/lognormal:1ms/0.3/const:20ms",
        ] {
            let service: Service = text.parse().unwrap();
            assert_eq!(service.to_string(), text);
        }
        assert_eq!("5ms".parse::<Dist>().unwrap(), Dist::Const(5 * NS_PER_MS));
        let triggers: Triggers = "outage@1s..1.5s+spike:2@3s..4s+capacity:1@0s..10ms"
            .parse()
            .unwrap();
        assert_eq!(triggers.0.len(), 3);
        assert_eq!(triggers.0[1].kind, TriggerKind::LoadSpike(2.0));
        assert_eq!(triggers.0[0].to, 1_500 * NS_PER_MS);
        assert_eq!(triggers.to_string().parse::<Triggers>().unwrap(), triggers);
        assert_eq!("none".parse::<Triggers>().unwrap(), Triggers::default());
    }

    /// `lognormal:80ms@p99=400ms`: its p99, median·e^(σ·z_0.99) with the
    /// published z_0.99 (not the parser's own Φ⁻¹), is 400 ms to float
    /// error; it reads back as written and is described with its sigma.
    #[test]
    fn a_lognormal_given_by_a_quantile_has_that_quantile() {
        const Z_99: f64 = 2.326_347_874_040_840_8;
        let d: Dist = "lognormal:80ms@p99=400ms".parse().unwrap();
        let Dist::LogNormal { median, sigma, .. } = d else {
            panic!("{d:?}")
        };
        assert_eq!(median, 80 * NS_PER_MS);
        let p99 = median.ticks() as f64 * (sigma * Z_99).exp();
        assert!((p99 - 400e6).abs() < 400e6 * 1e-12, "{p99}");
        assert_eq!(d.to_string(), "lognormal:80ms@p99=400ms");
        assert_eq!(d.to_string().parse::<Dist>().unwrap(), d);
        assert_eq!(
            d.described(),
            "lognormal:80ms@p99=400ms (median 80ms, σ 0.692)"
        );
        // The sigma form is described as before, and a mixture's part too.
        let plain: Dist = "lognormal:80ms/0.5".parse().unwrap();
        assert_eq!(plain.described(), "lognormal:80ms/0.5");
        let mix: Service = "mix:0.1/lognormal:1ms@p99.9=4ms/exp:20ms".parse().unwrap();
        assert_eq!(mix.to_string(), "mix:0.1/lognormal:1ms@p99.9=4ms/exp:20ms");
        assert_eq!(
            mix.described(),
            format!(
                "mix:0.1/lognormal:1ms@p99.9=4ms (median 1ms, σ {:.3})/exp:20ms",
                4f64.ln() / 3.090_232_306_167_813
            )
        );
    }

    /// The draws of a lognormal given by its p99 put 1% above it: over
    /// 400,000 draws the share's binomial standard error is
    /// √(0.01·0.99/400,000) = 1.6e-4; 5 of them allowed.
    #[test]
    fn draws_of_a_lognormal_given_by_a_quantile_have_that_quantile() {
        let d: Dist = "lognormal:80ms@p99=400ms".parse().unwrap();
        let mut rng = job_rng(11);
        let n = 400_000;
        let above = (0..n)
            .filter(|_| d.sample(&mut rng) > 400 * NS_PER_MS)
            .count();
        let share = above as f64 / n as f64;
        assert!((share - 0.01).abs() < 5.0 * 1.6e-4, "{share}");
    }

    #[test]
    fn bad_values_say_what_is_accepted() {
        for (text, says) in [
            ("exp:0", "at least 1us"),
            ("lognormal:1ms", "MEDIAN/SIGMA"),
            ("lognormal:1ms/9", "sigma"),
            (
                "lognormal:80ms@p99=80ms",
                "the p99 (80ms) must be above the median (80ms)",
            ),
            ("lognormal:80ms@p99=10ms", "must be above the median"),
            ("lognormal:80ms@p50=400ms", "50 < NN < 100"),
            ("lognormal:80ms@p100=400ms", "50 < NN < 100"),
            ("lognormal:80ms@99=400ms", "pNN=VALUE"),
            ("lognormal:80ms@p99", "pNN=VALUE"),
            ("lognormal:0ms@p99=1ms", "at least 1us"),
            ("lognormal:1us@p51=1h", "above 5"),
            ("gamma:1ms", "unknown distribution"),
            ("-1ms", "negative"),
        ] {
            let e = text.parse::<Dist>().unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("expected"), "{text}: {e}");
        }
        for (text, says) in [
            ("outage", "no window"),
            ("outage@2s..1s", "start before"),
            ("slow:0@1s..2s", "above 0"),
            ("fail:1.5@1s..2s", "0 to 1"),
            ("meteor@1s..2s", "unknown kind"),
            ("outage@1s..2s,spike:2@3s..4s", "join triggers with +"),
        ] {
            let e = text.parse::<Triggers>().unwrap_err().to_string();
            assert!(
                e.contains(says) && e.contains("KIND@FROM..TO"),
                "{text}: {e}"
            );
        }
        let e = "mix:2/exp:1ms/exp:2ms"
            .parse::<Service>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("0 to 1"), "{e}");
    }

    #[test]
    fn every_trigger_kind_is_described_and_its_example_parses_to_it() {
        for (i, about) in TRIGGERS.iter().enumerate() {
            let parsed: Triggers = about.example.parse().unwrap();
            assert_eq!(parsed.0.len(), 1, "{}", about.example);
            let kind = parsed.0[0].kind;
            assert!(
                std::ptr::eq(kind.about(), &TRIGGERS[i]),
                "{}",
                about.example
            );
            let name = about.syntax.split(['@', ':']).next().unwrap();
            assert!(about.example.starts_with(name), "{}", about.syntax);
        }
    }

    #[test]
    fn capacity_steps_follow_drops_and_slowdowns() {
        let spec = ServerSpec {
            workers: Some(2),
            triggers: "capacity:0@1s..2s+slow:2@1.5s..3s"
                .parse::<Triggers>()
                .unwrap()
                .0,
            ..ServerSpec::default()
        };
        let s = NS_PER_S;
        assert_eq!(
            spec.capacity_steps(),
            Some(vec![
                (Nanos::ZERO, 2_000.0),
                (s, 0.0),
                (2 * s, 1_000.0),
                (3 * s, 2_000.0)
            ])
        );
        let unbounded = ServerSpec {
            workers: None,
            ..ServerSpec::default()
        };
        assert_eq!(unbounded.capacity_steps(), None);
    }

    #[test]
    fn round_ns_is_round_without_libm() {
        let cases = [
            0.0,
            0.4,
            0.5,
            0.49999999999999994,
            1.5,
            2.5,
            1e6 + 0.5,
            4503599627370495.5,
            4503599627370497.0,
            9.3e18,
            1.9e19,
            1e30,
            -0.4,
            -0.6,
            -3.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            // Either side of the short path's bound.
            ROUND_FAST_BELOW,
            ROUND_FAST_BELOW.next_down(),
            ROUND_FAST_BELOW.next_up(),
        ];
        for x in cases {
            assert_eq!(round_ns(x), Nanos::from_ticks(x.round() as u64), "{x}");
        }
        // Where the short path's sum could go wrong: at and beside every
        // power of two, every half between whole numbers at every scale,
        // and the first and last halves and wholes of each binade.
        let mut rng = job_rng(4);
        for k in -3..64 {
            let power = 2f64.powi(k);
            let whole = (power * (1.0 + rng.unit_above_zero())).floor();
            for x in [
                power,
                power + 0.5,
                power - 0.5,
                2.0 * power - 0.5,
                whole + 0.5,
                whole - 0.5,
                whole,
            ] {
                for y in [x.next_down().next_down(), x.next_down(), x, x.next_up()] {
                    assert_eq!(
                        round_ns(y),
                        Nanos::from_ticks(y.round() as u64),
                        "{y} (2^{k})"
                    );
                }
            }
        }
        let mut rng = job_rng(3);
        for _ in 0..100_000 {
            let x = -1e6 * rng.unit_above_zero().ln();
            assert_eq!(round_ns(x), Nanos::from_ticks(x.round() as u64), "{x}");
            // Every scale from 1 to 2^66, through both paths.
            let x = (46.0 * rng.unit_above_zero()).exp();
            assert_eq!(round_ns(x), Nanos::from_ticks(x.round() as u64), "{x}");
        }
    }
}
