//! Which run settings the exact chain can take ([`ChainModel::of`]), and
//! for the rest, the key that stops it and why, in one line.

use crate::base::time::Micros;
use crate::base::time::Nanos;
use crate::control::ControlSpec;
use crate::control::queue_discipline::Discipline;
use crate::control::retry_after::RetryAfter;
use crate::exact::server_chain::{ChainModel, Conditions};
use crate::model::ResourceKind;
use crate::model::server::{Dist, FailureEnd, Service, TimeoutLaw, TriggerKind};
use crate::model::timeout_hedging::HedgeOnTimeout;
use crate::policy::PolicyKind;
use crate::spec::RunSpec;

/// A retry delay's cap must be this many means above the mean, so that the
/// exponential's cut tail (e⁻⁴⁰ ≈ 4e-18) is below rounding.
pub const CAP_IN_MEANS: f64 = 40.0;

/// A setting the chain cannot take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("key '{key}': {why}")]
pub struct NotMarkovian {
    /// The scenario key (flag) to change.
    pub key: &'static str,
    /// Why, and what the chain accepts.
    pub why: String,
}

fn refuse(key: &'static str, why: impl Into<String>) -> NotMarkovian {
    NotMarkovian {
        key,
        why: why.into(),
    }
}

/// The one trigger a chain follows: what it changes and for how long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainTrigger {
    /// The rates while it lasts.
    pub conditions: Conditions,
    /// Its start, s (the chain starts it from the stationary state).
    pub start_s: f64,
    /// Its length, s.
    pub length_s: f64,
}

impl ChainModel {
    /// The chain of `spec`'s server, with the orbit capped at `orbit_cap`,
    /// and its trigger if it has one; or the first key that is not
    /// Markovian.
    pub fn of(
        spec: &RunSpec,
        orbit_cap: usize,
    ) -> Result<(ChainModel, Option<ChainTrigger>), NotMarkovian> {
        let s = &spec.server;
        if spec.resource != ResourceKind::Server {
            return Err(refuse(
                "resource",
                "the chain is the server model's: give server",
            ));
        }
        let rate = match (s.users, s.concurrency, s.rate_per_s) {
            (Some(_), _, _) => {
                return Err(refuse(
                    "users",
                    "a closed loop's arrivals depend on each user's state: give an open loop (rate)",
                ));
            }
            (_, Some(_), _) => {
                return Err(refuse(
                    "concurrency",
                    "capped sources hold arrivals back by their own state: leave concurrency out",
                ));
            }
            (_, _, Some(rate)) if rate > 0.0 => rate,
            _ => {
                return Err(refuse(
                    "rate",
                    "the chain needs Poisson arrivals: give a rate above 0 (--rate, or the scenario's rate)",
                ));
            }
        };
        if s.requests.is_some() || s.first_call.is_some() {
            let key = if s.requests.is_some() {
                "requests"
            } else {
                "first_call"
            };
            return Err(refuse(
                key,
                "the chain's arrivals are Poisson at the rate alone: leave it out",
            ));
        }
        let workers = s.workers.ok_or_else(|| {
            refuse(
                "workers",
                "give a number of workers: unbounded workers have no queue",
            )
        })?;
        let queue_limit = s.queue_limit.ok_or_else(|| {
            refuse(
                "queue_limit",
                "the chain's states are finite: give a queue limit (each waiting count is a slice \
                 of states)",
            )
        })?;
        let service_mean_ns = match s.service {
            Service::One(Dist::Exp { mean }) if mean > Nanos::ZERO => mean,
            _ => {
                return Err(refuse(
                    "service",
                    "service times must be exponential (exp:MEAN) for a Markov chain",
                ));
            }
        };
        let constant_zero = |d: &Dist| matches!(d, Dist::Const(Nanos::ZERO));
        let unsupported = [
            (
                s.service_per_busy_us != Micros::ZERO,
                "service_per_busy",
                "service that grows with the busy count is not the chain's: leave it 0",
            ),
            (
                !constant_zero(&s.request_delay),
                "request_delay",
                "the chain has no network delay: leave it 0",
            ),
            (
                !constant_zero(&s.reply_delay),
                "reply_delay",
                "the chain has no network delay: leave it 0",
            ),
            (
                !s.timeout_choices.is_empty(),
                "timeout_choices",
                "the chain has one timeout law: give timeout with timeout_law = exponential",
            ),
            (
                s.failure_end != FailureEnd::Window,
                "failure_end",
                "a failure the chain follows ends with its window: leave failure_end at window",
            ),
            (
                s.deadline_propagation
                    != crate::control::deadline_propagation::DeadlinePropagation::Off,
                "deadline_propagation",
                "the chain's server knows no deadline: leave it at none",
            ),
            (
                s.shed_wait_us.is_some(),
                "shed_wait",
                "shedding by expected wait is not in the chain: leave it out",
            ),
            (
                s.chain.depth != 1,
                "depth",
                "the chain is one server: leave depth at 1",
            ),
            (
                spec.deadline_us.is_some(),
                "deadline",
                "a request deadline remembers its start: leave it out",
            ),
            (
                spec.hedge_delay_us.is_some(),
                "hedge_delay",
                "hedging keeps attempts per request: leave it out",
            ),
            (
                spec.hedge_on_timeout != HedgeOnTimeout::Off,
                "hedge_on_timeout",
                "hedging keeps attempts per request: leave it off",
            ),
            (
                spec.breaker.is_some(),
                "breaker",
                "a breaker's state is not counts of the queue: leave it out",
            ),
            (
                spec.throttle.is_some(),
                "throttle",
                "a throttle's state is not counts of the queue: leave it out",
            ),
            (
                spec.retry_after != RetryAfter::Ignore,
                "retry_after",
                "the chain's server sends no hint: leave retry_after at ignore",
            ),
        ];
        if let Some(&(_, key, why)) = unsupported.iter().find(|u| u.0) {
            return Err(refuse(key, why));
        }
        let timeout_rate = match (s.timeout_us, s.timeout_law) {
            (None, _) => 0.0,
            (Some(us), TimeoutLaw::Exponential) => 1e6 / us.ticks() as f64,
            (Some(_), TimeoutLaw::Fixed) => {
                return Err(refuse(
                    "timeout_law",
                    "a fixed timeout remembers when each attempt was sent: give timeout_law = \
                     exponential (the timeout as a mean), or no timeout",
                ));
            }
        };
        if timeout_rate > 0.0 && s.discipline != Discipline::Random {
            return Err(refuse(
                "discipline",
                "with timeouts, which attempt is served next decides which have timed out; only \
                 random order keeps counts enough: give discipline = random",
            ));
        }
        if !matches!(
            s.discipline,
            Discipline::Fifo | Discipline::Lifo | Discipline::Random
        ) {
            return Err(refuse(
                "discipline",
                "the chain serves in random order (or, without timeouts, any order that drops \
                 nothing): give random",
            ));
        }
        let retries = match spec.max_attempts {
            Some(1) => false,
            None => true,
            Some(_) => {
                return Err(refuse(
                    "max_attempts",
                    "a cap needs each attempt's number in the state: give 1 or unlimited, with \
                     budget = persistence:P for a geometric number of attempts (mean 1/(1 − P))",
                ));
            }
        };
        let (retry_rate, persistence) = if retries {
            let p = &spec.policy;
            if p.kind != PolicyKind::Memoryless || p.jitter_factor != 0.0 {
                return Err(refuse(
                    "policy",
                    "retry delays must be exponential: give policy = memoryless (base is the mean \
                     delay) and no jitter_factor",
                ));
            }
            if p.base_us == Micros::ZERO
                || (p.cap_us.ticks() as f64) < CAP_IN_MEANS * p.base_us.ticks() as f64
            {
                return Err(refuse(
                    "cap",
                    format!(
                        "the cap cuts the exponential delay: give a base above 0 and a cap of at \
                         least {CAP_IN_MEANS} × base"
                    ),
                ));
            }
            let persistence = match spec.budget {
                None => 1.0,
                Some(ControlSpec::Persistence(p)) => p.p,
                Some(_) => {
                    return Err(refuse(
                        "budget",
                        "a budget's tokens are not counts of the queue: give none or persistence:P",
                    ));
                }
            };
            (1e6 / p.base_us.ticks() as f64, persistence)
        } else {
            if spec.budget.is_some() {
                return Err(refuse(
                    "budget",
                    "one attempt has no retries to budget: leave it out",
                ));
            }
            (0.0, 0.0)
        };
        let model = ChainModel {
            arrival_rate: rate,
            service_rate: 1e9 / service_mean_ns.ticks() as f64,
            workers: workers as usize,
            queue_limit: queue_limit as usize,
            timeout_rate,
            retry_rate,
            persistence,
            retry_on_failure: retries && spec.retry_on.failure,
            retry_on_rejected: retries && spec.retry_on.rejected,
            retry_on_timeout: retries && spec.retry_on.timeout,
            fail_rate: s.fail_rate,
            orbit_cap: if retries { orbit_cap } else { 0 },
        };
        let trigger = match s.triggers.0.as_slice() {
            [] => None,
            [t] => {
                let conditions = match t.kind {
                    TriggerKind::Outage => Conditions {
                        load_factor: 1.0,
                        fail_rate: 1.0,
                    },
                    TriggerKind::PartialFailure(p) => Conditions {
                        load_factor: 1.0,
                        fail_rate: p,
                    },
                    TriggerKind::LoadSpike(k) => Conditions {
                        load_factor: k,
                        fail_rate: s.fail_rate,
                    },
                    _ => {
                        return Err(refuse(
                            "trigger",
                            "the chain follows outage, fail:P and spike:K; a slowdown or a \
                             capacity drop fixes what each attempt in service has, which counts \
                             do not keep",
                        ));
                    }
                };
                Some(ChainTrigger {
                    conditions,
                    start_s: t.from.ticks() as f64 / 1e9,
                    length_s: (t.to - t.from).ticks() as f64 / 1e9,
                })
            }
            _ => {
                return Err(refuse(
                    "trigger",
                    "the chain follows one trigger from the stationary state: give one",
                ));
            }
        };
        Ok((model, trigger))
    }
}
