//! The `--export-*` destinations of a command: which format goes to which file (`-` is
//! stdout), checked before measuring, locked for the whole run (every output file of
//! every command, so two never write into each other's files: `claim`) and written after
//! every scenario.

use crate::error::UserError;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// The output formats of `latscope report --format` and the `--export-*` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    Html,
    Junit,
    Lava,
}

impl Format {
    /// Every format, in `--help`'s order.
    pub const ALL: [Format; 7] = [
        Format::Table,
        Format::Json,
        Format::Csv,
        Format::Markdown,
        Format::Html,
        Format::Junit,
        Format::Lava,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Junit => "junit",
            Format::Lava => "lava",
        }
    }

    /// The flag that exports this format.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Table => "--format table",
            Format::Json => "--export-json",
            Format::Csv => "--export-csv",
            Format::Markdown => "--export-markdown",
            Format::Html => "--export-html",
            Format::Junit => "--export-junit",
            Format::Lava => "--export-lava",
        }
    }
}

/// One export: a format and where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub format: Format,
    pub path: PathBuf,
}

impl Export {
    pub fn to_stdout(&self) -> bool {
        self.path.as_os_str() == "-"
    }
}

/// Checks that every export can be written and that at most one goes to stdout.
pub fn check(exports: &[Export]) -> Result<(), UserError> {
    check_destinations(exports)?;
    check_writable(exports)
}

/// Checks as typed that at most one export goes to stdout (touches no file).
pub fn check_destinations(exports: &[Export]) -> Result<(), UserError> {
    let to_stdout: Vec<&str> = exports
        .iter()
        .filter(|e| e.to_stdout())
        .map(|e| e.format.flag())
        .collect();
    if to_stdout.len() > 1 {
        return Err(UserError::InvalidValue {
            option: to_stdout.join(" and "),
            value: "-".into(),
            reason: "only one export can go to stdout; give the others a file name".into(),
        });
    }
    Ok(())
}

/// Checks that every export's file can be written, before measuring.
pub fn check_writable(exports: &[Export]) -> Result<(), UserError> {
    for e in exports {
        check_output_path(e.format.flag(), &Some(e.path.clone()))?;
    }
    Ok(())
}

/// Checks an output path (`option` names it in the error) before measuring.
pub fn check_output_path(option: &str, path: &Option<PathBuf>) -> Result<(), UserError> {
    if let Some(p) = path {
        crate::output::atomic::check_writable(p).map_err(|e| UserError::Unwritable {
            path: format!("{} ({option})", p.display()),
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// The lock beside an output file (`DIR/.NAME.lock`), held for the whole run.
pub fn lock_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// The held lock of an output file; its lock file is removed when the run ends, so no
/// `.NAME.lock` stays beside the result (a `kill -9` leaves it: harmless, as the flock
/// died with the process). A third run that opened the file just before the removal could
/// lock the unlinked file beside a fourth that creates a new one: a window of
/// microseconds between runs started on the same path at once, accepted for no litter.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
    _lock: crate::sys::filelock::FileLock,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether an output is locked: a file, or nothing yet (followed through a link). `-`,
/// devices and FIFOs are written in place, and many runs may share them (/dev/null).
fn is_locked_kind(path: &Path) -> bool {
    if path.as_os_str() == "-" {
        return false;
    }
    match std::fs::metadata(path) {
        Ok(m) => m.is_file(),
        Err(_) => true,
    }
}

/// Takes the lock of every output file (`(option, path)`: `--export-json`, the other
/// exports, `--raw`, the drop-in's `--json`) before anything is measured or written.
/// Refuses two options naming one file (exit 2), an output another run is writing (exit
/// 5, the lock is held) and a lock name that is not a regular file (exit 2: opening a
/// FIFO there would block). Never waits.
pub fn lock_outputs(outputs: &[(&str, &Path)]) -> anyhow::Result<Vec<OutputLock>> {
    let mut locks: Vec<(String, PathBuf, OutputLock)> = Vec::new();
    for &(option, path) in outputs {
        if !is_locked_kind(path) {
            continue;
        }
        let lock_path = lock_path(path);
        let same = std::path::absolute(&lock_path).unwrap_or_else(|_| lock_path.clone());
        if let Some((first, _, _)) = locks.iter().find(|(_, p, _)| *p == same) {
            return Err(UserError::InvalidValue {
                option: format!("{first} and {option}"),
                value: path.display().to_string(),
                reason: "both would write this file, each over the other; give each its own file"
                    .into(),
            }
            .into());
        }
        let lock = take_lock(option, path, &lock_path)?;
        locks.push((option.to_string(), same, lock));
    }
    Ok(locks.into_iter().map(|(_, _, lock)| lock).collect())
}

/// Takes one output's lock, or says why not.
fn take_lock(option: &str, path: &Path, lock_path: &Path) -> anyhow::Result<OutputLock> {
    use crate::sys::filelock::{not_a_regular_file, FileLock};
    match FileLock::try_exclusive(lock_path) {
        Ok(Some(lock)) => Ok(OutputLock {
            path: lock_path.to_path_buf(),
            _lock: lock,
        }),
        Ok(None) => Err(UserError::Busy(format!(
            "{} is being written by another latscope run (it holds {}); wait for it or choose another {option} path",
            path.display(),
            lock_path.display()
        ))
        .into()),
        Err(e) => match not_a_regular_file(&e) {
            Some(kind) => Err(UserError::Unsafe {
                what: format!("{} (the lock of {option} {})", lock_path.display(), path.display()),
                why: format!("{kind} (a lock file is one; opening this could block the run)"),
                fix: format!("remove it, or choose another {option} path"),
            }
            .into()),
            None => Err(anyhow::Error::new(e)
                .context(format!("locking {} for {option}", lock_path.display()))),
        },
    }
}

/// What every command that writes files does before it reads or measures anything:
/// each export checked (writable, at most one on stdout) and locked until the returned
/// locks are dropped, so two commands never write into each other's files (issue 34,
/// item 3: `report -o`, `compare --export-*` and doctor's exports took no lock).
pub fn claim(exports: &[Export]) -> anyhow::Result<Vec<OutputLock>> {
    check(exports)?;
    let outputs: Vec<(&str, &Path)> = exports
        .iter()
        .map(|e| (e.format.flag(), e.path.as_path()))
        .collect();
    lock_outputs(&outputs)
}

/// `claim` for outputs named by option (`--export-json`), each given or not.
pub fn claim_paths(outputs: &[(&str, &Option<PathBuf>)]) -> anyhow::Result<Vec<OutputLock>> {
    let given: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|(option, path)| Some((*option, path.as_deref()?)))
        .collect();
    for (option, path) in &given {
        check_output_path(option, &Some(path.to_path_buf()))?;
    }
    lock_outputs(&given)
}

/// Writes bytes atomically to a file, or to stdout for `-`.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::output::atomic::write_atomically(path, bytes)
        .with_context(|| format!("writing {}", path.display()))
}
