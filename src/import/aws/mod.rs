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
//! **The releases and behaviours.** `--select sdk=botocore==VERSION` names
//! the release that runs the file; without it herdsim assumes the current
//! one, botocore 1.44 (10 Nov 2026), and the import says so. botocore 1.44
//! always runs the 2026 behaviour, defaults `retry_mode` to `standard` and
//! no longer reads `AWS_NEW_RETRIES_2026`; the 1.43 line (1.43.67 read here)
//! runs 2.0 unless the variable is on, and defaults to `legacy`. Both were
//! measured on loopback against `herdsim serve` (DESIGN Part four: 35
//! retries before 1.44's quota is spent in a full outage, 100 for 1.43's).
//! `--select behaviour=2.0|2026` forces a behaviour on a release that has
//! it (1.44 has no 2.0). Other SDKs moved on their own dates (Java 2.x and
//! Kotlin not at all) and are not read by version here.
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
//!
//! Each object is read in its own file: the INI text in `config_file.rs`;
//! the profile chosen, and its keys, in `profile.rs`; the retry settings
//! (behaviour, `retry_mode`, `defaults_mode`, `max_attempts`, the
//! environment over the profile) in `settings.rs`; the retry strategy they
//! make (backoff, quota, rate limiter) in `strategy.rs`. The lookup of a
//! setting in the environment, then the profile, is here.

mod config_file;
mod profile;
mod settings;
mod strategy;

use serde_json::Value;

use super::tree::Node;
use super::{Context, Format, ImportError};
use config_file::is_read;
pub use config_file::{INVALID, parse, profile_of};
pub use profile::NOT_RETRIES;

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
            "sdk",
            "the SDK release that runs the file: botocore==VERSION (default: the current \
             release, botocore 1.44: the 2026 behaviour, standard mode; botocore 1.43 and \
             before: 2.0 unless AWS_NEW_RETRIES_2026, legacy mode)",
        ),
        (
            "behaviour",
            "the SDKs' retry behaviour, 2.0 or 2026, whatever the release (default: the \
             release's)",
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

/// Every document this parser reads with a profile in it is an AWS config
/// file (the parser refuses JSON and YAML: they do not open with a section).
fn claims(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|sections| sections.keys().any(|s| is_read(&s[1..s.len() - 1])))
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

/// The retry settings botocore resolves for the chosen profile, each with
/// where it came from and the rule that gave it.
struct Resolved {
    behaviour: Behaviour,
    /// `legacy`, `standard` or `adaptive`.
    mode: String,
    mode_from: String,
    mode_rule: String,
    /// `--select service=dynamodb`: legacy's own DynamoDB retries.
    dynamodb: bool,
    /// DynamoDB or DynamoDB Streams under the 2026 behaviour.
    dynamodb_2026: bool,
    attempts: u64,
    attempts_from: String,
    attempts_rule: String,
}

fn read(root: &Node<'_>, ctx: &Context<'_>) -> Result<(), ImportError> {
    let profile = profile::choose_profile(ctx, root)?;
    let resolved = settings::resolve(ctx, profile.as_ref())?;
    strategy::set_strategy(ctx, resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Imported, Options, Source, Unknown, import};

    pub(super) fn run(
        text: &str,
        select: &[(&str, &str)],
        env: &[(&str, &str)],
    ) -> Result<Imported, String> {
        // As botocore 1.43.67, the release these tests were read from,
        // unless the test names one (the current release's tests do).
        let release = [("sdk", "botocore==1.43.67")];
        let named = select.iter().any(|(k, _)| *k == "sdk" || *k == "current");
        let options = Options {
            select: select
                .iter()
                .filter(|(k, _)| *k != "current")
                .chain(if named { &release[..0] } else { &release[..] })
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

    pub(super) fn ok(text: &str, select: &[(&str, &str)], env: &[(&str, &str)]) -> Imported {
        run(text, select, env).unwrap()
    }

    /// A file of three profiles: `default` (standard), `batch` (adaptive,
    /// 7 attempts, a sub-property block) and `old cli` (no retry settings).
    pub(super) const FILE: &str = "\
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
