//! `herdsim import` and `--import`, as a user runs them: the printed
//! scenario, the committed example outputs, runs from imported files
//! byte-identical to the same runs written as flags, and bad files.

use std::fs;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{succeed, usage_error, workdir};

/// The directory of example configurations and their committed imports.
const CONFIGS: &str = "scenarios/configs";

/// `herdsim ARGS` from the crate's root: its standard output.
fn herdsim(args: &[&str]) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_DEFAULT_PROFILE")
            .env_remove("AWS_RETRY_MODE")
            .env_remove("AWS_MAX_ATTEMPTS")
            .env_remove("AWS_DEFAULTS_MODE")
            .env_remove("AWS_NEW_RETRIES_2026")
            .args(args),
    )
}

#[test]
fn every_committed_import_is_what_herdsim_import_prints_now() {
    // Each `*.import.toml` opens with the command that made it; rerun, it
    // must print the same bytes (a changed reader shows in the diff).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(CONFIGS);
    let mut checked = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".import.toml") {
            continue;
        }
        let committed = fs::read_to_string(&path).unwrap();
        let command = committed.lines().next().unwrap().trim_start_matches("# ");
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        assert_eq!(args[0], "import", "{}: {command}", path.display());
        assert_eq!(
            herdsim(&args),
            committed,
            "{} is stale: rerun `{command} > {}`",
            path.display(),
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 1, "no committed import in {CONFIGS}");
}

#[test]
fn every_committed_import_runs_as_its_files_do() {
    // The printed scenario is the files' equivalent: a sweep of it and a
    // sweep importing the files give the same bytes, for every format.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = workdir("import-equivalent");
    let service = [
        "--workers",
        "4",
        "--service",
        "exp:5ms",
        "--rate",
        "600",
        "--sources",
        "4",
        "--trigger",
        "capacity:0@1s..1.5s",
        "--duration",
        "3s",
        "--seeds",
        "2",
        "-q",
    ];
    let mut checked = 0;
    for entry in fs::read_dir(root.join(CONFIGS)).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".import.toml") else {
            continue;
        };
        let committed = fs::read_to_string(&path).unwrap();
        let command = committed
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("# herdsim import ");
        // The import's arguments: its files and choices, as --import flags.
        let mut from_files = vec!["sweep".to_string()];
        let mut words = command.split_whitespace();
        while let Some(word) = words.next() {
            if word.starts_with("--") {
                from_files.push(word.to_string());
                from_files.push(words.next().unwrap().to_string());
            } else {
                from_files.extend(["--import".to_string(), word.to_string()]);
            }
        }
        let out_files = dir.join(format!("{stem}-files.csv"));
        let out_scenario = dir.join(format!("{stem}-scenario.csv"));
        succeed(
            cargo_bin_cmd!("herdsim")
                .current_dir(root)
                .args(&from_files)
                .args(service)
                .arg("--out")
                .arg(&out_files),
        );
        succeed(
            cargo_bin_cmd!("herdsim")
                .current_dir(root)
                .arg("sweep")
                .arg(&path)
                .args(service)
                .arg("--out")
                .arg(&out_scenario),
        );
        assert_eq!(
            fs::read(&out_files).unwrap(),
            fs::read(&out_scenario).unwrap(),
            "{name}"
        );
        checked += 1;
    }
    assert!(checked >= 1);
}

#[test]
fn a_run_from_an_imported_file_is_the_run_written_as_flags() {
    let service = [
        "--workers",
        "4",
        "--service",
        "exp:5ms",
        "--rate",
        "700",
        "--sources",
        "5",
        "--trigger",
        "capacity:0@1s..1.5s",
        "--duration",
        "4s",
        "--seeds",
        "3",
        "--json",
        "-q",
    ];
    let imported = herdsim(
        &[
            &[
                "run",
                "--import",
                "scenarios/configs/grpc-service-config.json",
                "--select",
                "method=checkout.v1.Checkout/GetCart",
            ][..],
            &service[..],
        ]
        .concat(),
    );
    let written = herdsim(
        &[
            &[
                "run",
                "--resource",
                "server",
                "--deadline",
                "500ms",
                "--max-attempts",
                "3",
                "--policy",
                "grpc-retry",
                "--base",
                "20ms",
                "--cap",
                "200ms",
                "--multiplier",
                "1.5",
                "--retry-on",
                "failure",
                "--budget",
                "grpc:100,ratio:0.1",
                "--fleet",
                "1",
            ][..],
            &service[..],
        ]
        .concat(),
    );
    assert_eq!(imported, written);
    // And the run is the config's: the deadline ended calls in the stall.
    let json: serde_json::Value = serde_json::from_str(&imported).unwrap();
    assert!(
        json["metrics"]["gave_up"]["mean"].as_f64().unwrap() > 0.0,
        "{imported}"
    );
}

#[test]
fn flags_and_a_scenarios_own_keys_override_what_it_imports() {
    let dir = workdir("import-override");
    let config = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(CONFIGS)
        .join("grpc-service-config.json");
    fs::copy(&config, dir.join("grpc.json")).unwrap();
    fs::write(
        dir.join("s.toml"),
        "import = \"grpc.json\"\nimport_select = [\"method=checkout.v1.Checkout/GetCart\"]\n\
         max_attempts = 2\nworkers = 2\nrate = 300\nduration = \"2s\"\n",
    )
    .unwrap();
    let sweep = |extra: &[&str], out: &str| {
        succeed(
            cargo_bin_cmd!("herdsim")
                .current_dir(&dir)
                .args(["sweep", "s.toml", "--out", out, "-q"])
                .args(extra),
        );
        fs::read_to_string(dir.join(out)).unwrap()
    };
    let rows = sweep(&[], "a.csv");
    let header: Vec<&str> = rows.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = rows.lines().nth(1).unwrap().split(',').collect();
    let field = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        field("max_attempts"),
        "2",
        "the scenario's key wins over the file's 3"
    );
    assert_eq!(field("policy"), "grpc-retry", "the file's policy is read");
    assert_eq!(field("deadline_ms"), "500");
    let flagged = sweep(&["--max-attempts", "4"], "b.csv");
    let row: Vec<&str> = flagged.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        row[header.iter().position(|h| *h == "max_attempts").unwrap()],
        "4",
        "the flag wins"
    );
}

#[test]
fn check_prints_nothing_and_bad_files_get_one_line_naming_the_file_and_field() {
    let dir = workdir("import-bad");
    let out = cargo_bin_cmd!("herdsim")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "import",
            "--check",
            "scenarios/configs/grpc-service-config.json",
            "--select",
            "method=checkout.v1.Checkout/GetCart",
        ])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let cases = [
        (
            write("truncated.json", "{\"methodConfig\": ["),
            "truncated.json: not a configuration herdsim reads (invalid JSON",
        ),
        (
            write(
                "type.json",
                r#"{"methodConfig": [{"name": [{}], "timeout": 2}]}"#,
            ),
            "type.json: methodConfig[0].timeout: expected a string, found the number 2",
        ),
        (
            write(
                "unit.json",
                r#"{"methodConfig": [{"name": [{}], "timeout": "2000ms"}]}"#,
            ),
            "unit.json: methodConfig[0].timeout: \"2000ms\" is not a protobuf JSON duration",
        ),
        (
            write(
                "range.json",
                r#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 0.1}}"#,
            ),
            "range.json: retryThrottling.maxTokens: out of range: gRPC accepts above 0, at most 1000",
        ),
        (
            write(
                "unknown.json",
                r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"], "jitter": 0.2}}]}"#,
            ),
            "unknown.json: methodConfig[0].retryPolicy.jitter: unknown field",
        ),
    ];
    for (file, says) in cases {
        let err = usage_error(&["import", &file]);
        assert!(err.contains(says), "{err}\nwanted: {says}");
        // The same file refused where a run imports it, before any work.
        let err = usage_error(&["run", "--import", &file]);
        assert!(err.contains(says), "{err}");
    }
    let err = usage_error(&["import", &dir.join("missing.json").display().to_string()]);
    assert!(err.contains("missing.json"), "{err}");
    let err = usage_error(&["run", "--select", "colour=red"]);
    assert!(
        err.contains("--select") && err.contains("unknown kind 'colour'"),
        "{err}"
    );
    // --warn-unknown passes over the unknown field, saying so.
    let unknown = dir.join("unknown.json").display().to_string();
    let out = cargo_bin_cmd!("herdsim")
        .args(["import", "--warn-unknown", &unknown])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("retryPolicy.jitter: unknown field"));
}

/// The server model's request deadline (gRPC's `timeout`) and `retry_on`,
/// which the importers set, as plain flags.
#[test]
fn a_request_deadline_ends_its_retries_and_retry_on_chooses_what_is_retried() {
    let metrics = |extra: &[&str]| {
        let json = crate::common::server_json(
            &[
                &[
                    "--workers",
                    "1",
                    "--service",
                    "const:10ms",
                    "--rate",
                    "50",
                    "--trigger",
                    "capacity:0@1s..3s",
                    "--timeout",
                    "100ms",
                    "--duration",
                    "4s",
                ][..],
                extra,
            ]
            .concat(),
        );
        let m = |k: &str| crate::common::mean(&json, k);
        (
            m("requests"),
            m("attempts"),
            m("timeouts"),
            m("gave_up"),
            m("successes"),
        )
    };
    // Attempts time out after 100 ms and retry 10 ms later, so a request
    // caught by the 2 s stall sends attempts at 0, 110 and 220 ms; the third
    // is cut at the 300 ms deadline: three attempts and three timeouts for
    // each request given up, none sent after its deadline.
    let (requests, attempts, timeouts, gave_up, successes) = metrics(&[
        "--deadline",
        "300ms",
        "--policy",
        "constant",
        "--base",
        "10ms",
    ]);
    assert!(gave_up > 100.0, "the stall gave requests up: {gave_up}");
    assert_eq!(requests, successes + gave_up);
    assert_eq!(attempts, successes + 3.0 * gave_up);
    assert_eq!(timeouts, 3.0 * gave_up);
    // Not retrying timeouts: one attempt each.
    let (requests, attempts, timeouts, gave_up, _) = metrics(&["--retry-on", "failure+rejected"]);
    assert_eq!(attempts, requests);
    assert_eq!(timeouts, gave_up);
    let err = usage_error(&["run", "--resource", "server", "--retry-on", "5xx"]);
    assert!(
        err.contains("--retry-on") && err.contains("failure, rejected or timeout"),
        "{err}"
    );
    let err = usage_error(&[
        "run",
        "--resource",
        "server",
        "--deadline",
        "1s",
        "--timeout-noticed",
        "reply",
        "--timeout",
        "100ms",
    ]);
    assert!(
        err.contains("timeout_noticed") || err.contains("--timeout-noticed"),
        "{err}"
    );
}
