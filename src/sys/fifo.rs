//! Writing into a named pipe (FIFO) given as an output path without ever blocking in the
//! kernel: open(2) of a FIFO waits for a reader and write(2) for room, and a signal does
//! not end either wait (restarted), so a run with a FIFO export would ignore SIGTERM
//! (issue 22, item 2). Here both waits are 50 ms polls that ask `give_up` in between.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// How long one wait lasts before `give_up` is asked again.
const POLL_MS: i32 = 50;

/// A FIFO opened for writing with O_NONBLOCK; a full pipe is waited on in steps.
pub struct FifoWriter<'a> {
    file: File,
    give_up: &'a dyn Fn() -> Option<String>,
}

/// Makes a named pipe at `path` (mode 0666 minus the umask), as cyclictest's `-F` does.
pub fn make_fifo(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: `name` is a valid NUL-terminated path for the duration of the call.
    let rc = unsafe { libc::mkfifo(name.as_ptr(), 0o666) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// Opens a named pipe for writing without waiting: an error (ENXIO) when no reader has
/// it open (cyclictest's `-F` pipe, offered every 500 ms).
pub fn open_writer_now(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
}

/// Whether `path` is a FIFO (not followed through a final link: the caller resolved it).
pub fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Whether this process may write `path` (access(2) with the effective ids), without
/// opening it: a FIFO opened and closed by a check would hand its reader an end of file.
pub fn may_write(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: `name` is a valid NUL-terminated path for the duration of the call.
    let rc =
        unsafe { libc::faccessat(libc::AT_FDCWD, name.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// Opens the FIFO for writing once a reader has it open, asking `give_up` every 50 ms
/// (it returns why to stop, e.g. a signal's name); never blocks longer than that.
pub fn open_writer<'a>(
    path: &Path,
    give_up: &'a dyn Fn() -> Option<String>,
) -> io::Result<FifoWriter<'a>> {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(file) => return Ok(FifoWriter { file, give_up }),
            // ENXIO: nobody has the FIFO open for reading yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if let Some(why) = give_up() {
                    return Err(io::Error::other(format!(
                        "no reader opened the named pipe before {why}; not written"
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(POLL_MS as u64));
            }
            Err(e) => return Err(e),
        }
    }
}

impl FifoWriter<'_> {
    /// Waits up to 50 ms for room in the pipe.
    fn wait_for_room(&self) -> io::Result<()> {
        let mut fd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let rc = unsafe { libc::poll(&mut fd, 1, POLL_MS) };
        if rc < 0 {
            let e = super::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Write for FifoWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match self.file.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Some(why) = (self.give_up)() {
                        // Not `Interrupted`: write_all would retry that forever.
                        return Err(io::Error::other(format!(
                            "the named pipe's reader stopped reading before {why}; written in part"
                        )));
                    }
                    self.wait_for_room()?;
                }
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
