//! Output files, one rule for every writer: checked before any work, never
//! half-written, never replaced without `--force`.
//!
//! - A directory, a file in a directory that does not exist, or a loop of
//!   symbolic links is refused.
//! - A symbolic link is followed: its target is what is written (and what
//!   `--force` must allow), and the link stays a link. A dangling link names
//!   the file it would create: its chain is followed, each link relative to
//!   its own directory, so two names of one new file are caught too.
//! - An existing regular file is replaced only with `--force`, and then
//!   whole: the text goes to a temporary file beside it, created exclusively
//!   (never over a file, never through a link) under an unpredictable name,
//!   which is renamed over it once whole, so no reader ever sees half of it
//!   and no other file is touched; a failed write removes the temporary.
//! - A device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe) is written in
//!   place: renaming a regular file over `/dev/null` would replace the
//!   device itself.
//! - Two outputs of one command, or an output and an input, that name the
//!   same file are refused up front.
//! - A file written line by line (a sweep's rows, a map's journal) is held
//!   under an exclusive advisory lock while it is written, so a second
//!   writer (a requeued job racing the first) is refused, and a failed write
//!   (a full disk) cuts it back to its last whole line.

use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::CliError;

/// Where an output goes, as checked.
enum Target {
    /// A regular file (or none yet) at this path, links resolved: written
    /// whole, by rename.
    File(PathBuf),
    /// A device or FIFO: written in place.
    Stream(PathBuf),
}

/// The most links followed in one chain (as Linux's own limit).
const MAX_LINKS: usize = 40;

/// `ELOOP` on Linux: a loop of links met by the kernel.
const ELOOP: i32 = 40;

fn loop_error(path: &Path) -> CliError {
    CliError::Usage(format!(
        "cannot write '{}': a loop of symbolic links (or a chain of more than {MAX_LINKS})",
        path.display()
    ))
}

/// The file `path` names once every link at its end is followed, each
/// relative to its own directory; `path` itself if it is no link. Used for
/// a dangling link, whose target the kernel will not resolve for us.
fn follow_links(path: &Path) -> Result<PathBuf, CliError> {
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&at).map_err(|e| {
                    CliError::Usage(format!("cannot write '{}': {e}", path.display()))
                })?;
                // An absolute target replaces the directory.
                at = at.parent().map_or_else(|| to.clone(), |dir| dir.join(&to));
            }
            _ => return Ok(at),
        }
    }
    Err(loop_error(path))
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
        Err(e) if e.raw_os_error() == Some(ELOOP) => Err(loop_error(path)),
        Err(_) => {
            // A new file, or one a dangling link (or a chain of them) names.
            let new = follow_links(path)?;
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

/// The regular file a line-by-line writer writes for `path` (links
/// resolved), or `None` for a device or pipe, written in place; refused as
/// `check_output` refuses (an existing file is allowed: the caller decides).
pub fn line_target(path: &Path) -> Result<Option<PathBuf>, CliError> {
    match target(path, true)? {
        Target::File(file) => Ok(Some(file)),
        Target::Stream(_) => Ok(None),
    }
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
/// otherwise the same absolute path once links are resolved (a dangling
/// link's chain, and the links in the directory).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => {
            let resolved = |p: &Path| follow_links(p).ok().and_then(|p| absolute(&p));
            resolved(a).is_some_and(|x| Some(x) == resolved(b))
        }
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

/// True if `path` names an existing regular file (through any link): one
/// that writing would replace.
pub fn is_regular_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// A number no other process can guess, for a temporary file's name: the
/// standard library's randomly keyed hasher over the process id, a counter
/// and the time.
fn unpredictable() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(now);
    hasher.finish()
}

/// A new file beside the one it will replace, removed when dropped unless
/// it was renamed into place.
struct Temporary {
    path: PathBuf,
    file: File,
    placed: bool,
}

impl Temporary {
    /// Creates `TARGET.<16 hex digits>.partial` in `target`'s directory,
    /// exclusively: `create_new` (O_CREAT | O_EXCL) never opens an existing
    /// file, nor follows a link put there.
    fn beside(target: &Path) -> io::Result<Temporary> {
        // A name at most 255 bytes long, as file systems allow.
        let name = target.file_name().map_or(&b""[..], |n| n.as_bytes());
        let stem = &name[..name.len().min(200)];
        for _ in 0..16 {
            let mut file_name = OsString::from(std::ffi::OsStr::from_bytes(stem));
            file_name.push(format!(".{:016x}.partial", unpredictable()));
            let path = target.with_file_name(file_name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(Temporary {
                        path,
                        file,
                        placed: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free name for a temporary file beside it",
        ))
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.placed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Writes `text` to `path` by the module's rules.
pub fn write_whole(path: &Path, force: bool, text: &str) -> Result<(), CliError> {
    let mut whole = WholeFile::begin(path, force)?;
    whole.write(text)?;
    whole.finish()
}

/// A file written in pieces that appears whole or not at all: the pieces
/// go to a temporary beside it, renamed into place by [`WholeFile::finish`]
/// (a device or FIFO is written in place). Dropped unfinished (an error, an
/// interruption), the temporary goes and nothing is at the path.
pub struct WholeFile {
    shown: String,
    force: bool,
    to: WholeTarget,
}

enum WholeTarget {
    Stream(io::BufWriter<File>),
    File {
        path: PathBuf,
        replaced: bool,
        temporary: Temporary,
        buffer: Vec<u8>,
    },
}

/// Bytes gathered before a write to the temporary.
const WHOLE_BUFFER: usize = 1 << 20;

impl WholeFile {
    /// Starts `path` (replacing a file there only with `force`).
    pub fn begin(path: &Path, force: bool) -> Result<WholeFile, CliError> {
        let shown = path.display().to_string();
        let failed = |e: io::Error| write_failed(&shown, e);
        let to = match target(path, force)? {
            Target::Stream(device) => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&device)
                    .map_err(failed)?;
                WholeTarget::Stream(io::BufWriter::new(file))
            }
            Target::File(file) => {
                let replaced = fs::metadata(&file).ok();
                let temporary = Temporary::beside(&file).map_err(failed)?;
                // The replacement keeps the replaced file's permissions (a
                // private file stays private).
                if let Some(old) = &replaced {
                    temporary
                        .file
                        .set_permissions(old.permissions())
                        .map_err(failed)?;
                }
                WholeTarget::File {
                    path: file,
                    replaced: replaced.is_some(),
                    temporary,
                    buffer: Vec::new(),
                }
            }
        };
        Ok(WholeFile { shown, force, to })
    }

    /// Appends `text`.
    pub fn write(&mut self, text: &str) -> Result<(), CliError> {
        let shown = &self.shown;
        match &mut self.to {
            WholeTarget::Stream(out) => out
                .write_all(text.as_bytes())
                .map_err(|e| write_failed(shown, e)),
            WholeTarget::File {
                temporary, buffer, ..
            } => {
                buffer.extend_from_slice(text.as_bytes());
                if buffer.len() >= WHOLE_BUFFER {
                    temporary
                        .file
                        .write_all(buffer)
                        .map_err(|e| write_failed(shown, e))?;
                    buffer.clear();
                }
                Ok(())
            }
        }
    }

    /// Puts the file in place, whole.
    pub fn finish(self) -> Result<(), CliError> {
        let shown = self.shown;
        let failed = |e: io::Error| write_failed(&shown, e);
        match self.to {
            WholeTarget::Stream(mut out) => out.flush().map_err(failed),
            WholeTarget::File {
                path,
                replaced,
                mut temporary,
                buffer,
            } => {
                temporary.file.write_all(&buffer).map_err(failed)?;
                temporary.file.sync_all().map_err(failed)?;
                if !replaced && !self.force {
                    // A new file: a hard link fails rather than replace one
                    // made meanwhile; the temporary's name goes when it is
                    // dropped.
                    match fs::hard_link(&temporary.path, &path) {
                        Ok(()) => return Ok(()),
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                            return Err(CliError::Usage(format!(
                                "'{shown}' appeared while it was written: pass --force to \
                                 replace it"
                            )));
                        }
                        // A file system without hard links: renamed instead.
                        Err(_) => {}
                    }
                }
                fs::rename(&temporary.path, &path).map_err(failed)?;
                temporary.placed = true;
                Ok(())
            }
        }
    }
}

/// A write to `shown` that failed: a closed pipe as such, else in one line.
fn write_failed(shown: &str, e: io::Error) -> CliError {
    match e.kind() {
        io::ErrorKind::BrokenPipe => CliError::Io(e),
        _ => CliError::Usage(format!("cannot write '{shown}': {e}")),
    }
}

/// A file written line by line (a sweep's rows, a map's journal): each
/// write is whole lines, and a write that fails (a full disk) cuts the file
/// back to its last whole line, so readers, and `--resume`, never meet half
/// a line.
pub struct LineFile {
    file: File,
    /// The length of its whole lines; `None` for a device or pipe, which
    /// cannot be cut.
    whole: Option<u64>,
}

impl LineFile {
    /// `file`, open to append: all it holds counts as whole (cut it first).
    pub fn new(file: File) -> io::Result<LineFile> {
        let meta = file.metadata()?;
        let whole = meta.is_file().then_some(meta.len());
        Ok(LineFile { file, whole })
    }

    /// Appends `text`, whole lines; on failure the file is cut back to
    /// where it was.
    pub fn write_lines(&mut self, text: &str) -> io::Result<()> {
        match self.file.write_all(text.as_bytes()) {
            Ok(()) => {
                if let Some(whole) = self.whole.as_mut() {
                    *whole += text.len() as u64;
                }
                Ok(())
            }
            Err(e) => {
                if let Some(whole) = self.whole {
                    let _ = self.file.set_len(whole);
                }
                Err(e)
            }
        }
    }

    /// True if it holds nothing (a device or pipe never does).
    pub fn is_empty(&self) -> bool {
        self.whole == Some(0)
    }

    /// Writes what is buffered to the disk.
    pub fn sync(&self) -> io::Result<()> {
        if self.whole.is_some() {
            self.file.sync_all()?;
        }
        Ok(())
    }
}

/// Opens the device or pipe `path` in place, to be written line by line.
pub fn open_stream(path: &Path) -> Result<LineFile, CliError> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(LineFile::new)
        .map_err(|e| CliError::Usage(format!("cannot write '{}': {e}", path.display())))
}

/// How `open_locked` opens a file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// To read only: a file held so that no other herdsim writes it.
    Hold,
    /// To read and append: a file herdsim writes line by line.
    Append,
}

/// The file `open_locked` opened: one there before, or one it created.
pub struct Locked {
    pub file: File,
    pub created: bool,
}

/// Opens the regular file `path` (`what` names it in errors, as `--out` or
/// "the map's journal") and takes its exclusive advisory lock, refusing
/// with a message naming it if another process holds it. `create` makes it
/// (exclusively) if it does not exist; otherwise a missing file is `None`.
/// A link there is refused: these files are herdsim's own, and the one
/// locked is checked to be the one the path still names (not replaced or
/// removed meanwhile). Where the file system keeps no locks, the file is
/// written unlocked.
pub fn open_locked(
    path: &Path,
    what: &str,
    access: Access,
    create: bool,
) -> Result<Option<Locked>, CliError> {
    let shown = path.display();
    let cannot = |e: io::Error| CliError::Usage(format!("cannot open '{shown}' ({what}): {e}"));
    let mut options = OpenOptions::new();
    options.read(true);
    if access == Access::Append {
        options.append(true);
    }
    for _ in 0..16 {
        let (file, created) = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(CliError::Usage(format!(
                    "'{shown}' ({what}) is a symbolic link: herdsim writes it only as a file of \
                     its own, never through a link; remove the link"
                )));
            }
            Ok(m) if !m.is_file() => {
                return Err(CliError::Usage(format!(
                    "'{shown}' ({what}) is not a regular file"
                )));
            }
            Ok(_) => match options.open(path) {
                Ok(file) => (file, false),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(cannot(e)),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if !create {
                    return Ok(None);
                }
                match options.clone().append(true).create_new(true).open(path) {
                    Ok(file) => (file, true),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(cannot(e)),
                }
            }
            Err(e) => return Err(cannot(e)),
        };
        match file.try_lock() {
            Ok(()) | Err(TryLockError::Error(_)) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(CliError::Usage(format!(
                    "'{shown}' ({what}) is locked by another process (another herdsim writing \
                     it): let it finish, or stop it, first"
                )));
            }
        }
        let held = file.metadata().map_err(cannot)?;
        let named = fs::symlink_metadata(path);
        if named.is_ok_and(|m| m.dev() == held.dev() && m.ino() == held.ino()) {
            return Ok(Some(Locked { file, created }));
        }
        // Replaced or removed between the open and the lock: again.
    }
    Err(CliError::Usage(format!(
        "cannot open '{shown}' ({what}): it kept changing while herdsim opened it"
    )))
}

/// `path` with `suffix` added to its file name (`out.csv` → `out.csv.new`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
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

/// Warnings about the outputs, held until the command has checked its
/// input: a refused command says only its one-line error.
static HELD_WARNINGS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes of what a figure depends on that the input did not say (an SDK
/// release an import assumed), held as the warnings are, each said once.
static HELD_NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes `text` once the command has checked its input
/// ([`release_warnings`]); a note already held is not held twice.
pub fn hold_note(text: &str) {
    let mut held = HELD_NOTES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !held.iter().any(|n| n == text) {
        held.push(text.to_string());
    }
}

/// Warns (once the command has checked its input: [`release_warnings`]), in
/// one line on stderr, of each given output file whose name does not end in
/// the extension of what is written to it (`outputs` as flag, file,
/// extension): a picture named `plot.png` is SVG all the same, and a viewer
/// that trusts the name would fail to show it. A device such as `/dev/null`
/// is not a file to name.
pub fn warn_extensions(outputs: &[(&str, Option<&Path>, &str)]) {
    for &(flag, path, extension) in outputs {
        let Some(path) = path else { continue };
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            continue;
        }
        let named = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case(extension));
        if !named {
            HELD_WARNINGS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(format!(
                    "{flag} '{}' does not end in .{extension}; it is written as {} \
                     all the same",
                    path.display(),
                    extension.to_ascii_uppercase()
                ));
        }
    }
}

/// Prints the held warnings if `shown` (the command's input was good), and
/// forgets them.
pub fn release_warnings(shown: bool) {
    let held = std::mem::take(
        &mut *HELD_WARNINGS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let notes = std::mem::take(
        &mut *HELD_NOTES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    if shown {
        for warning in held {
            super::warn(&warning);
        }
        for note in notes {
            super::note(&note);
        }
    }
}

/// A word as a shell reads it back: as it is if it is made of letters,
/// digits and `-_./+=:@,`, else in single quotes.
pub fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./+=:@,".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
