//! `herdsim serve` hands its command line to `herdsim-live` (the live
//! package's binary): here a stand-in script takes its place through
//! `HERDSIM_LIVE`, so the hand-over itself is what is tested; the live
//! server's own tests are in live/tests.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::workdir;

/// The arguments reach `herdsim-live` untouched (flags and `--help`
/// included), after the command's name, and its exit code is the
/// command's (the process is replaced, not waited for).
#[test]
fn serve_hands_its_arguments_and_exit_code_to_herdsim_live() {
    let dir = workdir("live-stand-in");
    let stand_in = dir.join("herdsim-live");
    fs::write(&stand_in, "#!/bin/sh\necho \"stand-in got: $*\"\nexit 7\n").unwrap();
    fs::set_permissions(&stand_in, fs::Permissions::from_mode(0o755)).unwrap();
    let out = cargo_bin_cmd!("herdsim")
        .env("HERDSIM_LIVE", &stand_in)
        .args(["serve", "--workers", "4", "--help", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "stand-in got: serve --workers 4 --help -q\n"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Without `herdsim-live`, one line says where it is and how to install
/// it, exit 2.
#[test]
fn serve_without_herdsim_live_says_how_to_install_it() {
    let out = cargo_bin_cmd!("herdsim")
        .env("HERDSIM_LIVE", "/nonexistent/herdsim-live")
        .args(["serve", "--workers", "4"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cargo install --path live"), "{err}");
}

/// Without `herdsim-live`, `--help` still helps: what the command is and
/// how to install it, exit 0 (every long help's examples run in the
/// conventions test, where herdsim-live is not built).
#[test]
fn serve_help_without_herdsim_live_says_what_it_is_and_how_to_install_it() {
    for command in ["serve", "drill"] {
        let out = cargo_bin_cmd!("herdsim")
            .env("HERDSIM_LIVE", "/nonexistent/herdsim-live")
            .args([command, "--help"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains("in wall-clock time"), "{help}");
        assert!(help.contains("cargo install --path live"), "{help}");
    }
}
