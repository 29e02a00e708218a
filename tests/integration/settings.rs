//! Settings as users write them: `herdsim run FILE.toml` for a one-point
//! scenario, a lognormal service time given by its median and a quantile,
//! and resilience4j's TimeLimiter read as the timeout of each attempt.

use std::fs;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{succeed, usage_error, without, workdir};

/// `herdsim ARGS` from the repository's root: its standard output.
fn herdsim(args: &[&str]) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args),
    )
}

/// A scenario file named `name` in `dir` holding `text`; its path.
fn scenario(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.to_string_lossy().to_string()
}

/// A server under an outage, with a service time given by its p99.
const ONE_POINT: &str = "\
name = \"one-point\"
resource = \"server\"
rate = 500
workers = 4
service = \"lognormal:5ms@p99=20ms\"
trigger = \"outage@1s..1.5s\"
duration = \"5s\"
patience = \"2s\"
timeout = \"100ms\"
policy = \"full\"
base = \"20ms\"
seeds = 2
seed = 7
";

/// The same point as flags.
const AS_FLAGS: [&str; 26] = [
    "--resource",
    "server",
    "--rate",
    "500",
    "--workers",
    "4",
    "--service",
    "lognormal:5ms@p99=20ms",
    "--trigger",
    "outage@1s..1.5s",
    "--duration",
    "5s",
    "--patience",
    "2s",
    "--timeout",
    "100ms",
    "--policy",
    "full",
    "--base",
    "20ms",
    "--seeds",
    "2",
    "--seed",
    "7",
    "-q",
    "--json",
];

#[test]
fn a_one_point_scenario_runs_as_its_flags_byte_for_byte() {
    let dir = workdir("run-scenario");
    let file = scenario(&dir, "one.toml", ONE_POINT);
    let flags = herdsim(&[["run"].as_slice(), &AS_FLAGS].concat());
    assert_eq!(herdsim(&["run", &file, "-q", "--json"]), flags);
    // The table too, whose header shows the service time in both forms:
    // σ = ln(20/5)/z_0.99 = 1.3863/2.3263 = 0.596.
    let table = herdsim(&["run", &file, "-q"]);
    assert_eq!(
        table,
        herdsim(&[["run"].as_slice(), &AS_FLAGS[..AS_FLAGS.len() - 1]].concat())
    );
    assert!(
        table.contains("service lognormal:5ms@p99=20ms (median 5ms, σ 0.596)"),
        "{table}"
    );
    // Flags replace the file's values, seeds included.
    let mut changed = AS_FLAGS.to_vec();
    changed[3] = "400";
    changed[21] = "3";
    assert_eq!(
        herdsim(&[
            "run", &file, "-q", "--json", "--rate", "400", "--seeds", "3"
        ]),
        herdsim(&[["run"].as_slice(), &changed].concat())
    );
}

#[test]
fn a_scenario_of_several_points_is_refused_by_run_naming_the_key() {
    let dir = workdir("run-scenario-grid");
    let grid = ONE_POINT.replace("policy = \"full\"", "policy = [\"none\", \"full\"]");
    let file = scenario(&dir, "grid.toml", &grid);
    let err = usage_error(&["run", &file]);
    assert!(
        err.contains(&format!(
            "{file}:10: key 'policy': 2 values (none, full): run takes one point"
        )) && err.contains("herdsim sweep or herdsim compare")
            && err.contains("--policy V"),
        "{err}"
    );
    // A flag gives the key one value: then it runs.
    let flags = herdsim(&[["run"].as_slice(), &AS_FLAGS].concat());
    assert_eq!(
        herdsim(&["run", &file, "--policy", "full", "-q", "--json"]),
        flags
    );
    let variants =
        format!("{ONE_POINT}[[variant]]\nqueue_limit = 10\n[[variant]]\nqueue_limit = 20\n");
    let file = scenario(&dir, "variants.toml", &variants);
    let err = usage_error(&["run", &file]);
    assert!(
        err.contains("the scenario has 2 [[variant]] tables: run takes one point"),
        "{err}"
    );
}

#[test]
fn a_scenario_run_takes_its_imports_and_names_its_bad_values() {
    let dir = workdir("run-scenario-import");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = root.join("scenarios/configs/resilience4j-application.yml");
    let with_import = format!(
        "import = [\"{}\"]\n{}",
        config.display(),
        ONE_POINT
            .replace("timeout = \"100ms\"\n", "")
            .replace("policy = \"full\"\nbase = \"20ms\"\n", "")
    );
    let file = scenario(&dir, "imported.toml", &with_import);
    let config = config.to_string_lossy().to_string();
    // The point as flags, the imported file's timeout and policy for the
    // scenario's own.
    let flags = [
        ["run", "--import", &config].as_slice(),
        &without(&AS_FLAGS, &["--timeout", "--policy", "--base"]),
    ]
    .concat();
    assert_eq!(herdsim(&["run", &file, "-q", "--json"]), herdsim(&flags));
    // A quantile not above the median: one line naming where it was given.
    let bad = ONE_POINT.replace("p99=20ms", "p99=5ms");
    let file = scenario(&dir, "bad.toml", &bad);
    let err = usage_error(&["run", &file]);
    assert!(
        err.contains("key 'service'")
            && err.contains("the p99 (5ms) must be above the median (5ms)"),
        "{err}"
    );
    let err = usage_error(&["run", "--service", "lognormal:80ms@p99=50ms"]);
    assert!(
        err.contains("--service") && err.contains("the p99 (50ms) must be above the median (80ms)"),
        "{err}"
    );
    let err = usage_error(&["run", &dir.join("missing.toml").to_string_lossy()]);
    assert!(err.contains("missing.toml"), "{err}");
}

#[test]
fn a_time_limiter_is_the_timeout_of_each_attempt() {
    // The example's TimeLimiter: configs.default's 2 s, replaced by the
    // instance's 3 s. Imported, the run is the one with --timeout 3s.
    let config = "scenarios/configs/resilience4j-application.yml";
    let printed = herdsim(&["import", config]);
    assert!(
        printed.contains(
            "# from scenarios/configs/resilience4j-application.yml: \
             resilience4j.timelimiter.instances.inventory.timeoutDuration\n"
        ) && printed.contains("\ntimeout = \"3s\"\n"),
        "{printed}"
    );
    let service = [
        "--resource",
        "server",
        "--rate",
        "500",
        "--workers",
        "4",
        "--service",
        "exp:5ms",
        "--duration",
        "5s",
        "--patience",
        "2s",
        "--trigger",
        "outage@1s..1.5s",
        "--seeds",
        "2",
        "-q",
        "--json",
    ];
    let imported = herdsim(&[["run", "--import", config].as_slice(), &service].concat());
    let without = herdsim(
        &[
            ["run", "--import", config].as_slice(),
            &service,
            &["--timeout", "3s"],
        ]
        .concat(),
    );
    assert_eq!(imported, without);
    // A file with only a timelimiter block is read, --warn-unknown or not
    // (it failed whole before).
    let dir = workdir("time-limiter");
    let file = scenario(
        &dir,
        "application.yml",
        "resilience4j:\n  timelimiter:\n    instances:\n      backend:\n        timeoutDuration: 250ms\n",
    );
    for extra in [&[][..], &["--warn-unknown"][..]] {
        let printed = herdsim(&[["import", &file].as_slice(), extra].concat());
        assert!(printed.contains("\ntimeout = \"250ms\"\n"), "{printed}");
    }
    // A TimeLimiter outside the Retry is refused in one line.
    let file = scenario(
        &dir,
        "outside.yml",
        "resilience4j:\n  retry:\n    instances:\n      a: {}\n  timelimiter:\n    \
         timeLimiterAspectOrder: 1\n    instances:\n      a: {}\n",
    );
    let err = usage_error(&["import", &file]);
    assert!(
        err.contains("outside the Retry aspect") && err.contains("--deadline"),
        "{err}"
    );
}
