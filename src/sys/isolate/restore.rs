//! Undoing an isolation from its recorded state, idempotently: used by the guard, the
//! emergency restorer and `latscope restore`.

use super::state::{boot_id, state_dir, state_files, IrqOriginal, IsolationState};
use super::MOVE_PASSES;
use crate::sys::cpuset::{self, CpusetMount};
use crate::sys::{affinity, irq, procfs};
use crate::units::format_cpu_list;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Attempts to remove a just-emptied cpuset (10 ms apart).
const RMDIR_TRIES: u32 = 100;

/// What one restore did.
#[derive(Debug, Clone, Default)]
pub struct RestoreSummary {
    pub tasks_returned: usize,
    pub affinities_reset: usize,
    pub dirs_removed: usize,
    pub knobs_reset: usize,
    pub irqs_reset: usize,
    pub problems: Vec<String>,
}

fn move_all_out(from_file: &Path, to_file: &Path, summary: &mut RestoreSummary) {
    for _ in 0..MOVE_PASSES {
        let Ok(tids) = cpuset::task_ids(from_file) else {
            return;
        };
        if tids.is_empty() {
            return;
        }
        for tid in tids {
            match cpuset::move_task(to_file, tid) {
                Ok(()) => summary.tasks_returned += 1,
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => summary
                    .problems
                    .push(format!("task {tid} stays in {}: {e}", from_file.display())),
            }
        }
    }
}

/// Removes a cgroup directory whose tasks were just moved out; the kernel answers EBUSY
/// until the last of them has really left, so this retries for up to a second.
fn remove_dir_when_empty(dir: &Path) -> std::io::Result<()> {
    let mut tries = 0;
    loop {
        match cpuset::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < RMDIR_TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Undoes everything `state` records, idempotently: tasks back to the root (or home)
/// cgroup, created cpusets removed, knobs and IRQ affinities written back where they
/// differ from the original. Best effort: every failure is listed, none stops the rest.
pub fn restore_state(state: &IsolationState) -> RestoreSummary {
    let mut summary = RestoreSummary::default();
    let mount = state.mount();
    let root = mount.root().to_path_buf();
    for dir in state.created_dirs.iter().rev() {
        if !dir.is_dir() {
            continue;
        }
        match &mount {
            CpusetMount::V1 { .. } => {
                move_all_out(&dir.join("tasks"), &root.join("tasks"), &mut summary)
            }
            CpusetMount::V2 { .. } => {
                // Give the CPUs back to the parent before the cgroup goes.
                let _ = cpuset::write_value(&mount.knob(dir, "cpus.partition"), "member");
                let home = state
                    .v2_home
                    .as_ref()
                    .map(|h| root.join(h))
                    .filter(|h| h.is_dir())
                    .unwrap_or_else(|| root.clone());
                move_all_out(
                    &dir.join("cgroup.procs"),
                    &home.join("cgroup.procs"),
                    &mut summary,
                )
            }
        }
        match remove_dir_when_empty(dir) {
            Ok(()) => summary.dirs_removed += 1,
            Err(e) => summary
                .problems
                .push(format!("cannot remove {}: {e}", dir.display())),
        }
    }
    if state.v2_enabled_controller {
        let control = root.join("cgroup.subtree_control");
        let on =
            cpuset::read_value(&control).is_ok_and(|v| v.split_whitespace().any(|c| c == "cpuset"));
        if on {
            match cpuset::write_value(&control, "-cpuset") {
                Ok(()) => summary.knobs_reset += 1,
                Err(e) => summary.problems.push(format!(
                    "cannot disable cpuset in {}: {e}",
                    control.display()
                )),
            }
        }
    }
    for knob in state.knobs.iter().rev() {
        match cpuset::read_value(&knob.path) {
            Ok(now) if now == knob.original => {}
            Ok(_) => match cpuset::write_value(&knob.path, &knob.original) {
                Ok(()) => summary.knobs_reset += 1,
                Err(e) => summary.problems.push(format!(
                    "cannot write '{}' back to {}: {e}",
                    knob.original,
                    knob.path.display()
                )),
            },
            Err(e) => summary
                .problems
                .push(format!("cannot read {}: {e}", knob.path.display())),
        }
    }
    for task in &state.moved_tasks {
        if !procfs::is_same_task(task.tid, task.start_time) || task.affinity.is_empty() {
            continue;
        }
        if affinity::get_affinity(task.tid).is_ok_and(|now| now != task.affinity)
            && affinity::set_affinity(task.tid, &task.affinity).is_ok()
        {
            summary.affinities_reset += 1;
        }
    }
    restore_irqs(&state.irqs, &mut summary);
    if let Some(mask) = &state.irq_default_affinity {
        if irq::default_affinity().is_ok_and(|now| now != *mask) {
            match irq::set_default_affinity(mask) {
                Ok(()) => summary.irqs_reset += 1,
                Err(e) => summary.problems.push(format!(
                    "cannot set the default IRQ affinity back to {mask}: {e}"
                )),
            }
        }
    }
    summary
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

/// Reads a state file and restores it; removes the file when everything was restored.
pub fn restore_from_file(path: &Path) -> anyhow::Result<RestoreSummary> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let state: IsolationState =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let summary = restore_state(&state);
    if summary.problems.is_empty() {
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    Ok(summary)
}

/// One line of `latscope restore` output per state file or leftover cpuset.
#[derive(Debug, Clone)]
pub struct RestoreOutcome {
    pub message: String,
    pub ok: bool,
}

/// `latscope restore`: undoes the isolation of every run that left a state file and is
/// no longer running (all of them with `force`), and removes leftover `latscope-PID-*`
/// cpusets of dead processes.
pub fn restore_all(force: bool) -> anyhow::Result<Vec<RestoreOutcome>> {
    let mut outcomes = Vec::new();
    let mut dirs = vec![state_dir()];
    for d in ["/run/latscope", "/var/tmp/latscope"] {
        if !dirs.iter().any(|x| x == Path::new(d)) {
            dirs.push(PathBuf::from(d));
        }
    }
    for dir in dirs {
        for path in state_files(&dir) {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let state: IsolationState = serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", path.display()))?;
            if !state.boot_id.is_empty() && state.boot_id != boot_id() {
                // A reboot undid every change; writing old values now would be wrong.
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
                outcomes.push(RestoreOutcome {
                    message: format!(
                        "{} was written before the last reboot, which already undid its changes; removed it",
                        path.display()
                    ),
                    ok: true,
                });
                continue;
            }
            if !force && procfs::is_running_task(state.pid, state.pid_start_time) {
                outcomes.push(RestoreOutcome {
                    message: format!(
                        "run {} is still running and will restore its own isolation; stop it first (or use --force): {}",
                        state.pid,
                        path.display()
                    ),
                    ok: false,
                });
                continue;
            }
            let summary = restore_state(&state);
            let ok = summary.problems.is_empty();
            if ok {
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
            }
            let mut message = format!(
                "restored the isolation of run {} ({}, CPU {}): {} tasks returned, {} affinities reset, {} cpusets removed, {} cpuset values reset, {} IRQ affinities reset",
                state.pid,
                state.mechanism,
                format_cpu_list(&state.isolated_cpus),
                summary.tasks_returned,
                summary.affinities_reset,
                summary.dirs_removed,
                summary.knobs_reset,
                summary.irqs_reset
            );
            for p in &summary.problems {
                message.push_str(&format!("\n  not restored: {p}"));
            }
            outcomes.push(RestoreOutcome { message, ok });
        }
    }
    outcomes.extend(remove_orphan_cpusets(force));
    Ok(outcomes)
}

/// The PID in a cpuset name latscope makes (`latscope-PID-rt`, `latscope-PID-system`).
fn owner_of(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("latscope-")?;
    let (pid, role) = rest.split_once('-')?;
    matches!(role, "rt" | "system").then_some(())?;
    pid.parse().ok()
}

/// Removes `latscope-PID-*` cpusets whose process is gone (no state file described them).
fn remove_orphan_cpusets(force: bool) -> Vec<RestoreOutcome> {
    let Some(mount) = cpuset::find_mount() else {
        return Vec::new();
    };
    let root = mount.root().to_path_buf();
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut dirs: Vec<(PathBuf, i32)> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| {
            let owner = p.file_name().and_then(|n| n.to_str()).and_then(owner_of)?;
            Some((p, owner))
        })
        .collect();
    dirs.sort();
    for (dir, owner) in dirs {
        let alive = procfs::task_stat(owner).is_some_and(|s| s.state != 'Z' && s.state != 'X');
        if alive && !force {
            continue;
        }
        let mut summary = RestoreSummary::default();
        let tasks_file = match &mount {
            CpusetMount::V1 { .. } => "tasks",
            CpusetMount::V2 { .. } => "cgroup.procs",
        };
        move_all_out(&dir.join(tasks_file), &root.join(tasks_file), &mut summary);
        let removed = remove_dir_when_empty(&dir);
        out.push(RestoreOutcome {
            message: match &removed {
                Ok(()) => format!(
                    "removed leftover cpuset {} ({} tasks returned to the root)",
                    dir.display(),
                    summary.tasks_returned
                ),
                Err(e) => format!("cannot remove leftover cpuset {}: {e}", dir.display()),
            },
            ok: removed.is_ok(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::owner_of;

    #[test]
    fn recognizes_only_its_own_cpuset_names() {
        assert_eq!(owner_of("latscope-123-rt"), Some(123));
        assert_eq!(owner_of("latscope-123-system"), Some(123));
        assert_eq!(owner_of("latscope-abc-rt"), None);
        assert_eq!(owner_of("latscope-123-other"), None);
        assert_eq!(owner_of("docker"), None);
    }
}
