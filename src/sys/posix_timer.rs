//! A POSIX timer (timer_create) delivering a real-time signal to one thread
//! (SIGEV_THREAD_ID), waited for with sigwaitinfo.

use std::io;

pub struct PosixTimer {
    id: libc::timer_t,
}

// SAFETY: a timer_t is an opaque kernel handle; it may be deleted from any thread.
unsafe impl Send for PosixTimer {}

/// `struct sigevent` with the SIGEV_THREAD_ID target thread, which the libc crate does
/// not expose as a field (it lives in a union).
#[repr(C)]
struct SigEventThreadId {
    value: libc::sigval,
    signo: libc::c_int,
    notify: libc::c_int,
    tid: libc::c_int,
    _pad: [libc::c_int; 11],
}

const SIGEV_THREAD_ID: libc::c_int = 4;

impl PosixTimer {
    /// A CLOCK_MONOTONIC timer that sends `signal` to thread `tid`, first at `first_ns`
    /// (absolute) and then every `period_ns`.
    pub fn periodic_to_thread(
        tid: libc::pid_t,
        signal: libc::c_int,
        first_ns: u64,
        period_ns: u64,
    ) -> io::Result<Self> {
        Self::periodic_on(libc::CLOCK_MONOTONIC, tid, signal, first_ns, period_ns)
    }

    /// The same on CLOCK_REALTIME, `first_ns` a CLOCK_REALTIME time (cyclictest `-x -c 1`).
    pub fn periodic_realtime_to_thread(
        tid: libc::pid_t,
        signal: libc::c_int,
        first_ns: u64,
        period_ns: u64,
    ) -> io::Result<Self> {
        Self::periodic_on(libc::CLOCK_REALTIME, tid, signal, first_ns, period_ns)
    }

    fn periodic_on(
        clock: libc::clockid_t,
        tid: libc::pid_t,
        signal: libc::c_int,
        first_ns: u64,
        period_ns: u64,
    ) -> io::Result<Self> {
        let mut ev = SigEventThreadId {
            value: libc::sigval {
                sival_ptr: std::ptr::null_mut(),
            },
            signo: signal,
            notify: SIGEV_THREAD_ID,
            tid,
            _pad: [0; 11],
        };
        let mut id: libc::timer_t = std::ptr::null_mut();
        // SAFETY: `ev` has the kernel's sigevent layout (64 bytes) and outlives the call;
        // `id` is writable.
        let rc = unsafe {
            libc::timer_create(
                clock,
                &mut ev as *mut SigEventThreadId as *mut libc::sigevent,
                &mut id,
            )
        };
        if rc != 0 {
            return Err(super::last_os_error());
        }
        let timer = Self { id };
        let spec = libc::itimerspec {
            it_interval: super::clock::to_timespec(period_ns),
            it_value: super::clock::to_timespec(first_ns),
        };
        // SAFETY: `id` is a live timer; `spec` is valid; the old value is not needed.
        let rc = unsafe {
            libc::timer_settime(timer.id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(super::last_os_error());
        }
        Ok(timer)
    }

    /// Expirations that were merged into the last delivered signal.
    #[inline(always)]
    pub fn overruns(&self) -> u64 {
        // SAFETY: `id` is a live timer owned by self.
        let n = unsafe { libc::timer_getoverrun(self.id) };
        n.max(0) as u64
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: `id` is a live timer owned by self and deleted once.
        unsafe { libc::timer_delete(self.id) };
    }
}
