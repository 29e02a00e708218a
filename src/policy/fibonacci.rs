//! `fibonacci`: Fibonacci backoff (backon, tokio-retry).

use super::Backoff;
use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d = min(cap, base·F_k)` with `F_1 = F_2 = 1`: base, base, 2·base, 3·base,
/// 5·base, … (tokio-retry's `FibonacciBackoff`, backon's `FibonacciBuilder`
/// without jitter). It grows by the golden ratio, ~1.618 per retry, gentler
/// than doubling. The walk keeps the last two values, saturating, so no retry
/// number overflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fibonacci {
    /// The first two delays, µs.
    pub base: Micros,
    /// Largest delay, µs.
    pub cap: Micros,
}

impl Backoff for Fibonacci {
    /// The current and next delays before the cap, µs.
    type Walk = (Micros, Micros);

    const JITTERED: bool = false;

    fn start(&self) -> (Micros, Micros) {
        (self.base, self.base)
    }

    #[inline]
    fn delay<D: Draws + ?Sized>(&self, _: u32, walk: &mut (Micros, Micros), _: &mut D) -> Micros {
        let (current, next) = *walk;
        *walk = (next, current.saturating_add(next));
        current.min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::draws::ScriptedDraws;

    #[test]
    fn the_sequence_is_fibonacci_times_the_base_then_the_cap() {
        let p = Fibonacci {
            base: Micros::from_us(100),
            cap: Micros::from_ms(1),
        };
        let mut walk = p.start();
        let mut none = ScriptedDraws::new(&[]);
        let got: Vec<_> = (1..=10).map(|k| p.delay(k, &mut walk, &mut none)).collect();
        assert_eq!(
            got,
            [100, 100, 200, 300, 500, 800, 1_000, 1_000, 1_000, 1_000].map(Micros::from_ticks)
        );
        for k in 11..200 {
            assert_eq!(
                p.delay(k, &mut walk, &mut none),
                Micros::from_ms(1),
                "saturates, never overflows"
            );
        }
    }
}
