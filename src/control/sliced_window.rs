//! A count over a sliding window kept in time slices, the way Finagle's
//! `WindowedAdder` keeps one: the window is `slices` slices of equal length,
//! a value added goes into the current slice, and a slice drops out whole
//! once `slices` newer ones have begun. So an entry counts for between
//! (slices − 1) and `slices` slice lengths. Finagle's retry budget and the
//! SRE book's throttle both count this way.

use crate::control::Nanos;

/// Values of `T` summed per slice over the last `slices` slices.
#[derive(Debug, Clone)]
pub struct SlicedWindow<T> {
    /// One slice's length, ns.
    slice: Nanos,
    /// Each slot's value and the slice it holds (`u64::MAX`: none yet).
    slots: Vec<(T, u64)>,
}

impl<T: Copy + Default> SlicedWindow<T> {
    /// An empty window of `slices` slices of `slice` ns each.
    pub fn new(slices: usize, slice: Nanos) -> Self {
        SlicedWindow {
            slice: slice.max(Nanos::from_ticks(1)),
            slots: vec![(T::default(), u64::MAX); slices],
        }
    }

    /// The current slice's value at `now`, emptied first if the slot held
    /// an older slice.
    pub fn at(&mut self, now: Nanos) -> &mut T {
        let current = now / self.slice;
        let n = self.slots.len() as u64;
        let slot = &mut self.slots[(current % n) as usize];
        if slot.1 != current {
            *slot = (T::default(), current);
        }
        &mut slot.0
    }

    /// The values of the slices still in the window at `now`.
    pub fn live(&self, now: Nanos) -> impl Iterator<Item = &T> {
        let current = now / self.slice;
        let n = self.slots.len() as u64;
        self.slots
            .iter()
            .filter(move |&&(_, slice)| slice <= current && slice + n > current)
            .map(|(value, _)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_drops_out_whole_once_as_many_newer_ones_began() {
        // 4 slices of 10 ns.
        let mut w: SlicedWindow<u32> = SlicedWindow::new(4, Nanos::from_ticks(10));
        *w.at(Nanos::ZERO) += 1;
        *w.at(Nanos::from_ticks(9)) += 1;
        *w.at(Nanos::from_ticks(35)) += 5;
        assert_eq!(w.live(Nanos::from_ticks(39)).sum::<u32>(), 7);
        // At 40 slice 0 has 4 newer ones (1..=4): it is gone.
        assert_eq!(w.live(Nanos::from_ticks(40)).sum::<u32>(), 5);
        // Slot reuse: slice 4 lands where slice 0 was, emptied first.
        *w.at(Nanos::from_ticks(41)) += 2;
        assert_eq!(w.live(Nanos::from_ticks(41)).sum::<u32>(), 7);
        assert_eq!(w.live(Nanos::from_ticks(80)).sum::<u32>(), 0);
    }
}
