//! The isolation guard: orchestrates the knobs (cpuset v1 or v2 shield, IRQ affinity,
//! unbound workqueue mask) in order, and restores everything when dropped or through
//! the emergency restorer of a second Ctrl-C.

use super::report::IsolationReport;
use super::restore::{restore_from_file, restore_state};
use super::state::{boot_id, state_dir, state_files, IsolationState, StateFile, STATE_VERSION};
use super::workqueue;
use super::{active, check_available, validate_cpus};
use super::{boot_isolation_params, cpu_list_of_file, cpuset_v1, cpuset_v2, irq_affinity};
use crate::error::UserError;
use crate::sys::cpuset::CpusetMount;
use crate::sys::{affinity, filelock::FileLock, procfs};
use crate::units::format_cpu_list;
use anyhow::{anyhow, Context};
use std::path::Path;

/// Holds an isolation; restores everything when dropped.
#[derive(Debug)]
pub struct IsolationGuard {
    file: StateFile,
    report: IsolationReport,
    restorer_key: Option<u64>,
    restored: bool,
    _lock: FileLock,
}

/// The machine-wide isolation lock in `dir` (created if missing). Busy: another run holds
/// it, or a killed run left its state file (then `latscope restore` comes first).
fn take_isolation_lock(dir: &Path) -> anyhow::Result<FileLock> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let lock = FileLock::try_exclusive(&dir.join("isolate.lock"))
        .with_context(|| format!("locking {}", dir.join("isolate.lock").display()))?
        .ok_or_else(|| {
            UserError::Busy(format!(
                "another latscope run is isolating CPUs right now (it holds {}); wait for it to finish",
                dir.join("isolate.lock").display()
            ))
        })?;
    if let Some(stale) = state_files(dir).first() {
        return Err(UserError::Busy(format!(
            "a latscope run that was killed left its isolation in place ({}); run `latscope restore` first",
            stale.display()
        ))
        .into());
    }
    Ok(lock)
}

/// The state file's content before anything is changed: who isolates what, how.
fn initial_state(
    mount: &CpusetMount,
    pid: i32,
    isolated: &[usize],
    system: &[usize],
) -> IsolationState {
    let pid_start_time = procfs::task_stat(pid).map_or(0, |s| s.start_time);
    let (v1_prefix, root) = match mount {
        CpusetMount::V1 { root, prefix } => (prefix.clone(), root.clone()),
        CpusetMount::V2 { root } => (String::new(), root.clone()),
    };
    IsolationState {
        version: STATE_VERSION,
        pid,
        pid_start_time,
        boot_id: boot_id(),
        mechanism: mount.mechanism().into(),
        cpuset_root: root,
        v1_prefix,
        isolated_cpus: isolated.to_vec(),
        system_cpus: system.to_vec(),
        created_dirs: Vec::new(),
        knobs: Vec::new(),
        v2_enabled_controller: false,
        v2_home: None,
        irqs: Vec::new(),
        irq_default_affinity: None,
        moved_tasks: Vec::new(),
    }
}

/// The report before anything is changed, with the boot-time isolation beside it.
fn initial_report(
    mount: &CpusetMount,
    isolated: &[usize],
    system: &[usize],
    state_path: &Path,
) -> IsolationReport {
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    IsolationReport {
        mechanism: mount.mechanism().into(),
        isolated_cpus: isolated.to_vec(),
        system_cpus: system.to_vec(),
        boot_isolcpus: cpu_list_of_file("/sys/devices/system/cpu/isolated"),
        boot_nohz_full: cpu_list_of_file("/sys/devices/system/cpu/nohz_full"),
        boot_params: boot_isolation_params(&cmdline),
        state_file: state_path.display().to_string(),
        ..Default::default()
    }
}

/// A note when some of `isolated` were already isolated at boot (isolcpus).
fn note_boot_isolated(report: &mut IsolationReport, isolated: &[usize]) {
    let overlap: Vec<usize> = isolated
        .iter()
        .copied()
        .filter(|c| report.boot_isolcpus.contains(c))
        .collect();
    if !overlap.is_empty() {
        report.notes.push(format!(
            "CPU {} already isolated at boot (isolcpus); --isolate adds the cpuset shield and IRQ moves on top",
            format_cpu_list(&overlap)
        ));
    }
}

impl IsolationGuard {
    /// Isolates `cpus`: validates them, takes the machine-wide isolation lock, records
    /// every original value in the state file before changing it, then builds the
    /// shield and moves tasks and IRQs. Any failure restores what was done.
    pub fn apply(cpus: &[usize]) -> anyhow::Result<Self> {
        let online = affinity::online_cpus();
        let mut isolated = cpus.to_vec();
        isolated.sort_unstable();
        isolated.dedup();
        let system = validate_cpus(&isolated, &online)?;
        let mount = check_available()?;
        let dir = state_dir();
        let lock = take_isolation_lock(&dir)?;
        let pid = std::process::id() as i32;
        let state = initial_state(&mount, pid, &isolated, &system);
        let state_path = dir.join(format!("isolation-{pid}.json"));
        let report = initial_report(&mount, &isolated, &system, &state_path);
        let mut guard = IsolationGuard {
            file: StateFile {
                state,
                path: state_path.clone(),
            },
            report,
            restorer_key: None,
            restored: false,
            _lock: lock,
        };
        guard.file.save()?;
        guard.restorer_key = Some(crate::interrupt::register_restorer(move || {
            if let Err(e) = restore_from_file(&state_path) {
                eprintln!("latscope: restoring the isolation failed: {e:#}");
            }
        }));
        note_boot_isolated(&mut guard.report, &isolated);
        let (file, report) = (&mut guard.file, &mut guard.report);
        let shield = match &mount {
            CpusetMount::V1 { .. } => cpuset_v1::shield(file, report, &mount)?,
            CpusetMount::V2 { .. } => cpuset_v2::shield(file, report, &mount)?,
        };
        *active()
            .lock()
            .map_err(|_| anyhow!("isolation state lock poisoned"))? = Some(shield);
        irq_affinity::move_irqs(file, report)?;
        workqueue::confine_unbound(file, report);
        workqueue::recheck_unbound_kthreads(&file.state.isolated_cpus, report);
        Ok(guard)
    }

    /// What the isolation did.
    pub fn report(&self) -> &IsolationReport {
        &self.report
    }

    /// The report as JSON for `scenario.isolation`.
    pub fn report_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.report).unwrap_or(serde_json::Value::Null)
    }

    /// Whether someone else (`latscope restore --force`) undid this isolation while it was
    /// held: its state file is gone before this guard restored it. Marks the report.
    pub fn removed_under_run(&mut self) -> bool {
        if !self.restored && !self.file.path.exists() {
            self.report.removed_during_run = true;
        }
        self.report.removed_during_run
    }

    /// Restores now (also done by Drop); returns what could not be restored.
    pub fn restore(&mut self) -> Vec<String> {
        if self.restored {
            return Vec::new();
        }
        self.restored = true;
        if let Ok(mut a) = active().lock() {
            *a = None;
        }
        let summary = restore_state(&self.file.state);
        if summary.problems.is_empty() {
            let _ = std::fs::remove_file(&self.file.path);
        }
        if let Some(key) = self.restorer_key.take() {
            crate::interrupt::unregister_restorer(key);
        }
        summary.problems
    }
}

impl Drop for IsolationGuard {
    fn drop(&mut self) {
        for p in self.restore() {
            eprintln!("latscope: warning: isolation not fully restored: {p} (the state file stays; run `latscope restore`)");
        }
    }
}
