//! CPU checks: isolation (isolcpus=, nohz_full=, rcu_nocbs=, cgroup v2 isolated
//! partitions) against each other and the measured CPUs, device IRQs allowed there,
//! irqbalance, C-states against cpu_dma_latency, the governor, SMT siblings.

use super::finding::{CheckId, Finding};
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
fn isolated_partitions(inputs: &Inputs) -> Vec<usize> {
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

pub fn isolation(inputs: &Inputs) -> Finding {
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
    let fix_boot = format!("isolcpus=managed_irq,domain,{cpus} nohz_full={cpus} rcu_nocbs={cpus} on the kernel command line; or `latscope timer --isolate {cpus}` for one run");
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
}

pub(super) fn device_irqs(inputs: &Inputs) -> Vec<DeviceIrq> {
    let files = &inputs.files;
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
        irqs.push(DeviceIrq {
            irq,
            name: handlers.join(","),
            cpus,
        });
    }
    irqs
}

pub fn irq_affinity(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusIrqAffinity;
    if !inputs.files.exists("/proc/irq") {
        return Finding::skip(id, "/proc/irq missing");
    }
    let irqs = device_irqs(inputs);
    let on_measured: Vec<&DeviceIrq> = irqs
        .iter()
        .filter(|i| i.cpus.iter().any(|c| inputs.cpus.contains(c)))
        .collect();
    let cpus = list(&inputs.cpus);
    if on_measured.is_empty() {
        return Finding::pass(
            id,
            format!(
                "no device IRQ is delivered on CPU {cpus} ({} device IRQs seen)",
                irqs.len()
            ),
        );
    }
    let others: Vec<usize> = missing_from(&inputs.online, &inputs.cpus);
    let target = if others.is_empty() {
        "another CPU".to_string()
    } else {
        list(&others)
    };
    let mut f = Finding::warn(
        id,
        format!("{} device IRQ(s) delivered on measured CPU {cpus}: their handlers interrupt the RT task", on_measured.len()),
        format!("echo {target} > /proc/irq/N/smp_affinity_list for each (as root), isolcpus=managed_irq,… at boot, or `latscope timer --isolate {cpus}` for one run"),
    );
    for i in on_measured.iter().take(12) {
        f = f.with(format!(
            "/proc/irq/{}/ ({}): CPU {}",
            i.irq,
            i.name,
            list(&i.cpus)
        ));
    }
    if on_measured.len() > 12 {
        f = f.with(format!("… {} more", on_measured.len() - 12));
    }
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
