//! What an isolation did and what it could not do, as stored in `scenario.isolation`
//! and turned into warnings; what `latscope restore` did (`RestoreOutcome`).

use crate::units::format_cpu_list;
use crate::warning::{Warning, WarningCode};
use serde::{Deserialize, Serialize};

/// A task that stayed in the root cpuset.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UnmovableTask {
    pub tid: i32,
    pub comm: String,
    pub cpus: String,
    pub kernel_thread: bool,
    pub reason: String,
}

/// An IRQ whose affinity was changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct MovedIrq {
    pub irq: u32,
    pub name: String,
    pub from: String,
    pub to: String,
}

/// An IRQ the kernel would not move.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UnmovableIrq {
    pub irq: u32,
    pub name: String,
    pub affinity: String,
    pub reason: String,
}

/// What an isolation did; stored in the result as `scenario.isolation`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IsolationReport {
    /// `cgroup-v1` or `cgroup-v2`.
    pub mechanism: String,
    pub isolated_cpus: Vec<usize>,
    pub system_cpus: Vec<usize>,
    pub moved_tasks: usize,
    pub unmovable_tasks: Vec<UnmovableTask>,
    /// Per-CPU kernel threads bound to isolated CPUs, which stay (e.g. `ksoftirqd/1`).
    pub kthreads_staying: Vec<String>,
    /// Unbound kernel threads the kernel would not move that may still run on the
    /// isolated CPUs (kthreadd, workqueue rescuers).
    pub unbound_kthreads_staying: Vec<String>,
    /// The unbound-workqueue CPU mask, before -> after, when changed.
    pub workqueue_cpumask: Option<String>,
    pub moved_irqs: Vec<MovedIrq>,
    pub unmovable_irqs: Vec<UnmovableIrq>,
    /// The default affinity of new IRQs, before -> after, when changed.
    pub default_irq_affinity: Option<String>,
    /// Existing cpusets whose CPUs were narrowed to leave the isolated CPUs alone.
    pub narrowed_cpusets: Vec<String>,
    /// CPUs isolated and nohz_full at boot, and the kernel parameters that did it.
    pub boot_isolcpus: Vec<usize>,
    pub boot_nohz_full: Vec<usize>,
    pub boot_params: Vec<String>,
    pub notes: Vec<String>,
    pub state_file: String,
    /// `latscope restore --force` undid the isolation while the scenario ran: the samples
    /// after that moment were not measured on a shielded CPU.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed_during_run: bool,
}

impl IsolationReport {
    /// What still reaches the isolated CPUs, as warnings for the scenario.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        let cpus = format_cpu_list(&self.isolated_cpus);
        if !self.unmovable_irqs.is_empty() {
            let list: Vec<String> = self
                .unmovable_irqs
                .iter()
                .map(|i| format!("{} {} ({})", i.irq, i.name, i.reason))
                .collect();
            w.push(Warning::new(WarningCode::IsolationIrqsStay, format!(
                    "the kernel would not move IRQ {} off CPU {cpus}; these interrupts still reach the isolated CPUs",
                    list.join(", ")
                )));
        }
        if !self.kthreads_staying.is_empty() {
            w.push(Warning::new(WarningCode::IsolationKthreadsStay, format!(
                    "{} per-CPU kernel threads stay on isolated CPU {cpus} ({}); the kernel binds them there",
                    self.kthreads_staying.len(),
                    self.kthreads_staying.join(", ")
                )));
        }
        w
    }
}

/// One line of `latscope restore` output per state file or leftover cpuset.
#[derive(Debug, Clone)]
pub struct RestoreOutcome {
    pub message: String,
    pub ok: bool,
    /// Nothing was tried: undoing this needs root (`latscope restore` exits 4).
    pub needs_root: bool,
}

impl RestoreOutcome {
    pub fn done(message: String, ok: bool) -> Self {
        Self {
            message,
            ok,
            needs_root: false,
        }
    }

    pub fn needs_root(what: String) -> Self {
        Self {
            message: format!("{what}; undoing it needs root: run `sudo latscope restore`"),
            ok: false,
            needs_root: true,
        }
    }
}
