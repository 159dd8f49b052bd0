//! CPU checks: isolation (isolcpus=, nohz_full=, rcu_nocbs=, cgroup v2 isolated
//! partitions) against each other and the measured CPUs, device IRQs allowed there,
//! irqbalance, C-states against cpu_dma_latency, the governor, SMT siblings.

use super::finding::{CheckId, Finding};
use super::kernel::KernelConfig;
use super::Inputs;
use crate::units::format_cpu_list;

fn list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        "none".into()
    } else {
        format_cpu_list(cpus)
    }
}

fn missing_from(wanted: &[usize], have: &[usize]) -> Vec<usize> {
    wanted
        .iter()
        .copied()
        .filter(|c| !have.contains(c))
        .collect()
}

/// CPUs of cgroup v2 partitions that are `isolated` (cpuset.cpus.partition), two
/// levels deep at most: systemd slices and their children.
pub(super) fn isolated_partitions(inputs: &Inputs) -> Vec<usize> {
    let files = &inputs.files;
    let mut dirs = vec!["/sys/fs/cgroup".to_string()];
    for name in files.list("/sys/fs/cgroup") {
        let first = format!("/sys/fs/cgroup/{name}");
        for sub in files.list(&first) {
            dirs.push(format!("{first}/{sub}"));
        }
        dirs.push(first);
    }
    let mut cpus = Vec::new();
    for dir in dirs {
        let partition = files.read_trim(&format!("{dir}/cpuset.cpus.partition"));
        if partition.as_deref() == Some("isolated") {
            cpus.extend(inputs.cpu_list(&format!("{dir}/cpuset.cpus.effective")));
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The boot parameters that isolate `cpus`: nohz_full= only where the kernel has
/// NO_HZ_FULL (unknown config: named, with the condition).
fn isolation_fix(cpus: &str, config: Option<&KernelConfig>) -> String {
    let nohz = match config {
        Some(c) if !c.is_set("NO_HZ_FULL") => format!(" (this kernel is built without NO_HZ_FULL: nohz_full= would be ignored, the tick stays; {} says so)", c.source),
        Some(_) => format!(" nohz_full={cpus}"),
        None => format!(" nohz_full={cpus} (if the kernel has NO_HZ_FULL)"),
    };
    format!("isolcpus=managed_irq,domain,{cpus} rcu_nocbs={cpus}{nohz} on the kernel command line; or `latscope timer --isolate {cpus}` for one run")
}

pub fn isolation(inputs: &Inputs, config: Option<&KernelConfig>) -> Finding {
    let id = CheckId::CpusIsolation;
    let isolcpus = inputs.cpu_list("/sys/devices/system/cpu/isolated");
    let nohz = inputs.cpu_list("/sys/devices/system/cpu/nohz_full");
    let rcu_nocbs = inputs.cmdline_cpus("rcu_nocbs").unwrap_or_default();
    let partitions = isolated_partitions(inputs);
    let mut isolated = isolcpus.clone();
    isolated.extend(&partitions);
    isolated.sort_unstable();
    isolated.dedup();
    let evidence = [
        format!("/sys/devices/system/cpu/isolated: {}", list(&isolcpus)),
        format!("/sys/devices/system/cpu/nohz_full: {}", list(&nohz)),
        format!("/proc/cmdline rcu_nocbs=: {}", list(&rcu_nocbs)),
        format!("cgroup v2 isolated partitions: {}", list(&partitions)),
        format!(
            "measured CPUs ({}): {}",
            inputs.cpus_why,
            list(&inputs.cpus)
        ),
    ];
    let cpus = list(&inputs.cpus);
    let fix_boot = isolation_fix(&cpus, config);
    let mut problems = Vec::new();
    if isolated.is_empty() && nohz.is_empty() {
        let mut f = Finding::warn(id, "no CPU is isolated: the scheduler, timers, RCU callbacks and unbound work share every CPU with the RT task", fix_boot);
        f.evidence = evidence.to_vec();
        return f;
    }
    let not_isolated = missing_from(&inputs.cpus, &isolated);
    if !not_isolated.is_empty() {
        problems.push(format!(
            "measured CPU(s) {} not isolated",
            list(&not_isolated)
        ));
    }
    let nohz_without_nocb = missing_from(&nohz, &rcu_nocbs);
    if !nohz_without_nocb.is_empty() && !rcu_nocbs.is_empty() {
        problems.push(format!(
            "nohz_full CPU(s) {} without rcu_nocbs",
            list(&nohz_without_nocb)
        ));
    }
    let nohz_not_isolated = missing_from(&nohz, &isolated);
    if !nohz_not_isolated.is_empty() {
        problems.push(format!(
            "nohz_full CPU(s) {} still take scheduler load balancing (not isolated)",
            list(&nohz_not_isolated)
        ));
    }
    let isolated_with_tick = missing_from(&isolated, &nohz);
    if !isolated_with_tick.is_empty() && !nohz.is_empty() {
        problems.push(format!(
            "isolated CPU(s) {} keep the tick (not nohz_full)",
            list(&isolated_with_tick)
        ));
    }
    let mut f = if problems.is_empty() {
        Finding::pass(id, format!("measured CPU(s) {cpus} isolated, consistently"))
    } else {
        Finding::warn(id, problems.join("; "), fix_boot)
    };
    f.evidence = evidence.to_vec();
    f
}

/// A device IRQ: one with a handler (a directory named after it under /proc/irq/N).
pub(super) struct DeviceIrq {
    pub(super) irq: u32,
    pub(super) name: String,
    pub(super) cpus: Vec<usize>,
    /// The kernel refuses it a new affinity (kernel-managed: only `isolcpus=managed_irq`
    /// at boot keeps it off a CPU); `None`: unknown (not root).
    pub(super) managed: Option<bool>,
    /// A per-CPU interrupt (Arm's arch_timer, arm-pmu, IPIs): every CPU has its own, so
    /// no affinity and no boot parameter keeps it off a CPU.
    pub(super) per_cpu: bool,
}

impl DeviceIrq {
    pub(super) fn movable(&self) -> bool {
        self.managed != Some(true)
    }
}

pub(super) fn device_irqs(inputs: &Inputs) -> Vec<DeviceIrq> {
    let files = &inputs.files;
    let per_cpu =
        crate::sys::irq::per_cpu_irqs(&files.read("/proc/interrupts").unwrap_or_default());
    let mut irqs = Vec::new();
    for entry in files.list("/proc/irq") {
        let Ok(irq) = entry.parse::<u32>() else {
            continue;
        };
        let dir = format!("/proc/irq/{irq}");
        let handlers: Vec<String> = files
            .list(&dir)
            .into_iter()
            .filter(|n| files.path(&format!("{dir}/{n}")).is_dir())
            .collect();
        if handlers.is_empty() {
            continue;
        }
        // Where it is delivered (x86 has effective_affinity_list), else where it may be.
        let cpus = match inputs.cpu_list(&format!("{dir}/effective_affinity_list")) {
            effective if !effective.is_empty() => effective,
            _ => inputs.cpu_list(&format!("{dir}/smp_affinity_list")),
        };
        let name = handlers.join(",");
        irqs.push(DeviceIrq {
            irq,
            per_cpu: per_cpu.contains(&irq) || crate::sys::irq::is_per_cpu_handler(&name),
            name,
            cpus,
            managed: None,
        });
    }
    irqs
}

/// The device IRQs delivered on a measured CPU, each asked whether the kernel lets user
/// space move it; per-CPU interrupts are not among them (nothing can move them).
pub(super) fn irqs_on_measured(inputs: &Inputs) -> Vec<DeviceIrq> {
    device_irqs(inputs)
        .into_iter()
        .filter(|i| !i.per_cpu && i.cpus.iter().any(|c| inputs.cpus.contains(c)))
        .map(|mut i| {
            i.managed = inputs.files.irq_refuses_affinity(i.irq);
            i
        })
        .collect()
}

/// The fix for device IRQs on the measured CPUs: the movable ones moved by hand, the
/// kernel-managed ones kept off by `isolcpus=managed_irq` at boot.
fn irq_fix(inputs: &Inputs, movable: usize, managed: usize) -> String {
    let cpus = list(&inputs.cpus);
    let others: Vec<usize> = missing_from(&inputs.online, &inputs.cpus);
    let target = if others.is_empty() {
        "another CPU".to_string()
    } else {
        list(&others)
    };
    let managed_fix = format!("isolcpus=managed_irq,{cpus} at boot (the kernel places kernel-managed IRQs: user space cannot move them)");
    match (movable, managed) {
        (_, 0) => format!("echo {target} > /proc/irq/N/smp_affinity_list for each (as root), isolcpus=managed_irq,… at boot, or `latscope timer --isolate {cpus}` for one run"),
        (0, _) => managed_fix,
        _ => format!("echo {target} > /proc/irq/N/smp_affinity_list for the {movable} movable one(s) (as root, or `latscope timer --isolate {cpus}` for one run); {managed_fix}"),
    }
}

/// What the per-CPU interrupts are, for the evidence: not judged (each CPU has its own
/// arch_timer, PMU and IPIs; no affinity or boot parameter moves them).
fn per_cpu_line(inputs: &Inputs) -> Option<String> {
    let per_cpu: Vec<String> = device_irqs(inputs)
        .into_iter()
        .filter(|i| i.per_cpu)
        .map(|i| format!("{} {}", i.irq, i.name))
        .collect();
    (!per_cpu.is_empty()).then(|| format!(
        "per-CPU interrupts, not judged: every CPU has its own and no affinity can move them (the kernel refuses one): IRQ {}",
        per_cpu.join(", ")
    ))
}

pub fn irq_affinity(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusIrqAffinity;
    if !inputs.files.exists("/proc/irq") {
        return Finding::skip(id, "/proc/irq missing");
    }
    let on_measured = irqs_on_measured(inputs);
    let cpus = list(&inputs.cpus);
    let per_cpu = per_cpu_line(inputs);
    if on_measured.is_empty() {
        let seen = device_irqs(inputs).iter().filter(|i| !i.per_cpu).count();
        let mut f = Finding::pass(
            id,
            format!(
                "no device IRQ is delivered on CPU {cpus} ({seen} device IRQs seen{})",
                if per_cpu.is_some() {
                    "; per-CPU ones such as the arch timer's fire on every CPU and cannot be moved"
                } else {
                    ""
                }
            ),
        );
        f.evidence.extend(per_cpu);
        return f;
    }
    let managed = on_measured.iter().filter(|i| !i.movable()).count();
    let movable = on_measured.len() - managed;
    let kinds = match managed {
        0 => String::new(),
        n => format!(" ({n} kernel-managed, {movable} movable)"),
    };
    let mut f = Finding::warn(
        id,
        format!("{} device IRQ(s) delivered on measured CPU {cpus}{kinds}: their handlers interrupt the RT task", on_measured.len()),
        irq_fix(inputs, movable, managed),
    );
    for i in on_measured.iter().take(12) {
        f = f.with(format!(
            "/proc/irq/{}/ ({}): CPU {}{}",
            i.irq,
            i.name,
            list(&i.cpus),
            match i.managed {
                Some(true) => ", kernel-managed (a new affinity is refused)",
                Some(false) => "",
                None => ", movable unknown (not root)",
            }
        ));
    }
    if on_measured.len() > 12 {
        f = f.with(format!("… {} more", on_measured.len() - 12));
    }
    f.evidence.extend(per_cpu);
    f
}

pub fn irqbalance(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusIrqbalance;
    let running: Vec<u32> = inputs
        .files
        .list("/proc")
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .filter(|pid| {
            inputs
                .files
                .read_trim(&format!("/proc/{pid}/comm"))
                .as_deref()
                == Some("irqbalance")
        })
        .collect();
    match running.first() {
        None => Finding::pass(id, "irqbalance is not running"),
        Some(pid) => Finding::warn(
            id,
            format!("irqbalance is running (pid {pid}): it moves IRQs back onto CPUs you moved them off"),
            "systemctl stop irqbalance (or IRQBALANCE_BANNED_CPULIST=<measured CPUs> in /etc/default/irqbalance)",
        )
        .with(format!("/proc/{pid}/comm: irqbalance")),
    }
}

/// The unbound workqueues' CPU mask (where unbound kworkers run) and the writeback
/// workqueue's own (intersected with it).
const WORKQUEUE_MASK: &str = "/sys/devices/virtual/workqueue/cpumask";
const WRITEBACK_MASK: &str = "/sys/bus/workqueue/devices/writeback/cpumask";

pub fn workqueues(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusWorkqueues;
    let read = |path: &str| {
        let text = inputs.files.read_trim(path)?;
        Some((crate::sys::irq::parse_mask_hex(&text)?, text))
    };
    let Some((unbound, text)) = read(WORKQUEUE_MASK) else {
        return Finding::skip(id, format!("{WORKQUEUE_MASK} missing or unreadable (a kernel before 4.2 has no unbound workqueue mask)"));
    };
    let writeback = read(WRITEBACK_MASK);
    let mut evidence = vec![format!("{WORKQUEUE_MASK}: {text} (CPU {})", list(&unbound))];
    if let Some((cpus, text)) = &writeback {
        evidence.push(format!("{WRITEBACK_MASK}: {text} (CPU {})", list(cpus)));
    }
    // Writeback runs where both masks allow.
    let writeback_cpus: Vec<usize> = match &writeback {
        Some((cpus, _)) => unbound
            .iter()
            .copied()
            .filter(|c| cpus.contains(c))
            .collect(),
        None => unbound.clone(),
    };
    let others = missing_from(&inputs.online, &inputs.cpus);
    let on = |mask: &[usize]| -> Vec<usize> {
        inputs
            .cpus
            .iter()
            .copied()
            .filter(|c| mask.contains(c))
            .collect()
    };
    let (unbound_on, writeback_on) = (on(&unbound), on(&writeback_cpus));
    let mut reached = unbound_on.clone();
    reached.extend(&writeback_on);
    reached.sort_unstable();
    reached.dedup();
    let mut f = if others.is_empty() {
        Finding::pass(
            id,
            "every online CPU is measured: unbound work has nowhere else to go",
        )
    } else if unbound_on.is_empty() && writeback_on.is_empty() {
        Finding::pass(
            id,
            format!(
                "unbound workqueues and writeback kept off CPU {}",
                list(&inputs.cpus)
            ),
        )
    } else {
        let hex = crate::sys::irq::cpu_mask_hex(&others);
        Finding::warn(
            id,
            format!(
                "unbound workqueue workers{} may run on measured CPU {}: a kworker running there when the RT task wakes must reach a preemption point first",
                if writeback_on.is_empty() { "" } else { " and writeback" },
                list(&reached)
            ),
            format!("echo {hex} > {WORKQUEUE_MASK} (writeback follows it; its own mask: {WRITEBACK_MASK}); isolcpus=domain,… at boot takes the isolated CPUs out; `latscope timer --isolate` sets it for one run"),
        )
    };
    f.evidence = evidence;
    f
}
