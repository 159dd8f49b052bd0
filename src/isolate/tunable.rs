//! Runtime tunables set for one measurement (`doctor --try rt-throttling`, `thp`,
//! `governor`, ...): plain /proc and /sys files, each original value recorded in a state
//! file (`tunable-PID.json` beside the isolation state files) before it is changed, and
//! written back by the guard's Drop, the emergency restorer of a second signal, and
//! `latscope restore` after a killed run — only while the file still holds what latscope
//! wrote, so a value someone set since is never overwritten.

use super::report::RestoreOutcome;
use super::state::{boot_id, state_dir, state_files_named};
use crate::error::UserError;
use crate::sys::{filelock::FileLock, procfs};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the tunable state layout.
const TUNABLE_VERSION: u32 = 1;

/// State files of tunables start with this.
const PREFIX: &str = "tunable-";

/// One file to set and the value to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub value: String,
}

/// A file latscope changed: its value before, and what latscope wrote (as read back).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TunableOriginal {
    pub path: PathBuf,
    pub original: String,
    pub applied: String,
}

/// What `latscope restore` needs to put the tunables of a killed run back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TunableState {
    pub version: u32,
    pub pid: i32,
    pub pid_start_time: u64,
    pub boot_id: String,
    /// What the change is for (`doctor --try rt-throttling`).
    pub label: String,
    /// Files in the order they were changed (restored in reverse).
    pub knobs: Vec<TunableOriginal>,
}

/// The value a tunable file holds: its text trimmed, or the bracketed choice of a
/// selection file (`always [madvise] never` -> `madvise`).
pub fn read_setting(path: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    let text = text.trim();
    Ok(match (text.find('['), text.find(']')) {
        (Some(a), Some(b)) if a < b => text[a + 1..b].to_string(),
        _ => text.to_string(),
    })
}

fn write_setting(path: &Path, value: &str) -> std::io::Result<()> {
    use std::io::Write;
    // O_TRUNC as `echo >` does: /proc and /sys ignore it, a fixture tree's files need it.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    file.write_all(value.as_bytes())
}

/// Holds tunables changed; writes their originals back when dropped.
#[derive(Debug)]
pub struct TunableGuard {
    state: TunableState,
    path: PathBuf,
    restorer_key: Option<u64>,
    restored: bool,
    _lock: FileLock,
}

/// The lock on tunables in `dir`; busy while another run holds some, or a killed run's
/// state file waits for `latscope restore`.
fn take_lock(dir: &Path) -> anyhow::Result<FileLock> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = dir.join("tunable.lock");
    let lock = FileLock::try_exclusive(&name)
        .with_context(|| format!("locking {}", name.display()))?
        .ok_or_else(|| {
            UserError::Busy(format!(
                "another latscope run is changing kernel tunables right now (it holds {}); wait for it to finish",
                name.display()
            ))
        })?;
    if let Some(stale) = state_files_named(dir, PREFIX).first() {
        return Err(UserError::Busy(format!(
            "a latscope run that was killed left kernel tunables changed ({}); run `latscope restore` first",
            stale.display()
        ))
        .into());
    }
    Ok(lock)
}

impl TunableGuard {
    /// Sets `changes` (state file in the usual directory, `/run/latscope`).
    pub fn apply(label: &str, changes: &[Change]) -> anyhow::Result<Self> {
        Self::apply_in(&state_dir(), label, changes)
    }

    /// Records each original in a state file in `dir`, then sets each file; any failure
    /// writes back what was done. A file already at its value is left untouched.
    pub fn apply_in(dir: &Path, label: &str, changes: &[Change]) -> anyhow::Result<Self> {
        let lock = take_lock(dir)?;
        let pid = std::process::id() as i32;
        let path = dir.join(format!("{PREFIX}{pid}.json"));
        let mut guard = TunableGuard {
            state: TunableState {
                version: TUNABLE_VERSION,
                pid,
                pid_start_time: procfs::task_stat(pid).map_or(0, |s| s.start_time),
                boot_id: boot_id(),
                label: label.to_string(),
                knobs: Vec::new(),
            },
            path: path.clone(),
            restorer_key: None,
            restored: false,
            _lock: lock,
        };
        guard.save()?;
        guard.restorer_key = Some(crate::interrupt::register_restorer(move || {
            let (message, _) = restore_file(&path, true);
            eprintln!("latscope: {message}");
        }));
        for c in changes {
            guard.set(c)?;
        }
        Ok(guard)
    }

    fn save(&self) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.state)?;
        crate::output::atomic::write_atomically(&self.path, &bytes)
            .with_context(|| format!("writing {}", self.path.display()))
    }

    fn set(&mut self, c: &Change) -> anyhow::Result<()> {
        let original =
            read_setting(&c.path).with_context(|| format!("reading {}", c.path.display()))?;
        if original == c.value {
            return Ok(());
        }
        self.state.knobs.push(TunableOriginal {
            path: c.path.clone(),
            original,
            applied: c.value.clone(),
        });
        self.save()?;
        write_setting(&c.path, &c.value)
            .with_context(|| format!("writing '{}' to {}", c.value, c.path.display()))?;
        // The kernel may normalize what it was given (`0-1` for `0,1`): restore compares
        // with what it reads back.
        let now = read_setting(&c.path).unwrap_or_else(|_| c.value.clone());
        if let Some(k) = self.state.knobs.last_mut() {
            k.applied = now;
        }
        self.save()
    }

    /// The files changed, with their originals.
    pub fn changed(&self) -> &[TunableOriginal] {
        &self.state.knobs
    }

    /// Writes every original back now (also done by Drop); returns what could not be.
    pub fn restore(&mut self) -> Vec<String> {
        if self.restored {
            return Vec::new();
        }
        self.restored = true;
        let problems = restore_knobs(&self.state).1;
        if problems.is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
        if let Some(key) = self.restorer_key.take() {
            crate::interrupt::unregister_restorer(key);
        }
        problems
    }
}

impl Drop for TunableGuard {
    fn drop(&mut self) {
        for p in self.restore() {
            eprintln!("latscope: warning: tunable not restored: {p} (the state file stays; run `latscope restore`)");
        }
    }
}

/// Writes back each original whose file still holds what latscope wrote; (how many were
/// written back, problems).
fn restore_knobs(state: &TunableState) -> (usize, Vec<String>) {
    let mut written = 0;
    let mut problems = Vec::new();
    for k in state.knobs.iter().rev() {
        match read_setting(&k.path) {
            Ok(now) if now == k.original => {}
            Ok(now) if now != k.applied => {} // set by someone else since: theirs stays
            Ok(_) => match write_setting(&k.path, &k.original) {
                Ok(()) => written += 1,
                Err(e) => problems.push(format!(
                    "cannot write '{}' back to {}: {e}",
                    k.original,
                    k.path.display()
                )),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => problems.push(format!("cannot read {}: {e}", k.path.display())),
        }
    }
    (written, problems)
}

/// `latscope restore`: the tunables every killed run left (all runs' with `force`).
pub fn restore_tunables(dirs: &[PathBuf], force: bool) -> Vec<RestoreOutcome> {
    let mut outcomes = Vec::new();
    for dir in dirs {
        for path in state_files_named(dir, PREFIX) {
            outcomes.push(restore_outcome(&path, force));
        }
    }
    outcomes
}

fn restore_outcome(path: &Path, force: bool) -> RestoreOutcome {
    let state = match read_state(path) {
        Ok(s) => s,
        Err(e) => return RestoreOutcome::done(format!("{e:#}"), false),
    };
    if !force && procfs::is_running_task(state.pid, state.pid_start_time) {
        return RestoreOutcome::done(
            format!(
                "run {} is still running and will put its tunables back itself; stop it first (or use --force): {}",
                state.pid,
                path.display()
            ),
            false,
        );
    }
    if crate::sys::process::effective_uid() != 0 && !state.knobs.is_empty() {
        return RestoreOutcome::needs_root(format!(
            "run {} left kernel tunables changed ({})",
            state.pid,
            path.display()
        ));
    }
    let (message, ok) = restore_file(path, force);
    RestoreOutcome::done(message, ok)
}

fn read_state(path: &Path) -> anyhow::Result<TunableState> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Restores the state file at `path` and removes it when done; (what happened, done).
fn restore_file(path: &Path, _force: bool) -> (String, bool) {
    let state = match read_state(path) {
        Ok(s) => s,
        Err(e) => return (format!("{e:#}"), false),
    };
    if !state.boot_id.is_empty() && state.boot_id != boot_id() {
        let _ = std::fs::remove_file(path);
        return (format!("the tunables run {} changed ({}) were undone by the last reboot; removed its record", state.pid, state.label), true);
    }
    let (written, problems) = restore_knobs(&state);
    if problems.is_empty() {
        let _ = std::fs::remove_file(path);
    }
    let files: Vec<String> = state
        .knobs
        .iter()
        .map(|k| format!("{} = {}", k.path.display(), k.original))
        .collect();
    let mut message = format!(
        "put back the tunables of run {} ({}): {} written back{}",
        state.pid,
        state.label,
        written,
        if files.is_empty() {
            String::new()
        } else {
            format!(" ({})", files.join(", "))
        }
    );
    for p in &problems {
        message.push_str(&format!("\n  not restored: {p}"));
    }
    (message, problems.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn reads_the_bracketed_choice() {
        let d = tempfile::tempdir().unwrap();
        let p = knob(d.path(), "enabled", "always [madvise] never\n");
        assert_eq!(read_setting(&p).unwrap(), "madvise");
        let p = knob(d.path(), "n", "950000\n");
        assert_eq!(read_setting(&p).unwrap(), "950000");
    }

    #[test]
    fn restores_on_drop_and_after_a_kill() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        let a = knob(d.path(), "a", "1\n");
        let b = knob(d.path(), "b", "0\n");
        let changes = [
            Change {
                path: a.clone(),
                value: "0".into(),
            },
            Change {
                path: b.clone(),
                value: "0".into(),
            },
        ];
        let g = TunableGuard::apply_in(&state, "test", &changes).unwrap();
        assert_eq!(g.changed().len(), 1, "b already 0: untouched");
        assert_eq!(read_setting(&a).unwrap(), "0");
        drop(g);
        assert_eq!(read_setting(&a).unwrap(), "1");
        assert!(state_files_named(&state, PREFIX).is_empty());
        // A kill: the guard never drops; the next guard refuses until restored.
        std::mem::forget(TunableGuard::apply_in(&state, "test", &changes).unwrap());
        assert_eq!(read_setting(&a).unwrap(), "0");
        let err = TunableGuard::apply_in(&state, "test", &changes).unwrap_err();
        assert!(format!("{err:#}").contains("tunables"), "{err:#}");
        let out = restore_tunables(std::slice::from_ref(&state), true);
        assert!(
            out[0].ok && out[0].message.contains("1 written back"),
            "{:?}",
            out[0]
        );
        assert_eq!(read_setting(&a).unwrap(), "1");
        assert!(state_files_named(&state, PREFIX).is_empty());
    }

    #[test]
    fn leaves_a_value_set_by_someone_else() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        let a = knob(d.path(), "a", "60\n");
        let g = TunableGuard::apply_in(
            &state,
            "test",
            &[Change {
                path: a.clone(),
                value: "10".into(),
            }],
        )
        .unwrap();
        std::fs::write(&a, "30").unwrap();
        drop(g);
        assert_eq!(read_setting(&a).unwrap(), "30");
    }
}
