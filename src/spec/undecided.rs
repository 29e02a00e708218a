//! Why a server run's verdict can be left unresolved, and what decides it:
//! the verdict reads the patience window after the last trigger's end, so
//! a load (or horizon) that stops before that window does cannot tell
//! recovered from stuck. Every command that counts storms says so in these
//! words when some of its runs were left undecided.

use super::RunSpec;
use crate::base::time::{Micros, format_duration};

/// What left a run unresolved: the bound that stopped it before its
/// patience window ended, and when that window ends (the least length that
/// decides it), µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecided {
    /// A given `duration` ended the load first.
    Duration(Micros),
    /// A given `horizon` cut the run first.
    Horizon(Micros),
    /// A given request count ended the load first.
    Requests(Micros),
    /// The bounds reach the window's end, but it holds too few windows of
    /// the series to judge (a patience this short cannot tell).
    Patience,
}

impl RunSpec {
    /// When the verdict's patience window ends, µs: the last trigger's end
    /// plus the patience (`None` without a trigger). A load and horizon
    /// that last this long decide the run.
    pub fn verdict_end_us(&self) -> Option<Micros> {
        self.server
            .last_trigger_end_us()
            .map(|end| end.saturating_add(self.patience_us()))
    }

    /// What would leave this spec's runs unresolved, if they are: the
    /// first of its bounds (a given duration, horizon or request count)
    /// that may stop them before the patience window ends.
    pub fn undecided_cause(&self) -> Undecided {
        let Some(end) = self.verdict_end_us() else {
            return Undecided::Patience;
        };
        let s = &self.server;
        if s.duration_us.is_some_and(|d| d < end) {
            Undecided::Duration(end)
        } else if let Some(Some(h)) = s.horizon_us
            && h < end
        {
            Undecided::Horizon(end)
        } else if s.requests.is_some() {
            Undecided::Requests(end)
        } else {
            Undecided::Patience
        }
    }
}

impl Undecided {
    /// The cause of many specs' unresolved runs: the kind of the first
    /// spec's, with the latest window's end among those of that kind (so
    /// the length advised decides them all).
    pub fn of_all<'a>(specs: impl IntoIterator<Item = &'a RunSpec>) -> Option<Undecided> {
        Undecided::merged(specs.into_iter().map(RunSpec::undecided_cause))
    }

    /// Causes merged as [`Self::of_all`] merges its specs'.
    pub fn merged(causes: impl IntoIterator<Item = Undecided>) -> Option<Undecided> {
        let mut found: Option<Undecided> = None;
        for cause in causes {
            found = Some(match (found, cause) {
                (None, c) => c,
                (Some(Undecided::Duration(a)), Undecided::Duration(b)) => {
                    Undecided::Duration(a.max(b))
                }
                (Some(Undecided::Horizon(a)), Undecided::Horizon(b)) => {
                    Undecided::Horizon(a.max(b))
                }
                (Some(Undecided::Requests(a)), Undecided::Requests(b)) => {
                    Undecided::Requests(a.max(b))
                }
                (Some(kept), _) => kept,
            });
        }
        found
    }

    /// What to change, for people: `give --duration at least 11.5s or drop
    /// --duration`.
    pub fn advice(self) -> String {
        match self {
            Undecided::Duration(end) => format!(
                "give --duration at least {} or drop --duration",
                format_duration(end)
            ),
            Undecided::Horizon(end) => format!(
                "give --horizon at least {} or drop --horizon",
                format_duration(end)
            ),
            Undecided::Requests(end) => format!(
                "give --requests enough to load the service until {} or drop --requests",
                format_duration(end)
            ),
            Undecided::Patience => {
                "give a longer --patience (at least three windows of the series)".to_string()
            }
        }
    }
}

/// How many of a command's runs were decided, and why the rest were not:
/// `decided 0 of 20 runs: every run ended before its patience window did;
/// give --duration at least 11.5s or drop --duration`. `cause` is what left
/// the undecided ones so (`None`: every run was decided).
pub fn decided_line(decided: u64, runs: u64, cause: Option<Undecided>) -> String {
    let undecided = runs - decided.min(runs);
    let which = if decided == 0 {
        "every run".to_string()
    } else if undecided == 1 {
        "1 run".to_string()
    } else {
        format!("{undecided} runs")
    };
    let mut line = format!(
        "decided {decided} of {runs} runs: {which} ended before {} patience window did",
        if decided == 0 || undecided == 1 {
            "its"
        } else {
            "their"
        }
    );
    if let Some(cause) = cause {
        line.push_str("; ");
        line.push_str(&cause.advice());
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::server_spec_with as spec;

    #[test]
    fn the_bound_that_stops_a_run_first_is_named_with_the_length_that_decides_it() {
        // A patience of 10 s after a trigger ending at 1.5 s.
        let patient = ("patience", "10s");
        let short = spec(&[patient, ("trigger", "outage@1s..1.5s"), ("duration", "3s")]);
        assert_eq!(short.verdict_end_us(), Some(Micros::from_ms(11_500)));
        assert_eq!(
            short.undecided_cause(),
            Undecided::Duration(Micros::from_ms(11_500))
        );
        let cut = spec(&[patient, ("trigger", "outage@1s..1.5s"), ("horizon", "3s")]);
        assert_eq!(
            cut.undecided_cause(),
            Undecided::Horizon(Micros::from_ms(11_500))
        );
        let later = spec(&[patient, ("trigger", "outage@1s..2s"), ("duration", "3s")]);
        assert_eq!(
            Undecided::of_all([&short, &later]),
            Some(Undecided::Duration(Micros::from_s(12)))
        );
        assert_eq!(
            Undecided::Duration(Micros::from_ms(11_500)).advice(),
            "give --duration at least 11.5s or drop --duration"
        );
    }

    #[test]
    fn the_decided_line_counts_runs_and_says_which_ended_early() {
        let cause = Some(Undecided::Duration(Micros::from_ms(11_500)));
        assert_eq!(
            decided_line(0, 20, cause),
            "decided 0 of 20 runs: every run ended before its patience window did; give \
             --duration at least 11.5s or drop --duration"
        );
        assert_eq!(
            decided_line(19, 20, None),
            "decided 19 of 20 runs: 1 run ended before its patience window did"
        );
    }
}
