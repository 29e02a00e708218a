//! A server run followed by its backlog (waiting attempts plus retries
//! waiting out their delay), event by event: how long the service takes to
//! reach a storm region or come back to calm, and the path splitting
//! ([`crate::sim::splitting`]) copies to estimate a storm's chance however
//! small. The backlog is the score of the exact chain's regions
//! ([`crate::exact`]), so the two meet on the same question.
//!
//! A path is judged from a moment on (a trigger's end, or the start): it
//! reaches the storm or calm region only from then, and at it the state as
//! it stands is the first judged. Splitting scores it from earlier, the
//! trigger's start: during the trigger the score is the backlog held below
//! the storm region, so a path whose trigger piled up work is copied before
//! the trigger ends (the state a trigger leaves is what decides a storm,
//! and its tail is where storms come from), while only a storm after the
//! trigger reaches the target. Any score that is a function of the time
//! and the state keeps splitting unbiased.
//!
//! A copy is the whole run paused between two events (its event calendar
//! holds every draw already made), given fresh draws. The key of
//! exponential timeouts ([`State::attempt_timeout`]) is not drawn again: a
//! run's timeouts are a function of that key, drawn once at its start, so
//! the key is part of the state a copy inherits. A path is followed while
//! the load runs: once arrivals stop every service drains, and a return
//! then says nothing of the service under its load.

use super::{
    Event, EventQueue, MAX_IN_FLIGHT, Mode, Nanos, OnMode, RadixQueue, ServerRetry, ServerSpec,
    State, policies_of, with_mode,
};
use crate::base::lookahead::Lookahead;
use crate::base::seeding::{Seeds, job_rng};
use crate::measure::observer::Watch;
use crate::measure::server_metrics::Cut;
use crate::model::server::CLOCK_END_NS;
use crate::policy::AnyPolicy;
use crate::sim::splitting::{SplitBatch, SplitPath, split};

/// What a backlog path watches for and when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathRules {
    /// Splitting's score starts here, ns: the first trigger's start, or 0.
    pub scored_from: Nanos,
    /// The regions are judged from here, ns: the last trigger's end, or 0.
    pub from: Nanos,
    /// The storm region: a backlog of at least this.
    pub storm: u64,
    /// The calm region, a backlog of at most this, where the path ends
    /// once scored (`None`: it ends only at the storm or the run's end).
    pub calm: Option<u64>,
    /// True if the path ends at the storm region (splitting: the rare event
    /// happened); false if it goes on to calm (a passage time's path).
    pub end_at_storm: bool,
    /// The load's end, ns: a path not decided by then is cut there (once
    /// arrivals stop every service drains, and a return to calm after it
    /// says nothing of the service under its load).
    pub until: Nanos,
    /// The most events one path may handle (a bound, as `--max-events`).
    pub max_events: u64,
}

/// What one path saw, times in ns from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Passage {
    /// When the backlog first reached the storm region once scored.
    pub storm_at: Option<Nanos>,
    /// When it first came back to the calm region once scored.
    pub calm_at: Option<Nanos>,
    /// True if a bound ended it first: the load's end, the horizon or the
    /// event limit.
    pub cut: bool,
}

impl Passage {
    /// True if the storm region came before the calm one (or the calm one
    /// never came).
    pub fn storm_first(&self) -> bool {
        match (self.storm_at, self.calm_at) {
            (Some(storm), Some(calm)) => storm <= calm,
            (storm, _) => storm.is_some(),
        }
    }
}

/// Where a path is in its rules' time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the score starts: below every level.
    Before,
    /// Scored (the backlog, held below the storm region), not judged.
    Trigger,
    /// Scored and judged.
    Judged,
}

/// One server run as a backlog path.
#[derive(Clone)]
struct ServerPath<'a, Q: EventQueue<Event>, M: Mode> {
    state: State<'a, Q, M>,
    rules: PathRules,
    phase: Phase,
    ended: bool,
    seen: Passage,
}

impl<'a, Q: EventQueue<Event>, M: Mode> ServerPath<'a, Q, M> {
    fn new(
        spec: &'a ServerSpec,
        retry: &ServerRetry,
        policies: &'a [AnyPolicy],
        seeds: Seeds,
        rules: PathRules,
        mode: M,
    ) -> Self {
        let watch = Watch {
            max_events: rules.max_events,
            on_progress: &|_, _| {},
            window_latencies: false,
        };
        ServerPath {
            state: State::new(spec, retry, policies, seeds, &watch, mode),
            rules,
            phase: Phase::Before,
            ended: false,
            seen: Passage::default(),
        }
    }

    /// The score now (-1 before it starts), noting the regions the
    /// backlog is in once they are judged, and whether the path ends there.
    fn score_at(&mut self, t: Nanos) -> i64 {
        let backlog = self.state.backlog_count();
        match self.phase {
            Phase::Before => -1,
            Phase::Trigger => backlog.min(self.rules.storm.saturating_sub(1)) as i64,
            Phase::Judged => {
                self.observe(backlog, t);
                backlog as i64
            }
        }
    }

    /// Notes the backlog `backlog` at `t`: the regions it is in, and
    /// whether the path ends there.
    fn observe(&mut self, backlog: u64, t: Nanos) {
        if backlog >= self.rules.storm && self.seen.storm_at.is_none() {
            self.seen.storm_at = Some(t);
            self.ended |= self.rules.end_at_storm;
        }
        if self.rules.calm.is_some_and(|calm| backlog <= calm) {
            self.seen.calm_at = Some(t);
            self.ended = true;
        }
    }
}

impl<Q: EventQueue<Event> + Clone + Send, M: Mode> SplitPath for ServerPath<'_, Q, M> {
    fn reseed(&mut self, key: u64) {
        self.state.reseed(Seeds::from_key(key));
    }

    fn run_past(&mut self, level: i64) -> Option<i64> {
        let horizon = self
            .state
            .spec
            .horizon
            .unwrap_or(CLOCK_END_NS - Nanos::from_ticks(1));
        while !self.ended {
            // A phase starts at its moment with the state as it stands
            // then, before any event after it.
            let (boundary, next_phase) = match self.phase {
                Phase::Before => (Some(self.rules.scored_from), Phase::Trigger),
                Phase::Trigger => (Some(self.rules.from), Phase::Judged),
                Phase::Judged => (None, Phase::Judged),
            };
            if let Some(at) = boundary {
                let next = self.state.events.first().map(|(t, _)| Nanos::from_ticks(t));
                if next.is_none_or(|t| t > at) {
                    self.phase = next_phase;
                    let score = self.score_at(at);
                    if score > level {
                        return Some(score);
                    }
                    continue;
                }
            }
            if self
                .state
                .events
                .first()
                .is_some_and(|(t, _)| Nanos::from_ticks(t) > self.rules.until)
            {
                self.ended = true;
                self.seen.cut = true;
                break;
            }
            if !self.state.step(horizon) {
                self.ended = true;
                self.seen.cut = !self.state.rec.metrics().complete;
                break;
            }
            // The state at an instant is the one after every event at it:
            // a retry whose delay ends leaves the orbit one event before it
            // joins the queue, at the same instant, and a failed attempt
            // leaves service one before its retry is counted. Scored
            // between the two, the backlog dipped by one that no state
            // had, and paths ended at calm too soon (returns after a
            // failure trigger 2% shorter than the exact chain's, z = -7).
            if self
                .state
                .events
                .first()
                .is_some_and(|(t, _)| Nanos::from_ticks(t) == self.state.now)
            {
                continue;
            }
            let score = self.score_at(self.state.now);
            if score > level {
                return Some(score);
            }
        }
        None
    }

    fn events(&self) -> u64 {
        self.state.rec.events()
    }

    fn cut(&self) -> bool {
        self.seen.cut
    }
}

impl<Q: EventQueue<Event> + Clone + Send, M: Mode> ServerPath<'_, Q, M> {
    /// Runs to the path's end: what it saw.
    fn run_out(mut self) -> Passage {
        let mut max = -1;
        while let Some(score) = self.run_past(max) {
            max = score;
        }
        self.seen
    }
}

impl<Q: EventQueue<Event>, M: Mode> State<'_, Q, M> {
    /// Waiting attempts plus retries waiting out their delay.
    #[inline]
    fn backlog_count(&self) -> u64 {
        self.station.queue.len() as u64 + u64::from(self.retries_waiting)
    }

    /// Draws from `seeds` from here on: the environment's, the backoff's
    /// and the controls' streams, as [`State::new`] seeds them.
    fn reseed(&mut self, seeds: Seeds) {
        self.environment = Lookahead::new(job_rng(seeds.environment));
        self.backoff = job_rng(seeds.policy);
        if let Some(controls) = self.controls.as_mut() {
            controls.reseed(seeds.controls());
        }
        for (layer, controls) in self.uppers.controls_mut() {
            controls.reseed(super::chain::upper_controls_seed(seeds, layer));
        }
    }

    /// Handles the next event as [`State::run`]'s loop does; false, with
    /// the run marked incomplete where a bound stopped it, if there is none
    /// to handle (none left, the horizon, the event limit, the bounds of
    /// windows and requests in flight).
    fn step(&mut self, horizon: Nanos) -> bool {
        let Some((time, event)) = self.events.first() else {
            return false;
        };
        let time = Nanos::from_ticks(time);
        if time > horizon {
            let cut = self.spec.horizon.is_none().then_some(Cut::ClockEnd);
            self.rec.stopped(cut);
            return false;
        }
        let events = self.rec.events();
        self.arrivals.events_at_mark = events;
        if self.arrivals.at_event_limit(events) || self.rec.event_limit_hit() {
            self.rec.hit_event_limit();
            return false;
        }
        if self.slab.slots() as u64 > MAX_IN_FLIGHT {
            self.rec.stopped(Some(Cut::InFlight));
            return false;
        }
        self.events.reschedule_first(None);
        let window = self.spec.window;
        if (self.rec.no_window_yet() || time / window > self.rec.current_window() as u64)
            && (!self.enter_window(time) || self.rec.event_limit_hit())
        {
            return false;
        }
        self.rec.count_event();
        self.now = time;
        self.handle(event);
        true
    }
}

/// One run of `spec` under `seeds`, followed by its backlog by `rules`:
/// when it reached the storm region and came back to calm.
pub fn server_passage(
    spec: &ServerSpec,
    retry: &ServerRetry,
    rules: PathRules,
    seeds: Seeds,
) -> Passage {
    struct Passing<'a> {
        spec: &'a ServerSpec,
        retry: &'a ServerRetry,
        rules: PathRules,
        seeds: Seeds,
    }
    impl OnMode for Passing<'_> {
        type Output = Passage;
        fn on<M: Mode>(self, mode: M) -> Passage {
            let policies = policies_of(self.spec, self.retry);
            let (spec, retry, seeds, rules) = (self.spec, self.retry, self.seeds, self.rules);
            ServerPath::<RadixQueue<Event>, M>::new(spec, retry, &policies, seeds, rules, mode)
                .run_out()
        }
    }
    with_mode(
        retry,
        Passing {
            spec,
            retry,
            rules,
            seeds,
        },
    )
}

/// One batch of adaptive multilevel splitting of `spec`'s runs towards the
/// storm region of `rules` (whose paths should end there and at calm):
/// `particles` paths, path `i` seeded by `seeds_of(i)`, copies keyed by
/// `key`.
pub fn split_server(
    spec: &ServerSpec,
    retry: &ServerRetry,
    rules: PathRules,
    particles: usize,
    seeds_of: &(dyn Fn(u64) -> Seeds + Sync),
    key: u64,
) -> SplitBatch {
    struct Splitting<'a> {
        spec: &'a ServerSpec,
        retry: &'a ServerRetry,
        rules: PathRules,
        particles: usize,
        seeds_of: &'a (dyn Fn(u64) -> Seeds + Sync),
        key: u64,
    }
    impl OnMode for Splitting<'_> {
        type Output = SplitBatch;
        fn on<M: Mode>(self, mode: M) -> SplitBatch {
            let policies = policies_of(self.spec, self.retry);
            let (spec, retry, rules) = (self.spec, self.retry, self.rules);
            let start = |i| {
                let seeds = (self.seeds_of)(i);
                ServerPath::<RadixQueue<Event>, M>::new(
                    spec,
                    retry,
                    &policies,
                    seeds,
                    rules,
                    mode.clone(),
                )
            };
            split(&start, self.particles, rules.storm as i64, self.key)
        }
    }
    with_mode(
        retry,
        Splitting {
            spec,
            retry,
            rules,
            particles,
            seeds_of,
            key,
        },
    )
}
