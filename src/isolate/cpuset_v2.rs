//! The cgroup v2 shield: an isolated partition `latscope-PID-rt` (every other cgroup
//! loses its CPUs at once, no task is moved); and undoing it (the partition handed back,
//! its processes sent home, the cpuset controller disabled again if latscope enabled it).

use super::report::IsolationReport;
use super::state::{IsolationState, RestoreSummary, StateFile};
use super::{short_error, Active};
use crate::sys::cpuset::{self, CpusetMount};
use crate::sys::{affinity, procfs};
use crate::units::format_cpu_list;
use anyhow::{anyhow, Context};
use std::path::Path;

/// Builds the v2 shield: enables the cpuset controller in the root if needed, creates
/// the partition (exclusive CPUs where the kernel has them, `isolated` where it knows
/// it, else `root`). Returns where the shield is.
pub(super) fn shield(
    file: &mut StateFile,
    report: &mut IsolationReport,
    mount: &CpusetMount,
) -> anyhow::Result<Active> {
    let root = mount.root().to_path_buf();
    let pid = file.state.pid;
    let isolated = file.state.isolated_cpus.clone();
    let control = root.join("cgroup.subtree_control");
    let enabled = cpuset::read_value(&control).context("reading cgroup.subtree_control")?;
    if !enabled.split_whitespace().any(|c| c == "cpuset") {
        file.state.v2_enabled_controller = true;
        file.save()?;
        cpuset::set(&control, "+cpuset")?;
    }
    let rt_dir = root.join(format!("latscope-{pid}-rt"));
    file.make_dir(&rt_dir)?;
    cpuset::set(&mount.knob(&rt_dir, "cpus"), &format_cpu_list(&isolated))?;
    // Since 6.7 exclusive CPUs take priority over siblings' cpuset.cpus when a
    // partition forms; older kernels have no such file and use cpuset.cpus.
    let exclusive = mount.knob(&rt_dir, "cpus.exclusive");
    if exclusive.exists() {
        if let Err(e) = cpuset::write_value(&exclusive, &format_cpu_list(&isolated)) {
            report.notes.push(format!(
                "cpuset.cpus.exclusive refused ({}); partition from cpuset.cpus",
                short_error(&e)
            ));
        }
    }
    let partition = mount.knob(&rt_dir, "cpus.partition");
    if cpuset::write_value(&partition, "isolated").is_err() {
        // Kernels before 5.15 know only `root` partitions (load-balanced).
        cpuset::set(&partition, "root")?;
        report
            .notes
            .push("this kernel has no isolated partitions; used a root partition".into());
    }
    let result = cpuset::read_value(&partition).unwrap_or_default();
    if result.contains("invalid") {
        return Err(anyhow!(
            "the kernel made {} '{result}': another cgroup claims CPU {} exclusively",
            partition.display(),
            format_cpu_list(&isolated)
        ));
    }
    file.state.v2_home = cpuset::v2_cgroup_of(pid);
    file.save()?;
    report.notes.push(
        "cgroup v2 partition: every other cgroup lost the isolated CPUs at once, no task was moved"
            .into(),
    );
    report.kthreads_staying = kthreads_on(&isolated);
    Ok(Active {
        mount: mount.clone(),
        rt_dir,
        isolated,
        system: file.state.system_cpus.clone(),
        home: file.state.v2_home.clone(),
    })
}

/// Kernel threads whose affinity includes one of `cpus` (for v2, where nothing is moved).
fn kthreads_on(cpus: &[usize]) -> Vec<String> {
    let mut names = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return names;
    };
    for e in rd.filter_map(Result::ok) {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Some(stat) = procfs::task_stat(pid) else {
            continue;
        };
        if !stat.kernel_thread {
            continue;
        }
        let allowed = affinity::get_affinity(pid).unwrap_or_default();
        if !allowed.is_empty() && allowed.iter().all(|c| cpus.contains(c)) {
            names.push(stat.comm);
        }
    }
    names.sort();
    names
}

/// Empties a partition latscope created: its CPUs go back to the parent first, then its
/// processes to the cgroup latscope came from (the root if that is gone).
pub(super) fn empty_partition(
    mount: &CpusetMount,
    dir: &Path,
    state: &IsolationState,
    summary: &mut RestoreSummary,
) {
    let root = mount.root();
    // Give the CPUs back to the parent before the cgroup goes.
    let _ = cpuset::write_value(&mount.knob(dir, "cpus.partition"), "member");
    let home = state
        .v2_home
        .as_ref()
        .map(|h| root.join(h))
        .filter(|h| h.is_dir())
        .unwrap_or_else(|| root.to_path_buf());
    summary.move_all_out(&dir.join("cgroup.procs"), &home.join("cgroup.procs"));
}

/// Disables the cpuset controller in the root's cgroup.subtree_control again (when
/// latscope enabled it and it is still on).
pub(super) fn disable_controller(root: &Path, summary: &mut RestoreSummary) {
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
