//! JSON as .NET's configuration provider reads it
//! (`Microsoft.Extensions.Configuration.Json`'s `JsonConfigurationFileParser`,
//! dotnet/runtime): the document is flattened into keys such as
//! `Retry:MaxRetryAttempts` (array items by index, `Items:0`) in a
//! dictionary that ignores case, and a key whose value is given twice throws
//! `FormatException` ("A duplicate key '…' was found."): the file is refused.
//! An object given twice with different fields (`Retry` and `retry`) is
//! merged by .NET; herdsim's readers take each field once, so that is
//! refused too, saying so.

use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON document with every key kept, a repeated one included (which
/// `serde_json::Value` drops).
enum Doc {
    Leaf,
    Object(Vec<(String, Doc)>),
    Array(Vec<Doc>),
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Leaf)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Doc::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Doc>()? {
            entries.push((key, value));
        }
        Ok(Doc::Object(entries))
    }
}

/// A key given twice: where (a field path as the readers write it) and
/// why .NET or herdsim refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The field path (`Retry.MaxRetryAttempts`).
    pub path: String,
    /// Why it is refused.
    pub message: String,
}

/// The first key of the JSON `text` that .NET's provider refuses as given
/// twice (ignoring case), else the first object field given twice, which
/// .NET would merge; `None` if every key is given once (or the text is not
/// JSON, which its reader reports).
pub fn duplicate(text: &str) -> Option<Duplicate> {
    let doc: Doc = serde_json::from_str(text).ok()?;
    let mut leaves = HashMap::new();
    if let Some(found) = duplicate_leaf(&doc, "", "", &mut leaves) {
        return Some(found);
    }
    repeated_field(&doc, "")
}

fn step(path: &str, name: &str) -> String {
    match (path.is_empty(), name.starts_with('[')) {
        (true, _) | (_, true) => format!("{path}{name}"),
        _ => format!("{path}.{name}"),
    }
}

/// .NET's walk: each value's key (`A:B:0`) into a dictionary ignoring case,
/// holding the key as first written.
fn duplicate_leaf(
    doc: &Doc,
    key: &str,
    path: &str,
    leaves: &mut HashMap<String, String>,
) -> Option<Duplicate> {
    let join = |name: &str| {
        if key.is_empty() {
            name.to_string()
        } else {
            format!("{key}:{name}")
        }
    };
    match doc {
        Doc::Leaf => {
            if let Some(first) = leaves.get(&key.to_lowercase()) {
                let how = if first == key {
                    String::new()
                } else {
                    format!(" (as {first} and {key}: .NET ignores case)")
                };
                return Some(Duplicate {
                    path: path.to_string(),
                    message: format!(
                        "given twice{how}: .NET's configuration provider refuses the file \
                         (FormatException: A duplicate key '{first}' was found): give it once"
                    ),
                });
            }
            leaves.insert(key.to_lowercase(), key.to_string());
            None
        }
        Doc::Object(entries) => entries.iter().find_map(|(name, child)| {
            duplicate_leaf(child, &join(name), &step(path, name), leaves)
        }),
        Doc::Array(items) => items.iter().enumerate().find_map(|(i, child)| {
            duplicate_leaf(
                child,
                &join(&i.to_string()),
                &step(path, &format!("[{i}]")),
                leaves,
            )
        }),
    }
}

/// The first object field given twice (ignoring case) whose values .NET
/// would merge.
fn repeated_field(doc: &Doc, path: &str) -> Option<Duplicate> {
    match doc {
        Doc::Leaf => None,
        Doc::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, child)| repeated_field(child, &step(path, &format!("[{i}]")))),
        Doc::Object(entries) => {
            for (at, (name, _)) in entries.iter().enumerate() {
                if let Some((first, _)) = entries[..at]
                    .iter()
                    .find(|(other, _)| other.eq_ignore_ascii_case(name))
                {
                    return Some(Duplicate {
                        path: step(path, name),
                        message: format!(
                            "given twice (as {first} and {name}): .NET merges the two, herdsim \
                             reads each field once: write them as one"
                        ),
                    });
                }
            }
            entries
                .iter()
                .find_map(|(name, child)| repeated_field(child, &step(path, name)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_given_twice_is_refused_as_dotnet_refuses_it_ignoring_case() {
        let found = duplicate(r#"{"Retry": {"MaxRetryAttempts": 3, "MaxRetryAttempts": 9}}"#)
            .expect("a duplicate");
        assert_eq!(found.path, "Retry.MaxRetryAttempts");
        assert!(
            found
                .message
                .contains("A duplicate key 'Retry:MaxRetryAttempts' was found"),
            "{found:?}"
        );
        let found =
            duplicate(r#"{"Retry": {"MaxRetryAttempts": 3}, "retry": {"maxretryattempts": "9"}}"#)
                .expect("a duplicate");
        assert_eq!(found.path, "retry.maxretryattempts");
        assert!(
            found.message.contains(
                "(as Retry:MaxRetryAttempts and retry:maxretryattempts: .NET ignores case)"
            ),
            "{found:?}"
        );
        // Array items are keys by index.
        let found = duplicate(r#"{"A": [1, 2], "a": [3]}"#).expect("a duplicate");
        assert_eq!(found.path, "a[0]");
        // Fields .NET merges are refused as herdsim's own rule.
        let found =
            duplicate(r#"{"Retry": {"Delay": "00:00:01"}, "RETRY": {"MaxRetryAttempts": 2}}"#)
                .expect("a repeated field");
        assert_eq!(found.path, "RETRY");
        assert!(found.message.contains(".NET merges the two"), "{found:?}");
        // The same name in different objects is no duplicate.
        assert_eq!(
            duplicate(r#"{"Retry": {"Delay": "00:00:01"}, "CircuitBreaker": {"delay": 1}}"#),
            None
        );
        assert_eq!(duplicate("{"), None);
    }
}
