//! `doctor --try FIX` for the runtime fixes that are plain /proc and /sys files: which
//! files each fix sets, and to what, on this machine (or a fixture tree). The files are
//! changed only through `isolate::tunable` (state file first, restored on every exit
//! path and by `latscope restore`), for the "with" runs of an A/B only.

use super::finding::CheckId;
use super::Inputs;
use crate::cli::TryFix;
use crate::isolate::tunable::{read_setting, Change};
use crate::units::format_cpu_list;

/// A fix to measure: the finding it answers, its label in the A/B line, the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tried {
    pub finding: CheckId,
    pub label: String,
    pub changes: Vec<Change>,
}

/// One file set to one value for `finding`.
fn one(inputs: &Inputs, finding: CheckId, path: &str, value: &str) -> Result<Tried, String> {
    let real = inputs.files.path(path);
    let now = read_setting(&real).map_err(|e| format!("{path}: {e}: nothing to try here"))?;
    if now == value {
        return Err(format!("{path} is {now} already: nothing to try"));
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    Ok(Tried {
        finding,
        label: format!("{name} {now} → {value}"),
        changes: vec![Change {
            path: real,
            value: value.to_string(),
        }],
    })
}

/// The `performance` governor on each measured CPU.
fn governor(inputs: &Inputs) -> Result<Tried, String> {
    let mut changes = Vec::new();
    for cpu in &inputs.cpus {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
        let path = format!("{dir}/scaling_governor");
        let now = read_setting(&inputs.files.path(&path))
            .map_err(|_| format!("no cpufreq on CPU {cpu} ({dir} missing): nothing to try"))?;
        let offered = inputs
            .files
            .read_trim(&format!("{dir}/scaling_available_governors"));
        if offered.is_some_and(|o| !o.split_whitespace().any(|g| g == "performance")) {
            return Err(format!(
                "CPU {cpu}'s cpufreq driver offers no `performance` governor"
            ));
        }
        if now != "performance" {
            changes.push(Change {
                path: inputs.files.path(&path),
                value: "performance".into(),
            });
        }
    }
    if changes.is_empty() {
        return Err("every measured CPU runs `performance` already: nothing to try".into());
    }
    Ok(Tried {
        finding: CheckId::CpusGovernor,
        label: format!(
            "governor performance on CPU {}",
            format_cpu_list(&inputs.cpus)
        ),
        changes,
    })
}

/// Device IRQs delivered on a measured CPU moved to the other online CPUs.
fn irq_affinity(inputs: &Inputs) -> Result<Tried, String> {
    let others: Vec<usize> = inputs
        .online
        .iter()
        .copied()
        .filter(|c| !inputs.cpus.contains(c))
        .collect();
    if others.is_empty() {
        return Err("every online CPU is measured: no CPU to move IRQs to".into());
    }
    let target = format_cpu_list(&others);
    let on_measured = super::cpus::irqs_on_measured(inputs);
    let managed: Vec<String> = on_measured
        .iter()
        .filter(|i| !i.movable())
        .map(|i| format!("{} ({})", i.irq, i.name))
        .collect();
    let changes: Vec<Change> = on_measured
        .iter()
        .filter(|i| i.movable())
        .map(|i| Change {
            path: inputs
                .files
                .path(&format!("/proc/irq/{}/smp_affinity_list", i.irq)),
            value: target.clone(),
        })
        .collect();
    if changes.is_empty() && !managed.is_empty() {
        return Err(format!(
            "the device IRQs on the measured CPUs are kernel-managed ({}): user space cannot move them (isolcpus=managed_irq at boot does): nothing to try",
            managed.join(", ")
        ));
    }
    if changes.is_empty() {
        return Err("no device IRQ is delivered on a measured CPU: nothing to try".into());
    }
    let left = match managed.len() {
        0 => String::new(),
        n => format!(" ({n} kernel-managed left)"),
    };
    Ok(Tried {
        finding: CheckId::CpusIrqAffinity,
        label: format!("{} device IRQs moved to CPU {target}{left}", changes.len()),
        changes,
    })
}

/// The files `fix` sets here; `None` for fixes that are not plain files (`isolate`,
/// `dma-latency`); `Err`: why there is nothing to try on this machine.
pub fn tunable(fix: TryFix, inputs: &Inputs) -> Option<Result<Tried, String>> {
    Some(match fix {
        TryFix::DmaLatency | TryFix::Isolate => return None,
        TryFix::IrqAffinity => irq_affinity(inputs),
        TryFix::Governor => governor(inputs),
        TryFix::RtThrottling => one(
            inputs,
            CheckId::SchedRtThrottling,
            "/proc/sys/kernel/sched_rt_runtime_us",
            "-1",
        ),
        TryFix::TimerMigration => one(
            inputs,
            CheckId::SchedTimerMigration,
            "/proc/sys/kernel/timer_migration",
            "0",
        ),
        TryFix::NumaBalancing => one(
            inputs,
            CheckId::MemoryNumaBalancing,
            "/proc/sys/kernel/numa_balancing",
            "0",
        ),
        TryFix::Thp => {
            let path = "/sys/kernel/mm/transparent_hugepage/enabled";
            match read_setting(&inputs.files.path(path)) {
                Ok(now) if now != "always" => Err(format!(
                    "transparent huge pages are `{now}` already: nothing to try"
                )),
                _ => one(inputs, CheckId::MemoryThp, path, "madvise"),
            }
        }
        TryFix::Ksm => one(inputs, CheckId::MemoryKsm, "/sys/kernel/mm/ksm/run", "0"),
        TryFix::Swappiness => {
            let path = "/proc/sys/vm/swappiness";
            let swaps = inputs.files.read("/proc/swaps").unwrap_or_default();
            let areas = swaps.lines().skip(1).filter(|l| !l.trim().is_empty());
            let now = inputs
                .files
                .read_trim(path)
                .and_then(|v| v.parse::<i64>().ok());
            match now {
                _ if areas.count() == 0 => Err(
                    "no swap in use (/proc/swaps lists no area): swappiness has nothing to act on, nothing to try".into(),
                ),
                Some(v) if v <= 10 => Err(format!("{path} is {v} already: nothing to try")),
                _ => one(inputs, CheckId::MemorySwappiness, path, "10"),
            }
        }
        TryFix::NmiWatchdog => one(
            inputs,
            CheckId::SchedNmiWatchdog,
            "/proc/sys/kernel/nmi_watchdog",
            "0",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isolate::tunable::{restore_tunables, TunableGuard};
    use crate::sys::host_files::HostFiles;
    use clap::ValueEnum;

    use crate::doctor::fixture_tests::copy_tree;

    fn values(t: &Tried) -> Vec<String> {
        t.changes
            .iter()
            .map(|c| read_setting(&c.path).unwrap())
            .collect()
    }

    /// Every tunable fix on the bare-metal tree (every knob at its default): set, then
    /// restored by the guard's Drop, and by `latscope restore` after a "kill".
    #[test]
    fn every_tunable_fix_sets_and_restores_on_a_fixture_tree() {
        let tree = copy_tree("bare-metal-cgroup-v2");
        let state = tree.path().join("run-latscope");
        let inputs = Inputs::new(HostFiles::under(tree.path()), Some("3"), 95).unwrap();
        for fix in TryFix::value_variants() {
            let Some(tried) = tunable(*fix, &inputs) else {
                assert!(matches!(fix, TryFix::DmaLatency | TryFix::Isolate));
                continue;
            };
            let t = tried.unwrap_or_else(|why| panic!("{fix:?}: {why}"));
            let before = values(&t);
            let guard = TunableGuard::apply_in(&state, &t.label, &t.changes).unwrap();
            let wanted: Vec<String> = t.changes.iter().map(|c| c.value.clone()).collect();
            assert_eq!(values(&t), wanted, "{fix:?} applied");
            drop(guard);
            assert_eq!(values(&t), before, "{fix:?} restored by Drop");
            // A kill: the guard never drops (its lock stays held: a directory per fix).
            let killed = state.join(format!("{fix:?}"));
            std::mem::forget(TunableGuard::apply_in(&killed, &t.label, &t.changes).unwrap());
            assert_eq!(values(&t), wanted, "{fix:?} applied again");
            let out = restore_tunables(&[killed], true);
            assert!(out.len() == 1 && out[0].ok, "{fix:?}: {:?}", out);
            assert_eq!(values(&t), before, "{fix:?} restored by `latscope restore`");
        }
    }

    #[test]
    fn the_values_each_fix_writes() {
        let tree = copy_tree("bare-metal-cgroup-v2");
        let inputs = Inputs::new(HostFiles::under(tree.path()), Some("3"), 95).unwrap();
        let t = tunable(TryFix::RtThrottling, &inputs).unwrap().unwrap();
        assert_eq!(t.label, "sched_rt_runtime_us 950000 → -1");
        assert_eq!(t.finding, CheckId::SchedRtThrottling);
        let t = tunable(TryFix::Thp, &inputs).unwrap().unwrap();
        assert_eq!(t.label, "enabled always → madvise");
        let t = tunable(TryFix::IrqAffinity, &inputs).unwrap().unwrap();
        assert!(t.changes.iter().all(|c| c.value == "0-2"), "{t:?}");
        let t = tunable(TryFix::Governor, &inputs).unwrap().unwrap();
        assert_eq!(t.changes[0].value, "performance");
    }

    /// This VM: what is already as the fix would set it says so instead of measuring
    /// the same thing twice; no cpufreq and no swap say why (the issue: `--try
    /// swappiness` ran an A/B on a machine with no swap).
    #[test]
    fn nothing_to_try_says_why() {
        let tree = copy_tree("this-vm");
        let inputs = Inputs::new(HostFiles::under(tree.path()), Some("1"), 95).unwrap();
        let why = |fix| tunable(fix, &inputs).unwrap().unwrap_err();
        assert!(
            why(TryFix::Ksm).contains("is 0 already"),
            "{}",
            why(TryFix::Ksm)
        );
        assert!(why(TryFix::Thp).contains("`madvise` already"));
        assert!(why(TryFix::Governor).contains("no cpufreq on CPU 1"));
        assert!(
            why(TryFix::Swappiness).starts_with("no swap in use"),
            "{}",
            why(TryFix::Swappiness)
        );
        assert!(tunable(TryFix::RtThrottling, &inputs).unwrap().is_ok());
        assert!(tunable(TryFix::TimerMigration, &inputs).unwrap().is_ok());
    }

    /// The issue: `--try irq-affinity` always failed here, moving virtio1-req.0, a
    /// kernel-managed IRQ the kernel refuses (EPERM, recorded in this VM's tree). The
    /// movable ones are moved, the managed one named; with only managed ones on the CPU
    /// there is nothing to try, and the note says what does move them.
    #[test]
    fn kernel_managed_irqs_are_left_out_of_the_try() {
        let tree = copy_tree("this-vm");
        let inputs = Inputs::new(HostFiles::under(tree.path()), Some("1"), 95).unwrap();
        let t = tunable(TryFix::IrqAffinity, &inputs).unwrap().unwrap();
        assert_eq!(
            t.label,
            "9 device IRQs moved to CPU 0 (1 kernel-managed left)"
        );
        let irq36 = tree.path().join("proc/irq/36/smp_affinity_list");
        assert!(t.changes.iter().all(|c| c.path != irq36), "{t:?}");
        // Every IRQ on CPU 1 but 36 moved off it already: only the managed one is left.
        for irq in [25, 26, 29, 31, 33, 35, 38, 40, 42] {
            let dir = tree.path().join(format!("proc/irq/{irq}"));
            std::fs::write(dir.join("effective_affinity_list"), "0\n").unwrap();
        }
        let why = tunable(TryFix::IrqAffinity, &inputs).unwrap().unwrap_err();
        assert!(
            why.contains("kernel-managed (36 (virtio1-req.0))")
                && why.contains("isolcpus=managed_irq"),
            "{why}"
        );
    }
}
