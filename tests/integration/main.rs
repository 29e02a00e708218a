//! The integration tests, one module per subject, built as one binary (one
//! link of the library instead of nine).

mod assess;
mod aws;
mod book;
mod chain;
mod cli;
mod common;
mod compare;
mod controls;
mod conventions;
mod docs;
mod envoy;
mod envoy_hedging;
mod hardening_bounds;
mod hardening_journals;
mod hardening_specs;
mod hardening_writers;
mod hedging;
mod import;
mod invariants;
mod layers;
mod linkerd;
mod map;
mod mesh;
mod outputs;
mod plots;
mod reference_figures;
mod report;
mod resilience;
mod seed_claims;
mod server;
mod server_controls;
mod studies;
mod sweep;
mod verdicts;
mod workloads;
