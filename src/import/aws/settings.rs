//! The retry settings, the environment's over the profile's
//! (`create_config_chain`): the behaviour (`--select behaviour=`,
//! `AWS_NEW_RETRIES_2026`), `retry_mode` and `defaults_mode`, the service,
//! and `max_attempts`, each checked as botocore checks it and defaulted as
//! botocore defaults it.

use super::{Behaviour, Resolved, bad, lookup};
use crate::import::tree::Node;
use crate::import::{Context, ImportError};
use crate::spec::params::param;

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

/// botocore's retry generations, by release line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BotocoreLine {
    /// 1.43 and before: the 2.0 behaviour unless `AWS_NEW_RETRIES_2026`.
    V143,
    /// 1.44 (10 Nov 2026) and after: the 2026 behaviour always, `standard`
    /// the default mode, `AWS_NEW_RETRIES_2026` no longer read.
    V144,
}

/// The release botocore is assumed to be when the user names none.
pub(super) const CURRENT_BOTOCORE: &str = "1.44";

/// The botocore line `--select sdk=botocore==VERSION` names, or the
/// current one; with why, in words.
fn sdk_line(ctx: &Context<'_>) -> Result<(BotocoreLine, String), ImportError> {
    let Some(text) = ctx.selection("sdk") else {
        // A behaviour named alone says enough: 2.0 is the 1.43 line's only,
        // and under 2026 the lines default alike.
        match ctx.selection("behaviour") {
            Some("2.0") => {
                return Ok((
                    BotocoreLine::V143,
                    "the 1.43 line, the last to run it".to_string(),
                ));
            }
            Some(_) => {
                return Ok((
                    BotocoreLine::V144,
                    format!("botocore {CURRENT_BOTOCORE} or 1.43 with its switch on"),
                ));
            }
            None => {}
        }
        ctx.assumed(format!(
            "assumed botocore {CURRENT_BOTOCORE}, the current release (the 2026 retry behaviour); \
             --select sdk=botocore==1.43.67 for the 1.43 line"
        ));
        return Ok((
            BotocoreLine::V144,
            format!(
                "assumed botocore {CURRENT_BOTOCORE}, the current release; --select \
                 sdk=botocore==1.43.67 for the 1.43 line"
            ),
        ));
    };
    let refuse = || {
        ctx.error_at(
            "--select sdk",
            format!(
                "'{text}': expected botocore==VERSION, such as botocore==1.43.67 or \
                 botocore==1.44.2 (the other SDKs are not read by version)"
            ),
        )
    };
    let version = text.strip_prefix("botocore==").ok_or_else(refuse)?;
    let mut parts = version.split('.');
    let (Some(Ok(major)), Some(Ok(minor))) = (
        parts.next().map(str::parse::<u32>),
        parts.next().map(str::parse::<u32>),
    ) else {
        return Err(refuse());
    };
    if parts.any(|p| p.parse::<u32>().is_err()) {
        return Err(refuse());
    }
    let line = if (major, minor) >= (1, 44) {
        BotocoreLine::V144
    } else {
        BotocoreLine::V143
    };
    Ok((line, format!("--select sdk={text}")))
}

/// Resolves the settings for `profile` (and the environment), in the order
/// botocore reads them.
pub(super) fn resolve(
    ctx: &Context<'_>,
    profile: Option<&Node<'_>>,
) -> Result<Resolved, ImportError> {
    let line = sdk_line(ctx)?;
    let behaviour = match (ctx.selection("behaviour"), line) {
        (Some("2.0"), (BotocoreLine::V144, _)) => {
            return Err(ctx.error_at(
                "--select behaviour",
                "'2.0': botocore 1.44 always runs the 2026 behaviour; name an older SDK \
                 (--select sdk=botocore==1.43.67) for 2.0"
                    .to_string(),
            ));
        }
        (Some("2.0"), _) => (Behaviour::V2, "--select behaviour=2.0".to_string()),
        (Some("2026"), _) => (Behaviour::V2026, "--select behaviour=2026".to_string()),
        (Some(other), _) => {
            return Err(ctx.error_at(
                "--select behaviour",
                format!("'{other}': expected 2.0 or 2026"),
            ));
        }
        (None, (BotocoreLine::V144, why)) => (
            Behaviour::V2026,
            format!("{why}; 1.44 always runs 2026 and reads no AWS_NEW_RETRIES_2026"),
        ),
        (None, (BotocoreLine::V143, why)) => match ctx.env("AWS_NEW_RETRIES_2026") {
            Some(v) if v.to_lowercase() == "true" => (
                Behaviour::V2026,
                format!("{why}, $AWS_NEW_RETRIES_2026={v} (lowercased, true)"),
            ),
            Some(v) => (
                Behaviour::V2,
                format!("{why}, $AWS_NEW_RETRIES_2026={v} (not true, lowercased)"),
            ),
            None => (
                Behaviour::V2,
                format!("{why}; the 1.43 line's default without $AWS_NEW_RETRIES_2026"),
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
    Ok(Resolved {
        behaviour,
        mode,
        mode_from,
        mode_rule,
        dynamodb,
        dynamodb_2026,
        attempts,
        attempts_from,
        attempts_rule,
    })
}

#[cfg(test)]
mod tests {
    use crate::import::aws::tests::{FILE, ok, run};

    /// `("current", "")`: no `--select sdk`, the current release assumed.
    const CURRENT: (&str, &str) = ("current", "");

    #[test]
    fn without_a_release_the_current_botocore_runs_the_file() {
        // botocore 1.44: the 2026 behaviour and standard mode by default,
        // AWS_NEW_RETRIES_2026 not read; the assumption is said.
        let got = ok(
            "[default]\n",
            &[CURRENT],
            &[("AWS_NEW_RETRIES_2026", "false")],
        );
        assert_eq!(got.value("policy"), Some("aws-2026"));
        assert_eq!(got.value("max_attempts"), Some("3"));
        assert_eq!(
            got.value("budget"),
            Some("tokens:500,cost:14,refund:1,throttle-cost:5")
        );
        assert_eq!(got.assumptions.len(), 1, "{:?}", got.assumptions);
        assert!(
            got.assumptions[0].starts_with("config: assumed botocore 1.44, the current release"),
            "{:?}",
            got.assumptions
        );
        assert!(
            got.files[0].2.contains("reads no AWS_NEW_RETRIES_2026"),
            "{:?}",
            got.files
        );
        // Named: the 1.44 line the same, without the note; the 1.43 line
        // as before, its switch read.
        let named = ok("[default]\n", &[("sdk", "botocore==1.44.2")], &[]);
        assert_eq!(named.value("policy"), Some("aws-2026"));
        assert!(named.assumptions.is_empty());
        let old = ok("[default]\n", &[("sdk", "botocore==1.43")], &[]);
        assert_eq!(old.value("policy"), Some("full"));
        assert_eq!(old.value("max_attempts"), Some("5"));
        let switched = ok(
            "[default]\nretry_mode = standard\n",
            &[("sdk", "botocore==1.43.67")],
            &[("AWS_NEW_RETRIES_2026", "true")],
        );
        assert_eq!(switched.value("policy"), Some("aws-2026"));
        // 1.44 has no 2.0 behaviour; other names are refused.
        let err = run(
            "[default]\n",
            &[("sdk", "botocore==1.44.2"), ("behaviour", "2.0")],
            &[],
        )
        .unwrap_err();
        assert!(
            err.contains("botocore 1.44 always runs the 2026 behaviour"),
            "{err}"
        );
        for bad in [
            "boto3==1.40",
            "botocore==1",
            "botocore==1.x",
            "botocore==1.44.2.b",
        ] {
            let err = run("[default]\n", &[("sdk", bad)], &[]).unwrap_err();
            assert!(err.contains("--select sdk: '"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_2026_switch_is_lowercased_true_and_select_overrides_it() {
        // _resolve_new_retries: os.environ value .lower() == 'true'.
        for on in ["true", "TRUE", "True"] {
            let got = ok(FILE, &[], &[("AWS_NEW_RETRIES_2026", on)]);
            assert_eq!(got.value("policy"), Some("aws-2026"), "{on}");
            assert!(
                got.files[0].2.contains(
                    "behaviour 2026 (--select sdk=botocore==1.43.67, $AWS_NEW_RETRIES_2026"
                ),
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
}
