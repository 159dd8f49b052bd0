//! Tests only: every check on the fixture trees of tests/fixtures/doctor/ (this VM
//! recorded; an RT 6.12 kernel without /sys/kernel/realtime; a 4.19-rt kernel with the
//! old config name; a bare-metal box with cgroup v2 and every knob at its default).

use super::finding::{CheckId, Finding, Status};
use super::setup;
use super::{read_checks, Inputs};
use crate::sys::host_files::HostFiles;

pub(super) fn tree(name: &str) -> HostFiles {
    HostFiles::under(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/doctor")
            .join(name),
    )
}

pub(super) fn checks(name: &str, cpus: Option<&str>) -> Vec<Finding> {
    read_checks(&Inputs::new(tree(name), cpus, 95).unwrap())
}

/// A writable copy of a fixture tree (tests never change tests/fixtures).
pub(super) fn copy_tree(name: &str) -> tempfile::TempDir {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().map(Result::unwrap) {
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }
    let d = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor");
    copy(&src.join(name), d.path());
    d
}

/// The checks on a copy of tree `name` with `edits` (a path and its new text, or `None`:
/// removed), judging `cpus`.
pub(super) fn variant(
    name: &str,
    cpus: Option<&str>,
    edits: &[(&str, Option<&[u8]>)],
) -> Vec<Finding> {
    let dir = copy_tree(name);
    for (path, text) in edits {
        let target = dir.path().join(path.trim_start_matches('/'));
        match text {
            Some(bytes) => {
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::write(&target, bytes).unwrap();
            }
            None => std::fs::remove_file(&target).unwrap(),
        }
    }
    read_checks(&Inputs::new(HostFiles::under(dir.path()), cpus, 95).unwrap())
}

pub(super) fn get(findings: &[Finding], id: CheckId) -> &Finding {
    findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{id} missing"))
}

pub(super) fn assert_status(findings: &[Finding], expected: &[(CheckId, Status)]) {
    for (id, status) in expected {
        let f = get(findings, *id);
        assert_eq!(f.status, *status, "{id}: {f:#?}");
    }
}

/// What every tree's findings share: every check once, a fix for each WARN/FAIL, a
/// reason for each SKIP.
pub(super) fn assert_well_formed(findings: &[Finding]) {
    for id in CheckId::ALL.iter().filter(|id| id.group() != "setup") {
        assert_eq!(findings.iter().filter(|f| f.id == *id).count(), 1, "{id}");
    }
    for f in findings {
        if f.status >= Status::Warn {
            assert!(
                f.fix.as_deref().is_some_and(|x| !x.is_empty()),
                "{} has no fix",
                f.id
            );
        }
        assert!(
            !f.summary.is_empty(),
            "{}: no summary (a SKIP must say why)",
            f.id
        );
    }
}

#[test]
fn this_vm_names_what_is_true_here() {
    let f = checks("this-vm", None);
    assert_well_formed(&f);
    use CheckId::*;
    assert_status(
        &f,
        &[
            (KernelPreemptRt, Status::Warn),
            (KernelPreemptMode, Status::Fail),
            (KernelSerialConsole, Status::Warn),
            (CpusIsolation, Status::Warn),
            (CpusGovernor, Status::Skip),
            (CpusCstates, Status::Pass),
            (SchedRtThrottling, Status::Warn),
            (PlatformHypervisor, Status::Warn),
            (PlatformClocksource, Status::Pass),
            (PermSchedFifo, Status::Skip),
            (PrioIrqThreads, Status::Pass),
            (KernelHrtimers, Status::Pass),
            (KernelNohz, Status::Pass),
            (KernelSkewTick, Status::Warn),
            (KernelWatchdog, Status::Warn),
            (CpusIrqAffinity, Status::Warn),
            (CpusWorkqueues, Status::Warn),
            (CpusEnergyBias, Status::Skip),
            (MemoryStatInterval, Status::Warn),
            (PlatformTscReliable, Status::Warn),
            (PlatformMitigations, Status::Info),
        ],
    );
    // PREEMPT_DYNAMIC without debugfs: the mode is the config's default.
    assert!(get(&f, KernelPreemptMode).evidence[0].contains("the default of PREEMPT_DYNAMIC"));
    assert_eq!(
        super::report::Verdict::of(&f).exit_code(),
        crate::error::EXIT_NOT_READY
    );
    // No cpufreq: the SKIP says why.
    assert!(get(&f, CpusGovernor).summary.contains("cpufreq missing"));
}

#[test]
fn rt_kernel_without_sys_kernel_realtime_is_rt() {
    let f = checks("rt-6.12-no-realtime-file", None);
    assert_well_formed(&f);
    let rt = get(&f, CheckId::KernelPreemptRt);
    assert_eq!(rt.status, Status::Pass);
    assert!(
        rt.evidence
            .iter()
            .any(|e| e.contains("PREEMPT_RT Debian 6.12")),
        "{rt:?}"
    );
    assert!(
        rt.evidence
            .iter()
            .any(|e| e.ends_with("CONFIG_PREEMPT_RT=y") && e.starts_with("/boot/config-")),
        "{rt:?}"
    );
    use CheckId::*;
    assert_status(
        &f,
        &[
            (KernelPreemptMode, Status::Pass),
            (CpusIsolation, Status::Pass),
            (CpusIrqAffinity, Status::Pass),
            (PrioKtimers, Status::Pass),
            (PrioRcuc, Status::Pass),
            (PrioKsoftirqd, Status::Pass),
            (PermRtprio, Status::Fail),
            (PermMemlock, Status::Warn),
        ],
    );
    // The isolated CPUs are the default ones; the raised IRQ thread is named.
    let irq = get(&f, PrioIrqThreads);
    assert_eq!(irq.status, Status::Warn);
    assert!(
        irq.evidence
            .iter()
            .any(|e| e.contains("irq/125-eth0") && e.contains("FIFO 98")),
        "{irq:?}"
    );
    assert!(
        !irq.evidence.iter().any(|e| e.contains("irq/9-acpi")),
        "{irq:?}"
    );
    assert!(get(&f, PermRtprio)
        .fix
        .as_deref()
        .unwrap()
        .contains("rtprio"));
}

#[test]
fn renamed_config_symbol_still_means_rt() {
    let f = checks("rt-4.19-renamed-config", None);
    assert_well_formed(&f);
    let rt = get(&f, CheckId::KernelPreemptRt);
    assert_eq!(rt.status, Status::Pass);
    assert!(
        rt.evidence
            .iter()
            .any(|e| e.ends_with("CONFIG_PREEMPT_RT_FULL=y")),
        "{rt:?}"
    );
    assert!(
        rt.evidence.iter().any(|e| e.contains("PREEMPT RT")),
        "{rt:?}"
    );
}

#[test]
fn bare_metal_with_cgroup_v2_and_defaults() {
    let f = checks("bare-metal-cgroup-v2", Some("3"));
    assert_well_formed(&f);
    use CheckId::*;
    assert_status(
        &f,
        &[
            (KernelPreemptRt, Status::Warn),
            (KernelPreemptMode, Status::Pass),
            (KernelDebugOptions, Status::Fail),
            (KernelTracers, Status::Warn),
            (CpusIsolation, Status::Pass),
            (CpusIrqAffinity, Status::Warn),
            (CpusIrqbalance, Status::Warn),
            (CpusCstates, Status::Warn),
            (CpusGovernor, Status::Warn),
            (CpusSmt, Status::Warn),
            (MemoryThp, Status::Warn),
            (MemoryNumaBalancing, Status::Warn),
            (MemoryKsm, Status::Warn),
            (MemorySwappiness, Status::Warn),
            (SchedTimerMigration, Status::Warn),
            (SchedRtThrottling, Status::Warn),
            (SchedNmiWatchdog, Status::Warn),
            (PlatformClocksource, Status::Warn),
            (PlatformHypervisor, Status::Pass),
        ],
    );
    // debugfs wins over the config's VOLUNTARY default.
    assert!(get(&f, KernelPreemptMode).summary.contains("full"));
    assert!(get(&f, CpusIsolation)
        .evidence
        .iter()
        .any(|e| e == "cgroup v2 isolated partitions: 3"));
    let c = get(&f, CpusCstates);
    assert!(
        c.summary.contains("C6 (133 µs)") && !c.summary.contains("C1E"),
        "{c:?}"
    );
    assert!(get(&f, PlatformClocksource)
        .fix
        .as_deref()
        .unwrap()
        .starts_with("echo tsc >"));
    assert!(get(&f, KernelDebugOptions)
        .summary
        .contains("CONFIG_LOCKDEP"));
    assert!(get(&f, PermSchedFifo)
        .evidence
        .iter()
        .any(|e| e.contains("cgroup v2 /user.slice")));
}

#[test]
fn a_planned_sched_other_run_is_judged() {
    let inputs = Inputs::new(tree("this-vm"), None, 95).unwrap();
    let words: Vec<String> = "timer --cpus 3 --policy other"
        .split(' ')
        .map(String::from)
        .collect();
    let plan = setup::parse(&words).unwrap().unwrap();
    let f = setup::check(&inputs, &plan, true, false);
    let policy = get(&f, CheckId::SetupPolicy);
    assert_eq!(policy.status, Status::Warn);
    assert!(policy.summary.contains("fairness"), "{policy:?}");
    // CPU 3 is not online on this 2-CPU VM: named, with the online ones.
    let cpus = get(&f, CheckId::SetupCpus);
    assert_eq!(cpus.status, Status::Fail, "{cpus:?}");
    assert!(cpus.fix.as_deref().unwrap().contains("0-1"), "{cpus:?}");
    assert_eq!(get(&f, CheckId::SetupPriority).status, Status::Skip);
    let fifo: Vec<String> = "timer --cpus 1 --policy fifo -p 40 --dma-latency 0"
        .split(' ')
        .map(String::from)
        .collect();
    let f = setup::check(&inputs, &setup::parse(&fifo).unwrap().unwrap(), true, true);
    assert_eq!(get(&f, CheckId::SetupPolicy).status, Status::Pass);
    assert_eq!(get(&f, CheckId::SetupPriority).status, Status::Warn); // irq/24 at FIFO 50
    assert_eq!(get(&f, CheckId::SetupCpus).status, Status::Pass);
    assert_eq!(get(&f, CheckId::SetupDmaLatency).status, Status::Pass);
    assert!(setup::parse(&["report".to_string()]).is_err());
}

#[test]
fn ab_summary_gives_the_verdict_and_its_test() {
    use super::paired::{Sequential, Stopped};
    let pairs: Vec<[u64; 2]> = (0..8)
        .map(|i| [31_000 + i * 100, 62_000 - i * 50])
        .collect();
    let seq = Sequential::new(20);
    let t = seq.look(&pairs).expect("8 of 8 decides");
    assert_eq!(
        super::ab::summary("cpu_dma_latency 0", &pairs, &t),
        // Medians 61.8 and 31.4 µs; differences −31.00 to −29.95 µs: with 8 pairs the
        // interval is the smallest to the largest (1 − 2/256 = 99 %).
        "cpu_dma_latency 0: p99 62 → 31 µs (−49 %): better (sign test: lower in 8 of 8 pairs, p = 0.008, decides at ≤ 0.031; median difference −30.5 µs, 99 % interval −31.0 … −29.9 µs)"
    );
    // A split like the ("+59 %, lower in 4" of 6) reads as within noise.
    let noisy =
        [[80, 50], [40, 60], [90, 50], [45, 70], [30, 55], [95, 60]].map(|p| p.map(|v| v * 1000));
    let t = Sequential::new(6).test(&noisy, Stopped::Cap);
    let line = super::ab::summary("cpu_dma_latency 0", &noisy, &t);
    assert!(
        line.starts_with("cpu_dma_latency 0: p99 58 → 62 µs (+9 %): within noise (sign test: lower in 3 of 6 pairs, p = 1.000"),
        "{line}"
    );
    let one = Sequential::new(1).test(&noisy[..1], Stopped::Cap);
    assert!(
        super::ab::summary("x", &noisy[..1], &one).ends_with("; 1 pair cannot decide: 6 at least)"),
        "{one:?}"
    );
}

#[test]
fn html_page_has_every_finding_escaped() {
    let findings = checks("bare-metal-cgroup-v2", Some("3"));
    let report = super::report::DoctorReport {
        schema: super::report::SCHEMA.into(),
        verdict: super::report::Verdict::of(&findings),
        counts: super::report::DoctorReport::counts_of(&findings),
        hostname: "<host>".into(),
        kernel_release: "6.8.0-debug".into(),
        cpus: vec![3],
        cpus_why: "--cpus".into(),
        priority: 95,
        measured: false,
        planned_run: None,
        notes: vec![],
        findings,
    };
    let html = String::from_utf8(super::html::render(&report)).unwrap();
    assert!(
        html.contains("<h1>latscope doctor: NOT READY</h1>"),
        "{html}"
    );
    assert!(html.contains("&lt;host&gt;") && !html.contains("<host>"));
    for id in CheckId::ALL.iter().filter(|id| id.group() != "setup") {
        assert!(html.contains(&format!("<code>{id}</code>")), "{id}");
    }
    // A fix with `>` in it (echo tsc > …) is escaped.
    assert!(
        html.contains("echo tsc &gt; /sys/devices/system/clocksource"),
        "{html}"
    );
}

/// The SMT A/B (never run here: this VM has no SMT) as planned on the bare-metal tree:
/// CPU 3's sibling 1 loaded, through a timer command line that parses.
#[test]
fn the_smt_ab_loads_the_sibling_on_a_tree_with_smt() {
    use clap::Parser;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/doctor/bare-metal-cgroup-v2");
    let cli = crate::cli::Cli::try_parse_from([
        "latscope",
        "doctor",
        "--cpus",
        "3",
        "--root",
        root.to_str().unwrap(),
    ])
    .unwrap();
    let crate::cli::Command::Doctor(args) = cli.command else {
        panic!("not doctor");
    };
    let inputs = Inputs::new(tree("bare-metal-cgroup-v2"), Some("3"), 95).unwrap();
    let abs = super::planned_abs(&args, &inputs, &[], &mut Vec::new());
    let smt = abs
        .iter()
        .find(|ab| ab.finding == CheckId::CpusSmt)
        .expect("an SMT A/B");
    assert_eq!(smt.label, "SMT sibling 1 loaded");
    assert_eq!(smt.a, ["--load", "cpu:100%,cpus=1"]);
    assert!(smt.b.is_empty());
    let mut argv = vec!["latscope", "timer", "--cpus", "3"];
    argv.extend(smt.a.iter().map(String::as_str));
    assert!(crate::cli::Cli::try_parse_from(argv).is_ok());
    // No sibling on this VM's recorded tree: no SMT A/B.
    let vm = Inputs::new(tree("this-vm"), Some("1"), 95).unwrap();
    assert!(super::planned_abs(&args, &vm, &[], &mut Vec::new())
        .iter()
        .all(|ab| ab.finding != CheckId::CpusSmt));
}

/// The issue: `--try isolate` measured worse here (an isolated vCPU halts to the host),
/// yet the isolation WARN still recommended isolating. On this VM's tree the A/B is
/// planned with the reason (a hypervisor was found; none on bare metal), a worse verdict
/// refutes the finding and the WARN becomes a PASS that keeps the usual fix as evidence;
/// `--try swappiness` without swap is a note, not an A/B.
#[test]
fn try_isolate_measured_worse_on_this_vm_is_not_recommended() {
    use super::paired::AbVerdict;
    use clap::Parser;
    let doctor = |root: &str, cpus: &str, fixes: &[&str]| {
        let mut argv = vec!["latscope", "doctor", "--cpus", cpus, "--root", root];
        for fix in fixes {
            argv.extend(["--try", fix]);
        }
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Doctor(args) => args,
            _ => panic!("not doctor"),
        }
    };
    let mut findings = checks("this-vm", Some("1"));
    let vm = Inputs::new(tree("this-vm"), Some("1"), 95).unwrap();
    let mut notes = Vec::new();
    let args = doctor("this-vm", "1", &["isolate", "swappiness"]);
    let abs = super::planned_abs(&args, &vm, &findings, &mut notes);
    let iso = abs
        .iter()
        .find(|ab| ab.finding == CheckId::CpusIsolation)
        .expect("an isolate A/B");
    assert_eq!(
        (iso.label.as_str(), iso.a.as_slice()),
        ("--isolate 1", &["--isolate".to_string(), "1".into()][..])
    );
    assert!(iso
        .why_worse
        .as_deref()
        .unwrap()
        .contains("halts to the host"));
    assert!(abs.iter().all(|ab| ab.finding != CheckId::MemorySwappiness));
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("--try swappiness: no swap in use")),
        "{notes:?}"
    );
    assert_eq!(get(&findings, CheckId::CpusIsolation).status, Status::Warn);
    let worse = super::finding::Measured::observed("--isolate 1: p99 42 → 70 µs (+68 %): worse")
        .bearing(Some(iso.bearing(AbVerdict::Worse)));
    super::ab::attach(&mut findings, CheckId::CpusIsolation, worse);
    let tried: Vec<(CheckId, String)> = abs.iter().map(|a| (a.finding, a.fix.clone())).collect();
    super::judge::apply(&mut findings, &tried);
    let f = get(&findings, CheckId::CpusIsolation);
    assert_eq!(f.status, Status::Pass, "{f:?}");
    assert_eq!(f.basis, super::finding::Basis::Measured);
    assert!(
        f.summary.contains("but its fix measured no gain here"),
        "{f:?}"
    );
    assert!(f.fix.is_none(), "{f:?}");
    assert!(f
        .evidence
        .iter()
        .any(|e| e.starts_with("the usual fix, not a gain as measured here: ")));
    // Bare metal (no hypervisor): the same A/B says no reason of a VM's.
    let bare = Inputs::new(tree("bare-metal-cgroup-v2"), Some("3"), 95).unwrap();
    let args = doctor("bare-metal-cgroup-v2", "3", &["isolate"]);
    let read = checks("bare-metal-cgroup-v2", Some("3"));
    let abs = super::planned_abs(&args, &bare, &read, &mut Vec::new());
    assert!(abs
        .iter()
        .any(|ab| ab.finding == CheckId::CpusIsolation && ab.why_worse.is_none()));
}

/// The tick check of the observation window (never seen stop here: this VM has no
/// nohz_full) on this VM's recorded /proc/interrupts, its CPU 1 local timer count
/// advanced as a stopped tick (3 in 3.2 s: nohz_full's residual 1 Hz) and a running one
/// (800: 250 Hz), with the CPU in nohz_full as the RT 6.12 tree has it (2-3).
#[test]
fn the_tick_check_knows_nohz_full() {
    use super::observe::isolation_line;
    let before = tree("this-vm").read("/proc/interrupts").unwrap();
    let loc = |add: u64| {
        before
            .lines()
            .map(|l| match l.trim_start().strip_prefix("LOC:") {
                Some(rest) => {
                    let v: Vec<&str> = rest.split_whitespace().collect();
                    let cpu1: u64 = v[1].parse().unwrap();
                    format!("LOC: {} {} {}\n", v[0], cpu1 + add, v[2..].join(" "))
                }
                None => format!("{l}\n"),
            })
            .collect::<String>()
    };
    let nohz = Inputs::new(tree("rt-6.12-no-realtime-file"), Some("2"), 95)
        .unwrap()
        .cpu_list("/sys/devices/system/cpu/nohz_full");
    assert_eq!(nohz, [2, 3]);
    let stopped = isolation_line(&before, &loc(3), 1, 3.2, nohz.contains(&2));
    assert!(
        stopped.contains("3 local timer interrupts (1/s: nohz_full stopped the tick)"),
        "{stopped}"
    );
    let running = isolation_line(&before, &loc(800), 1, 3.2, true);
    assert!(
        running.contains(
            "800 local timer interrupts (250/s: the tick runs although the CPU is nohz_full"
        ),
        "{running}"
    );
    let plain = isolation_line(&before, &loc(800), 1, 3.2, false);
    assert!(
        plain.contains("(250/s: the tick runs (not nohz_full))"),
        "{plain}"
    );
    assert!(plain.contains(": 0 device IRQs"), "{plain}");
}

/// The wrong verdicts of issue 36 on this VM's recorded tree: the hypervisor named (CPUID
/// `KVMKVMKVM`, the kernel's "Hypervisor detected: KVM"), the console's printk level read,
/// the kernel-managed IRQ told apart, no nohz_full= advised on a kernel without it.
#[test]
fn this_vm_names_kvm_the_printk_level_and_managed_irqs() {
    let f = checks("this-vm", None);
    let hv = get(&f, CheckId::PlatformHypervisor);
    assert!(hv.summary.contains("(KVM)"), "{hv:?}");
    assert!(hv
        .evidence
        .iter()
        .any(|e| e == "CPUID 0x40000000 signature: KVMKVMKVM"));
    assert!(hv
        .evidence
        .iter()
        .any(|e| e == "kernel log: Hypervisor detected: KVM"));
    let console = get(&f, CheckId::KernelSerialConsole);
    assert!(
        console
            .summary
            .contains("errors and worse (console_loglevel 4)"),
        "{console:?}"
    );
    let irq = get(&f, CheckId::CpusIrqAffinity);
    assert!(
        irq.summary.contains("(1 kernel-managed, 9 movable)"),
        "{irq:?}"
    );
    assert!(irq
        .fix
        .as_deref()
        .unwrap()
        .contains("isolcpus=managed_irq,1 at boot"));
    assert!(irq
        .evidence
        .iter()
        .any(|e| e.starts_with("/proc/irq/36/ (virtio1-req.0): CPU 1, kernel-managed")));
    let iso = get(&f, CheckId::CpusIsolation);
    let fix = iso.fix.as_deref().unwrap();
    assert!(
        !fix.contains("nohz_full=1") && fix.contains("built without NO_HZ_FULL"),
        "{fix}"
    );
    // A kernel with NO_HZ_FULL (4.19-rt's config) is advised nohz_full=.
    let rt = checks("rt-4.19-renamed-config", None);
    assert!(get(&rt, CheckId::CpusIsolation)
        .fix
        .as_deref()
        .unwrap()
        .contains(" nohz_full=1 "));
}

/// Without the CPUID signature the kernel log names it; with neither, the CPU flag
/// alone says "unidentified".
#[test]
fn the_hypervisor_is_named_from_each_source() {
    let f = variant("this-vm", None, &[("/.recorded/cpuid-0x40000000", None)]);
    let hv = get(&f, CheckId::PlatformHypervisor);
    assert!(
        hv.summary.contains("(KVM)") && hv.evidence.len() == 2,
        "{hv:?}"
    );
    let f = variant(
        "this-vm",
        None,
        &[
            ("/.recorded/cpuid-0x40000000", None),
            ("/dev/kmsg", Some(b"")),
        ],
    );
    assert!(get(&f, CheckId::PlatformHypervisor)
        .summary
        .contains("(unidentified)"));
    let f = variant(
        "this-vm",
        None,
        &[("/.recorded/cpuid-0x40000000", Some(b"Microsoft Hv\n"))],
    );
    assert!(get(&f, CheckId::PlatformHypervisor)
        .summary
        .contains("(Hyper-V)"));
}

/// The issue: after `dmesg -n 1` (its own fix) the console check still warned.
#[test]
fn the_console_check_reads_the_printk_level() {
    let after_fix = variant(
        "this-vm",
        None,
        &[("/proc/sys/kernel/printk", Some(b"1\t4\t1\t7\n"))],
    );
    let c = get(&after_fix, CheckId::KernelSerialConsole);
    assert_eq!(c.status, Status::Pass, "{c:?}");
    assert!(c.summary.contains("only emergencies reach it"), "{c:?}");
    // Unreadable printk: the boot's `quiet` (level 4: errors and worse, not warnings).
    let boot = variant("this-vm", None, &[("/proc/sys/kernel/printk", None)]);
    let c = get(&boot, CheckId::KernelSerialConsole);
    assert_eq!(c.status, Status::Warn);
    assert!(
        c.summary.contains("errors and worse (console_loglevel 4)"),
        "{c:?}"
    );
    assert!(
        c.evidence.iter().any(|e| e == "/proc/cmdline: quiet"),
        "{c:?}"
    );
}

/// The issue: with /dev/cpu_dma_latency held at 0 the check warned that a 1 µs state
/// was "allowed while cpu_dma_latency is 0 µs". The kernel excludes every state whose
/// exit latency is above the limit.
#[test]
fn a_held_cpu_dma_latency_excludes_the_deep_states() {
    let dma = |us: i32| us.to_ne_bytes();
    let zero = dma(0);
    let f = variant(
        "bare-metal-cgroup-v2",
        Some("3"),
        &[("/dev/cpu_dma_latency", Some(&zero))],
    );
    let c = get(&f, CheckId::CpusCstates);
    assert_eq!(c.status, Status::Pass, "{c:?}");
    assert_eq!(
        c.summary,
        "cpu3 C6 (133 µs) excluded: cpu_dma_latency is 0 µs (a request holds it)"
    );
    let limit = dma(200);
    let f = variant(
        "bare-metal-cgroup-v2",
        Some("3"),
        &[("/dev/cpu_dma_latency", Some(&limit))],
    );
    let c = get(&f, CheckId::CpusCstates);
    assert_eq!(c.status, Status::Warn, "{c:?}");
    assert!(
        c.summary
            .starts_with("cpu3 C6 (133 µs) allowed while cpu_dma_latency is 200 µs"),
        "{c:?}"
    );
    // This VM's haltpoll state (1 µs) held at 0: nothing to warn about.
    let f = variant("this-vm", None, &[("/dev/cpu_dma_latency", Some(&zero))]);
    assert_eq!(get(&f, CheckId::CpusCstates).status, Status::Pass);
}

/// The checks the anchors make: a tuned RT box passes them, a desktop at its defaults
/// warns, high-resolution timers off fail, the mitigations are reported only.
#[test]
fn the_timer_watchdog_workqueue_and_power_checks() {
    use CheckId::*;
    let rt = checks("rt-6.12-no-realtime-file", None);
    assert_status(
        &rt,
        &[
            (KernelHrtimers, Status::Pass),
            (KernelNohz, Status::Pass),
            (KernelSkewTick, Status::Pass),
            (KernelWatchdog, Status::Pass),
            (CpusWorkqueues, Status::Pass),
            (CpusEnergyBias, Status::Pass),
            (MemoryStatInterval, Status::Pass),
            (PlatformTscReliable, Status::Pass),
            (PlatformMitigations, Status::Info),
        ],
    );
    let desk = checks("bare-metal-cgroup-v2", Some("3"));
    assert_status(
        &desk,
        &[
            (KernelHrtimers, Status::Pass),
            (KernelNohz, Status::Warn),
            (KernelSkewTick, Status::Warn),
            (KernelWatchdog, Status::Warn),
            (CpusWorkqueues, Status::Warn),
            (CpusEnergyBias, Status::Warn),
            (MemoryStatInterval, Status::Warn),
            (PlatformTscReliable, Status::Pass),
            (PlatformMitigations, Status::Info),
        ],
    );
    assert!(get(&desk, KernelNohz)
        .summary
        .starts_with("CPU 3 isolated, but the kernel has no NO_HZ_FULL"));
    assert_eq!(
        get(&desk, KernelWatchdog).fix.as_deref().unwrap(),
        "sysctl kernel.watchdog_cpumask=0-2 (or nowatchdog / nosoftlockup at boot; the lockup detector is then gone for them)"
    );
    assert!(get(&desk, CpusWorkqueues)
        .fix
        .as_deref()
        .unwrap()
        .starts_with("echo 7 > /sys/devices/virtual/workqueue/cpumask"));
    assert!(get(&desk, CpusEnergyBias)
        .summary
        .starts_with("cpu3 EPB 6, cpu3 EPP balance_performance"));
    let m = get(&desk, PlatformMitigations);
    assert!(
        m.summary.contains("1 vulnerable (gather_data_sampling)") && m.fix.is_none(),
        "{m:?}"
    );
    let off = variant(
        "bare-metal-cgroup-v2",
        Some("3"),
        &[("/proc/timer_list", Some(b"cpu: 3\n  .hres_active    : 0\n"))],
    );
    assert_eq!(get(&off, KernelHrtimers).status, Status::Fail);
    let no_flag = variant(
        "rt-6.12-no-realtime-file",
        None,
        &[("/proc/cmdline", Some(b"root=/dev/sda1 ro isolcpus=2-3\n"))],
    );
    let tsc = get(&no_flag, PlatformTscReliable);
    assert_eq!(tsc.status, Status::Warn, "{tsc:?}");
    assert_eq!(get(&no_flag, KernelSkewTick).status, Status::Warn);
}

/// Issue 33's rule for doctor's checklist: every line fits the width (80, 200; 0 means
/// 80, as on a serial console), prose wraps with a hanging indent, nothing is lost.
#[test]
fn the_checklist_fits_80_200_and_0_columns() {
    let mut findings = checks("bare-metal-cgroup-v2", Some("3"));
    let long = "cpu_dma_latency 0: p99 62 → 31 µs (−50 %): better (sign test: lower in 8 of 8 pairs, p = 0.008, decides at ≤ 0.031; median difference −30.5 µs, 99 % interval −31.0 … −29.9 µs)";
    findings[0]
        .measured
        .push(super::finding::Measured::observed(long));
    findings[0]
        .evidence
        .push(format!("/sys/devices/system/cpu/cpu3/{}", "x".repeat(150)));
    let report = super::report::DoctorReport {
        schema: super::report::SCHEMA.into(),
        verdict: super::report::Verdict::of(&findings),
        counts: super::report::DoctorReport::counts_of(&findings),
        hostname: "box".into(),
        kernel_release: "6.8.0-debug".into(),
        cpus: vec![3],
        cpus_why: "--cpus".into(),
        priority: 95,
        measured: true,
        planned_run: None,
        notes: vec!["measured in 1 min 12 s (1 A/B of up to 20 pairs (5 s a pair; each stops once its sign test decides or can no longer) and two 3 s observation windows: at most 2 min, said up front)".into()],
        findings,
    };
    let words = |text: &str| -> String { text.split_whitespace().collect::<Vec<_>>().join(" ") };
    for (asked, fits) in [(80, 80), (200, 200), (0, 80), (30, 30)] {
        let text = report.terminal(true, asked);
        for line in text.lines() {
            let w = textwrap::core::display_width(line);
            assert!(w <= fits, "{asked} columns: {w}: {line}");
        }
        // Every word is still there, in order (the long path broken only by the width).
        let flat = words(&text);
        assert!(flat.contains(&words(long)), "{asked}: {text}");
        assert!(flat.contains("measured in 1 min 12 s"), "{asked}");
    }
    // At 80 a summary's second line hangs under its first, in the summary's column.
    let text = report.terminal(false, 80);
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("  WARN kernel.preempt_rt"))
        .unwrap();
    let column = lines[i].find("not a PREEMPT_RT").unwrap();
    assert_eq!(
        lines[i + 1].len() - lines[i + 1].trim_start().len(),
        column,
        "{text}"
    );
    // A unit stays with its number at every width.
    for width in 30..=120 {
        let text = report.terminal(true, width);
        for line in text.lines() {
            let first = line.trim_start().split(' ').next().unwrap_or("");
            assert!(
                !["%", "µs", "ms", "%)", "µs)", "ms)", "µs,", "ms,"].contains(&first),
                "{width}: {line}"
            );
        }
    }
    // At 200 the same summary is one line.
    let wide = report.terminal(false, 200);
    assert!(
        wide.lines()
            .any(|l| l.starts_with("  WARN kernel.preempt_rt")
                && l.ends_with("worst cases reach milliseconds")),
        "{wide}"
    );
}
