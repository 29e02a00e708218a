//! The progress bar of long work.

use std::fmt::Write;

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// The runs bar of the command running in-process ([`super::call`]),
/// hidden, for the caller to read how far it has got (the Python package
/// draws it in a notebook). One at a time: the latest bar made.
static IN_PROCESS: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// How far the command running in-process has got: runs done and their
/// total, if it has counted any.
pub fn in_process() -> Option<(u64, u64)> {
    let bar = IN_PROCESS.lock().ok()?.clone()?;
    Some((bar.position(), bar.length().unwrap_or(0)))
}

/// Forgets the in-process command's bar (its command has ended).
pub(super) fn end_in_process() {
    if let Ok(mut bar) = IN_PROCESS.lock() {
        *bar = None;
    }
}

/// A spinner on stderr for one long run; its message says how far the run
/// has got. Hidden like the bar.
pub fn events_spinner(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.set_style(
        ProgressStyle::with_template("{spinner} {msg} · {elapsed}").expect("a valid template"),
    );
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}

/// A bar on stderr counting runs (done of total, runs per second, ETA),
/// hidden with `--quiet` and whenever stderr is not a terminal.
pub fn runs_bar(total: u64, quiet: bool) -> ProgressBar {
    if super::capturing() {
        let bar = ProgressBar::hidden();
        bar.set_length(total);
        if let Ok(mut shown) = IN_PROCESS.lock() {
            *shown = Some(bar.clone());
        }
        return bar;
    }
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40.cyan/blue} {human_pos}/{human_len} runs · {rate} · ETA {eta}",
        )
        .expect("a valid template")
        .with_key("rate", |state: &ProgressState, w: &mut dyn Write| {
            let _ = write!(w, "{:.0} runs/s", state.per_sec());
        })
        .progress_chars("█▉▊▋▌▍▎▏ "),
    );
    bar
}
