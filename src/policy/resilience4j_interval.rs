//! The arithmetic resilience4j's `IntervalFunction` shares between its
//! factories (resilience4j-core, `io.github.resilience4j.core.
//! IntervalFunction` and `IntervalFunctionCompanion`, v2.4.0-16-gaf9e7c9):
//! whole milliseconds, the growth truncated at every step, the randomization
//! `randomize`.

use crate::base::draws::Draws;
use crate::base::time::Micros;

const US_PER_MS: Micros = Micros::from_ms(1);

/// resilience4j keeps intervals in whole ms (`Duration.toMillis()`); its
/// `checkInterval` refuses less than 1 ms, read here as 1 ms.
pub(crate) fn millis(us: Micros) -> i64 {
    (us / US_PER_MS).clamp(1, i64::MAX as u64) as i64
}

/// The interval of attempt `retry` (≥ 1) of `ofExponentialBackoff`, ms:
/// `LongStream.iterate(base, x -> (long) (x * multiplier))`, element
/// `retry − 1`. Each step truncates (500 ms × 1.5: 500, 750, 1125, 1687,
/// 2530, …, where `500·1.5^4` would be 2531.25); Java's `(long)` of a double
/// saturates, as Rust's `as i64` does. The walk stops once the interval
/// reaches `stop` (the cap: it only grows) or stands still (a multiplier
/// that no longer moves a small interval), so no retry number costs more
/// than the growth to the cap.
pub(crate) fn exponential_ms(base_ms: i64, multiplier: f64, retry: u32, stop: i64) -> i64 {
    let mut x = base_ms;
    for _ in 1..retry {
        if x >= stop {
            break;
        }
        let next = (x as f64 * multiplier) as i64;
        if next == x {
            break;
        }
        x = next;
    }
    x
}

/// `randomize(current, f)`: `min + Math.random()·(max − min + 1)` with
/// `min, max = current ∓ f·current`, at least 1.0, then truncated to whole
/// ms by the caller's `(long)`. The `+ 1` makes the draw uniform on
/// `[(1−f)·d, (1+f)·d + 1)` ms, so the longest wait is `(1+f)·d` ms
/// rounded down (at the very top draw, the double's rounding can reach
/// `(1+f)·d + 1`, in Java too). `Math.random()` is a 53-bit fraction in
/// [0, 1); so is the draw here.
pub(crate) fn randomized_ms<D: Draws + ?Sized>(current_ms: i64, factor: f64, draws: &mut D) -> i64 {
    const UNIT: u64 = 1 << 53;
    let fraction = draws.uniform(0, UNIT - 1) as f64 / UNIT as f64;
    let current = current_ms as f64;
    let delta = factor * current;
    let (lo, hi) = (current - delta, current + delta);
    (lo + fraction * (hi - lo + 1.0)).max(1.0) as i64
}

/// A wait in ms as herdsim's µs, within `cap` (µs).
pub(crate) fn capped_us(ms: i64, cap: Micros) -> Micros {
    US_PER_MS.saturating_mul(ms.max(0) as u64).min(cap)
}
