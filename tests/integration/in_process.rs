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
    let warned: Vec<String> = called
        .warnings
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    assert_eq!(warned, stderr.lines().collect::<Vec<_>>());
    assert!(warned[0].contains("--rate has no effect"), "{warned:?}");
    let bad = call(&argv(&["run", "--clients", "-1"]));
    assert_eq!(bad.code, 2);
    assert!(bad.error.unwrap().contains("--clients"));

    // A sweep of 300 rows (3,000 runs), interrupted once some rows are in.
    let dir = workdir("in-process-interrupt");
    let (cut, whole) = (dir.join("cut.csv"), dir.join("whole.csv"));
    let clients: Vec<String> = (100..400).map(|c| c.to_string()).collect();
    let clients = clients.join(",");
    let sweep = |out: &std::path::Path, more: &[&str]| {
        let mut words = argv(&[
            "sweep",
            "--clients",
            &clients,
            "--policy",
            "full",
            "--seeds",
            "10",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ]);
        words.extend(more.iter().map(|w| w.to_string()));
        words
    };
    let stopped = interrupted(sweep(&cut, &[]), 50);
    assert_eq!(stopped.code, 1, "{stopped:?}");
    let error = stopped.error.unwrap();
    assert!(
        error.starts_with("interrupted: every row before it is in"),
        "{error}"
    );
    let rows = std::fs::read_to_string(&cut).unwrap().lines().count() - 1;
    assert!(
        0 < rows && rows < 300,
        "the interruption cut the sweep: {rows} rows"
    );
    // --resume continues it to the uninterrupted sweep's bytes.
    let resumed = call(&sweep(&cut, &["--resume"]));
    assert_eq!(resumed.code, 0, "{resumed:?}");
    assert_eq!(call(&sweep(&whole, &[])).code, 0);
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&whole).unwrap());

    // A map (the map tests' metastable case), interrupted after some
    // runs: its journal keeps them, and --resume makes the uninterrupted
    // map's file.
    let (cut, whole) = (dir.join("cut-map.csv"), dir.join("whole-map.csv"));
    let map = |out: &std::path::Path, more: &[&str]| {
        let mut words = argv(MAP);
        words.extend(["--out", out.to_str().unwrap()].map(String::from));
        words.extend(more.iter().map(|w| w.to_string()));
        words
    };
    let stopped = interrupted(map(&cut, &[]), 10);
    assert_eq!(stopped.code, 1, "{stopped:?}");
    let error = stopped.error.unwrap();
    assert!(
        error.starts_with("interrupted: every run before it is in"),
        "{error}"
    );
    assert!(!cut.exists(), "the map's file is written only when whole");
    let resumed = call(&map(&cut, &["--resume"]));
    assert_eq!(resumed.code, 0, "{resumed:?}");
    assert_eq!(call(&map(&whole, &[])).code, 0);
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&whole).unwrap());
}
