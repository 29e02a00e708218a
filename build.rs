//! Sets `HERDSIM_VERSION`, what `herdsim --version` prints: the package's
//! version, and the commit when built inside a git checkout
//! (`0.1.0 (commit 0123456789ab)`). Without git, or outside a repository (a
//! tarball), the version alone. Reruns only when the checkout's HEAD or the
//! branch it points to moves, not at every build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets the version");
    let text = match commit() {
        Some(commit) => format!("{version} (commit {commit})"),
        None => version,
    };
    println!("cargo:rustc-env=HERDSIM_VERSION={text}");
}

/// `git` in the package's directory: its output, trimmed, if it succeeded.
fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// The checkout's commit (12 hex digits), watching the files that say it.
fn commit() -> Option<String> {
    // Only a repository whose top is this package's: a package unpacked
    // inside some other repository is not built from its commits.
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    if top.canonicalize().ok()? != manifest.canonicalize().ok()? {
        return None;
    }
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    let absolute = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { manifest.join(p) }
    };
    let git_dir = absolute(git(&["rev-parse", "--git-dir"])?);
    let common = git(&["rev-parse", "--git-common-dir"]).map_or(git_dir.clone(), absolute);
    watch(&git_dir.join("HEAD"));
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        let file = common.join(branch);
        // A packed branch has no file until its next commit writes one.
        match file.parent().filter(|_| !file.exists()) {
            Some(dir) => watch(dir),
            None => watch(&file),
        }
    }
    watch(&common.join("packed-refs"));
    Some(commit)
}

/// Reruns the build script when `path` changes (if it exists: a missing
/// path would rerun it every build).
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
