//! Runtime CPU isolation without a reboot (`--isolate CPUS`): an exclusive cpuset shield
//! (cgroup v2 isolated partition, else cgroup v1 `rt`/`system` cpusets), every movable
//! task and IRQ moved to the other CPUs, and everything restored exactly on every exit
//! path: the guard's Drop, an emergency restorer for the second Ctrl-C, and a state file
//! that `latscope restore` reads after a run was killed.
//!
//! Placement contract for the rest of latscope while a guard is active:
//! - measuring threads call [`enter_for_cpu`] before pinning themselves (the probe
//!   harness does this), which puts them into the shield when their CPU is isolated;
//! - load threads and child processes stay where latscope's main thread is (cgroup v1:
//!   the system set) and should use [`current_system_cpus`] as their CPUs. On cgroup v2
//!   the whole latscope process enters the partition (v2 moves processes, not threads),
//!   so loads there must be child processes moved out with [`release_process`].
//!
//! One file per kernel knob, each changing the machine only through the state file and
//! undoing its own change: `cpuset_v1`, `cpuset_v2`, `irq_affinity`, `workqueue`. The
//! guard applies them in order; `restore` undoes them in reverse.

mod cpuset_v1;
mod cpuset_v2;
mod guard;
mod irq_affinity;
pub mod irq_priority;
mod report;
mod restore;
pub mod run_files;
mod state;
mod terminal;
pub mod tunable;
mod workqueue;

pub use guard::IsolationGuard;
pub use report::RestoreOutcome;
pub use report::{IsolationReport, MovedIrq, UnmovableIrq, UnmovableTask};
pub use restore::{restore_all, restore_from_file, restore_state};
pub use state::{
    state_dir, IrqOriginal, IsolationState, KnobOriginal, RestoreSummary, TaskOriginal,
};
pub use terminal::{TerminalRecord, TerminalState};

use crate::error::UserError;
use crate::sys::cpuset::{self, CpusetMount};
use crate::sys::sched;
use crate::units::format_cpu_list;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Mutex;

/// How often a cpuset is swept for tasks forked while moving the others.
const MOVE_PASSES: usize = 4;

/// Where the shield is, for threads that must enter or avoid it.
#[derive(Debug, Clone)]
struct Active {
    mount: CpusetMount,
    rt_dir: PathBuf,
    isolated: Vec<usize>,
    system: Vec<usize>,
    home: Option<PathBuf>,
}

fn active() -> &'static Mutex<Option<Active>> {
    static ACTIVE: Mutex<Option<Active>> = Mutex::new(None);
    &ACTIVE
}

/// The CPUs left to the rest of the system while an isolation is active (`None`
/// otherwise). Loads run here: load threads started by latscope's main thread are
/// already in the system cpuset (v1), so pinning them within these CPUs works.
pub fn current_system_cpus() -> Option<Vec<usize>> {
    active().lock().ok()?.as_ref().map(|a| a.system.clone())
}

/// The CPUs of the shield while an isolation is active.
pub fn current_isolated_cpus() -> Option<Vec<usize>> {
    active().lock().ok()?.as_ref().map(|a| a.isolated.clone())
}

/// Puts the calling thread into the shield when `cpu` is isolated (call before pinning
/// to `cpu`); does nothing when no isolation is active or `cpu` is a system CPU.
/// cgroup v1 moves only this thread; cgroup v2 moves the whole process.
pub fn enter_for_cpu(cpu: usize) -> anyhow::Result<()> {
    let Some(a) = active().lock().ok().and_then(|g| g.clone()) else {
        return Ok(());
    };
    if !a.isolated.contains(&cpu) {
        return Ok(());
    }
    let (file, id) = match &a.mount {
        CpusetMount::V1 { .. } => (a.rt_dir.join("tasks"), sched::gettid()),
        CpusetMount::V2 { .. } => (a.rt_dir.join("cgroup.procs"), std::process::id() as i32),
    };
    cpuset::move_task(&file, id)
        .with_context(|| format!("entering the isolated cpuset {}", a.rt_dir.display()))
}

/// Moves child process `pid` out of the shield to the CPUs of the system (cgroup v2,
/// where latscope's whole process is in the partition); a no-op on v1 or when inactive.
pub fn release_process(pid: i32) -> anyhow::Result<()> {
    let Some(a) = active().lock().ok().and_then(|g| g.clone()) else {
        return Ok(());
    };
    if let (CpusetMount::V2 { root }, Some(home)) = (&a.mount, &a.home) {
        cpuset::move_task(&root.join(home).join("cgroup.procs"), pid)
            .with_context(|| format!("moving process {pid} out of the isolated partition"))?;
    }
    Ok(())
}

/// An OS error without the ` (os error N)` tail, for reports people read.
fn short_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Checks a requested CPU list against the online CPUs; returns the system's CPUs.
pub fn validate_cpus(isolated: &[usize], online: &[usize]) -> Result<Vec<usize>, UserError> {
    for &cpu in isolated {
        if !online.contains(&cpu) {
            return Err(UserError::InvalidValue {
                option: "--isolate".into(),
                value: format_cpu_list(isolated),
                reason: format!(
                    "CPU {cpu} is not online (online: {}); isolate online CPUs only",
                    format_cpu_list(online)
                ),
            });
        }
    }
    let system: Vec<usize> = online
        .iter()
        .copied()
        .filter(|c| !isolated.contains(c))
        .collect();
    if system.is_empty() {
        return Err(UserError::Unsafe {
            what: format!("--isolate {} (every online CPU)", format_cpu_list(isolated)),
            why: "nothing would be left for the rest of the system".into(),
            fix: "leave at least one online CPU out, e.g. --isolate 1 on a 2-CPU machine".into(),
        });
    }
    Ok(system)
}

/// Checks before measuring that isolation can work here: a cpuset hierarchy exists and
/// latscope may write it.
pub fn check_available() -> Result<CpusetMount, UserError> {
    let mount = cpuset::find_mount().ok_or_else(|| {
        UserError::Other(
            "--isolate needs the cpuset cgroup controller, but neither a cgroup v2 mount offering cpuset nor a cgroup v1 cpuset mount is in /proc/mounts; mount one (mount -t cgroup -o cpuset cpuset /sys/fs/cgroup/cpuset) or drop --isolate".into(),
        )
    })?;
    let probe = match &mount {
        CpusetMount::V1 { root, .. } => root.join("tasks"),
        CpusetMount::V2 { root } => root.join("cgroup.procs"),
    };
    if std::fs::OpenOptions::new()
        .write(true)
        .open(&probe)
        .is_err()
    {
        return Err(UserError::Permission {
            what: format!("--isolate (writing {})", probe.display()),
            capability: "root (cpusets, IRQ affinities and the workqueue mask are root's files; cap_sys_nice grants none of them)".into(),
            fix: "run with sudo, or drop --isolate".into(),
        });
    }
    Ok(mount)
}

/// Boot-time isolation parameters on the kernel command line.
pub fn boot_isolation_params(cmdline: &str) -> Vec<String> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter(|w| {
            [
                "isolcpus=",
                "nohz_full=",
                "rcu_nocbs=",
                "irqaffinity=",
                "nohz=",
            ]
            .iter()
            .any(|p| w.starts_with(p))
        })
        .map(String::from)
        .collect()
}

fn cpu_list_of_file(path: &str) -> Vec<usize> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "(null)")
        .and_then(|s| crate::units::parse_cpu_list_plain(&s).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_all_and_offline_cpus() {
        assert!(matches!(
            validate_cpus(&[0, 1], &[0, 1]),
            Err(UserError::Unsafe { .. })
        ));
        assert!(matches!(
            validate_cpus(&[5], &[0, 1]),
            Err(UserError::InvalidValue { .. })
        ));
        assert_eq!(validate_cpus(&[1], &[0, 1]).unwrap(), vec![0]);
    }

    #[test]
    fn finds_boot_params() {
        let c = "quiet isolcpus=1-3 nohz_full=1-3 rcu_nocbs=1-3 -- isolcpus=9";
        assert_eq!(
            boot_isolation_params(c),
            vec!["isolcpus=1-3", "nohz_full=1-3", "rcu_nocbs=1-3"]
        );
    }
}
