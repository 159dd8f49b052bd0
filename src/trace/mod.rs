//! `--trace`: why was it late. Records the kernel's own trace events in an own tracefs
//! instance while a probe measures, then joins them to the samples by time (both on
//! CLOCK_MONOTONIC) to split each wake-up into its kernel-side parts and to name what held
//! the CPU during a spike.

pub mod analyze;
pub mod event;
pub mod format;
pub mod instance;
pub mod ringbuf;
pub mod session;
pub mod text;
pub mod tracefs;

/// The trace result schema lives with the saved result (src/result/trace.rs).
pub use crate::result::trace as result;
pub use event::{CpuLosses, Event, EventKind, Losses, TaskRef};
pub use instance::{remove_stale_instances, DEFAULT_EVENTS};
pub use session::{RecorderStats, Recording, TraceConfig, TraceSession};
pub use text::{parse_text_line, render_text_line, render_text_line_ns, TextRenderer};
pub use tracefs::TraceError;

// analysis
pub mod account;
#[cfg(test)]
mod analysis_tests;
#[cfg(test)]
mod analyze_join_tests;
pub mod attribution;
pub mod noise_classify;
pub mod split;
pub mod threshold;
pub mod timeline;
pub mod wake_split;
