//! The system context a result is only meaningful with: kernel and preemption model,
//! command line, isolation, clocksource, CPUs, governor, RT throttling, THP,
//! virtualization and cpu_dma_latency. Read from /proc and /sys, never guessed.

pub mod arm64;

use crate::sys::host_files::HostFiles;
use crate::warning::{Warning, WarningCode};
use serde::{Deserialize, Serialize};
use std::fs;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemInfo {
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    /// `PREEMPT_RT`, `PREEMPT_DYNAMIC (mode)`, `PREEMPT`, `VOLUNTARY` or `NONE`.
    pub preemption_model: String,
    pub cmdline: String,
    /// CPUs isolated at boot (isolcpus=), from /sys/devices/system/cpu/isolated.
    pub isolcpus: Vec<usize>,
    /// CPUs with nohz_full, from /sys/devices/system/cpu/nohz_full.
    pub nohz_full: Vec<usize>,
    pub clocksource: String,
    pub cpu_model: String,
    pub online_cpus: Vec<usize>,
    /// Whether simultaneous multithreading is active.
    pub smt_active: Option<bool>,
    /// Frequency governor per online CPU (`unavailable` without cpufreq).
    pub governors: Vec<String>,
    /// sched_rt_runtime_us (-1: RT throttling off).
    pub sched_rt_runtime_us: Option<i64>,
    pub sched_rt_period_us: Option<i64>,
    /// Timer slack of latscope's own main thread, ns.
    pub timer_slack_ns: u64,
    /// The selected transparent-huge-page mode.
    pub transparent_hugepage: String,
    /// Hypervisor or container detected (`none` on bare metal).
    pub virtualization: String,
    /// /dev/cpu_dma_latency as found before the run, µs (2000000000 = no limit).
    pub cpu_dma_latency_us: Option<i32>,
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn cpu_list_file(path: &str) -> Vec<usize> {
    read_trim(path)
        .filter(|s| !s.is_empty() && s != "(null)")
        .and_then(|s| crate::units::parse_cpu_list_plain(&s).ok())
        .unwrap_or_default()
}

/// The preemption model from /sys/kernel/realtime, debugfs and the version string.
pub fn preemption_model(version: &str) -> String {
    if read_trim("/sys/kernel/realtime").as_deref() == Some("1") || version.contains("PREEMPT_RT") {
        return "PREEMPT_RT".into();
    }
    let dynamic_mode = read_trim("/sys/kernel/debug/sched/preempt").and_then(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('('))
            .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_string())
    });
    if version.contains("PREEMPT_DYNAMIC") {
        return match dynamic_mode {
            Some(mode) => format!("PREEMPT_DYNAMIC ({mode})"),
            None => "PREEMPT_DYNAMIC (mode unknown: debugfs not mounted)".into(),
        };
    }
    if version.contains("PREEMPT") {
        "PREEMPT".into()
    } else {
        "NONE or VOLUNTARY".into()
    }
}

fn virtualization() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let hv_flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    if let Some(vendor) = read_trim("/sys/class/dmi/id/sys_vendor") {
        let v = vendor.to_ascii_lowercase();
        for (needle, name) in [
            ("qemu", "kvm/qemu"),
            ("vmware", "vmware"),
            ("microsoft", "hyper-v"),
            ("xen", "xen"),
            ("amazon", "aws"),
            ("google", "gce"),
            ("innotek", "virtualbox"),
        ] {
            if v.contains(needle) {
                return name.into();
            }
        }
    }
    if read_trim("/sys/hypervisor/type").is_some_and(|t| !t.is_empty()) {
        return read_trim("/sys/hypervisor/type").unwrap_or_default();
    }
    // arm64 has no flags line and a QEMU guest no DMI: its device tree says it.
    if let Some((name, _)) = arm64::device_tree_hypervisor(&HostFiles::real()) {
        return name;
    }
    if hv_flag {
        "hypervisor (unidentified)".into()
    } else {
        "none".into()
    }
}

impl SystemInfo {
    pub fn collect() -> Self {
        let version = read_trim("/proc/sys/kernel/version").unwrap_or_default();
        let online = crate::sys::affinity::online_cpus();
        let governors = online
            .iter()
            .map(|c| {
                read_trim(&format!(
                    "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
                ))
                .unwrap_or_else(|| "unavailable".into())
            })
            .collect();
        let thp = read_trim("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|s| {
                s.split_whitespace()
                    .find(|w| w.starts_with('['))
                    .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
            })
            .unwrap_or_else(|| "unavailable".into());
        let rt = crate::sys::sched::rt_throttling();
        Self {
            hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_default(),
            kernel_release: read_trim("/proc/sys/kernel/osrelease").unwrap_or_default(),
            preemption_model: preemption_model(&version),
            kernel_version: version,
            cmdline: read_trim("/proc/cmdline").unwrap_or_default(),
            isolcpus: cpu_list_file("/sys/devices/system/cpu/isolated"),
            nohz_full: cpu_list_file("/sys/devices/system/cpu/nohz_full"),
            clocksource: read_trim(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .unwrap_or_default(),
            cpu_model: arm64::cpu_model(&HostFiles::real()),
            online_cpus: online,
            smt_active: read_trim("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
            governors,
            sched_rt_runtime_us: rt.map(|r| r.0),
            sched_rt_period_us: rt.map(|r| r.1),
            timer_slack_ns: crate::sys::sched::timer_slack_ns(),
            transparent_hugepage: thp,
            virtualization: virtualization(),
            cpu_dma_latency_us: crate::sys::dma_latency::current_us(),
        }
    }

    /// Warnings about the machine itself, independent of what is measured.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        if self.virtualization != "none" {
            w.push(Warning::new(WarningCode::Virtualized, format!(
                    "running under a hypervisor ({}): the host can stop this machine's CPUs at any time, so maxima include the host's scheduling",
                    self.virtualization
                )));
        }
        if let Some(g) = self
            .governors
            .iter()
            .find(|g| *g != "performance" && *g != "unavailable")
        {
            w.push(Warning::new(WarningCode::Governor, format!(
                    "CPU frequency governor is '{g}', not 'performance': frequency changes add latency (cpupower frequency-set -g performance)"
                )));
        }
        if self.sched_rt_runtime_us.is_some_and(|r| r >= 0) {
            w.push(Warning::new(WarningCode::RtThrottling, format!(
                    "RT throttling is active (sched_rt_runtime_us={} of {}): a real-time thread that runs without sleeping is stopped for the rest of each period",
                    self.sched_rt_runtime_us.unwrap_or_default(),
                    self.sched_rt_period_us.unwrap_or_default()
                )));
        }
        if self.transparent_hugepage == "always" {
            w.push(Warning::new(
                WarningCode::ThpAlways,
                "transparent huge pages are 'always': khugepaged compaction can stall tasks",
            ));
        }
        w
    }
}
