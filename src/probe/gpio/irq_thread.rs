//! The kernel thread that handles the measured line's interrupt (`irq/N-CONSUMER`: the
//! GPIO character device requests a threaded IRQ, and PREEMPT_RT threads every handler):
//! found from /proc/interrupts by the request's consumer name, then its policy, priority
//! and CPU beside the measuring thread's.

use crate::sys::sched::{self, Policy};

/// What the result says about the IRQ thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqThread {
    pub irq: u32,
    pub tid: i32,
    pub comm: String,
    pub policy: Option<Policy>,
    pub priority: i32,
    /// The CPU it last ran on.
    pub cpu: usize,
    /// Cpus_allowed_list from /proc.
    pub allowed: String,
}

/// The IRQ number whose action is named `consumer` in /proc/interrupts' text.
pub fn irq_of_consumer(interrupts: &str, consumer: &str) -> Option<u32> {
    interrupts.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let irq = words.next()?.strip_suffix(':')?.parse().ok()?;
        line.split_whitespace()
            .last()
            .is_some_and(|last| last.split(',').any(|a| a == consumer))
            .then_some(irq)
    })
}

/// Finds the IRQ thread of the line requested as `consumer`.
pub fn find(consumer: &str) -> Option<IrqThread> {
    let interrupts = std::fs::read_to_string("/proc/interrupts").ok()?;
    let irq = irq_of_consumer(&interrupts, consumer)?;
    let prefix = format!("irq/{irq}-");
    let tid = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end().starts_with(&prefix))
        })?;
    describe(irq, tid)
}

/// The thread's scheduling and CPU as it is now.
pub fn describe(irq: u32, tid: i32) -> Option<IrqThread> {
    let stat = crate::sys::procfs::task_stat(tid)?;
    let scheduling = sched::task_policy(tid);
    let allowed = std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("Cpus_allowed_list:")
                    .map(|v| v.trim().to_string())
            })
        })
        .unwrap_or_default();
    Some(IrqThread {
        irq,
        tid,
        comm: stat.comm,
        policy: scheduling.map(|s| s.0),
        priority: scheduling.map_or(0, |s| s.1),
        cpu: stat.processor,
        allowed,
    })
}

impl IrqThread {
    /// `irq/45-latscope-1 (IRQ 45): FIFO 50 on CPU 1 (allowed 0-1)`.
    pub fn summary(&self) -> String {
        let policy = self.policy.map_or("?".to_string(), |p| p.to_string());
        format!(
            "{} (IRQ {}): {policy} {} on CPU {} (allowed {})",
            self.comm, self.irq, self.priority, self.cpu, self.allowed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_consumers_irq() {
        let text = "           CPU0       CPU1\n  0:  205  0  IO-APIC   2-edge      timer\n 45:   3   0  gpio-sim   0  Edge      latscope-77\n 46:   3   0  gpio-sim   1  Edge      other\n";
        assert_eq!(irq_of_consumer(text, "latscope-77"), Some(45));
        assert_eq!(irq_of_consumer(text, "latscope-7"), None);
    }
}
