//! The config file's text, read as botocore's `raw_config_parse` reads it
//! (Python's `configparser.RawConfigParser`): sections, keys, continued
//! values and sub-property blocks, and the profile a section names
//! (`build_profile_map`). The module documentation gives the rules.

use serde_json::{Map, Value};

/// The prefix of every parse error, which `detect` reads as this format's.
pub const INVALID: &str = "invalid INI (AWS config)";

/// The profile a section names, as `build_profile_map` does: `default`, or
/// the second word (`shlex.split`) of a section starting `profile`.
pub fn profile_of(section: &str) -> Option<String> {
    if section == "default" {
        return Some("default".to_string());
    }
    if !section.starts_with("profile") {
        return None;
    }
    let words = shell_words(section)?;
    (words.len() == 2).then(|| words[1].clone())
}

/// `shlex.split` for the quoting a section name may have: words split at
/// whitespace, `"…"` and `'…'` quoting, `\` escaping outside single quotes;
/// `None` for an unclosed quote (shlex's `ValueError`).
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => {
                            let next = chars.next()?;
                            if !matches!(next, '"' | '\\') {
                                w.push('\\');
                            }
                            w.push(next);
                        }
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// A value being read: its lines, and the line number of its key.
struct Pending {
    section: String,
    key: String,
    lines: Vec<String>,
    line: usize,
}

/// Reads the text as botocore's `raw_config_parse` does into
/// `{"[SECTION]": {KEY: VALUE or {SUBKEY: VALUE}}}`, or why not.
pub fn parse(text: &str) -> Result<Value, String> {
    let fail = |line: usize, why: &str| format!("{INVALID}: line {line}: {why}");
    let mut sections: Vec<(String, Map<String, Value>)> = Vec::new();
    let mut section_lines: Vec<usize> = Vec::new();
    let mut pending: Option<Pending> = None;
    let mut indent_level = 0usize;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let stripped = raw.trim();
        let is_comment = stripped.starts_with('#') || stripped.starts_with(';');
        if stripped.is_empty() || is_comment {
            // configparser keeps a blank line inside a value (not a
            // comment line); trailing ones go when the value is joined.
            if !is_comment && let Some(p) = pending.as_mut() {
                p.lines.push(String::new());
            }
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if let Some(p) = pending.as_mut()
            && indent > indent_level
        {
            p.lines.push(stripped.to_string());
            continue;
        }
        indent_level = indent;
        if let Some(p) = pending.take() {
            finish(p, &mut sections).map_err(|(l, why)| fail(l, &why))?;
        }
        if stripped.starts_with('[')
            && let Some(end) = stripped.rfind(']')
            && end > 1
        {
            let name = &stripped[1..end];
            if name == "DEFAULT" {
                return Err(fail(
                    number,
                    "[DEFAULT] gives keys every section inherits in botocore and in no other \
                     SDK: write them in the profile",
                ));
            }
            if sections.iter().any(|(s, _)| s == name) {
                return Err(fail(number, &format!("section [{name}] given twice")));
            }
            sections.push((name.to_string(), Map::new()));
            section_lines.push(number);
            continue;
        }
        let Some((section, keys)) = sections.last() else {
            return Err(fail(
                number,
                "a line before any [section] header (a config file opens with one, [default] \
                 or [profile NAME])",
            ));
        };
        let Some(at) = stripped.find(['=', ':']) else {
            return Err(fail(
                number,
                &format!("'{stripped}' is not KEY = VALUE (nor a [section] or a # comment)"),
            ));
        };
        let key = stripped[..at].trim().to_lowercase();
        if key.is_empty() {
            return Err(fail(number, "a value without a key"));
        }
        if keys.contains_key(&key) {
            return Err(fail(number, &format!("{key} given twice in [{section}]")));
        }
        pending = Some(Pending {
            section: section.clone(),
            key,
            lines: vec![stripped[at + 1..].trim().to_string()],
            line: number,
        });
    }
    if let Some(p) = pending.take() {
        finish(p, &mut sections).map_err(|(l, why)| fail(l, &why))?;
    }
    // A file of sections none of which botocore reads (a malformed
    // `[profile a b]` alone) is refused here, saying why: botocore would
    // pass over each such section and find no profile.
    if !sections.is_empty() && !sections.iter().any(|(name, _)| is_read(name)) {
        let at = sections
            .iter()
            .position(|(name, _)| name.starts_with("profile"))
            .unwrap_or(0);
        let name = &sections[at].0;
        let why = if name.starts_with("profile") {
            format!(
                "[{name}] names no profile: botocore reads [profile NAME], one name after \
                 profile (quoted if it has spaces: [profile \"a b\"]), and passes over this one"
            )
        } else {
            format!(
                "[{name}] is no profile: botocore reads [default], [profile NAME], \
                 [sso-session NAME] and [services NAME]"
            )
        };
        return Err(fail(section_lines[at], &why));
    }
    let mut profiles: Vec<(String, String)> = Vec::new();
    for (name, _) in &sections {
        if let Some(profile) = profile_of(name) {
            if let Some((other, _)) = profiles.iter().find(|(_, p)| *p == profile) {
                return Err(format!(
                    "{INVALID}: [{other}] and [{name}] both give the profile '{profile}' (botocore \
                     keeps the later, the SEP prefers [profile default]): keep one"
                ));
            }
            profiles.push((name.clone(), profile));
        }
    }
    let mut root = Map::new();
    for (name, keys) in sections {
        root.insert(format!("[{name}]"), Value::Object(keys));
    }
    Ok(Value::Object(root))
}

/// Stores a finished value: joined lines, trailing blanks removed, or a
/// sub-property block.
fn finish(
    p: Pending,
    sections: &mut [(String, Map<String, Value>)],
) -> Result<(), (usize, String)> {
    let joined = p.lines.join("\n");
    let joined = joined.trim_end();
    let value = if let Some(block) = joined.strip_prefix('\n') {
        let mut nested = Map::new();
        for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (k, v) = line.split_once('=').ok_or_else(|| {
                (
                    p.line,
                    format!("in the block {} =, '{line}' is not KEY = VALUE", p.key),
                )
            })?;
            nested.insert(k.trim().to_string(), Value::String(v.trim().to_string()));
        }
        Value::Object(nested)
    } else {
        Value::String(joined.to_string())
    };
    let (_, keys) = sections
        .iter_mut()
        .find(|(s, _)| *s == p.section)
        .expect("the value's section");
    keys.insert(p.key, value);
    Ok(())
}

/// True if botocore reads the section `name`: a profile, an SSO session or
/// a services block.
pub(super) fn is_read(name: &str) -> bool {
    profile_of(name).is_some() || name.starts_with("sso-session") || name.starts_with("services")
}

#[cfg(test)]
mod tests {
    use super::{INVALID, parse, profile_of};

    #[test]
    fn the_parser_follows_configparser() {
        let value = parse(
            "; c\n[profile a]\nKey = v\n  more\n\n  last\n\ns3 =\n  x = 1\n  # c\n  y=2\n[profilex b]\n",
        )
        .unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "[profile a]": {"key": "v\nmore\n\nlast", "s3": {"x": "1", "y": "2"}},
                "[profilex b]": {}
            })
        );
        // build_profile_map: startswith("profile") and two shlex words.
        assert_eq!(profile_of("profilex b").as_deref(), Some("b"));
        assert_eq!(profile_of("profile"), None);
        assert_eq!(profile_of("profile 'a b'").as_deref(), Some("a b"));
        assert_eq!(profile_of("profile \"a"), None);
        assert_eq!(profile_of("sso-session x"), None);
        for (text, why) in [
            ("region = x\n", "line 1: a line before any [section]"),
            ("[a]\n[a]\n", "line 2: section [a] given twice"),
            ("[a]\nk=1\nK=2\n", "line 3: k given twice in [a]"),
            ("[a]\nnothing\n", "line 2: 'nothing' is not KEY = VALUE"),
            ("[DEFAULT]\n", "[DEFAULT]"),
            (
                "[default]\n[profile default]\n",
                "both give the profile 'default'",
            ),
            ("[a]\ns3 =\n  nope\n", "line 2: in the block s3 ="),
        ] {
            let err = parse(text).unwrap_err();
            assert!(
                err.starts_with(INVALID) && err.contains(why),
                "{text:?}: {err}"
            );
        }
    }
}
