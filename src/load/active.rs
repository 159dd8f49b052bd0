//! What the engine holds of a running load, thread-based or an external command, and
//! the one way both turn their totals into a LoadResult. Its own file so that `engine`
//! (which starts `exec` loads) and `exec` both import it and not each other.

use super::LoadSpec;
use crate::result::LoadResult;
use std::collections::BTreeMap;

/// A load that is running; `finish` stops it and reports.
pub(crate) trait ActiveLoad: Send {
    /// Asks the load to stop (returns at once).
    fn halt(&self);
    /// Stops the load, waits for it and reports what it achieved.
    fn finish(self: Box<Self>) -> LoadResult;
}

/// Builds a LoadResult from a load's totals.
pub(crate) fn summarize(
    spec: &LoadSpec,
    cpus: &[usize],
    reported_units: f64,
    cpu_ns: u64,
    elapsed_ns: u64,
) -> LoadResult {
    let secs = elapsed_ns as f64 / 1e9;
    let per_second = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    let mut extra = BTreeMap::new();
    extra.insert("elapsed_ns".into(), elapsed_ns.into());
    extra.insert("cpu_ns".into(), cpu_ns.into());
    LoadResult {
        spec: spec.text.clone(),
        kind: spec.kind.name().into(),
        cpus: cpus.to_vec(),
        throughput: per_second(reported_units),
        unit: spec.kind.doc().unit.into(),
        cpu_percent: per_second(cpu_ns as f64) / 1e9 * 100.0 / cpus.len().max(1) as f64,
        extra,
    }
}
