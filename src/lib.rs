//! latscope: measures how late real-time tasks wake up on Linux, under which load, and
//! why. The library holds everything; `main.rs` only parses, runs and exits, so tests
//! and benches reach the internals. `unsafe` is allowed in `sys` only.

#![deny(unsafe_code)]

pub mod build_info;
pub(crate) mod choice_list;
pub mod cli;
pub mod cli_error;
pub mod commands;
pub(crate) mod compare;
pub mod cyclictest;
pub mod doctor;
pub mod error;
pub mod import;
pub mod interrupt;
pub mod isolate;
pub mod load;
pub mod man_sections;
pub mod output;
pub mod packaging;
#[cfg(test)]
mod parsers_never_panic;
pub(crate) mod plan;
pub mod probe;
pub(crate) mod progress;
pub mod remote;
pub mod render;
pub mod report;
pub mod result;
pub(crate) mod runner;
pub mod stats;
pub(crate) mod suite;
#[allow(unsafe_code)]
pub mod sys;
pub(crate) mod sysinfo;
pub mod trace;
pub mod units;
pub(crate) mod warning;
pub mod watch;
