//! Writing into a named pipe (FIFO), a pipe or a terminal without ever blocking in the
//! kernel: open(2) of a FIFO waits for a reader and write(2) for room, and a signal does
//! not end either wait (restarted), so a run writing to a FIFO or a pipe nobody reads
//! ignored SIGTERM (issue 22 item 2, issue 34 item 4). Here both waits are 50 ms polls
//! that ask `give_up` in between, and each write is at most PIPE_BUF bytes, which a pipe
//! with room takes without waiting.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;

/// How long one wait lasts before `give_up` is asked again.
const POLL_MS: i32 = 50;

/// Why to stop waiting (a signal's name), asked between waits.
pub type GiveUp<'a> = Box<dyn Fn() -> Option<String> + 'a>;

/// A write given up: nobody made room before `why` (a signal) came. Carried in the
/// `io::Error` (kind `Other`: `Interrupted` would be retried by `write_all`).
#[derive(Debug, thiserror::Error)]
#[error("{what}'s reader stopped reading before {why}; written in part")]
pub struct WriteGivenUp {
    /// "the named pipe", "standard output".
    pub what: &'static str,
    pub why: String,
}

/// A `WriteGivenUp` inside an I/O error, if that was it.
pub fn given_up(e: &io::Error) -> Option<&WriteGivenUp> {
    e.get_ref()?.downcast_ref::<WriteGivenUp>()
}

/// A writer on a descriptor that may wait (a FIFO opened O_NONBLOCK, a blocking pipe,
/// a terminal): each write waits for room in 50 ms steps, asks `give_up` before each
/// step, and writes at most PIPE_BUF bytes.
pub struct PollWriter<'a, F: AsFd> {
    fd: F,
    give_up: GiveUp<'a>,
    what: &'static str,
}

/// A FIFO opened for writing with O_NONBLOCK.
pub type FifoWriter<'a> = PollWriter<'a, File>;

impl<'a, F: AsFd> PollWriter<'a, F> {
    /// `fd` (what it is in messages: "standard output") written in steps.
    pub fn new(fd: F, what: &'static str, give_up: GiveUp<'a>) -> Self {
        PollWriter { fd, give_up, what }
    }

    /// Waits up to 50 ms for room; whether there is some.
    fn wait_for_room(&self) -> io::Result<bool> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_fd().as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
        if rc < 0 {
            let e = super::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        // POLLERR or POLLHUP (the reader left): the write says so (EPIPE).
        Ok(rc > 0)
    }

    /// One write(2) of at most PIPE_BUF bytes.
    fn write_once(&self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(libc::PIPE_BUF);
        // SAFETY: `buf[..n]` is valid for reads of n bytes; the descriptor is open.
        let rc = unsafe { libc::write(self.fd.as_fd().as_raw_fd(), buf.as_ptr().cast(), n) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        Ok(rc as usize)
    }
}

impl<F: AsFd> Write for PollWriter<'_, F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(why) = (self.give_up)() {
                // Not `Interrupted`: write_all would retry that forever.
                return Err(io::Error::other(WriteGivenUp {
                    what: self.what,
                    why,
                }));
            }
            if !self.wait_for_room()? {
                continue;
            }
            match self.write_once(buf) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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
pub fn open_writer<'a>(path: &Path, give_up: GiveUp<'a>) -> io::Result<FifoWriter<'a>> {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(file) => return Ok(PollWriter::new(file, "the named pipe", give_up)),
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

/// Whether `fd` may keep a write waiting: anything but a regular file (a pipe, FIFO,
/// socket, terminal or other device).
pub fn may_wait(fd: impl AsFd) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(file) = fd.as_fd().try_clone_to_owned().map(File::from) else {
        return true;
    };
    file.metadata()
        .map(|m| !m.file_type().is_file() && !m.file_type().is_block_device())
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe nobody reads: the write waits in steps and ends when `give_up` says so,
    /// having written what fit.
    #[test]
    fn a_full_pipe_is_given_up_when_asked() {
        use std::os::fd::{FromRawFd, OwnedFd};
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both descriptors are new and owned by nothing else.
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let asked = std::cell::Cell::new(0u32);
        let mut w = PollWriter::new(
            writer,
            "the pipe",
            Box::new(|| {
                asked.set(asked.get() + 1);
                (asked.get() > 40).then(|| "SIGTERM".to_string())
            }),
        );
        let start = std::time::Instant::now();
        let e = w.write_all(&vec![b'x'; 1 << 20]).unwrap_err();
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        let given_up = given_up(&e).expect("a WriteGivenUp");
        assert_eq!(given_up.why, "SIGTERM");
        assert!(e
            .to_string()
            .contains("the pipe's reader stopped reading before SIGTERM"));
        drop(reader);
    }
}
