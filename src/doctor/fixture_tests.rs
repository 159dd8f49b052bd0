//! Tests only: every check on the fixture trees of tests/fixtures/doctor/ (this VM
//! recorded; an RT 6.12 kernel without /sys/kernel/realtime; a 4.19-rt kernel with the
//! old config name; a bare-metal box with cgroup v2 and every knob at its default).

use super::finding::{CheckId, Finding, Status};
use super::setup;
use super::{read_checks, Inputs};
use crate::sys::host_files::HostFiles;

fn tree(name: &str) -> HostFiles {
    HostFiles::under(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/doctor")
            .join(name),
    )
}

fn checks(name: &str, cpus: Option<&str>) -> Vec<Finding> {
    read_checks(&Inputs::new(tree(name), cpus, 95).unwrap())
}

fn get(findings: &[Finding], id: CheckId) -> &Finding {
    findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{id} missing"))
}

fn assert_status(findings: &[Finding], expected: &[(CheckId, Status)]) {
    for (id, status) in expected {
        let f = get(findings, *id);
        assert_eq!(f.status, *status, "{id}: {f:#?}");
    }
}

/// What every tree's findings share: every check once, a fix for each WARN/FAIL, a
/// reason for each SKIP.
fn assert_well_formed(findings: &[Finding]) {
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
fn ab_summary_reads_like_the_issue() {
    let pairs = [[31_000, 62_000], [30_000, 60_000], [33_000, 64_000]];
    assert_eq!(
        super::ab::summary("cpu_dma_latency 0", &pairs),
        "cpu_dma_latency 0: p99 62 → 31 µs (−50 %) in 3 pairs, lower in 3"
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
    let abs = super::planned_abs(&args, &inputs, &mut Vec::new());
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
    assert!(super::planned_abs(&args, &vm, &mut Vec::new())
        .iter()
        .all(|ab| ab.finding != CheckId::CpusSmt));
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
