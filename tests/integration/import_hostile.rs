//! `herdsim import` and `--import` under hostile files and choices (issue
//! 56): keys given twice, repeated or ambiguous selections, numbers the
//! source project cannot read, nesting deep enough to overflow a stack,
//! numbers that are not finite, and values holding a newline. Each is
//! refused in one line naming the file (or flag) and the field, exit 2.

use std::fs;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{succeed, usage_error, workdir};

/// Writes `text` to `dir/name`, returning its path as an argument.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `herdsim ARGS` with `env` set and no other AWS variable: its exit code
/// and standard error.
fn with_env(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = cargo_bin_cmd!("herdsim");
    for var in crate::aws::VARS {
        command.env_remove(var);
    }
    let out = command
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

const RETRY: &str = r#""initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]"#;

#[test]
fn import_refuses_a_polly_key_given_twice_as_dotnet_does_case_ignored() {
    let dir = workdir("import-polly-twice");
    for (name, text, path) in [
        (
            "twice.json",
            r#"{"Retry": {"MaxRetryAttempts": 3, "MaxRetryAttempts": 9, "Delay": "00:00:01"}}"#,
            "Retry.MaxRetryAttempts",
        ),
        (
            "case.json",
            r#"{"Retry": {"MaxRetryAttempts": 3, "maxretryattempts": 9, "Delay": "00:00:01"}}"#,
            "Retry.maxretryattempts",
        ),
    ] {
        let file = write(&dir, name, text);
        let err = usage_error(&["import", &file]);
        assert!(
            err.contains(&format!("{name}: {path}: given twice"))
                && err.contains("A duplicate key 'Retry:MaxRetryAttempts' was found"),
            "{err}"
        );
    }
}

#[test]
fn import_refuses_two_selections_of_one_kind_naming_both() {
    let dir = workdir("import-select-twice");
    let text = format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "a", "method": "x"}}], "retryPolicy": {{"maxAttempts": 2, {RETRY}}}}},
            {{"name": [{{"service": "b", "method": "y"}}], "timeout": "2000ms"}}]}}"#
    );
    let grpc = write(&dir, "grpc.json", &text);
    let err = usage_error(&[
        "import",
        &grpc,
        "--select",
        "method=a/x",
        "--select",
        "method=b/y",
    ]);
    assert!(
        err.contains("--select: method=a/x and method=b/y both choose the method"),
        "{err}"
    );
    // A scenario's choice twice is refused at its line.
    write(
        &dir,
        "twice.toml",
        "import = \"grpc.json\"\nimport_select = [\"method=a/x\", \"method=b/y\"]\n",
    );
    let err = usage_error(&["run", &dir.join("twice.toml").display().to_string()]);
    assert!(err.contains("method=a/x and method=b/y"), "{err}");
    // A flag's choice replaces the scenario's of its kind (flags override
    // the scenario): b/y is read, and its bad timeout refused.
    write(
        &dir,
        "s.toml",
        "import = \"grpc.json\"\nimport_select = [\"method=a/x\"]\nduration = \"1s\"\n",
    );
    let err = usage_error(&[
        "run",
        &dir.join("s.toml").display().to_string(),
        "--select",
        "method=b/y",
    ]);
    assert!(err.contains("methodConfig[1].timeout"), "{err}");
}

#[test]
fn import_refuses_a_name_two_namespaces_share_and_takes_namespace_slash_name() {
    let dir = workdir("import-namespaces");
    let item = |namespace: &str, ratio: &str| {
        format!(
            "- apiVersion: linkerd.io/v1alpha2\n  kind: ServiceProfile\n  metadata:\n    \
             name: orders\n    namespace: {namespace}\n  spec:\n    retryBudget:\n      \
             retryRatio: {ratio}\n      minRetriesPerSecond: 10\n      ttl: 10s\n"
        )
    };
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}{}",
        item("shop", "0.2"),
        item("staging", "0.5")
    );
    let file = write(&dir, "profiles.yaml", &list);
    let err = usage_error(&["import", &file, "--select", "service-profile=orders"]);
    assert!(
        err.contains("'orders' names 2 profiles (namespaces shop, staging)")
            && err.contains("shop/orders, staging/orders"),
        "{err}"
    );
    let out = succeed(cargo_bin_cmd!("herdsim").args([
        "import",
        &file,
        "--select",
        "service-profile=staging/orders",
    ]));
    // The second item, staging's, is the one read.
    assert!(out.contains("profiles.yaml: items[1].spec\n"), "{out}");
    let err = usage_error(&["import", &file, "--select", "service-profile=prod/orders"]);
    assert!(
        err.contains("no profile 'prod/orders': the file has shop/orders, staging/orders"),
        "{err}"
    );
}

#[test]
fn import_reads_grpc_max_attempts_as_grpc_go_reads_a_go_int() {
    let dir = workdir("import-grpc-int");
    for (written, why) in [
        ("3.0", "has a fraction or an exponent"),
        ("1E1", "has a fraction or an exponent"),
        ("9223372036854775808", "overflows a Go int"),
    ] {
        let file = write(
            &dir,
            "grpc.json",
            &format!(
                r#"{{"methodConfig": [{{"name": [{{}}], "retryPolicy": {{"maxAttempts": {written}, {RETRY}}}}}]}}"#
            ),
        );
        let err = usage_error(&["import", &file]);
        assert!(
            err.contains("methodConfig[0].retryPolicy.maxAttempts")
                && err.contains(why)
                && err.contains("grpc-go cannot parse the service config and uses none of it"),
            "{written}: {err}"
        );
    }
}

#[test]
fn import_refuses_nesting_too_deep_in_every_way_in_cleanly() {
    let dir = workdir("import-deep");
    let deep = write(&dir, "deep.yaml", &("- ".repeat(20_000) + "x\n"));
    write(&dir, "s.toml", "import = \"deep.yaml\"\n");
    let scenario = dir.join("s.toml").display().to_string();
    for args in [
        vec!["import", deep.as_str()],
        vec!["run", "--import", deep.as_str()],
        vec!["run", scenario.as_str()],
    ] {
        let err = usage_error(&args);
        assert!(
            err.contains("deep.yaml: line 1: lists and mappings nested more than 128 deep")
                && err.contains("at most 128"),
            "{args:?}: {err}"
        );
    }
    // Flow nesting too, in JSON.
    let flow = write(&dir, "deep.json", &"[".repeat(50_000));
    let err = usage_error(&["import", &flow]);
    assert!(err.contains("nested more than 128 deep"), "{err}");
}

#[test]
fn import_names_the_field_and_line_of_a_number_that_is_not_finite() {
    let dir = workdir("import-non-finite");
    let profile = |ratio: &str| {
        format!(
            "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata:\n  name: a\n\
             spec:\n  retryBudget:\n    retryRatio: {ratio}\n    minRetriesPerSecond: 10\n    \
             ttl: 10s\n"
        )
    };
    for written in [".nan", ".inf", "1e400"] {
        let file = write(&dir, "profile.yaml", &profile(written));
        let err = usage_error(&["import", &file]);
        assert!(
            err.contains(&format!(
                "line 7: spec.retryBudget.retryRatio: '{written}' is not a finite number"
            )),
            "{err}"
        );
    }
    // resilience4j's YAML is not read again as .properties.
    let file = write(
        &dir,
        "application.yml",
        "resilience4j:\n  retry:\n    instances:\n      backendA:\n        maxAttempts: .inf\n",
    );
    let err = usage_error(&["import", &file]);
    assert!(
        err.contains("line 5: resilience4j.retry.instances.backendA.maxAttempts: '.inf'"),
        "{err}"
    );
}

#[test]
fn import_gives_the_aws_readers_reason_for_a_malformed_profile_header() {
    let dir = workdir("import-aws-header");
    for (name, header) in [("a-b", "[profile a b]"), ("bare", "[profile]")] {
        let file = write(&dir, name, &format!("{header}\nmax_attempts = 3\n"));
        let err = usage_error(&["import", &file]);
        assert!(
            err.contains(&format!(
                "invalid INI (AWS config): line 1: {header} names no profile"
            )) && !err.contains("invalid JSON"),
            "{err}"
        );
    }
}

#[test]
fn import_quotes_a_number_past_two_to_the_64_as_written() {
    let dir = workdir("import-aws-huge");
    let huge = "99999999999999999999999";
    let file = write(
        &dir,
        "config",
        &format!("[default]\nmax_attempts = {huge}\n"),
    );
    let err = usage_error(&["import", &file]);
    assert!(
        err.contains(&format!(
            "[default].max_attempts: gives max_attempts = {huge}"
        )),
        "{err}"
    );
    let file = write(&dir, "plain", "[default]\nretry_mode = standard\n");
    let (code, err) = with_env(&["import", &file], &[("AWS_MAX_ATTEMPTS", huge)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "$AWS_MAX_ATTEMPTS (environment): gives max_attempts = {huge}"
        )),
        "{err}"
    );
}

#[test]
fn import_says_a_linkerd_duration_overflows_not_that_it_is_negative() {
    let dir = workdir("import-linkerd-overflow");
    let file = write(
        &dir,
        "profile.yaml",
        "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata:\n  name: a\n\
         spec:\n  retryBudget:\n    retryRatio: 0.2\n    minRetriesPerSecond: 10\n    \
         ttl: 2562048h\n",
    );
    let err = usage_error(&["import", &file]);
    assert!(
        err.contains("spec.retryBudget.ttl: \"2562048h\": overflows Go's duration")
            && err.contains("at most 2562047h47m16.854775807s")
            && !err.contains("negative"),
        "{err}"
    );
}

#[test]
fn import_errors_quoting_a_value_with_a_newline_stay_one_line() {
    let dir = workdir("import-newline");
    // A continued INI value holds a newline; so may a JSON string.
    let aws = write(&dir, "config", "[default]\nretry_mode = standard\n  fast\n");
    let err = usage_error(&["import", &aws]);
    assert!(err.contains("'standard\\nfast'"), "{err}");
    let grpc = write(
        &dir,
        "grpc.json",
        r#"{"methodConfig": [{"name": [{}], "timeout": "1\ns"}]}"#,
    );
    let err = usage_error(&["import", &grpc]);
    assert!(err.contains("\"1\\ns\""), "{err}");
    // The file's own name is escaped too.
    let odd = write(&dir, "a\nb.json", "{");
    let err = usage_error(&["import", &odd]);
    assert!(err.contains("a\\nb.json"), "{err}");
}
