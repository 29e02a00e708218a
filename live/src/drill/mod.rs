//! `herdsim drill`: the client side of the model in real time. Arrivals
//! come from the simulator's own arrival process ([`Arrivals`], load
//! triggers included) on a thread that sleeps to each one precisely (the
//! async runtime's timers tick in whole milliseconds), and closed-loop
//! users' think times end on a thread that does the same ([`Wakeups`]);
//! each request is a task that lives as [`client::request`] says, against
//! a real endpoint.
//! It stops at the load's end (then lets the requests in flight finish,
//! up to the horizon), at its request bound, or at Ctrl-C, and reports
//! through the simulator's recorder. A live run is not reproducible: the
//! same seed gives the same arrival times and delays, not the same run.

pub mod client;
pub mod record;
pub mod transport;
pub mod wakeups;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use herdsim::base::draws::Draws;
use herdsim::base::lookahead::Lookahead;
use herdsim::base::seeding::{Seeds, job_rng};
use herdsim::control::Controls;
use herdsim::measure::server_metrics::ServerMetrics;
use herdsim::model::server::{Load, Nanos, ServerSpec};
use herdsim::policy::AnyPolicy;
use herdsim::sim::server_loop::{Arrivals, Next, ServerRetry};

use client::{Clients, TimerLateness, request};
use record::LiveRecorder;
use transport::{Target, Transport};
use wakeups::Wakeups;

use crate::lateness::Lateness;
use crate::timing::tighten_timer_slack;

/// A drill: the workload, the clients' retry settings, the target.
#[derive(Debug, Clone)]
pub struct DrillConfig {
    pub spec: ServerSpec,
    pub retry: ServerRetry,
    pub seeds: Seeds,
    pub target: Target,
    /// When requests in flight stop being waited for, ns after the start.
    pub horizon: Nanos,
}

/// How a drill ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every request ended after the load's end.
    Drained,
    /// The horizon came with requests in flight.
    Horizon,
    /// Ctrl-C.
    Interrupted,
}

/// A drill's measurements and how it ended.
#[derive(Debug, Clone)]
pub struct DrillRun {
    pub metrics: ServerMetrics,
    pub ending: Ending,
    /// How late the open loop's arrivals were sent past their drawn times.
    pub arrivals_late: Lateness,
    /// How late the runtime's timers fired.
    pub timers_late: TimerLateness,
}

/// Runs the drill: arrivals until the load's end (or its request bound),
/// then the requests in flight until they end or the horizon comes; Ctrl-C
/// stops it at once. Everything recorded is kept in each case.
pub fn drill(config: DrillConfig) -> std::io::Result<DrillRun> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let spec = config.spec.clone();
    let clients = Arc::new(Clients {
        transport: Transport::new(config.target.clone()),
        rec: LiveRecorder::new(&spec),
        policy: AnyPolicy::new(&config.retry.policy),
        controls: Controls::new(
            &config.retry.controls,
            spec.load.sources(),
            config.retry.fleet,
            config.seeds.controls(),
        )
        .map(Mutex::new),
        backoff: Mutex::new(job_rng(config.seeds.policy)),
        timeout: spec.timeout,
        deadline: config.retry.deadline,
        max_attempts: config.retry.max_attempts,
        retry_on: config.retry.retry_on,
        late: Mutex::new(TimerLateness::default()),
    });
    let mut arrivals_late = Lateness::default();
    // The requests not yet ended (admission waits included).
    let open = Arc::new(AtomicU64::new(0));
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let interrupted = Arc::clone(&interrupted);
        runtime.spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.store(true, Ordering::SeqCst);
            }
        });
    }
    let mut environment = Lookahead::new(job_rng(config.seeds.environment));
    match spec.load {
        Load::Open { sources, .. } => {
            tighten_timer_slack();
            let mut arrivals = Arrivals::new(&spec, u64::MAX);
            let mut t = Nanos::ZERO;
            while let Next::At(next) = arrivals.next_after(&spec, t, &mut environment) {
                t = next;
                let due = clients.rec.instant_of(t);
                if !sleep_until(due, &interrupted) {
                    break;
                }
                arrivals_late.record(Instant::now().saturating_duration_since(due));
                let source = if sources > 1 {
                    environment.uniform(0, u64::from(sources - 1)) as u32
                } else {
                    0
                };
                let (clients, open) = (Arc::clone(&clients), Arc::clone(&open));
                open.fetch_add(1, Ordering::SeqCst);
                runtime.spawn(async move {
                    request(clients, source, true).await;
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        }
        Load::Closed { users, think } => {
            let first = spec.first_call.unwrap_or(think);
            // Think times end on the precise wake-up thread, not on the
            // runtime's millisecond timer.
            let wakeups = Wakeups::start()?;
            for user in 0..users {
                let (clients, open) = (Arc::clone(&clients), Arc::clone(&open));
                let wakeups = wakeups.clone();
                let (start, duration) = (first.sample(&mut environment), spec.duration);
                let mut thinking = Lookahead::new(job_rng(
                    config.seeds.environment ^ u64::from(user) << 32 ^ 0x7573_6572,
                ));
                open.fetch_add(1, Ordering::SeqCst);
                runtime.spawn(async move {
                    let mut at = start;
                    while at < duration {
                        wakeups.until(clients.rec.instant_of(at)).await;
                        request(Arc::clone(&clients), user, false).await;
                        at = clients
                            .rec
                            .now()
                            .saturating_add(think.sample(&mut thinking));
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        }
    }
    // The load has ended (or was stopped): the requests in flight finish,
    // up to the horizon.
    let horizon = clients.rec.instant_of(config.horizon);
    let ending = loop {
        if interrupted.load(Ordering::SeqCst) {
            break Ending::Interrupted;
        }
        if open.load(Ordering::SeqCst) == 0 {
            break Ending::Drained;
        }
        if Instant::now() >= horizon {
            break Ending::Horizon;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let metrics = clients.rec.finish(&spec, ending != Ending::Drained);
    runtime.shutdown_timeout(Duration::from_millis(100));
    let timers_late = clients
        .late
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    Ok(DrillRun {
        metrics,
        ending,
        arrivals_late,
        timers_late,
    })
}

/// Sleeps to `deadline` in steps short enough to notice Ctrl-C; false if
/// it came.
fn sleep_until(deadline: Instant, interrupted: &AtomicBool) -> bool {
    const STEP: Duration = Duration::from_millis(50);
    loop {
        if interrupted.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(STEP));
    }
}
