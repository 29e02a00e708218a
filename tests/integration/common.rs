//! Helpers shared by the integration tests.
//! (One test binary holds every integration test: one link instead of nine.)

use std::fs;
use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;

/// A fresh, empty directory for one test's files (the process id keeps test
/// binaries apart).
pub fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herdsim-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `herdsim args` expecting bad input: exit code 2, nothing on stdout,
/// one line on stderr, which is returned.
pub fn usage_error(args: &[&str]) -> String {
    let out = cargo_bin_cmd!("herdsim").args(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed results");
    assert_eq!(err.lines().count(), 1, "{args:?} is not one line:\n{err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

/// `herdsim run --resource server ARGS --json -q`, parsed (the run must
/// succeed).
pub fn server_json(args: &[&str]) -> serde_json::Value {
    let out = succeed(
        cargo_bin_cmd!("herdsim")
            .args(["run", "--resource", "server", "--json", "-q"])
            .args(args),
    );
    serde_json::from_str(&out).unwrap()
}

/// `herdsim run ARGS` from the repository's root (so scenario paths such
/// as `scenarios/configs/…` resolve), on the import tests' server: 500
/// requests a second, an outage from 1 s to 1.5 s, 5 s of arrivals with
/// 2 s of patience after, two seeds; its standard output (the run must
/// succeed). `ARGS` add the controls under test and the output's form.
pub fn outage_run(args: &[&str]) -> String {
    succeed(
        cargo_bin_cmd!("herdsim")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["run", "--resource", "server", "--rate", "500"])
            .args(["--duration", "5s", "--patience", "2s"])
            .args(["--trigger", "outage@1s..1.5s", "--seeds", "2"])
            .args(args),
    )
}

/// Runs `command`, which must succeed (failing with its arguments and
/// stderr if not); its standard output.
pub fn succeed(command: &mut assert_cmd::Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A metric's mean in a run's JSON report.
pub fn mean(json: &serde_json::Value, metric: &str) -> f64 {
    json["metrics"][metric]["mean"].as_f64().unwrap()
}

/// `herdsim sweep ARGS` in a fresh directory `name`, whole; then as two
/// shards merged, and cut after its first `kept` rows and resumed, which
/// must both give the whole file's bytes. The whole file's text.
pub fn sweep_shards_and_resumes(name: &str, args: &[&str], kept: usize) -> String {
    let dir = workdir(name);
    let path = |name: &str| dir.join(name).display().to_string();
    let sweep = |out: &str, extra: &[&str]| {
        succeed(
            cargo_bin_cmd!("herdsim")
                .args(["sweep", "-q", "--out", out])
                .args(args)
                .args(extra),
        );
        fs::read_to_string(out).unwrap()
    };
    let whole = sweep(&path("whole.csv"), &[]);
    sweep(&path("s1.csv"), &["--shard", "1/2"]);
    sweep(&path("s2.csv"), &["--shard", "2/2"]);
    let merged = path("merged.csv");
    succeed(cargo_bin_cmd!("herdsim").args([
        "merge",
        &path("s2.csv"),
        &path("s1.csv"),
        "--out",
        &merged,
    ]));
    assert_eq!(fs::read_to_string(&merged).unwrap(), whole, "merged shards");
    let partial = path("partial.csv");
    let first_rows: String = whole.split_inclusive('\n').take(1 + kept).collect();
    fs::write(&partial, first_rows).unwrap();
    assert_eq!(sweep(&partial, &["--resume"]), whole, "resumed");
    whole
}

/// A CSV text's rows as maps from column to field.
pub fn csv_rows(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .map(str::to_string)
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// `flags` without the named flags and their values.
pub fn without<'a>(flags: &[&'a str], names: &[&str]) -> Vec<&'a str> {
    let mut kept = Vec::new();
    let mut i = 0;
    while i < flags.len() {
        if names.contains(&flags[i]) {
            i += 2;
        } else {
            kept.push(flags[i]);
            i += 1;
        }
    }
    kept
}

/// The repository's root, where the docs' commands run.
pub fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}
