//! `herdsim serve`: the [`Station`] behind a real socket. Each of the c
//! workers is an operating-system thread that sleeps for the service time
//! of the attempt it holds (the model's service is occupancy, so sleeping
//! is faithful), so c attempts are really served at once; the network side
//! is tokio and hyper (HTTP/1.1 and gRPC over HTTP/2 on one port). A
//! worker never learns that a client gave up: its attempt is served to the
//! end and its reply, unheard, counted.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::sync::oneshot;

use herdsim::model::server::{Nanos, ServerSpec};

use crate::attempt_trace::{AttemptTrace, Pending, TracedOutcome};
use crate::grpc::{self, Status};
use crate::lateness::Lateness;
use crate::station::{Admission, Job, Station};
use crate::timing::{duration_of, nanos_of, tighten_timer_slack};
use crate::window_series::WindowSeries;

/// The largest request body read (a call's payload is echoed back).
const MAX_BODY: usize = 1 << 20;

/// How an attempt ended, as its worker tells the connection waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Success,
    Failure,
    Rejected,
}

type Ticket = oneshot::Sender<Outcome>;

/// The request header in which a client (`herdsim drill`) says how far
/// into its run it sent the request, in ns: the first such request starts
/// the serve's clock that far back, rather than at its arrival.
pub const CLOCK_HEADER: &str = "herdsim-clock-ns";

/// Clients' clocks ahead of ours by more than this are not believed.
const MAX_CLOCK_AHEAD: Duration = Duration::from_secs(3600);

/// The serve's clock: ns since its first request, so that a load generator
/// started any time later meets the triggers where its spec puts them.
#[derive(Debug, Default)]
struct Clock {
    origin: OnceLock<Instant>,
}

impl Clock {
    /// Starts the clock, if it has not started, `ahead` before now: a
    /// client that says how far into its own run it is (the
    /// [`CLOCK_HEADER`]) puts the serve's clock on its own, so that both
    /// meet the triggers at the same instants.
    fn start(&self, ahead: Duration) {
        self.origin.get_or_init(|| {
            let now = Instant::now();
            now.checked_sub(ahead).unwrap_or(now)
        });
    }

    /// Now, ns since the first request (starting the clock if it has not).
    fn now(&self) -> Nanos {
        let origin = *self.origin.get_or_init(Instant::now);
        nanos_of(origin.elapsed())
    }

    /// Now, if the clock has started.
    fn peek(&self) -> Option<Nanos> {
        self.origin.get().map(|o| nanos_of(o.elapsed()))
    }

    /// The instant of clock time `t` (the clock has started).
    fn instant_of(&self, t: Nanos) -> Instant {
        *self.origin.get_or_init(Instant::now) + duration_of(t)
    }
}

/// What the workers and the connections share.
struct Shared {
    state: Mutex<State>,
    /// Wakes an idle worker when a job is ready.
    work: Condvar,
    clock: Clock,
    /// Connections accepted: a client that times out an HTTP/1.1 call
    /// must close its connection, so its next attempt opens another.
    connections: AtomicU64,
    /// Every answered attempt, with `--trace`.
    trace: Option<AttemptTrace>,
}

struct State {
    station: Station<Ticket>,
    /// Jobs the station started, for an idle worker thread to hold.
    ready: VecDeque<Job<Ticket>>,
    stopping: bool,
    /// Replies whose client had gone (closed its connection): wasted work.
    unheard: u64,
    /// How late each worker's service sleep ended.
    late: Lateness,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked poisons nothing the others cannot use.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What `herdsim serve` serves, and for how long.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub spec: ServerSpec,
    pub seed: u64,
    pub listen: SocketAddr,
    /// Stop this long after the first request, or after the start if no
    /// request comes in that time (`None`: at Ctrl-C).
    pub stop_after: Option<Duration>,
    /// Log every attempt (`--trace`), its call named by this request
    /// header.
    pub trace_header: Option<String>,
}

/// What a serve did, when it stopped.
#[derive(Debug, Clone)]
pub struct ServeReport {
    pub series: WindowSeries,
    pub unheard: u64,
    /// Connections accepted.
    pub connections: u64,
    /// How late the workers' service sleeps ended: each attempt held its
    /// worker this much longer than its drawn service time.
    pub service_late: Lateness,
    /// Clock time at the stop, ns (0 if no request came).
    pub ran_ns: Nanos,
    pub workers: u32,
    /// The attempts as `--trace`'s CSV, with `trace_header`.
    pub trace: Option<String>,
}

/// Binds `config.listen`; on success `announce` is told the bound address
/// (port 0 picks a free one), then the server runs until its stop.
pub fn serve(
    config: ServeConfig,
    announce: impl FnOnce(SocketAddr),
) -> std::io::Result<ServeReport> {
    let workers = config
        .spec
        .workers
        .expect("the caller refuses unbounded workers");
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            station: Station::new(config.spec.clone(), config.seed),
            ready: VecDeque::new(),
            stopping: false,
            unheard: 0,
            late: Lateness::default(),
        }),
        work: Condvar::new(),
        clock: Clock::default(),
        connections: AtomicU64::new(0),
        trace: config.trace_header.as_deref().map(AttemptTrace::new),
    });
    let threads: Vec<_> = (0..workers)
        .map(|i| {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn(move || work(&shared))
        })
        .collect::<Result<_, _>>()?;
    let capacity = {
        let shared = Arc::clone(&shared);
        let changes = config.spec.capacity_changes();
        std::thread::Builder::new()
            .name("capacity".into())
            .spawn(move || follow_capacity(&shared, &changes))?
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind(config.listen))?;
    announce(listener.local_addr()?);
    runtime.block_on(accept_until_stop(
        listener,
        Arc::clone(&shared),
        config.stop_after,
    ))?;
    let (series, unheard, service_late, ran_ns) = {
        let mut state = shared.lock();
        state.stopping = true;
        let now = shared.clock.peek().unwrap_or(Nanos::ZERO);
        state.station.close(now);
        (
            state.station.series().clone(),
            state.unheard,
            state.late.clone(),
            now,
        )
    };
    shared.work.notify_all();
    // Connections still open end with the runtime; workers holding an
    // attempt finish their sleep and stop (none outlives the process).
    runtime.shutdown_timeout(Duration::from_millis(100));
    drop((threads, capacity));
    let trace = shared.trace.as_ref().map(AttemptTrace::csv);
    Ok(ServeReport {
        series,
        unheard,
        connections: shared.connections.load(Ordering::Relaxed),
        service_late,
        ran_ns,
        workers,
        trace,
    })
}

/// Accepts connections until Ctrl-C or the stop time.
async fn accept_until_stop(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    stop_after: Option<Duration>,
) -> std::io::Result<()> {
    let stop_time = {
        let shared = Arc::clone(&shared);
        async move {
            let Some(after) = stop_after else {
                return std::future::pending().await;
            };
            // The clock starts at the first request; a serve that no
            // request reaches stops as long after its start.
            let started = Instant::now();
            loop {
                if let Some(now) = shared.clock.peek() {
                    let elapsed = duration_of(now);
                    if elapsed >= after {
                        return;
                    }
                    tokio::time::sleep(after - elapsed).await;
                } else if started.elapsed() >= after {
                    return;
                } else {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    };
    tokio::pin!(stop_time);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                shared.connections.fetch_add(1, Ordering::Relaxed);
                // Replies go out at once (no Nagle delay on small writes).
                let _ = stream.set_nodelay(true);
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let shared = Arc::clone(&shared);
                        async move { Ok::<_, Infallible>(answer(request, &shared).await) }
                    });
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
            () = &mut stop_time => return Ok(()),
        }
    }
}

/// One worker thread: holds a ready job for its service time, reports how
/// it ended, and goes on with the next the station gives it.
fn work(shared: &Shared) {
    tighten_timer_slack();
    let mut sleeper = ServiceSleep::default();
    loop {
        let mut job = {
            let mut state = shared.lock();
            loop {
                if let Some(job) = state.ready.pop_front() {
                    break job;
                }
                if state.stopping {
                    return;
                }
                state = shared.work.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        };
        loop {
            let deadline = shared.clock.instant_of(job.done());
            sleeper.sleep_until(deadline);
            let finished = {
                let mut state = shared.lock();
                state
                    .late
                    .record(Instant::now().saturating_duration_since(deadline));
                state.station.finish(shared.clock.now(), job)
            };
            let outcome = if finished.succeeded {
                Outcome::Success
            } else {
                Outcome::Failure
            };
            let mut unheard = u64::from(finished.ticket.send(outcome).is_err());
            for ticket in finished.refused {
                unheard += u64::from(ticket.send(Outcome::Rejected).is_err());
            }
            if unheard > 0 {
                shared.lock().unheard += unheard;
            }
            match finished.next {
                Some(next) => job = next,
                None => break,
            }
        }
    }
}

/// A worker's service sleep, aimed early by how late the kernel has been
/// waking it: a sleep ends tens of microseconds past its deadline (more on
/// a busy machine: 66 to 94 µs on average in the live study's runs before
/// this), which lengthened every 1 ms service by 7 to 9% and raised the
/// server's load by as much. The worker sleeps to the deadline less its
/// recent mean oversleep and spins the rest (at most [`MAX_EARLY`]), so
/// that its attempts hold it for their drawn service on average; a wake-up
/// later than that (the machine busy) is still late, and counted.
#[derive(Debug, Default)]
struct ServiceSleep {
    /// The running mean of how far past its aim a sleep woke.
    oversleep: Duration,
}

/// The most a service sleep aims early (and so the most a worker spins
/// per attempt).
const MAX_EARLY: Duration = Duration::from_micros(500);

impl ServiceSleep {
    fn sleep_until(&mut self, deadline: Instant) {
        let now = Instant::now();
        if deadline <= now {
            return;
        }
        let aim = deadline - self.oversleep.min(MAX_EARLY).min(deadline - now);
        if aim > now {
            std::thread::sleep(aim - now);
            let woke = Instant::now();
            // A running mean over the last 16 or so sleeps.
            let over = woke.saturating_duration_since(aim).min(MAX_EARLY * 4);
            self.oversleep = (self.oversleep * 15 + over) / 16;
        }
        while Instant::now() < deadline {
            std::hint::spin_loop();
        }
    }
}

/// Sleeps until `deadline` (at once if it has passed).
fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

/// Wakes at each capacity change of the spec and lets freed workers take
/// waiting attempts.
fn follow_capacity(shared: &Shared, changes: &[Nanos]) {
    tighten_timer_slack();
    for &t in changes {
        loop {
            if shared.lock().stopping {
                return;
            }
            match shared.clock.peek() {
                Some(_) => break,
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        sleep_until(shared.clock.instant_of(t));
        let mut state = shared.lock();
        if state.stopping {
            return;
        }
        let now = shared.clock.now();
        let (jobs, refused) = state.station.take_idle(now);
        state.ready.extend(jobs);
        drop(state);
        shared.work.notify_all();
        let unheard: u64 = refused
            .into_iter()
            .map(|ticket| u64::from(ticket.send(Outcome::Rejected).is_err()))
            .sum();
        if unheard > 0 {
            shared.lock().unheard += unheard;
        }
    }
}

/// Answers one HTTP request: `/metrics`, or a call served by the station.
async fn answer(request: Request<Incoming>, shared: &Shared) -> Response<ReplyBody> {
    if request.uri().path() == "/metrics" {
        let text = {
            let state = shared.lock();
            let now = shared.clock.peek().unwrap_or(Nanos::ZERO);
            state.station.series().prometheus(
                state.station.queue_len() as u64,
                u64::from(state.station.busy()),
                state.station.spec().workers_at(now),
                now.ticks() as f64 / 1e9,
            )
        };
        return plain(StatusCode::OK, "text/plain; version=0.0.4", text.into());
    }
    let content_type = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let is_grpc = grpc::is_grpc(content_type);
    let client_clock = request
        .headers()
        .get(CLOCK_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .filter(|ahead| *ahead <= MAX_CLOCK_AHEAD);
    let call_id = shared.trace.as_ref().map(|t| {
        request
            .headers()
            .get(t.header())
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    });
    let path_ok = !is_grpc || request.uri().path() == grpc::METHOD;
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) if is_grpc => return grpc_reply(Status::InvalidArgument, None),
        Err(_) => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                "text/plain",
                "too large\n".into(),
            );
        }
    };
    let payload = if is_grpc {
        if !path_ok {
            return grpc_reply(Status::InvalidArgument, None);
        }
        match grpc::message_of(&body) {
            Ok(message) => message,
            Err(status) => return grpc_reply(status, None),
        }
    } else {
        body
    };
    let (ticket, reply) = oneshot::channel();
    shared.clock.start(client_clock.unwrap_or(Duration::ZERO));
    let sent = shared.clock.now();
    // Logged when answered, or as a timeout if the client hangs up first.
    let traced = match (&shared.trace, call_id) {
        (Some(trace), Some(call)) => Some(Pending::new(trace, call, sent, || shared.clock.now())),
        _ => None,
    };
    let refused = {
        let mut state = shared.lock();
        match state.station.arrive(sent, ticket) {
            Admission::Started(job) => {
                state.ready.push_back(job);
                shared.work.notify_one();
                false
            }
            Admission::Queued => false,
            Admission::Refused(_) => true,
        }
    };
    let outcome = if refused {
        Outcome::Rejected
    } else {
        // The serve stopping drops the worker's sender: a failure.
        reply.await.unwrap_or(Outcome::Failure)
    };
    if let Some(pending) = traced {
        pending.answered(match outcome {
            Outcome::Success => TracedOutcome::Success,
            Outcome::Failure => TracedOutcome::Failure,
            Outcome::Rejected => TracedOutcome::Throttled,
        });
    }
    match (is_grpc, outcome) {
        (true, Outcome::Success) => grpc_reply(Status::Ok, Some(grpc::frame(&payload))),
        (true, Outcome::Failure) => grpc_reply(Status::Unavailable, None),
        (true, Outcome::Rejected) => grpc_reply(Status::ResourceExhausted, None),
        (false, Outcome::Success) => plain(StatusCode::OK, "application/octet-stream", payload),
        (false, Outcome::Failure) => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "failed\n".into(),
        ),
        (false, Outcome::Rejected) => plain(
            StatusCode::TOO_MANY_REQUESTS,
            "text/plain",
            "queue full\n".into(),
        ),
    }
}

/// An HTTP response of `status` with `body`.
fn plain(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<ReplyBody> {
    let mut response = Response::new(ReplyBody {
        data: Some(body),
        trailers: None,
    });
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A gRPC response: on success headers, the message and `grpc-status` 0 in
/// the trailers; on any other status a Trailers-Only response (one HEADERS
/// frame holding `grpc-status`, the stream ended), as gRPC servers answer
/// an error: a client counts response headers as the server's commitment
/// to the call and does not retry after them (gRFC A6), so headers then
/// trailers would make every failure final to grpcio and grpc-js.
fn grpc_reply(status: Status, message: Option<Bytes>) -> Response<ReplyBody> {
    let mut fields = HeaderMap::new();
    fields.insert("grpc-status", HeaderValue::from(u16::from(status.code())));
    if status != Status::Ok {
        fields.insert(
            "grpc-message",
            HeaderValue::from_static(match status {
                Status::Unavailable => "failed",
                Status::ResourceExhausted => "queue full",
                Status::Unimplemented => "compressed messages are not read",
                _ => "not the herdsim.Herdsim/Call method or a malformed frame",
            }),
        );
    }
    let trailers_only = status != Status::Ok;
    let mut response = Response::new(ReplyBody {
        data: message,
        trailers: (!trailers_only).then(|| fields.clone()),
    });
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    if trailers_only {
        response.headers_mut().extend(fields);
    }
    response
}

/// A reply's body: its bytes, then its trailers (gRPC's status).
pub struct ReplyBody {
    data: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Body for ReplyBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(data) = this.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(this.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.data, &self.trailers) {
            (Some(data), None) => SizeHint::with_exact(data.len() as u64),
            (None, None) => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}
