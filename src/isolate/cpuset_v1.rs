//! The cgroup v1 shield: an exclusive `latscope-PID-rt` cpuset without load balancing
//! for the isolated CPUs, a `latscope-PID-system` cpuset for everything else, every
//! movable task moved there; and undoing it (tasks back to the root, affinities reset).

use super::report::{IsolationReport, UnmovableTask};
use super::state::{RestoreSummary, StateFile, TaskOriginal};
use super::{short_error, Active, MOVE_PASSES};
use crate::sys::cpuset::{self, CpusetMount};
use crate::sys::{affinity, procfs};
use crate::units::format_cpu_list;
use anyhow::{anyhow, Context};
use std::path::Path;

/// Builds the v1 shield: narrows existing cpusets that hold isolated CPUs (children
/// first), creates the system and rt cpusets, turns load balancing off in the root and
/// moves the root's tasks to the system set. Returns where the shield is.
pub(super) fn shield(
    file: &mut StateFile,
    report: &mut IsolationReport,
    mount: &CpusetMount,
) -> anyhow::Result<Active> {
    let root = mount.root().to_path_buf();
    let pid = file.state.pid;
    let isolated = file.state.isolated_cpus.clone();
    let cpus_text = format_cpu_list(&isolated);
    let system_text = format_cpu_list(&file.state.system_cpus);
    let mems =
        cpuset::read_value(&mount.knob(&root, "mems")).context("reading the root cpuset's mems")?;
    // Existing cpusets may hold the CPUs to isolate: narrow them, children first.
    let mut existing = cpuset::child_dirs(&root);
    existing.reverse();
    for dir in existing {
        let knob = mount.knob(&dir, "cpus");
        let Ok(text) = cpuset::read_value(&knob) else {
            continue;
        };
        let Ok(cpus) = crate::units::parse_cpu_list_plain(&text) else {
            continue;
        };
        if !cpus.iter().any(|c| isolated.contains(c)) {
            continue;
        }
        let left: Vec<usize> = cpus.into_iter().filter(|c| !isolated.contains(c)).collect();
        if left.is_empty() {
            return Err(anyhow!(
                "cpuset {} uses only CPUs to isolate ({text}); move its tasks or choose other CPUs",
                dir.display()
            ));
        }
        file.set_knob(&knob, &format_cpu_list(&left))?;
        report.narrowed_cpusets.push(format!(
            "{}: {text} -> {}",
            dir.display(),
            format_cpu_list(&left)
        ));
    }
    let system_dir = root.join(format!("latscope-{pid}-system"));
    file.make_dir(&system_dir)?;
    cpuset::set(&mount.knob(&system_dir, "cpus"), &system_text)?;
    cpuset::set(&mount.knob(&system_dir, "mems"), &mems)?;
    let rt_dir = root.join(format!("latscope-{pid}-rt"));
    file.make_dir(&rt_dir)?;
    cpuset::set(&mount.knob(&rt_dir, "cpus"), &cpus_text)?;
    cpuset::set(&mount.knob(&rt_dir, "mems"), &mems)?;
    cpuset::set(&mount.knob(&rt_dir, "cpu_exclusive"), "1")?;
    // No load balancing across the shield: its CPUs leave every scheduling domain.
    cpuset::set(&mount.knob(&rt_dir, "sched_load_balance"), "0")?;
    file.set_knob(&mount.knob(&root, "sched_load_balance"), "0")?;
    move_root_tasks(file, report, &root, &system_dir)?;
    Ok(Active {
        mount: mount.clone(),
        rt_dir,
        isolated,
        system: file.state.system_cpus.clone(),
        home: None,
    })
}

/// Moves every task of the root cpuset into `system_dir`, sweeping again for tasks
/// forked meanwhile; the ones the kernel refuses (per-CPU kthreads) are reported.
fn move_root_tasks(
    file: &mut StateFile,
    report: &mut IsolationReport,
    root: &Path,
    system_dir: &Path,
) -> anyhow::Result<()> {
    let target = system_dir.join("tasks");
    let mut refused = std::collections::BTreeMap::new();
    for _ in 0..MOVE_PASSES {
        let tids = cpuset::task_ids(&root.join("tasks")).context("reading root tasks")?;
        let mut moved_now = 0;
        for tid in tids {
            if refused.contains_key(&tid) {
                continue;
            }
            let Some(stat) = procfs::task_stat(tid) else {
                continue;
            };
            let original = affinity::get_affinity(tid).unwrap_or_default();
            match cpuset::move_task(&target, tid) {
                Ok(()) => {
                    moved_now += 1;
                    file.state.moved_tasks.push(TaskOriginal {
                        tid,
                        start_time: stat.start_time,
                        affinity: original,
                    });
                }
                Err(e) if cpuset::task_exited(&e) => {}
                Err(e) => {
                    refused.insert(tid, (stat, original, short_error(&e)));
                }
            }
        }
        file.save()?;
        if moved_now == 0 {
            break;
        }
    }
    report.moved_tasks = file.state.moved_tasks.len();
    let isolated = &file.state.isolated_cpus;
    for (tid, (stat, cpus, reason)) in refused {
        if stat.kernel_thread && !cpus.is_empty() {
            if cpus.iter().all(|c| isolated.contains(c)) {
                report.kthreads_staying.push(stat.comm.clone());
            } else if cpus.iter().any(|c| isolated.contains(c)) {
                report.unbound_kthreads_staying.push(stat.comm.clone());
            }
        }
        report.unmovable_tasks.push(UnmovableTask {
            tid,
            comm: stat.comm,
            cpus: format_cpu_list(&cpus),
            kernel_thread: stat.kernel_thread,
            reason,
        });
    }
    Ok(())
}

/// Empties a cpuset latscope created: its tasks go back to the root.
pub(super) fn empty_cpuset(dir: &Path, root: &Path, summary: &mut RestoreSummary) {
    summary.move_all_out(&dir.join("tasks"), &root.join("tasks"));
}

/// Gives the moved tasks that still live their affinity from before the move back.
pub(super) fn reset_affinities(moved_tasks: &[TaskOriginal], summary: &mut RestoreSummary) {
    for task in moved_tasks {
        if !procfs::is_same_task(task.tid, task.start_time) || task.affinity.is_empty() {
            continue;
        }
        if affinity::get_affinity(task.tid).is_ok_and(|now| now != task.affinity)
            && affinity::set_affinity(task.tid, &task.affinity).is_ok()
        {
            summary.affinities_reset += 1;
        }
    }
}
