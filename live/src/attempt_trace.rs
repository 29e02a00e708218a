//! `herdsim serve --trace`: one row per attempt the server answered, in the
//! columns `herdsim conform` reads (`call,sent_ms,done_ms,outcome`), so that
//! a real client library's retries, made inside the client where no one
//! else sees them, can be held to its own configuration. The call an
//! attempt belongs to is a request header the client sends the same on
//! every attempt of a call (`--call-id-header`; botocore's
//! `amz-sdk-invocation-id` is one).

use std::fmt::Write as _;
use std::sync::Mutex;

use herdsim::model::server::Nanos;

/// The header read by default for an attempt's call.
pub const DEFAULT_CALL_ID_HEADER: &str = "x-call-id";

/// How an attempt was answered, as the trace names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TracedOutcome {
    Success,
    Failure,
    Throttled,
    /// The client hung up before the reply (its timeout or deadline): the
    /// attempt's `done` is when it did.
    Timeout,
}

impl TracedOutcome {
    fn name(self) -> &'static str {
        match self {
            TracedOutcome::Success => "success",
            TracedOutcome::Failure => "failure",
            TracedOutcome::Throttled => "throttled",
            TracedOutcome::Timeout => "timeout",
        }
    }
}

/// One answered attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedAttempt {
    /// The call id header's value (an attempt without one is a call of its
    /// own, named `anonymous-N`).
    pub call: String,
    /// Arrival at the server, on serve's clock (ns after the first request).
    pub sent: Nanos,
    /// When the reply was sent.
    pub done: Nanos,
    pub outcome: TracedOutcome,
}

/// The attempts so far, shared by the connections.
#[derive(Debug)]
pub struct AttemptTrace {
    header: String,
    rows: Mutex<Vec<TracedAttempt>>,
}

impl AttemptTrace {
    /// An empty trace keyed by `header` (matched case-insensitively, as
    /// HTTP header names are).
    pub fn new(header: &str) -> Self {
        AttemptTrace {
            header: header.to_ascii_lowercase(),
            rows: Mutex::new(Vec::new()),
        }
    }

    /// The header naming an attempt's call.
    pub fn header(&self) -> &str {
        &self.header
    }

    /// Records one answered attempt; `call` is `None` without the header.
    pub fn record(&self, call: Option<String>, sent: Nanos, done: Nanos, outcome: TracedOutcome) {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let call = call.unwrap_or_else(|| format!("anonymous-{}", rows.len()));
        rows.push(TracedAttempt {
            call,
            sent,
            done,
            outcome,
        });
    }

    /// The rows so far, in the order of their replies.
    pub fn rows(&self) -> Vec<TracedAttempt> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The trace as CSV, sorted by arrival (ties by reply), times in ms
    /// with µs digits.
    pub fn csv(&self) -> String {
        let mut rows = self.rows();
        rows.sort_by_key(|r| (r.sent, r.done));
        let mut out = String::from("call,sent_ms,done_ms,outcome\n");
        for r in &rows {
            let _ = writeln!(
                out,
                "{},{},{},{}",
                csv_field(&r.call),
                ms(r.sent),
                ms(r.done),
                r.outcome.name()
            );
        }
        out
    }
}

/// An attempt on its way: recorded with its outcome by [`Pending::answered`],
/// or as a `timeout` at the moment it is dropped unanswered (the client
/// hung up, and the connection's task dropped the attempt's future).
pub struct Pending<'a, F: Fn() -> Nanos> {
    trace: &'a AttemptTrace,
    /// `None` once recorded.
    call: Option<Option<String>>,
    sent: Nanos,
    now: F,
}

impl<'a, F: Fn() -> Nanos> Pending<'a, F> {
    /// An attempt of `call` that arrived at `sent`; `now` reads serve's clock.
    pub fn new(trace: &'a AttemptTrace, call: Option<String>, sent: Nanos, now: F) -> Self {
        Pending {
            trace,
            call: Some(call),
            sent,
            now,
        }
    }

    /// The reply is going out.
    pub fn answered(mut self, outcome: TracedOutcome) {
        if let Some(call) = self.call.take() {
            self.trace.record(call, self.sent, (self.now)(), outcome);
        }
    }
}

impl<F: Fn() -> Nanos> Drop for Pending<'_, F> {
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            self.trace
                .record(call, self.sent, (self.now)(), TracedOutcome::Timeout);
        }
    }
}

/// ns as ms with three decimals (µs).
fn ms(t: Nanos) -> String {
    let us = t.ticks() / 1_000;
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

/// A call id as one CSV field: quoted when it holds a comma, quote or line
/// break (a client chooses its ids).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_out_by_arrival_with_ids_quoted_where_they_must_be() {
        let trace = AttemptTrace::new("X-Call-Id");
        assert_eq!(trace.header(), "x-call-id");
        let ns = Nanos::from_ticks;
        trace.record(
            Some("b".into()),
            ns(2_500_000),
            ns(3_000_000),
            TracedOutcome::Success,
        );
        trace.record(
            Some("a,1".into()),
            ns(1_000_123),
            ns(2_000_000),
            TracedOutcome::Failure,
        );
        trace.record(None, ns(4_000_000), ns(4_000_000), TracedOutcome::Throttled);
        drop(Pending::new(
            &trace,
            Some("gone".into()),
            ns(5_000_000),
            || Nanos::from_ticks(6_000_000),
        ));
        Pending::new(&trace, Some("c".into()), ns(7_000_000), || {
            Nanos::from_ticks(8_000_000)
        })
        .answered(TracedOutcome::Success);
        assert_eq!(
            trace.csv(),
            "call,sent_ms,done_ms,outcome\n\
             \"a,1\",1.000,2.000,failure\n\
             b,2.500,3.000,success\n\
             anonymous-2,4.000,4.000,throttled\n\
             gone,5.000,6.000,timeout\n\
             c,7.000,8.000,success\n"
        );
    }
}
