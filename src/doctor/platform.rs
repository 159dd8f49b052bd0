//! Clock and platform checks: the clocksource and whether this machine runs under a
//! hypervisor (which can stop its CPUs for milliseconds the guest never sees).

use super::finding::{CheckId, Finding};
use super::Inputs;

pub fn clocksource(inputs: &Inputs) -> Finding {
    let id = CheckId::PlatformClocksource;
    let dir = "/sys/devices/system/clocksource/clocksource0";
    let Some(current) = inputs
        .files
        .read_trim(&format!("{dir}/current_clocksource"))
    else {
        return Finding::skip(id, format!("{dir}/current_clocksource missing"));
    };
    let available = inputs
        .files
        .read_trim(&format!("{dir}/available_clocksource"))
        .unwrap_or_default();
    let line = format!("{dir}: {current} (available: {available})");
    // Read in user space through the vDSO: the TSC, arm64's counter, the paravirtual
    // clocks of hypervisors (kvm-clock, Hyper-V's TSC page, Xen's pvclock).
    let fast = [
        "tsc",
        "arch_sys_counter",
        "riscv_clocksource",
        "kvm-clock",
        "hyperv_clocksource_tsc_page",
        "xen",
    ];
    if fast.contains(&current.as_str()) {
        return Finding::pass(
            id,
            format!("clocksource {current}: read in user space without a system call"),
        )
        .with(line);
    }
    let better = available
        .split_whitespace()
        .find(|c| fast.contains(c))
        .unwrap_or("tsc");
    Finding::warn(
        id,
        format!("clocksource {current}: every clock read is slow (a system call and a device read), so every timestamp costs microseconds"),
        format!("echo {better} > {dir}/current_clocksource (clocksource={better} at boot; if the kernel marked the TSC unstable, see dmesg)"),
    )
    .with(line)
}

/// The hypervisor's name and the evidence, or `None` on bare metal.
fn hypervisor(inputs: &Inputs) -> Option<(String, Vec<String>)> {
    let mut evidence = Vec::new();
    let cpuinfo = inputs.files.read("/proc/cpuinfo").unwrap_or_default();
    let flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    if flag {
        evidence.push("/proc/cpuinfo flags: hypervisor".to_string());
    }
    let vendor = inputs.files.read_trim("/sys/class/dmi/id/sys_vendor");
    let hv_type = inputs
        .files
        .read_trim("/sys/hypervisor/type")
        .filter(|t| !t.is_empty());
    let mut name = None;
    if let Some(v) = &vendor {
        evidence.push(format!("/sys/class/dmi/id/sys_vendor: {v}"));
        let lower = v.to_ascii_lowercase();
        name = [
            ("qemu", "KVM/QEMU"),
            ("vmware", "VMware"),
            ("microsoft", "Hyper-V"),
            ("xen", "Xen"),
            ("amazon", "AWS Nitro"),
            ("google", "Google Compute Engine"),
            ("innotek", "VirtualBox"),
        ]
        .into_iter()
        .find(|(needle, _)| lower.contains(needle))
        .map(|(_, n)| n.to_string());
    }
    if let Some(t) = &hv_type {
        evidence.push(format!("/sys/hypervisor/type: {t}"));
        name = name.or(Some(t.clone()));
    }
    if !flag && name.is_none() {
        return None;
    }
    Some((name.unwrap_or_else(|| "unidentified".into()), evidence))
}

pub fn hypervisor_check(inputs: &Inputs) -> Finding {
    let id = CheckId::PlatformHypervisor;
    match hypervisor(inputs) {
        None => Finding::pass(
            id,
            "bare metal (no hypervisor flag, DMI vendor or /sys/hypervisor)",
        ),
        Some((name, evidence)) => {
            let mut f = Finding::warn(
                id,
                format!("runs under a hypervisor ({name}): the host can stop this machine's CPUs at any time, for as long as it likes; the guest cannot see or prevent it"),
                "measure on bare metal for real-time figures, or give the guest dedicated, isolated host CPUs (vCPU pinning, no overcommit, halt polling)",
            );
            f.evidence = evidence;
            f
        }
    }
}
