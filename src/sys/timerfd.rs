//! timerfd with an absolute first expiry and an interval, read with blocking read(2).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    /// A CLOCK_MONOTONIC timerfd whose first expiry is at `first_ns` (absolute) and
    /// which then fires every `period_ns`.
    pub fn periodic(first_ns: u64, period_ns: u64) -> io::Result<Self> {
        // SAFETY: plain flags; the returned fd is checked before use.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(super::last_os_error());
        }
        // SAFETY: `raw` is a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let spec = libc::itimerspec {
            it_interval: super::clock::to_timespec(period_ns),
            it_value: super::clock::to_timespec(first_ns),
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not needed.
        let rc = unsafe {
            libc::timerfd_settime(
                fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(super::last_os_error());
        }
        Ok(Self { fd })
    }

    /// Blocks until the timer expires; returns the number of expirations since the
    /// last read (more than 1 means periods were missed).
    #[inline(always)]
    pub fn wait(&self) -> u64 {
        let mut expirations: u64 = 0;
        loop {
            // SAFETY: reads 8 bytes into a u64 owned by this frame.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    &mut expirations as *mut u64 as *mut libc::c_void,
                    8,
                )
            };
            if n == 8 {
                return expirations;
            }
        }
    }
}
