//! Exact references for Markovian settings (DESIGN Part three, "Exact and
//! rare"): a chain's stationary figures, hitting times and relaxation,
//! solved directly where Monte Carlo over seeds cannot see (storms once in
//! a million blips, first passages of 10⁹ s).
//!
//! [`ctmc`] is a generator and its solvers, [`banded`] the direct solve
//! they share, [`absorbing`] the subtraction-free one of hitting times and
//! committors. [`server_chain`] is herdsim's own server as a chain,
//! [`markovian`] says which run settings it takes, [`server_figures`] reads
//! `herdsim exact`'s figures from it; [`metafor`] is metafor's
//! single-server chain as its code builds it, [`metafor_columns`] its
//! figures under the reference table's names. Pure: no I/O.

pub mod absorbing;
pub mod banded;
pub mod ctmc;
pub mod markovian;
pub mod metafor;
pub mod metafor_columns;
pub mod server_chain;
pub mod server_figures;
