//! The unbound workqueue CPU mask: unbound workqueue workers kept off the shield (the
//! mask is a knob in the state file, restored with the others), and which unbound
//! kernel threads may still reach the shield once it changed.

use super::report::IsolationReport;
use super::state::StateFile;
use crate::sys::{affinity, cpuset, irq};
use std::path::Path;

/// The CPUs unbound workqueue workers may use (a hex mask).
const WORKQUEUE_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";

/// Keeps unbound workqueue workers off the shield (restored like every knob); a kernel
/// without the mask or refusing it leaves a note, not an error.
pub(super) fn confine_unbound(file: &mut StateFile, report: &mut IsolationReport) {
    let path = Path::new(WORKQUEUE_CPUMASK);
    let Ok(before) = cpuset::read_value(path) else {
        return;
    };
    let mask = irq::cpu_mask_hex(&file.state.system_cpus);
    match file.set_knob(path, &mask) {
        Ok(()) => {
            let after = cpuset::read_value(path).unwrap_or_default();
            if after != before {
                report.workqueue_cpumask = Some(format!("{before} -> {after}"));
            }
        }
        Err(e) => report
            .notes
            .push(format!("unbound workqueues left on every CPU: {e:#}")),
    }
}

/// Keeps only the unbound kthreads that may still run on the shield after the
/// workqueue mask changed (workers follow the mask, kthreadd and rescuers do not).
pub(super) fn recheck_unbound_kthreads(isolated: &[usize], report: &mut IsolationReport) {
    let still: Vec<i32> = report
        .unmovable_tasks
        .iter()
        .filter(|t| t.kernel_thread)
        .filter(|t| {
            affinity::get_affinity(t.tid).is_ok_and(|now| {
                now.iter().any(|c| isolated.contains(c))
                    && !now.iter().all(|c| isolated.contains(c))
            })
        })
        .map(|t| t.tid)
        .collect();
    report.unbound_kthreads_staying = report
        .unmovable_tasks
        .iter()
        .filter(|t| still.contains(&t.tid))
        .map(|t| t.comm.clone())
        .collect();
}
