//! Output files as a hostile user meets them: devices and pipes written in
//! place, links followed, nothing replaced without --force, and one file
//! never named twice.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{usage_error, workdir};

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

#[test]
fn a_fifo_is_written_in_place_not_replaced() {
    let dir = workdir("fifo");
    let fifo = path(&dir, "pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "10", "-q", "--plot", &fifo])
        .assert()
        .success();
    let kind = fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe is still a pipe");
    // Had herdsim not opened the pipe, the reader would wait for ever: a
    // writer of our own that writes nothing ends its wait.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc_nonblock())
            .open(&fifo);
    }
    let svg = reader.join().unwrap();
    assert!(svg.starts_with("<svg"), "the picture went through the pipe");
}

/// `O_NONBLOCK` on Linux.
fn libc_nonblock() -> i32 {
    0o4000
}

#[test]
fn every_writer_refuses_an_existing_file_without_force() {
    let dir = workdir("no-clobber-plot");
    let svg = path(&dir, "x.svg");
    fs::write(&svg, "mine").unwrap();
    let err = usage_error(&["run", "--clients", "10", "-q", "--plot", &svg]);
    assert!(err.contains("exists: pass --force"), "{err}");
    assert_eq!(fs::read_to_string(&svg).unwrap(), "mine");
    cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "10", "-q", "--plot", &svg, "--force"])
        .assert()
        .success();
    assert!(fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

#[test]
fn two_outputs_or_an_input_and_an_output_naming_one_file_are_refused() {
    let dir = workdir("same-file");
    let same = path(&dir, "same.out");
    let err = usage_error(&["compare", "--quiet", "--csv", &same, "--plot", &same]);
    assert!(err.contains("--csv and --plot both name"), "{err}");
    assert!(!Path::new(&same).exists(), "nothing written");
    // The same file by another name (through a link) is the same file.
    let input = path(&dir, "in.csv");
    fs::write(&input, "a,b\n1,2\n").unwrap();
    let alias = path(&dir, "alias.csv");
    std::os::unix::fs::symlink(&input, &alias).unwrap();
    for out in [&input, &alias] {
        let err = usage_error(&[
            "plot", &input, "--x", "a", "--y", "b", "--force", "--out", out,
        ]);
        assert!(err.contains("the input and --out both name"), "{err}");
    }
    assert_eq!(fs::read_to_string(&input).unwrap(), "a,b\n1,2\n");
    let err = usage_error(&["merge", &input, "--out", &input, "--force"]);
    assert!(err.contains("a shard and --out"), "{err}");
}

fn is_link(path: &str) -> bool {
    fs::symlink_metadata(path).unwrap().file_type().is_symlink()
}

#[test]
fn a_link_is_followed_and_stays_a_link() {
    let dir = workdir("link");
    let link = path(&dir, "link.svg");
    std::os::unix::fs::symlink("target.svg", &link).unwrap();
    cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "10", "-q", "--plot", &link])
        .assert()
        .success();
    assert!(is_link(&link));
    let target = fs::read_to_string(dir.join("target.svg")).unwrap();
    assert!(target.starts_with("<svg"));
    // Replacing it needs --force, and replaces the target, not the link.
    usage_error(&["run", "--clients", "10", "-q", "--plot", &link]);
    cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "20", "-q", "--plot", &link, "--force"])
        .assert()
        .success();
    assert!(is_link(&link));
    assert_ne!(fs::read_to_string(dir.join("target.svg")).unwrap(), target);
}

#[test]
fn inputs_that_are_not_regular_files_or_too_big_are_refused_at_once() {
    let dir = workdir("inputs");
    let fifo = path(&dir, "pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let big = path(&dir, "big.toml");
    fs::write(&big, "#".repeat(2 << 20)).unwrap();
    let out = path(&dir, "out.csv");
    // A FIFO with no writer and /dev/zero would never end; a scenario is
    // kilobytes.
    for (args, says) in [
        (vec!["sweep", &fifo, "--out", &out], "not a regular file"),
        (
            vec!["sweep", "/dev/zero", "--out", &out],
            "not a regular file",
        ),
        (
            vec!["plot", "/dev/zero", "--x", "a", "--y", "b", "--out", &out],
            "not a regular file",
        ),
        (vec!["sweep", &big, "--out", &out], "more than the 1048576"),
    ] {
        let err = usage_error(&args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!Path::new(&out).exists());
}

#[test]
fn input_that_would_have_no_effect_is_named() {
    let dir = workdir("no-effect");
    // run: parameters the workload does not use are warned of.
    let out = cargo_bin_cmd!("herdsim")
        .args(["run", "--clients", "20", "-q", "--policy", "decorrelated"])
        .args(["--cap-mode", "after", "--step", "5ms", "--fleet", "5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    for flag in ["--cap-mode", "--step", "--fleet"] {
        assert!(
            err.contains(&format!("warning: {flag} has no effect")),
            "{err}"
        );
    }
    // sweep: a shard beyond a small grid's points.
    let shard = path(&dir, "shard.csv");
    let out = cargo_bin_cmd!("herdsim")
        .args([
            "sweep",
            "--clients",
            "10",
            "--shard",
            "2/1000",
            "--out",
            &shard,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("shard 2/1000 of a 1-point grid has no points"),
        "{err}"
    );
    // plot: rows left out are counted; a column named twice is refused.
    let table = path(&dir, "t.csv");
    fs::write(&table, "a,b\n1,2\n2,x\n3,4\n").unwrap();
    let plot = |out: &str| {
        let args = ["plot", &table, "--x", "a", "--y", "b", "--out", out];
        args.map(str::to_string)
    };
    let out = cargo_bin_cmd!("herdsim")
        .args(plot(&path(&dir, "t.svg")))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stderr).unwrap().contains("1 row of"));
    fs::write(&table, "a,b,a\n1,2,3\n").unwrap();
    let args = plot(&path(&dir, "u.svg"));
    let err = usage_error(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(err.contains("two columns named 'a'"), "{err}");
}

#[test]
fn a_sweep_writes_to_a_device_in_place_and_names_it_when_it_fails() {
    // /dev/full takes no byte: the error names it, exit 2, and it stays a
    // device. /dev/null needs no --force: nothing is replaced.
    let err = usage_error(&[
        "sweep",
        "--clients",
        "10",
        "-q",
        "--force",
        "--out",
        "/dev/full",
    ]);
    assert!(err.contains("cannot write '/dev/full'"), "{err}");
    assert!(
        fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    cargo_bin_cmd!("herdsim")
        .args(["sweep", "--clients", "10", "-q", "--out", "/dev/null"])
        .assert()
        .success();
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}
