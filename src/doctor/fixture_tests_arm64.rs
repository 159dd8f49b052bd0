//! Tests only: every check on the trees recorded in the arm64 lab's guests (QEMU virt,
//! Cortex-A57, Debian 6.1 stock and PREEMPT_RT; tests/fixtures/doctor/arm64-virt-6.1*,
//! recorded by record-arm64.sh there), for what issue 38 found wrong on arm64: the
//! hypervisor, the CPU model, per-CPU IRQs, the console's name and the RT package.

use super::finding::{CheckId, Status};
use super::fixture_tests::{assert_status, assert_well_formed, checks, get, tree, variant};
use crate::sysinfo::arm64;

const TREES: [&str; 2] = ["arm64-virt-6.1", "arm64-virt-6.1-rt"];

#[test]
fn the_guests_are_judged_as_what_they_are() {
    use CheckId::*;
    for name in TREES {
        let f = checks(name, None);
        assert_well_formed(&f);
        let rt = if name.ends_with("-rt") {
            Status::Pass
        } else {
            Status::Warn
        };
        assert_status(
            &f,
            &[
                (KernelPreemptRt, rt),
                (PlatformHypervisor, Status::Warn),
                (PlatformClocksource, Status::Pass),
                (CpusIrqAffinity, Status::Pass),
                (KernelSerialConsole, Status::Warn),
            ],
        );
    }
}

/// Defect 2: no flags line, no DMI, no CPUID; the device tree says `linux,dummy-virt`.
#[test]
fn the_hypervisor_is_read_from_the_device_tree() {
    for name in TREES {
        let f = checks(name, None);
        let h = get(&f, CheckId::PlatformHypervisor);
        assert!(h.summary.contains("(QEMU virt machine)"), "{h:#?}");
        assert_eq!(
            h.evidence,
            vec!["/proc/device-tree/compatible: linux,dummy-virt".to_string()]
        );
        let hv = arm64::device_tree_hypervisor(&tree(name)).unwrap();
        assert_eq!(hv.0, "QEMU virt machine");
    }
    // A Xen guest's hypervisor node wins over the machine's compatible.
    let dir = super::fixture_tests::copy_tree("arm64-virt-6.1");
    let node = dir.path().join("proc/device-tree/hypervisor");
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(node.join("compatible"), b"xen,xen-4.17\0xen,xen\0").unwrap();
    let files = crate::sys::host_files::HostFiles::under(dir.path());
    assert_eq!(arm64::device_tree_hypervisor(&files).unwrap().0, "Xen");
    // A board: compatible names it, no hypervisor.
    let f = variant(
        "arm64-virt-6.1",
        None,
        &[(
            "/proc/device-tree/compatible",
            Some(b"raspberrypi,4-model-b\0brcm,bcm2711\0"),
        )],
    );
    assert_eq!(
        get(&f, CheckId::PlatformHypervisor).status,
        Status::Pass,
        "{f:#?}"
    );
}

/// Defect 3: `cpu_model` from CPU implementer/part (0x41/0xd07) and the device tree.
#[test]
fn the_cpu_model_is_built_from_the_part_codes() {
    for name in TREES {
        assert_eq!(
            arm64::cpu_model(&tree(name)),
            "Cortex-A57 (QEMU virt machine)",
            "{name}"
        );
        assert_eq!(arm64::CpuArch::of(&tree(name)), arm64::CpuArch::Arm64);
    }
    // A Raspberry Pi 4's device tree names the board.
    let dir = super::fixture_tests::copy_tree("arm64-virt-6.1");
    let cpuinfo = std::fs::read_to_string(dir.path().join("proc/cpuinfo"))
        .unwrap()
        .replace("0xd07", "0xd08");
    std::fs::write(dir.path().join("proc/cpuinfo"), cpuinfo).unwrap();
    std::fs::write(
        dir.path().join("proc/device-tree/model"),
        b"Raspberry Pi 4 Model B Rev 1.4\0",
    )
    .unwrap();
    let files = crate::sys::host_files::HostFiles::under(dir.path());
    assert_eq!(
        arm64::cpu_model(&files),
        "Cortex-A72 (Raspberry Pi 4 Model B Rev 1.4)"
    );
}

/// Defect 4: arm-pmu (IRQ 14, GIC PPI 23) refuses a new affinity as every per-CPU
/// interrupt does; it is named as per-CPU, not advised on, and not called kernel-managed.
#[test]
fn per_cpu_interrupts_are_not_advised_on() {
    for name in TREES {
        let f = checks(name, Some("1"));
        let irq = get(&f, CheckId::CpusIrqAffinity);
        assert_eq!(irq.status, Status::Pass, "{irq:#?}");
        assert!(irq.summary.contains("cannot be moved"), "{irq:#?}");
        let line = irq
            .evidence
            .iter()
            .find(|l| l.starts_with("per-CPU"))
            .unwrap();
        assert!(line.contains("14 arm-pmu"), "{line}");
        assert!(!line.contains("uart-pl011"), "{line}");
        assert!(!irq.summary.contains("kernel-managed"), "{irq:#?}");
    }
    // The UART moved onto the measured CPU: it is the one device IRQ named there.
    let f = variant(
        "arm64-virt-6.1",
        Some("1"),
        &[("/proc/irq/13/effective_affinity_list", Some(b"1\n"))],
    );
    let irq = get(&f, CheckId::CpusIrqAffinity);
    assert_eq!(irq.status, Status::Warn, "{irq:#?}");
    assert!(irq.summary.starts_with("1 device IRQ(s)"), "{irq:#?}");
    assert!(irq.evidence[0].contains("uart-pl011"), "{irq:#?}");
    assert!(irq.fix.as_deref().unwrap().contains("smp_affinity_list"));
}

/// Defect 5: the console fix names ttyAMA0 (console=ttyAMA0 on these guests' command
/// lines), never ttyS; the RT fix names Debian's arm64 RT package.
#[test]
fn fixes_name_the_arm64_console_and_rt_package() {
    let f = checks("arm64-virt-6.1", None);
    let console = get(&f, CheckId::KernelSerialConsole);
    let fix = console.fix.as_deref().unwrap();
    assert!(fix.contains("drop console=ttyAMA0 from"), "{fix}");
    assert!(!fix.contains("ttyS"), "{fix}");
    let rt = get(&f, CheckId::KernelPreemptRt).fix.clone().unwrap();
    assert!(rt.contains("linux-image-rt-arm64"), "{rt}");
    assert!(!rt.contains("amd64"), "{rt}");
    // Debian's arm64 6.1 is voluntary and not PREEMPT_DYNAMIC: preempt=full would be
    // ignored there, so the fix is another kernel.
    let mode = get(&f, CheckId::KernelPreemptMode);
    assert_eq!(mode.status, Status::Fail);
    let fix = mode.fix.as_deref().unwrap();
    assert!(fix.contains("preempt=full is ignored"), "{fix}");
    assert!(fix.contains("kernel.preempt_rt's fix"), "{fix}");
    // Without console= the device tree's stdout-path chose the port: named as such.
    let f = variant(
        "arm64-virt-6.1",
        None,
        &[("/proc/cmdline", Some(b"quiet panic=-1\n"))],
    );
    let fix = get(&f, CheckId::KernelSerialConsole).fix.clone().unwrap();
    assert!(fix.contains("move the console off ttyAMA0"), "{fix}");
    // Raspberry Pi OS's own kernel: no RT package to name.
    let f = variant(
        "arm64-virt-6.1",
        None,
        &[("/proc/sys/kernel/osrelease", Some(b"6.6.51+rpt-rpi-v8\n"))],
    );
    let rt = get(&f, CheckId::KernelPreemptRt).fix.clone().unwrap();
    assert!(rt.contains("Raspberry Pi OS ships none"), "{rt}");
}

/// `--isolate` skips what `per_cpu_irqs` finds in /proc/interrupts: on the guests the
/// arch timer (GIC PPI 27) and arm-pmu (PPI 23); the UART and RTC (SPIs) are moved.
#[test]
fn the_guests_per_cpu_interrupts_are_found_in_proc_interrupts() {
    for name in TREES {
        let text = tree(name).read("/proc/interrupts").unwrap();
        assert_eq!(crate::sys::irq::per_cpu_irqs(&text), vec![11, 14], "{name}");
    }
}
