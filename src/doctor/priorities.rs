//! Priority checks: the kernel threads that decide an RT task's fate (threaded device
//! IRQs, ksoftirqd, rcuc, ktimers) against the priority the task will run at. A thread
//! at or above it is never preempted by the task: its work delays it.

use super::finding::{CheckId, Finding};
use super::inputs::ProcStat;
use super::Inputs;

/// A class of kernel threads: its check, its name prefix and what it does.
struct Class {
    id: CheckId,
    prefix: &'static str,
    what: &'static str,
    absent: &'static str,
}

const CLASSES: [Class; 4] = [
    Class {
        id: CheckId::PrioIrqThreads,
        prefix: "irq/",
        what: "threaded device IRQ handlers",
        absent: "no threaded IRQ handlers (not PREEMPT_RT and no `threadirqs`): handlers run in hard interrupt context, above every task",
    },
    Class {
        id: CheckId::PrioKsoftirqd,
        prefix: "ksoftirqd/",
        what: "softirq threads",
        absent: "no ksoftirqd threads",
    },
    Class {
        id: CheckId::PrioRcuc,
        prefix: "rcuc/",
        what: "RCU callback threads",
        absent: "no rcuc threads (RCU callbacks run in softirq: rcutree.use_softirq=1, or not PREEMPT_RT)",
    },
    Class {
        id: CheckId::PrioKtimers,
        prefix: "ktimers/",
        what: "timer softirq threads (PREEMPT_RT 6.x)",
        absent: "no ktimers threads (not a PREEMPT_RT kernel of 6.x)",
    },
];

fn describe(s: &ProcStat, pid: u32) -> String {
    if s.is_realtime() {
        format!(
            "{} (pid {pid}): {} {}",
            s.comm,
            s.policy_name(),
            s.rt_priority
        )
    } else {
        format!("{} (pid {pid}): {}", s.comm, s.policy_name())
    }
}

fn check_class(class: &Class, threads: &[(u32, ProcStat)], priority: i32) -> Finding {
    let mine: Vec<&(u32, ProcStat)> = threads
        .iter()
        .filter(|(_, s)| s.kernel_thread && s.comm.starts_with(class.prefix))
        .collect();
    if mine.is_empty() {
        return Finding::pass(class.id, class.absent);
    }
    let above: Vec<&(u32, ProcStat)> = mine
        .iter()
        .copied()
        .filter(|(_, s)| s.is_realtime() && s.rt_priority >= priority)
        .collect();
    let top = mine
        .iter()
        .map(|(_, s)| if s.is_realtime() { s.rt_priority } else { 0 })
        .max()
        .unwrap_or(0);
    let mut f = if above.is_empty() {
        Finding::pass(
            class.id,
            format!(
                "{} {}, highest at {}: below priority {priority}",
                mine.len(),
                class.what,
                if top > 0 {
                    format!("FIFO {top}")
                } else {
                    "SCHED_OTHER".into()
                }
            ),
        )
    } else {
        Finding::warn(
            class.id,
            format!("{} of {} {} at or above priority {priority}: the RT task waits while they run", above.len(), mine.len(), class.what),
            format!("chrt -f -p {} PID for each (below {priority}), or raise the task's priority above them", (priority - 1).max(1)),
        )
    };
    let shown: Vec<&&(u32, ProcStat)> = if above.is_empty() {
        mine.iter().take(4).collect()
    } else {
        above.iter().take(8).collect()
    };
    for (pid, s) in shown {
        f = f.with(format!("/proc/{pid}/stat: {}", describe(s, *pid)));
    }
    f
}

pub fn all(inputs: &Inputs) -> Vec<Finding> {
    let threads = inputs.processes();
    if threads.is_empty() {
        return CLASSES
            .iter()
            .map(|c| Finding::skip(c.id, "/proc/PID/stat not readable"))
            .collect();
    }
    CLASSES
        .iter()
        .map(|c| check_class(c, &threads, inputs.priority))
        .collect()
}
