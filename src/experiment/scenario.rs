//! Scenario files: a workload grid, replicates and a master seed, in TOML.
//!
//! ```toml
//! name = "four-strategies"
//! policy = ["none", "equal", "full", "decorrelated"]   # a list is a grid axis
//! clients = 1000
//! base = "100ms"                                       # a bare number is ms
//! cap = "20s"
//! seeds = 100                                          # replicates per point
//! ```
//!
//! Every key is optional (the defaults are `herdsim run`'s); unknown keys,
//! empty lists, wrong types and out-of-range values are errors that name the
//! file, the line and the key. Values are checked by the same functions as the
//! command line's flags, so both accept exactly the same things.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::base::seeding::DEFAULT_MASTER_SEED;
use crate::experiment::grid::Grid;
use crate::spec::params::{Kind, PARAMS, param};
use crate::spec::server::LAYER_KEYS;
use crate::spec::{ParamError, parse_master_seed, parse_replicates};

/// The keys that are not grid axes.
pub const SETTINGS: [&str; 9] = [
    "name",
    "description",
    "study",
    "import",
    "import_select",
    "seed",
    "seeds",
    "variant",
    "layer",
];

/// Every key a scenario file may have: the settings, then the grid's axes.
pub fn keys() -> Vec<&'static str> {
    SETTINGS
        .iter()
        .copied()
        .chain(PARAMS.iter().map(|p| p.key))
        .collect()
}

/// A grid of workloads with its replicates and master seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// A short name, shown in reports.
    pub name: String,
    /// What the scenario is for.
    pub description: Option<String>,
    /// The overload study whose reference its points are judged against
    /// (`herdsim compare`), if any: its name and the line that gives it (the
    /// studies are a later layer; the command line resolves the name).
    pub study: Option<(String, usize)>,
    /// The workloads.
    pub grid: Grid,
    /// Replicate seeds per point.
    pub replicates: u32,
    /// The master seed every job seed is mixed from.
    pub master_seed: u64,
    /// Configuration files to import (`import = ["grpc.json"]`), as
    /// written (relative to the scenario's directory), with the line.
    pub imports: Vec<(String, usize)>,
    /// `import_select`'s `KIND=NAME` choices among what they offer.
    pub import_select: Vec<(String, String)>,
    /// True once the imports' settings are in the grid.
    pub imports_applied: bool,
    /// Where in the file each value was given, for messages about points.
    pub origins: Origins,
}

/// Where a scenario file gave its values: each key's line and values, each
/// `[[variant]]`'s and `[[layer]]`'s line and the lines of their keys. A
/// message about a point names what the user wrote, where.
#[derive(Debug, Clone, Default)]
pub struct Origins {
    /// The file, as the user named it.
    file: String,
    /// Each grid key given at the top level: its line and its values.
    keys: Vec<(&'static str, usize, Vec<String>)>,
    /// Each `[[variant]]`: its line, and each key's line.
    variants: Vec<(usize, Vec<(&'static str, usize)>)>,
    /// Each `[[layer]]`: its line, and each key's line and value.
    layers: Vec<(usize, Vec<LayerKey>)>,
    /// The `layer_specs` the `[[layer]]` tables make.
    layer_specs: Option<String>,
}

/// A `[[layer]]` key: its name, line and value.
type LayerKey = (String, usize, String);

/// Where origins are kept makes no difference to what a scenario runs.
impl PartialEq for Origins {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// One value's place in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The table it is in: `[[variant]] 2`, `[[layer]] 1`, if any.
    pub table: Option<String>,
    /// The key the user wrote (`None`: the tables themselves).
    pub key: Option<String>,
}

impl Origin {
    /// The value's key and table as a message names them, without the place:
    /// `key 'rate'`, `[[variant]] 2's key 'rate'`, `the [[layer]] tables`.
    pub fn what(&self) -> String {
        match (&self.table, &self.key) {
            (Some(t), Some(k)) => format!("{t}'s key '{k}'"),
            (None, Some(k)) => format!("key '{k}'"),
            (Some(t), None) => t.clone(),
            (None, None) => "the [[layer]] tables".to_string(),
        }
    }
}

impl std::fmt::Display for Origin {
    /// `file:line: [[variant]] 2: key 'users'`, as scenario errors begin.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        match (&self.table, &self.key) {
            (Some(t), Some(k)) => write!(f, ": {t}: key '{k}'"),
            (None, Some(k)) => write!(f, ": key '{k}'"),
            (Some(t), None) => write!(f, ": {t}"),
            (None, None) => write!(f, ": key 'layer'"),
        }
    }
}

impl Scenario {
    /// The file the scenario was read from, as the user named it (empty
    /// for the command line's).
    pub fn file(&self) -> &str {
        &self.origins.file
    }

    /// Where point `point`'s value of the registry key `key` was given in
    /// the file: its variant's key, the `[[layer]]` tables, or the top-level
    /// key; `None` if it came from elsewhere (a flag, or the default). A key
    /// whose values a flag replaced is the flag's, not the file's.
    pub fn origin(&self, key: &str, point: usize) -> Option<Origin> {
        let o = &self.origins;
        let at = |line, table: Option<String>, key: Option<&str>| Origin {
            file: o.file.clone(),
            line,
            table,
            key: key.map(str::to_string),
        };
        if let Some(v) = self.grid.variant_of(point)
            && let Some((_, keys)) = o.variants.get(v)
            && let Some(&(k, line)) = keys.iter().find(|(k, _)| *k == key)
        {
            return Some(at(line, Some(format!("[[variant]] {}", v + 1)), Some(k)));
        }
        let current = self.grid.values(key)?;
        if key == "layer_specs"
            && let (Some(specs), Some((line, _))) = (&o.layer_specs, o.layers.first())
        {
            return (current == std::slice::from_ref(specs)).then(|| at(*line, None, None));
        }
        o.keys
            .iter()
            .find(|(k, _, values)| *k == key && values == current)
            .map(|&(k, line, _)| at(line, None, Some(k)))
    }

    /// Where upper service `service`'s (1 at the top) setting `key` was
    /// given, if the chain's settings came from `[[layer]]` tables: the key's
    /// line, or its table's if the table leaves it out.
    pub fn layer_origin(&self, service: usize, key: &str, point: usize) -> Option<Origin> {
        self.origin("layer_specs", point)?;
        let (line, keys) = self.origins.layers.get(service.checked_sub(1)?)?;
        let table = Some(format!("[[layer]] {service}"));
        let (line, key) = match keys.iter().find(|(k, _, _)| k == key) {
            Some((k, line, _)) => (*line, Some(k.clone())),
            None => (*line, None),
        };
        Some(Origin {
            file: self.origins.file.clone(),
            line,
            table,
            key,
        })
    }

    /// The value upper service `service` gave `key` in its `[[layer]]`.
    pub fn layer_value(&self, service: usize, key: &str) -> Option<&str> {
        let (_, keys) = self.origins.layers.get(service.checked_sub(1)?)?;
        keys.iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, _, v)| v.as_str())
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            name: "command-line".to_string(),
            description: None,
            study: None,
            grid: Grid::default(),
            replicates: 1,
            master_seed: DEFAULT_MASTER_SEED,
            imports: Vec::new(),
            import_select: Vec::new(),
            imports_applied: false,
            origins: Origins::default(),
        }
    }
}

/// What is wrong with a scenario file, and where: `file:line: key 'k': what`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default(), key.as_ref().map(|k| format!(": key '{k}'")).unwrap_or_default())]
pub struct ScenarioError {
    /// The file, as the user named it.
    pub file: String,
    /// 1-based line, where known.
    pub line: Option<usize>,
    /// The key, where one is at fault.
    pub key: Option<String>,
    /// What is wrong and what is accepted.
    pub message: String,
}

/// A value's text, if it has the TOML type `kind` takes.
fn text_of(value: &DeValue<'_>, kind: Kind) -> Option<String> {
    match (value, kind) {
        // Text values read numbers too (`workers = 4` beside `workers = "inf"`):
        // the parameter's own parser says what it accepts.
        (DeValue::Integer(i), Kind::Count | Kind::Number | Kind::Duration | Kind::Text)
            if i.radix() == 10 =>
        {
            Some(i.as_str().replace('_', ""))
        }
        (DeValue::Float(x), Kind::Number | Kind::Duration) => Some(x.as_str().replace('_', "")),
        (DeValue::String(s), Kind::Duration | Kind::Text) => Some(s.to_string()),
        _ => None,
    }
}

fn line_of(text: &str, span: &Range<usize>) -> usize {
    text[..span.start.min(text.len())].matches('\n').count() + 1
}

impl Scenario {
    /// Reads a scenario from TOML `text`; `file` names it in errors.
    pub fn from_toml(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let fail = |span: Option<Range<usize>>, key: Option<&str>, message: String| ScenarioError {
            file: file.to_string(),
            line: span.map(|s| line_of(text, &s)),
            key: key.map(str::to_string),
            message,
        };
        let table = DeTable::parse(text).map_err(|e| {
            let message = e
                .message()
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("; ");
            fail(e.span(), None, format!("invalid TOML: {message}"))
        })?;
        let mut entries: Vec<_> = table.get_ref().iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);

        let mut scenario = Scenario::default();
        scenario.origins.file = file.to_string();
        let line = |span: Range<usize>| line_of(text, &span);
        for (key, value) in entries {
            let name: &str = key.get_ref();
            let grid = &mut scenario.grid;
            let set = match name {
                "name" => {
                    scalar(value, Kind::Text, |s| Ok(s.to_string())).map(|v| scenario.name = v)
                }
                "description" => scalar(value, Kind::Text, |s| Ok(s.to_string()))
                    .map(|v| scenario.description = Some(v)),
                "study" => scalar(value, Kind::Text, |s| Ok(s.to_string()))
                    .map(|v| scenario.study = Some((v, line_of(text, &value.span())))),
                "import" => texts(value).map(|files| {
                    let at = line(value.span());
                    scenario.imports = files.into_iter().map(|f| (f, at)).collect();
                }),
                "import_select" => texts(value).and_then(|choices| {
                    for choice in choices {
                        let pair = crate::import::parse_select(&choice).map_err(|e| {
                            (value.span(), format!("invalid value '{choice}': {e}"))
                        })?;
                        scenario.import_select.push(pair);
                        if let Some(why) =
                            crate::import::repeated_selection(&scenario.import_select)
                        {
                            return Err((value.span(), why));
                        }
                    }
                    Ok(())
                }),
                "seed" => {
                    scalar(value, Kind::Count, parse_master_seed).map(|v| scenario.master_seed = v)
                }
                "seeds" => {
                    scalar(value, Kind::Count, parse_replicates).map(|v| scenario.replicates = v)
                }
                "variant" => variants(value).and_then(|list| {
                    for (span, settings, spans) in list {
                        grid.add_variant(settings)
                            .map_err(|e| (span.clone(), e.to_string()))?;
                        let keys = spans.into_iter().map(|(k, s)| (k, line(s))).collect();
                        scenario.origins.variants.push((line(span), keys));
                    }
                    Ok(())
                }),
                "layer" => layer_tables(value).and_then(|(specs, tables)| {
                    if grid.values("layer_specs").is_some() {
                        return Err((
                            value.span(),
                            "set both as [[layer]] tables and as layer_specs: give them in one \
                                 place"
                                .to_string(),
                        ));
                    }
                    let param = param("layer_specs").expect("a registry key");
                    param
                        .check(&specs)
                        .map_err(|e| (value.span(), format!("invalid [[layer]] tables: {e}")))?;
                    grid.set(param, vec![specs.clone()]).expect("value checked");
                    scenario.origins.layer_specs = Some(specs);
                    scenario.origins.layers = tables
                        .into_iter()
                        .map(|(span, keys)| {
                            let keys = keys.into_iter().map(|(k, s, v)| (k, line(s), v)).collect();
                            (line(span), keys)
                        })
                        .collect();
                    Ok(())
                }),
                "layer_specs" if grid.values("layer_specs").is_some() => Err((
                    key.span(),
                    "set both as [[layer]] tables and as layer_specs: give them in one place"
                        .to_string(),
                )),
                _ if param(name).is_some() => {
                    let param = param(name).expect("a registry key");
                    axis(value, param.kind, |t| param.check(t)).map(|values| {
                        scenario
                            .origins
                            .keys
                            .push((param.key, line(key.span()), values.clone()));
                        grid.set(param, values).expect("values checked")
                    })
                }
                _ => Err((
                    key.span(),
                    format!("unknown key: expected one of {}", keys().join(", ")),
                )),
            };
            set.map_err(|(span, message)| fail(Some(span), Some(name), message))?;
        }
        // A parameter is an axis or a variant's, not both: which would win?
        if let Some(param) = scenario
            .grid
            .varying()
            .into_iter()
            .find(|p| scenario.grid.values(p.key).is_some() && scenario.grid.variant_sets(p))
        {
            return Err(fail(
                None,
                Some(param.key),
                "set both as a key and in a [[variant]]: give it in one place".to_string(),
            ));
        }
        scenario.check_layer_count(file)?;
        Ok(scenario)
    }

    /// `[[layer]]` tables are one per service above the server: their count
    /// must fit every depth the file gives (1 when it gives none).
    fn check_layer_count(&self, file: &str) -> Result<(), ScenarioError> {
        let tables = self.origins.layers.len();
        let Some(&(line, _)) = self.origins.layers.first() else {
            return Ok(());
        };
        let given: Vec<&str> = self.grid.values_anywhere("depth").collect();
        let depths = if given.is_empty() { vec!["1"] } else { given };
        for depth in depths {
            let uppers = crate::spec::server::parse_depth(depth).expect("a checked depth") - 1;
            if uppers as usize != tables {
                let place = match self.origins.keys.iter().find(|(k, _, _)| *k == "depth") {
                    Some((_, l, _)) => format!("depth {depth} (line {l})"),
                    None if self.grid.values_anywhere("depth").next().is_some() => {
                        format!("depth {depth} (in a [[variant]])")
                    }
                    None => "the default depth 1 (no depth given)".to_string(),
                };
                return Err(ScenarioError {
                    file: file.to_string(),
                    line: Some(line),
                    key: Some("layer".to_string()),
                    message: format!(
                        "{tables} [[layer]] table{} for {place}: give one per service above \
                         the server, {uppers} at depth {depth}, or depth = {}",
                        if tables == 1 { "" } else { "s" },
                        tables + 1
                    ),
                });
            }
        }
        Ok(())
    }

    /// The number of jobs: points × replicates.
    pub fn jobs(&self) -> u64 {
        self.grid.len() as u64 * u64::from(self.replicates)
    }
}

/// Where in the file a value is wrong, and what is wrong with it.
type ValueError = (Range<usize>, String);

/// A key that takes one value.
fn scalar<T>(
    value: &Spanned<DeValue<'_>>,
    kind: Kind,
    parse: impl Fn(&str) -> Result<T, ParamError>,
) -> Result<T, ValueError> {
    if let DeValue::Array(_) = value.get_ref() {
        return Err((
            value.span(),
            format!("expected {}, not a list", kind.expected()),
        ));
    }
    let text = text_of(value.get_ref(), kind)
        .ok_or_else(|| (value.span(), format!("expected {}", kind.expected())))?;
    parse(&text).map_err(|e| (value.span(), format!("invalid value '{text}': {e}")))
}

/// A key that takes a string or a list of strings (none empty).
fn texts(value: &Spanned<DeValue<'_>>) -> Result<Vec<String>, ValueError> {
    let expected = || {
        (
            value.span(),
            "expected a string or a list of strings".to_string(),
        )
    };
    let items: Vec<&DeValue<'_>> = match value.get_ref() {
        DeValue::Array(list) => list.iter().map(|v| v.get_ref()).collect(),
        other => vec![other],
    };
    if items.is_empty() {
        return Err(expected());
    }
    items
        .into_iter()
        .map(|item| match item {
            DeValue::String(s) if !s.is_empty() => Ok(s.to_string()),
            _ => Err(expected()),
        })
        .collect()
}

/// `[[variant]]` tables: each one's span and settings, every value checked
/// by its parameter (one value each, no lists).
#[allow(clippy::type_complexity)]
fn variants(
    value: &Spanned<DeValue<'_>>,
) -> Result<
    Vec<(
        Range<usize>,
        Vec<(&'static crate::spec::params::Param, String)>,
        Vec<(&'static str, Range<usize>)>,
    )>,
    ValueError,
> {
    let expected = "expected [[variant]] tables of parameter = value";
    let DeValue::Array(tables) = value.get_ref() else {
        return Err((value.span(), expected.to_string()));
    };
    tables
        .iter()
        .map(|table| {
            let DeValue::Table(entries) = table.get_ref() else {
                return Err((table.span(), expected.to_string()));
            };
            let settings = entries
                .iter()
                .map(|(key, value)| {
                    let name: &str = key.get_ref();
                    let param = param(name).ok_or_else(|| {
                        (
                            key.span(),
                            format!("unknown parameter '{name}' in a variant"),
                        )
                    })?;
                    let text = scalar(value, param.kind, |t| {
                        param.check(t).map(|()| t.to_string())
                    })?;
                    Ok((param, text))
                })
                .collect::<Result<Vec<_>, ValueError>>()?;
            let spans = entries
                .iter()
                .filter_map(|(key, _)| Some((param(key.get_ref())?.key, key.span())))
                .collect();
            Ok((table.span(), settings, spans))
        })
        .collect()
}

/// One `[[layer]]` table's span, and each key's name, span and value.
type LayerTable = (Range<usize>, Vec<(String, Range<usize>, String)>);

/// `[[layer]]` tables, one per service above the server, top first: their
/// settings as `layer_specs` writes them (each `key=value` joined by
/// commas, the services by `+`), and each table's keys. Each value is
/// checked by its key's parser where it stands, and may not hold `+` or `=`:
/// pasted into `layer_specs` they would start another service or setting
/// (`policy = "full+workers=3"` is not one policy).
fn layer_tables(value: &Spanned<DeValue<'_>>) -> Result<(String, Vec<LayerTable>), ValueError> {
    let expected = format!(
        "expected [[layer]] tables of {} = value",
        LAYER_KEYS.join(", ")
    );
    let DeValue::Array(tables) = value.get_ref() else {
        return Err((value.span(), expected.clone()));
    };
    let read = tables
        .iter()
        .enumerate()
        .map(|(n, table)| {
            let DeValue::Table(entries) = table.get_ref() else {
                return Err((table.span(), expected.clone()));
            };
            let service = n + 1;
            // In the file's order.
            let mut entries: Vec<_> = entries.iter().collect();
            entries.sort_by_key(|(key, _)| key.span().start);
            let settings = entries
                .into_iter()
                .map(|(key, value)| {
                    let name: &str = key.get_ref();
                    if !LAYER_KEYS.contains(&name) {
                        return Err((
                            key.span(),
                            format!(
                                "unknown key '{name}' in a [[layer]]: expected one of {}",
                                LAYER_KEYS.join(", ")
                            ),
                        ));
                    }
                    let in_table = |why: String| {
                        (
                            value.span(),
                            format!("[[layer]] {service}: key '{name}': {why}"),
                        )
                    };
                    let text = scalar(value, Kind::Text, |t| Ok(t.to_string()))
                        .map_err(|(_, why)| in_table(why))?;
                    if let Some(c) = text.chars().find(|c| matches!(c, '+' | '=')) {
                        return Err(in_table(format!(
                            "invalid value '{text}': a [[layer]] value cannot hold '{c}' (in \
                             layer_specs it starts another {}): give each setting its own key, \
                             each service its own [[layer]]",
                            if c == '+' { "service" } else { "setting" }
                        )));
                    }
                    crate::spec::server::parse_layer_specs(&format!("{name}={text}")).map_err(
                        |e| {
                            let why = match e {
                                ParamError::LayerSpecs(why) => why
                                    .strip_prefix(&format!("{name}: "))
                                    .unwrap_or(&why)
                                    .to_string(),
                                e => e.to_string(),
                            };
                            in_table(format!("invalid value '{text}': {why}"))
                        },
                    )?;
                    Ok((name.to_string(), key.span(), text))
                })
                .collect::<Result<Vec<_>, ValueError>>()?;
            Ok((table.span(), settings))
        })
        .collect::<Result<Vec<LayerTable>, ValueError>>()?;
    let specs = read
        .iter()
        .map(|(_, keys)| {
            keys.iter()
                .map(|(k, _, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("+");
    Ok((specs, read))
}

/// A key that takes one value or a non-empty list (a grid axis): its values'
/// texts, each checked by `check`. The error carries the span of the
/// offending element.
fn axis(
    value: &Spanned<DeValue<'_>>,
    kind: Kind,
    check: impl Fn(&str) -> Result<(), ParamError>,
) -> Result<Vec<String>, ValueError> {
    let elements: Vec<&Spanned<DeValue<'_>>> = match value.get_ref() {
        DeValue::Array(items) => items.iter().collect(),
        _ => vec![value],
    };
    if elements.is_empty() {
        return Err((
            value.span(),
            "an empty list gives no points: give at least one value".to_string(),
        ));
    }
    elements
        .into_iter()
        .map(|element| {
            let text = text_of(element.get_ref(), kind).ok_or_else(|| {
                (
                    element.span(),
                    format!("expected {} or a list of them", kind.expected()),
                )
            })?;
            check(&text).map_err(|e| (element.span(), format!("invalid value '{text}': {e}")))?;
            Ok(text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Micros;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml("s.toml", text)
    }

    #[test]
    fn a_full_scenario_parses_into_its_grid() {
        let s = parse(
            "name = \"four\"\n\
             description = \"the four\"\n\
             policy = [\"none\", \"equal\", \"full\", \"decorrelated\"]\n\
             clients = [100, 1_000]\n\
             capacity = 0.5\n\
             base = \"100ms\"\n\
             cap = 20000\n\
             step = \"0ms\"\n\
             jitter_factor = [0, 0.3]\n\
             window = \"2ms\"\n\
             seeds = 50\n\
             seed = 7\n",
        )
        .unwrap();
        assert_eq!(s.name, "four");
        assert_eq!(s.grid.values("policy").unwrap().len(), 4);
        assert_eq!(s.grid.values("clients").unwrap(), ["100", "1000"]);
        let last = s.grid.point(s.grid.len() - 1);
        assert_eq!(last.policy.kind, crate::PolicyKind::Decorrelated);
        assert_eq!(last.clients, 1_000);
        assert_eq!(last.capacity_per_ms, 0.5);
        assert_eq!(last.policy.base_us, Micros::from_ms(100));
        assert_eq!(last.policy.cap_us, Micros::from_s(20));
        assert_eq!(last.policy.step_us, Some(Micros::ZERO));
        assert_eq!(last.policy.jitter_factor, 0.3);
        assert_eq!(last.window_us, Some(Micros::from_ms(2)));
        assert_eq!((s.replicates, s.master_seed), (50, 7));
        assert_eq!(s.grid.len(), 16);
        assert_eq!(s.jobs(), 800);
    }

    #[test]
    fn an_empty_file_is_the_default_workload() {
        assert_eq!(parse("").unwrap(), Scenario::default());
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn variants_are_points_of_their_own_and_may_not_repeat_an_axis() {
        let s = parse(
            "resource = \"server\"\n\
             timeout = \"100ms\"\n\
             trigger = [\"outage@2s..2.1s\", \"outage@2s..2.5s\"]\n\
             [[variant]]\n\
             [[variant]]\n\
             budget = \"earned:3000,cost:100,deposit:10\"\n\
             [[variant]]\n\
             breaker = \"cumulative:0.1\"\n\
             fleet = 1\n",
        )
        .unwrap();
        assert_eq!(s.grid.len(), 6);
        assert_eq!(s.grid.variants(), 3);
        assert!(s.grid.point(0).budget.is_none() && s.grid.point(0).breaker.is_none());
        assert!(s.grid.point(2).budget.is_some());
        assert_eq!(s.grid.point(5).fleet, Some(1));
        assert_eq!(
            error("budget = \"none\"\n[[variant]]\nbudget = \"ratio:0.1,min:1\"\n"),
            "s.toml: key 'budget': set both as a key and in a [[variant]]: give it in one place"
        );
        assert_eq!(
            error("[[variant]]\nbudgett = \"ratio:0.1,min:1\"\n"),
            "s.toml:2: key 'variant': unknown parameter 'budgett' in a variant"
        );
        let err = error("[[variant]]\nbudget = [\"none\", \"ratio:0.1,min:1\"]\n");
        assert!(err.contains("not a list"), "{err}");
        let err = error("[[variant]]\nbreaker = \"classic:2\"\n");
        assert!(
            err.starts_with("s.toml:2: key 'variant': invalid value 'classic:2'"),
            "{err}"
        );
    }

    #[test]
    fn layer_tables_are_each_upper_services_settings() {
        let s = parse(
            "depth = 3\n\
             [[layer]]\n\
             workers = 8\n\
             timeout = \"300ms\"\n\
             [[layer]]\n\
             max_attempts = 2\n\
             policy = \"full\"\n\
             budget = \"ratio:0.1,min:0\"\n",
        )
        .unwrap();
        assert_eq!(
            s.grid.values("layer_specs"),
            Some(
                &[
                    "workers=8,timeout=300ms+max_attempts=2,policy=full,budget=ratio:0.1,min:0"
                        .to_string()
                ][..]
            )
        );
        assert!(
            error("[[layer]]\nworkerz = 2\n")
                .starts_with("s.toml:2: key 'layer': unknown key 'workerz'")
        );
        assert_eq!(
            error("[[layer]]\nworkers = 0\n"),
            "s.toml:2: key 'layer': [[layer]] 1: key 'workers': invalid value '0': expected a \
             whole number from 1 to 10,000,000"
        );
        // Only the key's own separators pass: a comma continues a control.
        let err = error("depth = 2\n[[layer]]\npolicy = \"full+workers=3\"\n");
        assert!(
            err.starts_with("s.toml:3: key 'layer': [[layer]] 1: key 'policy'"),
            "{err}"
        );
        let err = error("depth = 2\n[[layer]]\nbreaker = \"cumulative:0.1,policy=none\"\n");
        assert!(err.contains("cannot hold '='"), "{err}");
        // One table per service above the server, at every depth.
        for (text, says) in [
            ("[[layer]]\n", "1 [[layer]] table for the default depth 1"),
            ("depth = [2, 3]\n[[layer]]\n", "for depth 3 (line 1)"),
            (
                "depth = 2\n[[layer]]\n[[layer]]\n",
                "2 [[layer]] tables for depth 2 (line 1): give one per service above the \
                 server, 1 at depth 2",
            ),
            (
                "[[variant]]\ndepth = 3\n[[layer]]\n",
                "for depth 3 (in a [[variant]])",
            ),
        ] {
            let err = error(text);
            assert!(err.contains(says), "{text}: {err}");
        }
        assert!(parse("depth = 3\n[[layer]]\nworkers = 2\n[[layer]]\n").is_ok());
        assert!(
            error("layer_specs = \"workers=2\"\n[[layer]]\nworkers = 3\n")
                .contains("set both as [[layer]] tables and as layer_specs")
        );
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key() {
        assert_eq!(
            error("clients = 10\nfrobs = 3\n"),
            "s.toml:2: key 'frobs': unknown key: expected one of name, description, study, import, \
             import_select, seed, seeds, variant, layer, policy, clients, capacity, base, cap, step, jitter_factor, random_factor, throttle_base, window, resource, arrivals, \
             down, max_attempts, deadline, retry_on, hedge_delay, hedge_on_timeout, first_exponent, multiplier, cap_mode, seeding, budget, breaker, \
             throttle, fleet, retry_after, occ_server, write_time, occ_done, rate, duration, patience, requests, sources, concurrency, users, think, first_call, workers, queue_limit, \
             service, service_per_busy, fail_rate, request_delay, reply_delay, timeout, timeout_choices, timeout_law, timeout_noticed, deadline_propagation, \
             discipline, shed_wait, depth, layer_workers, layer_service, layer_timeout_ratio, \
             layer_max_attempts, layer_specs, retry_scope, trigger, rate_changes, failure_end, horizon"
        );
        assert_eq!(
            error("seeds = 5\nclients = []\n"),
            "s.toml:2: key 'clients': an empty list gives no points: give at least one value"
        );
        assert_eq!(
            error("clients = \"many\"\n"),
            "s.toml:1: key 'clients': expected a whole number or a list of them"
        );
        assert_eq!(
            error("\n\nclients = [\n  10,\n  0,\n]\n"),
            "s.toml:5: key 'clients': invalid value '0': expected a whole number from 1 to 100,000,000"
        );
        assert_eq!(
            error("cap = \"10 parsecs\"\n"),
            "s.toml:1: key 'cap': invalid value '10 parsecs': unknown unit 'parsecs': expected a \
             duration such as 250us, 100ms, 1.5s, 2m or 1h (a bare number is milliseconds)"
        );
        assert_eq!(
            error("seeds = [1, 2]\n"),
            "s.toml:1: key 'seeds': expected a whole number, not a list"
        );
        assert_eq!(error("policy = \"jittery\"\n").lines().count(), 1);
        assert!(
            error("jitter_factor = 2\n")
                .starts_with("s.toml:1: key 'jitter_factor': invalid value '2'")
        );
        assert!(
            error("capacity = true\n").starts_with("s.toml:1: key 'capacity': expected a number")
        );
    }

    #[test]
    fn origins_name_the_line_key_and_table_of_each_points_value() {
        let s = parse(
            "resource = \"server\"\n\
             rate = [100, 200]\n\
             depth = 2\n\
             [[variant]]\n\
             [[variant]]\n\
             users = 5\n\
             [[layer]]\n\
             workers = 2\n",
        )
        .unwrap();
        let shown = |key: &str, point: usize| s.origin(key, point).map(|o| o.to_string());
        assert_eq!(shown("rate", 0).as_deref(), Some("s.toml:2: key 'rate'"));
        assert_eq!(shown("users", 0), None);
        assert_eq!(
            shown("users", 3).as_deref(),
            Some("s.toml:6: [[variant]] 2: key 'users'")
        );
        assert_eq!(
            shown("layer_specs", 0).as_deref(),
            Some("s.toml:7: key 'layer'")
        );
        assert_eq!(
            s.layer_origin(1, "workers", 0)
                .map(|o| o.to_string())
                .as_deref(),
            Some("s.toml:8: [[layer]] 1: key 'workers'")
        );
        assert_eq!(
            s.layer_origin(1, "policy", 0)
                .map(|o| o.to_string())
                .as_deref(),
            Some("s.toml:7: [[layer]] 1")
        );
        assert_eq!(shown("clients", 0), None);
        // Values a flag replaced are the flag's.
        let mut flagged = s.clone();
        let rate = param("rate").unwrap();
        flagged.grid.set(rate, vec!["300".into()]).unwrap();
        assert_eq!(flagged.origin("rate", 0), None);
    }

    #[test]
    fn bad_toml_names_the_line() {
        let e = parse("clients = 10\nbase = \"100ms\ncap = 3\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.to_string().starts_with("s.toml:2: invalid TOML"), "{e}");
        assert!(!e.to_string().contains('\n'));
        let dup = parse("clients = 1\nclients = 2\n").unwrap_err();
        assert_eq!(dup.line, Some(2), "{dup}");
    }
}
