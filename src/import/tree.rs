//! A parsed configuration document as the format readers walk it: a
//! [`serde_json::Value`] (YAML is converted to one, [`from_yaml`]) with the
//! field path of every position, so that every message names the field the
//! user wrote (`methodConfig[0].retryPolicy.maxAttempts`).

use serde_json::Value;

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
        Value::String(s) if s.chars().count() <= 40 => format!("the string \"{s}\""),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// The JSON document `text`, or why not (with its line and column).
pub fn from_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))
}

/// The YAML document `text` (a single document; YAML 1.2's core schema, as
/// saphyr reads it) as a JSON value, or why not. Mapping keys must be
/// scalars; anchors and aliases are refused (no configuration here needs
/// them, and an alias is not a value saphyr resolves).
pub fn from_yaml(text: &str) -> Result<Value, String> {
    use saphyr::{LoadableYamlNode, Yaml};
    let docs = Yaml::load_from_str(text).map_err(|e| format!("invalid YAML: {e}"))?;
    let mut docs = docs.into_iter();
    let Some(first) = docs.next() else {
        return Ok(Value::Object(Default::default()));
    };
    if docs.next().is_some() {
        return Err("holds several YAML documents (---): give one document per file".to_string());
    }
    yaml_value(&first)
}

fn yaml_value(yaml: &saphyr::Yaml<'_>) -> Result<Value, String> {
    use saphyr::{Scalar, Yaml};
    Ok(match yaml {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(x)) => serde_json::Number::from_f64(x.into_inner())
            .map(Value::Number)
            .ok_or_else(|| format!("holds {}, which is not a finite number", x.into_inner()))?,
        Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
        Yaml::Representation(text, _, _) => Value::String(text.to_string()),
        Yaml::Sequence(items) => {
            Value::Array(items.iter().map(yaml_value).collect::<Result<_, _>>()?)
        }
        Yaml::Mapping(map) => {
            let mut object = serde_json::Map::new();
            for (key, value) in map {
                let name = match key {
                    Yaml::Value(Scalar::String(s)) => s.to_string(),
                    Yaml::Value(Scalar::Integer(i)) => i.to_string(),
                    Yaml::Value(Scalar::Boolean(b)) => b.to_string(),
                    Yaml::Representation(text, _, _) => text.to_string(),
                    _ => return Err("has a mapping key that is not a plain scalar".to_string()),
                };
                if object.insert(name.clone(), yaml_value(value)?).is_some() {
                    return Err(format!("has the key '{name}' twice in one mapping"));
                }
            }
            Value::Object(object)
        }
        Yaml::Tagged(_, inner) => yaml_value(inner)?,
        Yaml::Alias(_) => return Err("uses a YAML alias (*name): write the value out".to_string()),
        Yaml::BadValue => return Err("holds a value YAML cannot read".to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(
            from_yaml("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .contains("several")
        );
    }
}
