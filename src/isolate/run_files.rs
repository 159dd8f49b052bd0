//! Files a run creates outside its outputs and removes when it ends: `latscope
//! cyclictest`'s /dev/shm/cyclictestPID status file (read by rt-tests'
//! get_cyclictest_snapshot, which sends SIGUSR2 to the PID in every such name: a file
//! left by a dead run would have it signal whatever process gets that PID next) and its
//! `-F` named pipe. Recorded (`files-PID.json` beside the isolation state files) before
//! they are made, so `latscope restore` removes them after a SIGKILL; removed by the
//! run itself on every other exit path (`RunFiles::remove`, and the emergency restorer).

use super::report::RestoreOutcome;
use super::state::{boot_id, state_dir};
use crate::sys::procfs;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Record files start with this.
const PREFIX: &str = "files-";

/// What a run made, as recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFilesState {
    pub pid: i32,
    pub pid_start_time: u64,
    pub boot_id: String,
    /// The status file (`/dev/shm/cyclictestPID`): removed unless a live process has the
    /// PID its name ends with.
    pub status_files: Vec<PathBuf>,
    /// Named pipes: removed while they still are named pipes.
    pub fifos: Vec<PathBuf>,
}

/// The record on disk while the run holds the files.
#[derive(Debug)]
pub struct RunFiles {
    state: RunFilesState,
    record: PathBuf,
}

impl RunFiles {
    /// Records `status_files` and `fifos` before the caller creates them.
    pub fn record(status_files: Vec<PathBuf>, fifos: Vec<PathBuf>) -> anyhow::Result<Self> {
        let dir = state_dir();
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let pid = std::process::id() as i32;
        let files = Self {
            state: RunFilesState {
                pid,
                pid_start_time: procfs::task_stat(pid).map_or(0, |s| s.start_time),
                boot_id: boot_id(),
                status_files,
                fifos,
            },
            record: dir.join(format!("{PREFIX}{pid}.json")),
        };
        let bytes = serde_json::to_vec_pretty(&files.state)?;
        crate::output::atomic::write_atomically(&files.record, &bytes)
            .with_context(|| format!("writing {}", files.record.display()))?;
        Ok(files)
    }

    /// Removes the files and the record (idempotent; the emergency restorer calls it too).
    pub fn remove(&self) {
        remove_files(&self.state, true);
        let _ = std::fs::remove_file(&self.record);
    }
}

/// Removes what `state` lists; `ours`: this process made them and is ending.
fn remove_files(state: &RunFilesState, ours: bool) -> usize {
    let mut removed = 0;
    for path in &state.status_files {
        let pid_now_running = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| n.trim_start_matches(|c: char| !c.is_ascii_digit()))
            .is_some_and(|pid| Path::new("/proc").join(pid).exists());
        if (ours || !pid_now_running) && std::fs::remove_file(path).is_ok() {
            removed += 1;
        }
    }
    for path in &state.fifos {
        if crate::sys::fifo::is_fifo(path) && std::fs::remove_file(path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// `latscope restore`: the files of every run that is gone (all runs' with `force`).
pub fn restore_run_files(dirs: &[PathBuf], force: bool) -> Vec<RestoreOutcome> {
    super::state::restore_each(dirs, PREFIX, |path, state| restore_file(path, state, force))
}

fn restore_file(path: &Path, state: RunFilesState, force: bool) -> RestoreOutcome {
    if !force && procfs::is_running_task(state.pid, state.pid_start_time) {
        return RestoreOutcome::done(
            format!(
                "run {} is still running and will remove its own files; stop it first (or use --force): {}",
                state.pid,
                path.display()
            ),
            false,
        );
    }
    let listed: Vec<String> = state
        .status_files
        .iter()
        .chain(&state.fifos)
        .map(|p| p.display().to_string())
        .collect();
    let removed = if state.boot_id.is_empty() || state.boot_id == boot_id() {
        remove_files(&state, false)
    } else {
        0
    };
    let _ = std::fs::remove_file(path);
    RestoreOutcome::done(
        format!(
            "removed {removed} of the files run {} left ({})",
            state.pid,
            listed.join(", ")
        ),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_runs_files_go_and_a_live_pids_status_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        crate::sys::fifo::make_fifo(&fifo).unwrap();
        let mine = std::process::id();
        let live = dir.path().join(format!("cyclictest{mine}"));
        let dead = dir.path().join("cyclictest999999999");
        for p in [&live, &dead] {
            std::fs::write(p, "").unwrap();
        }
        let state = RunFilesState {
            pid: 999_999_999,
            pid_start_time: 0,
            boot_id: boot_id(),
            status_files: vec![live.clone(), dead.clone()],
            fifos: vec![fifo.clone()],
        };
        let record = dir.path().join("files-999999999.json");
        std::fs::write(&record, serde_json::to_vec(&state).unwrap()).unwrap();
        let outcomes = restore_run_files(&[dir.path().to_path_buf()], false);
        assert_eq!(outcomes.len(), 1);
        assert!(live.exists(), "a live process has that PID: its file stays");
        assert!(!dead.exists() && !fifo.exists() && !record.exists());
    }
}
