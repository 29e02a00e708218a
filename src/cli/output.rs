//! Output files, one rule for every writer: checked before any work, never
//! half-written, never replaced without `--force`.
//!
//! - A directory, or a file in a directory that does not exist, is refused.
//! - An existing regular file is replaced only with `--force`, and then
//!   whole: the text goes to `FILE.partial` beside it, which is renamed over
//!   it, so no reader ever sees half of it.
//! - A symbolic link is followed: its target is what is written (and what
//!   `--force` must allow), and the link stays a link.
//! - A device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe) is written in
//!   place: renaming a regular file over `/dev/null` would replace the
//!   device itself.
//! - Two outputs of one command, or an output and an input, that name the
//!   same file are refused up front.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::CliError;

/// Where an output goes, as checked.
enum Target {
    /// A regular file (or none yet) at this path: written whole, by rename.
    File(PathBuf),
    /// A device or FIFO: written in place.
    Stream(PathBuf),
}

/// Checks, before any work, that `path` can take an output file (see the
/// module's rules) and says how it will be written.
fn target(path: &Path, force: bool) -> Result<Target, CliError> {
    let shown = path.display();
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(CliError::Usage(format!(
            "'{shown}' is a directory; give a file name"
        ))),
        Ok(m) if m.is_file() && !force => Err(CliError::Usage(format!(
            "'{shown}' exists: pass --force to replace it"
        ))),
        // The file a link names is replaced, not the link.
        Ok(m) if m.is_file() => Ok(Target::File(if is_link {
            fs::canonicalize(path)?
        } else {
            path.to_path_buf()
        })),
        Ok(_) => Ok(Target::Stream(path.to_path_buf())),
        Err(_) => {
            // A new file, or one a dangling link names.
            let new = if is_link {
                let to = fs::read_link(path)?;
                path.parent().map_or(to.clone(), |dir| dir.join(&to))
            } else {
                path.to_path_buf()
            };
            let parent = new.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(dir) = parent
                && !dir.is_dir()
            {
                return Err(CliError::Usage(format!(
                    "cannot write '{shown}': directory '{}' does not exist",
                    dir.display()
                )));
            }
            Ok(Target::File(new))
        }
    }
}

/// Checks, before any work, that `path` can take an output file.
pub fn check_output(path: &Path, force: bool) -> Result<(), CliError> {
    target(path, force).map(drop)
}

/// Refuses outputs (and inputs) that name one file twice: `names` are the
/// flags' names with their paths.
pub fn check_distinct(names: &[(&str, &Path)]) -> Result<(), CliError> {
    for (i, (flag_a, a)) in names.iter().enumerate() {
        for (flag_b, b) in &names[i + 1..] {
            if same_file(a, b) {
                return Err(CliError::Usage(format!(
                    "{flag_a} and {flag_b} both name '{}': give them different files",
                    a.display()
                )));
            }
        }
    }
    Ok(())
}

/// True if `a` and `b` are one file: the same inode where both exist,
/// otherwise the same absolute path once links in the directory are
/// resolved.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => absolute(a) == absolute(b),
    }
}

/// `path` made absolute, its directory's links resolved where it exists.
fn absolute(path: &Path) -> Option<PathBuf> {
    let dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => fs::canonicalize(dir).ok()?,
        None => std::env::current_dir().ok()?,
    };
    Some(dir.join(path.file_name()?))
}

/// Creates `path` (replacing it only if `replace`), with errors that name it.
pub fn create(path: &Path, replace: bool) -> Result<File, CliError> {
    let mut options = OpenOptions::new();
    options.write(true);
    if replace {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options
        .open(path)
        .map_err(|e| CliError::Usage(format!("cannot create '{}': {e}", path.display())))
}

/// Opens `path` to be written line by line (a sweep's rows) by the module's
/// rules, `--force` already given or not needed: a device or pipe is opened
/// in place, a file (a link's target) created or emptied.
pub fn open_lines(path: &Path) -> Result<File, CliError> {
    match target(path, true)? {
        Target::Stream(device) => OpenOptions::new()
            .write(true)
            .open(&device)
            .map_err(|e| CliError::Usage(format!("cannot write '{}': {e}", path.display()))),
        Target::File(file) => create(&file, true),
    }
}

/// True if `path` names an existing regular file (through any link): one
/// that writing would replace.
pub fn is_regular_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Writes `text` to `path` by the module's rules.
pub fn write_whole(path: &Path, force: bool, text: &str) -> Result<(), CliError> {
    let shown = path.display();
    let failed = |e: io::Error| match e.kind() {
        io::ErrorKind::BrokenPipe => CliError::Io(e),
        _ => CliError::Usage(format!("cannot write '{shown}': {e}")),
    };
    match target(path, force)? {
        Target::Stream(device) => {
            let mut file = OpenOptions::new()
                .write(true)
                .open(&device)
                .map_err(failed)?;
            file.write_all(text.as_bytes()).map_err(failed)
        }
        Target::File(file) => {
            let mut temporary = file.as_os_str().to_owned();
            temporary.push(".partial");
            let temporary = PathBuf::from(temporary);
            let written = create(&temporary, true).and_then(|mut f| {
                f.write_all(text.as_bytes())?;
                f.sync_all()?;
                Ok(())
            });
            if let Err(e) =
                written.and_then(|()| fs::rename(&temporary, &file).map_err(CliError::Io))
            {
                let _ = fs::remove_file(&temporary);
                return Err(match e {
                    CliError::Io(e) => failed(e),
                    other => other,
                });
            }
            Ok(())
        }
    }
}

/// The most a scenario file may hold: scenarios are kilobytes.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;
/// The most a results table (sweep, shard or `compare --csv` file) may hold.
pub const MAX_TABLE_BYTES: u64 = 1 << 32;

/// Reads the input `path` (`what` names it in errors) as UTF-8 text:
/// refused with a message naming it if it is not a regular file (a FIFO with
/// no writer would wait for ever, `/dev/zero` never ends), is larger than
/// `max_bytes`, or is not text.
pub fn read_input(path: &Path, what: &str, max_bytes: u64) -> Result<String, CliError> {
    let shown = path.display();
    let meta = fs::metadata(path)
        .map_err(|e| CliError::Usage(format!("cannot read {what} '{shown}': {e}")))?;
    if !meta.is_file() {
        return Err(CliError::Usage(format!(
            "cannot read {what} '{shown}': not a regular file"
        )));
    }
    if meta.len() > max_bytes {
        return Err(CliError::Usage(format!(
            "cannot read {what} '{shown}': {} bytes, more than the {} a {what} may have",
            meta.len(),
            max_bytes
        )));
    }
    let bytes = fs::read(path)
        .map_err(|e| CliError::Usage(format!("cannot read {what} '{shown}': {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        CliError::Usage(format!(
            "cannot read {what} '{shown}': not UTF-8 text (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Writes a picture to `path` by the module's rules.
pub fn write_svg(
    path: &Path,
    force: bool,
    figure: &crate::report::svg::Figure,
) -> Result<(), CliError> {
    write_whole(path, force, &figure.svg)
}
