//! Advisory whole-file locks (flock), released by the kernel when the holder dies, so a
//! run killed with SIGKILL never leaves a lock behind. Opening a lock never blocks: a
//! FIFO, device or socket planted at its name is refused, not opened (issue 22, item 2).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// A held flock; unlocked when dropped (the file is closed).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// What is at a lock's name when it is not a regular file (carried in the `io::Error`
/// of `try_exclusive`, kind `InvalidInput`; `not_a_regular_file` reads it back).
#[derive(Debug, thiserror::Error)]
#[error("it is {kind}, not a regular file")]
pub struct NotRegularFile {
    /// "a named pipe (FIFO)", "a directory", ...
    pub kind: &'static str,
}

/// The `NotRegularFile` inside an error of `try_exclusive`/`exclusive`, if that was it.
pub fn not_a_regular_file(e: &io::Error) -> Option<&NotRegularFile> {
    e.get_ref()?.downcast_ref::<NotRegularFile>()
}

/// A file type in words.
fn kind_name(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "something other than a file"
    }
}

/// The error for a lock name held by something that is no regular file (None: it is one).
fn refuse_non_regular(meta: &std::fs::Metadata) -> Option<io::Error> {
    (!meta.is_file()).then(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            NotRegularFile {
                kind: kind_name(meta.file_type()),
            },
        )
    })
}

/// Opens (creating) the lock file without ever blocking: what is at its name is looked
/// at first (a FIFO would block an open until a writer came), the open never follows a
/// symlink and never waits (O_NONBLOCK), and the opened file's type is checked again
/// (fstat), as something may have been put there in between.
fn open(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let planted = |e: io::Error| match std::fs::symlink_metadata(path) {
        Ok(m) => refuse_non_regular(&m).unwrap_or(e),
        Err(_) => e,
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            if let Some(e) = refuse_non_regular(&m) {
                return Err(e);
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .mode(0o600)
        .open(path)
        .map_err(planted)?;
    match refuse_non_regular(&file.metadata()?) {
        Some(e) => Err(e),
        None => Ok(file),
    }
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

    /// Takes the exclusive lock if nobody holds it; `Ok(None)` when somebody does. Never
    /// blocks; a lock name that is not a regular file is an `InvalidInput` error holding
    /// a `NotRegularFile`.
    pub fn try_exclusive(path: &Path) -> io::Result<Option<Self>> {
        let file = open(path)?;
        match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_at_the_lock_name_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.lock");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let e = FileLock::try_exclusive(&fifo).unwrap_err();
        assert_eq!(not_a_regular_file(&e).unwrap().kind, "a named pipe (FIFO)");
        let e = FileLock::try_exclusive(dir.path()).unwrap_err();
        assert_eq!(not_a_regular_file(&e).unwrap().kind, "a directory");
        std::os::unix::fs::symlink("/dev/null", dir.path().join("l.lock")).unwrap();
        let e = FileLock::try_exclusive(&dir.path().join("l.lock")).unwrap_err();
        assert_eq!(not_a_regular_file(&e).unwrap().kind, "a symbolic link");
    }

    #[test]
    fn a_held_lock_is_busy_for_another_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("y.lock");
        let held = FileLock::try_exclusive(&path).unwrap().unwrap();
        assert!(FileLock::try_exclusive(&path).unwrap().is_none());
        drop(held);
        assert!(FileLock::try_exclusive(&path).unwrap().is_some());
    }
}
