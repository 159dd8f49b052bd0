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
    files: Arc<RunFiles>,
    restorer: u64,
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
        let status_files: Vec<PathBuf> = Path::new("/dev/shm")
            .is_dir()
            .then(|| status.clone())
            .into_iter()
            .collect();
        let fifos: Vec<PathBuf> = fifo.map(Path::to_path_buf).into_iter().collect();
        let files = Arc::new(RunFiles::record(status_files.clone(), fifos)?);
        let for_restorer = files.clone();
        let restorer = crate::interrupt::register_restorer(move || for_restorer.remove());
        let status_file = status_files.into_iter().find(|path| {
            let _ = std::fs::remove_file(path);
            crate::sys::new_file::create_exclusive_nofollow(path).is_ok()
        });
        let made = Self {
            status_file,
            files,
            restorer,
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
        self.files.remove();
        crate::interrupt::unregister_restorer(self.restorer);
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
