//! Clock and platform checks: the clocksource and its watchdog (`tsc=reliable`), whether
//! this machine runs under a hypervisor (which can stop its CPUs for milliseconds the
//! guest never sees), and the CPU vulnerability mitigations (reported, not judged).

use super::finding::{CheckId, Finding};
use super::kernel::KernelConfig;
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

/// What one source says about a hypervisor: its name if it gives one, and the evidence.
struct Sighting {
    name: Option<String>,
    evidence: String,
}

/// The `hypervisor` CPU flag (x86: CPUID.1:ECX bit 31): present, but nameless.
fn cpuinfo_flag(inputs: &Inputs) -> Option<Sighting> {
    let cpuinfo = inputs.files.read("/proc/cpuinfo").unwrap_or_default();
    let flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    flag.then(|| Sighting {
        name: None,
        evidence: "/proc/cpuinfo flags: hypervisor".into(),
    })
}

/// The hypervisor's CPUID signature (leaf 0x40000000), named.
fn cpuid_signature(inputs: &Inputs) -> Option<Sighting> {
    let signature = inputs.files.hypervisor_signature()?;
    let name = [
        ("KVMKVMKVM", "KVM"),
        ("Microsoft Hv", "Hyper-V"),
        ("VMwareVMware", "VMware"),
        ("XenVMMXenVMM", "Xen"),
        ("TCGTCGTCGTCG", "QEMU (TCG, emulated)"),
        ("VBoxVBoxVBox", "VirtualBox"),
        ("bhyve bhyve", "bhyve"),
        ("ACRNACRNACRN", "ACRN"),
        ("Jailhouse", "Jailhouse"),
    ]
    .into_iter()
    .find(|(sig, _)| signature.trim() == sig.trim())
    .map_or_else(|| signature.clone(), |(_, n)| n.to_string());
    Some(Sighting {
        name: Some(name),
        evidence: format!("CPUID 0x40000000 signature: {signature}"),
    })
}

/// What the kernel said at boot: `Hypervisor detected: KVM` (x86).
fn kernel_log(inputs: &Inputs) -> Option<Sighting> {
    let log = inputs.files.kernel_log().ok()?;
    let line = log.lines().find(|l| l.contains("Hypervisor detected: "))?;
    let name = line
        .split("Hypervisor detected: ")
        .nth(1)?
        .trim()
        .to_string();
    Some(Sighting {
        name: Some(name),
        evidence: format!("kernel log: {}", line.trim()),
    })
}

/// The DMI system vendor of a known hypervisor or cloud.
fn dmi_vendor(inputs: &Inputs) -> Option<Sighting> {
    let vendor = inputs.files.read_trim("/sys/class/dmi/id/sys_vendor")?;
    let lower = vendor.to_ascii_lowercase();
    let name = [
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
    // Any vendor is evidence worth printing; only a known one says "hypervisor".
    Some(Sighting {
        evidence: format!("/sys/class/dmi/id/sys_vendor: {vendor}"),
        name,
    })
}

/// /sys/hypervisor/type (Xen, and s390's z/VM).
fn sys_hypervisor(inputs: &Inputs) -> Option<Sighting> {
    let t = inputs
        .files
        .read_trim("/sys/hypervisor/type")
        .filter(|t| !t.is_empty())?;
    Some(Sighting {
        name: Some(t.clone()),
        evidence: format!("/sys/hypervisor/type: {t}"),
    })
}

/// The device tree (arm64 and other boards without CPUID or, in QEMU, DMI): QEMU's
/// virt machine, a `hypervisor` node.
fn device_tree(inputs: &Inputs) -> Option<Sighting> {
    let (name, evidence) = crate::sysinfo::arm64::device_tree_hypervisor(&inputs.files)?;
    Some(Sighting {
        name: Some(name),
        evidence,
    })
}

/// The hypervisor's name and the evidence, or `None` on bare metal. Each source is one
/// function above; the first name given wins (CPUID and the kernel's own word first).
fn hypervisor(inputs: &Inputs) -> Option<(String, Vec<String>)> {
    let sources: [fn(&Inputs) -> Option<Sighting>; 6] = [
        cpuid_signature,
        kernel_log,
        sys_hypervisor,
        dmi_vendor,
        device_tree,
        cpuinfo_flag,
    ];
    let sightings: Vec<Sighting> = sources.iter().filter_map(|f| f(inputs)).collect();
    let name = sightings.iter().find_map(|s| s.name.clone());
    let flagged = sightings
        .iter()
        .any(|s| s.evidence.ends_with("flags: hypervisor"));
    if name.is_none() && !flagged {
        return None;
    }
    let evidence = sightings.into_iter().map(|s| s.evidence).collect();
    Some((name.unwrap_or_else(|| "unidentified".into()), evidence))
}

pub fn hypervisor_check(inputs: &Inputs) -> Finding {
    let id = CheckId::PlatformHypervisor;
    match hypervisor(inputs) {
        None => Finding::pass(
            id,
            "bare metal (no hypervisor flag, CPUID signature, kernel log line, DMI vendor, /sys/hypervisor or device tree that says so)",
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

/// The CPU flags of /proc/cpuinfo (the first CPU's).
fn cpu_flags(inputs: &Inputs) -> Vec<String> {
    inputs
        .files
        .read("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

pub fn tsc_reliable(inputs: &Inputs, config: Option<&KernelConfig>) -> Finding {
    let id = CheckId::PlatformTscReliable;
    let current = inputs
        .files
        .read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .unwrap_or_default();
    if current != "tsc" {
        return Finding::pass(
            id,
            format!(
                "clocksource {}: the TSC's clocksource watchdog does not apply",
                if current.is_empty() {
                    "unknown"
                } else {
                    &current
                }
            ),
        );
    }
    let tsc = inputs.cmdline_value("tsc");
    let flags = cpu_flags(inputs);
    let has = |f: &str| flags.iter().any(|x| x == f);
    let line = format!(
        "/proc/cmdline tsc=: {}; /proc/cpuinfo flags: {}",
        tsc.as_deref().unwrap_or("absent"),
        ["constant_tsc", "nonstop_tsc", "tsc_reliable"]
            .iter()
            .map(|f| format!("{f} {}", if has(f) { "yes" } else { "no" }))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if matches!(tsc.as_deref(), Some("reliable") | Some("nowatchdog")) {
        return Finding::pass(id, "tsc=reliable: no clocksource watchdog checks the TSC")
            .with(line);
    }
    if has("tsc_reliable") {
        return Finding::pass(
            id,
            "the kernel trusts the TSC (tsc_reliable): no clocksource watchdog checks it",
        )
        .with(line);
    }
    if config.is_some_and(|c| !c.is_set("CLOCKSOURCE_WATCHDOG")) {
        return Finding::pass(id, "kernel built without the clocksource watchdog").with(line);
    }
    if !(has("constant_tsc") && has("nonstop_tsc")) {
        return Finding::pass(id, "the TSC is not invariant here (no constant_tsc and nonstop_tsc): the clocksource watchdog is needed, keep it").with(line);
    }
    Finding::warn(
        id,
        "the clocksource watchdog checks the TSC against a slower clock every 0.5 s, from a timer that visits every CPU in turn",
        "tsc=reliable on the kernel command line (safe here: the TSC is invariant, constant_tsc and nonstop_tsc)",
    )
    .with(line)
}

pub fn mitigations(inputs: &Inputs) -> Finding {
    let id = CheckId::PlatformMitigations;
    let dir = "/sys/devices/system/cpu/vulnerabilities";
    let names = inputs.files.list(dir);
    if names.is_empty() {
        return Finding::skip(
            id,
            format!("{dir} missing (a kernel before 4.15, or not x86/arm64)"),
        );
    }
    let (mut mitigated, mut vulnerable, mut unaffected) = (Vec::new(), Vec::new(), 0);
    let mut evidence = Vec::new();
    for name in &names {
        let state = inputs
            .files
            .read_trim(&format!("{dir}/{name}"))
            .unwrap_or_default();
        if state.starts_with("Not affected") {
            unaffected += 1;
            continue;
        }
        if state.starts_with("Vulnerable") {
            vulnerable.push(name.clone());
        } else {
            mitigated.push(name.clone());
        }
        evidence.push(format!("{dir}/{name}: {state}"));
    }
    let cmdline = inputs.cmdline_value("mitigations");
    evidence.push(format!(
        "/proc/cmdline mitigations=: {}",
        cmdline.as_deref().unwrap_or("absent (auto)")
    ));
    let part = |what: &str, v: &[String]| match v.len() {
        0 => String::new(),
        n => format!("{n} {what} ({}), ", v.join(", ")),
    };
    let mut f = Finding::info(
        id,
        format!(
            "reported, not judged: {}{}{unaffected} not affected; mitigations cost time on system calls and context switches, turning them off is a security decision (mitigations=off)",
            part("mitigated", &mitigated),
            part("vulnerable", &vulnerable)
        ),
    );
    f.evidence = evidence;
    f
}
