//! Kubernetes custom resources as the mesh readers (Gateway API, Linkerd)
//! find them: one object of a kind, or a `List` of them, one chosen by its
//! `metadata.name` with `--select`.

use serde_json::Value;

use super::tree::Node;
use super::{Context, ImportError};

/// A custom resource kind a reader takes.
pub struct Resource {
    /// Its `kind` (`ServiceProfile`).
    pub kind: &'static str,
    /// What its `apiVersion` starts with: the API group (`linkerd.io/`).
    pub group: &'static str,
    /// The `--select` kind that chooses one of a List (`policy`).
    pub select: &'static str,
    /// What one is called in messages, and several.
    pub noun: &'static str,
    /// The plural of `noun`.
    pub nouns: &'static str,
}

impl Resource {
    /// True if `value` is one of these.
    pub fn is(&self, value: &Value) -> bool {
        value.get("kind").and_then(Value::as_str) == Some(self.kind)
            && value
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| v.starts_with(self.group))
    }

    /// True if `value` is one of these or a List of nothing else.
    pub fn claims(&self, value: &Value) -> bool {
        self.is(value)
            || value
                .get("items")
                .and_then(Value::as_array)
                .is_some_and(|items| !items.is_empty() && items.iter().all(|v| self.is(v)))
    }

    /// The one the file holds, or the List's item the user selected (the
    /// only one when there is one; several without a choice are refused,
    /// not guessed).
    pub fn pick<'a>(&self, root: &Node<'a>, ctx: &Context<'a>) -> Result<Node<'a>, ImportError> {
        let flag = format!("--select {}", self.select);
        if self.is(root.value()) {
            if let Some(wanted) = ctx.selection(self.select)
                && name_of(root) != wanted
            {
                return Err(ctx.error_at(
                    &flag,
                    format!(
                        "'{wanted}': the file's only {} is '{}'",
                        self.noun,
                        name_of(root)
                    ),
                ));
            }
            return Ok(root.clone());
        }
        root.only(ctx, &["apiVersion", "kind", "metadata", "items"])?;
        let items = root.get("items").expect("claimed").items(ctx)?;
        let names: Vec<String> = items.iter().map(name_of).collect();
        match ctx.selection(self.select) {
            Some(wanted) => items
                .iter()
                .find(|n| name_of(n) == wanted)
                .cloned()
                .ok_or_else(|| {
                    ctx.error_at(
                        &flag,
                        format!(
                            "no {} '{wanted}': the file has {}",
                            self.noun,
                            names.join(", ")
                        ),
                    )
                }),
            None if items.len() == 1 => Ok(items[0].clone()),
            None => Err(ctx.error(
                root,
                format!(
                    "several {}: choose one with {flag}=NAME (one of {})",
                    self.nouns,
                    names.join(", ")
                ),
            )),
        }
    }
}

/// An object's `metadata.name`, or empty.
pub fn name_of(node: &Node<'_>) -> String {
    node.value()
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}
