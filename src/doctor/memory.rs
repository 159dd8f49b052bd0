//! Memory checks: transparent huge pages, NUMA balancing, KSM and swappiness, each a
//! kernel activity that stalls or faults an RT task's pages behind its back.

use super::finding::{CheckId, Finding};
use super::Inputs;
use crate::sys::host_files::why_unreadable;

/// The bracketed choice of a sysfs selector (`always [madvise] never`).
fn selected(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
}

pub fn thp(inputs: &Inputs) -> Finding {
    let id = CheckId::MemoryThp;
    let path = "/sys/kernel/mm/transparent_hugepage/enabled";
    let text = match inputs.files.read(path) {
        Ok(t) => t,
        Err(e) => {
            return Finding::pass(
                id,
                format!(
                    "transparent huge pages not built in ({path} {})",
                    why_unreadable(&e)
                ),
            )
        }
    };
    let mode = selected(&text).unwrap_or("unknown").to_string();
    let line = format!("{path}: {}", text.trim());
    if mode == "always" {
        Finding::warn(
            id,
            "transparent huge pages `always`: khugepaged collapses and compaction stall tasks",
            format!("echo madvise > {path} (transparent_hugepage=madvise at boot)"),
        )
        .with(line)
    } else {
        Finding::pass(id, format!("transparent huge pages `{mode}`")).with(line)
    }
}

/// A numeric knob: `Ok(value)`, or the finding to return when it is missing.
pub(super) fn numeric_knob(
    inputs: &Inputs,
    id: CheckId,
    path: &str,
    absent: &str,
) -> Result<i64, Finding> {
    match inputs.files.read(path) {
        Ok(t) => t
            .trim()
            .parse()
            .map_err(|_| Finding::skip(id, format!("{path}: '{}' is not a number", t.trim()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(Finding::pass(id, absent.to_string()))
        }
        Err(e) => Err(Finding::skip(id, format!("{path} {}", why_unreadable(&e)))),
    }
}

pub fn numa_balancing(inputs: &Inputs) -> Finding {
    let id = CheckId::MemoryNumaBalancing;
    let path = "/proc/sys/kernel/numa_balancing";
    let v = match numeric_knob(
        inputs,
        id,
        path,
        "NUMA balancing not built in (/proc/sys/kernel/numa_balancing missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let line = format!("{path}: {v}");
    if v != 0 {
        Finding::warn(id, "automatic NUMA balancing is on: it unmaps pages to see who touches them (page faults in the RT task)", "sysctl kernel.numa_balancing=0 (numa_balancing=disable at boot)").with(line)
    } else {
        Finding::pass(id, "NUMA balancing off").with(line)
    }
}

pub fn ksm(inputs: &Inputs) -> Finding {
    let id = CheckId::MemoryKsm;
    let path = "/sys/kernel/mm/ksm/run";
    let v = match numeric_knob(
        inputs,
        id,
        path,
        "KSM not built in (/sys/kernel/mm/ksm missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let line = format!("{path}: {v}");
    if v == 1 {
        Finding::warn(id, "KSM is merging pages: ksmd scans memory and write-protects shared pages (copy-on-write faults)", format!("echo 0 > {path}")).with(line)
    } else {
        Finding::pass(id, "KSM not running").with(line)
    }
}

pub fn swappiness(inputs: &Inputs) -> Finding {
    let id = CheckId::MemorySwappiness;
    let path = "/proc/sys/vm/swappiness";
    let v = match numeric_knob(inputs, id, path, "no vm.swappiness (no swap support)") {
        Ok(v) => v,
        Err(f) => return f,
    };
    let swaps = inputs.files.read("/proc/swaps").unwrap_or_default();
    let active = swaps
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    let line = format!("{path}: {v}");
    let swap_line = format!("/proc/swaps: {active} swap area(s)");
    if active == 0 {
        Finding::pass(
            id,
            format!("no swap in use (swappiness {v} has nothing to act on)"),
        )
        .with(line)
        .with(swap_line)
    } else if v > 10 {
        Finding::warn(id, format!("swappiness {v} with swap in use: memory an RT task has not locked may be swapped out"), "sysctl vm.swappiness=10, and lock the RT task's memory (mlockall; latscope does)").with(line).with(swap_line)
    } else {
        Finding::pass(id, format!("swappiness {v}"))
            .with(line)
            .with(swap_line)
    }
}

pub fn stat_interval(inputs: &Inputs) -> Finding {
    let id = CheckId::MemoryStatInterval;
    let path = "/proc/sys/vm/stat_interval";
    let v = match numeric_knob(
        inputs,
        id,
        path,
        "no vm.stat_interval (/proc/sys/vm/stat_interval missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let line = format!("{path}: {v}");
    if v < 10 {
        Finding::warn(
            id,
            format!("vm.stat_interval {v} s: the vmstat update wakes a kworker on every CPU that has counters to fold, every {v} s"),
            "sysctl vm.stat_interval=10",
        )
        .with(line)
    } else {
        Finding::pass(id, format!("vm.stat_interval {v} s")).with(line)
    }
}
