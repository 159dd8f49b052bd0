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

use super::cpuset::{self, CpusetMount};
use super::{affinity, filelock::FileLock, irq, procfs};
use crate::error::UserError;
use crate::units::format_cpu_list;
use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Version of the state file layout.
const STATE_VERSION: u32 = 1;
/// The CPUs unbound workqueue workers may use (a hex mask).
const WORKQUEUE_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";
/// Attempts to remove a just-emptied cpuset (10 ms apart).
const RMDIR_TRIES: u32 = 100;
/// How often the root cpuset is swept for tasks forked while moving the others.
const MOVE_PASSES: usize = 4;

/// A knob latscope changed, with the value it had before.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct KnobOriginal {
    pub path: PathBuf,
    pub original: String,
}

/// An IRQ whose affinity latscope changed, with the list it had before.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct IrqOriginal {
    pub irq: u32,
    pub affinity_list: String,
    /// Where the kernel delivered it (effective_affinity_list), so restore can put it
    /// back on the same CPU rather than wherever the kernel would pick.
    #[serde(default)]
    pub effective: Option<String>,
}

/// A task moved out of the root cpuset, with its affinity before the move.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TaskOriginal {
    pub tid: i32,
    pub start_time: u64,
    pub affinity: Vec<usize>,
}

/// Everything needed to undo an isolation, written before each change is made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IsolationState {
    pub version: u32,
    /// The latscope process that made the changes, and its start time.
    pub pid: i32,
    pub pid_start_time: u64,
    /// The boot the changes were made in; after a reboot they are gone already.
    #[serde(default)]
    pub boot_id: String,
    /// `cgroup-v1` or `cgroup-v2`.
    pub mechanism: String,
    pub cpuset_root: PathBuf,
    /// v1 knob prefix (`cpuset.` or empty); unused for v2.
    pub v1_prefix: String,
    pub isolated_cpus: Vec<usize>,
    pub system_cpus: Vec<usize>,
    /// Cpusets created, in creation order (removed in reverse).
    pub created_dirs: Vec<PathBuf>,
    /// Knobs changed, in the order they were changed (restored in reverse).
    pub knobs: Vec<KnobOriginal>,
    /// v2: latscope enabled the cpuset controller in the root's cgroup.subtree_control.
    #[serde(default)]
    pub v2_enabled_controller: bool,
    /// v2: the cgroup (relative to the root) latscope's process came from.
    #[serde(default)]
    pub v2_home: Option<PathBuf>,
    pub irqs: Vec<IrqOriginal>,
    pub irq_default_affinity: Option<String>,
    pub moved_tasks: Vec<TaskOriginal>,
}

impl IsolationState {
    fn mount(&self) -> CpusetMount {
        match self.mechanism.as_str() {
            "cgroup-v2" => CpusetMount::V2 {
                root: self.cpuset_root.clone(),
            },
            _ => CpusetMount::V1 {
                root: self.cpuset_root.clone(),
                prefix: self.v1_prefix.clone(),
            },
        }
    }
}

/// A task that stayed in the root cpuset.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UnmovableTask {
    pub tid: i32,
    pub comm: String,
    pub cpus: String,
    pub kernel_thread: bool,
    pub reason: String,
}

/// An IRQ whose affinity was changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct MovedIrq {
    pub irq: u32,
    pub name: String,
    pub from: String,
    pub to: String,
}

/// An IRQ the kernel would not move.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UnmovableIrq {
    pub irq: u32,
    pub name: String,
    pub affinity: String,
    pub reason: String,
}

/// What an isolation did; stored in the result as `scenario.isolation`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IsolationReport {
    /// `cgroup-v1` or `cgroup-v2`.
    pub mechanism: String,
    pub isolated_cpus: Vec<usize>,
    pub system_cpus: Vec<usize>,
    pub moved_tasks: usize,
    pub unmovable_tasks: Vec<UnmovableTask>,
    /// Per-CPU kernel threads bound to isolated CPUs, which stay (e.g. `ksoftirqd/1`).
    pub kthreads_staying: Vec<String>,
    /// Unbound kernel threads the kernel would not move that may still run on the
    /// isolated CPUs (kthreadd, workqueue rescuers).
    pub unbound_kthreads_staying: Vec<String>,
    /// The unbound-workqueue CPU mask, before -> after, when changed.
    pub workqueue_cpumask: Option<String>,
    pub moved_irqs: Vec<MovedIrq>,
    pub unmovable_irqs: Vec<UnmovableIrq>,
    /// The default affinity of new IRQs, before -> after, when changed.
    pub default_irq_affinity: Option<String>,
    /// Existing cpusets whose CPUs were narrowed to leave the isolated CPUs alone.
    pub narrowed_cpusets: Vec<String>,
    /// CPUs isolated and nohz_full at boot, and the kernel parameters that did it.
    pub boot_isolcpus: Vec<usize>,
    pub boot_nohz_full: Vec<usize>,
    pub boot_params: Vec<String>,
    pub notes: Vec<String>,
    pub state_file: String,
}

impl IsolationReport {
    /// What still reaches the isolated CPUs, as warnings for the scenario.
    pub fn warnings(&self) -> Vec<crate::result::Warning> {
        let mut w = Vec::new();
        let cpus = format_cpu_list(&self.isolated_cpus);
        if !self.unmovable_irqs.is_empty() {
            let list: Vec<String> = self
                .unmovable_irqs
                .iter()
                .map(|i| format!("{} {} ({})", i.irq, i.name, i.reason))
                .collect();
            w.push(crate::result::Warning {
                code: "isolation_irqs_stay".into(),
                message: format!(
                    "the kernel would not move IRQ {} off CPU {cpus}; these interrupts still reach the isolated CPUs",
                    list.join(", ")
                ),
            });
        }
        if !self.kthreads_staying.is_empty() {
            w.push(crate::result::Warning {
                code: "isolation_kthreads_stay".into(),
                message: format!(
                    "{} per-CPU kernel threads stay on isolated CPU {cpus} ({}); the kernel binds them there",
                    self.kthreads_staying.len(),
                    self.kthreads_staying.join(", ")
                ),
            });
        }
        w
    }
}

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
        CpusetMount::V1 { .. } => (a.rt_dir.join("tasks"), super::sched::gettid()),
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

/// The directory that holds state files: /run/latscope, or /var/tmp/latscope without /run.
pub fn state_dir() -> PathBuf {
    if Path::new("/run").is_dir() {
        PathBuf::from("/run/latscope")
    } else {
        PathBuf::from("/var/tmp/latscope")
    }
}

/// An OS error without the ` (os error N)` tail, for reports people read.
fn short_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// This boot's random id (/proc/sys/kernel/random/boot_id).
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn state_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("isolation-") && n.ends_with(".json"))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
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
            capability: "root".into(),
            fix: "no --isolate".into(),
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
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("latscope-"))
        })
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let owner = name
            .trim_start_matches("latscope-")
            .split('-')
            .next()
            .and_then(|p| p.parse::<i32>().ok());
        let alive = owner.is_some_and(|pid| {
            procfs::task_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
        });
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
