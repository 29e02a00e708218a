//! A parsed configuration document as the format readers walk it: a
//! [`serde_json::Value`] (YAML is converted to one, [`from_yaml`]) with the
//! field path of every position, so that every message names the field the
//! user wrote (`methodConfig[0].retryPolicy.maxAttempts`).

use serde_json::Value;

use crate::base::format::printable;
use crate::import::{Context, ImportError};

/// A position in a document: its value and its field path.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    value: &'a Value,
    path: String,
}

impl<'a> Node<'a> {
    /// The document's root, at the empty path.
    pub fn root(value: &'a Value) -> Node<'a> {
        Node {
            value,
            path: String::new(),
        }
    }

    /// The field path, `(the document)` at the root.
    pub fn path(&self) -> &str {
        if self.path.is_empty() {
            "(the document)"
        } else {
            &self.path
        }
    }

    /// The value itself.
    pub fn value(&self) -> &'a Value {
        self.value
    }

    fn child(&self, value: &'a Value, step: &str) -> Node<'a> {
        let path = if self.path.is_empty() || step.starts_with('[') {
            format!("{}{step}", self.path)
        } else {
            format!("{}.{step}", self.path)
        };
        Node { value, path }
    }

    /// The field `key` of this object, if present (and not null: a JSON
    /// `null` or an empty YAML value is as good as absent, as protobuf's
    /// JSON mapping and the YAML binders read it).
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        let value = self.value.as_object()?.get(key)?;
        (!value.is_null()).then(|| self.child(value, key))
    }

    /// The field of this object whose name equals `key` ignoring ASCII case
    /// (.NET's configuration binder), with the name as written.
    pub fn get_ignoring_case(&self, key: &str) -> Option<Node<'a>> {
        let (name, value) = self
            .value
            .as_object()?
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(key))?;
        (!value.is_null()).then(|| self.child(value, name))
    }

    /// This object's fields, in document order: an error if it is not an
    /// object.
    pub fn entries(&self, ctx: &Context<'a>) -> Result<Vec<(&'a str, Node<'a>)>, ImportError> {
        let object = self.value.as_object().ok_or_else(|| {
            ctx.error(
                self,
                format!("expected an object, found {}", kind(self.value)),
            )
        })?;
        Ok(object
            .iter()
            .map(|(name, value)| (name.as_str(), self.child(value, name)))
            .collect())
    }

    /// This list's items: an error if it is not a list.
    pub fn items(&self, ctx: &Context<'a>) -> Result<Vec<Node<'a>>, ImportError> {
        let list = self.value.as_array().ok_or_else(|| {
            ctx.error(self, format!("expected a list, found {}", kind(self.value)))
        })?;
        Ok(list
            .iter()
            .enumerate()
            .map(|(i, value)| self.child(value, &format!("[{i}]")))
            .collect())
    }

    /// Checks that this object has no field but `known` (exactly as
    /// written, or ignoring case when `ignore_case`): an unknown one is an
    /// error, or a warning when the user asked for warnings.
    pub fn only(&self, ctx: &Context<'a>, known: &[&str]) -> Result<(), ImportError> {
        self.only_with_case(ctx, known, false)
    }

    /// [`Node::only`] ignoring ASCII case (.NET's binder).
    pub fn only_ignoring_case(&self, ctx: &Context<'a>, known: &[&str]) -> Result<(), ImportError> {
        self.only_with_case(ctx, known, true)
    }

    fn only_with_case(
        &self,
        ctx: &Context<'a>,
        known: &[&str],
        ignore_case: bool,
    ) -> Result<(), ImportError> {
        for (name, node) in self.entries(ctx)? {
            let found = known.iter().any(|k| {
                if ignore_case {
                    k.eq_ignore_ascii_case(name)
                } else {
                    *k == name
                }
            });
            if !found {
                ctx.unknown(&node, known)?;
            }
        }
        Ok(())
    }

    /// The text of a string.
    pub fn str(&self, ctx: &Context<'a>) -> Result<&'a str, ImportError> {
        self.value.as_str().ok_or_else(|| {
            ctx.error(
                self,
                format!("expected a string, found {}", kind(self.value)),
            )
        })
    }

    /// A boolean: `true`/`false`, or (`lenient`) the strings "true"/"false"
    /// as a binder of strings reads them.
    pub fn bool(&self, ctx: &Context<'a>, lenient: bool) -> Result<bool, ImportError> {
        match self.value {
            Value::Bool(b) => Ok(*b),
            Value::String(s) if lenient && s.eq_ignore_ascii_case("true") => Ok(true),
            Value::String(s) if lenient && s.eq_ignore_ascii_case("false") => Ok(false),
            other => Err(ctx.error(
                self,
                format!("expected true or false, found {}", kind(other)),
            )),
        }
    }

    /// A number; `lenient` also takes a string holding one (a binder of
    /// strings, proto3 JSON's int64).
    pub fn f64(&self, ctx: &Context<'a>, lenient: bool) -> Result<f64, ImportError> {
        let number = match self.value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) if lenient => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        number.filter(|x| x.is_finite()).ok_or_else(|| {
            ctx.error(
                self,
                format!("expected a number, found {}", kind(self.value)),
            )
        })
    }

    /// A whole number, at least 0 (`lenient` as [`Node::f64`]).
    pub fn u64(&self, ctx: &Context<'a>, lenient: bool) -> Result<u64, ImportError> {
        let whole = match self.value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 2f64.powi(63))
                    .map(|x| x as u64)
            }),
            Value::String(s) if lenient => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        whole.ok_or_else(|| {
            ctx.error(
                self,
                format!(
                    "expected a whole number of at least 0, found {}",
                    kind(self.value)
                ),
            )
        })
    }
}

/// What a value is, as a message names it: `the string "x"`, `a list`.
pub fn kind(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_string(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("the string \"{}\"", printable(s)),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// The JSON document `text`, or why not (with its line and column).
pub fn from_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))
}

/// The deepest nesting of lists and mappings a file may have (serde_json's
/// own limit for JSON): the readers, and dropping what they read, recurse
/// once a level, so a deeper file would overflow the stack.
pub const MAX_DEPTH: usize = 128;

/// Why `text` nests lists and mappings deeper than [`MAX_DEPTH`], if it
/// does: a scan of its YAML events (JSON is YAML; the scan keeps a count,
/// not a tree) before any reader parses it. A text that is not YAML stops
/// the scan at its first error, which its own reader reports.
pub fn too_deep(text: &str) -> Option<String> {
    use saphyr_parser::{Event, Parser};
    let mut depth = 0usize;
    for event in Parser::new_from_str(text) {
        match event {
            Ok((Event::SequenceStart(..) | Event::MappingStart(..), span)) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(format!(
                        "line {}: lists and mappings nested more than {MAX_DEPTH} deep: herdsim \
                         reads at most {MAX_DEPTH} levels",
                        span.start.line()
                    ));
                }
            }
            Ok((Event::SequenceEnd | Event::MappingEnd, _)) => depth = depth.saturating_sub(1),
            Ok(_) => {}
            // The scanner's own bound on flow nesting ([[[…), met while it
            // reads ahead of the events.
            Err(e) if e.info().contains("recursion limit") => {
                return Some(format!(
                    "line {}: lists and mappings nested more than {MAX_DEPTH} deep: herdsim \
                     reads at most {MAX_DEPTH} levels",
                    e.marker().line()
                ));
            }
            Err(_) => return None,
        }
    }
    None
}

/// The prefix of a YAML syntax error (after which a reader of another
/// syntax may try the text).
pub const INVALID_YAML: &str = "invalid YAML";

/// The YAML document `text` (a single document; YAML 1.2's core schema, as
/// saphyr reads it) as a JSON value, or why not. Mapping keys must be
/// scalars; anchors and aliases are refused (no configuration here needs
/// them, and an alias is not a value saphyr resolves); a number that is not
/// finite (`.inf`, `.nan`, `1e400`) is refused with its field and line.
pub fn from_yaml(text: &str) -> Result<Value, String> {
    use saphyr::{LoadableYamlNode, MarkedYaml};
    if let Some(why) = too_deep(text) {
        return Err(why);
    }
    let docs = MarkedYaml::load_from_str(text).map_err(|e| format!("{INVALID_YAML}: {e}"))?;
    let mut docs = docs.into_iter();
    let Some(first) = docs.next() else {
        return Ok(Value::Object(Default::default()));
    };
    if docs.next().is_some() {
        return Err("holds several YAML documents (---): give one document per file".to_string());
    }
    yaml_value(text, &first, "")
}

/// A step of a field path, as [`Node`] writes them.
fn step(path: &str, name: &str) -> String {
    if path.is_empty() || name.starts_with('[') {
        format!("{path}{name}")
    } else {
        format!("{path}.{name}")
    }
}

fn yaml_value(text: &str, yaml: &saphyr::MarkedYaml<'_>, path: &str) -> Result<Value, String> {
    use saphyr::{Scalar, YamlData};
    Ok(match &yaml.data {
        YamlData::Value(Scalar::Null) => Value::Null,
        YamlData::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        YamlData::Value(Scalar::Integer(i)) => Value::from(*i),
        YamlData::Value(Scalar::FloatingPoint(x)) => serde_json::Number::from_f64(x.into_inner())
            .map(Value::Number)
            .ok_or_else(|| {
                // As written: the span counts characters.
                let (start, end) = (yaml.span.start.index(), yaml.span.end.index());
                let written: String = text.chars().skip(start).take(end - start).collect();
                format!(
                    "line {}: {}: '{}' is not a finite number",
                    yaml.span.start.line(),
                    if path.is_empty() {
                        "(the document)"
                    } else {
                        path
                    },
                    written.trim()
                )
            })?,
        YamlData::Value(Scalar::String(s)) => Value::String(s.to_string()),
        YamlData::Representation(text, _, _) => Value::String(text.to_string()),
        YamlData::Sequence(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| yaml_value(text, item, &step(path, &format!("[{i}]"))))
                .collect::<Result<_, _>>()?,
        ),
        YamlData::Mapping(map) => {
            let mut object = serde_json::Map::new();
            for (key, value) in map {
                let name = match &key.data {
                    YamlData::Value(Scalar::String(s)) => s.to_string(),
                    YamlData::Value(Scalar::Integer(i)) => i.to_string(),
                    YamlData::Value(Scalar::Boolean(b)) => b.to_string(),
                    YamlData::Representation(text, _, _) => text.to_string(),
                    _ => return Err("has a mapping key that is not a plain scalar".to_string()),
                };
                let value = yaml_value(text, value, &step(path, &name))?;
                // saphyr has refused keys given twice; keys that differ as
                // YAML but read alike (1 and "1") are refused here.
                if object.insert(name.clone(), value).is_some() {
                    return Err(format!("has the key '{name}' twice in one mapping"));
                }
            }
            Value::Object(object)
        }
        YamlData::Tagged(_, inner) => yaml_value(text, inner, path)?,
        YamlData::Alias(_) => {
            return Err("uses a YAML alias (*name): write the value out".to_string());
        }
        YamlData::BadValue => return Err("holds a value YAML cannot read".to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_deeper_than_the_limit_is_refused_before_parsing() {
        let at_limit = format!("{}x", "- ".repeat(MAX_DEPTH));
        assert_eq!(too_deep(&at_limit), None);
        assert!(from_yaml(&at_limit).is_ok());
        for deep in [
            format!("{}x", "- ".repeat(MAX_DEPTH + 1)),
            "- ".repeat(20_000) + "x",
            "[".repeat(20_000),
            format!("a:\n  b: {}", "[".repeat(200)),
        ] {
            let why = too_deep(&deep).expect("too deep");
            assert!(why.contains("nested more than 128 deep"), "{why}");
            assert_eq!(from_yaml(&deep).unwrap_err(), why);
        }
    }

    #[test]
    fn yaml_becomes_the_json_value_it_spells() {
        let value = from_yaml("a: 1\nb: [x, 2.5, true]\nc:\n  d: \"0.1s\"\ne:\n").unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": 1, "b": ["x", 2.5, true], "c": {"d": "0.1s"}, "e": null})
        );
    }

    #[test]
    fn yaml_that_is_not_one_plain_document_is_refused() {
        assert!(
            from_yaml("a: [1,\n")
                .unwrap_err()
                .starts_with("invalid YAML")
        );
        // A number that is not finite, named by its field, line and text.
        for (text, why) in [
            (
                "a:\n  b: [1, .inf]\n",
                "line 2: a.b[1]: '.inf' is not a finite number",
            ),
            (
                "a: 1\nc: -.inf\n",
                "line 2: c: '-.inf' is not a finite number",
            ),
            ("x: 1e400\n", "line 1: x: '1e400' is not a finite number"),
            (
                ".nan\n",
                "line 1: (the document): '.nan' is not a finite number",
            ),
        ] {
            assert_eq!(from_yaml(text).unwrap_err(), why, "{text}");
        }
        // saphyr refuses a key given twice in one mapping (YAML forbids it).
        assert!(
            from_yaml("a: 1\nb:\n  c: 1\n  c: 2\n")
                .unwrap_err()
                .contains("duplicated key in mapping at byte 17 line 4")
        );
        assert!(from_yaml("a: {c: 1}\nb: {c: 2}\nl: [c, c]\n").is_ok());
        assert!(
            from_yaml("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .contains("several")
        );
    }
}
