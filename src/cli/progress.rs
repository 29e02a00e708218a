//! The progress bar of long work.

use std::fmt::Write;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

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
