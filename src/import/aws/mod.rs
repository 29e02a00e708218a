//! The AWS shared config file (`~/.aws/config`) and the environment's
//! `AWS_*` variables, read for their retry settings as botocore (the AWS
//! CLI's and boto3's core) reads them: boto/botocore at commit 0e6e240
//! (version 1.43.67, 2026-08-07), `botocore/configloader.py`,
//! `botocore/configprovider.py`, `botocore/args.py`, `botocore/config.py`,
//! `botocore/retries/standard.py`, `botocore/retryhandler.py` and
//! `botocore/data/_retry.json`.
//!
//! **The file.** botocore reads it with Python's `configparser.RawConfigParser`
//! and its defaults (`raw_config_parse`), then names profiles
//! (`build_profile_map`). That dialect, which this module's small parser
//! follows, is neither rust-ini's nor configparser-rs's nor the SDKs'
//! profile-file rules (the SEP the Rust and Go SDKs follow), which is why it
//! is hand-written: no crate reads it as botocore does, and the differences
//! change values. The rules:
//!
//! - A line whose text, stripped, starts with `#` or `;` is a comment. There
//!   are **no inline comments**: `retry_mode = standard # fast` is the value
//!   `standard # fast`, which botocore refuses as a retry mode (the SEP and
//!   the Rust SDK strip a `#` after whitespace; here the file is refused, as
//!   botocore would refuse it).
//! - `[NAME]` opens a section; a name holding `]` is read to its last `]`
//!   (CPython's `_SECT_TMPL` is `[^]]+`, the first `]`, in most versions
//!   and `.+`, the last, in some: no real profile name holds one); a key line
//!   before any section is an error; a section given twice is an error
//!   (`strict`). `[DEFAULT]` is configparser's section of keys every section
//!   inherits: botocore inherits them, the other SDKs do not, so it is
//!   refused.
//! - `KEY = VALUE` or `KEY: VALUE` (the first `=` or `:`), both sides
//!   stripped; the key lowercased (`optionxform`); a key given twice in a
//!   section is an error; a line with neither is an error.
//! - A line indented deeper than its key's line continues the value. A value
//!   that is empty on its key's line and continued (`s3 =` then indented
//!   `KEY = VALUE` lines) is a sub-property block (`_parse_nested`: each
//!   line split at its first `=`, key and value stripped, the key's case
//!   kept; a line without `=` is an error).
//! - `[default]` is the profile `default`; a section starting `profile` is
//!   the profile named by its second word (`shlex.split`: `[profile "a b"]`
//!   is `a b`; a section of other than two words is no profile). Two
//!   sections naming one profile (`[default]` and `[profile default]`) are
//!   refused: botocore keeps the later one, the SEP prefers
//!   `[profile default]`, so the file means different things to different
//!   SDKs.
//!
//! **The profile**: `--select profile=NAME`, else `AWS_DEFAULT_PROFILE`,
//! else `AWS_PROFILE` (botocore searches them in that order; the other SDKs
//! read `AWS_PROFILE` only), else `default`. A named profile the file does
//! not have is an error (botocore's `ProfileNotFound`); a missing `default`
//! is an empty profile.
//!
//! **The settings** (`BOTOCORE_DEFAUT_SESSION_VARIABLES`; the environment
//! over the file, `create_config_chain`: "environment, config_file,
//! default_value"; a variable set but empty counts as set):
//!
//! - `retry_mode` / `AWS_RETRY_MODE`: exactly `legacy`, `standard` or
//!   `adaptive` (`Config._validate_retry_configuration`). Unset: `standard`
//!   if `defaults_mode` / `AWS_DEFAULTS_MODE` is other than `legacy` (every
//!   mode of `sdk-default-configuration.json` has `retryMode: standard`) or
//!   the 2026 behaviour is on, else `legacy`. The Go, Rust and Java SDKs
//!   default to `standard`: the import says which default it took.
//! - `max_attempts` / `AWS_MAX_ATTEMPTS`: every attempt, the first included
//!   (`total_max_attempts`), a whole number (Python's `int`) of at least 1.
//!   Unset: 3 in standard and adaptive (`DEFAULT_MAX_ATTEMPTS`; 4 for
//!   DynamoDB under the 2026 behaviour), 5 in legacy (`_retry.json`,
//!   `__default__`), 10 for DynamoDB in legacy.
//! - `AWS_NEW_RETRIES_2026`: the 2026 behaviour on iff its value, lowercased,
//!   is `true` (`_resolve_new_retries`: `"TRUE"` and `"True"` count, `" true"`
//!   does not); unset, botocore 1.43.67's default is off.
//!
//! **The behaviours.** `--select behaviour=2.0|2026` says which SDK
//! generation runs the file (it overrides `AWS_NEW_RETRIES_2026`). Neither is
//! every SDK's default: botocore 1.43.67 has 2.0 unless the variable is on;
//! AWS announced the 2026 behaviour as the default from 10 Nov 2026 in most
//! SDKs (not Java 2.x or Kotlin), which the code read here predates. The
//! import names the behaviour it assumed and how to choose the other.
//!
//! - legacy (`retryhandler.py`, `_retry.json`): `rand()·2^(n−1)` seconds
//!   before retry n, uncapped, no quota: herdsim's `full` with base 1 s and a
//!   cap of the largest ceiling the attempts reach (so it never binds).
//!   DynamoDB (`--select service=dynamodb`): `0.05·2^(n−1)` s, no jitter,
//!   10 attempts: `none`, base 50 ms. The same under either behaviour.
//! - standard, 2.0 (`ExponentialBackoff`, `RetryQuotaChecker`, `quota.py`):
//!   `rand()·min(2^(n−1), 20)` s: `full`, base 1 s, cap 20 s; the quota
//!   `tokens:500,cost:5,refund:1,timeout-cost:10` (botocore's timeout cost
//!   is for its connect and read timeouts, herdsim's attempt timeout here).
//! - adaptive: standard plus the client rate limiter (`adaptive.py`,
//!   `throttling.py`: CUBIC, scale 0.4, β 0.7): herdsim's `aws-adaptive`.
//! - standard and adaptive, 2026 (the same classes with `NEW_RETRIES_ENABLED`,
//!   boto/botocore#3678): `rand()·min(scale·2^(n−1), 20)` s, `scale` 1 s
//!   after a throttling error (`throttling_base_scale`) and 0.05 s after any
//!   other (`non_throttling_base_scale`; 0.025 s for `dynamodb` and
//!   `dynamodb-streams`, whose throttles keep the 1 s): herdsim's `aws-2026`
//!   with `base` 50 ms (25 ms), `throttle_base` 1 s, cap 20 s. The quota
//!   `tokens:500,cost:14,refund:1,throttle-cost:5` (`_RETRY_COST_V2`,
//!   `_THROTTLING_RETRY_COST`; a timeout is no longer charged apart, so it
//!   costs 14). Unset `max_attempts` is 4 for DynamoDB and DynamoDB Streams
//!   (`_SERVICE_MAX_ATTEMPTS`, keyed by hyphenized service id), else 3; an
//!   unset `retry_mode` is `standard` (`_DEFAULT_RETRY_MODE`). Adaptive adds
//!   the same CUBIC limiter as under 2.0 (`adaptive.py` is unchanged).
//!   Not modelled, and why: the `x-amz-retry-after` header (milliseconds;
//!   the delay becomes `max(t, min(hint, t + 5 s))`, so up to 25 s) comes
//!   with a server's reply, and herdsim's server model sends no retry hint
//!   (only the slot resource has one, where `--retry-after aws` is that
//!   clamp; `--retry-after` is refused on the server, naming it), so the
//!   delay is `t`, as for a service that sends no header;
//!   and the long-polling operations (SQS `ReceiveMessage`, SFN
//!   `GetActivityTask`, SWF's polls) that sleep their backoff before giving
//!   up on an empty quota are one operation's rule, not the config's.
//!
//! **Other keys.** A profile holds many settings that are not retries
//! (credentials, `region`, `output`, `sso_*`, the CLI's `cli_*`, the IMDS
//! credential fetch's `metadata_service_num_attempts`): botocore's known
//! names ([`NOT_RETRIES`]) and sub-property blocks (`s3 =`) are passed over,
//! as the Envoy reader passes over routing; any other key is unknown (an
//! error, or a warning with `--warn-unknown`): botocore itself ignores any
//! key, so a misspelt `retry_mod` would silently run legacy. Other sections
//! (other profiles, `[sso-session …]`, `[services …]`) are not read.

use serde_json::{Map, Value};

use super::tree::Node;
use super::{Context, Format, ImportError};
use crate::spec::params::param;

/// The format.
pub const FORMAT: Format = Format {
    name: "AWS shared config file (botocore)",
    about: "an ~/.aws/config INI file: a profile's retry_mode and max_attempts, with \
            AWS_RETRY_MODE, AWS_MAX_ATTEMPTS, AWS_PROFILE and AWS_NEW_RETRIES_2026",
    selects: &[
        (
            "profile",
            "the AWS profile (default: AWS_DEFAULT_PROFILE, AWS_PROFILE, else default)",
        ),
        (
            "behaviour",
            "the SDKs' retry behaviour: 2.0 or 2026 (default: AWS_NEW_RETRIES_2026, else 2.0)",
        ),
        (
            "service",
            "the AWS service called (dynamodb: its own legacy retries; dynamodb and \
             dynamodb-streams: the 2026 behaviour's 25ms base and 4 attempts)",
        ),
    ],
    parse,
    claims,
    read,
};

/// The prefix of every parse error, which `detect` reads as this format's.
pub const INVALID: &str = "invalid INI (AWS config)";

/// Keys of a profile that botocore knows and that are not retry settings:
/// the session variables of `configprovider.py`, the credential providers'
/// keys (`credentials.py`, `tokens.py`), and the AWS CLI's own.
pub const NOT_RETRIES: &[&str] = &[
    "account_id_endpoint_mode",
    "api_versions",
    "auth_scheme_preference",
    "aws_access_key_id",
    "aws_account_id",
    "aws_secret_access_key",
    "aws_security_token",
    "aws_session_token",
    "ca_bundle",
    "cli_auto_prompt",
    "cli_binary_format",
    "cli_follow_urlparam",
    "cli_history",
    "cli_pager",
    "cli_timestamp_format",
    "credential_process",
    "credential_source",
    "csm_client_id",
    "csm_enabled",
    "csm_host",
    "csm_port",
    "data_path",
    "disable_host_prefix_injection",
    "disable_request_compression",
    "duration_seconds",
    "ec2_metadata_service_endpoint",
    "ec2_metadata_service_endpoint_mode",
    "ec2_metadata_v1_disabled",
    "endpoint_discovery_enabled",
    "endpoint_url",
    "external_id",
    "ignore_configured_endpoint_urls",
    "imds_use_ipv6",
    "login_session",
    "metadata_service_num_attempts",
    "metadata_service_timeout",
    "mfa_serial",
    "output",
    "parameter_validation",
    "region",
    "request_checksum_calculation",
    "request_min_compression_size_bytes",
    "response_checksum_validation",
    "role_arn",
    "role_session_name",
    "s3_disable_express_session_auth",
    "sdk_ua_app_id",
    "services",
    "sigv4a_signing_region_set",
    "source_profile",
    "sso_account_id",
    "sso_region",
    "sso_registration_scopes",
    "sso_role_name",
    "sso_session",
    "sso_start_url",
    "sts_regional_endpoints",
    "tcp_keepalive",
    "use_dualstack_endpoint",
    "use_fips_endpoint",
    "web_identity_token_file",
];

/// The keys this reader uses.
const RETRY_KEYS: &[&str] = &["retry_mode", "max_attempts", "defaults_mode"];

/// botocore's `defaults_mode` values (`sdk-default-configuration.json`, and
/// `auto`, which resolves to one of them).
const DEFAULTS_MODES: &[&str] = &[
    "legacy",
    "standard",
    "in-region",
    "cross-region",
    "mobile",
    "auto",
];

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

/// Every document this parser reads with a profile in it is an AWS config
/// file (the parser refuses JSON and YAML: they do not open with a section).
fn claims(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|sections| sections.keys().any(|s| is_read(&s[1..s.len() - 1])))
}

/// True if botocore reads the section `name`: a profile, an SSO session or
/// a services block.
fn is_read(name: &str) -> bool {
    profile_of(name).is_some() || name.starts_with("sso-session") || name.starts_with("services")
}

/// A setting's value and where it came from.
struct Found<'a> {
    value: String,
    /// The field path in the file, or the variable's name.
    from: String,
    node: Option<Node<'a>>,
}

/// The environment's `var`, else the profile's `key`.
fn lookup<'a>(
    ctx: &Context<'_>,
    profile: Option<&Node<'a>>,
    key: &str,
    var: &str,
) -> Result<Option<Found<'a>>, ImportError> {
    if let Some(value) = ctx.env(var) {
        return Ok(Some(Found {
            value: value.to_string(),
            from: format!("${var} (environment)"),
            node: None,
        }));
    }
    let Some(node) = profile.and_then(|p| p.get(key)) else {
        return Ok(None);
    };
    let value = node
        .value()
        .as_str()
        .ok_or_else(|| {
            ctx.error(
                &node,
                "is a sub-property block: expected a value on the key's line",
            )
        })?
        .to_string();
    Ok(Some(Found {
        value,
        from: node.path().to_string(),
        node: Some(node),
    }))
}

/// An error at a found setting: its field, or its variable.
fn bad(ctx: &Context<'_>, found: &Found<'_>, message: String) -> ImportError {
    match &found.node {
        Some(node) => ctx.error(node, message),
        None => ctx.error_at(&found.from, message),
    }
}

/// The behaviours an SDK generation retries by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    /// The standard mode of 2020 (botocore ≤ 1.43 without the variable).
    V2,
    /// The 2026 behaviour (`AWS_NEW_RETRIES_2026`).
    V2026,
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    let sections = root.entries(ctx)?;
    let profiles: Vec<(String, Node<'_>)> = sections
        .iter()
        .filter_map(|(s, node)| profile_of(&s[1..s.len() - 1]).map(|p| (p, node.clone())))
        .collect();
    let (wanted, why) = match ctx.selection("profile") {
        Some(name) => (name.to_string(), "--select profile".to_string()),
        None => match ctx
            .env("AWS_DEFAULT_PROFILE")
            .map(|p| (p, "AWS_DEFAULT_PROFILE"))
            .or_else(|| ctx.env("AWS_PROFILE").map(|p| (p, "AWS_PROFILE")))
        {
            Some((name, var)) => (name.to_string(), format!("${var}")),
            None => ("default".to_string(), String::new()),
        },
    };
    let profile = profiles.iter().find(|(p, _)| *p == wanted).map(|(_, n)| n);
    if profile.is_none() && !why.is_empty() {
        let names: Vec<&str> = profiles.iter().map(|(p, _)| p.as_str()).collect();
        return Err(ctx.error_at(
            &why,
            format!(
                "no profile '{wanted}' (botocore's ProfileNotFound): the file has {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    }
    match (profile, why.is_empty()) {
        (Some(node), true) => ctx.chose(format!("profile {wanted} ({}, the default)", node.path())),
        (Some(node), false) => ctx.chose(format!("profile {wanted} ({}, by {why})", node.path())),
        (None, _) => {
            ctx.chose("no [default] profile: the environment and botocore's defaults");
            ctx.warn(format!(
                "{}: no [default] profile: only the environment and botocore's defaults apply",
                ctx.file
            ));
        }
    }
    if let Some(node) = profile {
        for (key, field) in node.entries(ctx)? {
            let passed_over = NOT_RETRIES.contains(&key) || field.value().is_object();
            if !passed_over && !RETRY_KEYS.contains(&key) {
                let mut known: Vec<&str> = RETRY_KEYS.to_vec();
                known.push("botocore's other settings (region, output, credentials, sso_*, …)");
                ctx.unknown(&field, &known)?;
            }
        }
    }

    let behaviour = match ctx.selection("behaviour") {
        Some("2.0") => (Behaviour::V2, "--select behaviour=2.0".to_string()),
        Some("2026") => (Behaviour::V2026, "--select behaviour=2026".to_string()),
        Some(other) => {
            return Err(ctx.error_at(
                "--select behaviour",
                format!("'{other}': expected 2.0 or 2026"),
            ));
        }
        None => match ctx.env("AWS_NEW_RETRIES_2026") {
            Some(v) if v.to_lowercase() == "true" => (
                Behaviour::V2026,
                format!("$AWS_NEW_RETRIES_2026={v} (lowercased, true)"),
            ),
            Some(v) => (
                Behaviour::V2,
                format!("$AWS_NEW_RETRIES_2026={v} (not true, lowercased)"),
            ),
            None => (
                Behaviour::V2,
                "assumed, botocore 1.43's default; SDKs since 10 Nov 2026 run 2026: \
                 --select behaviour=2026"
                    .to_string(),
            ),
        },
    };
    let (behaviour, behaviour_why) = behaviour;
    ctx.chose(format!(
        "behaviour {} ({behaviour_why})",
        match behaviour {
            Behaviour::V2 => "2.0",
            Behaviour::V2026 => "2026",
        }
    ));

    let defaults_mode = lookup(ctx, profile, "defaults_mode", "AWS_DEFAULTS_MODE")?;
    if let Some(found) = &defaults_mode
        && !DEFAULTS_MODES.contains(&found.value.as_str())
    {
        return Err(bad(
            ctx,
            found,
            format!(
                "defaults_mode '{}': expected one of {}",
                found.value,
                DEFAULTS_MODES.join(", ")
            ),
        ));
    }
    let retry_mode = lookup(ctx, profile, "retry_mode", "AWS_RETRY_MODE")?;
    let (mode, mode_from, mode_rule) = match &retry_mode {
        Some(found) => {
            if !["legacy", "standard", "adaptive"].contains(&found.value.as_str()) {
                return Err(bad(
                    ctx,
                    found,
                    format!(
                        "retry_mode '{}': expected legacy, standard or adaptive (exactly: \
                         botocore has no inline comments and does not fold case)",
                        found.value
                    ),
                ));
            }
            (
                found.value.clone(),
                found.from.clone(),
                format!("retry_mode {}", found.value),
            )
        }
        None => match (&defaults_mode, behaviour) {
            (Some(d), _) if d.value != "legacy" => (
                "standard".to_string(),
                d.from.clone(),
                format!(
                    "no retry_mode; defaults_mode {} makes it standard \
                     (sdk-default-configuration.json; its connect timeouts are not modelled)",
                    d.value
                ),
            ),
            (_, Behaviour::V2026) => (
                "standard".to_string(),
                String::new(),
                "no retry_mode: standard, botocore's default under the 2026 behaviour".to_string(),
            ),
            _ => (
                "legacy".to_string(),
                String::new(),
                "no retry_mode: legacy, botocore's default (the Go, Rust and Java SDKs default \
                 to standard: set retry_mode to say which)"
                    .to_string(),
            ),
        },
    };

    let service = ctx.selection("service");
    let dynamodb = service == Some("dynamodb");
    // The 2026 behaviour keys its DynamoDB rules by the hyphenized service
    // id (`_SERVICE_MAX_ATTEMPTS`, `_SERVICE_BACKOFF_CONFIG`), which names
    // DynamoDB Streams too; legacy keys them by endpoint prefix
    // (`_retry.json`: `dynamodb` only, Streams' is `streams.dynamodb`).
    let dynamodb_2026 =
        behaviour == Behaviour::V2026 && matches!(service, Some("dynamodb" | "dynamodb-streams"));
    if let Some(name) = service {
        ctx.chose(format!("service {name}"));
    }

    let max_attempts = lookup(ctx, profile, "max_attempts", "AWS_MAX_ATTEMPTS")?;
    let attempts = match &max_attempts {
        Some(found) => {
            let text = found.value.trim();
            let digits = text.strip_prefix('+').unwrap_or(text);
            let n: u64 = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                match digits.parse() {
                    Ok(n) => n,
                    // Python's int has no limit: beyond u64 the value is
                    // herdsim's to refuse, quoted as written.
                    Err(_) => {
                        let why = param("max_attempts")
                            .and_then(|p| p.check(text).err())
                            .map_or_else(|| "too large".to_string(), |e| e.to_string());
                        return Err(bad(
                            ctx,
                            found,
                            format!("gives max_attempts = {text}, which herdsim refuses: {why}"),
                        ));
                    }
                }
            } else {
                return Err(bad(
                    ctx,
                    found,
                    format!(
                        "max_attempts '{}': expected a whole number of at least 1 (every \
                         attempt, the first included)",
                        found.value
                    ),
                ));
            };
            if n == 0 {
                return Err(bad(
                    ctx,
                    found,
                    "max_attempts 0: botocore refuses it (total_max_attempts must be at least 1, \
                     the first attempt included)"
                        .to_string(),
                ));
            }
            (
                n,
                found.from.clone(),
                format!("max_attempts {n} counts every attempt, the first included"),
            )
        }
        None => {
            let (n, why) = match mode.as_str() {
                "legacy" if dynamodb => (10, "legacy DynamoDB's default (_retry.json: dynamodb)"),
                "legacy" => (5, "legacy's default (_retry.json: __default__)"),
                _ if dynamodb_2026 => (
                    4,
                    "the 2026 behaviour's DynamoDB default (_SERVICE_MAX_ATTEMPTS)",
                ),
                _ => (3, "standard's default (DEFAULT_MAX_ATTEMPTS)"),
            };
            (n, String::new(), format!("no max_attempts: {n}, {why}"))
        }
    };
    let (attempts, attempts_from, attempts_rule) = attempts;

    let paths = |found: &str| -> Vec<String> {
        if found.is_empty() {
            Vec::new()
        } else {
            vec![found.to_string()]
        }
    };
    let mode_paths = paths(&mode_from);
    let mode_refs: Vec<&str> = mode_paths.iter().map(String::as_str).collect();
    let attempt_paths = paths(&attempts_from);
    let attempt_refs: Vec<&str> = attempt_paths.iter().map(String::as_str).collect();

    ctx.set(
        "resource",
        "server",
        &[],
        "an SDK's config describes a client of a service: herdsim's server model",
    )?;
    ctx.set(
        "max_attempts",
        attempts.to_string(),
        &attempt_refs,
        attempts_rule,
    )?;
    ctx.set(
        "retry_on",
        "failure+rejected+timeout",
        &mode_refs,
        "every mode retries transient errors (5xx: a server failure), throttling errors \
         (429, SlowDown: herdsim's rejection at a full queue) and connect and read timeouts \
         (an attempt's timeout)",
    )?;
    match mode.as_str() {
        "legacy" if dynamodb => {
            // 0.05·2^(n−1) s before retry n, no jitter, uncapped: the
            // largest delay the attempts reach is the cap, so it never binds.
            let largest = 50_000u128 << attempts.saturating_sub(2).min(100);
            ctx.set(
                "policy",
                "none",
                &mode_refs,
                format!("{mode_rule}, DynamoDB: 0.05·2^(n−1) s before retry n, no jitter → none"),
            )?;
            ctx.set("base", "50ms", &mode_refs, "legacy DynamoDB's base 0.05 s")?;
            ctx.set(
                "cap",
                cap_text(largest),
                &attempt_refs,
                "legacy has no cap: the largest delay max_attempts reaches, so none binds",
            )?;
        }
        "legacy" => {
            let largest = 1_000_000u128 << attempts.saturating_sub(2).min(100);
            ctx.set(
                "policy",
                "full",
                &mode_refs,
                format!("{mode_rule}: rand()·2^(n−1) s before retry n, uncapped, no quota → full"),
            )?;
            ctx.set(
                "base",
                "1s",
                &mode_refs,
                "legacy's base: rand() seconds before the first retry",
            )?;
            ctx.set(
                "cap",
                cap_text(largest),
                &attempt_refs,
                "legacy has no cap: the largest ceiling max_attempts reaches, so none binds",
            )?;
        }
        _ if behaviour == Behaviour::V2026 => {
            let (base, base_rule) = if dynamodb_2026 {
                (
                    "25ms",
                    "DynamoDB's non_throttling_base_scale 0.025 s (_SERVICE_BACKOFF_CONFIG): the \
                     ceiling of the first retry after an error reply or a timeout",
                )
            } else {
                (
                    "50ms",
                    "non_throttling_base_scale 0.05 s (_DEFAULT_BACKOFF_CONFIG): the ceiling of \
                     the first retry after an error reply or a timeout",
                )
            };
            ctx.set(
                "policy",
                "aws-2026",
                &mode_refs,
                format!(
                    "{mode_rule}, behaviour 2026: rand()·min(scale·2^(n−1), 20) s, scale by \
                     whether the failure was a throttle → aws-2026 (x-amz-retry-after, \
                     which clamps the delay into [t, t + 5 s], is not modelled: herdsim's \
                     server sends no retry hint, as a server without the header)"
                ),
            )?;
            ctx.set("base", base, &mode_refs, base_rule)?;
            ctx.set(
                "throttle_base",
                "1s",
                &mode_refs,
                "throttling_base_scale 1 s (_DEFAULT_BACKOFF_CONFIG, DynamoDB's too): the \
                 ceiling of the first retry after a throttle (herdsim's rejection at a full \
                 queue)",
            )?;
            ctx.set(
                "cap",
                "20s",
                &mode_refs,
                "standard's cap (_MAX_BACKOFF 20 s), on the ceiling before the draw",
            )?;
            ctx.set(
                "budget",
                "tokens:500,cost:14,refund:1,throttle-cost:5",
                &mode_refs,
                "the retry quota (quota.py, RetryQuotaChecker under the 2026 behaviour): 500 \
                 tokens, a retry 14 (_RETRY_COST_V2, timeouts too), after a throttle 5 \
                 (_THROTTLING_RETRY_COST), a first-try success adds 1, a retry's success \
                 returns its cost",
            )?;
            if mode == "adaptive" {
                ctx.set(
                    "throttle",
                    "aws-adaptive:0.4,beta:0.7",
                    &mode_refs,
                    "adaptive adds the client rate limiter, unchanged in 2026 (throttling.py: \
                     CUBIC, scale 0.4, beta 0.7)",
                )?;
            }
        }
        _ => {
            ctx.set(
                "policy",
                "full",
                &mode_refs,
                format!("{mode_rule}, behaviour 2.0: rand()·min(2^(n−1), 20) s → full"),
            )?;
            ctx.set(
                "base",
                "1s",
                &mode_refs,
                "standard's base 1 s (ExponentialBackoff, _BASE 2)",
            )?;
            ctx.set(
                "cap",
                "20s",
                &mode_refs,
                "standard's cap (_MAX_BACKOFF 20 s)",
            )?;
            ctx.set(
                "budget",
                "tokens:500,cost:5,refund:1,timeout-cost:10",
                &mode_refs,
                "the retry quota (quota.py, RetryQuotaChecker): 500 tokens, a retry 5, after a \
                 timeout 10, a first-try success adds 1, a retry's success returns its cost",
            )?;
            if mode == "adaptive" {
                ctx.set(
                    "throttle",
                    "aws-adaptive:0.4,beta:0.7",
                    &mode_refs,
                    "adaptive adds the client rate limiter (throttling.py: CUBIC, scale 0.4, \
                     beta 0.7)",
                )?;
            }
        }
    }
    Ok(())
}

/// A cap of `us` µs as herdsim writes a duration.
fn cap_text(us: u128) -> String {
    match u64::try_from(us) {
        Ok(us) if us < u64::MAX / 2 => super::durations::herdsim(us),
        _ => "1000000000s".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Imported, Options, Source, Unknown, import};

    fn run(text: &str, select: &[(&str, &str)], env: &[(&str, &str)]) -> Result<Imported, String> {
        let options = Options {
            select: select
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            unknown: Unknown::Refuse,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        import(
            &[Source {
                file: "config".to_string(),
                text: text.to_string(),
            }],
            &options,
        )
        .map_err(|e| e.to_string())
    }

    fn ok(text: &str, select: &[(&str, &str)], env: &[(&str, &str)]) -> Imported {
        run(text, select, env).unwrap()
    }

    const FILE: &str = "\
# my config
[default]
region = us-east-1
retry_mode = standard

[profile batch]
retry_mode: adaptive
max_attempts = 7
s3 =
  max_concurrent_requests = 20
  addressing_style = path

[profile \"old cli\"]
output = json
";

    #[test]
    fn standard_2_0_is_full_jitter_1s_20s_and_the_500_token_quota() {
        let got = ok(FILE, &[], &[]);
        assert_eq!(got.value("policy"), Some("full"));
        assert_eq!(got.value("base"), Some("1s"));
        assert_eq!(got.value("cap"), Some("20s"));
        // DEFAULT_MAX_ATTEMPTS = 3 (standard.py).
        assert_eq!(got.value("max_attempts"), Some("3"));
        // quota.py INITIAL_CAPACITY 500; RetryQuotaChecker _RETRY_COST 5,
        // _TIMEOUT_RETRY_REQUEST 10, _NO_RETRY_INCREMENT 1.
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:5,refund:1,timeout-cost:10")
        );
        assert_eq!(got.value("throttle"), None);
        assert!(
            got.files[0].2.contains("behaviour 2.0 (assumed"),
            "{:?}",
            got.files
        );
    }

    #[test]
    fn adaptive_adds_cubic_and_profiles_are_chosen_as_botocore_does() {
        let got = ok(FILE, &[("profile", "batch")], &[]);
        assert_eq!(got.value("throttle"), Some("aws-adaptive:0.4,beta:0.7"));
        assert_eq!(got.value("max_attempts"), Some("7"));
        // AWS_DEFAULT_PROFILE is searched before AWS_PROFILE.
        let env = ok(
            FILE,
            &[],
            &[("AWS_PROFILE", "old cli"), ("AWS_DEFAULT_PROFILE", "batch")],
        );
        assert_eq!(env.value("max_attempts"), Some("7"));
        // [profile "old cli"] is the profile `old cli` (shlex), with no
        // retry_mode: legacy, 5 attempts.
        let old = ok(FILE, &[], &[("AWS_PROFILE", "old cli")]);
        assert_eq!(old.value("max_attempts"), Some("5"));
        assert_eq!(old.value("budget"), None);
        let err = run(FILE, &[("profile", "prod")], &[]).unwrap_err();
        assert!(
            err.contains("--select profile: no profile 'prod'")
                && err.contains("default, old cli, batch"),
            "{err}"
        );
    }

    #[test]
    fn the_environment_is_read_over_the_file() {
        let got = ok(
            FILE,
            &[("profile", "batch")],
            &[("AWS_RETRY_MODE", "legacy"), ("AWS_MAX_ATTEMPTS", "4")],
        );
        assert_eq!(got.value("budget"), None);
        assert_eq!(got.value("max_attempts"), Some("4"));
        // legacy: rand()·2^(n−1) s; with 4 attempts retry 3 has ceiling 4 s.
        assert_eq!(got.value("cap"), Some("4s"));
        assert!(
            got.settings[1].from.contains("$AWS_MAX_ATTEMPTS"),
            "{:?}",
            got.settings[1]
        );
    }

    #[test]
    fn legacy_is_botocores_retry_json() {
        let text = "[default]\nretry_mode = legacy\n";
        let got = ok(text, &[], &[]);
        // _retry.json __default__: max_attempts 5, base "rand", growth 2.
        assert_eq!(got.value("max_attempts"), Some("5"));
        assert_eq!(got.value("policy"), Some("full"));
        assert_eq!(got.value("cap"), Some("8s"));
        // dynamodb: max_attempts 10, base 0.05, growth 2 (no rand).
        let ddb = ok(text, &[("service", "dynamodb")], &[]);
        assert_eq!(ddb.value("max_attempts"), Some("10"));
        assert_eq!(ddb.value("policy"), Some("none"));
        assert_eq!(ddb.value("base"), Some("50ms"));
        assert_eq!(ddb.value("cap"), Some("12.8s"));
    }

    #[test]
    fn defaults_mode_makes_standard_and_no_profile_means_botocore_defaults() {
        let got = ok("[default]\ndefaults_mode = in-region\n", &[], &[]);
        assert_eq!(got.value("cap"), Some("20s"));
        let none = ok("[profile other]\nregion = eu-west-1\n", &[], &[]);
        assert_eq!(none.value("max_attempts"), Some("5"));
        assert!(none.warnings[0].contains("no [default] profile"));
    }

    #[test]
    fn the_2026_switch_is_lowercased_true_and_select_overrides_it() {
        // _resolve_new_retries: os.environ value .lower() == 'true'.
        for on in ["true", "TRUE", "True"] {
            let got = ok(FILE, &[], &[("AWS_NEW_RETRIES_2026", on)]);
            assert_eq!(got.value("policy"), Some("aws-2026"), "{on}");
            assert!(
                got.files[0]
                    .2
                    .contains("behaviour 2026 ($AWS_NEW_RETRIES_2026"),
                "{:?}",
                got.files
            );
        }
        for off in ["false", "1", " true", "yes"] {
            assert_eq!(
                ok(FILE, &[], &[("AWS_NEW_RETRIES_2026", off)]).value("policy"),
                Some("full")
            );
        }
        // --select overrides the variable; legacy is the same in both.
        assert_eq!(
            ok(FILE, &[("behaviour", "2026")], &[]).value("policy"),
            Some("aws-2026")
        );
        assert_eq!(
            ok(
                FILE,
                &[("behaviour", "2.0")],
                &[("AWS_NEW_RETRIES_2026", "true")]
            )
            .value("budget"),
            Some("tokens:500,cost:5,refund:1,timeout-cost:10")
        );
        let legacy = ok(
            "[default]\nretry_mode = legacy\n",
            &[("behaviour", "2026")],
            &[],
        );
        assert_eq!(legacy.value("max_attempts"), Some("5"));
        assert_eq!(legacy.value("policy"), Some("full"));
        let err = run(FILE, &[("behaviour", "3")], &[]).unwrap_err();
        assert!(
            err.contains("--select behaviour: '3': expected 2.0 or 2026"),
            "{err}"
        );
        // No retry_mode under 2026: _DEFAULT_RETRY_MODE is standard.
        let unset = ok("[default]\n", &[("behaviour", "2026")], &[]);
        assert_eq!(unset.value("policy"), Some("aws-2026"));
        assert_eq!(unset.value("max_attempts"), Some("3"));
    }

    #[test]
    fn standard_2026_is_aws_2026_on_botocores_scales_and_the_14_5_quota() {
        let got = ok(FILE, &[("behaviour", "2026")], &[]);
        assert_eq!(got.value("policy"), Some("aws-2026"));
        // _DEFAULT_BACKOFF_CONFIG: non_throttling_base_scale 0.05,
        // throttling_base_scale 1; _MAX_BACKOFF 20.
        assert_eq!(got.value("base"), Some("50ms"));
        assert_eq!(got.value("throttle_base"), Some("1s"));
        assert_eq!(got.value("cap"), Some("20s"));
        // DEFAULT_MAX_ATTEMPTS 3.
        assert_eq!(got.value("max_attempts"), Some("3"));
        // INITIAL_CAPACITY 500, _RETRY_COST_V2 14, _THROTTLING_RETRY_COST 5,
        // _NO_RETRY_INCREMENT 1, no timeout cost of its own.
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:14,refund:1,throttle-cost:5")
        );
        assert_eq!(got.value("throttle"), None);
        assert_eq!(got.value("retry_on"), Some("failure+rejected+timeout"));
        let toml = crate::import::to_toml(&got, "herdsim import config");
        assert!(toml.contains("x-amz-retry-after"), "{toml}");
        assert!(toml.contains("_THROTTLING_RETRY_COST"), "{toml}");
    }

    #[test]
    fn adaptive_2026_adds_the_same_cubic_limiter() {
        let got = ok(FILE, &[("behaviour", "2026"), ("profile", "batch")], &[]);
        assert_eq!(got.value("policy"), Some("aws-2026"));
        assert_eq!(got.value("max_attempts"), Some("7"));
        assert_eq!(got.value("throttle"), Some("aws-adaptive:0.4,beta:0.7"));
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:14,refund:1,throttle-cost:5")
        );
    }

    #[test]
    fn dynamodb_2026_has_a_25ms_base_and_4_attempts_unless_set() {
        for service in ["dynamodb", "dynamodb-streams"] {
            let got = ok(FILE, &[("behaviour", "2026"), ("service", service)], &[]);
            // _SERVICE_BACKOFF_CONFIG: non_throttling_base_scale 0.025;
            // throttles keep throttling_base_scale 1.
            assert_eq!(got.value("base"), Some("25ms"), "{service}");
            assert_eq!(got.value("throttle_base"), Some("1s"), "{service}");
            // _SERVICE_MAX_ATTEMPTS: 4 when max_attempts is unset.
            assert_eq!(got.value("max_attempts"), Some("4"), "{service}");
            let set = ok(
                FILE,
                &[("behaviour", "2026"), ("service", service)],
                &[("AWS_MAX_ATTEMPTS", "2")],
            );
            assert_eq!(set.value("max_attempts"), Some("2"));
            assert_eq!(set.value("base"), Some("25ms"));
        }
        // Under 2.0 DynamoDB's standard mode is everyone's.
        let v2 = ok(FILE, &[("service", "dynamodb")], &[]);
        assert_eq!(v2.value("max_attempts"), Some("3"));
        assert_eq!(v2.value("base"), Some("1s"));
        // Another service is the default; legacy Streams is _retry.json's
        // __default__ (its endpoint prefix is streams.dynamodb).
        let s3 = ok(FILE, &[("behaviour", "2026"), ("service", "s3")], &[]);
        assert_eq!(s3.value("base"), Some("50ms"));
        let streams = ok(
            "[default]\nretry_mode = legacy\n",
            &[("behaviour", "2026"), ("service", "dynamodb-streams")],
            &[],
        );
        assert_eq!(streams.value("max_attempts"), Some("5"));
        assert_eq!(streams.value("policy"), Some("full"));
    }

    #[test]
    fn bad_values_name_the_field_and_the_accepted_ones() {
        let err = run("[default]\nretry_mode = Standard\n", &[], &[]).unwrap_err();
        assert!(
            err.starts_with("config: [default].retry_mode: retry_mode 'Standard': expected legacy"),
            "{err}"
        );
        // No inline comments in configparser: the comment is in the value.
        let err = run("[default]\nretry_mode = standard # fast\n", &[], &[]).unwrap_err();
        assert!(err.contains("'standard # fast'"), "{err}");
        for bad in ["0", "three", "2.5", "-1"] {
            let err = run(&format!("[default]\nmax_attempts = {bad}\n"), &[], &[]).unwrap_err();
            assert!(
                err.starts_with("config: [default].max_attempts: max_attempts"),
                "{err}"
            );
        }
        let err = run("[default]\n", &[], &[("AWS_MAX_ATTEMPTS", "x")]).unwrap_err();
        assert!(
            err.starts_with("config: $AWS_MAX_ATTEMPTS (environment): "),
            "{err}"
        );
        assert!(run("[default]\nmax_attempts = +4\n", &[], &[]).is_ok());
        let err = run("[default]\nretry_mod = standard\n", &[], &[]).unwrap_err();
        assert!(err.contains("[default].retry_mod: unknown field"), "{err}");
    }

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

    #[test]
    fn json_and_yaml_are_not_aws_files_and_aws_files_are_not_theirs() {
        assert!(parse("{\"methodConfig\": []}").is_err());
        assert!(parse("apiVersion: v1\nkind: List\n").is_err());
        // A section that names no profile: refused, saying so.
        assert!(
            parse("[\"default\"]\n")
                .unwrap_err()
                .contains("[\"default\"] is no profile")
        );
        for format in crate::import::formats() {
            if format.name != FORMAT.name {
                let claimed = (format.parse)(FILE).is_ok_and(|v| (format.claims)(&v));
                assert!(!claimed, "{} claims an AWS config file", format.name);
            }
        }
        assert_eq!(ok(FILE, &[], &[]).files[0].1, FORMAT.name);
    }
}
