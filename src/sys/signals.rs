//! Signal masks and synchronous signal waits for the posix-timer method (and probes that
//! wake a thread with a signal).

use std::io;

/// A signal set, wrapping sigset_t.
#[derive(Clone, Copy)]
pub struct SignalSet(libc::sigset_t);

impl SignalSet {
    pub fn of(signals: &[libc::c_int]) -> Self {
        // SAFETY: sigset_t is plain data; sigemptyset initialises it.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid sigset_t.
        unsafe { libc::sigemptyset(&mut set) };
        for &s in signals {
            // SAFETY: `set` is initialised; invalid numbers make sigaddset fail harmlessly.
            unsafe { libc::sigaddset(&mut set, s) };
        }
        Self(set)
    }

    /// Blocks these signals in the calling thread (threads spawned later inherit it).
    pub fn block_in_current_thread(&self) -> io::Result<()> {
        // SAFETY: `self.0` is an initialised sigset_t; the old mask is not needed.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &self.0, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    /// Waits for one of these (blocked) signals; returns (signal, si_overrun).
    #[inline(always)]
    pub fn wait(&self) -> (libc::c_int, i32) {
        loop {
            // SAFETY: siginfo_t is plain data that sigwaitinfo fills in.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: `self.0` is initialised and `info` is writable.
            let sig = unsafe { libc::sigwaitinfo(&self.0, &mut info) };
            if sig > 0 {
                // SAFETY: for timer signals si_overrun is the valid union member; for
                // others the field reads as 0 from the zeroed struct or the kernel's fill.
                let overrun = unsafe { si_overrun(&info) };
                return (sig, overrun);
            }
        }
    }
}

/// Reads `si_overrun` of a siginfo delivered by a POSIX timer.
///
/// # Safety
/// `info` must come from a signal delivered by timer_create's timer (SI_TIMER).
unsafe fn si_overrun(info: &libc::siginfo_t) -> i32 {
    // Layout on Linux: si_signo, si_errno, si_code (3 ints), then on 64-bit a padding
    // int, then the union whose timer member is { si_tid: int, si_overrun: int }.
    #[repr(C)]
    struct TimerInfo {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        #[cfg(target_pointer_width = "64")]
        _pad: libc::c_int,
        tid: libc::c_int,
        overrun: libc::c_int,
    }
    // SAFETY: siginfo_t is at least as large as TimerInfo and shares its prefix layout.
    let t = unsafe { &*(info as *const libc::siginfo_t as *const TimerInfo) };
    t.overrun
}

/// The first real-time signal plus `offset` (SIGRTMIN is resolved at run time by libc).
pub fn realtime_signal(offset: i32) -> libc::c_int {
    libc::SIGRTMIN() + offset
}

/// Sends `sig` to thread `tid` of this process.
pub fn send_to_thread(tid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: tgkill takes plain integers; the kernel checks them.
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// This process's id (for `send_to_thread_of`, which then makes one system call, not two).
pub fn process_id() -> libc::pid_t {
    // SAFETY: getpid has no arguments and cannot fail.
    unsafe { libc::getpid() }
}

/// Sends `sig` to thread `tid` of process `pid` (tgkill), with the pid known beforehand.
#[inline(always)]
pub fn send_to_thread_of(pid: libc::pid_t, tid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: tgkill takes plain integers; the kernel checks them.
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}
