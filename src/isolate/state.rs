//! The state file of an isolation: every original value, written before it is changed,
//! so the changes of a killed run can be undone later (`latscope restore`); and the
//! tally of one such undo. Terminal records (`terminal.rs`) live in the same directory.

use super::MOVE_PASSES;
use crate::sys::cpuset::{self, CpusetMount};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the state file layout.
pub(super) const STATE_VERSION: u32 = 1;

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
    pub(super) fn mount(&self) -> CpusetMount {
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

/// An isolation's state and the file it is saved to: every change is recorded and saved
/// here before it is made, so each knob file changes the machine only through it.
#[derive(Debug)]
pub(super) struct StateFile {
    pub(super) state: IsolationState,
    pub(super) path: PathBuf,
}

impl StateFile {
    /// Writes the state to its file (atomically).
    pub(super) fn save(&self) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.state)?;
        crate::output::atomic::write_atomically(&self.path, &bytes)
            .with_context(|| format!("writing {}", self.path.display()))
    }

    /// Records the original value of `path` (once) in the state file, then writes `value`.
    pub(super) fn set_knob(&mut self, path: &Path, value: &str) -> anyhow::Result<()> {
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

    /// Records `dir` as created (removed on restore), then creates the cpuset.
    pub(super) fn make_dir(&mut self, dir: &Path) -> anyhow::Result<()> {
        self.state.created_dirs.push(dir.to_path_buf());
        self.save()?;
        cpuset::make_dir(dir)
    }
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

impl RestoreSummary {
    /// Moves every task listed in `from_file` to the cgroup of `to_file`, sweeping again
    /// for tasks forked meanwhile; tasks that exited are skipped, refusals listed.
    pub(super) fn move_all_out(&mut self, from_file: &Path, to_file: &Path) {
        for _ in 0..MOVE_PASSES {
            let Ok(tids) = cpuset::task_ids(from_file) else {
                return;
            };
            if tids.is_empty() {
                return;
            }
            for tid in tids {
                match cpuset::move_task(to_file, tid) {
                    Ok(()) => self.tasks_returned += 1,
                    Err(e) if cpuset::task_exited(&e) => {}
                    Err(e) => self
                        .problems
                        .push(format!("task {tid} stays in {}: {e}", from_file.display())),
                }
            }
        }
    }
}

/// The directory that holds state files: /run/latscope, or /var/tmp/latscope without /run.
pub fn state_dir() -> PathBuf {
    if Path::new("/run").is_dir() {
        PathBuf::from("/run/latscope")
    } else {
        PathBuf::from("/var/tmp/latscope")
    }
}

/// This boot's random id (/proc/sys/kernel/random/boot_id).
pub(super) fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub(super) fn state_files(dir: &Path) -> Vec<PathBuf> {
    state_files_named(dir, "isolation-")
}

/// `latscope restore` of one kind of record: every `PREFIX*.json` file in `dirs` read
/// into `T` and handed to `restore`; a file that cannot be read is an outcome of its own
/// (not restored), so one broken record never hides the others.
pub(super) fn restore_each<T: serde::de::DeserializeOwned>(
    dirs: &[PathBuf],
    prefix: &str,
    mut restore: impl FnMut(&Path, T) -> super::report::RestoreOutcome,
) -> Vec<super::report::RestoreOutcome> {
    let mut outcomes = Vec::new();
    for dir in dirs {
        for path in state_files_named(dir, prefix) {
            let read = std::fs::read_to_string(&path)
                .map_err(anyhow::Error::from)
                .and_then(|t| serde_json::from_str(&t).map_err(anyhow::Error::from));
            outcomes.push(match read {
                Ok(state) => restore(&path, state),
                Err(e) => super::report::RestoreOutcome::done(
                    format!("cannot read {}: {e}", path.display()),
                    false,
                ),
            });
        }
    }
    outcomes
}

/// The `PREFIX*.json` files in `dir`, sorted (isolation states, terminal records).
pub(super) fn state_files_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".json"))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}
