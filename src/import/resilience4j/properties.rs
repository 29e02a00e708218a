//! The document itself: `application.yml`, or else `application.properties`
//! lines, with dotted keys (`resilience4j.retry.instances.a.maxAttempts`)
//! split into the nested objects they spell, as Spring reads them.

use serde_json::{Map, Value};

use crate::import::tree::{INVALID_YAML, from_yaml, kind};

/// The YAML document, or else the text read as `.properties` lines. YAML
/// that its parser reads but herdsim refuses (a number that is not finite,
/// an alias) is refused as YAML, not read again as `.properties` (which
/// would name the wrong field).
pub(super) fn parse(text: &str) -> Result<Value, String> {
    match from_yaml(text) {
        Ok(value) if value.is_object() => Ok(expand(&value)),
        Err(why) if !why.starts_with(INVALID_YAML) => Err(why),
        // A list or a number is YAML, and no .properties file.
        Ok(value) if !value.is_string() && !value.is_null() => Err(format!(
            "the YAML document is {}, not a mapping of settings",
            kind(&value)
        )),
        yaml => properties(text).or_else(|why| yaml.and(Err(why))),
    }
}

/// `key=value` (or `key: value`) lines, `#` and `!` comments, as nested
/// objects of strings (Spring binds them from strings).
fn properties(text: &str) -> Result<Value, String> {
    let mut root = Value::Object(Map::new());
    let mut any = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let split = line
            .find(['=', ':'])
            .ok_or_else(|| format!("line {}: expected KEY=VALUE", i + 1))?;
        let (key, value) = (line[..split].trim(), line[split + 1..].trim());
        if key.is_empty() {
            return Err(format!("line {}: expected KEY=VALUE", i + 1));
        }
        insert(&mut root, key, Value::String(value.to_string()))
            .map_err(|why| format!("line {}: {why}", i + 1))?;
        any = true;
    }
    if any {
        Ok(root)
    } else {
        Err("holds no property".to_string())
    }
}

/// Puts `value` at the dotted `key` of `root` (`a.b[0]` is refused: no
/// property read here is a list).
fn insert(root: &mut Value, key: &str, value: Value) -> Result<(), String> {
    let mut at = root;
    let steps: Vec<&str> = key.split('.').collect();
    for (i, step) in steps.iter().enumerate() {
        let object = at
            .as_object_mut()
            .ok_or_else(|| format!("'{key}' puts a field under a value"))?;
        if i + 1 == steps.len() {
            if object.insert(step.to_string(), value).is_some() {
                return Err(format!("'{key}' is given twice"));
            }
            return Ok(());
        }
        at = object
            .entry(step.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

/// The document with dotted keys split into nested objects.
fn expand(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Value::Object(Map::new());
            for (key, v) in map {
                let v = expand(v);
                if merge_at(&mut out, key, v.clone()).is_err() {
                    // A clash (`a.b: 1` beside `a: {b: 2}`): keep the key
                    // as written, so the reader names it.
                    if let Some(o) = out.as_object_mut() {
                        o.insert(key.clone(), v);
                    }
                }
            }
            out
        }
        Value::Array(items) => Value::Array(items.iter().map(expand).collect()),
        other => other.clone(),
    }
}

fn merge_at(root: &mut Value, key: &str, value: Value) -> Result<(), ()> {
    let steps: Vec<&str> = key.split('.').collect();
    let mut at = root;
    for (i, step) in steps.iter().enumerate() {
        let object = at.as_object_mut().ok_or(())?;
        if i + 1 == steps.len() {
            match (object.get_mut(*step), value) {
                (Some(Value::Object(old)), Value::Object(new)) => {
                    for (k, v) in new {
                        if old.contains_key(&k) {
                            return Err(());
                        }
                        old.insert(k, v);
                    }
                }
                (Some(_), _) => return Err(()),
                (None, value) => {
                    object.insert(step.to_string(), value);
                }
            }
            return Ok(());
        }
        at = object
            .entry(step.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::import::resilience4j::tests::{read, value};

    #[test]
    fn application_properties_read_as_the_yaml_they_spell() {
        let text = "# application.properties\nresilience4j.retry.instances.a.max-attempts=4\nresilience4j.retry.instances.a.wait-duration=PT0.25S\n";
        let got = read(text).unwrap();
        assert_eq!(
            (value(&got, "max_attempts"), value(&got, "base")),
            ("4".into(), "250ms".into())
        );
    }
}
