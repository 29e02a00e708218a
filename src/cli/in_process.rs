//! The command line run in-process, for the Python package: [`call`] runs
//! it on the calling thread with its standard output, warnings and notes
//! kept for the caller, and [`interrupt`] asks it to stop as Ctrl-C stops
//! the binary.

use std::io::{self, Write};

use clap::Parser;

use crate::base::format::printable;

use super::{Cli, CliError, EXIT_USAGE, clap_error_line, execute, progress};

/// What a command line run in-process ([`call`]) gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Called {
    /// The exit code the binary would give: 0, 1 (a run or a write
    /// failed), or 2 (bad input).
    pub code: u8,
    /// What it wrote to standard output (help included).
    pub stdout: String,
    /// Its error line, without `error: `, if it failed.
    pub error: Option<String>,
    /// Its warnings and notes of what a figure depends on, a line each as
    /// the binary prints them on standard error (`warning: ...`,
    /// `note: ...`).
    pub warnings: Vec<String>,
}

thread_local! {
    /// Standard output while [`call`] runs on this thread.
    static CAPTURED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// Warnings while [`call`] runs on this thread.
    static WARNINGS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Writes `line` (`warning: ...`, `note: ...`) on standard error, or keeps
/// it for the caller while [`call`] runs.
fn to_stderr(line: String) {
    if capturing() {
        WARNINGS.with(|w| w.borrow_mut().push(line));
    } else {
        eprintln!("{line}");
    }
}

/// Warns in one line (`text` without `warning: `).
pub(super) fn warn(text: &str) {
    to_stderr(format!("warning: {}", printable(text)));
}

/// Notes in one line (`text` without `note: `) what a figure depends on.
pub(super) fn note(text: &str) {
    to_stderr(format!("note: {}", printable(text)));
}

/// Set by [`interrupt`]: the commands running in-process are to stop.
/// Cleared when a call starts with none running (one interrupted and still
/// finishing keeps it set).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The calls running in-process.
static RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Asks the commands [`call`] runs to stop, as Ctrl-C stops the binary: a
/// sweep, map or tune stops at its next row, keeping every row before it
/// (`--resume` continues); other commands finish their work.
pub fn interrupt() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A row sink's check before each row: an `Interrupted` error once
/// [`interrupt`] has asked the in-process command to stop, so the work
/// stops there with every row before it kept.
pub(super) fn still_wanted() -> io::Result<()> {
    if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
    }
    Ok(())
}

/// The error of a sink's failed write to `shown`: an interruption
/// ([`interrupt`]) or the write's own error, which cut the file back to
/// its last whole `unit` (a row, a run, a batch). `replacing` says what
/// the file replaces when whole, if anything (`, which replaces ...`).
pub(super) fn sink_error(e: &io::Error, shown: &str, unit: &str, replacing: &str) -> CliError {
    if e.kind() == io::ErrorKind::Interrupted {
        return CliError::Limit(format!(
            "interrupted: every {unit} before it is in '{shown}'{replacing} (--resume continues)"
        ));
    }
    CliError::Usage(format!(
        "cannot write '{shown}': {e}; it is cut back to its last whole {unit}{replacing} \
         (--resume continues)"
    ))
}

/// True while [`call`] runs on this thread.
pub(super) fn capturing() -> bool {
    CAPTURED.with(|c| c.borrow().is_some())
}

/// How far the command [`call`] runs has got: runs done and their total.
pub fn call_progress() -> Option<(u64, u64)> {
    progress::in_process()
}

/// Runs the command line `args` (the program's name first) in this process,
/// its standard output captured: the same work, files and bytes as the
/// binary's, for the Python package. Its warnings and notes are kept in
/// [`Called`]; what `--quiet` hides (progress, closing summaries) still
/// goes to standard error.
pub fn call(args: &[String]) -> Called {
    CAPTURED.with(|c| *c.borrow_mut() = Some(String::new()));
    WARNINGS.with(|w| w.borrow_mut().clear());
    if RUNNING.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
        INTERRUPTED.store(false, std::sync::atomic::Ordering::SeqCst);
    }
    let result = match Cli::try_parse_from(args) {
        Ok(cli) => execute(cli).map_err(|err| match err {
            CliError::Usage(_) | CliError::Report(_) => (EXIT_USAGE, printable(&err.to_string())),
            CliError::Io(_) | CliError::Limit(_) | CliError::DoesNotConform => {
                (1, printable(&err.to_string()))
            }
        }),
        Err(err) => {
            use clap::error::ErrorKind;
            match err.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = write_stdout(&err.render().to_string());
                    Ok(())
                }
                _ => {
                    let words: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
                    let line = clap_error_line(err, &words);
                    let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
                    Err((EXIT_USAGE, line))
                }
            }
        }
    };
    let stdout = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    let warnings = WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()));
    progress::end_in_process();
    RUNNING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    let (code, error) = match result {
        Ok(()) => (0, None),
        Err((code, line)) => (code, Some(line)),
    };
    Called {
        code,
        stdout,
        error,
        warnings,
    }
}

/// Standard output: the terminal's, or kept for the caller while [`call`]
/// runs.
pub(super) fn write_stdout(text: &str) -> Result<(), CliError> {
    let captured = CAPTURED.with(|c| {
        c.borrow_mut()
            .as_mut()
            .map(|out| out.push_str(text))
            .is_some()
    });
    if captured {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
