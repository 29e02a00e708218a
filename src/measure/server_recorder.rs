//! Counts what a server run measures as it happens: the run's totals, each
//! window's counts and backlog, the areas under the queue, the busy workers
//! and the retries waiting, latencies, and at the end the verdict. The
//! server loop tells it what happened and never writes a metric itself, as
//! the herd's loops tell [`crate::measure::recorder::Recorder`].

use crate::measure::layer_metrics::LayerMetrics;
use crate::measure::metrics::nearest_ranks;
use crate::measure::server_metrics::{Cut, MAX_WINDOWS, ServerMetrics, Window, success_over};
use crate::measure::verdict::{Goodput, Judged, Verdict, judge, judged_windows};
use crate::model::server::{Nanos, ServerSpec};

/// What a window that ends in a state records of it: the queue, the busy
/// workers and the retries waiting out their delay (its backlog).
#[derive(Debug, Clone, Copy)]
pub struct Backlog {
    pub queue: u64,
    pub busy: u64,
    pub retries_waiting: u64,
}

/// Writes `backlog` as window `w`'s state at its end.
fn set_backlog(w: &mut Window, backlog: Backlog) {
    w.queue = backlog.queue;
    w.busy = backlog.busy;
    w.retries_waiting = backlog.retries_waiting;
}

/// A server run's measurements as they are made.
#[derive(Debug, Clone)]
pub struct ServerRecorder {
    m: ServerMetrics,
    /// The window width and the load's duration, ns.
    window: Nanos,
    duration: Nanos,
    /// When the areas were last brought up to date.
    areas_at: Nanos,
    /// Latencies of the current window's successes, the only window that
    /// can still gain one (successes come in time order): its quantiles are
    /// exact, written when the next window is entered, and memory is one
    /// window's successes. `None` if the caller does not want them.
    window_latencies: Option<Vec<Nanos>>,
    /// The window of the event being handled.
    current_window: usize,
    /// Its counts so far, added to its entry in the series when the next
    /// window is entered: counting here indexes nothing (into the series,
    /// each of a request's four counts was a bounds check and reloads).
    counts: Window,
    /// The latest open-loop arrival, ns (a fixed request count's load end).
    last_arrival: Nanos,
    /// Requests ending before this (the first trigger's start) are judged.
    judged_before: Nanos,
    /// Requests made from this (the last trigger's end) are judged.
    judged_after: Nanos,
}

impl ServerRecorder {
    /// Nothing measured yet of a run of `spec`; each window's latency
    /// quantiles are kept if `window_latencies`.
    pub fn new(spec: &ServerSpec, window_latencies: bool) -> Self {
        ServerRecorder {
            m: ServerMetrics {
                layers: if spec.chain.is_layered() {
                    vec![LayerMetrics::default(); spec.chain.depth as usize]
                } else {
                    Vec::new()
                },
                duration_ns: spec.duration,
                workers: spec.workers.unwrap_or(u32::MAX),
                complete: true,
                ..ServerMetrics::default()
            },
            window: spec.window,
            duration: spec.duration,
            areas_at: Nanos::ZERO,
            window_latencies: window_latencies.then(Vec::new),
            current_window: 0,
            counts: Window::default(),
            last_arrival: Nanos::ZERO,
            // Without a trigger there is no verdict: judge nothing, and the
            // loop pays no latency square per success.
            judged_before: spec.first_trigger_start().unwrap_or(Nanos::ZERO),
            judged_after: spec.last_trigger_end().unwrap_or(Nanos::MAX),
        }
    }

    /// The metrics so far.
    pub fn metrics(&self) -> &ServerMetrics {
        &self.m
    }

    /// Events handled so far (written back by the loop, which counts them
    /// in a register).
    pub fn events(&self) -> u64 {
        self.m.events
    }

    /// The loop's count of events handled.
    pub fn set_events(&mut self, events: u64) {
        self.m.events = events;
    }

    /// One more event handled (a path stepped one at a time).
    pub fn count_event(&mut self) {
        self.m.events += 1;
    }

    /// The run stops short: incomplete, `cut` saying why if a bound did.
    #[cold]
    pub fn stopped(&mut self, cut: Option<Cut>) {
        self.m.complete = false;
        if cut.is_some() {
            self.m.cut = cut;
        }
    }

    /// The run stops at its event limit.
    #[cold]
    pub fn hit_event_limit(&mut self) {
        self.m.complete = false;
        self.m.hit_event_limit = true;
    }

    /// True once the event limit stopped it.
    #[inline]
    pub fn event_limit_hit(&self) -> bool {
        self.m.hit_event_limit
    }

    /// Requests ended so far (succeeded or gave up), for progress.
    pub fn ended(&self) -> u64 {
        self.m.successes + self.m.gave_up
    }

    /// Does the verdict judge a users' request made at `started` that ends
    /// at `now`? Before the first trigger, all; after it, those made after
    /// the last trigger's end ([`Window::judged_successes`]).
    #[inline(always)]
    fn judged(&self, now: Nanos, started: Nanos) -> bool {
        now < self.judged_before || started >= self.judged_after
    }

    /// A users' request was made (`None`: by a closed-loop user) or an
    /// open-loop one arrived at `arrived`.
    #[inline(always)]
    pub fn request_made(&mut self, arrived: Option<Nanos>) {
        self.m.requests += 1;
        self.counts.arrivals += 1;
        if let Some(t) = arrived {
            self.last_arrival = t;
        }
    }

    /// A request to service `layer` started (a users' one, or a call below).
    #[inline(always)]
    pub fn call_started(&mut self, layer: u8) {
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.calls += 1;
        }
    }

    /// An attempt to service `layer` was sent.
    #[inline(always)]
    pub fn attempt_sent(&mut self, layer: u8) {
        if layer == 0 {
            self.m.attempts += 1;
            self.counts.attempts += 1;
        }
    }

    /// The controls refused a users' attempt.
    pub fn refused(&mut self) {
        self.m.refused += 1;
    }

    /// An attempt reached an upper service `layer`.
    pub fn at_upper(&mut self, layer: u8) {
        self.m.layers[usize::from(layer)].attempts += 1;
    }

    /// An attempt reached the server.
    #[inline(always)]
    pub fn at_server(&mut self) {
        self.m.arrived_at_server += 1;
    }

    /// An attempt waits in the server's queue, now `queued` long.
    #[inline(always)]
    pub fn queued(&mut self, queued: usize) {
        self.m.queue_peak = self.m.queue_peak.max(queued as u64);
    }

    /// A worker took an attempt that arrived at `arrived` for `service`,
    /// done at `done`; `wasted` if its caller ignores its reply.
    #[inline(always)]
    pub fn served(&mut self, arrived: Nanos, service: Nanos, done: Nanos, wasted: bool) {
        self.m.busy_ns += u128::from(service.ticks());
        self.m.served += 1;
        self.m.sojourn_ns += u128::from((done - arrived).ticks());
        if wasted {
            self.m.wasted_ns += u128::from(service.ticks());
        }
    }

    /// The server refused an attempt.
    pub fn rejected(&mut self) {
        self.m.rejected += 1;
        self.counts.rejected += 1;
    }

    /// An upper service `layer`'s worker held an attempt `held` ns,
    /// `wasted` if its caller ignores the reply.
    pub fn upper_held(&mut self, layer: u8, held: Nanos, wasted: bool) {
        let metrics = &mut self.m.layers[usize::from(layer)];
        metrics.busy_ns += u128::from(held.ticks());
        if wasted {
            metrics.wasted_ns += u128::from(held.ticks());
        }
    }

    /// An attempt to service `layer` timed out at its client.
    #[inline]
    pub fn timed_out(&mut self, layer: u8) {
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.timeouts += 1;
        }
        if layer == 0 {
            self.users_timed_out(1);
        }
    }

    /// `count` of the users' attempts timed out (a late reply noticed, or a
    /// hedged request's copies at its deadline).
    #[inline]
    pub fn users_timed_out(&mut self, count: u64) {
        self.m.timeouts += count;
        self.counts.timeouts += count;
    }

    /// The request to service `layer` made at `started` succeeded at `now`.
    #[inline(always)]
    pub fn succeeded(&mut self, layer: u8, started: Nanos, now: Nanos) {
        let latency = now - started;
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.successes += 1;
            l.latency.record(latency.ticks());
        }
        if layer > 0 {
            return;
        }
        self.m.successes += 1;
        self.counts.successes += 1;
        self.counts.latency_sum_ns += latency.ticks();
        if self.judged(now, started) {
            let w = &mut self.counts;
            w.judged_successes += 1;
            w.judged_latency_sum_ns += latency.ticks();
            let latency_ms = latency.ticks() as f64 / 1e6;
            w.judged_latency_squares_ms2 += latency_ms * latency_ms;
        }
        self.m.latency.record(latency.ticks());
        self.m.latency_total_ns += u128::from(latency.ticks());
        if let Some(latencies) = &mut self.window_latencies {
            latencies.push(latency);
        }
    }

    /// The request to service `layer` made at `started` gave up at `now`.
    pub fn gave_up(&mut self, layer: u8, started: Nanos, now: Nanos) {
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.gave_up += 1;
        }
        if layer == 0 {
            self.m.gave_up += 1;
            self.counts.gave_up += 1;
            if self.judged(now, started) {
                self.counts.judged_gave_up += 1;
            }
        }
    }

    /// Brings the queue, busy and retry areas up to `t` (within the load's
    /// duration) with the `backlog` that held since the last time, before
    /// any of them changes at `t`: the events that change none of them skip
    /// it, and the sums are the same, to the ns. The backlog is read only
    /// when time has moved on (most events at a busy server share none).
    #[inline]
    pub fn advance_areas(&mut self, t: Nanos, backlog: impl FnOnce() -> Backlog) {
        let until = t.min(self.duration);
        if until > self.areas_at {
            let backlog = backlog();
            let span = u128::from((until - self.areas_at).ticks());
            self.m.queue_area += span * u128::from(backlog.queue);
            self.m.retries_waiting_area += span * u128::from(backlog.retries_waiting);
            self.m.busy_area += span * u128::from(backlog.busy);
            self.areas_at = until;
        }
    }

    /// Makes the window holding `t` current, growing the series to it (one
    /// division per window entered, not per count), once the current one's
    /// counts and latencies are written; windows passed without an event
    /// end with `backlog`, the state as it stands. False, with the run
    /// marked cut, if the window holding `t` would pass [`MAX_WINDOWS`].
    #[cold]
    pub fn enter_window(&mut self, t: Nanos, backlog: Backlog) -> bool {
        self.close_window();
        let i = t / self.window;
        if i >= MAX_WINDOWS {
            self.stopped(Some(Cut::Windows { at_ns: t }));
            return false;
        }
        let i = i as usize;
        self.current_window = i;
        if i >= self.m.windows.len() {
            for w in self.m.windows.iter_mut().rev() {
                if w.queue != u64::MAX {
                    break;
                }
                set_backlog(w, backlog);
            }
            self.m.windows.resize(
                i + 1,
                Window {
                    queue: u64::MAX,
                    ..Window::default()
                },
            );
        }
        true
    }

    /// The window of the event being handled.
    pub fn current_window(&self) -> usize {
        self.current_window
    }

    /// True if no window was entered yet.
    pub fn no_window_yet(&self) -> bool {
        self.m.windows.is_empty()
    }

    /// Writes the current window's counts and its latency quantiles, if it
    /// had successes, and empties both for the next.
    fn close_window(&mut self) {
        let counts = std::mem::take(&mut self.counts);
        if let Some(w) = self.m.windows.get_mut(self.current_window) {
            w.add_counts(&counts);
        }
        let Some(latencies) = self.window_latencies.as_mut().filter(|l| !l.is_empty()) else {
            return;
        };
        let w = &mut self.m.windows[self.current_window];
        let [p50, p99] = nearest_ranks(latencies, [50.0, 99.0]);
        w.latency_p50_ns = Some(p50);
        w.latency_p99_ns = Some(p99);
        latencies.clear();
    }

    /// The run's metrics, its last event at `end` with `backlog` standing:
    /// the last window written, the series' backlog filled, the server's
    /// layer totals, and the verdict where a trigger asks for one.
    /// `storage` is what the loop held at its largest:
    /// `(peak_in_flight, state_bytes, kept_wins)`.
    pub fn finish(
        mut self,
        spec: &ServerSpec,
        end: Nanos,
        backlog: Backlog,
        storage: (u64, u64, u64),
    ) -> ServerMetrics {
        (self.m.peak_in_flight, self.m.state_bytes, self.m.kept_wins) = storage;
        self.advance_areas(end, || backlog);
        // The last event's window was entered, so it is within the bound.
        self.enter_window(end, backlog);
        for w in self.m.windows.iter_mut().filter(|w| w.queue == u64::MAX) {
            set_backlog(w, backlog);
        }
        let m = &mut self.m;
        m.end_ns = end;
        if let Some(server) = m.layers.last_mut() {
            server.attempts = m.arrived_at_server;
            server.rejected = m.rejected;
            server.busy_ns = m.busy_ns;
            server.wasted_ns = m.wasted_ns;
        }
        m.load_end_ns = match spec.requests {
            Some(_) => self.last_arrival,
            None => spec.duration,
        };
        if let (Some(first), Some(last)) = (spec.first_trigger_start(), spec.last_trigger_end()) {
            let window = spec.window;
            // A run cut short (its horizon) saw its load only until the cut.
            let seen_until = if m.complete {
                m.load_end_ns
            } else {
                m.load_end_ns.min(end)
            };
            let judgement = judge(&Judged {
                windows: &m.windows,
                window,
                first_trigger: first,
                last_trigger_end: last,
                patience: spec.patience,
                load_end: seen_until,
                goodput: Goodput::of(&spec.load),
            });
            let verdict = judgement.verdict;
            m.verdict = Some(verdict);
            m.backlog_trend = judgement.trend;
            let (from, to) = (first / window, last.div_ceil(window));
            let (during, ended) = success_over(&m.windows, from as usize, to as usize);
            m.success_during_trigger = during;
            m.ended_during_trigger = Some(ended);
            if verdict != Verdict::Unresolved {
                let (after_from, after_to) = judged_windows(window, last, spec.patience);
                m.success_after_trigger = success_over(&m.windows, after_from, after_to).0;
            }
        }
        self.m
    }
}
