//! Creating a file that did not exist, without following a symlink planted at its name:
//! `O_CREAT|O_EXCL|O_NOFOLLOW`, for the temporary files of atomic writes (issue 12, item 1).

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Creates `path` for writing with mode 0666 minus the umask; fails with `AlreadyExists`
/// if anything (a file, a dangling or live symlink) is already there.
pub fn create_exclusive_nofollow(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true) // O_CREAT|O_EXCL
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o666)
        .open(path)
}

/// Opens an existing regular file for writing, emptied first, refusing a symlink at its
/// name (`latscope cyclictest`'s status file in the world-writable /dev/shm).
pub fn overwrite_nofollow(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}
