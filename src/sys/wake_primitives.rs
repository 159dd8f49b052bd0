//! The file-descriptor wake-up primitives of the wake probe: an eventfd (the user-space
//! twin of a driver's wait queue: write wakes a blocked read) and a pipe. Writers never
//! block (O_NONBLOCK), so a waker can never stall on a reader that does not run;
//! readers block.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Writes `bytes` from `buf` to `fd`; true when everything was written.
#[inline(always)]
fn write_all_once(fd: &OwnedFd, buf: &[u8]) -> bool {
    // SAFETY: `buf` is valid for reads of its length for the whole call.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    n == buf.len() as isize
}

/// Blocking read into `buf`, retried on EINTR; returns the bytes read (0 on error).
#[inline(always)]
fn read_blocking(fd: &OwnedFd, buf: &mut [u8]) -> usize {
    loop {
        // SAFETY: `buf` is valid for writes of its length for the whole call.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return n as usize;
        }
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 0;
        }
    }
}

/// Takes ownership of a descriptor a libc call just returned, or its error.
fn own(raw: libc::c_int) -> io::Result<OwnedFd> {
    if raw < 0 {
        return Err(super::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Sets O_NONBLOCK on `fd`.
fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL take and return plain flags on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(super::last_os_error());
    }
    // SAFETY: as above.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) };
    if rc < 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// An eventfd counter. Writes add to it; a read returns the sum and resets it, so
/// wake-ups that arrive while the reader is away add up instead of getting lost.
pub struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain flags; the result is checked by `own`.
        let fd = own(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) })?;
        Ok(Self { fd })
    }

    /// Adds 1 to the counter, waking a blocked reader. Never blocks in practice (only
    /// a counter about to overflow u64 would).
    #[inline(always)]
    pub fn signal(&self) -> bool {
        write_all_once(&self.fd, &1u64.to_ne_bytes())
    }

    /// Blocks until the counter is non-zero; returns and resets it.
    #[inline(always)]
    pub fn wait(&self) -> u64 {
        let mut buf = [0u8; 8];
        if read_blocking(&self.fd, &mut buf) == 8 {
            u64::from_ne_bytes(buf)
        } else {
            0
        }
    }
}

/// A pipe whose write end never blocks.
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    pub fn new() -> io::Result<Self> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        if rc != 0 {
            return Err(super::last_os_error());
        }
        let read = own(fds[0])?;
        let write = own(fds[1])?;
        set_nonblocking(&write)?;
        Ok(Self { read, write })
    }

    /// Writes one byte; false when the pipe is full (the reader has not run for 64 KiB
    /// of wake-ups).
    #[inline(always)]
    pub fn signal(&self) -> bool {
        write_all_once(&self.write, &[1u8])
    }

    /// Blocks until at least one byte is there, then reads up to `buf.len()` of them;
    /// returns how many (each byte is one wake-up).
    #[inline(always)]
    pub fn wait(&self, buf: &mut [u8]) -> usize {
        read_blocking(&self.read, buf)
    }
}
