//! Scripted walks through a control's states, for the controls' tests.

use crate::base::draws::ScriptedDraws;
use crate::control::{Nanos, Outcome, RetryControl};

/// One scripted step.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// The clock moves to this time (ns).
    At(Nanos),
    /// A request starts.
    Start,
    /// An attempt is sent (retrying what, if a retry).
    Sent(Option<Outcome>),
    /// An attempt ends (retrying what, if a retry).
    End(Outcome, Option<Outcome>),
    /// A retry after this outcome: must it be allowed? If so it is taken.
    Retry(Outcome, bool),
    /// An attempt (a retry if the first is true), with `u` as the one
    /// draw a control may take: must it be admitted?
    Admit(bool, f64, bool),
}

/// Walks `control` through `steps`, failing at the first step whose answer
/// differs from the script.
pub fn walk<C: RetryControl + std::fmt::Debug>(control: &mut C, steps: &[Step]) {
    let mut now = Nanos::ZERO;
    for (i, step) in steps.iter().enumerate() {
        match *step {
            Step::At(t) => now = t,
            Step::Start => control.request_started(now),
            Step::Sent(retry_of) => control.attempt_sent(now, retry_of),
            Step::End(outcome, retry_of) => control.attempt_ended(now, outcome, retry_of),
            Step::Retry(cause, expected) => {
                let allowed = control.may_retry(now, cause);
                assert_eq!(allowed, expected, "step {i} {step:?}: {control:?}");
                if allowed {
                    control.take_retry(now, cause);
                }
            }
            Step::Admit(retry, u, expected) => {
                let admitted = control.admit(now, retry, &mut ScriptedDraws::new(&[u]));
                assert_eq!(admitted, expected, "step {i} {step:?}: {control:?}");
            }
        }
    }
}
