//! `--trace`: why was it late. Records the kernel's own trace events in an own tracefs
//! instance while a probe measures (record/), then joins them to the samples by time (both
//! on CLOCK_MONOTONIC) to split each wake-up into its kernel-side parts and to name what
//! held the CPU during a spike (analysis/). event.rs is what the two share.

pub mod analysis;
pub mod event;
pub mod record;

/// The trace result schema lives with the saved result (src/result/trace.rs).
pub use crate::result::trace as result;
pub use analysis::text::{parse_text_line, render_text_line, render_text_line_ns, TextRenderer};
pub use event::{CpuLosses, Event, EventKind, Losses, TaskRef};
pub use record::instance::{remove_stale_instances, DEFAULT_EVENTS};
pub use record::session::{RecorderStats, Recording, TraceConfig, TraceSession};
pub use record::tracefs::TraceError;
