//! The backlog regions of a service: how a storm and calm are told apart
//! by the exact chain ([`crate::exact`]), the simulator's backlog paths and
//! splitting ([`crate::sim::server_loop::backlog_paths`]) alike. The
//! backlog is the waiting attempts plus the retries waiting out their delay:
//! the work the service still owes, whether it sits in its queue or in its
//! clients.

/// Where a storm starts and where it has ended, by backlog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regions {
    /// The storm region: backlog at least this.
    pub high: usize,
    /// The calm region: backlog at most this.
    pub low: usize,
}

impl Regions {
    /// The regions given, each one missing at its default for a queue of
    /// `queue_limit`: storm from 90% of it (rounded up, at least 1), calm up
    /// to 10% (rounded down).
    pub fn or_defaults(high: Option<usize>, low: Option<usize>, queue_limit: usize) -> Regions {
        Regions {
            high: high.unwrap_or((queue_limit * 9).div_ceil(10).max(1)),
            low: low.unwrap_or(queue_limit / 10),
        }
    }

    /// True in the storm region.
    pub fn storm(&self, backlog: usize) -> bool {
        backlog >= self.high
    }

    /// True in the calm region.
    pub fn calm(&self, backlog: usize) -> bool {
        backlog <= self.low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_nine_tenths_and_a_tenth_of_the_queue() {
        let r = Regions::or_defaults(None, None, 10);
        assert_eq!((r.high, r.low), (9, 1));
        let r = Regions::or_defaults(None, None, 25);
        assert_eq!((r.high, r.low), (23, 2));
        // A queue of none still has a storm region above calm.
        let r = Regions::or_defaults(None, None, 0);
        assert_eq!((r.high, r.low), (1, 0));
        let r = Regions::or_defaults(Some(4), None, 100);
        assert_eq!((r.high, r.low), (4, 10));
        assert!(r.storm(4) && !r.storm(3) && r.calm(10) && !r.calm(11));
    }
}
