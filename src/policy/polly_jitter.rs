//! Polly v8's jitter for its constant and linear backoff
//! (`RetryHelper.ApplyJitter`, src/Polly.Core/Retry/RetryHelper.cs, Polly
//! 8.7.0, commit 173d6d1), shared by [`super::PollyConstantJitter`] and
//! [`super::PollyLinearJitter`].

use crate::base::draws::Draws;
use crate::base::time::Micros;

/// `d + d·0.5·U − d·0.5/2` for the un-jittered delay `d` (µs here, ms in
/// Polly: the same scale-free formula), U in [0, 1) (`Random.NextDouble`,
/// a 53-bit draw here): uniform on `[0.75·d, 1.25·d)`. Then Polly's
/// `MaxDelay` clamp (`delay > maxDelay → maxDelay`), so the cap comes after
/// the jitter. Rounded to the nearest µs (Polly keeps 100 ns ticks).
pub(crate) fn jittered<D: Draws + ?Sized>(d: f64, cap: Micros, draws: &mut D) -> Micros {
    const UNIT: u64 = 1 << 53;
    const FACTOR: f64 = 0.5;
    let u = draws.uniform(0, UNIT - 1) as f64 / UNIT as f64;
    let offset = d * FACTOR / 2.0;
    let delay = d + (d * FACTOR * u - offset);
    if delay >= cap.ticks() as f64 {
        cap
    } else {
        Micros::from_ticks(delay.round() as u64).min(cap)
    }
}
