//! Kubernetes custom resources as the mesh readers (Gateway API, Linkerd)
//! find them: one object of a kind, or a `List` of them, one chosen by its
//! `metadata.name` with `--select` (`NAMESPACE/NAME` where items of several
//! namespaces share the name: the name alone is then refused).

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

    /// The one the file holds, or the List's item the user selected by
    /// `NAME`, or by `NAMESPACE/NAME` where items of several namespaces
    /// share the name (the only one when there is one; several without a
    /// choice, or a name several share, are refused, not guessed).
    pub fn pick<'a>(&self, root: &Node<'a>, ctx: &Context<'a>) -> Result<Node<'a>, ImportError> {
        let flag = format!("--select {}", self.select);
        if self.is(root.value()) {
            if let Some(wanted) = ctx.selection(self.select)
                && !names(root, wanted)
            {
                return Err(ctx.error_at(
                    &flag,
                    format!(
                        "'{wanted}': the file's only {} is '{}'",
                        self.noun,
                        qualified_name_of(root)
                    ),
                ));
            }
            return Ok(root.clone());
        }
        root.only(ctx, &["apiVersion", "kind", "metadata", "items"])?;
        let items = root.get("items").expect("claimed").items(ctx)?;
        let names_listed: Vec<String> = items.iter().map(qualified_name_of).collect();
        match ctx.selection(self.select) {
            Some(wanted) => {
                let found: Vec<&Node<'a>> = items.iter().filter(|n| names(n, wanted)).collect();
                match found.as_slice() {
                    [one] => Ok((*one).clone()),
                    [] => Err(ctx.error_at(
                        &flag,
                        format!(
                            "no {} '{wanted}': the file has {}",
                            self.noun,
                            names_listed.join(", ")
                        ),
                    )),
                    several => {
                        let spaces: Vec<String> = several
                            .iter()
                            .map(|n| {
                                let ns = namespace_of(n);
                                if ns.is_empty() {
                                    "none".to_string()
                                } else {
                                    ns
                                }
                            })
                            .collect();
                        Err(ctx.error_at(
                            &flag,
                            format!(
                                "'{wanted}' names {} {} (namespaces {}): choose one as \
                                 NAMESPACE/NAME (one of {})",
                                several.len(),
                                self.nouns,
                                spaces.join(", "),
                                several
                                    .iter()
                                    .map(|n| qualified_name_of(n))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ))
                    }
                }
            }
            None if items.len() == 1 => Ok(items[0].clone()),
            None => Err(ctx.error(
                root,
                format!(
                    "several {}: choose one with {flag}=NAME (one of {})",
                    self.nouns,
                    names_listed.join(", ")
                ),
            )),
        }
    }
}

/// True if `wanted` (`NAME`, or `NAMESPACE/NAME`) names `node`. A name
/// holds no `/` in Kubernetes, so the first `/` splits the two.
fn names(node: &Node<'_>, wanted: &str) -> bool {
    match wanted.split_once('/') {
        Some((namespace, name)) => namespace_of(node) == namespace && name_of(node) == name,
        None => name_of(node) == wanted,
    }
}

/// An object's `metadata.name`, or empty.
pub fn name_of(node: &Node<'_>) -> String {
    metadata(node, "name")
}

/// An object's `metadata.namespace`, or empty.
pub fn namespace_of(node: &Node<'_>) -> String {
    metadata(node, "namespace")
}

/// `NAMESPACE/NAME`, or `NAME` for an object without a namespace.
pub fn qualified_name_of(node: &Node<'_>) -> String {
    let (namespace, name) = (namespace_of(node), name_of(node));
    if namespace.is_empty() {
        name
    } else {
        format!("{namespace}/{name}")
    }
}

fn metadata(node: &Node<'_>, field: &str) -> String {
    node.value()
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}
