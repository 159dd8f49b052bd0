//! IRQ affinity: every IRQ that may run on an isolated CPU moved to the remaining CPUs,
//! the default affinity of new IRQs pointed there too; and putting each IRQ back on the
//! CPU it was delivered to before.

use super::report::{IsolationReport, MovedIrq, UnmovableIrq};
use super::short_error;
use super::state::{IrqOriginal, RestoreSummary, StateFile};
use crate::sys::irq;
use crate::units::format_cpu_list;

/// Moves every IRQ that may run on an isolated CPU to the remaining CPUs, and points
/// the default affinity of new IRQs there too; originals are saved before any write.
pub(super) fn move_irqs(file: &mut StateFile, report: &mut IsolationReport) -> anyhow::Result<()> {
    let isolated = file.state.isolated_cpus.clone();
    let system = file.state.system_cpus.clone();
    let mut plan = Vec::new();
    let per_cpu = irq::per_cpu_here();
    let mut staying = Vec::new();
    for n in irq::list() {
        let Ok(list) = irq::affinity_list(n) else {
            continue;
        };
        let Ok(cpus) = crate::units::parse_cpu_list_plain(&list) else {
            continue;
        };
        if !cpus.iter().any(|c| isolated.contains(c)) {
            continue;
        }
        if per_cpu.contains(&n) {
            staying.push(label(n));
            continue;
        }
        let left: Vec<usize> = cpus.into_iter().filter(|c| !isolated.contains(c)).collect();
        let target = format_cpu_list(if left.is_empty() { &system } else { &left });
        file.state.irqs.push(IrqOriginal {
            irq: n,
            affinity_list: list.clone(),
            effective: irq::effective_affinity_list(n),
        });
        plan.push((n, list, target));
    }
    let default = irq::default_affinity().ok();
    let default_needs_change = default
        .as_deref()
        .and_then(irq::parse_mask_hex)
        .is_some_and(|cpus| cpus.iter().any(|c| isolated.contains(c)));
    if default_needs_change {
        file.state.irq_default_affinity = default.clone();
    }
    if !staying.is_empty() {
        report.notes.push(format!(
            "per-CPU interrupts left as they are (every CPU has its own, no affinity moves them; the isolated CPUs keep theirs): IRQ {}",
            staying.join(", ")
        ));
    }
    file.save()?;
    apply(plan, report);
    if default_needs_change {
        let mask = irq::cpu_mask_hex(&system);
        match irq::set_default_affinity(&mask) {
            Ok(()) => {
                report.default_irq_affinity =
                    Some(format!("{} -> {mask}", default.unwrap_or_default()))
            }
            Err(e) => report
                .notes
                .push(format!("default IRQ affinity left as it was: {e}")),
        }
    }
    Ok(())
}

/// An IRQ as notes name it: `14 arm-pmu`, or the number alone without a handler.
fn label(n: u32) -> String {
    match irq::name(n) {
        name if name.is_empty() => n.to_string(),
        name => format!("{n} {name}"),
    }
}

/// Sets each planned affinity. A refusal of an IRQ without a handler (on Arm: the
/// kernel's IPIs, hidden from /proc/interrupts, and per-CPU lines nothing requested) is
/// a note, not a warning: nothing of a device's runs there.
fn apply(plan: Vec<(u32, String, String)>, report: &mut IsolationReport) {
    let mut idle = Vec::new();
    for (n, from, to) in plan {
        match irq::set_affinity_list(n, &to) {
            Ok(()) => report.moved_irqs.push(MovedIrq {
                irq: n,
                name: irq::name(n),
                from,
                to,
            }),
            Err(e) if irq::is_refusal(&e) && irq::name(n).is_empty() => idle.push(n.to_string()),
            Err(e) => report.unmovable_irqs.push(UnmovableIrq {
                irq: n,
                name: irq::name(n),
                affinity: from,
                reason: short_error(&e),
            }),
        }
    }
    if !idle.is_empty() {
        report.notes.push(format!(
            "IRQs without a handler refused a new affinity (per-CPU: an Arm kernel's IPIs and unused private lines): left as they are: IRQ {}",
            idle.join(", ")
        ));
    }
}

/// Writes the original affinity lists back, then the default affinity of new IRQs.
pub(super) fn restore(
    irqs: &[IrqOriginal],
    default_affinity: Option<&str>,
    summary: &mut RestoreSummary,
) {
    restore_irqs(irqs, summary);
    if let Some(mask) = default_affinity {
        if irq::default_affinity().is_ok_and(|now| now != mask) {
            match irq::set_default_affinity(mask) {
                Ok(()) => summary.irqs_reset += 1,
                Err(e) => summary.problems.push(format!(
                    "cannot set the default IRQ affinity back to {mask}: {e}"
                )),
            }
        }
    }
}

/// Writes the original affinity lists back. IRQs the kernel delivered elsewhere meanwhile
/// are first sent to their original CPU and given up to a second to get there (x86
/// moves an IRQ when it next fires), because widening a mask keeps an IRQ on its current
/// CPU: so they end up where they were, not where the kernel would pick.
fn restore_irqs(irqs: &[IrqOriginal], summary: &mut RestoreSummary) {
    let mut todo = Vec::new();
    let mut travelling = Vec::new();
    for orig in irqs {
        let Ok(now) = irq::affinity_list(orig.irq) else {
            continue; // the IRQ is gone (device removed): nothing to restore
        };
        let effective_moved =
            orig.effective.is_some() && irq::effective_affinity_list(orig.irq) != orig.effective;
        if now == orig.affinity_list && !effective_moved {
            continue;
        }
        if let Some(effective) = orig.effective.as_deref().filter(|_| effective_moved) {
            if irq::set_affinity_list(orig.irq, effective).is_ok() {
                travelling.push(orig);
            }
        }
        todo.push(orig);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1000);
    while !travelling.is_empty() && std::time::Instant::now() < deadline {
        travelling.retain(|o| irq::effective_affinity_list(o.irq) != o.effective);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for orig in todo {
        match irq::set_affinity_list(orig.irq, &orig.affinity_list) {
            Ok(()) => summary.irqs_reset += 1,
            Err(e) => summary.problems.push(format!(
                "cannot set IRQ {} back to {}: {e}",
                orig.irq, orig.affinity_list
            )),
        }
    }
}
