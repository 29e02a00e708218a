//! The progress bar of long work.

use std::fmt::Write;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

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
