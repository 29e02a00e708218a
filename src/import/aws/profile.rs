//! The profile: which one applies (`--select profile=`, else
//! `AWS_DEFAULT_PROFILE`, else `AWS_PROFILE`, else `default`, as botocore
//! searches them), and its keys: the retry settings read, botocore's other
//! settings passed over, any other key unknown.

use super::config_file::profile_of;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

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

/// The profile that applies (`None`: no `[default]`, so only the
/// environment and botocore's defaults), its keys checked.
pub(super) fn choose_profile<'a>(
    ctx: &Context<'a>,
    root: &Node<'a>,
) -> Result<Option<Node<'a>>, ImportError> {
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
    Ok(profile.cloned())
}

#[cfg(test)]
mod tests {
    use crate::import::aws::tests::{FILE, ok, run};

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
    fn defaults_mode_makes_standard_and_no_profile_means_botocore_defaults() {
        let got = ok("[default]\ndefaults_mode = in-region\n", &[], &[]);
        assert_eq!(got.value("cap"), Some("20s"));
        let none = ok("[profile other]\nregion = eu-west-1\n", &[], &[]);
        assert_eq!(none.value("max_attempts"), Some("5"));
        assert!(none.warnings[0].contains("no [default] profile"));
    }
}
