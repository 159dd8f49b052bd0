//! What `latscope doctor` says about one thing: a finding with a stable check ID, its
//! status, the evidence it read, the fix for a WARN or FAIL and, where it was measured,
//! the measured effect. Every check ID and its meaning is written once, in the table
//! below; docs/doctor.md's table is checked against it by a unit test.

use super::paired::SignTest;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares `CheckId` from one table: variant, ID as written in JSON, meaning.
macro_rules! check_ids {
    ($($variant:ident = $id:literal: $meaning:literal,)+) => {
        /// The stable ID of a check (`kernel.preempt_rt`), for scripts reading the JSON.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum CheckId {
            $(#[doc = $meaning] $variant,)+
        }

        impl CheckId {
            /// Every check, in the documentation's (and the checklist's) order.
            pub const ALL: &'static [CheckId] = &[$(CheckId::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $id,)+
                }
            }

            /// What the check looks at, one line (the documentation's table).
            pub fn meaning(self) -> &'static str {
                match self {
                    $(CheckId::$variant => $meaning,)+
                }
            }
        }
    };
}

check_ids! {
    KernelPreemptRt = "kernel.preempt_rt": "the kernel is PREEMPT_RT (/sys/kernel/realtime, the version string, the kernel config under its old and new names)",
    KernelPreemptMode = "kernel.preempt_mode": "the preemption model in effect: a dynamic kernel's mode from debugfs, `preempt=` or its config default",
    KernelDebugOptions = "kernel.debug_options": "no debug option that inflates latency is built in (LOCKDEP, PROVE_LOCKING, DEBUG_PREEMPT, KASAN, KCSAN, ...)",
    KernelTracers = "kernel.tracers": "no tracer (function, latency tracers) is running in tracefs",
    KernelSerialConsole = "kernel.serial_console": "the kernel console is not on a serial port, or only emergencies reach it (printk waits for the UART; the level in /proc/sys/kernel/printk)",
    KernelHrtimers = "kernel.hrtimers": "high-resolution timers are active on the measured CPUs (/proc/timer_list, else the config and `highres=`)",
    KernelNohz = "kernel.nohz": "the tick's configuration: NO_HZ_FULL built in where measured CPUs are isolated, and the tick's rate",
    KernelSkewTick = "kernel.skew_tick": "`skew_tick=1` staggers the CPUs' ticks so they do not contend for the same locks at once",
    KernelWatchdog = "kernel.watchdog": "the soft-lockup watchdog (its timer and the stopper thread it wakes) does not run on the measured CPUs (`kernel.watchdog`, `watchdog_cpumask`)",
    CpusIsolation = "cpus.isolation": "isolcpus=, nohz_full= and rcu_nocbs= agree with each other and cover the measured CPUs",
    CpusIrqAffinity = "cpus.irq_affinity": "no device IRQ is delivered on a measured CPU (kernel-managed ones named: only `isolcpus=managed_irq` keeps them off)",
    CpusIrqbalance = "cpus.irqbalance": "irqbalance is not running (it moves IRQs back onto isolated CPUs)",
    CpusWorkqueues = "cpus.workqueues": "unbound workqueues and writeback are kept off the measured CPUs (the workqueue CPU masks)",
    CpusCstates = "cpus.cstates": "deep C-states' exit latencies against the cpu_dma_latency limit (measured: the timer's p99 with cpu_dma_latency held at 0 and released)",
    CpusGovernor = "cpus.governor": "the measured CPUs run the `performance` frequency governor",
    CpusEnergyBias = "cpus.energy_bias": "the measured CPUs favour performance: energy-performance bias (EPB) 0 and EPP `performance` (intel_pstate, amd-pstate)",
    CpusSmt = "cpus.smt": "no measured CPU shares its core with a sibling that runs other work",
    MemoryThp = "memory.thp": "transparent huge pages are not `always` (khugepaged and compaction stall tasks)",
    MemoryNumaBalancing = "memory.numa_balancing": "automatic NUMA balancing is off (it unmaps pages to sample them)",
    MemoryKsm = "memory.ksm": "KSM page merging is off (ksmd scans and write-protects pages)",
    MemorySwappiness = "memory.swappiness": "vm.swappiness is low (<= 10) so an RT task's memory stays resident",
    MemoryStatInterval = "memory.stat_interval": "vm.stat_interval is 10 s or more (the vmstat update wakes a kworker on each CPU that often)",
    SchedTimerMigration = "sched.timer_migration": "timer migration is off (timers stay on the CPU that armed them)",
    SchedRtThrottling = "sched.rt_throttling": "RT throttling does not stop a busy RT thread (sched_rt_runtime_us = -1)",
    SchedNmiWatchdog = "sched.nmi_watchdog": "the NMI watchdog is off (its perf NMI interrupts every CPU)",
    PlatformClocksource = "platform.clocksource": "the clocksource is tsc (arm64: arch_sys_counter), not a slow or emulated one",
    PlatformTscReliable = "platform.tsc_reliable": "no clocksource watchdog checks an invariant TSC every 0.5 s (`tsc=reliable`)",
    PlatformHypervisor = "platform.hypervisor": "no hypervisor (the CPUID signature, the kernel log, DMI, /sys/hypervisor): under one, the host can stop this machine's CPUs for milliseconds",
    PlatformMitigations = "platform.mitigations": "the CPU vulnerability mitigations in effect (reported, not judged)",
    PermRtprio = "perm.rtprio": "RLIMIT_RTPRIO allows the priority asked for (or root)",
    PermMemlock = "perm.memlock": "RLIMIT_MEMLOCK allows locking the process's memory (or root)",
    PermSchedFifo = "perm.sched_fifo": "an actual attempt at SCHED_FIFO at the priority asked for succeeds (capabilities, limits and cgroup RT budgets together)",
    PrioIrqThreads = "prio.irq_threads": "no threaded device IRQ (`irq/N-name`) outranks the priority asked for",
    PrioKsoftirqd = "prio.ksoftirqd": "ksoftirqd does not outrank the priority asked for",
    PrioRcuc = "prio.rcuc": "rcuc threads do not outrank the priority asked for",
    PrioKtimers = "prio.ktimers": "ktimers threads (PREEMPT_RT) do not outrank the priority asked for",
    SetupPolicy = "setup.policy": "the planned run measures at a real-time policy (SCHED_OTHER measures the scheduler's fairness)",
    SetupPriority = "setup.priority": "the planned run's priority is above the kernel threads it competes with",
    SetupCpus = "setup.cpus": "the planned run's CPUs are online, isolated and free of housekeeping",
    SetupDmaLatency = "setup.dma_latency": "the planned run holds cpu_dma_latency at 0 where deep C-states exist",
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CheckId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A saved doctor file read back (`latscope report doctor.json`).
impl<'de> Deserialize<'de> for CheckId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        CheckId::ALL
            .iter()
            .copied()
            .find(|id| id.as_str() == text)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown check ID '{text}' (written by a newer latscope? docs/doctor.md lists the IDs)"
                ))
            })
    }
}

/// The outcome of one check, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    /// Reported, not judged (the CPU vulnerability mitigations).
    Info,
    /// Not checked, with the reason (not root, file missing, not this architecture).
    Skip,
    Warn,
    Fail,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Info => "INFO",
            Status::Skip => "SKIP",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// What a measurement says about its finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bearing {
    /// The problem was seen here, or its fix measured better: the finding stands.
    Confirms,
    /// The fix measured worse or within noise: not a gain on this machine.
    Refutes,
}

/// An A/B or an observation measured on this machine for a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// One line: `cpu_dma_latency 0: p99 62 → 31 µs (−50 %): better (...)`.
    pub summary: String,
    /// The A and B values (ns) of each pair, in the order measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs_ns: Vec<[u64; 2]>,
    /// Whether the knob was back at its value before the A/B afterwards.
    pub restored: bool,
    /// An A/B's paired test and its verdict (absent for an observation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<SignTest>,
    /// What it says about the finding (absent: it only informs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearing: Option<Bearing>,
}

impl Measured {
    /// An observation that only informs (no bearing on the finding's status).
    pub fn observed(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            pairs_ns: Vec::new(),
            restored: true,
            test: None,
            bearing: None,
        }
    }

    pub fn bearing(mut self, bearing: Option<Bearing>) -> Self {
        self.bearing = bearing;
        self
    }
}

/// What a finding's status rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Only the settings read.
    #[default]
    Read,
    /// A measurement on this machine decided it (`measured[].bearing`).
    Measured,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: CheckId,
    pub status: Status,
    /// One line: what is true here.
    pub summary: String,
    /// What was read (file: value), so the reader can check it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// For WARN/FAIL: the sysctl, kernel parameter or command that fixes it; for SKIP:
    /// nothing (the summary says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What was measured for it on this machine (A/Bs, the observation window).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<Measured>,
    /// Whether its status rests on the settings read or on a measurement here.
    #[serde(default)]
    pub basis: Basis,
}

impl Finding {
    fn new(id: CheckId, status: Status, summary: impl Into<String>) -> Self {
        Self {
            id,
            status,
            summary: summary.into(),
            evidence: Vec::new(),
            fix: None,
            measured: Vec::new(),
            basis: Basis::Read,
        }
    }

    pub fn pass(id: CheckId, summary: impl Into<String>) -> Self {
        Self::new(id, Status::Pass, summary)
    }

    pub fn warn(id: CheckId, summary: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::new(id, Status::Warn, summary).fix(fix)
    }

    pub fn fail(id: CheckId, summary: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::new(id, Status::Fail, summary).fix(fix)
    }

    /// Reported, not judged: the summary says what is there.
    pub fn info(id: CheckId, summary: impl Into<String>) -> Self {
        Self::new(id, Status::Info, summary)
    }

    /// Not checked: `why` says why (not root, file missing, not this architecture).
    pub fn skip(id: CheckId, why: impl Into<String>) -> Self {
        Self::new(id, Status::Skip, why)
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// Adds a line of evidence (`file: value`).
    pub fn with(mut self, evidence: impl Into<String>) -> Self {
        self.evidence.push(evidence.into());
        self
    }
}

/// The groups of the checklist, in the order printed.
pub const GROUPS: [(&str, &str); 8] = [
    ("kernel", "Kernel"),
    ("cpus", "CPUs"),
    ("memory", "Memory"),
    ("sched", "Scheduling"),
    ("platform", "Clock and platform"),
    ("perm", "Permissions"),
    ("prio", "Priorities"),
    ("setup", "The planned run"),
];

impl CheckId {
    /// The group key (`kernel` of `kernel.preempt_rt`).
    pub fn group(self) -> &'static str {
        self.as_str().split('.').next().unwrap_or_default()
    }
}

/// The documentation's table of check IDs, as docs/doctor.md must have it.
#[cfg(test)]
pub fn doc_table() -> String {
    let mut out = String::from("| check | what it looks at |\n|---|---|\n");
    for id in CheckId::ALL {
        out.push_str(&format!("| `{id}` | {} |\n", id.meaning()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_is_in_a_group_and_ids_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for id in CheckId::ALL {
            assert!(seen.insert(id.as_str()), "{id} twice");
            assert!(
                GROUPS.iter().any(|(g, _)| *g == id.group()),
                "{id}: no group"
            );
        }
    }

    #[test]
    fn docs_doctor_documents_every_check_id() {
        let doc = include_str!("../../docs/doctor.md");
        let section = doc
            .split("## Check IDs\n\n")
            .nth(1)
            .expect("docs/doctor.md has a '## Check IDs' section");
        let table: String = section
            .lines()
            .take_while(|l| l.starts_with('|'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            table,
            doc_table(),
            "docs/doctor.md's check table differs from src/doctor/finding.rs; paste this table there:\n{}",
            doc_table()
        );
    }
}
