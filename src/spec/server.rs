//! The server model's parameters in a workload ([`super::RunSpec::server`]),
//! their parsers with accepted ranges, and the model's run description made
//! from them.

use super::ParamError;
use crate::base::time::Nanos;
use crate::base::time::{Micros, format_duration, parse_duration};
use crate::control::deadline_propagation::DeadlinePropagation;
use crate::control::queue_discipline::Discipline;
use crate::model::chain::{CONTROL_FAMILIES, Chain, LayerSpec, MAX_DEPTH};
use crate::model::server::{
    Dist, FailureEnd, Load, NS_PER_MS, RateChanges, ServerSpec, Service, TimeoutLaw,
    TimeoutNoticed, TriggerKind, Triggers,
};

/// The default arrival rate of the open loop, requests per second.
pub const DEFAULT_RATE_PER_S: f64 = 500.0;
/// Most requests per second.
pub const MAX_RATE_PER_S: f64 = 1e9;
/// Most sources, users, workers, queue places or client slots.
pub const MAX_SERVER_COUNT: u64 = 10_000_000;
/// The default time-series window of the server model, µs.
pub const DEFAULT_SERVER_WINDOW_US: Micros = Micros::from_ms(100);
/// The server model's workload: its load and its server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerParams {
    /// Open-loop requests per second; `None` is the default (500/s), or no
    /// arrivals in a closed loop.
    pub rate_per_s: Option<f64>,
    /// New requests start during `[0, duration)`, µs; `None` is the default:
    /// 10 s, or with triggers until the last one's end plus the patience
    /// window ([`ServerParams::duration_with`]).
    pub duration_us: Option<Micros>,
    /// How long after the last trigger's end the verdict watches, µs;
    /// `None` is the default ([`ServerParams::default_patience_us`]).
    pub patience_us: Option<Micros>,
    /// Independent sources the open-loop arrivals are split among.
    pub sources: u32,
    /// Exactly this many open-loop requests, not cut at the duration;
    /// `None`: as many as the rate brings during it.
    pub requests: Option<u64>,
    /// Client-side concurrency limit (open loop); `None` is unlimited.
    pub concurrency: Option<u32>,
    /// Closed-loop users; `None` is the open loop.
    pub users: Option<u32>,
    /// Closed-loop think time.
    pub think: Dist,
    /// Each source's (user's) first request at a draw of this; `None` is
    /// none (closed loop: after a first think).
    pub first_call: Option<Dist>,
    /// Workers; `None` is unbounded.
    pub workers: Option<u32>,
    /// Queue places; `None` is unbounded.
    pub queue_limit: Option<u32>,
    /// Service time.
    pub service: Service,
    /// Service added per attempt in service at the start, µs.
    pub service_per_busy_us: Micros,
    /// Per-attempt failure probability.
    pub fail_rate: f64,
    /// Client → server delay.
    pub request_delay: Dist,
    /// Server → client delay.
    pub reply_delay: Dist,
    /// Per-attempt timeout, µs; `None` is none.
    pub timeout_us: Option<Micros>,
    /// Per-request timeouts drawn from these, µs; empty for none.
    pub timeout_choices: Vec<Micros>,
    /// When the client notices a timeout.
    pub timeout_noticed: TimeoutNoticed,
    /// See [`TimeoutLaw`].
    pub timeout_law: TimeoutLaw,
    /// Triggers over windows.
    pub triggers: Triggers,
    /// How arrivals follow a changing rate.
    pub rate_changes: RateChanges,
    /// When failure triggers stop failing attempts.
    pub failure_end: FailureEnd,
    /// Cut the run here, µs: `None` is the default
    /// ([`ServerParams::default_horizon_us`]), `Some(None)` runs until every
    /// request has ended.
    pub horizon_us: Option<Option<Micros>>,
    /// Whose deadline attempts carry to the server.
    pub deadline_propagation: DeadlinePropagation,
    /// The queue's discipline.
    pub discipline: Discipline,
    /// Shed arrivals expected to wait longer than this, µs.
    pub shed_wait_us: Option<Micros>,
    /// Services in front of the server, each calling the one below.
    pub chain: Chain,
}

impl Default for ServerParams {
    /// An M/M/1 server at 50% load for 10 s.
    fn default() -> Self {
        ServerParams {
            rate_per_s: None,
            duration_us: None,
            patience_us: None,
            sources: 1,
            requests: None,
            concurrency: None,
            users: None,
            think: Dist::Exp {
                mean: 1_000 * NS_PER_MS,
            },
            first_call: None,
            workers: Some(1),
            queue_limit: None,
            service: Service::One(Dist::Exp { mean: NS_PER_MS }),
            service_per_busy_us: Micros::ZERO,
            fail_rate: 0.0,
            request_delay: Dist::Const(Nanos::ZERO),
            reply_delay: Dist::Const(Nanos::ZERO),
            timeout_us: None,
            timeout_choices: Vec::new(),
            timeout_noticed: TimeoutNoticed::Deadline,
            timeout_law: TimeoutLaw::Fixed,
            triggers: Triggers::default(),
            rate_changes: RateChanges::Exact,
            failure_end: FailureEnd::Window,
            horizon_us: None,
            deadline_propagation: DeadlinePropagation::Off,
            discipline: Discipline::Fifo,
            shed_wait_us: None,
            chain: Chain::default(),
        }
    }
}

impl ServerParams {
    /// The model's run description, with the time-series window `window_us`
    /// and the patience window `patience_us`.
    pub fn server_spec(&self, window_us: Micros, patience_us: Micros) -> ServerSpec {
        let load = match self.users {
            Some(users) => Load::Closed {
                users,
                think: self.think,
            },
            None => Load::Open {
                rate_per_s: self.rate_per_s.unwrap_or(DEFAULT_RATE_PER_S),
                sources: self.sources,
                concurrency: self.concurrency,
            },
        };
        ServerSpec {
            load,
            requests: self.requests,
            first_call: self.first_call,
            duration: Nanos::of_us(self.duration_with(patience_us)),
            workers: self.workers,
            queue_limit: self.queue_limit,
            service: self.service,
            service_per_busy: Nanos::of_us(self.service_per_busy_us),
            fail_rate: self.fail_rate,
            request_delay: self.request_delay,
            reply_delay: self.reply_delay,
            timeout: self.timeout_us.map(Nanos::of_us),
            timeout_choices: self
                .timeout_choices
                .iter()
                .map(|&us| Nanos::of_us(us))
                .collect(),
            timeout_noticed: self.timeout_noticed,
            timeout_law: self.timeout_law,
            triggers: self.triggers.0.clone(),
            rate_changes: self.rate_changes,
            failure_end: self.failure_end,
            window: Nanos::of_us(window_us),
            patience: Nanos::of_us(patience_us),
            horizon: self.horizon_with(patience_us).map(Nanos::of_us),
            deadline_propagation: self.deadline_propagation,
            discipline: self.discipline,
            shed_wait: self.shed_wait_us.map(Nanos::of_us),
            chain: self.chain.clone(),
        }
    }

    /// The load and server in words, for human output, with the patience
    /// window `patience_us` that resolves a default duration.
    pub fn describe(&self, patience_us: Micros) -> String {
        let load = match self.users {
            Some(users) => format!(
                "{users} users thinking {} between requests",
                self.think.described()
            ),
            None => {
                let mut text = format!(
                    "{} requests/s (Poisson) from {} source{}",
                    self.rate_per_s.unwrap_or(DEFAULT_RATE_PER_S),
                    self.sources,
                    if self.sources == 1 { "" } else { "s" }
                );
                if let Some(k) = self.concurrency {
                    text += &format!(", at most {k} in flight per client pool");
                }
                text
            }
        };
        let workers = self.workers.map_or("unbounded workers".to_string(), |c| {
            format!("{c} worker{}", if c == 1 { "" } else { "s" })
        });
        let queue = self
            .queue_limit
            .map_or("an unbounded queue".to_string(), |q| {
                format!("a queue of {q}")
            });
        let timeout = match self.timeout_us {
            Some(t) => format!("timeout {}", format_duration(t)),
            None if self.timeout_choices.is_empty() => "no timeout".to_string(),
            None => format!(
                "timeout {} (one per request)",
                show_timeout_choices(&self.timeout_choices)
            ),
        };
        let server = format!(
            "a server of {workers} behind {queue}, service {}, failing {}; {load} for {}; {timeout}; triggers: {}",
            self.service.described(),
            self.fail_rate,
            self.describe_duration(patience_us),
            self.triggers
        );
        if !self.chain.is_layered() {
            return server;
        }
        let c = &self.chain;
        let above = c.depth - 1;
        format!(
            "{server}; {above} service{} above it, each of {} doing {} and then calling the one \
             below with its timeout times {} and {}, {} caller retrying failures from below",
            if above == 1 { "" } else { "s" },
            c.workers
                .map_or("unbounded workers".to_string(), |w| format!(
                    "{w} worker{}",
                    if w == 1 { "" } else { "s" }
                )),
            c.service.described(),
            c.timeout_ratio,
            c.max_attempts
                .map_or("the users' attempt limit".to_string(), |n| format!(
                    "at most {n} attempts"
                )),
            match c.retry_scope {
                crate::model::chain::RetryScope::Every => "every",
                crate::model::chain::RetryScope::Adjacent => "only the adjacent",
            },
        ) + &if c.layers.is_empty() {
            String::new()
        } else {
            format!("; each service's own: {}", show_layer_specs(&c.layers))
        }
    }

    /// The load's duration in words: the given one, or the default with
    /// where it comes from.
    fn describe_duration(&self, patience_us: Micros) -> String {
        let duration = format_duration(self.duration_with(patience_us));
        match (self.duration_us, self.last_trigger_end_us()) {
            (Some(_), _) => duration,
            (None, None) => format!("{duration} (the default)"),
            (None, Some(end)) => format!(
                "{duration} (the default: until the last trigger's end at {} plus the patience \
                 window of {}, at least 10s)",
                format_duration(end),
                format_duration(patience_us)
            ),
        }
    }

    /// The rules that tie the server's parameters together, as (the two
    /// keys, why).
    pub fn conflicts(&self) -> Option<(&'static str, &'static str, String)> {
        if self.users.is_some() {
            if self.rate_per_s.is_some() {
                return Some((
                    "users",
                    "rate",
                    "a closed loop has no arrival rate: give one or the other".into(),
                ));
            }
            if self.concurrency.is_some() {
                return Some((
                    "users",
                    "concurrency",
                    "a closed loop's users are its concurrency: give one or the other".into(),
                ));
            }
            if self.requests.is_some() {
                return Some((
                    "users",
                    "requests",
                    "a closed loop's users make requests until the duration ends: give one or \
                     the other"
                        .into(),
                ));
            }
            if self.sources > 1 {
                return Some((
                    "users",
                    "sources",
                    "in a closed loop each user is a source: leave sources at 1".into(),
                ));
            }
        }
        if self.deadline_propagation != DeadlinePropagation::Off
            && self.timeout_us.is_none()
            && self.timeout_choices.is_empty()
        {
            return Some((
                "deadline_propagation",
                "timeout",
                "a deadline is the timeout counted from the call or attempt: give a timeout".into(),
            ));
        }
        if self.timeout_us.is_some() && !self.timeout_choices.is_empty() {
            return Some((
                "timeout_choices",
                "timeout",
                "each request draws its timeout from the choices: give one or the other".into(),
            ));
        }
        let timed = self.timeout_us.is_some() || !self.timeout_choices.is_empty();
        if self.timeout_noticed != TimeoutNoticed::Deadline && !timed {
            return Some((
                "timeout_noticed",
                "timeout",
                "only a timeout can be noticed: give a timeout".into(),
            ));
        }
        if self.timeout_law == TimeoutLaw::Exponential {
            let clash = [
                (
                    self.timeout_us.is_none(),
                    "timeout",
                    "give the timeout's mean",
                ),
                (
                    !self.timeout_choices.is_empty(),
                    "timeout_choices",
                    "an exponential timeout has one mean: give timeout instead",
                ),
                (
                    self.timeout_noticed != TimeoutNoticed::Deadline,
                    "timeout_noticed",
                    "an exponential timeout is noticed when it passes: leave timeout_noticed at \
                     deadline",
                ),
                (
                    self.deadline_propagation != DeadlinePropagation::Off,
                    "deadline_propagation",
                    "an exponential timeout is not a deadline the server can know: leave \
                     deadline_propagation at none",
                ),
            ];
            if let Some(&(_, key, why)) = clash.iter().find(|c| c.0) {
                return Some(("timeout_law", key, why.into()));
            }
        }
        if self.shed_wait_us.is_some() && self.workers.is_none() {
            return Some((
                "shed_wait",
                "workers",
                "unbounded workers never queue, so nothing waits to be shed: give workers".into(),
            ));
        }
        for t in &self.triggers.0 {
            if self.duration_us.is_some_and(|d| t.from >= Nanos::of_us(d)) {
                return Some((
                    "trigger",
                    "duration",
                    "a trigger starts after the load ends: start it inside the duration".into(),
                ));
            }
            if matches!(t.kind, TriggerKind::LoadSpike(_) | TriggerKind::Ramp { .. })
                && self.users.is_some()
            {
                return Some((
                    "trigger",
                    "users",
                    "a load spike or ramp needs the open loop's arrival rate".into(),
                ));
            }
        }
        let uppers = self.chain.depth as usize - 1;
        if !self.chain.layers.is_empty() && self.chain.layers.len() != uppers {
            return Some((
                "layer_specs",
                "depth",
                format!(
                    "give one service's settings per service above the server ({uppers} at this \
                     depth), joined by +, or none"
                ),
            ));
        }
        if self.chain.is_layered() {
            // Upper services time their calls from the users' one timeout
            // and carry no deadline; the reply-noticed timeout is Brooker's
            // one-server client.
            let unsupported = [
                (
                    !self.timeout_choices.is_empty(),
                    "timeout_choices",
                    "each upper service's timeout is the users' one timeout times \
                     layer_timeout_ratio: give one timeout, or depth 1",
                ),
                (
                    self.deadline_propagation != DeadlinePropagation::Off,
                    "deadline_propagation",
                    "deadlines travel from the users to the server alone: leave \
                     deadline_propagation at none, or depth 1",
                ),
                (
                    self.timeout_noticed != TimeoutNoticed::Deadline,
                    "timeout_noticed",
                    "every caller in a chain notices its timeout at the deadline: leave \
                     timeout_noticed at deadline, or depth 1",
                ),
            ];
            if let Some(&(_, key, why)) = unsupported.iter().find(|u| u.0) {
                return Some((key, "depth", why.into()));
            }
        }
        if self.rate_changes != RateChanges::Exact && self.users.is_some() {
            return Some((
                "rate_changes",
                "users",
                "a closed loop has no arrival rate to change: leave rate_changes at exact".into(),
            ));
        }
        None
    }
}

/// Parses a count of sources, users, workers, queue places or slots.
pub fn parse_server_count(text: &str, min: u64) -> Result<u32, ParamError> {
    super::parse_count(text, min, MAX_SERVER_COUNT).map(|n| n as u32)
}

/// Parses workers: a count, or `inf` for unbounded.
pub fn parse_workers(text: &str) -> Result<Option<u32>, ParamError> {
    match text.trim() {
        "inf" => Ok(None),
        _ => parse_server_count(text, 1).map(Some),
    }
}

/// Parses an arrival rate, requests per second.
pub fn parse_rate(text: &str) -> Result<f64, ParamError> {
    let rate: f64 = text.trim().replace('_', "").parse().unwrap_or(f64::NAN);
    if rate.is_finite() && rate > 0.0 && rate <= MAX_RATE_PER_S {
        Ok(rate)
    } else {
        Err(ParamError::Rate)
    }
}

/// Parses a probability in [0, 1].
pub fn parse_probability(text: &str) -> Result<f64, ParamError> {
    let p: f64 = text.trim().parse().unwrap_or(f64::NAN);
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(ParamError::Probability)
    }
}

/// Parses a duration of at least 1 µs that may be absent (`none`).
pub fn parse_optional_duration(text: &str) -> Result<Option<Micros>, ParamError> {
    if text.trim() == "none" {
        return Ok(None);
    }
    super::check_positive_duration(parse_duration(text)?).map(Some)
}

/// Most timeouts a request may draw from.
pub const MAX_TIMEOUT_CHOICES: usize = 64;

/// Parses per-request timeout choices: durations joined by `/`, or `none`.
pub fn parse_timeout_choices(text: &str) -> Result<Vec<Micros>, ParamError> {
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    let choices = text
        .split('/')
        .map(|d| super::check_positive_duration(parse_duration(d)?))
        .collect::<Result<Vec<_>, _>>()?;
    if choices.len() > MAX_TIMEOUT_CHOICES {
        return Err(ParamError::TimeoutChoices);
    }
    Ok(choices)
}

/// Per-request timeout choices as they are written (`100ms/200ms`).
pub fn show_timeout_choices(choices: &[Micros]) -> String {
    choices
        .iter()
        .map(|&us| format_duration(us))
        .collect::<Vec<_>>()
        .join("/")
}

/// Workers as they are written: a count, or `inf` for unbounded.
pub fn show_workers(workers: Option<u32>) -> String {
    workers.map_or("inf".to_string(), |c| c.to_string())
}

/// The keys of an upper service's own settings, in the order they are shown.
pub const LAYER_KEYS: [&str; 10] = [
    "workers",
    "service",
    "timeout",
    "max_attempts",
    "policy",
    "base",
    "cap",
    "budget",
    "breaker",
    "throttle",
];

/// Parses a chain's per-service settings: each upper service's, top first,
/// joined by `+`; each `key=value` joined by commas (a piece without `=`
/// continues the value before it, so a control's own commas need no
/// quoting: `budget=ratio:0.1,min:0`); `none` for none.
pub fn parse_layer_specs(text: &str) -> Result<Vec<LayerSpec>, ParamError> {
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    let bad = |why: String| ParamError::LayerSpecs(why);
    text.split('+')
        .map(|one| {
            let mut settings: Vec<(String, String)> = Vec::new();
            for piece in one.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                match (piece.split_once('='), settings.last_mut()) {
                    (Some((key, value)), _) => {
                        settings.push((key.trim().to_string(), value.trim().to_string()))
                    }
                    (None, Some((_, value))) => {
                        value.push(',');
                        value.push_str(piece);
                    }
                    (None, None) => return Err(bad(format!("'{piece}' is not key=value"))),
                }
            }
            // A key given twice would silently keep its last value.
            for (n, (key, value)) in settings.iter().enumerate() {
                if let Some((_, first)) = settings[..n].iter().find(|(k, _)| k == key) {
                    return Err(bad(format!(
                        "'{key}' is given twice in one service ({key}={first} and \
                         {key}={value}): give it once"
                    )));
                }
            }
            let mut spec = LayerSpec::default();
            for (key, value) in &settings {
                let why = |e: ParamError| bad(format!("{key}: {e}"));
                let duration = |value: &str| super::parse_positive_duration(value).map_err(why);
                match key.as_str() {
                    "workers" => spec.workers = Some(parse_workers(value).map_err(why)?),
                    "service" => spec.service = Some(parse_dist(value).map_err(why)?),
                    "timeout" => spec.timeout = Some(Nanos::of_us(duration(value)?)),
                    "max_attempts" => {
                        spec.max_attempts =
                            Some(super::values::parse_max_attempts(value).map_err(why)?)
                    }
                    "policy" => spec.policy = Some(super::parse_policy(value).map_err(why)?),
                    "base" => spec.base_us = Some(duration(value)?),
                    "cap" => spec.cap_us = Some(duration(value)?),
                    other => match CONTROL_FAMILIES.iter().position(|f| f.key() == other) {
                        Some(c) => {
                            let family = CONTROL_FAMILIES[c];
                            spec.controls[c] =
                                Some(super::values::parse_control(family, value).map_err(why)?);
                        }
                        None => {
                            return Err(bad(format!(
                                "unknown key '{other}' (expected {})",
                                LAYER_KEYS.join(", ")
                            )));
                        }
                    },
                }
            }
            Ok(spec)
        })
        .collect()
}

/// A chain's per-service settings as [`parse_layer_specs`] reads them.
pub fn show_layer_specs(layers: &[LayerSpec]) -> String {
    layers
        .iter()
        .map(|l| {
            let mut settings = Vec::new();
            if let Some(w) = l.workers {
                settings.push(format!("workers={}", show_workers(w)));
            }
            if let Some(d) = l.service {
                settings.push(format!("service={d}"));
            }
            if let Some(t) = l.timeout {
                settings.push(format!("timeout={}", format_duration(t.whole_us())));
            }
            if let Some(n) = l.max_attempts {
                settings.push(format!("max_attempts={n}"));
            }
            if let Some(p) = l.policy {
                settings.push(format!("policy={p}"));
            }
            if let Some(b) = l.base_us {
                settings.push(format!("base={}", format_duration(b)));
            }
            if let Some(c) = l.cap_us {
                settings.push(format!("cap={}", format_duration(c)));
            }
            for (family, control) in CONTROL_FAMILIES.iter().zip(l.controls) {
                if let Some(control) = control {
                    let shown = control.map_or("none".to_string(), |c| c.to_string());
                    settings.push(format!("{}={shown}", family.key()));
                }
            }
            settings.join(",")
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// The accepted range of a chain's timeout ratio.
pub const TIMEOUT_RATIO_RANGE: (f64, f64) = (0.01, 100.0);

/// Parses a chain's timeout ratio.
pub fn parse_timeout_ratio(text: &str) -> Result<f64, ParamError> {
    let r: f64 = text.trim().parse().unwrap_or(f64::NAN);
    let (lo, hi) = TIMEOUT_RATIO_RANGE;
    if (lo..=hi).contains(&r) {
        Ok(r)
    } else {
        Err(ParamError::TimeoutRatio)
    }
}

/// Parses a chain's depth: services, the server included.
pub fn parse_depth(text: &str) -> Result<u32, ParamError> {
    Ok(super::values::parse_count(text, 1, u64::from(MAX_DEPTH))? as u32)
}

/// Parses a distribution of durations.
pub fn parse_dist(text: &str) -> Result<Dist, ParamError> {
    Ok(text.parse()?)
}

/// Most requests of a fixed-count open loop.
pub const MAX_REQUESTS: u64 = 1_000_000_000;

/// Parses a fixed request count, or `none`.
pub fn parse_request_count(text: &str) -> Result<Option<u64>, ParamError> {
    if text.trim() == "none" {
        return Ok(None);
    }
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_REQUESTS).contains(&n) => Ok(Some(n)),
        _ => Err(ParamError::Count {
            min: 1,
            max: MAX_REQUESTS,
        }),
    }
}

/// Parses a distribution of durations that may be absent (`none`).
pub fn parse_optional_dist(text: &str) -> Result<Option<Dist>, ParamError> {
    if text.trim() == "none" {
        return Ok(None);
    }
    parse_dist(text).map(Some)
}

/// Parses a service-time spec.
pub fn parse_service(text: &str) -> Result<Service, ParamError> {
    Ok(text.parse()?)
}

/// Parses triggers.
pub fn parse_triggers(text: &str) -> Result<Triggers, ParamError> {
    Ok(text.parse()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_combinations_name_both_parameters() {
        let closed = ServerParams {
            users: Some(10),
            rate_per_s: Some(100.0),
            ..ServerParams::default()
        };
        assert_eq!(
            closed.conflicts().map(|c| (c.0, c.1)),
            Some(("users", "rate"))
        );
        let late = ServerParams {
            triggers: "outage@20s..21s".parse().unwrap(),
            duration_us: Some(Micros::from_s(10)),
            ..ServerParams::default()
        };
        // A default duration reaches past any trigger.
        let auto = ServerParams {
            triggers: "outage@20s..21s".parse().unwrap(),
            ..ServerParams::default()
        };
        assert_eq!(auto.conflicts(), None);
        assert_eq!(auto.duration_with(Micros::from_s(30)), Micros::from_s(51));
        assert_eq!(
            late.conflicts().map(|c| (c.0, c.1)),
            Some(("trigger", "duration"))
        );
        assert_eq!(ServerParams::default().conflicts(), None);
    }

    #[test]
    fn a_layer_setting_given_twice_is_refused() {
        for twice in [
            "workers=1,workers=9",
            "policy=full,budget=ratio:0.1,min:0,policy=none",
            "timeout=1s+max_attempts=2,max_attempts=3",
        ] {
            let err = parse_layer_specs(twice).unwrap_err().to_string();
            assert!(err.contains("given twice"), "{twice}: {err}");
        }
        // Once in each of two services is two settings.
        assert_eq!(
            parse_layer_specs("workers=1+workers=9").map(|l| l.len()),
            Ok(2)
        );
    }

    #[test]
    fn counts_rates_and_probabilities_have_ranges() {
        assert_eq!(parse_workers("inf"), Ok(None));
        assert_eq!(parse_workers("4"), Ok(Some(4)));
        assert!(parse_workers("0").is_err());
        assert!(parse_rate("0").is_err() && parse_rate("nan").is_err());
        assert_eq!(parse_rate("1_000"), Ok(1_000.0));
        assert!(parse_probability("1.01").is_err());
        assert_eq!(parse_optional_duration("none"), Ok(None));
        assert!(parse_optional_duration("0ms").is_err());
    }
}
