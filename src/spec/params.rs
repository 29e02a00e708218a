//! The parameter registry: every parameter of a workload, declared once.
//!
//! Each [`Param`] gives a parameter's scenario key (its name everywhere; the
//! command-line flag is the key with dashes), what it is, the TOML type it
//! takes, what its absence means, its CSV columns, and how it is read into
//! and shown from a [`RunSpec`]. Grid axes, scenario keys, command-line
//! flags, CSV columns, compare's labels, published-figure matching and the
//! parameter tables of `--help` and the docs all come from [`PARAMS`].
//!
//! A parameter's accepted range lives in its `set` (the parser): checking a
//! spec ([`RunSpec::validate`]) shows each value and reads it back through
//! `set`, so the command line, scenario files and specs built in code accept
//! exactly the same values, and every shown value is proven to read back.

use crate::base::time::Micros;
use crate::base::time::{format_duration, parse_duration, us_to_ms};
use crate::control::Family;
use crate::model::ResourceKind;
use crate::spec::{self, ParamError, RunSpec, format_window, server};

/// The TOML type a parameter's values take in a scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer.
    Count,
    /// An integer or a float.
    Number,
    /// A string with a unit, or a number of ms.
    Duration,
    /// A string.
    Text,
}

impl Kind {
    /// What a value of this kind looks like, for error messages.
    pub fn expected(self) -> &'static str {
        match self {
            Kind::Count => "a whole number",
            Kind::Number => "a number",
            Kind::Duration => "a duration string such as \"100ms\", or a number of ms",
            Kind::Text => "a string",
        }
    }
}

/// Which part of the workload a parameter belongs to: its heading in
/// `--help` (where a user looks for it) and, with [`HERD_ONLY`] and
/// [`SERVER_ONLY`], which models read it. The policy group is also what
/// `herdsim policy` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Which model the run is on.
    Model,
    /// The backoff policy and its shape.
    Policy,
    /// The herd models' clients and the resource they call.
    Herd,
    /// The occ model's row.
    Occ,
    /// The server model's workers, queue, service and timeouts.
    Server,
    /// The server model's load: open or closed loop.
    Load,
    /// What makes a server run fail for a while.
    Trigger,
    /// What may stop, delay or correlate retries besides the policy.
    RetryControl,
    /// What the server model's server does with the load it cannot serve.
    ServerControl,
    /// The server model's call chain above the server.
    Chain,
    /// How a run is measured, judged and cut.
    Measure,
}

impl Group {
    /// Every group, in the order `--help` shows them.
    pub const ALL: [Group; 11] = [
        Group::Model,
        Group::Policy,
        Group::Herd,
        Group::Occ,
        Group::Server,
        Group::Load,
        Group::Trigger,
        Group::RetryControl,
        Group::ServerControl,
        Group::Chain,
        Group::Measure,
    ];

    /// The group's heading in `--help` (the occ row's keys sit with the
    /// other herd models').
    pub fn heading(self) -> &'static str {
        match self {
            Group::Model => "Model",
            Group::Policy => "Policy",
            Group::Herd | Group::Occ => "Herd models",
            Group::Server => "Server model",
            Group::Load => "Load (server model)",
            Group::Trigger => "Triggers (server model)",
            Group::RetryControl => "Retry controls",
            Group::ServerControl => "Server controls",
            Group::Chain => "Call chain (server model)",
            Group::Measure => "Measurement",
        }
    }

    /// The group's place in [`Group::ALL`].
    pub fn rank(self) -> usize {
        Group::ALL
            .iter()
            .position(|&g| g == self)
            .expect("every group is listed")
    }

    /// True if only the server model reads the group's parameters.
    fn server_only(self) -> bool {
        matches!(
            self,
            Group::Server | Group::Load | Group::Trigger | Group::ServerControl | Group::Chain
        )
    }
}

/// One parameter of a workload.
pub struct Param {
    /// The scenario key and the name in every message (snake_case); the flag
    /// is `--` and the key with dashes.
    pub key: &'static str,
    /// The placeholder in `--help` (`N`, `DURATION`).
    pub value_name: &'static str,
    /// What the parameter is, in one line.
    pub doc: &'static str,
    /// What is accepted, in words (for the docs' tables).
    pub accepts: &'static str,
    /// What the parameter's absence means, for parameters that may be
    /// absent (`unlimited`); `None` for parameters that always have a value.
    pub absent: Option<&'static str>,
    /// The TOML type of a scenario value.
    pub kind: Kind,
    /// The docs group.
    pub group: Group,
    /// Separates several values in one command-line flag (a grid axis).
    pub list_separator: char,
    /// The names it accepts, where it takes one of a few (shown in `--help`).
    pub choices: Option<fn() -> Vec<&'static str>>,
    /// The columns it fills in every sweep file.
    pub columns: &'static [&'static str],
    /// Reads `text` (as a flag or scenario value gives it) into the spec, or
    /// says what is accepted.
    pub set: fn(&mut RunSpec, &str) -> Result<(), ParamError>,
    /// The spec's value as text that `set` reads back; `None` when absent.
    pub show: fn(&RunSpec) -> Option<String>,
    /// The spec's value in its CSV columns (empty where absent), in the
    /// reported units: the value the run used, defaults resolved.
    pub fields: fn(&RunSpec) -> Vec<String>,
}

impl Param {
    /// The command-line flag, without its dashes.
    pub fn flag(&self) -> String {
        self.key.replace('_', "-")
    }

    /// Checks `text` without a spec to keep it in.
    pub fn check(&self, text: &str) -> Result<(), ParamError> {
        (self.set)(&mut RunSpec::default(), text)
    }

    /// The default as shown in `--help` and the docs: the default workload's
    /// value, or what absence means.
    pub fn default_text(&self) -> String {
        (self.show)(&RunSpec::default())
            .or_else(|| self.absent.map(str::to_string))
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Param({})", self.key)
    }
}

impl PartialEq for Param {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

/// The parameter named `key`.
pub fn param(key: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| p.key == key)
}

/// The names of `variants`.
fn names<T: Copy>(variants: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
    variants.iter().map(|&v| name(v)).collect()
}

/// A number in its CSV form.
fn n(v: f64) -> String {
    crate::base::format::csv_number(v)
}

/// Milliseconds in CSV form.
fn ms(us: Micros) -> String {
    n(us_to_ms(us))
}

/// One field, or an empty one where the value is absent.
fn optional<T>(value: Option<T>, show: impl Fn(T) -> String) -> Vec<String> {
    vec![value.map_or_else(String::new, show)]
}

/// Parameters only the herd models (slot, outage, occ) read: the server
/// model's load is its rate, users or concurrency.
const HERD_ONLY: [&str; 4] = ["clients", "capacity", "arrivals", "seeding"];

/// Parameters of groups every model reads that only the server model reads
/// (its verdict's patience and its horizon).
const SERVER_ONLY: [&str; 5] = [
    "patience",
    "horizon",
    "retry_on",
    "hedge_delay",
    "hedge_on_timeout",
];

impl Param {
    /// True if a run on `resource` reads this parameter: the server model's
    /// groups and [`SERVER_ONLY`] only on the server model, the occ row only
    /// on occ, [`HERD_ONLY`] only off the server model. A parameter a run
    /// does not read has empty CSV fields and, given alone, a warning.
    pub fn applies_to(&self, resource: ResourceKind) -> bool {
        let server = resource == ResourceKind::Server;
        if self.group.server_only() || SERVER_ONLY.contains(&self.key) {
            server
        } else if self.group == Group::Occ {
            resource == ResourceKind::Occ
        } else {
            !(server && HERD_ONLY.contains(&self.key))
        }
    }

    /// The models that take this parameter, for `--help`: those it
    /// [applies to](Param::applies_to), except that `down` is the slot's
    /// alone (a run on another model refuses it).
    pub fn models(&self) -> Vec<ResourceKind> {
        ResourceKind::VARIANTS
            .iter()
            .copied()
            .filter(|&r| self.applies_to(r))
            .filter(|&r| self.key != "down" || r == ResourceKind::Slot)
            .collect()
    }

    /// Which models take this parameter, in words: `None` where every model
    /// does.
    pub fn models_text(&self) -> Option<String> {
        let models = self.models();
        if models.len() == ResourceKind::VARIANTS.len() {
            return None;
        }
        let herd: Vec<ResourceKind> = ResourceKind::VARIANTS
            .iter()
            .copied()
            .filter(|&r| r != ResourceKind::Server)
            .collect();
        Some(match &models[..] {
            [ResourceKind::Server] => "the server model".to_string(),
            m if m == &herd[..] => "the herd models (slot, outage, occ)".to_string(),
            [one] => format!("the {one} model"),
            many => {
                let names: Vec<&str> = many.iter().map(|m| m.name()).collect();
                format!("the {} models", names.join(", "))
            }
        })
    }

    /// `-h`'s one line: the first clause of the doc (up to its first colon,
    /// semicolon, parenthesis or full stop), or for the few docs whose first
    /// clause says too little, a line of its own.
    pub fn summary(&self) -> &'static str {
        if let Some((_, line)) = SUMMARIES.iter().find(|(key, _)| *key == self.key) {
            return line;
        }
        let end = self
            .doc
            .find([':', ';', '(', '.'])
            .unwrap_or(self.doc.len());
        self.doc[..end].trim_end().trim_end_matches(',')
    }
}

/// `-h`'s line for the parameters whose doc's first clause is not one.
const SUMMARIES: [(&str, &str); 8] = [
    (
        "down",
        "An outage window in which every call to the slot fails",
    ),
    (
        "fleet",
        "Clients (server: sources) per scope of the controls' state",
    ),
    ("requests", "Open loop: exactly N requests"),
    ("users", "Closed loop: N users, one request at a time each"),
    (
        "first_call",
        "When each source (closed loop: user) makes its first request",
    ),
    (
        "service_per_busy",
        "Added to service time per attempt in service",
    ),
    (
        "shed_wait",
        "Shed load: refuse an attempt whose queue wait would exceed this",
    ),
    ("layer_service", "Each service's own work above the server"),
];

/// Every parameter, in grid-axis and CSV-column order. Adding one here (and
/// to [`RunSpec`] and the model that reads it) adds its flag, scenario key,
/// axis, columns and doc rows.
pub static PARAMS: [Param; 64] = [
    Param {
        key: "policy",
        value_name: "POLICY",
        doc: "Backoff policy (see `herdsim policies`)",
        accepts: "a policy name",
        absent: None,
        kind: Kind::Text,
        group: Group::Policy,
        list_separator: ',',
        choices: Some(crate::policy::PolicyKind::names),
        columns: &["policy"],
        set: |s, t| {
            s.policy.kind = spec::parse_policy(t)?;
            Ok(())
        },
        show: |s| Some(s.policy.kind.name().to_string()),
        fields: |s| vec![s.policy.kind.name().to_string()],
    },
    Param {
        key: "clients",
        value_name: "N",
        doc: "Clients in the herd; each wants one successful call",
        accepts: "1 to 100,000,000",
        absent: None,
        kind: Kind::Count,
        group: Group::Herd,
        list_separator: ',',
        choices: None,
        columns: &["clients"],
        set: |s, t| {
            s.clients = spec::parse_clients(t)?;
            Ok(())
        },
        show: |s| Some(s.clients.to_string()),
        fields: |s| vec![s.clients.to_string()],
    },
    Param {
        key: "capacity",
        value_name: "PER_MS",
        doc: "Requests the slot resource serves per millisecond (fractions allowed)",
        accepts: "0.001 to 1,000",
        absent: None,
        kind: Kind::Number,
        group: Group::Herd,
        list_separator: ',',
        choices: None,
        columns: &["capacity_per_ms"],
        set: |s, t| {
            s.capacity_per_ms = spec::parse_capacity(t)?;
            Ok(())
        },
        show: |s| Some(s.capacity_per_ms.to_string()),
        fields: |s| vec![n(s.capacity_per_ms)],
    },
    Param {
        key: "base",
        value_name: "DURATION",
        doc: "First retry's delay (decorrelated: the walk's floor)",
        accepts: "a duration of at least 1us",
        absent: None,
        kind: Kind::Duration,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        columns: &["base_ms"],
        set: |s, t| {
            s.policy.base_us = spec::parse_positive_duration(t)?;
            Ok(())
        },
        show: |s| Some(format_duration(s.policy.base_us)),
        fields: |s| vec![ms(s.policy.base_us)],
    },
    Param {
        key: "cap",
        value_name: "DURATION",
        doc: "Largest delay; may be below the base (every delay is then the cap)",
        accepts: "a duration of at least 1us",
        absent: None,
        kind: Kind::Duration,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        columns: &["cap_ms"],
        set: |s, t| {
            s.policy.cap_us = spec::parse_positive_duration(t)?;
            Ok(())
        },
        show: |s| Some(format_duration(s.policy.cap_us)),
        fields: |s| vec![ms(s.policy.cap_us)],
    },
    Param {
        key: "step",
        value_name: "DURATION",
        doc: "Growth per retry of the linear policy",
        accepts: "a duration (0 allowed)",
        absent: Some("the base"),
        kind: Kind::Duration,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        columns: &["step_ms"],
        set: |s, t| {
            s.policy.step_us = Some(spec::parse_step(t)?);
            Ok(())
        },
        show: |s| s.policy.step_us.map(format_duration),
        fields: |s| vec![ms(s.policy.step())],
    },
    Param {
        key: "jitter_factor",
        value_name: "F",
        doc: "Proportional jitter f on top of the policy: d + U[-f·d/2, +f·d/2] (0 is off)",
        accepts: "0 to 1",
        absent: None,
        kind: Kind::Number,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        columns: &["jitter_factor"],
        set: |s, t| {
            s.policy.jitter_factor = spec::parse_jitter_factor(t)?;
            Ok(())
        },
        show: |s| Some(s.policy.jitter_factor.to_string()),
        fields: |s| vec![n(s.policy.jitter_factor)],
    },
    Param {
        key: "random_factor",
        value_name: "F",
        doc: "resilience4j's randomization factor f: its randomized policies draw from \
              [(1−f)·d, (1+f)·d + 1ms) (Spring's randomizedWaitFactor)",
        accepts: "0 to 1",
        absent: None,
        kind: Kind::Number,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        // No CSV column: every committed sweep file keeps its columns (a
        // sweep over it tells its points apart by their index).
        columns: &[],
        set: |s, t| {
            s.policy.randomization_factor = spec::parse_randomization_factor(t)?;
            Ok(())
        },
        show: |s| Some(s.policy.randomization_factor.to_string()),
        fields: |_| Vec::new(),
    },
    Param {
        key: "throttle_base",
        value_name: "DURATION",
        doc: "aws-2026's first-retry ceiling after a throttle (a full queue's refusal); \
              base is its ceiling after any other failure (botocore's \
              throttling_base_scale)",
        accepts: "a duration of at least 1us",
        absent: None,
        kind: Kind::Duration,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        // No CSV column, as random_factor: every committed sweep file keeps
        // its columns.
        columns: &[],
        set: |s, t| {
            s.policy.throttle_base_us = spec::parse_positive_duration(t)?;
            Ok(())
        },
        show: |s| Some(format_duration(s.policy.throttle_base_us)),
        fields: |_| Vec::new(),
    },
    Param {
        key: "window",
        value_name: "DURATION",
        doc: "Window of the peak-retries metric (server: of the time series and recovery)",
        accepts: "a duration of at least 1us",
        absent: Some("one service time (slot), 100ms (server), 1ms (other models)"),
        kind: Kind::Duration,
        group: Group::Measure,
        list_separator: ',',
        choices: None,
        columns: &["window_ms"],
        set: |s, t| {
            s.window_us = Some(spec::parse_positive_duration(t)?);
            Ok(())
        },
        show: |s| s.window_us.map(format_duration),
        fields: |s| vec![ms(s.window())],
    },
    Param {
        key: "resource",
        value_name: "MODEL",
        doc: "Resource model: slot (seed 002's contended slot), outage (independent outage \
              episodes), occ (the AWS optimistic-concurrency row), or server (open- or \
              closed-loop load against workers behind a queue, with timeouts)",
        accepts: "slot, outage, occ, server",
        absent: None,
        kind: Kind::Text,
        group: Group::Model,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::ResourceKind::VARIANTS,
                crate::model::ResourceKind::name,
            )
        }),
        columns: &["resource"],
        set: |s, t| {
            s.resource = spec::parse_resource(t)?;
            Ok(())
        },
        show: |s| Some(s.resource.name().to_string()),
        fields: |s| vec![s.resource.name().to_string()],
    },
    Param {
        key: "arrivals",
        value_name: "PATTERN",
        doc: "When clients make their first call: herd (all at t = 0), uniform:DURATION \
              (each drawn on [0, DURATION]), or poisson:RATE (arrivals per ms)",
        accepts: "herd, uniform:DURATION, poisson:RATE",
        absent: None,
        kind: Kind::Text,
        group: Group::Herd,
        list_separator: ',',
        choices: None,
        columns: &["arrivals"],
        set: |s, t| {
            s.arrivals = spec::parse_arrivals(t)?;
            Ok(())
        },
        show: |s| Some(s.arrivals.to_string()),
        fields: |s| vec![s.arrivals.to_string()],
    },
    Param {
        key: "down",
        value_name: "FROM..TO",
        doc: "An outage window in which every call to the slot fails, such as 5s..15s",
        accepts: "FROM..TO, FROM before TO",
        absent: Some("always up"),
        kind: Kind::Text,
        group: Group::Herd,
        list_separator: ',',
        choices: None,
        columns: &["down_from_ms", "down_to_ms"],
        set: |s, t| {
            s.down = Some(spec::parse_down(t)?);
            Ok(())
        },
        show: |s| s.down.map(|(from, to)| format_window(from, to)),
        fields: |s| {
            [
                optional(s.down, |(from, _)| ms(from)),
                optional(s.down, |(_, to)| ms(to)),
            ]
            .concat()
        },
    },
    Param {
        key: "max_attempts",
        value_name: "N",
        doc: "Most attempts per client, first call included",
        accepts: "1 to 1,000,000,000",
        absent: Some("unlimited"),
        kind: Kind::Count,
        group: Group::RetryControl,
        list_separator: ',',
        choices: None,
        columns: &["max_attempts"],
        set: |s, t| {
            s.max_attempts = Some(spec::parse_max_attempts(t)?);
            Ok(())
        },
        show: |s| s.max_attempts.map(|n| n.to_string()),
        fields: |s| optional(s.max_attempts, |n| n.to_string()),
    },
    Param {
        key: "deadline",
        value_name: "DURATION",
        doc: "No attempt starts later than this after the client's first call; on the server \
              model the request's deadline over all its attempts (gRPC's timeout), which also \
              ends an attempt still awaited when it passes, as given up",
        accepts: "a duration of at least 1us",
        absent: Some("none"),
        kind: Kind::Duration,
        group: Group::RetryControl,
        list_separator: ',',
        choices: None,
        columns: &["deadline_ms"],
        set: |s, t| {
            s.deadline_us = Some(spec::parse_positive_duration(t)?);
            Ok(())
        },
        show: |s| s.deadline_us.map(format_duration),
        fields: |s| vec![s.deadline_us.map_or_else(String::new, ms)],
    },
    Param {
        key: "retry_on",
        value_name: "OUTCOMES",
        doc: "Which failed attempts are retried: failure (a server error), rejected (a full \
              queue's rejection), timeout (a per-attempt timeout), joined by +, or none; any \
              other failure ends its request as given up (gRPC's retryableStatusCodes, \
              Envoy's retry_on)",
        accepts: "failure, rejected, timeout joined by +, or none",
        absent: None,
        kind: Kind::Text,
        group: Group::RetryControl,
        list_separator: ',',
        choices: None,
        columns: &["retry_on"],
        set: |s, t| {
            s.retry_on = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.retry_on.to_string()),
        fields: |s| vec![s.retry_on.to_string()],
    },
    Param {
        key: "hedge_delay",
        value_name: "DURATION",
        doc: "Hedged requests (gRPC's hedgingPolicy): a request sends another copy every this \
              long while none has answered, up to max_attempts copies; the first success wins, \
              a failure outside retry_on fails the request, the abandoned copies are still \
              served; 0 sends every copy at once",
        accepts: "a duration (0 allowed)",
        absent: Some("no hedging"),
        kind: Kind::Duration,
        group: Group::RetryControl,
        list_separator: ',',
        choices: None,
        columns: &["hedge_delay_ms"],
        set: |s, t| {
            s.hedge_delay_us = Some(spec::parse_step(t)?);
            Ok(())
        },
        show: |s| s.hedge_delay_us.map(format_duration),
        fields: |s| optional(s.hedge_delay_us, ms),
    },
    Param {
        key: "hedge_on_timeout",
        value_name: "ON|OFF",
        doc: "Hedging on per-attempt timeout (Envoy's hedge_on_per_try_timeout): on keeps a \
              timed-out attempt, whose reply may still win, and sends a retry beside it after \
              the policy's backoff, as max_attempts and the controls allow; the first success \
              wins, the others are abandoned but still served",
        accepts: "off, on",
        absent: None,
        kind: Kind::Text,
        group: Group::RetryControl,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::timeout_hedging::HedgeOnTimeout::VARIANTS,
                crate::model::timeout_hedging::HedgeOnTimeout::name,
            )
        }),
        // No CSV column: every committed sweep file keeps its columns (a
        // sweep over it tells its points apart by their index).
        columns: &[],
        set: |s, t| {
            s.hedge_on_timeout = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.hedge_on_timeout.name().to_string()),
        fields: |_| Vec::new(),
    },
    Param {
        key: "first_exponent",
        value_name: "E",
        doc: "Added to every retry's exponent in none, equal and full: 1 makes the first \
              ceiling 2·base, as the AWS simulator does",
        accepts: "0 to 16",
        absent: None,
        kind: Kind::Count,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        columns: &["first_exponent"],
        set: |s, t| {
            s.policy.first_exponent = spec::parse_first_exponent(t)?;
            Ok(())
        },
        show: |s| Some(s.policy.first_exponent.to_string()),
        fields: |s| vec![s.policy.first_exponent.to_string()],
    },
    Param {
        key: "multiplier",
        value_name: "M",
        doc: "Growth of the ceiling per retry in none, equal, full and grpc-retry: c_k = \
              min(cap, base·M^(k−1)) (gRPC's backoffMultiplier)",
        accepts: "above 1, at most 100",
        absent: None,
        kind: Kind::Number,
        group: Group::Policy,
        list_separator: ',',
        choices: None,
        columns: &["multiplier"],
        set: |s, t| {
            s.policy.multiplier = spec::parse_multiplier(t)?;
            Ok(())
        },
        show: |s| Some(s.policy.multiplier.to_string()),
        fields: |s| vec![n(s.policy.multiplier)],
    },
    Param {
        key: "cap_mode",
        value_name: "MODE",
        doc: "Where equal and full jitter apply the cap: before the draw, or after it \
              (clamping the draw: the bunching bug several libraries shipped)",
        accepts: "before, after",
        absent: None,
        kind: Kind::Text,
        group: Group::Policy,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::policy::CapMode::VARIANTS,
                crate::policy::CapMode::name,
            )
        }),
        columns: &["cap_mode"],
        set: |s, t| {
            s.policy.cap_mode = spec::parse_cap_mode(t)?;
            Ok(())
        },
        show: |s| Some(s.policy.cap_mode.name().to_string()),
        fields: |s| vec![s.policy.cap_mode.name().to_string()],
    },
    Param {
        key: "seeding",
        value_name: "MODE",
        doc: "How the clients' generators are seeded: independent, or shared (every client \
              seeded alike, the fleet bug that keeps a jittered herd together)",
        accepts: "independent, shared",
        absent: None,
        kind: Kind::Text,
        group: Group::Herd,
        list_separator: ',',
        choices: Some(|| names(crate::spec::Seeding::VARIANTS, crate::spec::Seeding::name)),
        columns: &["seeding"],
        set: |s, t| {
            s.seeding = spec::parse_seeding(t)?;
            Ok(())
        },
        show: |s| Some(s.seeding.name().to_string()),
        fields: |s| vec![s.seeding.name().to_string()],
    },
    Param {
        key: "budget",
        value_name: "RULE",
        doc: "A retry budget (see `herdsim controls`): tokens (the AWS SDK quota, \
              tokens:500,cost:5,refund:1,timeout-cost:10), ratio, earned (Yandex), adaptive \
              (Brooker), grpc, finagle, tower (Linkerd's), envoy (Envoy's retry_budget), envoy-max-retries \
              (Envoy's max_retries), or none; consulted when a retry is decided, \
              and a retry it refuses ends the request as given up",
        accepts: "a budget rule of `herdsim controls`, or none",
        absent: Some("no budget"),
        kind: Kind::Text,
        group: Group::RetryControl,
        list_separator: ';',
        choices: None,
        columns: &["budget"],
        set: |s, t| {
            s.budget = spec::parse_control(Family::Budget, t)?;
            Ok(())
        },
        show: |s| s.budget.map(|b| b.to_string()),
        fields: |s| optional(s.budget, |b| b.to_string()),
    },
    Param {
        key: "breaker",
        value_name: "RULE",
        doc: "A circuit breaker (see `herdsim controls`): cumulative (Brooker's, on retries), \
              windowed (Yandex's, on retries), classic (on calls), or none",
        accepts: "a breaker rule of `herdsim controls`, or none",
        absent: Some("no breaker"),
        kind: Kind::Text,
        group: Group::RetryControl,
        list_separator: ';',
        choices: None,
        columns: &["breaker"],
        set: |s, t| {
            s.breaker = spec::parse_control(Family::Breaker, t)?;
            Ok(())
        },
        show: |s| s.breaker.map(|b| b.to_string()),
        fields: |s| optional(s.breaker, |b| b.to_string()),
    },
    Param {
        key: "throttle",
        value_name: "RULE",
        doc: "A client-side throttle (see `herdsim controls`): sre (the SRE book's adaptive \
              throttling, sre:2,window:2m), aws-adaptive (the AWS SDKs' adaptive-mode rate \
              limiter, aws-adaptive:0.4,beta:0.7; server model only), envoy-max-requests \
              (Envoy's max_requests circuit breaker), or none; an attempt it \
              refuses is not sent and ends the request",
        accepts: "a throttle rule of `herdsim controls`, or none",
        absent: Some("no throttle"),
        kind: Kind::Text,
        group: Group::RetryControl,
        list_separator: ';',
        choices: None,
        columns: &["throttle"],
        set: |s, t| {
            s.throttle = spec::parse_control(Family::Throttle, t)?;
            Ok(())
        },
        show: |s| s.throttle.map(|b| b.to_string()),
        fields: |s| optional(s.throttle, |b| b.to_string()),
    },
    Param {
        key: "fleet",
        value_name: "N",
        doc: "Clients (server model: sources) per scope of the budget's, breaker's and \
              throttle's state: 1 gives each its own (local), none one for all (global)",
        accepts: "1 to 100,000,000",
        absent: Some("all clients share one state"),
        kind: Kind::Count,
        group: Group::RetryControl,
        list_separator: ',',
        choices: None,
        columns: &["fleet"],
        set: |s, t| {
            s.fleet = Some(spec::parse_fleet(t)?);
            Ok(())
        },
        show: |s| s.fleet.map(|n| n.to_string()),
        fields: |s| optional(s.fleet, |n| n.to_string()),
    },
    Param {
        key: "retry_after",
        value_name: "MODE",
        doc: "What clients do with the slot's retry hint (its backlog estimate): ignore, \
              floor (wait max(hint, delay)), floor+jitter (wait hint + delay), aws (wait \
              max(delay, min(hint, delay + 5s)): the AWS SDKs' 2026 x-amz-retry-after)",
        accepts: "ignore, floor, floor+jitter, aws",
        absent: None,
        kind: Kind::Text,
        group: Group::RetryControl,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::control::retry_after::RetryAfter::VARIANTS,
                crate::control::retry_after::RetryAfter::name,
            )
        }),
        columns: &["retry_after"],
        set: |s, t| {
            s.retry_after = spec::parse_retry_after(t)?;
            Ok(())
        },
        show: |s| Some(s.retry_after.name().to_string()),
        fields: |s| vec![s.retry_after.name().to_string()],
    },
    Param {
        key: "occ_server",
        value_name: "CONTROL",
        doc: "The occ row's concurrency control: read-write (read the version, write it back; \
              AWS's), write-only (the version noted as the write arrives) or locking (a write \
              meeting another is rejected at once): backoff-simulator's three servers",
        accepts: "read-write, write-only, locking",
        absent: None,
        kind: Kind::Text,
        group: Group::Occ,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::occ::OccServer::VARIANTS,
                crate::model::occ::OccServer::name,
            )
        }),
        columns: &["occ_server"],
        set: |s, t| {
            s.occ.server = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.occ.server.name().to_string()),
        fields: |s| vec![s.occ.server.name().to_string()],
    },
    Param {
        key: "write_time",
        value_name: "DIST",
        doc: "How long an occ write takes at the row, its conflict checked at its end \
              (backoff-simulator's normal:2ms/1ms, folded at 0)",
        accepts: "a distribution",
        absent: None,
        kind: Kind::Text,
        group: Group::Occ,
        list_separator: ';',
        choices: None,
        columns: &["write_time"],
        set: |s, t| {
            s.occ.write_time = server::parse_dist(t)?;
            Ok(())
        },
        show: |s| Some(s.occ.write_time.to_string()),
        fields: |s| vec![s.occ.write_time.to_string()],
    },
    Param {
        key: "occ_done",
        value_name: "WHEN",
        doc: "When an occ client whose write committed is done: reply (its reply back, AWS's) \
              or commit (backoff-simulator's, whose server never answers a success)",
        accepts: "reply, commit",
        absent: None,
        kind: Kind::Text,
        group: Group::Occ,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::occ::OccDone::VARIANTS,
                crate::model::occ::OccDone::name,
            )
        }),
        columns: &["occ_done"],
        set: |s, t| {
            s.occ.done = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.occ.done.name().to_string()),
        fields: |s| vec![s.occ.done.name().to_string()],
    },
    Param {
        key: "rate",
        value_name: "PER_S",
        doc: "Open-loop arrivals per second (Poisson), split among the sources",
        accepts: "above 0, at most 1e9",
        absent: Some("500, or none in a closed loop"),
        kind: Kind::Number,
        group: Group::Load,
        list_separator: ',',
        choices: None,
        columns: &["rate_per_s"],
        set: |s, t| {
            s.server.rate_per_s = Some(server::parse_rate(t)?);
            Ok(())
        },
        show: |s| s.server.rate_per_s.map(|r| r.to_string()),
        fields: |s| {
            vec![n(s.server.rate_per_s.unwrap_or(
                if s.server.users.is_some() {
                    0.0
                } else {
                    server::DEFAULT_RATE_PER_S
                },
            ))]
        },
    },
    Param {
        key: "duration",
        value_name: "DURATION",
        doc: "New requests start during [0, DURATION); then the run drains. A run with \
              triggers needs the load on until the last trigger's end plus the patience \
              window, or it is unresolved",
        accepts: "a duration of at least 1us",
        absent: Some("10s; with triggers, until the last trigger's end plus the patience window"),
        kind: Kind::Duration,
        group: Group::Load,
        list_separator: ',',
        choices: None,
        columns: &["duration_ms"],
        set: |s, t| {
            s.server.duration_us = Some(spec::parse_positive_duration(t)?);
            Ok(())
        },
        show: |s| s.server.duration_us.map(format_duration),
        fields: |s| vec![ms(s.duration_us())],
    },
    Param {
        key: "patience",
        value_name: "DURATION",
        doc: "How long after the last trigger's end a run is watched for its verdict: \
              recovered if healthy through the window's last quarter, draining if not but \
              its backlog still falls steadily, stuck if neither, \
              unresolved if the load ends first (see `herdsim metrics`)",
        accepts: "a duration of at least 1ms",
        absent: Some(
            "the longer of 10 retry cycles (the longest timeout plus the longest retry delay) and \
             3 times the drain of a stall as long as the triggers, in whole seconds, 10s to 10min",
        ),
        kind: Kind::Duration,
        group: Group::Measure,
        list_separator: ',',
        choices: None,
        columns: &["patience_ms"],
        set: |s, t| {
            let us = spec::parse_positive_duration(t)?;
            if us < crate::base::time::US_PER_MS {
                return Err(ParamError::Patience);
            }
            s.server.patience_us = Some(us);
            Ok(())
        },
        show: |s| s.server.patience_us.map(format_duration),
        fields: |s| vec![ms(s.patience_us())],
    },
    Param {
        key: "requests",
        value_name: "N",
        doc: "Open loop: exactly N requests, their gaps Poisson at the rate, the last ones \
              not cut at the duration (the Yandex study's load)",
        accepts: "1 to 1,000,000,000, or none",
        absent: Some("as many as the rate brings during the duration"),
        kind: Kind::Count,
        group: Group::Load,
        list_separator: ',',
        choices: None,
        columns: &["requests"],
        set: |s, t| {
            s.server.requests = server::parse_request_count(t)?;
            Ok(())
        },
        show: |s| s.server.requests.map(|n| n.to_string()),
        fields: |s| optional(s.server.requests, |v| v.to_string()),
    },
    Param {
        key: "sources",
        value_name: "N",
        doc: "Independent sources the arrivals are split among (each keeps its own budget)",
        accepts: "1 to 10,000,000",
        absent: None,
        kind: Kind::Count,
        group: Group::Load,
        list_separator: ',',
        choices: None,
        columns: &["sources"],
        set: |s, t| {
            s.server.sources = server::parse_server_count(t, 1)?;
            Ok(())
        },
        show: |s| Some(s.server.sources.to_string()),
        fields: |s| vec![s.server.sources.to_string()],
    },
    Param {
        key: "concurrency",
        value_name: "K",
        doc: "Client-side limit: a request waits for one of K slots and holds it for its whole life",
        accepts: "1 to 10,000,000",
        absent: Some("unlimited"),
        kind: Kind::Count,
        group: Group::Load,
        list_separator: ',',
        choices: None,
        columns: &["concurrency"],
        set: |s, t| {
            s.server.concurrency = Some(server::parse_server_count(t, 1)?);
            Ok(())
        },
        show: |s| s.server.concurrency.map(|k| k.to_string()),
        fields: |s| optional(s.server.concurrency, |v| v.to_string()),
    },
    Param {
        key: "users",
        value_name: "N",
        doc: "Closed loop: N users, each with one request at a time, thinking between them",
        accepts: "1 to 10,000,000",
        absent: Some("the open loop"),
        kind: Kind::Count,
        group: Group::Load,
        list_separator: ',',
        choices: None,
        columns: &["users"],
        set: |s, t| {
            s.server.users = Some(server::parse_server_count(t, 1)?);
            Ok(())
        },
        show: |s| s.server.users.map(|k| k.to_string()),
        fields: |s| optional(s.server.users, |v| v.to_string()),
    },
    Param {
        key: "think",
        value_name: "DIST",
        doc: "Closed-loop think time between a user's requests",
        accepts: "a distribution: DURATION, const:D, exp:MEAN, lognormal:MEDIAN/SIGMA or \
                  lognormal:MEDIAN@pNN=VALUE, weibull:MEAN/SHAPE",
        absent: None,
        kind: Kind::Text,
        group: Group::Load,
        list_separator: ';',
        choices: None,
        columns: &["think"],
        set: |s, t| {
            s.server.think = server::parse_dist(t)?;
            Ok(())
        },
        show: |s| Some(s.server.think.to_string()),
        fields: |s| {
            vec![if s.server.users.is_some() {
                s.server.think.to_string()
            } else {
                String::new()
            }]
        },
    },
    Param {
        key: "first_call",
        value_name: "DIST",
        doc: "Each source (closed loop: each user) makes its first request at a draw of this: \
              in the open loop on top of the Poisson arrivals (Brooker 2022's clients: exp:10ms), \
              in a closed loop instead of a first think",
        accepts: "a distribution, or none",
        absent: Some("none (closed loop: after a first think)"),
        kind: Kind::Text,
        group: Group::Load,
        list_separator: ';',
        choices: None,
        columns: &["first_call"],
        set: |s, t| {
            s.server.first_call = server::parse_optional_dist(t)?;
            Ok(())
        },
        show: |s| s.server.first_call.map(|d| d.to_string()),
        fields: |s| optional(s.server.first_call, |d| d.to_string()),
    },
    Param {
        key: "workers",
        value_name: "C",
        doc: "Server workers (inf: unbounded)",
        accepts: "1 to 10,000,000, or inf",
        absent: None,
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ',',
        choices: None,
        columns: &["workers"],
        set: |s, t| {
            s.server.workers = server::parse_workers(t)?;
            Ok(())
        },
        show: |s| Some(server::show_workers(s.server.workers)),
        fields: |s| vec![server::show_workers(s.server.workers)],
    },
    Param {
        key: "queue_limit",
        value_name: "N",
        doc: "Queue places: an attempt arriving at a full queue is rejected at once",
        accepts: "0 to 10,000,000",
        absent: Some("unbounded"),
        kind: Kind::Count,
        group: Group::Server,
        list_separator: ',',
        choices: None,
        columns: &["queue_limit"],
        set: |s, t| {
            s.server.queue_limit = Some(server::parse_server_count(t, 0)?);
            Ok(())
        },
        show: |s| s.server.queue_limit.map(|k| k.to_string()),
        fields: |s| optional(s.server.queue_limit, |v| v.to_string()),
    },
    Param {
        key: "service",
        value_name: "DIST",
        doc: "Service time, drawn when a worker takes the attempt; mix:P/DIST/DIST for bimodal",
        accepts: "a distribution, or mix:P/DIST/DIST",
        absent: None,
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ';',
        choices: None,
        columns: &["service"],
        set: |s, t| {
            s.server.service = server::parse_service(t)?;
            Ok(())
        },
        show: |s| Some(s.server.service.to_string()),
        fields: |s| vec![s.server.service.to_string()],
    },
    Param {
        key: "service_per_busy",
        value_name: "DURATION",
        doc: "Added to an attempt's service time for each attempt in service when it starts, \
              itself included, fixed then (Brooker 2023's collapse server: 1s + 10ms × in \
              service)",
        accepts: "a duration, 0 or more",
        absent: None,
        kind: Kind::Duration,
        group: Group::Server,
        list_separator: ',',
        choices: None,
        columns: &["service_per_busy_ms"],
        set: |s, t| {
            s.server.service_per_busy_us = parse_duration(t)?;
            Ok(())
        },
        show: |s| Some(format_duration(s.server.service_per_busy_us)),
        fields: |s| vec![n(us_to_ms(s.server.service_per_busy_us)).to_string()],
    },
    Param {
        key: "fail_rate",
        value_name: "P",
        doc: "Probability an attempt fails, decided when its service completes",
        accepts: "0 to 1",
        absent: None,
        kind: Kind::Number,
        group: Group::Server,
        list_separator: ',',
        choices: None,
        columns: &["fail_rate"],
        set: |s, t| {
            s.server.fail_rate = server::parse_probability(t)?;
            Ok(())
        },
        show: |s| Some(s.server.fail_rate.to_string()),
        fields: |s| vec![n(s.server.fail_rate)],
    },
    Param {
        key: "request_delay",
        value_name: "DIST",
        doc: "Network delay client to server, per attempt",
        accepts: "a distribution",
        absent: None,
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ';',
        choices: None,
        columns: &["request_delay"],
        set: |s, t| {
            s.server.request_delay = server::parse_dist(t)?;
            Ok(())
        },
        show: |s| Some(s.server.request_delay.to_string()),
        fields: |s| vec![s.server.request_delay.to_string()],
    },
    Param {
        key: "reply_delay",
        value_name: "DIST",
        doc: "Network delay server to client, per attempt",
        accepts: "a distribution",
        absent: None,
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ';',
        choices: None,
        columns: &["reply_delay"],
        set: |s, t| {
            s.server.reply_delay = server::parse_dist(t)?;
            Ok(())
        },
        show: |s| Some(s.server.reply_delay.to_string()),
        fields: |s| vec![s.server.reply_delay.to_string()],
    },
    Param {
        key: "timeout",
        value_name: "DURATION",
        doc: "Per-attempt timeout; the server keeps working on an attempt its client gave up",
        accepts: "a duration of at least 1us, or none",
        absent: Some("none"),
        kind: Kind::Duration,
        group: Group::Server,
        list_separator: ',',
        choices: None,
        columns: &["timeout_ms"],
        set: |s, t| {
            s.server.timeout_us = server::parse_optional_duration(t)?;
            Ok(())
        },
        show: |s| s.server.timeout_us.map(format_duration),
        fields: |s| optional(s.server.timeout_us.map(us_to_ms).map(n), |v| v.to_string()),
    },
    Param {
        key: "timeout_choices",
        value_name: "D/D/…",
        doc: "Per-request timeouts instead of one: each request draws one of these durations, \
              uniformly, when it is made (the Yandex study's 100ms/200ms/300ms)",
        accepts: "up to 64 durations of at least 1us joined by /, or none",
        absent: Some("none"),
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ';',
        choices: None,
        columns: &["timeout_choices"],
        set: |s, t| {
            s.server.timeout_choices = server::parse_timeout_choices(t)?;
            Ok(())
        },
        show: |s| {
            (!s.server.timeout_choices.is_empty())
                .then(|| server::show_timeout_choices(&s.server.timeout_choices))
        },
        fields: |s| vec![server::show_timeout_choices(&s.server.timeout_choices)],
    },
    Param {
        key: "timeout_law",
        value_name: "LAW",
        doc: "How long each attempt's timeout is: fixed (exactly timeout) or exponential (a fresh \
              draw of mean timeout per attempt: the memoryless timeout of herdsim exact's Markov \
              chain)",
        accepts: "fixed, exponential",
        absent: None,
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::server::TimeoutLaw::VARIANTS,
                crate::model::server::TimeoutLaw::name,
            )
        }),
        // No CSV column, as hedge_on_timeout: every committed sweep file
        // keeps its columns (a sweep over it tells its points apart by their
        // index).
        columns: &[],
        set: |s, t| {
            s.server.timeout_law = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.server.timeout_law.name().to_string()),
        fields: |_| Vec::new(),
    },
    Param {
        key: "timeout_noticed",
        value_name: "WHEN",
        doc: "When the client notices a timeout: deadline (when it passes), or reply (when the \
              late reply comes, which then counts as a timeout: Brooker 2023's omission client)",
        accepts: "deadline, reply",
        absent: None,
        kind: Kind::Text,
        group: Group::Server,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::server::TimeoutNoticed::VARIANTS,
                crate::model::server::TimeoutNoticed::name,
            )
        }),
        columns: &["timeout_noticed"],
        set: |s, t| {
            s.server.timeout_noticed = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.server.timeout_noticed.name().to_string()),
        fields: |s| vec![s.server.timeout_noticed.name().to_string()],
    },
    Param {
        key: "deadline_propagation",
        value_name: "WHOSE",
        doc: "Attempts carry a deadline to the server (the Yandex study's): none, call (the \
              request's start + timeout) or attempt (its send + timeout); a worker rejects an \
              expired one in 5% of its service, and cuts one with too little left",
        accepts: "none, call, attempt",
        absent: None,
        kind: Kind::Text,
        group: Group::ServerControl,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::control::deadline_propagation::DeadlinePropagation::VARIANTS,
                crate::control::deadline_propagation::DeadlinePropagation::name,
            )
        }),
        columns: &["deadline_propagation"],
        set: |s, t| {
            s.server.deadline_propagation = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.server.deadline_propagation.name().to_string()),
        fields: |s| vec![s.server.deadline_propagation.name().to_string()],
    },
    Param {
        key: "discipline",
        value_name: "RULE",
        doc: "The queue's discipline: fifo, lifo, random (a waiting attempt drawn uniformly: \
              herdsim exact's order), adaptive-lifo:THRESHOLD (LIFO once the oldest has waited \
              that long) or codel:TARGET,interval:D (drops answered as rejections)",
        accepts: "fifo, lifo, random, adaptive-lifo:D, codel:D,interval:D",
        absent: None,
        kind: Kind::Text,
        group: Group::ServerControl,
        list_separator: ';',
        choices: None,
        columns: &["discipline"],
        set: |s, t| {
            s.server.discipline = t.parse().map_err(ParamError::Control)?;
            Ok(())
        },
        show: |s| Some(s.server.discipline.to_string()),
        fields: |s| vec![s.server.discipline.to_string()],
    },
    Param {
        key: "shed_wait",
        value_name: "DURATION",
        doc: "Shed load: refuse an arriving attempt at once when the queue it would join is \
              expected to take longer than this (queue / workers × mean service)",
        accepts: "a duration of at least 1us, or none",
        absent: Some("none"),
        kind: Kind::Duration,
        group: Group::ServerControl,
        list_separator: ',',
        choices: None,
        columns: &["shed_wait_ms"],
        set: |s, t| {
            s.server.shed_wait_us = server::parse_optional_duration(t)?;
            Ok(())
        },
        show: |s| s.server.shed_wait_us.map(format_duration),
        fields: |s| {
            optional(s.server.shed_wait_us.map(us_to_ms).map(n), |v| {
                v.to_string()
            })
        },
    },
    Param {
        key: "depth",
        value_name: "K",
        doc: "Services in a call chain, the server at its bottom included: a user's request \
              goes to service 1, and a worker of each service above the server calls the one \
              below and waits, retrying on its own (1: the server alone)",
        accepts: "1 to 10",
        absent: None,
        kind: Kind::Count,
        group: Group::Chain,
        list_separator: ',',
        choices: None,
        columns: &["depth"],
        set: |s, t| {
            s.server.chain.depth = server::parse_depth(t)?;
            Ok(())
        },
        show: |s| Some(s.server.chain.depth.to_string()),
        fields: |s| vec![s.server.chain.depth.to_string()],
    },
    Param {
        key: "layer_workers",
        value_name: "C",
        doc: "Workers of each service above the server; a worker is held while its call below \
              runs (inf: unbounded)",
        accepts: "1 to 10,000,000, or inf",
        absent: None,
        kind: Kind::Text,
        group: Group::Chain,
        list_separator: ',',
        choices: None,
        columns: &["layer_workers"],
        set: |s, t| {
            s.server.chain.workers = server::parse_workers(t)?;
            Ok(())
        },
        show: |s| Some(server::show_workers(s.server.chain.workers)),
        fields: |s| vec![server::show_workers(s.server.chain.workers)],
    },
    Param {
        key: "layer_service",
        value_name: "DIST",
        doc: "Each service above the server: its own work on an attempt, before it calls below",
        accepts: "a distribution",
        absent: None,
        kind: Kind::Text,
        group: Group::Chain,
        list_separator: ';',
        choices: None,
        columns: &["layer_service"],
        set: |s, t| {
            s.server.chain.service = server::parse_dist(t)?;
            Ok(())
        },
        show: |s| Some(s.server.chain.service.to_string()),
        fields: |s| vec![s.server.chain.service.to_string()],
    },
    Param {
        key: "layer_timeout_ratio",
        value_name: "R",
        doc: "Each service's calls below time out after the timeout of the calls made to it \
              times this (the users' timeout at the top; below 1, inner timeouts are shorter)",
        accepts: "0.01 to 100",
        absent: None,
        kind: Kind::Number,
        group: Group::Chain,
        list_separator: ',',
        choices: None,
        columns: &["layer_timeout_ratio"],
        set: |s, t| {
            s.server.chain.timeout_ratio = server::parse_timeout_ratio(t)?;
            Ok(())
        },
        show: |s| Some(s.server.chain.timeout_ratio.to_string()),
        fields: |s| vec![n(s.server.chain.timeout_ratio)],
    },
    Param {
        key: "layer_max_attempts",
        value_name: "N",
        doc: "Most attempts of each call a service above the server makes below",
        accepts: "1 to 1,000,000,000",
        absent: Some("the users' max_attempts"),
        kind: Kind::Count,
        group: Group::Chain,
        list_separator: ',',
        choices: None,
        columns: &["layer_max_attempts"],
        set: |s, t| {
            s.server.chain.max_attempts = Some(spec::parse_max_attempts(t)?);
            Ok(())
        },
        show: |s| s.server.chain.max_attempts.map(|n| n.to_string()),
        fields: |s| {
            optional(s.server.chain.max_attempts.or(s.max_attempts), |n| {
                n.to_string()
            })
        },
    },
    Param {
        key: "layer_specs",
        value_name: "SPEC+SPEC…",
        doc: "Each service above the server on its own, top first, joined by +: key=value \
              settings among workers, service, timeout (of its calls below, in place of the \
              ratio's), max_attempts, policy, base, cap, budget, breaker and throttle (a \
              control's own commas need no quoting), in place of the layer_* values and the \
              users' policy and controls",
        accepts: "one setting list per service above the server, joined by +, or none",
        absent: Some("every upper service as the layer_* keys say"),
        kind: Kind::Text,
        group: Group::Chain,
        list_separator: ';',
        choices: None,
        columns: &["layer_specs"],
        set: |s, t| {
            s.server.chain.layers = server::parse_layer_specs(t)?;
            Ok(())
        },
        show: |s| {
            (!s.server.chain.layers.is_empty())
                .then(|| server::show_layer_specs(&s.server.chain.layers))
        },
        fields: |s| vec![server::show_layer_specs(&s.server.chain.layers)],
    },
    Param {
        key: "retry_scope",
        value_name: "WHO",
        doc: "Who retries a failure that came from below the service it called: every caller, \
              or only the one adjacent to the failing service (the Google SRE book's advice)",
        accepts: "every, adjacent",
        absent: None,
        kind: Kind::Text,
        group: Group::Chain,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::chain::RetryScope::VARIANTS,
                crate::model::chain::RetryScope::name,
            )
        }),
        columns: &["retry_scope"],
        set: |s, t| {
            s.server.chain.retry_scope = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.server.chain.retry_scope.name().to_string()),
        fields: |s| vec![s.server.chain.retry_scope.name().to_string()],
    },
    Param {
        key: "trigger",
        value_name: "SPEC",
        doc: "Triggers over windows, joined by +: outage, fail:P, user-fail:P (either in place \
              of fail_rate), spike:K, ramp:A/B (the load factor from A to B), slow:K, \
              capacity:C, each @FROM..TO",
        accepts: "KIND@FROM..TO joined by +, or none",
        absent: Some("none"),
        kind: Kind::Text,
        group: Group::Trigger,
        list_separator: ';',
        choices: None,
        columns: &["trigger"],
        set: |s, t| {
            s.server.triggers = server::parse_triggers(t)?;
            Ok(())
        },
        show: |s| Some(s.server.triggers.to_string()),
        fields: |s| vec![s.server.triggers.to_string()],
    },
    Param {
        key: "rate_changes",
        value_name: "HOW",
        doc: "How open-loop arrivals follow a changing rate (spikes, ramps): exact \
              (non-homogeneous Poisson), or at-arrival (each gap drawn at the rate in force at \
              the arrival before it, stopping where the rate is 0: Brooker 2023's collapse \
              generator)",
        accepts: "exact, at-arrival",
        absent: None,
        kind: Kind::Text,
        group: Group::Trigger,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::server::RateChanges::VARIANTS,
                crate::model::server::RateChanges::name,
            )
        }),
        columns: &["rate_changes"],
        set: |s, t| {
            s.server.rate_changes = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.server.rate_changes.name().to_string()),
        fields: |s| vec![s.server.rate_changes.name().to_string()],
    },
    Param {
        key: "failure_end",
        value_name: "WHEN",
        doc: "When a failure trigger stops failing attempts: window (at its end), or \
              next-start (at the first service start after it, as the Yandex study's server \
              drops its failure)",
        accepts: "window, next-start",
        absent: None,
        kind: Kind::Text,
        group: Group::Trigger,
        list_separator: ',',
        choices: Some(|| {
            names(
                crate::model::server::FailureEnd::VARIANTS,
                crate::model::server::FailureEnd::name,
            )
        }),
        columns: &["failure_end"],
        set: |s, t| {
            s.server.failure_end = t.parse().map_err(ParamError::Base)?;
            Ok(())
        },
        show: |s| Some(s.server.failure_end.name().to_string()),
        fields: |s| vec![s.server.failure_end.name().to_string()],
    },
    Param {
        key: "horizon",
        value_name: "DURATION",
        doc: "Cut the run here even with requests in flight, and say so (none: run until \
              every request ends, which a service stuck with unlimited retries never does)",
        accepts: "a duration of at least 1us, or none",
        absent: Some("the load's end plus 3 patience windows"),
        kind: Kind::Duration,
        group: Group::Measure,
        list_separator: ',',
        choices: None,
        columns: &["horizon_ms"],
        set: |s, t| {
            s.server.horizon_us = Some(server::parse_optional_duration(t)?);
            Ok(())
        },
        show: |s| {
            s.server
                .horizon_us
                .map(|h| h.map_or_else(|| "none".to_string(), format_duration))
        },
        fields: |s| optional(s.horizon_us().map(us_to_ms).map(n), |v| v.to_string()),
    },
];

/// Every parameter column of a sweep file, in order.
pub fn parameter_columns() -> Vec<&'static str> {
    PARAMS
        .iter()
        .flat_map(|p| p.columns.iter().copied())
        .chain(DERIVED_COLUMNS)
        .collect()
}

/// Columns after the parameters' that say in numbers what they make
/// (server model; empty elsewhere): the first trigger's start and length
/// and the triggers' total length, ms, and the peak offered load
/// ([`super::server::ServerParams::offered_loads`]). They label nothing:
/// their parameters do.
pub const DERIVED_COLUMNS: [&str; 4] = [
    "trigger_start_ms",
    "trigger_length_ms",
    "triggers_total_ms",
    "offered_load",
];

/// A spec's parameter fields, matching [`parameter_columns`].
pub fn parameter_fields(spec: &RunSpec) -> Vec<String> {
    let mut fields: Vec<String> = PARAMS
        .iter()
        .flat_map(|p| {
            if p.applies_to(spec.resource) {
                (p.fields)(spec)
            } else {
                vec![String::new(); p.columns.len()]
            }
        })
        .collect();
    if spec.resource == ResourceKind::Server {
        let [start, length, total] = spec.server.trigger_fields();
        let rho = spec.server.peak_offered_load();
        fields.extend([start, length, total, rho].map(|v| v.map_or_else(String::new, n)));
    } else {
        fields.extend(DERIVED_COLUMNS.map(|_| String::new()));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;
    use crate::policy::PolicyKind;

    #[test]
    fn keys_are_unique_snake_case_and_columns_match_fields() {
        let mut keys: Vec<_> = PARAMS.iter().map(|p| p.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), PARAMS.len());
        for p in &PARAMS {
            assert!(
                p.key.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{}",
                p.key
            );
            assert_eq!(
                (p.fields)(&RunSpec::default()).len(),
                p.columns.len(),
                "{}",
                p.key
            );
        }
        let columns = parameter_columns();
        let mut unique = columns.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), columns.len(), "a column named twice");
    }

    #[test]
    fn every_shown_value_reads_back_to_the_same_spec() {
        let mut spec = RunSpec::seed_002(PolicyKind::Linear, 250);
        spec.capacity_per_ms = 0.3;
        spec.policy.base_us = Micros::from_us(1500);
        spec.policy.step_us = Some(Micros::ZERO);
        spec.policy.jitter_factor = 0.1 + 0.2;
        spec.window_us = Some(Micros::from_us(7));
        spec.arrivals = "poisson:0.3333333333333333".parse().unwrap();
        spec.down = Some((Micros::from_us(1), Micros::from_us(2_500_001)));
        spec.max_attempts = Some(8);
        spec.deadline_us = Some(Micros::from_s(60));
        spec.hedge_delay_us = Some(Micros::ZERO);
        spec.budget = spec::parse_control(Family::Budget, "ratio:0.1,min:10").unwrap();
        spec.breaker = spec::parse_control(Family::Breaker, "windowed:0.1,window:200ms").unwrap();
        spec.throttle = spec::parse_control(Family::Throttle, "sre:2,window:2m").unwrap();
        spec.fleet = Some(10);
        let server = &mut spec.server;
        server.rate_per_s = Some(333.3);
        server.concurrency = Some(4);
        server.requests = Some(1500);
        server.users = Some(3);
        server.duration_us = Some(Micros::from_ms(12_500));
        server.patience_us = Some(Micros::from_s(45));
        server.queue_limit = Some(0);
        server.service = "mix:0.25/lognormal:1.5ms/0.3/exp:20ms".parse().unwrap();
        server.think = "lognormal:1s/1.25".parse().unwrap();
        server.first_call = Some("exp:10ms".parse().unwrap());
        server.timeout_us = Some(Micros::from_us(250));
        server.timeout_choices = vec![Micros::from_ms(100), Micros::from_us(200_500)];
        server.triggers = "outage@1s..1.5s+capacity:0@2s..3s+ramp:1/0.5@4s..5s"
            .parse()
            .unwrap();
        server.service_per_busy_us = Micros::from_ms(10);
        spec.occ.write_time = "normal:2ms/1ms".parse().unwrap();
        server.horizon_us = Some(Some(Micros::from_s(90)));
        server.shed_wait_us = Some(Micros::from_ms(20));
        server.workers = None;
        server.chain.depth = 4;
        server.chain.workers = Some(8);
        server.chain.service = "const:2ms".parse().unwrap();
        server.chain.timeout_ratio = 0.75;
        server.chain.max_attempts = Some(2);
        server.chain.retry_scope = crate::model::chain::RetryScope::Adjacent;
        server.chain.layers = server::parse_layer_specs(
            "workers=inf,timeout=250ms,budget=ratio:0.1,min:0+max_attempts=2,policy=full,\
                 base=10ms,cap=1s,breaker=none+service=exp:3ms,throttle=sre:2,window:2m",
        )
        .unwrap();
        assert_eq!(
            server.chain.layers[0].controls[0]
                .unwrap()
                .unwrap()
                .to_string(),
            "ratio:0.1,min:0"
        );
        for p in &PARAMS {
            let shown = (p.show)(&spec).unwrap_or_else(|| panic!("{} is absent", p.key));
            let mut read = RunSpec::default();
            (p.set)(&mut read, &shown).unwrap();
            assert_eq!((p.show)(&read), Some(shown), "{}", p.key);
        }
    }

    #[test]
    fn every_parameter_applies_to_the_models_it_always_did() {
        // The answers before the groups were split into help headings: they
        // decide empty CSV fields and warnings, so results depend on them.
        const SERVER: [&str; 37] = [
            "retry_on",
            "hedge_delay",
            "hedge_on_timeout",
            "rate",
            "duration",
            "patience",
            "requests",
            "sources",
            "concurrency",
            "users",
            "think",
            "first_call",
            "workers",
            "queue_limit",
            "service",
            "service_per_busy",
            "fail_rate",
            "request_delay",
            "reply_delay",
            "timeout",
            "timeout_choices",
            "timeout_law",
            "timeout_noticed",
            "deadline_propagation",
            "discipline",
            "shed_wait",
            "depth",
            "layer_workers",
            "layer_service",
            "layer_timeout_ratio",
            "layer_max_attempts",
            "layer_specs",
            "retry_scope",
            "trigger",
            "rate_changes",
            "failure_end",
            "horizon",
        ];
        const OCC: [&str; 3] = ["occ_server", "write_time", "occ_done"];
        for p in &PARAMS {
            for &resource in ResourceKind::VARIANTS {
                let server = resource == ResourceKind::Server;
                let expected = if SERVER.contains(&p.key) {
                    server
                } else if OCC.contains(&p.key) {
                    resource == ResourceKind::Occ
                } else {
                    !(server && HERD_ONLY.contains(&p.key))
                };
                assert_eq!(p.applies_to(resource), expected, "{} on {resource}", p.key);
            }
        }
        // `herdsim policy` takes the same shape as ever, and resilience4j's
        // randomization factor.
        let policy: Vec<&str> = PARAMS
            .iter()
            .filter(|p| p.group == Group::Policy)
            .map(|p| p.key)
            .collect();
        assert_eq!(
            policy,
            [
                "policy",
                "base",
                "cap",
                "step",
                "jitter_factor",
                "random_factor",
                "throttle_base",
                "first_exponent",
                "multiplier",
                "cap_mode"
            ]
        );
    }

    #[test]
    fn each_parameter_says_which_models_read_it() {
        let text = |key: &str| param(key).unwrap().models_text();
        assert_eq!(text("policy"), None);
        assert_eq!(text("rate").as_deref(), Some("the server model"));
        assert_eq!(
            text("clients").as_deref(),
            Some("the herd models (slot, outage, occ)")
        );
        assert_eq!(text("write_time").as_deref(), Some("the occ model"));
        assert_eq!(text("down").as_deref(), Some("the slot model"));
        assert_eq!(param("clients").unwrap().summary(), "Clients in the herd");
        assert_eq!(param("resource").unwrap().summary(), "Resource model");
        for p in &PARAMS {
            assert!(!p.summary().is_empty(), "{}", p.key);
        }
    }

    #[test]
    fn a_value_out_of_range_is_refused_by_its_parameter() {
        let clients = param("clients").unwrap();
        assert_eq!(
            clients.check("0").unwrap_err().to_string(),
            "expected a whole number from 1 to 100,000,000"
        );
        assert_eq!(clients.flag(), "clients");
        assert_eq!(param("max_attempts").unwrap().flag(), "max-attempts");
        assert!(param("frobs").is_none());
        assert_eq!(
            param("window").unwrap().default_text(),
            "one service time (slot), 100ms (server), 1ms (other models)"
        );
        assert_eq!(param("cap").unwrap().default_text(), "20s");
    }
}
