//! Undoing an isolation from its recorded state, idempotently (each knob's undo in
//! reverse order of applying): used by the guard, the emergency restorer and
//! `latscope restore`, which also removes leftover cpusets of dead runs and puts back
//! the terminal settings of their serial loads (`terminal.rs`), the tunables of
//! `doctor --try` (`tunable.rs`) and the files `latscope cyclictest` makes
//! (`run_files.rs`).

use super::report::RestoreOutcome;
use super::state::{boot_id, state_files, IsolationState, RestoreSummary};
use super::{cpuset_v1, cpuset_v2, irq_affinity};
use crate::sys::cpuset::{self, CpusetMount};
use crate::sys::procfs;
use crate::units::format_cpu_list;
use anyhow::Context;
use std::path::{Path, PathBuf};

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
            CpusetMount::V1 { .. } => cpuset_v1::empty_cpuset(dir, &root, &mut summary),
            CpusetMount::V2 { .. } => cpuset_v2::empty_partition(&mount, dir, state, &mut summary),
        }
        match cpuset::remove_dir_when_empty(dir) {
            Ok(()) => summary.dirs_removed += 1,
            Err(e) => summary
                .problems
                .push(format!("cannot remove {}: {e}", dir.display())),
        }
    }
    if state.v2_enabled_controller {
        cpuset_v2::disable_controller(&root, &mut summary);
    }
    // Every knob recorded in the state file (narrowed cpusets, sched_load_balance, the
    // workqueue mask), in reverse order of change.
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
    cpuset_v1::reset_affinities(&state.moved_tasks, &mut summary);
    irq_affinity::restore(
        &state.irqs,
        state.irq_default_affinity.as_deref(),
        &mut summary,
    );
    summary
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

/// `latscope restore`: undoes the isolation of every run that left a state file and is
/// no longer running (all of them with `force`), removes leftover `latscope-PID-*`
/// cpusets of dead processes, and puts back the terminal settings serial loads left.
pub fn restore_all(force: bool) -> anyhow::Result<Vec<RestoreOutcome>> {
    let mut outcomes = Vec::new();
    let dirs = super::terminal::record_dirs();
    for dir in &dirs {
        for path in state_files(dir) {
            outcomes.push(restore_state_file(&path, force)?);
        }
    }
    outcomes.extend(remove_orphan_cpusets(force));
    outcomes.extend(super::terminal::restore_terminals(&dirs, force));
    outcomes.extend(super::tunable::restore_tunables(&dirs, force));
    outcomes.extend(super::run_files::restore_run_files(&dirs, force));
    Ok(outcomes)
}

/// One state file of `restore_all`: removed when a reboot undid it, left to a run still
/// going (unless `force`), refused without root, else restored and removed.
fn restore_state_file(path: &Path, force: bool) -> anyhow::Result<RestoreOutcome> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Ok(RestoreOutcome::needs_root(format!(
                "{} records a run's isolation",
                path.display()
            )));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let state: IsolationState =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    if !state.boot_id.is_empty() && state.boot_id != boot_id() {
        // A reboot undid every change; writing old values now would be wrong.
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
        return Ok(RestoreOutcome::done(
            format!(
                "{} was written before the last reboot, which already undid its changes; removed it",
                path.display()
            ),
            true,
        ));
    }
    if !force && procfs::is_running_task(state.pid, state.pid_start_time) {
        return Ok(RestoreOutcome::done(
            format!(
                "run {} is still running and will restore its own isolation; stop it first (or use --force): {}",
                state.pid,
                path.display()
            ),
            false,
        ));
    }
    if crate::sys::process::effective_uid() != 0 {
        // Every write would fail with EACCES: one line instead of hundreds.
        return Ok(RestoreOutcome::needs_root(format!(
            "run {} left its isolation of CPU {} ({})",
            state.pid,
            format_cpu_list(&state.isolated_cpus),
            path.display()
        )));
    }
    let live = procfs::is_running_task(state.pid, state.pid_start_time);
    let summary = restore_state(&state);
    let ok = summary.problems.is_empty();
    if ok {
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    Ok(RestoreOutcome::done(
        restored_message(&state, &summary, live && ok),
        ok,
    ))
}

/// What was restored, counted; `still_measuring`: the run goes on without its isolation.
fn restored_message(
    state: &IsolationState,
    summary: &RestoreSummary,
    still_measuring: bool,
) -> String {
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
    if still_measuring {
        message.push_str(&format!(
            "; run {} is still measuring: its result will say its isolation was removed (warning isolation_removed_during_run)",
            state.pid
        ));
    }
    for p in &summary.problems {
        message.push_str(&format!("\n  not restored: {p}"));
    }
    message
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
        if crate::sys::process::effective_uid() != 0 {
            out.push(RestoreOutcome::needs_root(format!(
                "leftover cpuset {}",
                dir.display()
            )));
            continue;
        }
        let mut summary = RestoreSummary::default();
        let tasks_file = match &mount {
            CpusetMount::V1 { .. } => "tasks",
            CpusetMount::V2 { .. } => "cgroup.procs",
        };
        summary.move_all_out(&dir.join(tasks_file), &root.join(tasks_file));
        let removed = cpuset::remove_dir_when_empty(&dir);
        out.push(RestoreOutcome::done(
            match &removed {
                Ok(()) => format!(
                    "removed leftover cpuset {} ({} tasks returned to the root)",
                    dir.display(),
                    summary.tasks_returned
                ),
                Err(e) => format!("cannot remove leftover cpuset {}: {e}", dir.display()),
            },
            removed.is_ok(),
        ));
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
