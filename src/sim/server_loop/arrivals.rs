//! Open-loop arrivals: the next arrival's time, by thinning where a trigger
//! changes the rate (proposals at the peak rate, each kept with the rate's
//! share of the peak) or at the rate of the moment with
//! `rate_changes = at-arrival`, and the count a fixed number of requests
//! stops at. Thinning's rejected proposals count toward the run's event
//! limit, as events do: a bound far above the rate once made billions of
//! them between two events. `herdsim drill` (herdsim-live) draws its real
//! arrivals here too.

use crate::base::draws::Draws;
use crate::base::lookahead::Lookahead;
use crate::model::server::{Load, NS_PER_S, Nanos, RateChanges, ServerSpec, round_ns};

/// Thinning's rejected proposals for one arrival between looks at the
/// limits.
const PROPOSALS_CHECKED_EVERY: u64 = 1 << 16;
/// Rejected proposals for one arrival past the horizon before thinning
/// stops there (a run's draws before the horizon stay as they were unless
/// one arrival takes more).
const PROPOSALS_PAST_HORIZON: u64 = 1 << 20;

/// The next arrival, or why there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// It comes at this time.
    At(Nanos),
    /// The load is over (its duration, or its count of requests).
    None,
    /// Thinning stopped: its proposals reached the event limit
    /// (`event_limit`), or went on too long past the horizon.
    Stopped { event_limit: bool },
}

/// The arrivals' state.
#[derive(Debug, Clone)]
pub struct Arrivals {
    /// The spec's highest arrival-rate factor (thinning's bound), once.
    peak_load: f64,
    /// The mean gap between arrivals at that factor, ns (thinning's
    /// proposals), once.
    peak_gap: f64,
    /// True if a trigger changes the rate.
    rate_varies: bool,
    /// Open-loop arrivals scheduled so far (a fixed request count stops
    /// them).
    made: u64,
    /// Thinning's proposals rejected so far.
    pub(super) rejected_proposals: u64,
    /// The events handled at the loop's last look at its limits.
    pub(super) events_at_mark: u64,
    /// The run's event limit.
    pub(super) max_events: u64,
}

impl Arrivals {
    pub fn new(spec: &ServerSpec, max_events: u64) -> Self {
        let peak_load = spec.peak_load_factor();
        Arrivals {
            peak_load,
            peak_gap: match spec.load {
                Load::Open { rate_per_s, .. } => NS_PER_S.ticks() as f64 / (rate_per_s * peak_load),
                Load::Closed { .. } => f64::INFINITY,
            },
            rate_varies: spec.trigger_effects().load,
            made: 0,
            rejected_proposals: 0,
            events_at_mark: 0,
            max_events,
        }
    }

    /// The next open-loop arrival after `t`, if it falls inside the load's
    /// duration, or, with a fixed request count, if the count is not made
    /// yet.
    #[inline(always)]
    pub fn next_after(
        &mut self,
        spec: &ServerSpec,
        mut t: Nanos,
        environment: &mut Lookahead,
    ) -> Next {
        let Load::Open { rate_per_s, .. } = spec.load else {
            return Next::None;
        };
        if spec.requests.is_some_and(|n| self.made >= n) {
            return Next::None;
        }
        if spec.rate_changes == RateChanges::AtArrival {
            let rate = rate_per_s * spec.load_factor_at(t);
            if rate <= 0.0 {
                return Next::None;
            }
            let gap = round_ns(NS_PER_S.ticks() as f64 / rate * environment.exp1());
            t = t.saturating_add(gap);
            if spec.requests.is_none() && t >= spec.duration {
                return Next::None;
            }
            self.made += 1;
            return Next::At(t);
        }
        let (peak, mean_gap) = (self.peak_load, self.peak_gap);
        let mut rejected_here = 0u64;
        loop {
            let gap = round_ns(mean_gap * environment.exp1());
            t = t.saturating_add(gap);
            if spec.requests.is_none() && t >= spec.duration {
                return Next::None;
            }
            if !self.rate_varies {
                // The rate never changes: every proposal is an arrival.
                self.made += 1;
                return Next::At(t);
            }
            let factor = spec.load_factor_at(t);
            if factor >= peak || environment.unit_above_zero() * peak <= factor {
                self.made += 1;
                return Next::At(t);
            }
            self.rejected_proposals += 1;
            rejected_here += 1;
            if rejected_here.is_multiple_of(PROPOSALS_CHECKED_EVERY)
                && let Some(stopped) = self.proposals_stop(spec, t, rejected_here)
            {
                return stopped;
            }
        }
    }

    /// Whether thinning, `rejected` proposals into one arrival, is to stop
    /// at `t`: the event limit counts its proposals, and past the horizon a
    /// rate of (nearly) 0 could propose for ever. Checked only every
    /// [`PROPOSALS_CHECKED_EVERY`] proposals of one arrival, so a run with
    /// fewer per arrival draws what it always drew.
    #[cold]
    fn proposals_stop(&self, spec: &ServerSpec, t: Nanos, rejected: u64) -> Option<Next> {
        if self.events_at_mark.saturating_add(self.rejected_proposals) >= self.max_events {
            return Some(Next::Stopped { event_limit: true });
        }
        if rejected >= PROPOSALS_PAST_HORIZON && spec.horizon.is_some_and(|h| t > h) {
            return Some(Next::Stopped { event_limit: false });
        }
        None
    }

    /// True if `events` handled and the proposals rejected reach the limit.
    #[inline]
    pub(super) fn at_event_limit(&self, events: u64) -> bool {
        events.saturating_add(self.rejected_proposals) >= self.max_events
    }
}
