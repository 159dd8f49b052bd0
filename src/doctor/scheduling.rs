//! Scheduling checks: timer migration, RT throttling and the NMI watchdog.

use super::finding::{CheckId, Finding};
use super::memory::numeric_knob;
use super::Inputs;

pub fn timer_migration(inputs: &Inputs) -> Finding {
    let id = CheckId::SchedTimerMigration;
    let path = "/proc/sys/kernel/timer_migration";
    let v = match numeric_knob(
        inputs,
        id,
        path,
        "timer migration not built in (/proc/sys/kernel/timer_migration missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let line = format!("{path}: {v}");
    if v != 0 {
        Finding::warn(
            id,
            "timer migration is on: timers armed on busy CPUs may be moved onto the measured ones",
            "sysctl kernel.timer_migration=0",
        )
        .with(line)
    } else {
        Finding::pass(id, "timer migration off").with(line)
    }
}

/// The stop RT throttling gives a thread that never sleeps (period − runtime, ns), or
/// `None` when throttling is off or unreadable.
pub fn throttle_stop_ns(inputs: &Inputs) -> Option<u64> {
    let read = |f: &str| {
        inputs
            .files
            .read_trim(&format!("/proc/sys/kernel/{f}"))
            .and_then(|s| s.parse::<i64>().ok())
    };
    let runtime = read("sched_rt_runtime_us").filter(|r| *r >= 0)?;
    let period = read("sched_rt_period_us").unwrap_or(1_000_000);
    u64::try_from((period - runtime) * 1000)
        .ok()
        .filter(|ns| *ns > 0)
}

pub fn rt_throttling(inputs: &Inputs) -> Finding {
    let id = CheckId::SchedRtThrottling;
    let path = "/proc/sys/kernel/sched_rt_runtime_us";
    let runtime = match numeric_knob(
        inputs,
        id,
        path,
        "RT throttling not built in (/proc/sys/kernel/sched_rt_runtime_us missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let period = inputs
        .files
        .read_trim("/proc/sys/kernel/sched_rt_period_us")
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or(1_000_000);
    let line = format!("{path}: {runtime}, sched_rt_period_us: {period}");
    if runtime < 0 {
        return Finding::pass(id, "RT throttling off (sched_rt_runtime_us = -1)").with(line);
    }
    let stop_ms = (period - runtime).max(0) as f64 / 1000.0;
    Finding::warn(
        id,
        format!("RT throttling on: an RT thread that runs {:.0} ms of every {:.0} ms without sleeping is stopped for {stop_ms:.0} ms", runtime as f64 / 1000.0, period as f64 / 1000.0),
        "sysctl kernel.sched_rt_runtime_us=-1 (only when no RT task can spin forever: throttling is the safety net against one)",
    )
    .with(line)
}

pub fn nmi_watchdog(inputs: &Inputs) -> Finding {
    let id = CheckId::SchedNmiWatchdog;
    let path = "/proc/sys/kernel/nmi_watchdog";
    let v = match numeric_knob(
        inputs,
        id,
        path,
        "no NMI watchdog (/proc/sys/kernel/nmi_watchdog missing)",
    ) {
        Ok(v) => v,
        Err(f) => return f,
    };
    let line = format!("{path}: {v}");
    if v != 0 {
        Finding::warn(
            id,
            "NMI watchdog on: a perf counter NMI interrupts every CPU periodically",
            "sysctl kernel.nmi_watchdog=0 (nmi_watchdog=0 at boot)",
        )
        .with(line)
    } else {
        Finding::pass(id, "NMI watchdog off").with(line)
    }
}
