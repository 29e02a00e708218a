//! Command-line flags made from the parameter registry: one flag per
//! [`Param`], with its value name, help line, accepted names and checker.
//!
//! `run` takes one value per flag, `sweep` and `compare` a list (a grid
//! axis), `policy` the policy's shape only. Each value is checked by its
//! parameter as clap reads it, so a bad one is one line naming the flag.

use std::marker::PhantomData;

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use crate::base::error::BaseError;
use crate::experiment::grid::Grid;
use crate::spec::ParamError;
use crate::spec::params::{Group, PARAMS, Param};

/// A value that takes one of a few names: clap's list of them (in `--help`,
/// and its message for an unknown name), except that a name refused with a
/// reason of its own (an ambiguous one, such as the policy `grpc`) gets
/// that reason, in one line naming the flag.
#[derive(Clone)]
pub struct Names<F> {
    names: PossibleValuesParser,
    refuse: F,
}

impl<F: Fn(&str) -> Option<String> + Clone + Send + Sync + 'static> Names<F> {
    /// `names`, with `refuse` saying why a name is refused, if it is.
    pub fn new(names: Vec<&'static str>, refuse: F) -> Self {
        Names {
            names: PossibleValuesParser::new(names),
            refuse,
        }
    }
}

/// Why `result`'s name is refused, if it is an ambiguous name.
pub fn ambiguous<T>(result: Result<T, BaseError>) -> Option<String> {
    match result {
        Err(e @ BaseError::AmbiguousName { .. }) => Some(e.to_string()),
        _ => None,
    }
}

impl<F: Fn(&str) -> Option<String> + Clone + Send + Sync + 'static> TypedValueParser for Names<F> {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        if let Some(reason) = value.to_str().and_then(|text| (self.refuse)(text)) {
            let name = arg.map_or_else(|| "...".to_string(), ToString::to_string);
            let text = value.to_string_lossy();
            return Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value '{text}' for '{name}': {reason}\n"),
            )
            .with_cmd(cmd));
        }
        self.names.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.names.possible_values()
    }
}

/// Which parameters a command takes, and how many values each.
pub trait FlagSet {
    /// Several values per flag (a grid axis).
    const LIST: bool;
    /// True if the command takes `param`.
    fn takes(param: &Param) -> bool;
}

/// Every parameter, one value each (`run`).
pub struct Single;

impl FlagSet for Single {
    const LIST: bool = false;
    fn takes(_: &Param) -> bool {
        true
    }
}

/// Every parameter, a list each (`sweep`, `compare`).
pub struct Lists;

impl FlagSet for Lists {
    const LIST: bool = true;
    fn takes(_: &Param) -> bool {
        true
    }
}

/// The policy's shape, one value each (`policy`, which names its policies).
pub struct PolicyShape;

impl FlagSet for PolicyShape {
    const LIST: bool = false;
    fn takes(param: &Param) -> bool {
        param.group == Group::Policy && param.key != "policy"
    }
}

/// What a client's retries are: the policy and the retry controls, one
/// value each (`conform`, which holds a recorded trace to them).
pub struct ClientRetries;

impl FlagSet for ClientRetries {
    const LIST: bool = false;
    fn takes(param: &Param) -> bool {
        matches!(param.group, Group::Policy | Group::RetryControl)
    }
}

/// The registry flags a command was given, in registry order.
pub struct ParamFlags<S> {
    /// Each given parameter with its values (one, unless a list).
    pub given: Vec<(&'static Param, Vec<String>)>,
    set: PhantomData<S>,
}

impl<S> std::fmt::Debug for ParamFlags<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.given).finish()
    }
}

impl<S: FlagSet> ParamFlags<S> {
    /// `grid` with every given parameter's values in place of its own.
    pub fn apply_to(&self, grid: &mut Grid) {
        for (param, values) in &self.given {
            grid.set(param, values.clone())
                .expect("clap checked each value with its parameter");
        }
    }

    /// The given parameters' keys.
    pub fn keys(&self) -> Vec<&'static str> {
        self.given.iter().map(|(p, _)| p.key).collect()
    }
}

/// The longest default `-h` shows.
const MAX_SHORT_DEFAULT: usize = 32;

/// The flag of `param`, under its group's heading: `-h` gives its summary
/// and default, `--help` its whole doc, what it accepts, its default, the
/// models that read it and, for a list, how to give several values.
fn flag_of<S: FlagSet>(param: &'static Param) -> Arg {
    let default = param.default_text();
    // A default too long for `-h`'s one line is in `--help` only.
    let help = if S::LIST || default.len() > MAX_SHORT_DEFAULT {
        param.summary().to_string()
    } else {
        format!("{} [default: {default}]", param.summary())
    };
    let mut long_help = format!("{}\n\nAccepts: {}", param.doc, param.accepts);
    // The names, where the words do not already list them.
    if let Some(names) = param.choices.map(|names| names())
        && !names.iter().all(|name| param.accepts.contains(name))
    {
        long_help += &format!(" ({})", names.join(", "));
    }
    long_help += &format!(
        "\nDefault: {default}\nRead by: {}",
        param
            .models_text()
            .unwrap_or_else(|| "every model".to_string())
    );
    if S::LIST {
        long_help += &match param.list_separator {
            ',' => "\nSeveral values (a grid axis): comma-separated".to_string(),
            other => format!("\nSeveral values (a grid axis): separated by '{other}'"),
        };
    }
    let arg = Arg::new(param.key)
        .long(param.flag())
        .help(help)
        .long_help(long_help)
        .help_heading(param.group.heading())
        .hide_possible_values(true)
        .allow_hyphen_values(true);
    let arg = match param.choices {
        Some(names) => arg.value_parser(Names::new(names(), move |text: &str| {
            match param.check(text) {
                Err(ParamError::Base(e)) => ambiguous::<()>(Err(e)),
                _ => None,
            }
        })),
        None => arg.value_parser(move |text: &str| param.check(text).map(|()| text.to_string())),
    };
    if S::LIST {
        arg.value_name("LIST")
            .value_delimiter(param.list_separator)
            .action(ArgAction::Append)
    } else {
        arg.value_name(param.value_name).action(ArgAction::Set)
    }
}

/// The parameters a command takes, in `--help`'s order: by group, then in
/// registry order.
fn taken<S: FlagSet>() -> Vec<&'static Param> {
    let mut params: Vec<&'static Param> = PARAMS.iter().filter(|p| S::takes(p)).collect();
    params.sort_by_key(|p| p.group.rank());
    params
}

impl<S: FlagSet> Args for ParamFlags<S> {
    fn augment_args(command: Command) -> Command {
        taken::<S>()
            .into_iter()
            .fold(command, |command, param| command.arg(flag_of::<S>(param)))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl<S: FlagSet> FromArgMatches for ParamFlags<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = PARAMS
            .iter()
            .filter(|p| S::takes(p))
            .filter_map(|param| {
                let values: Vec<String> = matches.get_many::<String>(param.key)?.cloned().collect();
                Some((param, values))
            })
            .collect();
        Ok(ParamFlags {
            given,
            set: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
