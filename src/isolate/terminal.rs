//! The settings of a terminal a `serial:…,dev=PATH` load changes, recorded before the
//! change (`terminal-PID-DEVICE.json` beside the isolation state files) so that
//! `latscope restore` puts them back after a killed run — only while the terminal still
//! has what latscope set, so a later user's settings (or another pty that got the same
//! number) are never overwritten.

use super::report::RestoreOutcome;
use super::state::{boot_id, state_dir};
use crate::sys::procfs;
use crate::sys::tty::{self, Termios, TermiosFields, TtyOpenError};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the terminal record layout.
const TERMINAL_VERSION: u32 = 1;

/// State files of terminals start with this.
const PREFIX: &str = "terminal-";

/// What `latscope restore` needs to put a terminal's settings back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TerminalState {
    pub version: u32,
    /// The latscope process that changed them, and its start time.
    pub pid: i32,
    pub pid_start_time: u64,
    /// The boot they were changed in; after a reboot they are gone already.
    pub boot_id: String,
    /// The device as the load named it (`dev=`), and its device number.
    pub device: PathBuf,
    pub rdev: u64,
    /// The settings as found.
    pub original: TermiosFields,
    /// What latscope set (as asked, and as the driver then reported): restore writes the
    /// original back only over one of these.
    pub applied: Vec<TermiosFields>,
}

/// A terminal's record on disk while a load holds it; removed once the settings are
/// back (`remove`).
#[derive(Debug)]
pub struct TerminalRecord {
    state: TerminalState,
    path: PathBuf,
}

impl TerminalRecord {
    /// Writes the record of `device` (its settings `original`, about to be changed to
    /// `intended`) before anything is changed.
    pub fn write(
        device: &Path,
        rdev: u64,
        original: &Termios,
        intended: &Termios,
    ) -> anyhow::Result<Self> {
        let dir = state_dir();
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let pid = std::process::id() as i32;
        let record = Self {
            state: TerminalState {
                version: TERMINAL_VERSION,
                pid,
                pid_start_time: procfs::task_stat(pid).map_or(0, |s| s.start_time),
                boot_id: boot_id(),
                device: device.to_path_buf(),
                rdev,
                original: original.fields(),
                applied: vec![intended.fields()],
            },
            path: dir.join(format!("{PREFIX}{pid}-{rdev}.json")),
        };
        record.save()?;
        Ok(record)
    }

    /// Adds the settings the driver reports after the change (it may round some).
    pub fn applied(&mut self, reported: &Termios) -> anyhow::Result<()> {
        let fields = reported.fields();
        if !self.state.applied.contains(&fields) {
            self.state.applied.push(fields);
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.state)?;
        crate::output::atomic::write_atomically(&self.path, &bytes)
            .with_context(|| format!("writing {}", self.path.display()))
    }

    /// The settings are back: the record goes.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `latscope restore`: the terminal settings every killed run left (all runs' with
/// `force`), one outcome each.
pub fn restore_terminals(dirs: &[PathBuf], force: bool) -> Vec<RestoreOutcome> {
    super::state::restore_each(dirs, PREFIX, |path, state| restore_file(path, state, force))
}

fn restore_file(path: &Path, state: TerminalState, force: bool) -> RestoreOutcome {
    if !force && procfs::is_running_task(state.pid, state.pid_start_time) {
        return RestoreOutcome::done(
            format!(
                "run {} is still running and will put back the settings of {} itself; stop it first (or use --force): {}",
                state.pid,
                state.device.display(),
                path.display()
            ),
            false,
        );
    }
    let (message, done) = restore_state(&state);
    if done {
        let _ = std::fs::remove_file(path);
    }
    RestoreOutcome::done(message, done)
}

/// Puts one terminal's settings back; (what happened, whether the record is settled).
fn restore_state(state: &TerminalState) -> (String, bool) {
    let device = state.device.display();
    let run = state.pid;
    if !state.boot_id.is_empty() && state.boot_id != boot_id() {
        return (format!("the settings run {run} gave {device} were undone by the last reboot; removed its record"), true);
    }
    let located = match tty::locate_tty(&state.device) {
        Ok(l) if l.rdev == state.rdev => l,
        Ok(_) => {
            return (
                format!(
                "{device} is another device now; left it as it is (run {run}'s terminal is gone)"
            ),
                true,
            )
        }
        Err(TtyOpenError::Open(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return (
                format!("{device} is gone (run {run}'s serial load terminal); nothing to put back"),
                true,
            )
        }
        Err(e) => {
            return (
                format!("cannot open {device}: {e}; its settings stay as run {run} left them"),
                false,
            )
        }
    };
    let (Some(original), Ok(fd)) = (Termios::from_fields(&state.original), located.open()) else {
        return (
            format!("cannot open {device} to put its settings back (run {run})"),
            false,
        );
    };
    let current = match tty::get_termios(&fd) {
        Ok(c) => c,
        Err(e) => return (format!("cannot read the settings of {device}: {e}"), false),
    };
    if current.same_as(&original) {
        return (
            format!("{device} already has its settings from before run {run}"),
            true,
        );
    }
    let ours = state
        .applied
        .iter()
        .filter_map(Termios::from_fields)
        .any(|a| a.same_as(&current));
    if !ours {
        return (format!("{device} was set to other settings since run {run} changed it; left them as they are"), true);
    }
    match tty::restore_termios(&fd, &original) {
        Ok(()) => (
            format!(
                "put back the terminal settings of {device} that run {run}'s serial load changed ({} baud, as before)",
                original.output_baud().map_or("non-standard".to_string(), |b| b.to_string())
            ),
            true,
        ),
        Err(e) => (format!("cannot write the settings of {device} back: {e}"), false),
    }
}

/// The directories `latscope restore` reads records from.
pub(super) fn record_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![state_dir()];
    for d in ["/run/latscope", "/var/tmp/latscope"] {
        if !dirs.iter().any(|x| x == Path::new(d)) {
            dirs.push(PathBuf::from(d));
        }
    }
    dirs
}
