//! Reading the retry, budget and breaker settings people run (a gRPC
//! service config, an Envoy route and cluster, an AWS config file, a
//! resilience4j or Polly setup, a Linkerd or Gateway API budget) as
//! herdsim's own parameters.
//!
//! Each format is a reader of its own file, reading the file as its
//! project's code does; each setting it makes names the source field it came
//! from and the rule applied ("num_retries 2 → max_attempts 3: Envoy counts
//! retries"), so `herdsim import` can print a scenario a user can audit.
//! A field a format has that herdsim cannot model is refused with its path
//! and why, never dropped; an unknown field is an error unless the user asks
//! for warnings ([`Unknown::Warn`]). Pure: the command line reads the files
//! and the environment and hands them in.

pub mod aws;
pub mod dotnet;
pub mod durations;
pub mod envoy;
pub mod gateway;
pub mod grpc;
pub mod kube;
pub mod linkerd;
pub mod polly;
pub mod resilience4j;
pub mod tree;

use std::cell::RefCell;
use std::fmt;

use serde_json::Value;

use crate::base::format::printable;
use crate::spec::params::{Kind, param};
use tree::Node;

/// What to do with a field the format does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unknown {
    /// Refuse the file (the default: a misspelt key silently ignored is
    /// exactly the mistake importing is meant to prevent).
    #[default]
    Refuse,
    /// Warn and go on.
    Warn,
}

/// How files are read: the user's choices among what they offer.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `KIND=NAME` choices (`method=helloworld.Greeter/SayHello`,
    /// `cluster=backend`, `instance=backendA`, `profile=prod`): which of
    /// several configurations in a file applies, or which behaviour of a
    /// format (`behaviour=2026`).
    pub select: Vec<(String, String)>,
    /// Unknown fields: refused or warned of.
    pub unknown: Unknown,
    /// The environment variables a format reads (the AWS SDKs'
    /// `AWS_RETRY_MODE`), as the command line found them.
    pub env: Vec<(String, String)>,
}

/// One input file: the name it is shown by and its text.
#[derive(Debug, Clone)]
pub struct Source {
    /// As the user named it.
    pub file: String,
    /// Its contents.
    pub text: String,
}

/// One herdsim parameter an imported file sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The registry key (`max_attempts`).
    pub key: &'static str,
    /// The value as the flag takes it (`3`, `"100ms"` without quotes).
    pub value: String,
    /// Where it came from: `FILE: FIELD PATH` (several, comma-separated).
    pub from: String,
    /// The rule applied, in words.
    pub rule: String,
}

/// What a set of files amounts to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    /// Each file read: its name, its format's name and what was chosen in
    /// it (`methodConfig[0] (helloworld.Greeter)`).
    pub files: Vec<(String, &'static str, String)>,
    /// The settings, in the order the files gave them.
    pub settings: Vec<Setting>,
    /// Unknown fields passed over (with [`Unknown::Warn`]) and other notes.
    pub warnings: Vec<String>,
    /// What a reader assumed that the file does not say and a figure
    /// depends on (the SDK release that runs it), for the run's notes.
    pub assumptions: Vec<String>,
}

impl Imported {
    /// The value imported for `key`, if any.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|s| s.key == key)
            .map(|s| s.value.as_str())
    }
}

/// A file refused: which file, which field, why (with the accepted values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The file, as the user named it.
    pub file: String,
    /// The field path (`methodConfig[0].retryPolicy.maxAttempts`), or empty
    /// for the file as a whole.
    pub path: String,
    /// Why, and what is accepted.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The file's name, its keys and values are the user's: escaped, so
        // the error stays one line.
        let (file, message) = (printable(&self.file), printable(&self.message));
        if self.path.is_empty() {
            write!(f, "{file}: {message}")
        } else {
            write!(f, "{file}: {}: {message}", printable(&self.path))
        }
    }
}

impl std::error::Error for ImportError {}

/// A format reader's view of its file: the options, and the settings and
/// warnings it makes.
#[derive(Debug)]
pub struct Context<'a> {
    /// The file's name.
    pub file: &'a str,
    /// The file's text (a reader that needs more than the parsed document
    /// reads it again: Polly's keys given twice).
    pub text: &'a str,
    options: &'a Options,
    settings: RefCell<Vec<Setting>>,
    warnings: RefCell<Vec<String>>,
    chosen: RefCell<Vec<String>>,
    assumptions: RefCell<Vec<String>>,
    /// The selection kinds this file's reader asked about.
    asked: RefCell<Vec<String>>,
}

impl<'a> Context<'a> {
    fn new(source: &'a Source, options: &'a Options) -> Self {
        Context {
            file: &source.file,
            text: &source.text,
            options,
            settings: RefCell::default(),
            warnings: RefCell::default(),
            chosen: RefCell::default(),
            assumptions: RefCell::default(),
            asked: RefCell::default(),
        }
    }

    /// An error at `node`.
    pub fn error(&self, node: &Node<'_>, message: impl Into<String>) -> ImportError {
        self.error_at(node.path(), message)
    }

    /// An error at the field path `path`.
    pub fn error_at(&self, path: &str, message: impl Into<String>) -> ImportError {
        ImportError {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// A field the format does not have (`known` are the ones it has):
    /// an error, or a warning if the user asked for warnings.
    pub fn unknown(&self, node: &Node<'_>, known: &[&str]) -> Result<(), ImportError> {
        let message = format!("unknown field: expected one of {}", known.join(", "));
        match self.options.unknown {
            Unknown::Refuse => {
                Err(self.error(node, format!("{message} (--warn-unknown to pass over it)")))
            }
            Unknown::Warn => {
                self.warn(format!(
                    "{}: {}: {message}; passed over",
                    self.file,
                    node.path()
                ));
                Ok(())
            }
        }
    }

    /// A field the format has that herdsim cannot model: always refused,
    /// saying why (never dropped: the run would not be the user's).
    pub fn unsupported(&self, node: &Node<'_>, why: &str) -> ImportError {
        self.error(node, format!("not modelled: {why}"))
    }

    /// A note for the user, printed with the import.
    pub fn warn(&self, text: String) {
        self.warnings.borrow_mut().push(text);
    }

    /// What the user chose for `kind` (`cluster`), if anything.
    pub fn selection(&self, kind: &str) -> Option<&'a str> {
        self.asked.borrow_mut().push(kind.to_string());
        self.options
            .select
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, name)| name.as_str())
    }

    /// Notes what was chosen in the file, for the import's header.
    pub fn chose(&self, text: impl Into<String>) {
        self.chosen.borrow_mut().push(text.into());
    }

    /// Notes what the reader assumed that the file does not say (the
    /// release that runs it), for every run that imports it: prefixed with
    /// the file's name.
    pub fn assumed(&self, text: impl Into<String>) {
        self.assumptions
            .borrow_mut()
            .push(format!("{}: {}", self.file, text.into()));
    }

    /// The environment variable `name`, as the command line found it.
    pub fn env(&self, name: &str) -> Option<&'a str> {
        self.options
            .env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets herdsim's `key` to `value`, from the fields `from` (paths in
    /// this file), by `rule`. The value is checked by the parameter's own
    /// parser, so an importer bug or a value beyond herdsim's range is
    /// refused here, at the field it came from.
    pub fn set(
        &self,
        key: &'static str,
        value: impl Into<String>,
        from: &[&str],
        rule: impl Into<String>,
    ) -> Result<(), ImportError> {
        let value = value.into();
        let param = param(key).unwrap_or_else(|| panic!("'{key}' is not a registry key"));
        let path = from.join(", ");
        param.check(&value).map_err(|e| {
            self.error_at(
                &path,
                format!("gives {key} = {value}, which herdsim refuses: {e}"),
            )
        })?;
        let from = if path.is_empty() {
            self.file.to_string()
        } else {
            format!("{}: {path}", self.file)
        };
        let mut settings = self.settings.borrow_mut();
        if let Some(old) = settings.iter().find(|s| s.key == key) {
            panic!("'{key}' set twice in one file ({} and {from})", old.from);
        }
        settings.push(Setting {
            key,
            value,
            from,
            rule: rule.into(),
        });
        Ok(())
    }
}

/// A configuration format herdsim reads.
pub struct Format {
    /// Its name in messages and in the import's header.
    pub name: &'static str,
    /// What it is, for `herdsim import --help`.
    pub about: &'static str,
    /// The `--select` kinds it takes, with what each chooses.
    pub selects: &'static [(&'static str, &'static str)],
    /// Parses the text into a document (JSON, YAML, INI as JSON), or why not.
    pub parse: fn(&str) -> Result<Value, String>,
    /// True if a parsed document is this format's (its top-level shape).
    pub claims: fn(&Value) -> bool,
    /// Reads the document into settings.
    pub read: fn(&Node<'_>, &Context<'_>) -> Result<(), ImportError>,
}

/// Every format, in the order a file is offered to them.
pub fn formats() -> Vec<&'static Format> {
    vec![
        &grpc::FORMAT,
        &envoy::FORMAT,
        &resilience4j::FORMAT,
        &polly::FORMAT,
        &gateway::FORMAT,
        &linkerd::FORMAT,
        &aws::FORMAT,
    ]
}

/// The format of `source`: the first whose parser reads it and whose shape
/// claims it. A file nested too deep for the readers is refused first.
fn detect(source: &Source) -> Result<(&'static Format, Value), ImportError> {
    if let Some(why) = tree::too_deep(&source.text) {
        return Err(ImportError {
            file: source.file.clone(),
            path: String::new(),
            message: why,
        });
    }
    let mut reasons = Vec::new();
    for format in formats() {
        match (format.parse)(&source.text) {
            Ok(value) if (format.claims)(&value) => return Ok((format, value)),
            Ok(_) => {}
            Err(why) => reasons.push((format.name, why)),
        }
    }
    let names: Vec<_> = formats().iter().map(|f| f.name).collect();
    let reason = resembled(&source.text, &reasons)
        .map(|why| format!(" ({why})"))
        .unwrap_or_default();
    Err(ImportError {
        file: source.file.clone(),
        path: String::new(),
        message: format!(
            "not a configuration herdsim reads{reason}: expected one of {}",
            names.join(", ")
        ),
    })
}

/// Of the readers' complaints about a file none reads, the one of the
/// syntax the file most resembles: INI (an AWS config) for a file opening
/// with a `[section]` line that is not JSON, JSON for one opening with a
/// brace, YAML otherwise (a reader's complaint in another syntax says
/// nothing of the file).
fn resembled<'r>(text: &str, reasons: &'r [(&str, String)]) -> Option<&'r str> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(['#', ';']))
        .unwrap_or("");
    let looks_ini = first.starts_with('[')
        && first.ends_with(']')
        && first[1..].starts_with(|c: char| c.is_alphabetic() || c == '_')
        && serde_json::from_str::<Value>(first).is_err();
    let looks_json = !looks_ini && text.trim_start().starts_with(['{', '[']);
    let ini = |why: &str| why.starts_with(aws::INVALID);
    let json = |why: &str| why.starts_with("invalid JSON");
    reasons
        .iter()
        .map(|(_, why)| why.as_str())
        .find(|why| {
            if looks_ini {
                ini(why)
            } else if looks_json {
                json(why)
            } else {
                !ini(why) && !json(why)
            }
        })
        .or_else(|| {
            reasons
                .iter()
                .map(|(_, why)| why.as_str())
                .find(|why| !ini(why))
        })
}

/// Reads `sources` in order. Two files may not set one parameter to
/// different values (which would win?); every `--select` must have been
/// asked for by some file.
pub fn import(sources: &[Source], options: &Options) -> Result<Imported, ImportError> {
    if let Some(why) = repeated_selection(&options.select) {
        return Err(ImportError {
            file: "--select".to_string(),
            path: String::new(),
            message: why,
        });
    }
    let mut imported = Imported::default();
    let mut asked: Vec<String> = Vec::new();
    for source in sources {
        let (format, value) = detect(source)?;
        let ctx = Context::new(source, options);
        (format.read)(&Node::root(&value), &ctx)?;
        for setting in ctx.settings.into_inner() {
            if let Some(old) = imported.settings.iter().find(|s| s.key == setting.key) {
                if old.value != setting.value {
                    return Err(ImportError {
                        file: source.file.clone(),
                        path: String::new(),
                        message: format!(
                            "sets {} = {} ({}), but {} set it to {}: give it in one file",
                            setting.key, setting.value, setting.from, old.from, old.value
                        ),
                    });
                }
                continue;
            }
            imported.settings.push(setting);
        }
        imported.warnings.extend(ctx.warnings.into_inner());
        imported.assumptions.extend(ctx.assumptions.into_inner());
        asked.extend(ctx.asked.into_inner());
        imported.files.push((
            source.file.clone(),
            format.name,
            ctx.chosen.into_inner().join("; "),
        ));
    }
    if let Some((kind, name)) = options.select.iter().find(|(k, _)| !asked.contains(k)) {
        let kinds: Vec<String> = formats()
            .iter()
            .flat_map(|f| {
                f.selects
                    .iter()
                    .map(move |(k, _)| format!("{k} ({})", f.name))
            })
            .collect();
        return Err(ImportError {
            file: "--select".to_string(),
            path: String::new(),
            message: format!(
                "{kind}={name}: no file given offers a choice of {kind}; the kinds are {}",
                kinds.join(", ")
            ),
        });
    }
    Ok(imported)
}

/// Why `select` chooses twice of one kind, if it does: a reader asks for
/// one choice of each kind, so the second would be passed over.
pub fn repeated_selection(select: &[(String, String)]) -> Option<String> {
    select.iter().enumerate().find_map(|(at, (kind, name))| {
        select[..at]
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, first)| {
                format!("{kind}={first} and {kind}={name} both choose the {kind}: give one")
            })
    })
}

/// Reads `--select`'s `KIND=NAME`.
pub fn parse_select(text: &str) -> Result<(String, String), String> {
    let kinds: Vec<&str> = formats()
        .iter()
        .flat_map(|f| f.selects.iter().map(|(k, _)| *k))
        .collect();
    let (kind, name) = text
        .split_once('=')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty())
        .ok_or_else(|| format!("expected KIND=NAME, KIND one of {}", kinds.join(", ")))?;
    if !kinds.contains(&kind) {
        return Err(format!(
            "unknown kind '{kind}': expected one of {}",
            kinds.join(", ")
        ));
    }
    Ok((kind.to_string(), name.to_string()))
}

/// The scenario TOML equivalent to `imported`: every key commented with the
/// field it came from and the rule applied. `command` is how it was made,
/// for the header.
pub fn to_toml(imported: &Imported, command: &str) -> String {
    let mut out = format!("# {command}\n");
    out += "# Every key below is what the files say, in herdsim's terms; flags and the\n";
    out += "# scenario's own keys override them.\n";
    for (file, format, chosen) in &imported.files {
        out += &format!("# {file}: {format}");
        if !chosen.is_empty() {
            out += &format!(", {chosen}");
        }
        out += "\n";
    }
    for setting in &imported.settings {
        out += "\n";
        out += &format!("# from {}\n", setting.from);
        for line in wrap_comment(&setting.rule, 76) {
            out += &format!("# {line}\n");
        }
        out += &format!(
            "{} = {}\n",
            setting.key,
            toml_value(setting.key, &setting.value)
        );
    }
    out
}

/// A value as TOML writes it for its parameter's kind.
fn toml_value(key: &str, value: &str) -> String {
    let kind = param(key).map(|p| p.kind);
    match kind {
        Some(Kind::Count | Kind::Number) if value.parse::<f64>().is_ok() => value.to_string(),
        _ => toml::Value::String(value.to_string()).to_string(),
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap_comment(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// The readers' unit tests' way in: `text` imported as one file named
/// `file`, with the `--select` choices `select`.
#[cfg(test)]
pub(crate) fn import_one(
    file: &str,
    text: &str,
    select: &[(&str, &str)],
) -> Result<Imported, String> {
    let options = Options {
        select: select
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Options::default()
    };
    let source = Source {
        file: file.to_string(),
        text: text.to_string(),
    };
    import(&[source], &options).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(file: &str, text: &str) -> Source {
        Source {
            file: file.to_string(),
            text: text.to_string(),
        }
    }

    #[test]
    fn a_file_no_format_reads_is_refused_with_the_parsers_complaint() {
        let err = import(&[source("x.json", "{\"a\": ")], &Options::default()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.json: not a configuration herdsim reads (invalid JSON"),
            "{err}"
        );
        let err = import(&[source("x.json", "{\"a\": 1}")], &Options::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("expected one of gRPC service config"),
            "{err}"
        );
    }

    #[test]
    fn two_files_may_not_disagree_about_one_parameter() {
        let a = r#"{"methodConfig": [{"name": [{}], "timeout": "1s"}]}"#;
        let b = r#"{"methodConfig": [{"name": [{}], "timeout": "2s"}]}"#;
        let err = import(
            &[source("a.json", a), source("b.json", b)],
            &Options::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("but a.json: methodConfig[0].timeout set it to 1s"),
            "{err}"
        );
        let same = import(
            &[source("a.json", a), source("c.json", a)],
            &Options::default(),
        )
        .unwrap();
        assert_eq!(same.value("deadline"), Some("1s"));
    }

    #[test]
    fn a_selection_no_file_asks_for_is_refused() {
        let options = Options {
            select: vec![("method".into(), "x/y".into())],
            ..Options::default()
        };
        assert!(
            import(&[], &options)
                .unwrap_err()
                .to_string()
                .contains("no file given offers")
        );
        assert!(parse_select("method").is_err());
        assert!(
            parse_select("colour=red")
                .unwrap_err()
                .contains("unknown kind 'colour'")
        );
        assert_eq!(
            parse_select("method=a/b").unwrap(),
            ("method".into(), "a/b".into())
        );
    }

    #[test]
    fn the_toml_names_each_keys_source_and_rule_and_reads_back() {
        let text = r#"{"methodConfig": [{"name": [{"service": "s"}], "timeout": "1.5s",
            "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
        let imported = import(&[source("g.json", text)], &Options::default()).unwrap();
        let toml = to_toml(&imported, "herdsim import g.json");
        assert!(
            toml.contains("# from g.json: methodConfig[0].retryPolicy.maxAttempts\n"),
            "{toml}"
        );
        assert!(toml.contains("\nmax_attempts = 3\n"), "{toml}");
        assert!(toml.contains("\ndeadline = \"1.5s\"\n"), "{toml}");
        // It is TOML (the integration tests run it as a scenario).
        let table: toml::Table = toml.parse().unwrap();
        assert_eq!(table["max_attempts"].as_integer(), Some(3));
    }
}
