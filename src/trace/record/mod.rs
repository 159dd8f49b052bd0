//! Recording (root, this machine): tracefs found or mounted, an own instance, its ring
//! buffers drained by a pinned thread, raw events decoded by the kernel's format files,
//! all behind `TraceSession`, which hands a `Recording` to the analysis.

pub mod format;
pub mod instance;
pub mod kernel_strings;
pub mod ringbuf;
pub mod session;
pub mod tracefs;
