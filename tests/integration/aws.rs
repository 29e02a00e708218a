//! The AWS shared config file as herdsim runs it: a run from a profile of
//! the example file (and from a scenario importing it) is the run written as
//! flags, the environment is read over the file as botocore reads it, and a
//! bad file or variable is one line naming its field, exit 2.

use std::fs;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{succeed, workdir};

const CONFIG: &str = "scenarios/configs/aws-config";
/// The botocore release whose 2.0 behaviour these tests compare with
/// flags (the current one, 1.44, runs 2026: its tests name none).
const OLD: &str = "sdk=botocore==1.43.67";

/// The AWS variables the reader reads, cleared so the tester's own
/// environment cannot change a run.
pub(crate) const VARS: [&str; 6] = [
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "AWS_DEFAULTS_MODE",
    "AWS_NEW_RETRIES_2026",
];

/// `herdsim ARGS` from the crate's root with `env` as the only AWS
/// variables: its standard output.
fn herdsim(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = cargo_bin_cmd!("herdsim");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args(args);
    for var in VARS {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    succeed(&mut cmd)
}

/// `herdsim ARGS` expected to refuse: exit 2, one line, returned.
fn refused(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = cargo_bin_cmd!("herdsim");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args(args);
    for var in VARS {
        cmd.env_remove(var);
    }
    let out = cmd.envs(env.iter().copied()).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed results");
    assert_eq!(err.lines().count(), 1, "{args:?} is not one line:\n{err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

const SERVICE: [&str; 15] = [
    "--workers",
    "8",
    "--service",
    "exp:10ms",
    "--rate",
    "600",
    "--sources",
    "20",
    "--trigger",
    "capacity:0@1s..2s",
    "--duration",
    "4s",
    "--seeds",
    "3",
    "-q",
];

/// botocore's standard mode, 2.0 behaviour, as herdsim flags.
const STANDARD: [&str; 14] = [
    "--resource",
    "server",
    "--retry-on",
    "failure+rejected+timeout",
    "--policy",
    "full",
    "--base",
    "1s",
    "--cap",
    "20s",
    "--budget",
    "tokens:500,cost:5,refund:1,timeout-cost:10",
    "--max-attempts",
    "3",
];

#[test]
fn a_run_from_an_aws_profile_is_the_run_written_as_flags() {
    let run = |head: &[&str], env: &[(&str, &str)]| {
        herdsim(&[head, &SERVICE[..], &["--json"][..]].concat(), env)
    };
    // [profile api]: adaptive, 5 attempts (the file), 2.0 behaviour
    // (botocore 1.43's): standard's backoff and quota plus CUBIC.
    let imported = run(
        &[
            "run",
            "--import",
            CONFIG,
            "--select",
            "profile=api",
            "--select",
            OLD,
        ],
        &[],
    );
    let mut written: Vec<&str> = vec!["run"];
    written.extend(&STANDARD[..12]);
    written.extend([
        "--max-attempts",
        "5",
        "--throttle",
        "aws-adaptive:0.4,beta:0.7",
    ]);
    assert_eq!(imported, run(&written, &[]));
    // The profile chosen by AWS_PROFILE is the same run.
    assert_eq!(
        imported,
        run(
            &["run", "--import", CONFIG, "--select", OLD],
            &[("AWS_PROFILE", "api")]
        )
    );
    // [default] with AWS_MAX_ATTEMPTS over its max_attempts 3: env wins.
    let env = run(
        &["run", "--import", CONFIG, "--select", OLD],
        &[("AWS_MAX_ATTEMPTS", "4")],
    );
    let mut four: Vec<&str> = vec!["run"];
    four.extend(&STANDARD[..12]);
    four.extend(["--max-attempts", "4"]);
    assert_eq!(env, run(&four, &[]));
    assert_ne!(env, imported);
}

#[test]
fn a_scenario_importing_the_file_runs_as_the_flags_do() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = workdir("aws-scenario");
    let scenario = dir.join("aws.toml");
    fs::write(
        &scenario,
        format!(
            "import = [{:?}]\nimport_select = [\"profile=batch\", \"{OLD}\"]\n",
            root.join(CONFIG).display().to_string()
        ),
    )
    .unwrap();
    let from_scenario = dir.join("scenario.csv");
    let from_flags = dir.join("flags.csv");
    let scenario_path = scenario.display().to_string();
    let out = from_scenario.display().to_string();
    herdsim(
        &[
            &["sweep", &scenario_path][..],
            &SERVICE[..],
            &["--out", &out][..],
        ]
        .concat(),
        &[],
    );
    let mut flags: Vec<&str> = vec!["sweep"];
    flags.extend(&STANDARD[..12]);
    flags.extend(["--max-attempts", "10"]);
    let out = from_flags.display().to_string();
    herdsim(
        &[&flags[..], &SERVICE[..], &["--out", &out][..]].concat(),
        &[],
    );
    assert_eq!(
        fs::read(&from_scenario).unwrap(),
        fs::read(&from_flags).unwrap()
    );
}

/// A bad file's name, text, AWS variables and the message expected.
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn bad_aws_files_and_variables_are_one_line_naming_the_field() {
    let dir = workdir("aws-bad");
    let cases: [Case; 7] = [
        (
            "mode",
            "[default]\nretry_mode = fast\n",
            &[],
            "[default].retry_mode: retry_mode 'fast': expected legacy, standard or adaptive",
        ),
        (
            "zero",
            "[default]\nmax_attempts = 0\n",
            &[],
            "[default].max_attempts: max_attempts 0: botocore refuses it",
        ),
        (
            "words",
            "[default]\nmax_attempts = three\n",
            &[],
            "[default].max_attempts: max_attempts 'three': expected a whole number",
        ),
        (
            "env",
            "[default]\n",
            &[("AWS_RETRY_MODE", "Adaptive")],
            "$AWS_RETRY_MODE (environment): retry_mode 'Adaptive'",
        ),
        (
            "typo",
            "[default]\nretry_mod = standard\n",
            &[],
            "[default].retry_mod: unknown field",
        ),
        (
            "ini",
            "[default]\nretry_mode standard\n",
            &[],
            "invalid INI (AWS config): line 2: 'retry_mode standard' is not KEY = VALUE",
        ),
        (
            "profile",
            "[default]\n",
            &[("AWS_PROFILE", "prod")],
            "$AWS_PROFILE: no profile 'prod'",
        ),
    ];
    for (name, text, env, expected) in cases {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        let file = path.display().to_string();
        let err = refused(&["import", &file], env);
        assert!(
            err.starts_with(&format!("error: {file}: ")) || err.contains(&format!("{file}: ")),
            "{name}: {err}"
        );
        assert!(err.contains(expected), "{name}: {err}");
    }
    // A behaviour botocore has no name for, and a bad throttling base.
    let err = refused(&["import", CONFIG, "--select", "behaviour=2.1"], &[]);
    assert!(
        err.contains("--select behaviour: '2.1': expected 2.0 or 2026"),
        "{err}"
    );
    let mut flags: Vec<&str> = vec!["run"];
    flags.extend(&STANDARD_2026[..]);
    flags.extend(["--throttle-base", "0s"]);
    let err = refused(&[&flags[..], &SERVICE[..]].concat(), &[]);
    assert!(err.contains("--throttle-base"), "{err}");
    // x-amz-retry-after needs a hint the server model's replies do not carry.
    let mut flags: Vec<&str> = vec!["run"];
    flags.extend(&STANDARD_2026[..]);
    flags.extend(["--retry-after", "aws"]);
    let err = refused(&[&flags[..], &SERVICE[..]].concat(), &[]);
    assert!(
        err.contains("retry-after") && err.contains("slot resource only"),
        "{err}"
    );
    let err = refused(&["run", "--retry-after", "amazon"], &[]);
    assert!(err.contains("ignore, floor, floor+jitter, aws"), "{err}");
}

/// botocore's standard mode under the 2026 behaviour, as herdsim flags.
const STANDARD_2026: [&str; 16] = [
    "--resource",
    "server",
    "--retry-on",
    "failure+rejected+timeout",
    "--policy",
    "aws-2026",
    "--base",
    "50ms",
    "--throttle-base",
    "1s",
    "--cap",
    "20s",
    "--budget",
    "tokens:500,cost:14,refund:1,throttle-cost:5",
    "--max-attempts",
    "3",
];

#[test]
fn a_2026_run_from_an_aws_profile_is_the_run_written_as_flags() {
    // A queue of 20 places, so the outage's backlog is refused as throttles.
    let service = [&SERVICE[..], &["--queue-limit", "20", "--json"][..]].concat();
    let run = |head: &[&str], env: &[(&str, &str)]| herdsim(&[head, &service[..]].concat(), env);
    // [profile api]: adaptive, 5 attempts, under AWS_NEW_RETRIES_2026.
    let imported = run(
        &["run", "--import", CONFIG, "--select", "profile=api"],
        &[("AWS_NEW_RETRIES_2026", "true")],
    );
    let mut written: Vec<&str> = vec!["run"];
    written.extend(&STANDARD_2026[..14]);
    written.extend([
        "--max-attempts",
        "5",
        "--throttle",
        "aws-adaptive:0.4,beta:0.7",
    ]);
    assert_eq!(imported, run(&written, &[]));
    assert_eq!(
        imported,
        run(
            &[
                "run",
                "--import",
                CONFIG,
                "--select",
                "profile=api",
                "--select",
                "behaviour=2026"
            ],
            &[]
        )
    );
    // DynamoDB: 25 ms, and [default]'s max_attempts 3 (set, so not 4).
    let ddb = run(
        &[
            "run",
            "--import",
            CONFIG,
            "--select",
            "service=dynamodb",
            "--select",
            "behaviour=2026",
        ],
        &[],
    );
    let mut written: Vec<&str> = vec!["run"];
    written.extend(&STANDARD_2026[..6]);
    written.extend(["--base", "25ms"]);
    written.extend(&STANDARD_2026[8..]);
    assert_eq!(ddb, run(&written, &[]));
    // The throttles' base is the policy's after a rejection: it moves this
    // run, and no run without rejections.
    let mut slow: Vec<&str> = vec!["run"];
    slow.extend(&STANDARD_2026[..8]);
    slow.extend(["--throttle-base", "3s"]);
    slow.extend(&STANDARD_2026[10..]);
    assert_ne!(run(&slow, &[]), run(&STANDARD_2026_RUN, &[]));
    let unbounded = |args: &[&str]| herdsim(&[args, &SERVICE[..], &["--json"][..]].concat(), &[]);
    assert_eq!(unbounded(&STANDARD_2026_RUN), unbounded(&slow));
}

/// `run` and [`STANDARD_2026`].
const STANDARD_2026_RUN: [&str; 17] = [
    "run",
    "--resource",
    "server",
    "--retry-on",
    "failure+rejected+timeout",
    "--policy",
    "aws-2026",
    "--base",
    "50ms",
    "--throttle-base",
    "1s",
    "--cap",
    "20s",
    "--budget",
    "tokens:500,cost:14,refund:1,throttle-cost:5",
    "--max-attempts",
    "3",
];
