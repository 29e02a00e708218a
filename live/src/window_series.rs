//! What the live server counts, window by window, in the columns of
//! `herdsim run --series` where the two share a quantity (`attempts`,
//! `successes`, `rejected`, `queue`, `busy_workers`), so that a serve's
//! series and a run's join on `window_start_ms`; and the same counts as
//! Prometheus text for `/metrics`.

use std::fmt::Write as _;

use herdsim::base::format::csv_number;
use herdsim::model::server::Nanos;

/// One window's counts, and the queue and busy workers as it ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerWindow {
    /// Attempts that reached the server.
    pub attempts: u64,
    /// Attempts a worker finished.
    pub completions: u64,
    /// Of those, the ones that succeeded.
    pub successes: u64,
    /// Attempts refused (a full queue, shedding, the discipline's drops).
    pub rejected: u64,
    /// Attempts waiting as the window ended.
    pub queue: u64,
    /// Busy workers as it ended.
    pub busy: u64,
}

/// The run's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub attempts: u64,
    pub completions: u64,
    pub successes: u64,
    pub rejected: u64,
    /// The longest the queue was.
    pub queue_peak: u64,
    /// Worker time spent serving, ns (finished attempts).
    pub busy_ns: u128,
}

/// The windows so far and the run's totals.
#[derive(Debug, Clone)]
pub struct WindowSeries {
    window: Nanos,
    /// Closed windows, then the current one.
    windows: Vec<ServerWindow>,
    totals: Totals,
}

/// The series file's columns.
pub const HEADER: &str =
    "window_start_ms,attempts,completions,successes,rejected,queue,busy_workers\n";

impl WindowSeries {
    /// No window yet, windows `window` ns wide.
    pub fn new(window: Nanos) -> Self {
        WindowSeries {
            window: window.max(Nanos::from_ticks(1)),
            windows: vec![ServerWindow::default()],
            totals: Totals::default(),
        }
    }

    /// The windows before `now` end with `queue` and `busy` (the state
    /// before whatever happens at `now`); the one holding `now` is current.
    pub fn advance(&mut self, now: Nanos, queue: u64, busy: u64) {
        let index = (now / self.window) as usize;
        while self.windows.len() <= index {
            let last = self.windows.last_mut().expect("one window at least");
            last.queue = queue;
            last.busy = busy;
            self.windows.push(ServerWindow::default());
        }
    }

    fn current(&mut self) -> &mut ServerWindow {
        self.windows.last_mut().expect("one window at least")
    }

    pub fn attempt_arrived(&mut self) {
        self.totals.attempts += 1;
        self.current().attempts += 1;
    }

    pub fn rejected(&mut self, count: u64) {
        self.totals.rejected += count;
        self.current().rejected += count;
    }

    /// An attempt joined the queue, now `length` long.
    pub fn queued(&mut self, length: u64) {
        self.totals.queue_peak = self.totals.queue_peak.max(length);
    }

    /// A worker finished an attempt it held `held` ns.
    pub fn completed(&mut self, succeeded: bool, held: Nanos) {
        self.totals.completions += 1;
        self.totals.busy_ns += u128::from(held.ticks());
        let w = self.current();
        w.completions += 1;
        if succeeded {
            w.successes += 1;
            self.totals.successes += 1;
        }
    }

    /// The current window ends (the serve stops) with `queue` and `busy`.
    pub fn close(&mut self, queue: u64, busy: u64) {
        let w = self.current();
        w.queue = queue;
        w.busy = busy;
    }

    pub fn windows(&self) -> &[ServerWindow] {
        &self.windows
    }

    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Every window as CSV, header first.
    pub fn csv(&self) -> String {
        let mut text = HEADER.to_string();
        for (i, w) in self.windows.iter().enumerate() {
            let start_ms = (self.window * i as u64).ticks() as f64 / 1e6;
            let _ = writeln!(
                text,
                "{},{},{},{},{},{},{}",
                csv_number(start_ms),
                w.attempts,
                w.completions,
                w.successes,
                w.rejected,
                w.queue,
                w.busy
            );
        }
        text
    }

    /// The totals and the state now as Prometheus text (exposition format
    /// 0.0.4): counters since the serve began, gauges of now.
    pub fn prometheus(&self, queue: u64, busy: u64, workers: u32, uptime_s: f64) -> String {
        let t = self.totals;
        let mut text = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, value: String| {
            let _ = write!(
                text,
                "# HELP herdsim_{name} {help}\n# TYPE herdsim_{name} {kind}\nherdsim_{name} {value}\n"
            );
        };
        let counters = [
            (
                "attempts_total",
                "Attempts that reached the server.",
                t.attempts,
            ),
            (
                "completions_total",
                "Attempts a worker finished.",
                t.completions,
            ),
            (
                "successes_total",
                "Finished attempts that succeeded.",
                t.successes,
            ),
            (
                "rejected_total",
                "Attempts refused: a full queue, shedding or the discipline's drops.",
                t.rejected,
            ),
        ];
        for (name, help, value) in counters {
            metric(name, "counter", help, value.to_string());
        }
        metric(
            "busy_seconds_total",
            "counter",
            "Worker time spent on finished attempts.",
            format!("{}", t.busy_ns as f64 / 1e9),
        );
        let gauges = [
            ("queue_length", "Attempts waiting now.", queue),
            (
                "queue_peak",
                "The longest the queue has been.",
                t.queue_peak,
            ),
            ("busy_workers", "Workers serving an attempt now.", busy),
            (
                "workers",
                "Workers the spec gives now (capacity drops included).",
                u64::from(workers),
            ),
        ];
        for (name, help, value) in gauges {
            metric(name, "gauge", help, value.to_string());
        }
        metric(
            "uptime_seconds",
            "gauge",
            "Time since the first request (the clock the triggers follow).",
            format!("{uptime_s}"),
        );
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows passed without an event end with the state that held; each
    /// count lands in the window of its time.
    #[test]
    fn counts_land_in_their_windows_and_idle_windows_keep_the_state() {
        let ms = herdsim::model::server::NS_PER_MS;
        let mut s = WindowSeries::new(10 * ms);
        s.advance(ms, 0, 0);
        s.attempt_arrived();
        s.advance(35 * ms, 3, 2);
        s.completed(true, 20 * ms);
        s.close(1, 1);
        assert_eq!(s.windows().len(), 4);
        assert_eq!(s.windows()[0].attempts, 1);
        assert_eq!((s.windows()[1].queue, s.windows()[2].busy), (3, 2));
        assert_eq!(s.windows()[3].successes, 1);
        assert_eq!((s.windows()[3].queue, s.windows()[3].busy), (1, 1));
        let csv = s.csv();
        assert!(csv.starts_with(HEADER));
        assert_eq!(csv.lines().nth(4), Some("30,0,1,1,0,1,1"));
        let prom = s.prometheus(1, 1, 4, 2.5);
        assert!(prom.contains("herdsim_successes_total 1\n"), "{prom}");
        assert!(prom.contains("# TYPE herdsim_queue_length gauge\n"));
    }
}
