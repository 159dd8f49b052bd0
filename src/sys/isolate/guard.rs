//! The isolation guard: builds the shield (cgroup v1 or v2), moves tasks, IRQs and
//! unbound workqueues off the isolated CPUs, and restores everything when dropped.

use super::report::{IsolationReport, MovedIrq, UnmovableIrq, UnmovableTask};
use super::state::{
    boot_id, state_files, IrqOriginal, IsolationState, KnobOriginal, TaskOriginal, STATE_VERSION,
};
use super::{active, check_available, short_error, validate_cpus, Active, MOVE_PASSES};
use super::{boot_isolation_params, cpu_list_of_file, restore_from_file, restore_state, state_dir};
use crate::error::UserError;
use crate::sys::cpuset::{self, CpusetMount};
use crate::sys::{affinity, filelock::FileLock, irq, procfs};
use crate::units::format_cpu_list;
use anyhow::{anyhow, Context};
use std::path::{Path, PathBuf};

/// The CPUs unbound workqueue workers may use (a hex mask).
const WORKQUEUE_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";

/// Holds an isolation; restores everything when dropped.
#[derive(Debug)]
pub struct IsolationGuard {
    state: IsolationState,
    state_path: PathBuf,
    report: IsolationReport,
    restorer_key: Option<u64>,
    restored: bool,
    _lock: FileLock,
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
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let lock = FileLock::try_exclusive(&dir.join("isolate.lock"))
            .with_context(|| format!("locking {}", dir.join("isolate.lock").display()))?
            .ok_or_else(|| {
                UserError::Other(format!(
                    "another latscope run is isolating CPUs right now (it holds {}); wait for it to finish",
                    dir.join("isolate.lock").display()
                ))
            })?;
        if let Some(stale) = state_files(&dir).first() {
            return Err(UserError::Other(format!(
                "a latscope run that was killed left its isolation in place ({}); run `latscope restore` first",
                stale.display()
            ))
            .into());
        }
        let pid = std::process::id() as i32;
        let pid_start_time = procfs::task_stat(pid).map_or(0, |s| s.start_time);
        let (v1_prefix, root) = match &mount {
            CpusetMount::V1 { root, prefix } => (prefix.clone(), root.clone()),
            CpusetMount::V2 { root } => (String::new(), root.clone()),
        };
        let state = IsolationState {
            version: STATE_VERSION,
            pid,
            pid_start_time,
            boot_id: boot_id(),
            mechanism: mount.mechanism().into(),
            cpuset_root: root,
            v1_prefix,
            isolated_cpus: isolated.clone(),
            system_cpus: system.clone(),
            created_dirs: Vec::new(),
            knobs: Vec::new(),
            v2_enabled_controller: false,
            v2_home: None,
            irqs: Vec::new(),
            irq_default_affinity: None,
            moved_tasks: Vec::new(),
        };
        let state_path = dir.join(format!("isolation-{pid}.json"));
        let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
        let report = IsolationReport {
            mechanism: mount.mechanism().into(),
            isolated_cpus: isolated.clone(),
            system_cpus: system.clone(),
            boot_isolcpus: cpu_list_of_file("/sys/devices/system/cpu/isolated"),
            boot_nohz_full: cpu_list_of_file("/sys/devices/system/cpu/nohz_full"),
            boot_params: boot_isolation_params(&cmdline),
            state_file: state_path.display().to_string(),
            ..Default::default()
        };
        let mut guard = IsolationGuard {
            state,
            state_path: state_path.clone(),
            report,
            restorer_key: None,
            restored: false,
            _lock: lock,
        };
        guard.save()?;
        guard.restorer_key = Some(crate::interrupt::register_restorer(move || {
            if let Err(e) = restore_from_file(&state_path) {
                eprintln!("latscope: restoring the isolation failed: {e:#}");
            }
        }));
        let overlap: Vec<usize> = isolated
            .iter()
            .copied()
            .filter(|c| guard.report.boot_isolcpus.contains(c))
            .collect();
        if !overlap.is_empty() {
            guard.report.notes.push(format!(
                "CPU {} already isolated at boot (isolcpus); --isolate adds the cpuset shield and IRQ moves on top",
                format_cpu_list(&overlap)
            ));
        }
        match &mount {
            CpusetMount::V1 { .. } => guard.shield_v1(&mount)?,
            CpusetMount::V2 { .. } => guard.shield_v2(&mount)?,
        }
        guard.move_irqs()?;
        guard.confine_unbound_workqueues();
        guard.recheck_unbound_kthreads();
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

    fn save(&self) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.state)?;
        crate::result::write_atomically(&self.state_path, &bytes)
            .with_context(|| format!("writing {}", self.state_path.display()))
    }

    /// Records the original value of `path` (once) in the state file, then writes `value`.
    fn set_knob(&mut self, path: &Path, value: &str) -> anyhow::Result<()> {
        if !self.state.knobs.iter().any(|k| k.path == path) {
            let original =
                cpuset::read_value(path).with_context(|| format!("reading {}", path.display()))?;
            if original == value {
                return Ok(());
            }
            self.state.knobs.push(KnobOriginal {
                path: path.to_path_buf(),
                original,
            });
            self.save()?;
        }
        cpuset::set(path, value)
    }

    fn make_dir(&mut self, dir: &Path) -> anyhow::Result<()> {
        self.state.created_dirs.push(dir.to_path_buf());
        self.save()?;
        cpuset::make_dir(dir)
    }

    fn shield_v1(&mut self, mount: &CpusetMount) -> anyhow::Result<()> {
        let root = mount.root().to_path_buf();
        let pid = self.state.pid;
        let isolated = self.state.isolated_cpus.clone();
        let cpus_text = format_cpu_list(&isolated);
        let system_text = format_cpu_list(&self.state.system_cpus);
        let mems = cpuset::read_value(&mount.knob(&root, "mems"))
            .context("reading the root cpuset's mems")?;
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
            self.set_knob(&knob, &format_cpu_list(&left))?;
            self.report.narrowed_cpusets.push(format!(
                "{}: {text} -> {}",
                dir.display(),
                format_cpu_list(&left)
            ));
        }
        let system_dir = root.join(format!("latscope-{pid}-system"));
        self.make_dir(&system_dir)?;
        cpuset::set(&mount.knob(&system_dir, "cpus"), &system_text)?;
        cpuset::set(&mount.knob(&system_dir, "mems"), &mems)?;
        let rt_dir = root.join(format!("latscope-{pid}-rt"));
        self.make_dir(&rt_dir)?;
        cpuset::set(&mount.knob(&rt_dir, "cpus"), &cpus_text)?;
        cpuset::set(&mount.knob(&rt_dir, "mems"), &mems)?;
        cpuset::set(&mount.knob(&rt_dir, "cpu_exclusive"), "1")?;
        // No load balancing across the shield: its CPUs leave every scheduling domain.
        cpuset::set(&mount.knob(&rt_dir, "sched_load_balance"), "0")?;
        self.set_knob(&mount.knob(&root, "sched_load_balance"), "0")?;
        self.move_root_tasks_v1(&root, &system_dir)?;
        *active()
            .lock()
            .map_err(|_| anyhow!("isolation state lock poisoned"))? = Some(Active {
            mount: mount.clone(),
            rt_dir,
            isolated,
            system: self.state.system_cpus.clone(),
            home: None,
        });
        Ok(())
    }

    /// Moves every task of the root cpuset into `system_dir`, sweeping again for tasks
    /// forked meanwhile; the ones the kernel refuses (per-CPU kthreads) are reported.
    fn move_root_tasks_v1(&mut self, root: &Path, system_dir: &Path) -> anyhow::Result<()> {
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
                        self.state.moved_tasks.push(TaskOriginal {
                            tid,
                            start_time: stat.start_time,
                            affinity: original,
                        });
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                    Err(e) => {
                        refused.insert(tid, (stat, original, short_error(&e)));
                    }
                }
            }
            self.save()?;
            if moved_now == 0 {
                break;
            }
        }
        self.report.moved_tasks = self.state.moved_tasks.len();
        let isolated = &self.state.isolated_cpus;
        for (tid, (stat, cpus, reason)) in refused {
            if stat.kernel_thread && !cpus.is_empty() {
                if cpus.iter().all(|c| isolated.contains(c)) {
                    self.report.kthreads_staying.push(stat.comm.clone());
                } else if cpus.iter().any(|c| isolated.contains(c)) {
                    self.report.unbound_kthreads_staying.push(stat.comm.clone());
                }
            }
            self.report.unmovable_tasks.push(UnmovableTask {
                tid,
                comm: stat.comm,
                cpus: format_cpu_list(&cpus),
                kernel_thread: stat.kernel_thread,
                reason,
            });
        }
        Ok(())
    }

    fn shield_v2(&mut self, mount: &CpusetMount) -> anyhow::Result<()> {
        let root = mount.root().to_path_buf();
        let pid = self.state.pid;
        let isolated = self.state.isolated_cpus.clone();
        let control = root.join("cgroup.subtree_control");
        let enabled = cpuset::read_value(&control).context("reading cgroup.subtree_control")?;
        if !enabled.split_whitespace().any(|c| c == "cpuset") {
            self.state.v2_enabled_controller = true;
            self.save()?;
            cpuset::set(&control, "+cpuset")?;
        }
        let rt_dir = root.join(format!("latscope-{pid}-rt"));
        self.make_dir(&rt_dir)?;
        cpuset::set(&mount.knob(&rt_dir, "cpus"), &format_cpu_list(&isolated))?;
        // Since 6.7 exclusive CPUs take priority over siblings' cpuset.cpus when a
        // partition forms; older kernels have no such file and use cpuset.cpus.
        let exclusive = mount.knob(&rt_dir, "cpus.exclusive");
        if exclusive.exists() {
            if let Err(e) = cpuset::write_value(&exclusive, &format_cpu_list(&isolated)) {
                self.report.notes.push(format!(
                    "cpuset.cpus.exclusive refused ({}); partition from cpuset.cpus",
                    short_error(&e)
                ));
            }
        }
        let partition = mount.knob(&rt_dir, "cpus.partition");
        if cpuset::write_value(&partition, "isolated").is_err() {
            // Kernels before 5.15 know only `root` partitions (load-balanced).
            cpuset::set(&partition, "root")?;
            self.report
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
        self.state.v2_home = cpuset::v2_cgroup_of(pid);
        self.save()?;
        self.report.notes.push(
            "cgroup v2 partition: every other cgroup lost the isolated CPUs at once, no task was moved"
                .into(),
        );
        self.report.kthreads_staying = kthreads_on(&isolated);
        *active()
            .lock()
            .map_err(|_| anyhow!("isolation state lock poisoned"))? = Some(Active {
            mount: mount.clone(),
            rt_dir,
            isolated,
            system: self.state.system_cpus.clone(),
            home: self.state.v2_home.clone(),
        });
        Ok(())
    }

    /// Moves every IRQ that may run on an isolated CPU to the remaining CPUs, and points
    /// the default affinity of new IRQs there too.
    fn move_irqs(&mut self) -> anyhow::Result<()> {
        let isolated = self.state.isolated_cpus.clone();
        let system = self.state.system_cpus.clone();
        let mut plan = Vec::new();
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
            let left: Vec<usize> = cpus.into_iter().filter(|c| !isolated.contains(c)).collect();
            let target = format_cpu_list(if left.is_empty() { &system } else { &left });
            self.state.irqs.push(IrqOriginal {
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
            self.state.irq_default_affinity = default.clone();
        }
        self.save()?;
        for (n, from, to) in plan {
            match irq::set_affinity_list(n, &to) {
                Ok(()) => self.report.moved_irqs.push(MovedIrq {
                    irq: n,
                    name: irq::name(n),
                    from,
                    to,
                }),
                Err(e) => self.report.unmovable_irqs.push(UnmovableIrq {
                    irq: n,
                    name: irq::name(n),
                    affinity: from,
                    reason: short_error(&e),
                }),
            }
        }
        if default_needs_change {
            let mask = irq::cpu_mask_hex(&system);
            match irq::set_default_affinity(&mask) {
                Ok(()) => {
                    self.report.default_irq_affinity =
                        Some(format!("{} -> {mask}", default.unwrap_or_default()))
                }
                Err(e) => self
                    .report
                    .notes
                    .push(format!("default IRQ affinity left as it was: {e}")),
            }
        }
        Ok(())
    }

    /// Keeps unbound workqueue workers off the shield (restored like every knob).
    fn confine_unbound_workqueues(&mut self) {
        let path = Path::new(WORKQUEUE_CPUMASK);
        let Ok(before) = cpuset::read_value(path) else {
            return;
        };
        let mask = irq::cpu_mask_hex(&self.state.system_cpus);
        match self.set_knob(path, &mask) {
            Ok(()) => {
                let after = cpuset::read_value(path).unwrap_or_default();
                if after != before {
                    self.report.workqueue_cpumask = Some(format!("{before} -> {after}"));
                }
            }
            Err(e) => self
                .report
                .notes
                .push(format!("unbound workqueues left on every CPU: {e:#}")),
        }
    }

    /// Keeps only the unbound kthreads that may still run on the shield after the
    /// workqueue mask changed (workers follow the mask, kthreadd and rescuers do not).
    fn recheck_unbound_kthreads(&mut self) {
        let isolated = self.state.isolated_cpus.clone();
        let still: Vec<i32> = self
            .report
            .unmovable_tasks
            .iter()
            .filter(|t| t.kernel_thread)
            .filter(|t| {
                affinity::get_affinity(t.tid).is_ok_and(|now| {
                    now.iter().any(|c| isolated.contains(c))
                        && !now.iter().all(|c| isolated.contains(c))
                })
            })
            .map(|t| t.tid)
            .collect();
        self.report.unbound_kthreads_staying = self
            .report
            .unmovable_tasks
            .iter()
            .filter(|t| still.contains(&t.tid))
            .map(|t| t.comm.clone())
            .collect();
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
        let summary = restore_state(&self.state);
        if summary.problems.is_empty() {
            let _ = std::fs::remove_file(&self.state_path);
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
