//! A recorded retry trace: what anyone can log of a client's calls. One row
//! per attempt: the call it belongs to, when it was sent, and how it ended;
//! optionally when its outcome was known (the server's reply), which takes
//! the attempt's own duration out of the gap to the next attempt.
//!
//! The columns are named in a header: `call`, one of `sent_s`, `sent_ms`,
//! `sent_us` or `sent_ns` (a number, fractions allowed: epoch seconds or a
//! monotonic clock), `outcome`, and optionally `done_*` in the same unit.
//! Other columns are ignored. Outcomes are words a log has: `success`/`ok`,
//! `failure`/`error`/`unavailable`, `throttled`/`rejected`/
//! `resource_exhausted`, `timeout`/`deadline_exceeded`, or the HTTP status
//! (2xx success, 429 throttled, 408 and 504 timeout, other 4xx and 5xx
//! failure).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::control::Outcome;
use crate::model::server::Nanos;

/// One attempt of a recorded call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attempt {
    /// When it was sent, ns from the trace's first send.
    pub sent: Nanos,
    /// When its outcome was known, if the trace says.
    pub done: Option<Nanos>,
    pub outcome: Outcome,
}

/// One call: its attempts in the order they were sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call's id as the trace wrote it.
    pub id: String,
    pub attempts: Vec<Attempt>,
}

/// A trace: its calls in the order of their first attempts.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub calls: Vec<Call>,
    /// True if the trace gives the time each outcome was known.
    pub has_done: bool,
    /// The last time in the trace (a send, or an outcome), ns.
    pub end: Nanos,
}

/// The time units a trace's columns may carry, by suffix.
const UNITS: [(&str, f64); 4] = [("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)];

/// Most rows a trace may have: ten million attempts.
pub const MAX_ROWS: usize = 10_000_000;

/// Reads `text`, the CSV of a trace named `file`; the error is one line
/// naming the file, the row and the column.
pub fn parse(file: &str, text: &str) -> Result<Trace, String> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| format!("{file}: cannot read the header: {e}"))?
        .clone();
    let column = |name: &str| header.iter().position(|h| h == name);
    let Some(call_at) = column("call") else {
        return Err(format!(
            "{file}: the header has no `call` column (a trace has the columns call, sent_s \
             (or sent_ms, sent_us, sent_ns) and outcome, and optionally done_* in the same unit)"
        ));
    };
    let Some((unit, sent_at, ns_per)) = UNITS
        .iter()
        .find_map(|&(unit, ns)| column(&format!("sent_{unit}")).map(|at| (unit, at, ns)))
    else {
        return Err(format!(
            "{file}: the header has no send-time column: name it sent_s, sent_ms, sent_us or \
             sent_ns by its unit"
        ));
    };
    let Some(outcome_at) = column("outcome") else {
        return Err(format!("{file}: the header has no `outcome` column"));
    };
    let done_at = column(&format!("done_{unit}"));
    if done_at.is_none()
        && let Some(other) = UNITS
            .iter()
            .find(|(u, _)| column(&format!("done_{u}")).is_some())
    {
        return Err(format!(
            "{file}: done_{} is not in the unit of sent_{unit}: name both by one unit",
            other.0
        ));
    }
    let mut rows: Vec<(usize, f64, Option<f64>, Outcome)> = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    for (i, record) in reader.records().enumerate() {
        // Row numbers as an editor shows them: the header is row 1.
        let row = i + 2;
        let record = record.map_err(|e| format!("{file}: row {row}: {e}"))?;
        if rows.len() == MAX_ROWS {
            return Err(format!(
                "{file}: more than {MAX_ROWS} attempts; conform a sample of the calls"
            ));
        }
        let field = |at: usize| record.get(at).unwrap_or("");
        let id = field(call_at);
        if id.is_empty() {
            return Err(format!("{file}: row {row}: `call` is empty"));
        }
        let time = |at: usize, name: &str| -> Result<f64, String> {
            let text = field(at);
            match text.parse::<f64>() {
                Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
                _ => Err(format!(
                    "{file}: row {row}: {name}_{unit} is {text:?}; expected a time of 0 or more"
                )),
            }
        };
        let sent = time(sent_at, "sent")?;
        let done = done_at.map(|at| time(at, "done")).transpose()?;
        if let Some(done) = done
            && done < sent
        {
            return Err(format!(
                "{file}: row {row}: done_{unit} {done} is before sent_{unit} {sent}"
            ));
        }
        let outcome = outcome_of(field(outcome_at)).ok_or_else(|| {
            format!(
                "{file}: row {row}: outcome {:?} is not one of success, failure, throttled, \
                 timeout (or ok, error, unavailable, rejected, resource_exhausted, \
                 deadline_exceeded, an HTTP status)",
                field(outcome_at)
            )
        })?;
        let next = names.len();
        let call = *ids.entry(id.to_string()).or_insert_with(|| {
            names.push(id.to_string());
            next
        });
        rows.push((call, sent, done, outcome));
    }
    if rows.is_empty() {
        return Err(format!("{file}: the trace has no attempts"));
    }
    let origin = rows.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let to_ns = |t: f64| Nanos::from_ticks(((t - origin) * ns_per).round() as u64);
    let mut calls: Vec<Call> = names
        .into_iter()
        .map(|id| Call {
            id,
            attempts: Vec::new(),
        })
        .collect();
    let mut end = Nanos::ZERO;
    for (call, sent, done, outcome) in rows {
        let attempt = Attempt {
            sent: to_ns(sent),
            done: done.map(to_ns),
            outcome,
        };
        end = end
            .max(attempt.sent)
            .max(attempt.done.unwrap_or(Nanos::ZERO));
        calls[call].attempts.push(attempt);
    }
    for call in &mut calls {
        // Stable: attempts logged at one instant keep the trace's order.
        call.attempts.sort_by_key(|a| a.sent);
    }
    calls.sort_by_key(|c| c.attempts[0].sent);
    Ok(Trace {
        calls,
        has_done: done_at.is_some(),
        end,
    })
}

/// The outcome a log's word or HTTP status names.
fn outcome_of(text: &str) -> Option<Outcome> {
    let word = text.to_ascii_lowercase();
    if let Ok(status) = word.parse::<u16>() {
        return match status {
            200..=299 => Some(Outcome::Success),
            429 => Some(Outcome::Rejected),
            408 | 504 => Some(Outcome::Timeout),
            400..=599 => Some(Outcome::Failure),
            _ => None,
        };
    }
    match word.as_str() {
        "success" | "ok" => Some(Outcome::Success),
        "failure" | "error" | "unavailable" | "failed" => Some(Outcome::Failure),
        "throttled" | "rejected" | "resource_exhausted" | "throttle" => Some(Outcome::Rejected),
        "timeout" | "deadline_exceeded" | "timed_out" => Some(Outcome::Timeout),
        _ => None,
    }
}

/// The word a trace writes for `outcome`.
pub fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
        Outcome::Rejected => "throttled",
        Outcome::Timeout => "timeout",
    }
}

impl Trace {
    /// The trace as CSV in milliseconds (`call,sent_ms,done_ms,outcome`,
    /// `done_ms` only if the trace has it), as [`parse`] reads it back.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        out.push_str(if self.has_done {
            "call,sent_ms,done_ms,outcome\n"
        } else {
            "call,sent_ms,outcome\n"
        });
        let ms = |t: Nanos| t.ticks() as f64 / 1e6;
        for call in &self.calls {
            for a in &call.attempts {
                let _ = write!(out, "{},{}", call.id, ms(a.sent));
                if let Some(done) = a.done.filter(|_| self.has_done) {
                    let _ = write!(out, ",{}", ms(done));
                }
                let _ = writeln!(out, ",{}", outcome_word(a.outcome));
            }
        }
        out
    }

    /// Attempts in the trace.
    pub fn attempts(&self) -> usize {
        self.calls.iter().map(|c| c.attempts.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_read_by_its_header_in_any_column_order_and_unit() {
        let text = "outcome,extra,sent_us,call\nerror,x,1500,a\n200,y,250,b\nok,z,2500.5,a\n";
        let trace = parse("t.csv", text).unwrap();
        assert_eq!(trace.calls.len(), 2);
        // Calls in order of their first attempt: b (250 µs) before a.
        assert_eq!(trace.calls[0].id, "b");
        let a = &trace.calls[1];
        assert_eq!(a.attempts.len(), 2);
        // Times from the first send: 1,500 − 250 µs.
        assert_eq!(a.attempts[0].sent, Nanos::from_ticks(1_250_000));
        assert_eq!(a.attempts[1].sent, Nanos::from_ticks(2_250_500));
        assert_eq!(a.attempts[0].outcome, Outcome::Failure);
        assert_eq!(a.attempts[1].outcome, Outcome::Success);
        assert!(!trace.has_done);
        assert_eq!(trace.end, Nanos::from_ticks(2_250_500));
    }

    #[test]
    fn a_trace_round_trips_through_its_csv() {
        let text =
            "call,sent_ms,done_ms,outcome\nc1,0,1,failure\nc1,5,6,throttled\nc2,7,8,timeout\n";
        let trace = parse("t.csv", text).unwrap();
        assert!(trace.has_done);
        assert_eq!(parse("again.csv", &trace.to_csv()).unwrap(), trace);
    }

    #[test]
    fn every_bad_row_is_named_with_its_column() {
        let cases = [
            ("sent_ms,outcome\n1,ok\n", "no `call` column"),
            ("call,sent,outcome\na,1,ok\n", "name it sent_s"),
            ("call,sent_ms\na,1\n", "no `outcome` column"),
            (
                "call,sent_ms,done_s,outcome\na,1,1,ok\n",
                "done_s is not in the unit",
            ),
            (
                "call,sent_ms,outcome\na,-1,ok\n",
                "row 2: sent_ms is \"-1\"",
            ),
            (
                "call,sent_ms,outcome\na,1,ok\nb,x,ok\n",
                "row 3: sent_ms is \"x\"",
            ),
            (
                "call,sent_ms,outcome\na,1,maybe\n",
                "row 2: outcome \"maybe\"",
            ),
            (
                "call,sent_ms,done_ms,outcome\na,2,1,ok\n",
                "done_ms 1 is before",
            ),
            ("call,sent_ms,outcome\n,1,ok\n", "`call` is empty"),
            ("call,sent_ms,outcome\n", "no attempts"),
        ];
        for (text, expected) in cases {
            let error = parse("t.csv", text).unwrap_err();
            assert!(error.starts_with("t.csv: "), "{error}");
            assert!(error.contains(expected), "{text:?}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn http_statuses_and_grpc_codes_name_outcomes() {
        for (word, outcome) in [
            ("503", Outcome::Failure),
            ("429", Outcome::Rejected),
            ("504", Outcome::Timeout),
            ("204", Outcome::Success),
            ("UNAVAILABLE", Outcome::Failure),
            ("RESOURCE_EXHAUSTED", Outcome::Rejected),
            ("DEADLINE_EXCEEDED", Outcome::Timeout),
            ("OK", Outcome::Success),
        ] {
            assert_eq!(outcome_of(word), Some(outcome), "{word}");
        }
        assert_eq!(outcome_of("302"), None);
    }
}
