//! The `--export-*` destinations of a command: which format goes to which file (`-` is
//! stdout), checked before measuring and written after every scenario.

use super::{Format, RenderOptions};
use crate::error::UserError;
use crate::result::Run;
use anyhow::Context;
use std::path::{Path, PathBuf};

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
        crate::result::check_writable(p).map_err(|e| UserError::Unwritable {
            path: format!("{} ({option})", p.display()),
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// Renders and writes every export; stdout ones only when `include_stdout`.
pub fn write(
    exports: &[Export],
    run: &Run,
    opts: &RenderOptions,
    include_stdout: bool,
) -> anyhow::Result<()> {
    for e in exports {
        if e.to_stdout() && !include_stdout {
            continue;
        }
        let bytes = super::reporter(e.format, opts)
            .render(run)
            .with_context(|| format!("rendering {}", e.format.flag()))?;
        write_bytes(&e.path, &bytes)?;
    }
    Ok(())
}

/// Writes bytes atomically to a file, or to stdout for `-`.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::result::write_atomically(path, bytes)
        .with_context(|| format!("writing {}", path.display()))
}
