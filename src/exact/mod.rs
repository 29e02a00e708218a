//! Exact references for Markovian settings (DESIGN Part three, "Exact and
//! rare"): a chain's stationary figures, hitting times and relaxation,
//! solved directly where Monte Carlo over seeds cannot see (storms once in
//! a million blips, first passages of 10⁹ s).
//!
//! [`ctmc`] is a generator and its solvers, [`banded`] the direct solve
//! they share, [`absorbing`] the subtraction-free one of hitting times, [`metafor`] metafor's single-server chain as its code builds
//! it. Pure: no I/O.

pub mod absorbing;
pub mod banded;
pub mod ctmc;
pub mod metafor;
