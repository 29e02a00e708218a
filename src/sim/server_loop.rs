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
//! nothing but its spec and seeds. Requests live in a slab reused as they
//! end, so memory follows what is in flight, not the requests in a run.

use std::collections::VecDeque;

use rand_pcg::Pcg64Mcg;

use crate::base::draws::Draws;
use crate::base::lookahead::Lookahead;
use crate::base::seeding::{Seeds, job_rng};
use crate::control::deadline_propagation::{self, DeadlinePropagation};
use crate::control::queue_discipline::{self, Waiting};
use crate::control::shed_wait::sheds;
use crate::control::{ControlSpec, Controls, Outcome};
use crate::measure::layer_metrics::LayerMetrics;
use crate::measure::metrics::nearest_ranks;
use crate::measure::observer::{PROGRESS_EVERY, Watch};
use crate::measure::server_metrics::{
    Cut, MAX_IN_FLIGHT, MAX_WINDOWS, ServerMetrics, Window, success_over,
};
use crate::measure::verdict::{Goodput, Judged, judge, judged_windows};
use crate::model::chain::{CONTROL_FAMILIES, RetryScope};
use crate::model::hedging::{AfterFailure, Hedge, NextCopy, after_failure, next_copy};
use crate::model::retry_on::RetryOn;
use crate::model::server::{
    CLOCK_END_NS, FailureEnd, Load, NS_PER_S, NS_PER_US, Nanos, RateChanges, ServerSpec,
    TimeoutLaw, TimeoutNoticed, TriggerEffects, TriggerKind, round_ns,
};
use crate::model::timeout_hedging::{self as kept, AfterFailure as KeptAfter};
use crate::policy::{AnyPolicy, AnyWalk, Backoff, Cause, PolicySpec};
use crate::sim::hedging::Hedging;
use crate::sim::queue::{ClientItem, EventQueue, HeapQueue, QueueKind, RadixQueue};
use crate::sim::timeout_hedging::TimeoutHedging;

pub mod backlog_paths;

/// Thinning's rejected proposals for one arrival between looks at the
/// limits.
const PROPOSALS_CHECKED_EVERY: u64 = 1 << 16;
/// Rejected proposals for one arrival past the horizon before thinning
/// stops there (a run's draws before the horizon stay as they were unless
/// one arrival takes more).
const PROPOSALS_PAST_HORIZON: u64 = 1 << 20;

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

/// What a policy learns of a failed attempt: a refusal at a full queue is
/// the server's throttling error (HTTP 429, `SlowDown`), which `aws-2026`
/// backs off from on its own base; a failed reply or a timeout is not.
#[inline]
fn cause_of(outcome: Outcome) -> Cause {
    match outcome {
        Outcome::Rejected => Cause::Throttle,
        Outcome::Success | Outcome::Failure | Outcome::Timeout => Cause::Other,
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
    ServerRun {
        spec,
        retry,
        seeds,
        watch,
        queue,
    }
    .run_on_queue()
}

/// The seed of the controls of the upper service `layer`: each is one
/// client of the service below, with draws of its own.
fn upper_controls_seed(seeds: Seeds, layer: u8) -> u64 {
    crate::base::seeding::splitmix64(seeds.controls() ^ u64::from(layer))
}

/// The backoff of calls to each of `spec`'s services, top first: the
/// users' policy alone when the services share it. Each is dispatched on
/// its kind per delay (a delay is drawn once per retry, not per event), so
/// the loop is compiled once, not once per policy, and each still backs off
/// draw for draw as its concrete policy ([`AnyPolicy`]).
fn policies_of(spec: &ServerSpec, retry: &ServerRetry) -> Vec<AnyPolicy> {
    let users = AnyPolicy(retry.policy);
    let chain = &spec.chain;
    if !chain.has_own_policy() {
        return vec![users];
    }
    let uppers =
        (0..chain.depth as usize - 1).map(|i| AnyPolicy(chain.policy_of(i, &retry.policy)));
    std::iter::once(users).chain(uppers).collect()
}

struct ServerRun<'a> {
    spec: &'a ServerSpec,
    retry: &'a ServerRetry,
    seeds: Seeds,
    watch: &'a Watch<'a>,
    queue: QueueKind,
}

impl ServerRun<'_> {
    /// The run on the run's event queue.
    fn run_on_queue(self) -> ServerMetrics {
        let policies = policies_of(self.spec, self.retry);
        match self.queue.for_resource(crate::model::ResourceKind::Server) {
            QueueKind::Heap => self.run::<HeapQueue<Event>>(&policies),
            QueueKind::Radix | QueueKind::Auto => self.run::<RadixQueue<Event>>(&policies),
        }
    }

    fn run<Q: EventQueue<Event>>(&self, policies: &[AnyPolicy]) -> ServerMetrics {
        let mut state = State::<Q>::new(self.spec, self.retry, policies, self.seeds, self.watch);
        state.run(self.watch);
        state.finish()
    }
}

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The next open-loop arrival.
    Arrival,
    /// A source's first request (`req` is the source), beside the arrivals.
    FirstCall,
    /// A closed-loop user's think time ends (`req` is the user).
    ThinkDone,
    /// An attempt reaches the server.
    AtServer,
    /// A worker finishes an attempt.
    ServiceDone,
    /// A worker finishes with an attempt it failed for its deadline.
    ServiceExpired,
    /// A reply reaches its client (`arg`: [`REPLY_SUCCESS`],
    /// [`REPLY_FAILURE`] or [`REPLY_REJECTED`]).
    Reply,
    /// A client's timeout for an attempt fires.
    Timeout,
    /// A client sends its next attempt after backing off (`arg`
    /// [`ADMITTED`]: after waiting for a rate limiter that admitted it).
    Resend,
    /// The workers change (a capacity drop begins or ends).
    Capacity,
    /// A worker of a service above the server ends its own work on an
    /// attempt (`arg`: when it took it) and calls the service below.
    CallBelow,
    /// A hedged request's next copy is due (`attempt`: its number).
    Hedge,
}

/// A reply's `arg`: the attempt succeeded.
const REPLY_SUCCESS: Nanos = 1;
/// A reply's `arg`: the server failed it.
const REPLY_FAILURE: Nanos = 0;
/// A reply's `arg`: the server refused it (a full queue, shedding by
/// expected wait, or its discipline's drop).
const REPLY_REJECTED: Nanos = 2;
/// A reply's `arg`: an upper service failed it because its own call below
/// gave up (a failure that came from below).
const REPLY_FAILED_BELOW: Nanos = 3;

/// A resend's `arg`: the controls admitted it already (it waited for a
/// rate limiter's token).
const ADMITTED: Nanos = 1;

/// What one scheduled event carries (its time is the queue's key; events at
/// one instant leave in the order they were scheduled).
///
/// Laid out as three whole words with no padding (`spare` fills it), so an
/// event is copied as whole words. With padding, its copies were odd-sized
/// overlapping moves, and `perf` put the loop's most-sampled instruction on
/// one, in the pop of an event pushed moments before (a load that spans two
/// recent stores must wait for them to reach the cache).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Event {
    /// For `ServiceDone`: when its reply reaches the client; for `Reply`:
    /// how the attempt ended.
    arg: Nanos,
    /// The request's slab index (or the user, for `ThinkDone`).
    req: u32,
    /// The request's generation: an event for an ended request is stale.
    generation: u32,
    /// The attempt number (0 is the first try).
    attempt: u32,
    kind: Kind,
    /// The service (0 is the one users call) an attempt's event is at.
    layer: u8,
    /// Always 0: makes the padding a field, copied with the rest.
    spare: u16,
}

impl ClientItem for Event {
    /// Server events are never made for a herd of clients.
    fn for_client(self, _id: u32) -> Self {
        self
    }
}

/// An attempt waiting in the server's queue.
#[derive(Debug, Clone, Copy)]
struct Queued {
    req: u32,
    generation: u32,
    attempt: u32,
    arrived: Nanos,
    /// Its propagated deadline; `Nanos::MAX` for none.
    deadline: Nanos,
}

impl Waiting for Queued {
    #[inline]
    fn arrived(&self) -> Nanos {
        self.arrived
    }
}

/// A request in flight.
#[derive(Debug, Clone, Copy)]
struct Request {
    generation: u32,
    /// Its source (owner of control state) or closed-loop user.
    source: u32,
    /// Latency counts from here: its start, or when it got a client slot.
    started: Nanos,
    /// Attempts sent so far.
    attempts: u32,
    /// When the latest attempt was sent.
    sent: Nanos,
    /// True while the client waits for the reply of attempt `attempts − 1`.
    awaiting: bool,
    /// What its latest attempt retried (`None` for a first try), for the
    /// controls.
    retry_of: Option<Outcome>,
    /// The per-user failure draw: it fails while a per-user trigger with a
    /// share above this covers an attempt's completion.
    fate: f64,
    /// Which of the spec's timeout choices it drew (0 without choices): an
    /// index, not the duration, so it fits beside `awaiting` and costs no
    /// bytes.
    timeout_choice: u8,
    /// The service its attempts go to (0: the users' request to service
    /// 1; above 0, a call an upper service made below).
    layer: u8,
    /// The policy's memory.
    walk: AnyWalk,
}

impl Request {
    /// True if its client still waits for the reply of this attempt.
    #[inline(always)]
    fn awaits(&self, generation: u32, attempt: u32) -> bool {
        self.generation == generation && self.awaiting && self.attempts == attempt + 1
    }
}

/// What the end of an awaited attempt (its reply or its timeout) needs of
/// its request ([`State::stop_awaiting`]).
#[derive(Debug, Clone, Copy)]
struct Awaited {
    layer: u8,
    source: u32,
    retry_of: Option<Outcome>,
    /// When the request started (latency counts from here).
    started: Nanos,
    /// When the attempt was sent.
    sent: Nanos,
    timeout_choice: u8,
}

/// A request's timeout when attempts have none.
const NO_TIMEOUT: Nanos = Nanos::MAX;

/// A service above the server in a chain: its workers, its queue, and its
/// retry controls as one client of the service below.
#[derive(Clone)]
struct Upper {
    busy: u32,
    queue: VecDeque<Queued>,
    controls: Option<Controls>,
}

/// The upper service's attempt a call below serves: its worker waits for
/// the call, and its reply goes up when the call ends.
#[derive(Debug, Clone, Copy, Default)]
struct Call {
    req: u32,
    generation: u32,
    attempt: u32,
    /// When the worker took the attempt.
    held_since: Nanos,
}

/// One run's state. The handlers of a request's usual path (arrive, send,
/// serve, take the next, reply, end) are inline into [`State::handle`], and
/// it into the loop: as calls, each saved and restored registers (inline,
/// the M/M/c benchmark's run makes about 56 fewer stores a request, of 225,
/// and 12% fewer instructions).
///
/// A clone is the run paused between two events: splitting continues
/// clones with fresh draws ([`backlog_paths`]).
#[derive(Clone)]
struct State<'a, Q: EventQueue<Event>> {
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
    requests: Vec<Request>,
    free: Vec<u32>,
    /// Requests waiting for a client slot (concurrency limit).
    waiting_for_slot: VecDeque<(u32, u32)>,
    /// Requests holding a client slot.
    holding_slot: u32,
    queue: VecDeque<Queued>,
    /// Retries waiting out their backoff delay (their resend events
    /// pending): with the queue, the backlog splitting scores.
    retries_waiting: u32,
    /// How the queue is served.
    discipline: queue_discipline::Server,
    /// Attempts the discipline dropped while taking the next (reused).
    dropped: Vec<Queued>,
    /// The mean service time, ns (for shedding by expected wait).
    mean_service: f64,
    busy: u32,
    controls: Option<Controls>,
    /// The spec's highest arrival-rate factor (thinning's bound), once.
    peak_load: f64,
    /// The mean gap between arrivals at that factor, ns (thinning's
    /// proposals), once.
    peak_gap: f64,
    /// What the spec's triggers act on, once: the checks of the others are
    /// skipped.
    effects: TriggerEffects,
    /// The server's workers while no capacity drop covers the time.
    base_workers: u32,
    /// Open-loop arrivals scheduled so far (a fixed request count stops
    /// them).
    arrivals_made: u64,
    /// When a worker last started on an attempt (a failure that ends at the
    /// next start lasts while this is inside its window).
    latest_start: Nanos,
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
    window_counts: Window,
    /// The latest open-loop arrival, ns (a fixed request count's load end).
    last_arrival: Nanos,
    /// Requests ending before this (the first trigger's start) are judged.
    judged_before: Nanos,
    /// Requests made from this (the last trigger's end) are judged.
    judged_after: Nanos,
    /// The services above the server, top first (empty for the server
    /// alone), and the server's index in the chain.
    uppers: Vec<Upper>,
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
    /// Per request slot of a call below: the attempt it serves.
    calls: Vec<Call>,
    /// Hedged requests' copies, if the run hedges.
    hedging: Option<Hedging>,
    /// Requests' attempts kept past their timeout, if the run hedges on
    /// timeout.
    timeout_hedging: Option<TimeoutHedging>,
    /// Thinning's proposals rejected so far: they count toward the event
    /// limit, as events do (a bound far above the rate once made billions
    /// between two events).
    rejected_proposals: u64,
    /// The events handled at the loop's last look at its limits.
    events_at_mark: u64,
    /// The watch's event limit.
    max_events: u64,
    m: ServerMetrics,
}

impl<'a, Q: EventQueue<Event>> State<'a, Q> {
    fn new(
        spec: &'a ServerSpec,
        retry: &ServerRetry,
        policies: &'a [AnyPolicy],
        seeds: Seeds,
        watch: &Watch<'_>,
    ) -> Self {
        let sources = spec.load.sources();
        let controls = Controls::new(&retry.controls, sources, retry.fleet, seeds.controls());
        let peak_load = spec.peak_load_factor();
        let mut state = State {
            spec,
            policies,
            environment: Lookahead::new(job_rng(seeds.environment)),
            timeout_key: crate::base::seeding::splitmix64(
                seeds.environment ^ 0x7A3D_91C4_E05B_2F68,
            ),
            backoff: job_rng(seeds.policy),
            events: Q::with_events(Vec::new()),
            now: 0,
            requests: Vec::new(),
            free: Vec::new(),
            waiting_for_slot: VecDeque::new(),
            holding_slot: 0,
            queue: VecDeque::new(),
            retries_waiting: 0,
            discipline: spec.discipline.server(),
            dropped: Vec::new(),
            mean_service: spec.service.mean(),
            busy: 0,
            controls,
            peak_load,
            peak_gap: match spec.load {
                Load::Open { rate_per_s, .. } => NS_PER_S as f64 / (rate_per_s * peak_load),
                Load::Closed { .. } => f64::INFINITY,
            },
            effects: spec.trigger_effects(),
            base_workers: spec.workers.unwrap_or(u32::MAX),
            arrivals_made: 0,
            latest_start: 0,
            areas_at: 0,
            window_latencies: watch.window_latencies.then(Vec::new),
            current_window: 0,
            window_counts: Window::default(),
            last_arrival: 0,
            // Without a trigger there is no verdict: judge nothing, and the
            // loop pays no latency square per success.
            judged_before: spec.first_trigger_start().unwrap_or(0),
            judged_after: spec.last_trigger_end().unwrap_or(Nanos::MAX),
            uppers: (1..spec.chain.depth)
                .map(|layer| Upper {
                    busy: 0,
                    queue: VecDeque::new(),
                    // Each upper service is one client of the service
                    // below, with control draws of its own.
                    controls: Controls::new(
                        &spec
                            .chain
                            .controls_of(layer as usize - 1, retry.control_families()),
                        1,
                        None,
                        upper_controls_seed(seeds, layer as u8),
                    ),
                })
                .collect(),
            bottom: (spec.chain.depth - 1) as u8,
            layer_timeouts: spec
                .chain
                .timeouts(spec.timeout)
                .into_iter()
                .map(|t| t.unwrap_or(NO_TIMEOUT))
                .collect(),
            deadline: retry.deadline,
            retry_on: retry.retry_on,
            attempt_limits: spec.chain.attempt_limits(retry.max_attempts),
            // A hedged request's copies served after it ended are wasted.
            times_out: !spec.timeout_choices.is_empty()
                || spec.chain.times_out(spec.timeout)
                || retry.deadline.is_some()
                || retry.hedge.is_some(),
            calls: Vec::new(),
            hedging: retry.hedge.map(Hedging::new),
            timeout_hedging: retry.hedge_on_timeout.then(TimeoutHedging::default),
            rejected_proposals: 0,
            events_at_mark: 0,
            // Set before the first arrival's thinning.
            max_events: watch.max_events,
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
        };
        match spec.load {
            Load::Open { sources, .. } => {
                if let Some(first_call) = spec.first_call {
                    for source in 0..sources {
                        let t = first_call.sample(&mut state.environment);
                        if t < spec.duration {
                            state.schedule(t, Kind::FirstCall, source, 0, 0, 0);
                        }
                    }
                }
                let first = state.next_arrival_after(0);
                if let Some(t) = first {
                    state.schedule(t, Kind::Arrival, 0, 0, 0, 0);
                }
            }
            Load::Closed { users, think } => {
                let first = spec.first_call.unwrap_or(think);
                for user in 0..users {
                    let t = first.sample(&mut state.environment);
                    state.schedule(t, Kind::ThinkDone, user, 0, 0, 0);
                }
            }
        }
        for t in spec.capacity_changes() {
            state.schedule(t, Kind::Capacity, 0, 0, 0, 0);
        }
        state
    }

    #[inline]
    fn schedule(
        &mut self,
        time: Nanos,
        kind: Kind,
        req: u32,
        generation: u32,
        attempt: u32,
        arg: Nanos,
    ) {
        self.schedule_at_layer(time, kind, req, generation, attempt, arg, 0);
    }

    /// [`Self::schedule`] for an event at service `layer` of a chain.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn schedule_at_layer(
        &mut self,
        time: Nanos,
        kind: Kind,
        req: u32,
        generation: u32,
        attempt: u32,
        arg: Nanos,
        layer: u8,
    ) {
        self.events.push(
            time,
            Event {
                kind,
                req,
                generation,
                attempt,
                arg,
                layer,
                spare: 0,
            },
        );
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
            l => self.uppers[usize::from(l) - 1].controls.as_mut(),
        }
    }

    /// The timeout of attempt `attempt` of request `r` in slot `req`: the
    /// request's, or with the exponential law a draw of that mean. The
    /// draw is a hash of the run's key and the attempt's slot, generation
    /// and number, not a generator's next value, so that the send and the
    /// server (which must know whether the reply will be ignored) get the
    /// same one without a field per request.
    #[inline(always)]
    fn attempt_timeout(&self, r: &Request, req: u32, generation: u32, attempt: u32) -> Nanos {
        let timeout = self.timeout_of_request(r);
        if self.spec.timeout_law != TimeoutLaw::Exponential || timeout == NO_TIMEOUT {
            return timeout;
        }
        use crate::base::seeding::splitmix64;
        let slot = (u64::from(req) << 32) | u64::from(generation);
        let bits = splitmix64(splitmix64(self.timeout_key ^ slot) ^ u64::from(attempt));
        let unit = crate::base::draws::unit_above_zero_of(bits);
        round_ns(timeout as f64 * -unit.ln())
    }

    /// The timeout of the attempts of request `r` ([`NO_TIMEOUT`] for
    /// none): the users' (or the one they drew), or a call's layer's.
    #[inline]
    fn timeout_of_request(&self, r: &Request) -> Nanos {
        if r.layer == 0 {
            self.timeout_of(r.timeout_choice)
        } else {
            self.layer_timeouts[usize::from(r.layer)]
        }
    }

    /// The next open-loop arrival after `t` (thinning for load spikes and
    /// ramps, or the rate at `t` with `rate_changes = at-arrival`), if it
    /// falls inside the load's duration, or, with a fixed request count, if
    /// the count is not made yet.
    #[inline(always)]
    fn next_arrival_after(&mut self, mut t: Nanos) -> Option<Nanos> {
        let Load::Open { rate_per_s, .. } = self.spec.load else {
            return None;
        };
        if self.spec.requests.is_some_and(|n| self.arrivals_made >= n) {
            return None;
        }
        if self.spec.rate_changes == RateChanges::AtArrival {
            let rate = rate_per_s * self.spec.load_factor_at(t);
            if rate <= 0.0 {
                return None;
            }
            let gap = round_ns(NS_PER_S as f64 / rate * self.environment.exp1());
            t = t.saturating_add(gap);
            if self.spec.requests.is_none() && t >= self.spec.duration {
                return None;
            }
            self.arrivals_made += 1;
            return Some(t);
        }
        let (peak, mean_gap) = (self.peak_load, self.peak_gap);
        let mut rejected_here = 0u64;
        loop {
            let gap = round_ns(mean_gap * self.environment.exp1());
            t = t.saturating_add(gap);
            if self.spec.requests.is_none() && t >= self.spec.duration {
                return None;
            }
            if !self.effects.load {
                // The rate never changes: every proposal is an arrival.
                self.arrivals_made += 1;
                return Some(t);
            }
            let factor = self.spec.load_factor_at(t);
            if factor >= peak || self.environment.unit_above_zero() * peak <= factor {
                self.arrivals_made += 1;
                return Some(t);
            }
            self.rejected_proposals += 1;
            rejected_here += 1;
            if rejected_here.is_multiple_of(PROPOSALS_CHECKED_EVERY)
                && self.proposals_stop(t, rejected_here)
            {
                return None;
            }
        }
    }

    /// True if thinning, `rejected` proposals into one arrival, is to stop
    /// at `t`: the event limit counts its proposals, and past the horizon a
    /// rate of (nearly) 0 could propose for ever. The run is marked cut, and
    /// the loop stops at its next look. Checked only every
    /// [`PROPOSALS_CHECKED_EVERY`] proposals of one arrival, so a run with
    /// fewer per arrival draws what it always drew.
    #[cold]
    fn proposals_stop(&mut self, t: Nanos, rejected: u64) -> bool {
        if self.events_at_mark.saturating_add(self.rejected_proposals) >= self.max_events {
            self.m.complete = false;
            self.m.hit_event_limit = true;
            return true;
        }
        if rejected >= PROPOSALS_PAST_HORIZON && self.spec.horizon.is_some_and(|h| t > h) {
            self.m.complete = false;
            return true;
        }
        false
    }

    /// Makes the window holding `t` current, growing the series to it (one
    /// division per window entered, not per count), once the current one's
    /// counts and latencies are written.
    /// False, with the run marked cut, if the window holding `t` would pass
    /// [`MAX_WINDOWS`].
    #[cold]
    fn enter_window(&mut self, t: Nanos) -> bool {
        self.close_window();
        let i = t / self.spec.window;
        if i >= MAX_WINDOWS {
            self.m.complete = false;
            self.m.cut = Some(Cut::Windows { at_ns: t });
            return false;
        }
        let i = i as usize;
        self.current_window = i;
        if i >= self.m.windows.len() {
            let (queue, busy, waiting) = self.state_at_window_end();
            // Windows passed without an event end as the state stands.
            for w in self.m.windows.iter_mut().rev() {
                if w.queue != u64::MAX {
                    break;
                }
                w.queue = queue;
                w.busy = busy;
                w.retries_waiting = waiting;
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

    /// The queue, the busy workers and the retries waiting out their delay
    /// now: what a window that ends in this state records (its backlog).
    fn state_at_window_end(&self) -> (u64, u64, u64) {
        (
            self.queue.len() as u64,
            u64::from(self.busy),
            u64::from(self.retries_waiting),
        )
    }

    /// The server's workers now.
    #[inline]
    fn workers_now(&self) -> u32 {
        if self.effects.capacity {
            self.spec.workers_at(self.now)
        } else {
            self.base_workers
        }
    }

    /// Brings the queue, busy and retry areas up to `t` (within the load's
    /// duration), before the queue, the busy workers or the retries waiting
    /// change at `t`: the events that change none of them skip it, and the
    /// sums are the same, to the ns.
    #[inline]
    fn advance_areas(&mut self, t: Nanos) {
        let until = t.min(self.spec.duration);
        if until > self.areas_at {
            let span = u128::from(until - self.areas_at);
            self.m.queue_area += span * self.queue.len() as u128;
            self.m.retries_waiting_area += span * u128::from(self.retries_waiting);
            self.m.busy_area += span * u128::from(self.busy);
            self.areas_at = until;
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
        let horizon = self.spec.horizon.unwrap_or(CLOCK_END_NS - 1);
        let open_loop = matches!(self.spec.load, Load::Open { .. });
        let mut next_window_at = 0;
        let mut events = self.m.events;
        // A report comes once the count reaches a multiple of
        // PROGRESS_EVERY: at the mark one before it.
        let mut next_report = (events / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
        let mut mark = watch.max_events.min(next_report - 1);
        while let Some((time, event)) = self.events.first() {
            if time > horizon {
                self.m.complete = false;
                if self.spec.horizon.is_none() {
                    self.m.cut = Some(Cut::ClockEnd);
                }
                break;
            }
            if events >= mark {
                self.events_at_mark = events;
                if events.saturating_add(self.rejected_proposals) >= watch.max_events
                    || self.m.hit_event_limit
                {
                    self.m.complete = false;
                    self.m.hit_event_limit = true;
                    break;
                }
                if open_loop && self.requests.len() as u64 > MAX_IN_FLIGHT {
                    self.m.complete = false;
                    self.m.cut = Some(Cut::InFlight);
                    break;
                }
                (watch.on_progress)(time / NS_PER_US, self.m.successes + self.m.gave_up);
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
                if !self.enter_window(time) || self.m.hit_event_limit {
                    break;
                }
                next_window_at = (time / self.spec.window + 1).saturating_mul(self.spec.window);
            }
            events += 1;
            self.now = time;
            self.handle(event);
        }
        self.m.events = events;
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
                if let Some(t) = self.next_arrival_after(self.now) {
                    self.schedule(t, Kind::Arrival, 0, 0, 0, 0);
                }
            }
            Kind::FirstCall => self.arrive(e.req),
            Kind::ThinkDone => {
                if self.now < self.spec.duration {
                    let (req, _) = self.new_request(e.req);
                    self.window_counts.arrivals += 1;
                    if !self.start(req) {
                        self.end(req);
                    }
                }
            }
            Kind::CallBelow => self.call_below(e),
            Kind::AtServer => {
                if e.layer != self.bottom {
                    self.at_upper(e);
                    return;
                }
                self.advance_areas(self.now);
                self.m.arrived_at_server += 1;
                let queued = Queued {
                    req: e.req,
                    generation: e.generation,
                    attempt: e.attempt,
                    arrived: self.now,
                    deadline: e.arg,
                };
                let workers = self.workers_now();
                if self.busy < workers {
                    self.serve(queued);
                } else if self
                    .spec
                    .queue_limit
                    .is_some_and(|limit| self.queue.len() >= limit as usize)
                    || self.spec.shed_wait.is_some_and(|bound| {
                        sheds(self.queue.len() + 1, workers, self.mean_service, bound)
                    })
                {
                    self.reject(queued.req, queued.generation, queued.attempt);
                } else {
                    self.queue.push_back(queued);
                    self.m.queue_peak = self.m.queue_peak.max(self.queue.len() as u64);
                }
            }
            Kind::ServiceDone | Kind::ServiceExpired => {
                self.advance_areas(self.now);
                self.busy -= 1;
                let succeeded =
                    e.kind == Kind::ServiceDone && self.succeeds(e.req, e.generation, self.now);
                self.schedule(
                    e.arg,
                    Kind::Reply,
                    e.req,
                    e.generation,
                    e.attempt,
                    if succeeded {
                        REPLY_SUCCESS
                    } else {
                        REPLY_FAILURE
                    },
                );
                self.take_next();
            }
            Kind::Reply => {
                if self.hedging.is_some() {
                    self.hedged_reply(e);
                    return;
                }
                if self.timeout_hedging.is_some() {
                    self.kept_reply(e);
                    return;
                }
                let Some(awaited) = self.stop_awaiting(e.req, e.generation, e.attempt) else {
                    return;
                };
                if self.spec.timeout_noticed == TimeoutNoticed::Reply
                    && self.now - awaited.sent > self.timeout_of(awaited.timeout_choice)
                {
                    // Late: a timeout, whatever the reply says.
                    self.m.timeouts += 1;
                    self.window_counts.timeouts += 1;
                    self.attempt_ended(&awaited, Outcome::Timeout);
                    self.attempt_failed(e.req, Outcome::Timeout);
                    return;
                }
                let outcome = match e.arg {
                    REPLY_SUCCESS => Outcome::Success,
                    REPLY_REJECTED => Outcome::Rejected,
                    _ => Outcome::Failure,
                };
                self.attempt_ended(&awaited, outcome);
                if outcome == Outcome::Success {
                    self.succeed(e.req, awaited.layer, awaited.started);
                } else {
                    self.attempt_failed_from(e.req, outcome, e.arg == REPLY_FAILED_BELOW);
                }
            }
            Kind::Timeout => {
                if self.hedging.is_some() {
                    self.hedged_deadline(e);
                    return;
                }
                if self.timeout_hedging.is_some() {
                    self.kept_timeout(e);
                    return;
                }
                let Some(awaited) = self.stop_awaiting(e.req, e.generation, e.attempt) else {
                    return;
                };
                if let Some(l) = self.m.layers.get_mut(usize::from(awaited.layer)) {
                    l.timeouts += 1;
                }
                if awaited.layer == 0 {
                    self.m.timeouts += 1;
                    self.window_counts.timeouts += 1;
                }
                self.attempt_ended(&awaited, Outcome::Timeout);
                if awaited.layer == 0 && self.past_deadline(awaited.started, self.now) {
                    self.count_gave_up(0, awaited.started);
                    self.end(e.req);
                    return;
                }
                self.attempt_failed(e.req, Outcome::Timeout);
            }
            Kind::Resend => {
                if e.arg != ADMITTED {
                    self.advance_areas(self.now);
                    self.retries_waiting -= 1;
                }
                if self.timeout_hedging.is_some() {
                    self.kept_resend(e);
                    return;
                }
                if self.requests[e.req as usize].generation == e.generation
                    && !self.send(e.req, e.arg == ADMITTED)
                {
                    self.end(e.req);
                }
            }
            Kind::Capacity => {
                self.advance_areas(self.now);
                while !self.queue.is_empty() && self.busy < self.workers_now() {
                    self.take_next();
                }
            }
            Kind::Hedge => self.hedge_due(e),
        }
    }

    /// An open-loop request from `source` arrives: it starts, or waits for a
    /// client slot.
    #[inline(always)]
    fn arrive(&mut self, source: u32) {
        let Load::Open { concurrency, .. } = self.spec.load else {
            unreachable!("arrivals are open-loop")
        };
        let (req, generation) = self.new_request(source);
        self.window_counts.arrivals += 1;
        self.last_arrival = self.now;
        match concurrency {
            Some(k) if self.holding_slot >= k => {
                self.waiting_for_slot.push_back((req, generation));
            }
            _ => {
                if concurrency.is_some() {
                    self.holding_slot += 1;
                }
                if !self.start(req) {
                    self.end(req);
                }
            }
        }
    }

    /// A new request from `source`, in the slab: its index and generation.
    #[inline(always)]
    fn new_request(&mut self, source: u32) -> (u32, u32) {
        self.m.requests += 1;
        let fate = if self.effects.per_user_failures {
            self.environment.unit_above_zero()
        } else {
            1.0
        };
        let choices = self.spec.timeout_choices.len() as u64;
        let timeout_choice = if choices == 0 {
            0
        } else {
            self.environment.uniform(0, choices - 1) as u8
        };
        self.new_call(source, 0, fate, timeout_choice)
    }

    /// A new request to service `layer` (0: a user's), in the slab: its
    /// index and generation. A call below carries its user's `fate`.
    #[inline(always)]
    fn new_call(&mut self, source: u32, layer: u8, fate: f64, timeout_choice: u8) -> (u32, u32) {
        let now = self.now;
        if let Some(controls) = self.controls_of(layer) {
            controls.request_started(source, now);
        }
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.calls += 1;
        }
        let request = Request {
            layer,
            timeout_choice,
            generation: 0,
            source,
            started: self.now,
            attempts: 0,
            sent: 0,
            awaiting: false,
            retry_of: None,
            fate,
            walk: self.policy_of(layer).start(),
        };
        match self.free.pop() {
            Some(i) => {
                let slot = &mut self.requests[i as usize];
                let generation = slot.generation.wrapping_add(1);
                *slot = Request {
                    generation,
                    ..request
                };
                (i, generation)
            }
            None => {
                self.requests.push(request);
                ((self.requests.len() - 1) as u32, 0)
            }
        }
    }

    /// The request starts: latency counts from now; its first attempt goes.
    /// False if a control refused it (the caller ends the request).
    #[must_use]
    #[inline(always)]
    fn start(&mut self, req: u32) -> bool {
        self.requests[req as usize].started = self.now;
        if let Some(hedging) = &mut self.hedging {
            hedging.slots.start(req);
            if !self.send(req, false) {
                return false;
            }
            self.copy_sent(req, true);
            return true;
        }
        if self.timeout_hedging.is_some() {
            return self.kept_start(req);
        }
        self.send(req, false)
    }

    /// Sends the request's next attempt, with its timeout, if every control
    /// admits it (or `admitted` says they did); false if one refused
    /// (counted; the caller ends the request as given up). An attempt a
    /// rate limiter holds back is sent when its token comes.
    #[must_use]
    #[inline(always)]
    fn send(&mut self, req: u32, admitted: bool) -> bool {
        let now = self.now;
        let r = &self.requests[req as usize];
        let (layer, source, retry_of, generation) = (r.layer, r.source, r.retry_of, r.generation);
        if let Some(controls) = self.controls_of(layer) {
            if !admitted {
                match controls.admit(source, now, retry_of.is_some()) {
                    None => {
                        if retry_of.is_some() {
                            controls.retry_dropped(source, now);
                        }
                        let retried = controls.refusal_retried();
                        if layer == 0 {
                            self.m.refused += 1;
                        }
                        // A refusal the client's retry treats as an error
                        // (resilience4j, Polly) uses up an attempt unsent.
                        if retried {
                            self.requests[req as usize].attempts += 1;
                            if self.schedule_retry(req, Outcome::Failure, false) {
                                return true;
                            }
                        }
                        // Hedging on timeout: the refused attempt fails
                        // alone while others await their replies (Envoy's
                        // `onUpstreamReset` of an overflow).
                        if self
                            .timeout_hedging
                            .as_mut()
                            .is_some_and(|kept| kept.slots.of(req).in_flight > 0)
                        {
                            return true;
                        }
                        self.count_gave_up(layer, self.requests[req as usize].started);
                        return false;
                    }
                    Some(0) => {}
                    Some(wait) => {
                        self.schedule(
                            now.saturating_add(wait),
                            Kind::Resend,
                            req,
                            generation,
                            0,
                            ADMITTED,
                        );
                        return true;
                    }
                }
            }
            controls.attempt_sent(source, now, retry_of);
        }
        let timeout = {
            let r = &self.requests[req as usize];
            self.attempt_timeout(r, req, r.generation, r.attempts)
        };
        let r = &mut self.requests[req as usize];
        let (generation, attempt, started) = (r.generation, r.attempts, r.started);
        // The client stops waiting at the attempt's timeout or the request's
        // deadline, whichever is first.
        let wait = match self.deadline {
            Some(deadline) if layer == 0 => {
                timeout.min(started.saturating_add(deadline).saturating_sub(now))
            }
            _ => timeout,
        };
        r.attempts += 1;
        r.awaiting = true;
        r.sent = now;
        if layer == 0 {
            self.m.attempts += 1;
            self.window_counts.attempts += 1;
        }
        let deadline = match self.spec.deadline_propagation {
            _ if timeout == NO_TIMEOUT => Nanos::MAX,
            DeadlinePropagation::Call => started.saturating_add(timeout),
            DeadlinePropagation::Attempt => now.saturating_add(timeout),
            DeadlinePropagation::Off => Nanos::MAX,
        };
        let arrive = now.saturating_add(self.spec.request_delay.sample(&mut self.environment));
        self.schedule_at_layer(
            arrive,
            Kind::AtServer,
            req,
            generation,
            attempt,
            deadline,
            layer,
        );
        if wait != NO_TIMEOUT && self.spec.timeout_noticed == TimeoutNoticed::Deadline {
            self.schedule(
                now.saturating_add(wait),
                Kind::Timeout,
                req,
                generation,
                attempt,
                0,
            );
        }
        true
    }

    /// If the client of the request in slot `req` still waits for this
    /// attempt's reply, it stops waiting: what a reply or a timeout needs of
    /// the request, read with one look at the slab.
    #[inline(always)]
    fn stop_awaiting(&mut self, req: u32, generation: u32, attempt: u32) -> Option<Awaited> {
        let r = &mut self.requests[req as usize];
        if !r.awaits(generation, attempt) {
            return None;
        }
        r.awaiting = false;
        Some(Awaited {
            layer: r.layer,
            source: r.source,
            retry_of: r.retry_of,
            started: r.started,
            sent: r.sent,
            timeout_choice: r.timeout_choice,
        })
    }

    /// Tells the controls how the awaited attempt ended.
    #[inline(always)]
    fn attempt_ended(&mut self, awaited: &Awaited, outcome: Outcome) {
        let now = self.now;
        if let Some(controls) = self.controls_of(awaited.layer) {
            controls.attempt_ended(awaited.source, now, awaited.sent, outcome, awaited.retry_of);
        }
    }

    /// The timeout of a request's attempts: the spec's, or the `choice` it
    /// drew; [`NO_TIMEOUT`] for none.
    #[inline]
    fn timeout_of(&self, choice: u8) -> Nanos {
        match self.spec.timeout_choices.get(usize::from(choice)) {
            Some(&t) => t,
            None => self.spec.timeout.unwrap_or(NO_TIMEOUT),
        }
    }

    /// True if the reply of this attempt, arriving at `back`, finds its
    /// caller no longer waiting: it timed out already, or will have by then
    /// (a timeout at the reply's instant was scheduled earlier, so it wins
    /// the tie).
    #[inline]
    fn reply_ignored(&self, req: u32, generation: u32, attempt: u32, back: Nanos) -> bool {
        let r = &self.requests[req as usize];
        if self.timeout_hedging.is_some() {
            // Every attempt is awaited while its request lasts, past its
            // own timeout too.
            return r.generation != generation || self.past_deadline(r.started, back);
        }
        // A hedged request awaits every copy of its own while it lasts.
        let awaited = if self.hedging.is_some() {
            r.generation == generation
        } else {
            r.awaits(generation, attempt)
        };
        !awaited
            || back
                >= r.sent
                    .saturating_add(self.attempt_timeout(r, req, generation, attempt))
            || (r.layer == 0 && self.past_deadline(r.started, back))
    }

    /// A worker takes `queued` now. Its service time and reply delay are
    /// drawn here, so its sojourn and whether its reply will be ignored are
    /// known at once.
    #[inline(always)]
    fn serve(&mut self, queued: Queued) {
        self.busy += 1;
        self.latest_start = self.now;
        let mut service = self.spec.service.sample(&mut self.environment);
        if self.spec.service_per_busy > 0 {
            service += self.spec.service_per_busy * u64::from(self.busy);
        }
        if self.effects.slowdown {
            let factor = self.spec.slowdown_at(self.now);
            if factor != 1.0 {
                service = round_ns(service as f64 * factor);
            }
        }
        let mut expired = false;
        if queued.deadline != Nanos::MAX {
            (service, expired) = deadline_propagation::hold(queued.deadline, self.now, service);
        }
        let done = self.now.saturating_add(service);
        let back = done.saturating_add(self.spec.reply_delay.sample(&mut self.environment));
        self.m.busy_ns += u128::from(service);
        self.m.served += 1;
        self.m.sojourn_ns += u128::from(done - queued.arrived);
        // Work whose reply its caller ignores is wasted. An attempt no
        // longer awaited has timed out already (it waited in the queue, so
        // no reply or rejection ended it).
        if self.times_out && self.reply_ignored(queued.req, queued.generation, queued.attempt, back)
        {
            self.m.wasted_ns += u128::from(service);
        }
        self.schedule_at_layer(
            done,
            if expired {
                Kind::ServiceExpired
            } else {
                Kind::ServiceDone
            },
            queued.req,
            queued.generation,
            queued.attempt,
            back,
            self.bottom,
        );
    }

    /// The next queued attempt, if a worker is free for it, as the
    /// discipline chooses; attempts it drops on the way are rejected.
    #[inline(always)]
    fn take_next(&mut self) {
        if self.busy < self.workers_now() {
            let next = self.discipline.take(
                &mut self.queue,
                self.now,
                &mut self.dropped,
                &mut self.environment,
            );
            if !self.dropped.is_empty() {
                let mut dropped = std::mem::take(&mut self.dropped);
                for attempt in dropped.drain(..) {
                    self.reject(attempt.req, attempt.generation, attempt.attempt);
                }
                self.dropped = dropped;
            }
            if let Some(next) = next {
                self.serve(next);
            }
        }
    }

    /// The server refuses attempt `attempt` of the request in slot `req`
    /// now (a full queue, shedding, or its discipline's drop): its rejection
    /// travels back to the client. (The numbers, not the queued attempt: a
    /// struct passed to a call is built on the stack, and the loop then read
    /// it back across narrower stores.)
    fn reject(&mut self, req: u32, generation: u32, attempt: u32) {
        self.m.rejected += 1;
        self.window_counts.rejected += 1;
        let back = self
            .now
            .saturating_add(self.spec.reply_delay.sample(&mut self.environment));
        self.schedule(back, Kind::Reply, req, generation, attempt, REPLY_REJECTED);
    }

    /// Does the attempt of `req` completing at `t` succeed?
    #[inline(always)]
    fn succeeds(&mut self, req: u32, generation: u32, t: Nanos) -> bool {
        let fail_p = if self.effects.failures {
            match self.failure_share(req, generation, t) {
                Some(p) => p,
                None => return false,
            }
        } else {
            self.spec.fail_rate
        };
        fail_p <= 0.0 || self.environment.unit_above_zero() > fail_p
    }

    /// The failure probability of the attempt of `req` completing at `t`
    /// under the spec's failure triggers; `None` if it fails for certain
    /// (an outage, or its user's fate).
    fn failure_share(&self, req: u32, generation: u32, t: Nanos) -> Option<f64> {
        // A failure trigger's share is the failure rate inside its window,
        // in place of the base rate (the Yandex study's injected failures
        // replace its baseline); overlapping partial failures compound.
        let mut fail_p = self.spec.fail_rate;
        let mut replaced = false;
        let lingers = self.spec.failure_end == FailureEnd::NextStart;
        for trigger in &self.spec.triggers {
            // With the Yandex study's failure end, a failure lasts past its
            // window until a worker starts on an attempt after it.
            let failing = trigger.covers(t)
                || (lingers && trigger.from <= t && self.latest_start <= trigger.to);
            if !failing {
                continue;
            }
            if !replaced
                && matches!(
                    trigger.kind,
                    TriggerKind::PartialFailure(_) | TriggerKind::PerUserFailure(_)
                )
            {
                fail_p = 0.0;
                replaced = true;
            }
            match trigger.kind {
                TriggerKind::Outage => return None,
                TriggerKind::PartialFailure(p) => fail_p = 1.0 - (1.0 - fail_p) * (1.0 - p),
                TriggerKind::PerUserFailure(p) => {
                    let r = &self.requests[req as usize];
                    // A request that ended since keeps no fate: its reply is
                    // ignored anyway.
                    if r.generation == generation && r.fate <= p {
                        return None;
                    }
                }
                _ => {}
            }
        }
        Some(fail_p)
    }

    /// The request in slot `req`, to service `layer` and started at
    /// `started`, succeeded now.
    #[inline(always)]
    fn succeed(&mut self, req: u32, layer: u8, started: Nanos) {
        let now = self.now;
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.successes += 1;
            l.latency.record(now - started);
        }
        if layer > 0 {
            self.end_call(req, true);
            return;
        }
        self.m.successes += 1;
        self.window_counts.successes += 1;
        let latency = now - started;
        self.window_counts.latency_sum_ns += latency;
        if self.judged(started) {
            let w = &mut self.window_counts;
            w.judged_successes += 1;
            w.judged_latency_sum_ns += latency;
            let latency_ms = latency as f64 / 1e6;
            w.judged_latency_squares_ms2 += latency_ms * latency_ms;
        }
        self.m.latency.record(latency);
        self.m.latency_total_ns += u128::from(latency);
        if let Some(latencies) = &mut self.window_latencies {
            latencies.push(latency);
        }
        self.end(req);
    }

    /// The current attempt failed with `cause` (a failed reply, a rejection
    /// or a timeout): retry or give up, decided now.
    fn attempt_failed(&mut self, req: u32, cause: Outcome) {
        self.attempt_failed_from(req, cause, false);
    }

    /// [`Self::attempt_failed`], where `from_below` says the failure came
    /// from below the service called (its own call gave up): with the
    /// adjacent retry scope, only the caller right above the failing
    /// service retries, so this one gives up.
    fn attempt_failed_from(&mut self, req: u32, cause: Outcome, from_below: bool) {
        if !self.schedule_retry(req, cause, from_below) {
            let r = &self.requests[req as usize];
            self.count_gave_up(r.layer, r.started);
            self.end(req);
        }
    }

    /// Schedules the retry of the request in slot `req` after an attempt
    /// that failed with `cause`, if its attempt limit and its controls let
    /// it; false if they do not (the caller ends the request).
    fn schedule_retry(&mut self, req: u32, cause: Outcome, from_below: bool) -> bool {
        let now = self.now;
        let r = self.requests[req as usize];
        let max_attempts = self.attempt_limits[usize::from(r.layer)];
        let passes_up = from_below && self.spec.chain.retry_scope == RetryScope::Adjacent;
        let may_retry = !passes_up
            && self.retry_on.retries(cause)
            && max_attempts.is_none_or(|max| r.attempts < max)
            && self
                .controls_of(r.layer)
                .is_none_or(|controls| controls.allow_retry(r.source, now, cause));
        if !may_retry {
            return false;
        }
        let policy = self.policy_of(self.requests[req as usize].layer);
        let r = &mut self.requests[req as usize];
        r.retry_of = Some(cause);
        let delay_us =
            policy.delay_after(r.attempts, cause_of(cause), &mut r.walk, &mut self.backoff);
        let (generation, layer, started) = (r.generation, r.layer, r.started);
        let at = self.now.saturating_add(delay_us.saturating_mul(NS_PER_US));
        if layer == 0 && self.past_deadline(started, at) {
            // The retry would start after the request's deadline.
            let source = self.requests[req as usize].source;
            if let Some(controls) = self.controls_of(layer) {
                controls.retry_dropped(source, now);
            }
            return false;
        }
        self.advance_areas(now);
        self.retries_waiting += 1;
        self.schedule(at, Kind::Resend, req, generation, 0, 0);
        true
    }

    /// True if the users' request that started at `started` is past its
    /// deadline at `t` (never without one).
    #[inline]
    fn past_deadline(&self, started: Nanos, t: Nanos) -> bool {
        self.deadline
            .is_some_and(|d| t >= started.saturating_add(d))
    }

    /// The request is over: its slot goes to the next waiting request, or its
    /// closed-loop user starts thinking. A waiting request a control refuses
    /// at once ends in turn (a loop, not recursion: an open breaker may
    /// refuse every waiting request).
    #[inline(always)]
    fn end(&mut self, req: u32) {
        if self.requests[req as usize].layer > 0 {
            self.end_call(req, false);
            return;
        }
        let mut ending = req;
        loop {
            let source = self.requests[ending as usize].source;
            self.free_slot(ending);
            match self.spec.load {
                Load::Open {
                    concurrency: Some(_),
                    ..
                } => match self.waiting_for_slot.pop_front() {
                    Some((next, _)) if !self.start(next) => ending = next,
                    Some(_) => return,
                    None => {
                        self.holding_slot -= 1;
                        return;
                    }
                },
                Load::Closed { think, .. } => {
                    let t = self.now.saturating_add(think.sample(&mut self.environment));
                    self.schedule(t, Kind::ThinkDone, source, 0, 0, 0);
                    return;
                }
                Load::Open { .. } => return,
            }
        }
    }

    /// The request in slot `req` is over: events still naming it are stale
    /// (its generation moves on) and the slot is free for the next.
    #[inline]
    fn free_slot(&mut self, req: u32) {
        let r = &mut self.requests[req as usize];
        r.generation = r.generation.wrapping_add(1);
        r.awaiting = false;
        self.free.push(req);
    }

    /// A request to service `layer` gave up (counted as the users' when
    /// it is theirs).
    fn count_gave_up(&mut self, layer: u8, started: Nanos) {
        if let Some(l) = self.m.layers.get_mut(usize::from(layer)) {
            l.gave_up += 1;
        }
        if layer == 0 {
            self.m.gave_up += 1;
            self.window_counts.gave_up += 1;
            if self.judged(started) {
                self.window_counts.judged_gave_up += 1;
            }
        }
    }

    /// Does the verdict judge a users' request made at `started` that ends
    /// now? Before the first trigger, all; after it, those made after the
    /// last trigger's end ([`Window::judged_successes`]).
    #[inline(always)]
    fn judged(&self, started: Nanos) -> bool {
        self.now < self.judged_before || started >= self.judged_after
    }

    /// An attempt reaches service `e.layer`, above the server: a free
    /// worker takes it, or it waits (the upper services' queues are
    /// unbounded FIFO).
    #[cold]
    fn at_upper(&mut self, e: Event) {
        let layer = usize::from(e.layer);
        self.m.layers[layer].attempts += 1;
        let queued = Queued {
            req: e.req,
            generation: e.generation,
            attempt: e.attempt,
            arrived: self.now,
            deadline: Nanos::MAX,
        };
        let workers = self.spec.chain.workers_of(layer).unwrap_or(u32::MAX);
        if self.uppers[layer].busy < workers {
            self.serve_upper(e.layer, queued);
        } else {
            self.uppers[layer].queue.push_back(queued);
        }
    }

    /// A worker of upper service `layer` takes `queued`: its own work
    /// first, then its call below.
    #[cold]
    fn serve_upper(&mut self, layer: u8, queued: Queued) {
        self.uppers[usize::from(layer)].busy += 1;
        let work = self
            .spec
            .chain
            .service_of(usize::from(layer))
            .sample(&mut self.environment);
        self.schedule_at_layer(
            self.now.saturating_add(work),
            Kind::CallBelow,
            queued.req,
            queued.generation,
            queued.attempt,
            self.now,
            layer,
        );
    }

    /// An upper worker's own work on an attempt is done: it calls the
    /// service below and waits. It does so whether or not its caller still
    /// waits (nothing cancels work), and the call carries the user's fate.
    #[cold]
    fn call_below(&mut self, e: Event) {
        let parent = &self.requests[e.req as usize];
        let fate = if parent.generation == e.generation {
            parent.fate
        } else {
            1.0
        };
        let (child, _) = self.new_call(0, e.layer + 1, fate, 0);
        let call = Call {
            req: e.req,
            generation: e.generation,
            attempt: e.attempt,
            held_since: e.arg,
        };
        let slot = child as usize;
        if self.calls.len() <= slot {
            self.calls.resize(slot + 1, Call::default());
        }
        self.calls[slot] = call;
        if !self.start(child) {
            self.end(child);
        }
    }

    /// A call below ends, `succeeded` or not: the upper worker that made it
    /// is free, and its attempt's reply goes up (a failure from below if
    /// the call gave up). The worker's time counts as wasted if its caller
    /// no longer waits for that reply, or will have timed out when it comes.
    #[cold]
    fn end_call(&mut self, child: u32, succeeded: bool) {
        let layer = self.requests[child as usize].layer - 1;
        self.free_slot(child);
        let call = self.calls[child as usize];
        let held = u128::from(self.now - call.held_since);
        let back = self
            .now
            .saturating_add(self.spec.reply_delay.sample(&mut self.environment));
        let wasted = self.reply_ignored(call.req, call.generation, call.attempt, back);
        let metrics = &mut self.m.layers[usize::from(layer)];
        metrics.busy_ns += held;
        if wasted {
            metrics.wasted_ns += held;
        }
        self.schedule_at_layer(
            back,
            Kind::Reply,
            call.req,
            call.generation,
            call.attempt,
            if succeeded {
                REPLY_SUCCESS
            } else {
                REPLY_FAILED_BELOW
            },
            layer,
        );
        let upper = &mut self.uppers[usize::from(layer)];
        upper.busy -= 1;
        if let Some(next) = upper.queue.pop_front() {
            self.serve_upper(layer, next);
        }
    }

    /// A copy of hedged request `req` was sent now (`first`: its first
    /// copy): it is in flight, and its next copy is scheduled `delay` on if
    /// the most copies are not sent and the throttle is above half, else
    /// hedging freezes, though not after the first copy ([`next_copy`]). No
    /// copy is scheduled past the deadline, which ends the request first.
    fn copy_sent(&mut self, req: u32, first: bool) {
        let now = self.now;
        let r = &self.requests[req as usize];
        let (generation, source, started, sent) = (r.generation, r.source, r.started, r.attempts);
        let hedging = self.hedging.as_mut().expect("a hedged run");
        let hedge = hedging.hedge;
        let copies = hedging.slots.of(req);
        copies.in_flight += 1;
        let frozen = copies.frozen;
        // Asked only when a copy may come; gRPC's throttle ignores the
        // cause (`isAboveThreshold`).
        let throttle_allows = sent < hedge.copies
            && !frozen
            && self
                .controls
                .as_mut()
                .is_none_or(|c| c.allow_retry(source, now, Outcome::Failure));
        match next_copy(sent, hedge.copies, frozen, throttle_allows, first) {
            NextCopy::Scheduled => {
                let at = now.saturating_add(hedge.delay);
                if !self.past_deadline(started, at) {
                    self.schedule(at, Kind::Hedge, req, generation, sent, 0);
                }
            }
            NextCopy::Frozen => {
                self.hedging
                    .as_mut()
                    .expect("a hedged run")
                    .slots
                    .of(req)
                    .frozen = true;
            }
            NextCopy::NotScheduled => {}
        }
    }

    /// A hedged request's next copy is due: it goes, if the request still
    /// lasts.
    fn hedge_due(&mut self, e: Event) {
        if self.requests[e.req as usize].generation != e.generation {
            return;
        }
        if !self.send(e.req, false) {
            self.end(e.req);
            return;
        }
        self.copy_sent(e.req, false);
    }

    /// A reply to a copy of a hedged request: the first success wins; a
    /// fatal failure (an outcome not in `retry_on`) fails the request; a
    /// non-fatal one takes a throttle token and ends that copy alone, unless
    /// the throttle is then at or below half or nothing is left to wait for
    /// ([`after_failure`]). The request's other copies are abandoned when it
    /// ends: their replies find a later generation.
    fn hedged_reply(&mut self, e: Event) {
        let r = &self.requests[e.req as usize];
        if r.generation != e.generation {
            return;
        }
        let (source, started, sent, attempts) = (r.source, r.started, r.sent, r.attempts);
        let now = self.now;
        let hedging = self.hedging.as_mut().expect("a hedged run");
        let most = hedging.hedge.copies;
        let copies = hedging.slots.of(e.req);
        copies.in_flight -= 1;
        let (in_flight, frozen) = (copies.in_flight, copies.frozen);
        let outcome = match e.arg {
            REPLY_SUCCESS => Outcome::Success,
            REPLY_REJECTED => Outcome::Rejected,
            _ => Outcome::Failure,
        };
        // The throttle sees the winner's success and non-fatal failures
        // only; `sent` is the latest copy's (gRPC's throttle reads no time).
        if outcome == Outcome::Success {
            if let Some(controls) = self.controls.as_mut() {
                controls.attempt_ended(source, now, sent, outcome, None);
            }
            self.succeed(e.req, 0, started);
            return;
        }
        let fatal = !self.retry_on.retries(outcome);
        let throttled = !fatal
            && self.controls.as_mut().is_some_and(|c| {
                c.attempt_ended(source, now, sent, outcome, None);
                !c.allow_retry(source, now, outcome)
            });
        let hedge_may_come = attempts < most && !frozen;
        if after_failure(fatal, throttled, in_flight, hedge_may_come) == AfterFailure::Fails {
            self.count_gave_up(0, started);
            self.end(e.req);
        }
    }

    /// A hedged request's deadline passed (its copies have no timeout of
    /// their own): it gives up, and every copy still in flight times out.
    fn hedged_deadline(&mut self, e: Event) {
        let r = &self.requests[e.req as usize];
        if r.generation != e.generation {
            return;
        }
        let started = r.started;
        let in_flight = self
            .hedging
            .as_mut()
            .expect("a hedged run")
            .slots
            .of(e.req)
            .in_flight;
        self.m.timeouts += u64::from(in_flight);
        self.window_counts.timeouts += u64::from(in_flight);
        self.count_gave_up(0, started);
        self.end(e.req);
    }

    /// The attempts-kept state (a run hedging on timeout).
    #[inline]
    fn kept(&mut self) -> &mut TimeoutHedging {
        self.timeout_hedging
            .as_mut()
            .expect("a run hedging on timeout")
    }

    /// A request hedging on timeout starts: its deadline (the route's
    /// timeout, which ends every attempt, kept or not) is set, and its first
    /// attempt goes. False if a control refused it.
    fn kept_start(&mut self, req: u32) -> bool {
        let r = &self.requests[req as usize];
        let (generation, started) = (r.generation, r.started);
        self.kept().slots.start(req);
        if let Some(deadline) = self.deadline {
            // Any timeout at or past the deadline is the deadline's.
            self.schedule(
                started.saturating_add(deadline),
                Kind::Timeout,
                req,
                generation,
                0,
                0,
            );
        }
        self.kept_send(req, false)
    }

    /// Sends the request's next attempt ([`Self::send`]) and counts it in
    /// flight if it went; false if a control refused it and nothing else
    /// is in flight (the caller ends the request).
    fn kept_send(&mut self, req: u32, admitted: bool) -> bool {
        let before = self.requests[req as usize].attempts;
        if !self.send(req, admitted) {
            return false;
        }
        if self.requests[req as usize].attempts > before {
            let attempts = self.kept().slots.of(req);
            attempts.in_flight += 1;
            attempts.timed_out = false;
        }
        true
    }

    /// A retry of a request hedging on timeout is due.
    fn kept_resend(&mut self, e: Event) {
        if self.requests[e.req as usize].generation != e.generation {
            return;
        }
        self.kept().slots.of(e.req).pending = false;
        if !self.kept_send(e.req, e.arg == ADMITTED) {
            self.end(e.req);
        }
    }

    /// Envoy's `shouldRetry` for a request hedging on timeout, after an
    /// attempt that ended (or timed out) with `cause`: true if a retry is
    /// scheduled, after the policy's backoff. Refused when `num_retries`
    /// are spent; a control's refusal spends one ([`kept::retries_left`]).
    /// A retry due past the deadline stays pending until the deadline ends
    /// the request, as Envoy's backoff timer outlasted by the route's
    /// timeout does.
    fn kept_retry(&mut self, req: u32, cause: Outcome) -> bool {
        let now = self.now;
        let (attempts, source) = {
            let r = &self.requests[req as usize];
            (r.attempts, r.source)
        };
        let spent = self.kept().slots.of(req).spent;
        if !kept::retries_left(attempts, spent, self.attempt_limits[0]) {
            return false;
        }
        if let Some(controls) = self.controls.as_mut()
            && !controls.allow_retry(source, now, cause)
        {
            self.kept().slots.of(req).spent += 1;
            return false;
        }
        let policy = self.policy_of(0);
        let r = &mut self.requests[req as usize];
        r.retry_of = Some(cause);
        let delay_us =
            policy.delay_after(r.attempts, cause_of(cause), &mut r.walk, &mut self.backoff);
        let (generation, started) = (r.generation, r.started);
        let at = now.saturating_add(delay_us.saturating_mul(NS_PER_US));
        self.kept().slots.of(req).pending = true;
        if !self.past_deadline(started, at) {
            self.advance_areas(now);
            self.retries_waiting += 1;
            self.schedule(at, Kind::Resend, req, generation, 0, 0);
        }
        true
    }

    /// A timeout of a request hedging on timeout. At or past the deadline:
    /// the request gives up and every attempt in flight is abandoned
    /// (Envoy's `onResponseTimeout`). Else the latest attempt's per-try
    /// timeout, if it still awaits its reply: it is kept, the retry counted
    /// for it stops counting, and a retry is asked for whatever `retry_on`
    /// says (`onSoftPerTryTimeout`, `shouldHedgeRetryPerTryTimeout`).
    fn kept_timeout(&mut self, e: Event) {
        let now = self.now;
        let r = &self.requests[e.req as usize];
        if r.generation != e.generation {
            return;
        }
        let (started, source, awaiting, retry_of) = (r.started, r.source, r.awaiting, r.retry_of);
        if self.past_deadline(started, now) {
            // The latest attempt is a timeout now unless its own fired.
            if awaiting && !self.kept().slots.of(e.req).timed_out {
                self.m.timeouts += 1;
                self.window_counts.timeouts += 1;
            }
            self.abandon(e.req);
            self.count_gave_up(0, started);
            self.end(e.req);
            return;
        }
        if !r.awaits(e.generation, e.attempt) {
            return;
        }
        self.m.timeouts += 1;
        self.window_counts.timeouts += 1;
        self.kept().slots.of(e.req).timed_out = true;
        if retry_of.is_some() {
            // `shouldRetry` resets the retry counted first (`resetRetry`).
            self.requests[e.req as usize].retry_of = None;
            if let Some(controls) = self.controls.as_mut() {
                controls.retry_dropped(source, now);
            }
        }
        if self.kept_retry(e.req, Outcome::Timeout) {
            // Retried: its reply can still win, but never retry.
            self.requests[e.req as usize].awaiting = false;
        }
    }

    /// A reply to an attempt of a request hedging on timeout: a success
    /// wins and abandons the others; a failure asks for a retry, waits for
    /// the others, or fails the request ([`kept::after_failure`]).
    fn kept_reply(&mut self, e: Event) {
        let now = self.now;
        let r = &mut self.requests[e.req as usize];
        if r.generation != e.generation {
            return;
        }
        let current = r.awaits(e.generation, e.attempt);
        r.awaiting &= !current;
        let (source, started, sent) = (r.source, r.started, r.sent);
        // Only the latest attempt, not yet retried, holds a retry's count.
        let retry_of = if current { r.retry_of } else { None };
        let attempts = self.kept().slots.of(e.req);
        attempts.in_flight -= 1;
        let kept_won = !current || attempts.timed_out;
        let outcome = match e.arg {
            REPLY_SUCCESS => Outcome::Success,
            REPLY_REJECTED => Outcome::Rejected,
            _ => Outcome::Failure,
        };
        // Envoy's controls read no attempt's duration: `sent` is the
        // latest's.
        if let Some(controls) = self.controls.as_mut() {
            controls.attempt_ended(source, now, sent, outcome, retry_of);
        }
        if outcome == Outcome::Success {
            if kept_won {
                self.kept().kept_wins += 1;
            }
            self.abandon(e.req);
            self.succeed(e.req, 0, started);
            return;
        }
        let retriable = self.retry_on.retries(outcome);
        let attempts = *self.kept().slots.of(e.req);
        let awaited = attempts.in_flight > 0 || attempts.pending;
        let fails = match kept::after_failure(retriable, current, awaited) {
            KeptAfter::AsksRetry => {
                !self.kept_retry(e.req, outcome)
                    && kept::after_refusal(attempts.in_flight > 0) == KeptAfter::Fails
            }
            KeptAfter::Waits => false,
            KeptAfter::Fails => true,
        };
        if fails {
            self.abandon(e.req);
            self.count_gave_up(0, started);
            self.end(e.req);
        }
    }

    /// The request hedging on timeout ends with attempts in flight or a
    /// retry pending: Envoy resets them (`resetOtherUpstreams`, or the
    /// route's timeout) and drops the retry. The controls learn each
    /// attempt ended (Envoy's read no outcome) and the retry dropped; only
    /// the latest attempt, not yet retried, holds a retry's count.
    fn abandon(&mut self, req: u32) {
        let now = self.now;
        let attempts = *self.kept().slots.of(req);
        let r = &self.requests[req as usize];
        let Some(controls) = self.controls.as_mut() else {
            return;
        };
        for i in 0..attempts.in_flight {
            let retry_of = if i == 0 && r.awaiting {
                r.retry_of
            } else {
                None
            };
            controls.attempt_ended(r.source, now, r.sent, Outcome::Timeout, retry_of);
        }
        if attempts.pending {
            controls.retry_dropped(r.source, now);
        }
    }

    /// Writes the current window's counts and its latency quantiles, if it
    /// had successes, and empties both for the next.
    fn close_window(&mut self) {
        let counts = std::mem::take(&mut self.window_counts);
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

    fn finish(mut self) -> ServerMetrics {
        // Storage only grows, so its capacities now are its high-water marks.
        self.m.peak_in_flight = self.requests.len() as u64;
        self.m.state_bytes = (self.requests.capacity() * size_of::<Request>()
            + self.queue.capacity() * size_of::<Queued>()
            + self.events.capacity_bytes()
            + self
                .hedging
                .as_ref()
                .map_or(0, |h| h.slots.capacity_bytes())
            + self
                .timeout_hedging
                .as_ref()
                .map_or(0, |k| k.slots.capacity_bytes())) as u64;
        self.m.kept_wins = self.timeout_hedging.as_ref().map_or(0, |k| k.kept_wins);
        let end = self.now;
        self.advance_areas(end);
        // The last event's window was entered, so it is within the bound.
        self.enter_window(end);
        let (queue, busy, waiting) = self.state_at_window_end();
        for w in self.m.windows.iter_mut().filter(|w| w.queue == u64::MAX) {
            w.queue = queue;
            w.busy = busy;
            w.retries_waiting = waiting;
        }
        self.m.end_ns = end;
        if let Some(server) = self.m.layers.last_mut() {
            server.attempts = self.m.arrived_at_server;
            server.rejected = self.m.rejected;
            server.busy_ns = self.m.busy_ns;
            server.wasted_ns = self.m.wasted_ns;
        }
        self.m.load_end_ns = match self.spec.requests {
            Some(_) => self.last_arrival,
            None => self.spec.duration,
        };
        if let (Some(first), Some(last)) = (
            self.spec.first_trigger_start(),
            self.spec.last_trigger_end(),
        ) {
            let window = self.spec.window;
            // A run cut short (its horizon) saw its load only until the cut.
            let seen_until = if self.m.complete {
                self.m.load_end_ns
            } else {
                self.m.load_end_ns.min(end)
            };
            let judgement = judge(&Judged {
                windows: &self.m.windows,
                window,
                first_trigger: first,
                last_trigger_end: last,
                patience: self.spec.patience,
                load_end: seen_until,
                goodput: Goodput::of(&self.spec.load),
            });
            let verdict = judgement.verdict;
            self.m.verdict = Some(verdict);
            self.m.backlog_trend = judgement.trend;
            let (from, to) = (first / window, last.div_ceil(window));
            let (during, ended) = success_over(&self.m.windows, from as usize, to as usize);
            self.m.success_during_trigger = during;
            self.m.ended_during_trigger = Some(ended);
            if verdict != crate::measure::verdict::Verdict::Unresolved {
                let (after_from, after_to) = judged_windows(window, last, self.spec.patience);
                self.m.success_after_trigger =
                    success_over(&self.m.windows, after_from, after_to).0;
            }
        }
        self.m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::chain::{Chain, LayerSpec};
    use crate::model::server::{Dist, NS_PER_MS, Service};
    use crate::policy::{CapMode, PolicyKind};

    fn retry(kind: PolicyKind, max_attempts: Option<u32>) -> ServerRetry {
        ServerRetry {
            policy: PolicySpec {
                kind,
                base_us: 100_000,
                cap_us: 20_000_000,
                step_us: None,
                jitter_factor: 0.0,
                first_exponent: 0,
                multiplier: 2.0,
                cap_mode: CapMode::Before,
                randomization_factor: 0.5,
                throttle_base_us: 1_000_000,
            },
            max_attempts,
            controls: Vec::new(),
            fleet: None,
            deadline: None,
            retry_on: crate::model::retry_on::RetryOn::ALL,
            hedge: None,
            hedge_on_timeout: false,
        }
    }

    /// `value` of `replicates` runs of `spec`: their mean and its standard
    /// error (the runs are independent, so the error is sd/√n).
    fn replicated(
        spec: &ServerSpec,
        retry: &ServerRetry,
        replicates: u64,
        value: impl Fn(&ServerMetrics) -> f64,
    ) -> (f64, f64) {
        let values: Vec<f64> = (0..replicates)
            .map(|r| {
                let m = simulate_server(spec, retry, Seeds::for_job(11, 0, r), u64::MAX);
                assert!(m.complete);
                value(&m)
            })
            .collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, (var / n).sqrt())
    }

    /// Asserts `got` (mean, standard error) is within 4 standard errors of
    /// `exact`: a correct model fails such a check about once in 16,000.
    fn assert_near(what: &str, got: (f64, f64), exact: f64) {
        let (mean, se) = got;
        assert!(se > 0.0, "{what}: no spread between replicates");
        assert!(
            (mean - exact).abs() <= 4.0 * se,
            "{what}: {mean} ± {se} (se), exact {exact}: z = {:.2}",
            (mean - exact) / se
        );
    }

    /// M/M/c/K (K in system) with arrival rate `lambda` and service rate
    /// `mu` (per ms): blocking probability, L and W (ms) of admitted
    /// requests, from the birth–death chain's stationary distribution.
    fn mmck(lambda: f64, mu: f64, c: u32, k: u32) -> (f64, f64, f64) {
        let mut p = vec![1.0f64];
        for n in 1..=k {
            let rate_out = mu * f64::from(n.min(c));
            p.push(p[n as usize - 1] * lambda / rate_out);
        }
        let total: f64 = p.iter().sum();
        let p: Vec<f64> = p.iter().map(|x| x / total).collect();
        let block = p[k as usize];
        let l: f64 = p.iter().enumerate().map(|(n, x)| n as f64 * x).sum();
        let w = l / (lambda * (1.0 - block));
        (block, l, w)
    }

    /// Erlang C: L and W (ms) of an M/M/c queue with no limit.
    fn erlang_c(lambda: f64, mu: f64, c: u32) -> (f64, f64) {
        let a = lambda / mu;
        let rho = a / f64::from(c);
        let mut term = 1.0;
        let mut sum = 1.0;
        for n in 1..c {
            term *= a / f64::from(n);
            sum += term;
        }
        let last = term * a / f64::from(c) / (1.0 - rho);
        let wait_probability = last / (sum + last);
        let lq = wait_probability * rho / (1.0 - rho);
        let l = lq + a;
        (l, l / lambda)
    }

    fn mm_spec(lambda_per_ms: f64, workers: Option<u32>, queue_limit: Option<u32>) -> ServerSpec {
        ServerSpec {
            load: Load::Open {
                rate_per_s: lambda_per_ms * 1_000.0,
                sources: 1,
                concurrency: None,
            },
            duration: 20 * NS_PER_S,
            workers,
            queue_limit,
            service: Service::One(Dist::Exp { mean: NS_PER_MS }),
            ..ServerSpec::default()
        }
    }

    #[test]
    fn erlang_formulas_match_design_values() {
        let (block, l, w) = mmck(3.5, 1.0, 4, 20);
        assert!((block - 0.011788).abs() < 5e-7, "{block}");
        assert!((l - 7.06955).abs() < 5e-6, "{l}");
        assert!((w - 2.04397).abs() < 5e-6, "{w}");
    }

    #[test]
    fn without_timeouts_and_retries_the_server_is_an_mmck_queue() {
        let no_retry = retry(PolicyKind::None, Some(1));
        // (λ per ms, c, K): the design's case, and one at ρ = 1.
        for (lambda, c, k) in [(3.5, 4, 20), (1.0, 1, 5)] {
            let spec = mm_spec(lambda, Some(c), Some(k - c));
            let (block, l, w) = mmck(lambda, 1.0, c, k);
            let case = format!("M/M/{c}/{k} at λ = {lambda}");
            assert_near(
                &format!("{case}: blocking"),
                replicated(&spec, &no_retry, 20, ServerMetrics::rejected_share),
                block,
            );
            assert_near(
                &format!("{case}: L"),
                replicated(&spec, &no_retry, 20, ServerMetrics::mean_in_system),
                l,
            );
            assert_near(
                &format!("{case}: W"),
                replicated(&spec, &no_retry, 20, ServerMetrics::mean_sojourn_ms),
                w,
            );
        }
        // Unbounded: Erlang C at ρ = 0.8.
        let spec = mm_spec(1.6, Some(2), None);
        let (l, w) = erlang_c(1.6, 1.0, 2);
        assert_near(
            "M/M/2: L",
            replicated(&spec, &no_retry, 20, ServerMetrics::mean_in_system),
            l,
        );
        assert_near(
            "M/M/2: W",
            replicated(&spec, &no_retry, 20, ServerMetrics::mean_sojourn_ms),
            w,
        );
    }

    #[test]
    fn an_mm1_server_times_out_its_share_without_cancelling_work() {
        // λ = 0.5/ms, μ = 1/ms, T = 2 ms: the sojourn is Exp(μ − λ), so a
        // share e^{−(μ−λ)T} = e^{−1} of attempts time out; the queue does not
        // see them (work not cancelled), so utilisation stays λ/μ.
        let mut spec = mm_spec(0.5, Some(1), None);
        spec.timeout = Some(2 * NS_PER_MS);
        let no_retry = retry(PolicyKind::None, Some(1));
        let share = |m: &ServerMetrics| m.timeouts as f64 / m.attempts as f64;
        assert_near(
            "timeout share",
            replicated(&spec, &no_retry, 20, share),
            (-1.0f64).exp(),
        );
        assert_near(
            "utilisation",
            replicated(&spec, &no_retry, 20, ServerMetrics::utilisation),
            0.5,
        );
    }

    #[test]
    fn an_infinite_server_with_immediate_retries_gives_the_geometric_figures() {
        // p = 0.3, N = 3 immediate retries: success 1 − p⁴, attempts per
        // request (1 − p⁴)/(1 − p).
        let spec = ServerSpec {
            workers: None,
            fail_rate: 0.3,
            service: Service::One(Dist::Const(NS_PER_MS)),
            duration: 10 * NS_PER_S,
            ..mm_spec(2.0, None, None)
        };
        let immediate = retry(PolicyKind::NoBackoff, Some(4));
        let p4 = 0.3f64.powi(4);
        assert_near(
            "success rate",
            replicated(&spec, &immediate, 20, ServerMetrics::success_rate),
            1.0 - p4,
        );
        assert_near(
            "attempts per request",
            replicated(&spec, &immediate, 20, ServerMetrics::amplification),
            (1.0 - p4) / 0.7,
        );
    }

    /// A chain of `depth` services in front of an unbounded server of 1 ms
    /// constant service failing with probability `fail_rate`, 1 user
    /// request per ms for 2 s, no timeouts.
    fn chain_spec(depth: u32, fail_rate: f64) -> ServerSpec {
        ServerSpec {
            workers: None,
            fail_rate,
            service: Service::One(Dist::Const(NS_PER_MS)),
            duration: 2 * NS_PER_S,
            chain: Chain {
                depth,
                ..Chain::default()
            },
            ..mm_spec(1.0, None, None)
        }
    }

    /// [`chain_spec`] of 3 services in a full outage, the two above the
    /// server with their own settings `layers`.
    fn outage_chain_of_own(layers: [LayerSpec; 2]) -> ServerSpec {
        let mut spec = chain_spec(3, 1.0);
        spec.chain.layers = layers.to_vec();
        spec
    }

    /// One run of `spec` with `attempts` immediate attempts at every caller.
    fn chain_run(spec: &ServerSpec, attempts: u32) -> ServerMetrics {
        let immediate = retry(PolicyKind::NoBackoff, Some(attempts));
        simulate_server(spec, &immediate, Seeds::for_job(3, 0, 0), u64::MAX)
    }

    #[test]
    fn a_chain_in_a_full_outage_multiplies_attempts_at_every_layer() {
        // Every server attempt fails and nothing times out, so every caller
        // makes all its attempts: (r + 1)^i attempts per user request reach
        // service i, exactly (the SRE book's 4³ = 64 and the Builders'
        // Library's 3⁵ = 243).
        for (depth, attempts) in [(3u32, 4u32), (5, 3)] {
            let m = chain_run(&chain_spec(depth, 1.0), attempts);
            assert!(m.complete && m.requests > 1_000, "{} requests", m.requests);
            assert_eq!(m.layers.len(), depth as usize);
            let mut per_request = 1;
            for (i, layer) in m.layers.iter().enumerate() {
                assert_eq!(layer.calls, m.requests * per_request, "service {}", i + 1);
                per_request *= u64::from(attempts);
                assert_eq!(
                    layer.attempts,
                    m.requests * per_request,
                    "service {}",
                    i + 1
                );
                assert_eq!((layer.successes, layer.gave_up), (0, layer.calls));
            }
            assert_eq!(
                m.arrived_at_server,
                m.requests * u64::from(attempts).pow(depth)
            );
            assert_eq!(
                (m.attempts, m.gave_up),
                (m.requests * u64::from(attempts), m.requests)
            );
        }
    }

    #[test]
    fn each_upper_service_may_have_its_own_attempts_and_workers() {
        // Users make 4 attempts, service 1's calls 2 and service 2's 3 (its
        // one worker serving the chain's attempts one at a time): 4 × 2 × 3
        // = 24 server attempts per user request in a full outage.
        let spec = outage_chain_of_own([
            LayerSpec {
                max_attempts: Some(2),
                ..LayerSpec::default()
            },
            LayerSpec {
                max_attempts: Some(3),
                workers: Some(Some(1)),
                ..LayerSpec::default()
            },
        ]);
        let m = chain_run(&spec, 4);
        assert!(m.requests > 1_000);
        assert_eq!(m.layers[1].attempts, 8 * m.requests);
        assert_eq!(m.arrived_at_server, 24 * m.requests);
    }

    #[test]
    fn independent_server_failures_compound_through_each_callers_attempts() {
        // p = 0.5 at the server only, 2 attempts at each of 3 callers: a
        // call of 2 attempts fails with q² when each attempt fails with q,
        // so the callers make (1 − qᵢ²)/(1 − qᵢ) attempts each for q = 0.5,
        // 0.25, 0.0625: 1.9921875 server attempts per user request, and
        // users succeed with 1 − 0.5⁸. The issue's ((1 − p²)/(1 − p))³ =
        // 3.375 assumes every layer fails on its own with p; measured, it
        // is hundreds of standard errors away.
        let spec = chain_spec(3, 0.5);
        let immediate = retry(PolicyKind::NoBackoff, Some(2));
        let at_server = |m: &ServerMetrics| m.arrived_at_server as f64 / m.requests as f64;
        let measured = replicated(&spec, &immediate, 20, at_server);
        let expected = Chain::expected_bottom_attempts(3, 2, 0.5);
        assert_eq!(expected, 1.9921875);
        assert_near("server attempts per request", measured, expected);
        let issue = (1.5f64).powi(3);
        assert!(
            (measured.0 - issue).abs() > 100.0 * measured.1,
            "{measured:?}"
        );
        assert_near(
            "success rate",
            replicated(&spec, &immediate, 20, ServerMetrics::success_rate),
            1.0 - 0.5f64.powi(8),
        );
    }

    #[test]
    fn an_upper_service_may_have_its_own_controls() {
        // Service 2's own breaker (cumulative:0: no retry once any attempt
        // failed) refuses every retry of its calls in a full outage, so it
        // makes 1 attempt a call where the users and service 1 make 4: 16
        // server attempts per user request instead of 64.
        let breaker = ControlSpec::parse(crate::control::Family::Breaker, "cumulative:0")
            .unwrap()
            .unwrap();
        let spec = outage_chain_of_own([
            LayerSpec::default(),
            LayerSpec {
                controls: [None, Some(Some(breaker)), None],
                ..LayerSpec::default()
            },
        ]);
        let m = chain_run(&spec, 4);
        assert!(m.requests > 1_000);
        assert_eq!(m.layers[1].attempts, 16 * m.requests);
        assert_eq!(m.arrived_at_server, 16 * m.requests);
    }

    #[test]
    fn an_upper_service_may_back_off_by_its_own_policy() {
        // The server is down for the first 50 ms; users make 1 attempt and
        // service 1 makes 3. Retrying at once, service 1 spends its 3
        // attempts inside the outage and the users who came then fail; with
        // its own constant 100 ms backoff, its second attempt comes after
        // the outage, so every user succeeds, those of the outage after at
        // least 100 ms.
        let spec = |own: LayerSpec| ServerSpec {
            chain: Chain {
                depth: 2,
                layers: vec![own],
                ..Chain::default()
            },
            triggers: vec![crate::model::server::Trigger {
                kind: TriggerKind::Outage,
                from: 0,
                to: 50 * NS_PER_MS,
            }],
            ..chain_spec(2, 0.0)
        };
        let users = retry(PolicyKind::NoBackoff, Some(1));
        let run = |own| simulate_server(&spec(own), &users, Seeds::for_job(3, 0, 0), u64::MAX);
        let at_once = run(LayerSpec {
            max_attempts: Some(3),
            ..LayerSpec::default()
        });
        let paced = run(LayerSpec {
            max_attempts: Some(3),
            policy: Some(PolicyKind::Constant),
            base_us: Some(100_000),
            ..LayerSpec::default()
        });
        assert!(at_once.success_rate() < 0.98, "{}", at_once.success_rate());
        assert!(at_once.latency.quantile_ms(1.0).unwrap() < 100.0);
        assert_eq!(paced.success_rate(), 1.0);
        assert!(paced.latency.quantile_ms(1.0).unwrap() >= 100.0);
        // Naming the users' own policy changes nothing, draw for draw: the
        // services then keep a policy each where they shared one.
        let jittered = retry(PolicyKind::Full, Some(3));
        let half = chain_spec(3, 0.5);
        let named = ServerSpec {
            chain: Chain {
                layers: vec![
                    LayerSpec {
                        policy: Some(PolicyKind::Full),
                        ..LayerSpec::default()
                    };
                    2
                ],
                ..half.chain.clone()
            },
            ..half.clone()
        };
        assert!(named.chain.has_own_policy());
        let seeds = Seeds::for_job(5, 0, 0);
        let dispatched = simulate_server(&named, &jittered, seeds, u64::MAX);
        let plain = simulate_server(&half, &jittered, seeds, u64::MAX);
        assert!(dispatched == plain, "the same runs");
        // Jittered retries below happened: the server's callers retried.
        let to_server = &plain.layers[2];
        assert!(
            to_server.attempts > to_server.calls + 1_000,
            "{} attempts of {} calls",
            to_server.attempts,
            to_server.calls
        );
    }

    #[test]
    fn adjacent_retries_leave_one_callers_attempts_at_the_failing_service() {
        // With only the caller right above the server retrying, a full
        // outage costs that caller's attempts alone: 4 per user request at
        // the server, not 64, and every upper attempt is one.
        let spec = ServerSpec {
            chain: Chain {
                depth: 3,
                retry_scope: RetryScope::Adjacent,
                ..Chain::default()
            },
            ..chain_spec(3, 1.0)
        };
        let m = chain_run(&spec, 4);
        assert!(m.requests > 1_000);
        assert_eq!(m.attempts, m.requests);
        assert_eq!(m.layers[1].attempts, m.requests);
        assert_eq!(m.arrived_at_server, 4 * m.requests);
    }

    #[test]
    fn an_upper_timeout_cancels_nothing_below() {
        // Users time out after 10 ms; the server takes 30 ms and fails: the
        // service below keeps calling through all of its 2 attempts for
        // every one of the users' 2 attempts (timed out, so the users'
        // retries start while the first attempt's call still runs), and
        // every upper worker's time is wasted.
        let spec = ServerSpec {
            service: Service::One(Dist::Const(30 * NS_PER_MS)),
            timeout: Some(10 * NS_PER_MS),
            chain: Chain {
                depth: 2,
                timeout_ratio: 10.0,
                ..Chain::default()
            },
            ..chain_spec(2, 1.0)
        };
        let m = chain_run(&spec, 2);
        assert!(m.requests > 1_000);
        assert_eq!(m.timeouts, m.attempts);
        assert_eq!(m.arrived_at_server, 4 * m.requests);
        assert_eq!(m.layers[0].wasted_ns, m.layers[0].busy_ns);
        assert!(m.layers[0].busy_ns > 0);
        // Service 1's calls wait 100 ms and the server answers in 30: none
        // of them time out, so the server's own work counts as useful to
        // its caller (wasted work is judged by the caller right above;
        // the user's timeout wastes it all the same, which only the top
        // service's figure shows).
        assert_eq!(m.layers[1].timeouts, 0);
        assert_eq!(m.layers[1].wasted_ns, 0);
        assert!(m.layers[1].busy_ns > 0);
    }

    #[test]
    fn window_latency_quantiles_are_exact_within_each_window() {
        // Unbounded workers, constant 2 ms service and 1 ms each way: every
        // success takes exactly 4 ms, so every window that has one says so.
        let spec = ServerSpec {
            workers: None,
            service: Service::One(Dist::Const(2 * NS_PER_MS)),
            request_delay: Dist::Const(NS_PER_MS),
            reply_delay: Dist::Const(NS_PER_MS),
            duration: 2 * NS_PER_S,
            ..mm_spec(0.5, None, None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::None, Some(1)),
            Seeds::for_job(3, 0, 0),
            u64::MAX,
        );
        let with_successes: Vec<&Window> = m.windows.iter().filter(|w| w.successes > 0).collect();
        assert_eq!(
            with_successes.len(),
            m.windows.len(),
            "a 100 ms window without a success at 500/s"
        );
        for w in &m.windows {
            assert_eq!(
                (w.latency_p50_ns, w.latency_p99_ns),
                (Some(4 * NS_PER_MS), Some(4 * NS_PER_MS))
            );
        }
        // One window over the whole M/M/1 run: its exact quantiles agree with
        // the run's histogram to the histogram's precision (1/256).
        let spec = ServerSpec {
            window: 1_000 * NS_PER_S,
            ..mm_spec(0.5, Some(1), None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::None, Some(1)),
            Seeds::for_job(3, 0, 1),
            u64::MAX,
        );
        assert_eq!(m.windows.len(), 1);
        for (q, exact) in [
            (0.5, m.windows[0].latency_p50_ns),
            (0.99, m.windows[0].latency_p99_ns),
        ] {
            let exact = exact.expect("successes") as f64;
            let binned = m.latency.quantile(q);
            assert!(
                (binned - exact).abs() <= exact / 256.0 + 0.5,
                "q {q}: {binned} against {exact}"
            );
        }
        // No success in a window: no latency.
        let spec = ServerSpec {
            triggers: "outage@1s..1.5s"
                .parse::<crate::model::server::Triggers>()
                .unwrap()
                .0,
            ..mm_spec(0.5, Some(1), None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::None, Some(1)),
            Seeds::for_job(3, 0, 2),
            u64::MAX,
        );
        let dark = &m.windows[12];
        assert_eq!(
            (dark.successes, dark.latency_p50_ns, dark.latency_p99_ns),
            (0, None, None)
        );
    }

    /// A run that does not want the windows' latency quantiles is the same
    /// run without them: every other count and sum alike.
    #[test]
    fn window_latencies_left_out_change_nothing_else() {
        let mut spec = mm_spec(0.9, Some(1), Some(10));
        spec.timeout = Some(3 * NS_PER_MS);
        let r = retry(PolicyKind::Full, Some(4));
        let seeds = Seeds::for_job(5, 0, 0);
        let with = simulate_server(&spec, &r, seeds, u64::MAX);
        let watch = Watch {
            window_latencies: false,
            ..Watch::UNLIMITED
        };
        let without = simulate_server_watched(&spec, &r, seeds, &watch, QueueKind::Auto);
        assert!(
            with.windows
                .iter()
                .all(|w| w.latency_p99_ns.is_some() == (w.successes > 0))
        );
        assert!(
            without
                .windows
                .iter()
                .all(|w| (w.latency_p50_ns, w.latency_p99_ns) == (None, None))
        );
        let mut stripped = with.clone();
        for w in &mut stripped.windows {
            (w.latency_p50_ns, w.latency_p99_ns) = (None, None);
        }
        assert_eq!(stripped, without);
    }

    /// The event limit stops a run after exactly that many events (marked
    /// incomplete and hit), the horizon without hitting it, and progress is
    /// told each time the count reaches a multiple of [`PROGRESS_EVERY`],
    /// with the requests ended so far and the simulated time moving on.
    #[test]
    fn the_event_limit_and_progress_reports_come_when_the_count_says() {
        let spec = mm_spec(0.5, Some(1), None);
        let r = retry(PolicyKind::None, Some(1));
        let seeds = Seeds::for_job(6, 0, 0);
        let whole = simulate_server(&spec, &r, seeds, u64::MAX);
        assert!(whole.complete && !whole.hit_event_limit);
        for limit in [1, 999, whole.events - 1] {
            let m = simulate_server(&spec, &r, seeds, limit);
            assert_eq!(m.events, limit);
            assert!(!m.complete && m.hit_event_limit, "{limit}");
        }
        let m = simulate_server(&spec, &r, seeds, whole.events);
        assert_eq!((m.events, m.complete), (whole.events, true));
        let cut = ServerSpec {
            horizon: Some(spec.duration / 2),
            ..spec.clone()
        };
        let m = simulate_server(&cut, &r, seeds, u64::MAX);
        assert!(!m.complete && !m.hit_event_limit && m.events < whole.events);

        // 3.5 requests per ms for 100 s: about 1.4 million events, so one
        // report; then twice as long, stopped at the second multiple: two.
        let long = |seconds| ServerSpec {
            duration: seconds * NS_PER_S,
            ..mm_spec(3.5, Some(4), None)
        };
        let reports = std::sync::Mutex::new(Vec::new());
        let on_progress = |time, ended| reports.lock().unwrap().push((time, ended));
        let watch = Watch {
            on_progress: &on_progress,
            ..Watch::UNLIMITED
        };
        let m = simulate_server_watched(&long(100), &r, seeds, &watch, QueueKind::Auto);
        assert!(m.complete && m.events > PROGRESS_EVERY && m.events < 2 * PROGRESS_EVERY);
        let first = reports.lock().unwrap().clone();
        assert_eq!(first.len(), 1, "{first:?}");
        let (time, ended) = first[0];
        // Four events a request: about a quarter of the events have ended.
        assert!(
            ended > PROGRESS_EVERY / 5 && ended < PROGRESS_EVERY / 4,
            "{ended}"
        );
        assert!(time > 0 && time * NS_PER_US < 100 * NS_PER_S, "{time}");
        let watch = Watch {
            max_events: 2 * PROGRESS_EVERY,
            ..watch
        };
        let m = simulate_server_watched(&long(200), &r, seeds, &watch, QueueKind::Auto);
        assert_eq!((m.events, m.hit_event_limit), (2 * PROGRESS_EVERY, true));
        let all = reports.lock().unwrap().clone();
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(all[2].0 > all[1].0 && all[2].1 > all[1].1, "{all:?}");
    }

    #[test]
    fn both_event_queues_give_the_same_run() {
        // Order within an instant matters here: zero delays put an attempt's
        // arrival at the server, and a reply, at the instant of the event
        // that made them, behind whatever else is due then. Only the storage
        // figures may differ.
        let watch = Watch::UNLIMITED;
        let tied = ServerSpec {
            service: Service::One(Dist::Const(NS_PER_MS)),
            request_delay: Dist::Const(NS_PER_MS),
            reply_delay: Dist::Const(NS_PER_MS),
            timeout: Some(3_500 * NS_PER_US),
            fail_rate: 0.1,
            ..mm_spec(0.9, Some(1), Some(10))
        };
        let storm = ServerSpec {
            timeout: Some(100 * NS_PER_MS),
            triggers: "outage@2s..2.5s+capacity:0@3s..3.1s+spike:2@4s..5s"
                .parse::<crate::model::server::Triggers>()
                .unwrap()
                .0,
            duration: 6 * NS_PER_S,
            ..ServerSpec::default()
        };
        for (spec, r) in [
            (tied, retry(PolicyKind::Full, Some(4))),
            (storm, retry(PolicyKind::NoBackoff, Some(4))),
        ] {
            let run = |queue| {
                let mut m =
                    simulate_server_watched(&spec, &r, Seeds::for_job(4, 0, 0), &watch, queue);
                m.state_bytes = 0;
                m
            };
            let radix = run(QueueKind::Radix);
            assert!(
                radix.timeouts > 0 && radix.successes > 0,
                "{} timeouts, {} successes of {}",
                radix.timeouts,
                radix.successes,
                radix.requests
            );
            assert_eq!(radix, run(QueueKind::Heap));
        }
    }

    #[test]
    fn a_fixed_request_count_is_made_whatever_the_duration() {
        // 1,500 requests at 1,000/s: the last lands near 1.5 s, before or
        // after a 1.5 s duration; a 0.5 s duration cuts none of them.
        let mut spec = mm_spec(1.0, Some(4), None);
        spec.requests = Some(1_500);
        spec.duration = 500 * crate::model::server::NS_PER_MS;
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::Full, Some(1)),
            Seeds::for_job(1, 0, 0),
            u64::MAX,
        );
        assert_eq!(m.requests, 1_500);
    }

    #[test]
    fn a_failure_ending_at_the_next_start_fails_what_completes_before_it() {
        // One request, at 1 ms, served for 10 ms: it completes at 11 ms,
        // after an outage over [0, 5 ms). No other service starts after the
        // outage, so with the Yandex study's failure end it still fails.
        let ms = NS_PER_MS;
        let outcome = |end: FailureEnd| {
            let spec = ServerSpec {
                requests: Some(0),
                first_call: Some(Dist::Const(ms)),
                service: Service::One(Dist::Const(10 * ms)),
                triggers: vec![crate::model::server::Trigger {
                    kind: TriggerKind::Outage,
                    from: 0,
                    to: 5 * ms,
                }],
                failure_end: end,
                ..mm_spec(1.0, Some(1), None)
            };
            let m = simulate_server(
                &spec,
                &retry(PolicyKind::Full, Some(1)),
                Seeds::for_job(3, 0, 0),
                u64::MAX,
            );
            assert_eq!(m.requests, 1);
            m.successes
        };
        assert_eq!(outcome(FailureEnd::Window), 1, "completes after the window");
        assert_eq!(
            outcome(FailureEnd::NextStart),
            0,
            "no start after the window"
        );
    }

    #[test]
    fn service_grows_with_the_requests_in_service_when_each_starts() {
        // Three sources' first requests all at 1 ms on an unbounded server:
        // they start with 1, 2 and 3 in service (themselves included) and
        // take 1 s + 10 ms × that, fixed at the start.
        let ms = NS_PER_MS;
        let spec = ServerSpec {
            load: Load::Open {
                rate_per_s: 1.0,
                sources: 3,
                concurrency: None,
            },
            requests: Some(0),
            first_call: Some(Dist::Const(ms)),
            service: Service::One(Dist::Const(1_000 * ms)),
            service_per_busy: 10 * ms,
            ..mm_spec(1.0, None, None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::Full, Some(1)),
            Seeds::for_job(5, 0, 0),
            u64::MAX,
        );
        assert_eq!(m.successes, 3);
        assert_eq!(m.latency_total_ns, u128::from(3_060 * ms));
    }

    #[test]
    fn arrivals_at_arrival_stop_where_the_rate_is_zero_and_exact_ones_resume() {
        // 1,000/s for 3 s with the rate at 0 over [1 s, 2 s): drawn exactly,
        // arrivals pause there and come back; drawn at each arrival's rate
        // (Brooker 2023's generator), the first arrival inside the pause
        // draws no next one, so none come after it.
        let arrivals_by_second = |rate_changes: RateChanges| {
            let spec = ServerSpec {
                duration: 3 * NS_PER_S,
                triggers: vec![crate::model::server::Trigger {
                    kind: TriggerKind::Ramp {
                        start: 0.0,
                        end: 0.0,
                    },
                    from: NS_PER_S,
                    to: 2 * NS_PER_S,
                }],
                rate_changes,
                window: NS_PER_S,
                ..mm_spec(1.0, None, None)
            };
            let m = simulate_server(
                &spec,
                &retry(PolicyKind::Full, Some(1)),
                Seeds::for_job(8, 0, 0),
                u64::MAX,
            );
            m.windows
                .iter()
                .take(3)
                .map(|w| w.arrivals)
                .collect::<Vec<_>>()
        };
        let exact = arrivals_by_second(RateChanges::Exact);
        // Poisson(1,000) in each open second: 5 standard deviations either side.
        assert!(exact[0].abs_diff(1_000) < 160 && exact[2].abs_diff(1_000) < 160);
        assert_eq!(exact[1], 0, "{exact:?}");
        let stepped = arrivals_by_second(RateChanges::AtArrival);
        assert!(stepped[0].abs_diff(1_000) < 160, "{stepped:?}");
        // The run ends in the pause: no window after it.
        assert_eq!(&stepped[1..], &[1], "{stepped:?}");
    }

    #[test]
    fn a_timeout_noticed_at_the_reply_retries_when_the_late_reply_comes() {
        // One request at 1 ms; 10 ms of service and 10 ms back; a 15 ms
        // timeout and two attempts. At the deadline: the first attempt times
        // out at 16 ms, the second (sent then) at 31 ms, its ignored reply
        // comes at 36 ms. At the reply: the first is late at 21 ms, the
        // second comes back late at 41 ms. A 25 ms timeout is met.
        let ms = NS_PER_MS;
        let run = |timeout_ms: u64, noticed: TimeoutNoticed| {
            let spec = ServerSpec {
                requests: Some(0),
                first_call: Some(Dist::Const(ms)),
                service: Service::One(Dist::Const(10 * ms)),
                reply_delay: Dist::Const(10 * ms),
                timeout: Some(timeout_ms * ms),
                timeout_noticed: noticed,
                ..mm_spec(1.0, Some(1), None)
            };
            simulate_server(
                &spec,
                &retry(PolicyKind::NoBackoff, Some(2)),
                Seeds::for_job(4, 0, 0),
                u64::MAX,
            )
        };
        let at_deadline = run(15, TimeoutNoticed::Deadline);
        assert_eq!((at_deadline.timeouts, at_deadline.gave_up), (2, 1));
        assert_eq!(at_deadline.end_ns, 36 * ms);
        let at_reply = run(15, TimeoutNoticed::Reply);
        assert_eq!(
            (at_reply.timeouts, at_reply.gave_up, at_reply.attempts),
            (2, 1, 2)
        );
        assert_eq!(at_reply.end_ns, 41 * ms);
        let met = run(25, TimeoutNoticed::Reply);
        assert_eq!((met.successes, met.timeouts, met.attempts), (1, 0, 1));
    }

    #[test]
    fn each_request_draws_its_timeout_from_the_choices() {
        // 150 ms of service on an unbounded server, one attempt: a request
        // that drew 100 ms times out, one that drew 200 ms does not. Of n =
        // ~4,000 requests half draw each: the share's standard error is
        // √(0.25/n) ≈ 0.008, and 4 of them are allowed.
        let ms = NS_PER_MS;
        let spec = ServerSpec {
            service: Service::One(Dist::Const(150 * ms)),
            timeout_choices: vec![100 * ms, 200 * ms],
            duration: 4 * NS_PER_S,
            ..mm_spec(1.0, None, None)
        };
        let m = simulate_server(
            &spec,
            &retry(PolicyKind::Full, Some(1)),
            Seeds::for_job(6, 0, 0),
            u64::MAX,
        );
        assert_eq!(m.timeouts + m.successes, m.requests);
        let share = m.timeouts as f64 / m.requests as f64;
        let se = (0.25 / m.requests as f64).sqrt();
        assert!((share - 0.5).abs() < 4.0 * se, "{share} of {}", m.requests);
        // Every success took its 150 ms: only the 200 ms draws met it.
        assert_eq!(
            m.latency_total_ns,
            u128::from(150 * ms) * u128::from(m.successes)
        );
    }

    #[test]
    fn the_same_seeds_give_the_same_run() {
        let mut spec = mm_spec(0.9, Some(1), Some(10));
        spec.timeout = Some(3 * NS_PER_MS);
        let r = retry(PolicyKind::Full, Some(4));
        let a = simulate_server(&spec, &r, Seeds::for_job(1, 0, 0), u64::MAX);
        let b = simulate_server(&spec, &r, Seeds::for_job(1, 0, 0), u64::MAX);
        let c = simulate_server(&spec, &r, Seeds::for_job(1, 0, 1), u64::MAX);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
