//! The `threads[].extra` keys the timer probe writes for `latscope cyclictest`
//! (docs/probes.md), shared by the probe that writes them and the report that reads them.

/// The measuring thread's kernel id (cyclictest's `T: 0 (tid)`).
pub const TID: &str = "tid";
/// The last sample, ns (cyclictest's `Act`).
pub const LAST_NS: &str = "last_ns";
/// The thread's period, ns (cyclictest's `I:`, which `-d` spreads).
pub const PERIOD_NS: &str = "period_ns";
/// `-h N`: {"unit_ns", "buckets": N, "counts": [[bucket, count], ...] (non-zero only),
/// "overflows", "overflow_samples": [...]}.
pub const FIXED_HISTOGRAM: &str = "fixed_histogram";
