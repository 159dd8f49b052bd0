//! Advisory whole-file locks (flock), released by the kernel when the holder dies, so a
//! run killed with SIGKILL never leaves a lock behind.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// A held flock; unlocked when dropped (the file is closed).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Opens (creating) the lock file, never through a symlink planted at its name.
fn open(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
}

fn flock(file: &File, op: libc::c_int) -> io::Result<()> {
    // SAFETY: the descriptor belongs to `file`, which is open for the whole call.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

impl FileLock {
    /// Takes the exclusive lock on `path` (created if missing), waiting for it.
    pub fn exclusive(path: &Path) -> io::Result<Self> {
        let file = open(path)?;
        flock(&file, libc::LOCK_EX)?;
        Ok(Self { _file: file })
    }

    /// Takes the exclusive lock if nobody holds it; `Ok(None)` when somebody does.
    pub fn try_exclusive(path: &Path) -> io::Result<Option<Self>> {
        let file = open(path)?;
        match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
