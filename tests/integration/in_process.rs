//! The command line run in-process (`herdsim::cli::call`, what the Python
//! package calls): the binary's bytes, exit codes, error lines and
//! warnings, and an interruption that stops a sweep or a map at its next
//! row with every row before it kept.

use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::cli::{call, call_progress, interrupt};

use crate::common::workdir;
use crate::map::MAP;

fn argv(words: &[&str]) -> Vec<String> {
    std::iter::once("herdsim")
        .chain(words.iter().copied())
        .map(String::from)
        .collect()
}

/// `call(args)` on a thread of its own, interrupted once it has done
/// `runs` runs: what it gave.
fn interrupted(args: Vec<String>, runs: u64) -> herdsim::cli::Called {
    let running = std::thread::spawn(move || call(&args));
    let started = Instant::now();
    while call_progress().is_none_or(|(done, _)| done < runs) {
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(1));
    }
    interrupt();
    running.join().unwrap()
}

/// `command --out STEM-cut.csv`, interrupted after `runs` runs: it must
/// stop with "interrupted: every `unit` before it is in ...", leave what
/// `left` checks, and `--resume` must then make the bytes of the command
/// run whole (`--out STEM-whole.csv`).
fn interrupt_and_resume(
    command: &[&str],
    stem: &std::path::Path,
    runs: u64,
    unit: &str,
    left: impl Fn(&std::path::Path),
) {
    let (cut, whole) = (
        stem.with_extension("cut.csv"),
        stem.with_extension("whole.csv"),
    );
    let with_out = |out: &std::path::Path, more: &[&str]| {
        let mut words = argv(command);
        words.extend(["--out", out.to_str().unwrap()].map(String::from));
        words.extend(more.iter().map(|w| w.to_string()));
        words
    };
    let stopped = interrupted(with_out(&cut, &[]), runs);
    assert_eq!(stopped.code, 1, "{stopped:?}");
    let error = stopped.error.unwrap();
    assert!(
        error.starts_with(&format!("interrupted: every {unit} before it is in")),
        "{error}"
    );
    left(&cut);
    let resumed = call(&with_out(&cut, &["--resume"]));
    assert_eq!(resumed.code, 0, "{resumed:?}");
    assert_eq!(call(&with_out(&whole, &[])).code, 0);
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&whole).unwrap());
}

/// One test, as the calls share the process's interrupt flag and progress.
#[test]
fn a_call_is_the_binarys_and_an_interrupted_sweep_or_map_keeps_its_rows() {
    // Output, warnings and exit code as the binary gives them.
    let words = [
        "run",
        "--clients",
        "100",
        "--rate",
        "300",
        "--seeds",
        "2",
        "--json",
        "-q",
    ];
    let binary = cargo_bin_cmd!("herdsim").args(words).output().unwrap();
    let called = call(&argv(&words));
    assert_eq!(called.code, 0);
    assert_eq!(called.stdout.as_bytes(), binary.stdout);
    assert_eq!(called.error, None);
    let stderr = String::from_utf8(binary.stderr).unwrap();
    let warned = &called.warnings;
    assert_eq!(warned, &stderr.lines().collect::<Vec<_>>());
    assert!(warned[0].contains("--rate has no effect"), "{warned:?}");
    let bad = call(&argv(&["run", "--clients", "-1"]));
    assert_eq!(bad.code, 2);
    assert!(bad.error.unwrap().contains("--clients"));

    // A sweep of 300 rows (3,000 runs), interrupted once some rows are in.
    let dir = workdir("in-process-interrupt");
    let clients: Vec<String> = (100..400).map(|c| c.to_string()).collect();
    let clients = clients.join(",");
    let sweep = [
        "sweep",
        "--clients",
        &clients,
        "--policy",
        "full",
        "--seeds",
        "10",
        "-q",
    ];
    interrupt_and_resume(&sweep, &dir.join("sweep"), 50, "row", |cut| {
        let rows = std::fs::read_to_string(cut).unwrap().lines().count() - 1;
        assert!(
            0 < rows && rows < 300,
            "the interruption cut the sweep: {rows} rows"
        );
    });
    // A map (the map tests' metastable case): its journal keeps the runs.
    interrupt_and_resume(MAP, &dir.join("map"), 10, "run", |cut| {
        assert!(!cut.exists(), "the map's file is written only when whole");
    });
}
