//! The files `latscope cyclictest` keeps while it runs, as cyclictest does: the status
//! file /dev/shm/cyclictestPID (rt-tests' get_cyclictest_snapshot finds running
//! instances by it and sends SIGUSR2, whose answer is written there) and the `-F` named
//! pipe. Both are recorded for `latscope restore` before they are made and removed on
//! every exit path (`StatusFiles`' Drop, the emergency restorer).

use crate::isolate::run_files::RunFiles;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The status file and named pipe of this run, removed when dropped.
pub struct StatusFiles {
    pub status_file: Option<PathBuf>,
    /// The record `latscope restore` reads (None when it could not be written).
    files: Option<Arc<RunFiles>>,
    restorer: Option<u64>,
    fifo: Option<PathBuf>,
}

/// cyclictest's status file name for process `pid`.
pub fn status_file_path(pid: u32) -> PathBuf {
    PathBuf::from(format!("/dev/shm/cyclictest{pid}"))
}

impl StatusFiles {
    /// Records, then makes, the status file (when /dev/shm is there: cyclictest goes on
    /// without it too) and the `-F` pipe (unlinked first, as cyclictest does).
    pub fn create(fifo: Option<&Path>) -> anyhow::Result<Self> {
        let status = status_file_path(std::process::id());
        let fifos: Vec<PathBuf> = fifo.map(Path::to_path_buf).into_iter().collect();
        // Without root the record cannot be written (/run/latscope): the run goes on
        // without a status file (SIGUSR2 is then ignored), as cyclictest goes on when its
        // shared memory cannot be made; a -F pipe is made all the same.
        let (files, status_files) = match RunFiles::record(vec![status.clone()], fifos.clone()) {
            Ok(files) if Path::new("/dev/shm").is_dir() => (Some(files), vec![status]),
            _ => (RunFiles::record(Vec::new(), fifos).ok(), Vec::new()),
        };
        let files = files.map(Arc::new);
        let restorer = files
            .clone()
            .map(|files| crate::interrupt::register_restorer(move || files.remove()));
        let status_file = status_files.into_iter().find(|path| {
            let _ = std::fs::remove_file(path);
            crate::sys::new_file::create_exclusive_nofollow(path).is_ok()
        });
        let made = Self {
            status_file,
            files,
            restorer,
            fifo: fifo.map(Path::to_path_buf),
        };
        if let Some(path) = fifo {
            let _ = std::fs::remove_file(path);
            crate::sys::fifo::make_fifo(path).map_err(|e| {
                anyhow::anyhow!("-F: creating the named pipe {}: {e}", path.display())
            })?;
        }
        Ok(made)
    }
}

impl Drop for StatusFiles {
    fn drop(&mut self) {
        match &self.files {
            Some(files) => files.remove(),
            None => {
                if let Some(fifo) = &self.fifo {
                    let _ = std::fs::remove_file(fifo);
                }
            }
        }
        if let Some(key) = self.restorer {
            crate::interrupt::unregister_restorer(key);
        }
    }
}

/// Replaces the status file's content with `text` (SIGUSR2's answer).
pub fn write_status_file(path: &Path, text: &str) {
    use std::io::Write;
    if let Ok(mut file) = crate::sys::new_file::overwrite_nofollow(path) {
        let _ = file.write_all(text.as_bytes());
    }
}

/// The named pipe opened for writing when a reader has it open (None without one).
pub fn open_fifo_for_reader(path: &Path) -> Option<File> {
    crate::sys::fifo::open_writer_now(path).ok()
}
