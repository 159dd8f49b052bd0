//! The interval files of a long-term report (`latscope report DIR` or `report
//! DIR/watch-*.json`): which inputs ask for the long-term view, and a directory's result
//! files listed in name order (watch's names sort by time).

use crate::error::UserError;
use std::path::{Path, PathBuf};

/// Whether `report`'s inputs ask for the long-term view: `--long-term`, a directory, or
/// several files all named as `latscope watch` names its intervals (`watch-*.json`).
pub fn long_term_wanted(flag: bool, first: &Path, more: &[PathBuf]) -> bool {
    let watch_name = |p: &PathBuf| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        name.starts_with("watch-") && name.ends_with(".json")
    };
    flag || first.is_dir()
        || (!more.is_empty()
            && std::iter::once(&first.to_path_buf())
                .chain(more)
                .all(watch_name))
}

/// The files of the view: each input file as given, each directory's `*.json` files in
/// name order; an error naming a directory without any.
pub fn interval_paths(first: &Path, more: &[PathBuf]) -> Result<Vec<PathBuf>, UserError> {
    let mut paths = Vec::new();
    for p in std::iter::once(first).chain(more.iter().map(PathBuf::as_path)) {
        if !p.is_dir() {
            paths.push(p.to_path_buf());
            continue;
        }
        let unreadable = |e: std::io::Error| UserError::BadInputFile {
            path: p.display().to_string(),
            reason: format!("cannot list the directory: {e}"),
        };
        let mut found: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(unreadable)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "json"))
            .collect();
        if found.is_empty() {
            return Err(UserError::BadInputFile {
                path: p.display().to_string(),
                reason: "no result files (*.json) in this directory; give the directory `latscope watch --dir` writes to, or the files themselves".into(),
            });
        }
        found.sort();
        paths.extend(found);
    }
    Ok(paths)
}
