//! The event loop of the server model ([`crate::model::server`]).
//!
//! A request is one logical call; an attempt is one try of it. An attempt
//! travels to the server (request delay), waits in the FIFO queue or is
//! rejected at a full one, is served by a worker (service time drawn when
//! the worker takes it), fails or succeeds when its service completes, and
//! travels back (reply delay). The client times an attempt out `timeout`
//! after sending it; **the server never learns of that**: the abandoned
//! attempt keeps its place and burns a worker, and its reply is ignored.
//! After a failed reply, a rejection or a timeout the client decides at
//! once: retry after its policy's delay, if `max_attempts` and its controls
//! allow (a budget or retry breaker is consulted when the retry is decided,
//! not when it is sent), or give up. A breaker on calls or a throttle is
//! consulted as each attempt is about to be sent; an attempt it refuses is
//! not sent and its request gives up at once.
//!
//! Events are `(time, seq)` ordered: `seq` grows at every schedule, so events
//! at one instant run in the order they were scheduled and a run depends on
//! nothing but its spec and seeds.
//!
//! The loop's state is divided by what owns it, each part in a file of its
//! own that never reaches back into the whole: the events ([`event`]), the
//! requests in flight ([`requests`]), the arrivals ([`arrivals`]), the
//! server's workers and queue ([`station`]), and the measurements
//! ([`crate::measure::server_recorder`]); the retry decision is the one
//! every loop shares ([`crate::sim::retry_decision`]). The paths a request
//! takes are written over them: the users' requests ([`users`]), the
//! client's side of an attempt ([`plain`]), the server's ([`serve`]), call
//! chains ([`chain`]), gRPC's hedging ([`hedged`]) and Envoy's hedging on
//! timeout ([`kept`]). A run's [`Mode`] is matched once, when it starts
//! ([`mode`]): the loop is compiled for each, so a plain request pays
//! nothing for the others.

use std::collections::VecDeque;

use rand_pcg::Pcg64Mcg;

use crate::base::draws::Draws;
use crate::base::lookahead::Lookahead;
use crate::base::seeding::{Seeds, job_rng};
use crate::control::{ControlSpec, Controls};
use crate::measure::observer::{PROGRESS_EVERY, Watch};
use crate::measure::server_metrics::{Cut, MAX_IN_FLIGHT, ServerMetrics};
use crate::measure::server_recorder::{Backlog, ServerRecorder};
use crate::model::chain::CONTROL_FAMILIES;
use crate::model::hedging::Hedge;
use crate::model::retry_on::RetryOn;
use crate::model::server::{CLOCK_END_NS, Load, Nanos, ServerSpec, TriggerEffects};
use crate::policy::{AnyPolicy, PolicySpec};
use crate::sim::queue::{EventQueue, HeapQueue, QueueKind, RadixQueue};

mod arrivals;
pub mod backlog_paths;
mod chain;
mod event;
mod hedged;
mod kept;
mod mode;
mod plain;
mod requests;
mod serve;
mod station;
#[cfg(test)]
mod tests;
mod users;

pub use arrivals::{Arrivals, Next};
use chain::Uppers;
use event::{Event, Kind};
use hedged::Hedged;
use kept::Kept;
use mode::Mode;
use plain::Plain;
use requests::Slab;
use station::Station;

/// How clients retry on the server model.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRetry {
    /// The backoff policy.
    pub policy: PolicySpec,
    /// Most attempts per request, first try included; `None` is unlimited.
    pub max_attempts: Option<u32>,
    /// Retry controls (budget, breaker, throttle), each with a state per
    /// scope of sources.
    pub controls: Vec<ControlSpec>,
    /// Sources per scope of the controls' state; `None` is one of all.
    pub fleet: Option<u32>,
    /// The users' request deadline, ns from the request's start (gRPC's
    /// call `timeout`): no attempt starts after it, and an attempt still
    /// awaited when it passes ends the request as given up. `None`: none.
    pub deadline: Option<Nanos>,
    /// Which failed attempts are retried; any other failure gives up. With
    /// hedging, the non-fatal outcomes: any other fails the request.
    pub retry_on: RetryOn,
    /// Hedged requests ([`crate::model::hedging`]): copies at a fixed delay
    /// in place of retries after a failure; `None` for one attempt at a time.
    pub hedge: Option<Hedge>,
    /// Hedging on per-attempt timeout ([`crate::model::timeout_hedging`],
    /// Envoy's `hedge_on_per_try_timeout`): a timed-out attempt is kept and
    /// a retry goes beside it.
    pub hedge_on_timeout: bool,
}

impl ServerRetry {
    /// The budget, breaker and throttle among the controls (each at most
    /// once), in [`CONTROL_FAMILIES`] order.
    pub fn control_families(&self) -> [Option<ControlSpec>; 3] {
        CONTROL_FAMILIES.map(|family| self.controls.iter().find(|c| c.family() == family).copied())
    }
}

/// Runs one replicate of the server model: `spec`'s load and server, clients
/// retrying by `retry`, draws from `seeds` (the environment's stream for
/// arrivals, service, delays and failures; the policy's for backoff). Stops
/// after `max_events` events, marking the run incomplete. Measures
/// everything, each window's latency quantiles included.
pub fn simulate_server(
    spec: &ServerSpec,
    retry: &ServerRetry,
    seeds: Seeds,
    max_events: u64,
) -> ServerMetrics {
    let watch = Watch {
        max_events,
        on_progress: &|_, _| {},
        window_latencies: true,
    };
    simulate_server_watched(spec, retry, seeds, &watch, QueueKind::Auto)
}

/// [`simulate_server`] on the event queue `queue` (every queue gives the
/// same run), telling `watch` the simulated time (µs) and the requests ended
/// so far every [`PROGRESS_EVERY`] events, stopping at its `max_events`, and
/// with each window's latency quantiles if it wants them.
pub fn simulate_server_watched(
    spec: &ServerSpec,
    retry: &ServerRetry,
    seeds: Seeds,
    watch: &Watch<'_>,
    queue: QueueKind,
) -> ServerMetrics {
    let policies = policies_of(spec, retry);
    let run = ServerRun {
        spec,
        retry,
        policies: &policies,
        seeds,
        watch,
        heap: queue.for_resource(crate::model::ResourceKind::Server) == QueueKind::Heap,
    };
    with_mode(retry, run)
}

/// The backoff of calls to each of `spec`'s services, top first: the
/// users' policy alone when the services share it. Each is built once and
/// called through a pointer per delay (a delay is drawn once per retry, not
/// per event), so the loop is compiled once, not once per policy, and each
/// still backs off draw for draw as its concrete policy ([`AnyPolicy`]).
fn policies_of(spec: &ServerSpec, retry: &ServerRetry) -> Vec<AnyPolicy> {
    let users = AnyPolicy::new(&retry.policy);
    let chain = &spec.chain;
    if !chain.has_own_policy() {
        return vec![users];
    }
    let uppers =
        (0..chain.depth as usize - 1).map(|i| AnyPolicy::new(&chain.policy_of(i, &retry.policy)));
    std::iter::once(users).chain(uppers).collect()
}

/// One run, before its queue and mode are chosen.
struct ServerRun<'a> {
    spec: &'a ServerSpec,
    retry: &'a ServerRetry,
    policies: &'a [AnyPolicy],
    seeds: Seeds,
    watch: &'a Watch<'a>,
    /// On the binary heap (else the radix queue).
    heap: bool,
}

impl OnMode for ServerRun<'_> {
    type Output = ServerMetrics;
    fn on<M: Mode>(self, mode: M) -> ServerMetrics {
        if self.heap {
            self.run::<HeapQueue<Event>, M>(mode)
        } else {
            self.run::<RadixQueue<Event>, M>(mode)
        }
    }
}

impl ServerRun<'_> {
    fn run<Q: EventQueue<Event>, M: Mode>(&self, mode: M) -> ServerMetrics {
        let mut state = State::<Q, M>::new(
            self.spec,
            self.retry,
            self.policies,
            self.seeds,
            self.watch,
            mode,
        );
        state.run(self.watch);
        state.finish()
    }
}

/// What runs once a run's mode is chosen.
trait OnMode {
    type Output;
    fn on<M: Mode>(self, mode: M) -> Self::Output;
}

/// Calls `then` with `retry`'s mode: the one match of a run's mode.
fn with_mode<T: OnMode>(retry: &ServerRetry, then: T) -> T::Output {
    match (retry.hedge, retry.hedge_on_timeout) {
        (Some(hedge), _) => then.on(Hedged::new(hedge)),
        (None, true) => then.on(Kept::default()),
        (None, false) => then.on(Plain),
    }
}

/// One run's state, each part owning its fields. The handlers of a
/// request's usual path (arrive, send, serve, take the next, reply, end)
/// are inline into [`State::handle`], and it into the loop: as calls, each
/// saved and restored registers (inline, the M/M/c benchmark's run makes
/// about 56 fewer stores a request, of 225, and 12% fewer instructions).
///
/// A clone is the run paused between two events: splitting continues
/// clones with fresh draws ([`backlog_paths`]).
#[derive(Clone)]
struct State<'a, Q: EventQueue<Event>, M: Mode> {
    spec: &'a ServerSpec,
    /// The backoff of calls to each service, top first (the users' first;
    /// one for all when there is one).
    policies: &'a [AnyPolicy],
    environment: Lookahead,
    /// The key of exponential timeouts' draws ([`Self::attempt_timeout`]).
    timeout_key: u64,
    backoff: Pcg64Mcg,
    events: Q,
    now: Nanos,
    slab: Slab,
    /// Requests waiting for a client slot (concurrency limit).
    waiting_for_slot: VecDeque<(u32, u32)>,
    /// Requests holding a client slot.
    holding_slot: u32,
    station: Station,
    /// Retries waiting out their backoff delay (their resend events
    /// pending): with the queue, the backlog splitting scores.
    retries_waiting: u32,
    /// The users' retry controls.
    controls: Option<Controls>,
    arrivals: Arrivals,
    /// What the spec's triggers act on, once: the checks of the others are
    /// skipped.
    effects: TriggerEffects,
    /// The services above the server (none for the server alone).
    uppers: Uppers,
    /// The server's index in the chain.
    bottom: u8,
    /// The timeout of attempts to each service, top first.
    layer_timeouts: Vec<Nanos>,
    /// The attempt limit of calls to each service, top first.
    attempt_limits: Vec<Option<u32>>,
    /// The users' request deadline, if any ([`ServerRetry::deadline`]).
    deadline: Option<Nanos>,
    /// Which failed attempts are retried.
    retry_on: RetryOn,
    /// True if some attempt can time out (work can be wasted), once.
    times_out: bool,
    mode: M,
    rec: ServerRecorder,
}

impl<'a, Q: EventQueue<Event>, M: Mode> State<'a, Q, M> {
    fn new(
        spec: &'a ServerSpec,
        retry: &ServerRetry,
        policies: &'a [AnyPolicy],
        seeds: Seeds,
        watch: &Watch<'_>,
        mode: M,
    ) -> Self {
        let sources = spec.load.sources();
        let mut state = State {
            spec,
            policies,
            environment: Lookahead::new(job_rng(seeds.environment)),
            timeout_key: crate::base::seeding::splitmix64(
                seeds.environment ^ 0x7A3D_91C4_E05B_2F68,
            ),
            backoff: job_rng(seeds.policy),
            events: Q::with_events(Vec::new()),
            now: Nanos::ZERO,
            slab: Slab::new(policies.iter().any(AnyPolicy::remembers)),
            waiting_for_slot: VecDeque::new(),
            holding_slot: 0,
            station: Station::new(spec),
            retries_waiting: 0,
            controls: Controls::new(&retry.controls, sources, retry.fleet, seeds.controls()),
            // The event limit is set before the first arrival's thinning.
            arrivals: Arrivals::new(spec, watch.max_events),
            effects: spec.trigger_effects(),
            uppers: Uppers::new(spec, retry, seeds),
            bottom: (spec.chain.depth - 1) as u8,
            layer_timeouts: spec
                .chain
                .timeouts(spec.timeout)
                .into_iter()
                .map(|t| t.unwrap_or(plain::NO_TIMEOUT))
                .collect(),
            attempt_limits: spec.chain.attempt_limits(retry.max_attempts),
            deadline: retry.deadline,
            retry_on: retry.retry_on,
            // A hedged request's copies served after it ended are wasted.
            times_out: !spec.timeout_choices.is_empty()
                || spec.chain.times_out(spec.timeout)
                || retry.deadline.is_some()
                || retry.hedge.is_some(),
            mode,
            rec: ServerRecorder::new(spec, watch.window_latencies),
        };
        match spec.load {
            Load::Open { sources, .. } => {
                if let Some(first_call) = spec.first_call {
                    for source in 0..sources {
                        let t = first_call.sample(&mut state.environment);
                        if t < spec.duration {
                            state.push(t, Event::of_source(Kind::FirstCall, source));
                        }
                    }
                }
                state.schedule_next_arrival(Nanos::ZERO);
            }
            Load::Closed { users, think } => {
                let first = spec.first_call.unwrap_or(think);
                for user in 0..users {
                    let t = first.sample(&mut state.environment);
                    state.push(t, Event::of_source(Kind::ThinkDone, user));
                }
            }
        }
        for t in spec.capacity_changes() {
            state.push(t, Event::of_source(Kind::Capacity, 0));
        }
        state
    }

    /// Schedules `event` at `time`.
    #[inline(always)]
    fn push(&mut self, time: Nanos, event: Event) {
        self.events.push(time.ticks(), event);
    }

    /// The backoff of calls to service `layer` (0: the users').
    #[inline]
    fn policy_of(&self, layer: u8) -> &'a AnyPolicy {
        let policies: &'a [AnyPolicy] = self.policies;
        policies.get(usize::from(layer)).unwrap_or(&policies[0])
    }

    /// The retry controls of the caller of service `layer`: the users'
    /// for service 1, else the upper service above it.
    #[inline(always)]
    fn controls_of(&mut self, layer: u8) -> Option<&mut Controls> {
        match layer {
            0 => self.controls.as_mut(),
            l => self.uppers.controls_of(l),
        }
    }

    /// The queue, the busy workers and the retries waiting now.
    #[inline(always)]
    fn backlog(&self) -> Backlog {
        self.station.backlog(self.retries_waiting)
    }

    /// Brings the recorder's areas up to now, before the queue, the busy
    /// workers or the retries waiting change.
    #[inline(always)]
    fn advance_areas(&mut self) {
        let (station, retries_waiting) = (&self.station, self.retries_waiting);
        self.rec
            .advance_areas(self.now, || station.backlog(retries_waiting));
    }

    /// Makes the window holding `t` current; false if the run is cut there.
    #[cold]
    fn enter_window(&mut self, t: Nanos) -> bool {
        let backlog = self.backlog();
        self.rec.enter_window(t, backlog)
    }

    /// Schedules the next open-loop arrival after `t`, if there is one.
    #[inline(always)]
    fn schedule_next_arrival(&mut self, t: Nanos) {
        match self
            .arrivals
            .next_after(self.spec, t, &mut self.environment)
        {
            Next::At(t) => self.push(t, Event::of_source(Kind::Arrival, 0)),
            Next::None => {}
            Next::Stopped { event_limit: true } => self.rec.hit_event_limit(),
            Next::Stopped { event_limit: false } => self.rec.stopped(None),
        }
    }

    /// Handles events in order until none is left, the horizon, or the
    /// watch's event limit. The event count is a local, and one mark says
    /// when it next needs a look (the limit, or the next progress report):
    /// one comparison an event, where the limit and the report were two,
    /// each reading memory.
    fn run(&mut self, watch: &Watch<'_>) {
        // Without a horizon the clock's end is one: every time added
        // saturates, so a run that would pass it stops there.
        let horizon = self
            .spec
            .horizon
            .unwrap_or(CLOCK_END_NS - Nanos::from_ticks(1));
        let open_loop = matches!(self.spec.load, Load::Open { .. });
        let mut next_window_at = Nanos::ZERO;
        let mut events = self.rec.events();
        // A report comes once the count reaches a multiple of
        // PROGRESS_EVERY: at the mark one before it.
        let mut next_report = (events / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
        let mut mark = watch.max_events.min(next_report - 1);
        while let Some((time, event)) = self.events.first() {
            let time = Nanos::from_ticks(time);
            if time > horizon {
                let cut = self.spec.horizon.is_none().then_some(Cut::ClockEnd);
                self.rec.stopped(cut);
                break;
            }
            if events >= mark {
                self.arrivals.events_at_mark = events;
                if self.arrivals.at_event_limit(events) || self.rec.event_limit_hit() {
                    self.rec.hit_event_limit();
                    break;
                }
                if open_loop && self.slab.slots() as u64 > MAX_IN_FLIGHT {
                    self.rec.stopped(Some(Cut::InFlight));
                    break;
                }
                (watch.on_progress)(time.whole_us(), self.rec.ended());
                next_report += PROGRESS_EVERY;
                mark = watch.max_events.min(next_report - 1);
            }
            self.events.reschedule_first(None);
            // Every window an event falls in exists before the event changes
            // the state, so the windows before it end with the queue and busy
            // workers as they stood (an event that counts nothing, such as
            // serving an abandoned attempt, still moves time on).
            if time >= next_window_at {
                // Thinning may have stopped (its proposals count toward the
                // event limit) since the last look.
                if !self.enter_window(time) || self.rec.event_limit_hit() {
                    break;
                }
                next_window_at = self.spec.window.saturating_mul(time / self.spec.window + 1);
            }
            events += 1;
            self.now = time;
            self.handle(event);
        }
        self.rec.set_events(events);
    }

    /// Inline: the loop's one call site (as a call, its register saves
    /// and restores were 16 instructions an event).
    #[inline(always)]
    fn handle(&mut self, e: Event) {
        match e.kind {
            Kind::Arrival => {
                let sources = self.spec.load.sources();
                let source = if sources > 1 {
                    self.environment.uniform(0, u64::from(sources - 1)) as u32
                } else {
                    0
                };
                self.arrive(source);
                self.schedule_next_arrival(self.now);
            }
            Kind::FirstCall => self.arrive(e.req),
            Kind::ThinkDone => {
                if self.now < self.spec.duration {
                    let req = self.new_request(e.req, None);
                    if !self.start(req) {
                        self.end(req);
                    }
                }
            }
            Kind::CallBelow => self.call_below(e),
            Kind::AtServer if e.layer != self.bottom => self.at_upper(e),
            Kind::AtServer => self.at_server(e),
            Kind::ServiceDone | Kind::ServiceExpired => self.service_done(e),
            Kind::Reply => M::reply(self, e),
            Kind::Timeout => M::timeout(self, e),
            Kind::Resend => {
                if !e.admitted() {
                    self.advance_areas();
                    self.retries_waiting -= 1;
                }
                M::resend(self, e);
            }
            Kind::Capacity => {
                self.advance_areas();
                while self.station.can_take(self.spec, self.now) {
                    self.take_next();
                }
            }
            Kind::Hedge => M::hedge_due(self, e),
        }
    }

    fn finish(self) -> ServerMetrics {
        // Storage only grows, so its capacities now are its high-water marks.
        let peak_in_flight = self.slab.slots() as u64;
        let state_bytes = (self.slab.capacity_bytes()
            + self.station.capacity_bytes()
            + self.events.capacity_bytes()
            + self.mode.capacity_bytes()) as u64;
        let kept_wins = self.mode.kept_wins();
        let (end, backlog) = (self.now, self.backlog());
        self.rec.finish(
            self.spec,
            end,
            backlog,
            (peak_in_flight, state_bytes, kept_wins),
        )
    }
}
