//! One request's life in real time, as the simulator's plain path lives it
//! (`sim::server_loop::plain`): the controls admit each attempt, the
//! attempt goes out with its timeout (the request's deadline sooner), its
//! answer or its timeout ends it, and the one retry decision the simulator
//! uses ([`decide`]) says whether and when the next goes.

use std::sync::{Arc, Mutex};

use rand_pcg::Pcg64Mcg;

use herdsim::base::time::Micros;
use herdsim::control::{Controls, Outcome};
use herdsim::model::retry_on::RetryOn;
use herdsim::model::server::Nanos;
use herdsim::policy::{AnyPolicy, AnyWalk};
use herdsim::sim::retry_decision::{Decision, Failed, decide};

use super::record::{Happened, LiveRecorder};
use super::transport::{Answer, Transport};
use crate::lateness::Lateness;
use crate::timing::duration_of;

/// What every request of a drill shares.
pub struct Clients {
    pub transport: Transport,
    pub rec: LiveRecorder,
    pub policy: AnyPolicy,
    pub controls: Option<Mutex<Controls>>,
    /// The policies' draws (one stream, as the simulator's).
    pub backoff: Mutex<Pcg64Mcg>,
    /// Each attempt's timeout, if any.
    pub timeout: Option<Nanos>,
    /// The request's deadline over all its attempts, if any.
    pub deadline: Option<Nanos>,
    pub max_attempts: Option<u32>,
    pub retry_on: RetryOn,
    /// How late the runtime's timers fired: timeouts and retry delays.
    pub late: Mutex<TimerLateness>,
}

/// How late a drill's runtime timers fired past their deadlines.
#[derive(Debug, Clone, Default)]
pub struct TimerLateness {
    /// An attempt's timeout (or its request's deadline) firing.
    pub timeouts: Lateness,
    /// A retry's delay ending (0 with no-backoff: how long "at once" took).
    pub retry_delays: Lateness,
}

impl Clients {
    fn controls(&self) -> Option<std::sync::MutexGuard<'_, Controls>> {
        self.controls
            .as_ref()
            .map(|c| c.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn past_deadline(&self, started: Nanos, t: Nanos) -> bool {
        self.deadline
            .is_some_and(|d| t >= started.saturating_add(d))
    }

    /// The retry decision after attempt number `attempts` failed with
    /// `cause` at `now`: the delay, or `None` to give up.
    fn retry_delay(
        &self,
        source: u32,
        now: Nanos,
        attempts: u32,
        cause: Outcome,
        walk: &mut AnyWalk,
    ) -> Option<Micros> {
        let limits_allow =
            self.retry_on.retries(cause) && self.max_attempts.is_none_or(|max| attempts < max);
        let failed = Failed {
            source,
            now,
            cause,
            retry: attempts,
        };
        let mut controls = self.controls();
        let mut backoff = self.backoff.lock().unwrap_or_else(|e| e.into_inner());
        match decide(
            limits_allow,
            controls.as_deref_mut(),
            failed,
            &self.policy,
            walk,
            &mut backoff,
        ) {
            Decision::Retry { delay } => Some(delay),
            Decision::Limit | Decision::Refused => None,
        }
    }

    /// Waits until drill time `t`; at once if it has come (the runtime's
    /// timer would fire at its next millisecond tick: an immediate retry
    /// measured 1.2 ms late on average).
    async fn until(&self, t: Nanos) {
        if t <= self.rec.now() {
            return;
        }
        tokio::time::sleep_until(self.rec.instant_of(t).into()).await;
    }

    fn late(&self) -> std::sync::MutexGuard<'_, TimerLateness> {
        self.late.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A request from `source`, from its arrival to its end.
pub async fn request(clients: Arc<Clients>, source: u32, open_loop: bool) {
    let c = &*clients;
    let started = c.rec.note(Happened::Arrived { open_loop });
    if let Some(mut controls) = c.controls() {
        controls.request_started(source, started);
    }
    let mut walk = c.policy.start();
    let mut attempts = 0u32;
    let mut retry_of: Option<Outcome> = None;
    let mut admitted = false;
    loop {
        let now = c.rec.now();
        if !admitted {
            match admit(c, source, now, retry_of.is_some()) {
                Admission::Now => {}
                Admission::After(wait) => {
                    // A rate limiter's token: sent when it comes, admitted.
                    c.until(now.saturating_add(wait)).await;
                    admitted = true;
                    continue;
                }
                Admission::Refused { retried } => {
                    c.rec.note(Happened::Refused);
                    // A refusal the client's retry treats as an error uses
                    // up an attempt unsent.
                    if retried {
                        attempts += 1;
                        if let Some(delay) =
                            c.retry_delay(source, now, attempts, Outcome::Failure, &mut walk)
                            && wait_to_retry(c, source, started, now, delay).await
                        {
                            retry_of = Some(Outcome::Failure);
                            continue;
                        }
                    }
                    c.rec.note(Happened::GaveUp { started });
                    return;
                }
            }
        }
        admitted = false;
        if let Some(mut controls) = c.controls() {
            controls.attempt_sent(source, now, retry_of);
        }
        let sent = c.rec.note(Happened::AttemptSent);
        attempts += 1;
        // The client stops waiting at the attempt's timeout or the
        // request's deadline, whichever is first.
        let until_deadline = c
            .deadline
            .map(|d| started.saturating_add(d).saturating_sub(sent));
        let wait = match (c.timeout, until_deadline) {
            (Some(t), Some(d)) => Some(t.min(d)),
            (t, d) => t.or(d),
        };
        let answer = match wait {
            Some(wait) => tokio::time::timeout(duration_of(wait), c.transport.call(sent))
                .await
                .ok(),
            None => Some(c.transport.call(sent).await),
        };
        let ended = c.rec.note(Happened::AttemptEnded);
        let outcome = match answer {
            None => Outcome::Timeout,
            Some(Answer::Success) => Outcome::Success,
            Some(Answer::Failure) => Outcome::Failure,
            Some(Answer::Rejected) => Outcome::Rejected,
        };
        if let Some(mut controls) = c.controls() {
            controls.attempt_ended(source, ended, sent, outcome, retry_of);
        }
        match outcome {
            Outcome::Success => {
                c.rec.note(Happened::Succeeded { started });
                return;
            }
            Outcome::Timeout => {
                if let Some(wait) = wait {
                    let due = c.rec.instant_of(sent.saturating_add(wait));
                    let fired = c.rec.instant_of(ended);
                    c.late()
                        .timeouts
                        .record(fired.saturating_duration_since(due));
                }
                c.rec.note(Happened::TimedOut);
                if c.past_deadline(started, ended) {
                    c.rec.note(Happened::GaveUp { started });
                    return;
                }
            }
            Outcome::Rejected => {
                c.rec.note(Happened::Rejected);
            }
            Outcome::Failure => {}
        }
        match c.retry_delay(source, ended, attempts, outcome, &mut walk) {
            Some(delay) if wait_to_retry(c, source, started, ended, delay).await => {
                retry_of = Some(outcome);
            }
            _ => {
                c.rec.note(Happened::GaveUp { started });
                return;
            }
        }
    }
}

/// Waits out a retry's `delay` from `now`, counted as a retry
/// waiting; false (the retry dropped) if it would start past the request's
/// deadline.
async fn wait_to_retry(
    c: &Clients,
    source: u32,
    started: Nanos,
    now: Nanos,
    delay: Micros,
) -> bool {
    let at = now.saturating_add(Nanos::of_us(delay));
    if c.past_deadline(started, at) {
        if let Some(mut controls) = c.controls() {
            controls.retry_dropped(source, now);
        }
        return false;
    }
    c.rec.note(Happened::RetryWaiting);
    c.until(at).await;
    let due = c.rec.note(Happened::RetryDue);
    c.late().retry_delays.record(
        c.rec
            .instant_of(due)
            .saturating_duration_since(c.rec.instant_of(at)),
    );
    true
}

/// What the controls say of an attempt about to go.
enum Admission {
    Now,
    /// After this long (a rate limiter's token), ns.
    After(Nanos),
    /// Refused; `retried` if the client's retry treats it as an error.
    Refused {
        retried: bool,
    },
}

/// Asks the controls (none: send now), the lock held only for the asking.
fn admit(c: &Clients, source: u32, now: Nanos, retry: bool) -> Admission {
    let Some(mut controls) = c.controls() else {
        return Admission::Now;
    };
    match controls.admit(source, now, retry) {
        Some(wait) if wait.is_zero() => Admission::Now,
        Some(wait) => Admission::After(wait),
        None => {
            if retry {
                controls.retry_dropped(source, now);
            }
            Admission::Refused {
                retried: controls.refusal_retried(),
            }
        }
    }
}
