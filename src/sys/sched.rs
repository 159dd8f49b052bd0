//! Scheduling policy and priority of the calling thread, and the limits that apply.

use serde::{Deserialize, Serialize};
use std::io;

/// The scheduling policies a measuring thread can run under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// SCHED_OTHER, the default time-sharing policy (priority 0).
    Other,
    /// SCHED_FIFO, real-time first-in first-out (priority 1-99).
    Fifo,
    /// SCHED_RR, real-time round-robin (priority 1-99).
    Rr,
}

impl Policy {
    fn raw(self) -> libc::c_int {
        match self {
            Policy::Other => libc::SCHED_OTHER,
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
        }
    }

    pub fn is_realtime(self) -> bool {
        !matches!(self, Policy::Other)
    }

    /// The inclusive priority range the kernel accepts for this policy.
    pub fn priority_range(self) -> (i32, i32) {
        // SAFETY: both calls take a policy constant and return an int.
        unsafe {
            (
                libc::sched_get_priority_min(self.raw()),
                libc::sched_get_priority_max(self.raw()),
            )
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
        }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Sets the calling thread's policy and priority (sched_setscheduler on tid 0).
pub fn set_current_thread(policy: Policy, priority: i32) -> io::Result<()> {
    set_task(0, policy, priority)
}

// The sched_* calls go through syscall(2), as glibc's wrappers do: musl's are stubs that
// return ENOSYS (POSIX makes them per process, Linux per thread), which would leave a
// static musl binary unable to set any policy.

/// A sched_param holding `priority`, every other field zero: musl's has SCHED_SPORADIC
/// fields glibc's lacks, so a struct literal would not build for a static musl binary.
pub fn param_with_priority(priority: i32) -> libc::sched_param {
    // SAFETY: sched_param holds only integers and timespecs; all-zero bytes are valid.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    param
}

/// Sets task `tid`'s policy and priority (0 = the calling thread).
pub fn set_task(tid: libc::pid_t, policy: Policy, priority: i32) -> io::Result<()> {
    let param = param_with_priority(priority);
    // SAFETY: `param` is a valid sched_param; the kernel validates policy and priority.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setscheduler, tid, policy.raw(), &param) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// Whether this process may set real-time policies: tries SCHED_FIFO 1 on a scratch
/// thread, which is the only answer that accounts for capabilities, RLIMIT_RTPRIO and
/// cgroup RT budgets alike.
pub fn can_use_realtime() -> bool {
    std::thread::Builder::new()
        .name("latscope-rt-check".into())
        .stack_size(super::memlock::HELPER_STACK_BYTES)
        .spawn(|| set_current_thread(Policy::Fifo, 1).is_ok())
        .ok()
        .and_then(|h| h.join().ok())
        .unwrap_or(false)
}

/// The kernel's RT throttling budget: (sched_rt_runtime_us, sched_rt_period_us);
/// runtime -1 means throttling is off.
pub fn rt_throttling() -> Option<(i64, i64)> {
    let read = |p: &str| -> Option<i64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    Some((
        read("/proc/sys/kernel/sched_rt_runtime_us")?,
        read("/proc/sys/kernel/sched_rt_period_us")?,
    ))
}

/// The calling thread's kernel thread id.
pub fn gettid() -> libc::pid_t {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// The calling thread's timer slack in ns (prctl PR_GET_TIMERSLACK).
pub fn timer_slack_ns() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments and returns the value.
    let v = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    v.max(0) as u64
}

/// Sets the calling thread's timer slack to `ns` (1 ns is the smallest; RT threads
/// ignore slack anyway).
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes the value as an unsigned long.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// Tries `policy` at `priority` on a scratch thread (which then exits): `Ok` when the
/// kernel accepts it, else its refusal (EPERM: no CAP_SYS_NICE, RLIMIT_RTPRIO or the
/// cgroup's RT budget; EINVAL: priority out of range).
pub fn try_policy(policy: Policy, priority: i32) -> io::Result<()> {
    std::thread::Builder::new()
        .name("latscope-rt-try".into())
        .stack_size(super::memlock::HELPER_STACK_BYTES)
        .spawn(move || set_current_thread(policy, priority))?
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the scratch thread panicked")))
}

/// Task `tid`'s policy and priority (None when it is gone or runs under a policy latscope
/// does not set, such as SCHED_BATCH or SCHED_DEADLINE).
pub fn task_policy(tid: libc::pid_t) -> Option<(Policy, i32)> {
    // SAFETY: a plain query of another task's policy; -1 on error.
    let raw = unsafe { libc::sched_getscheduler(tid) };
    let policy = match raw {
        libc::SCHED_OTHER => Policy::Other,
        libc::SCHED_FIFO => Policy::Fifo,
        libc::SCHED_RR => Policy::Rr,
        _ => return None,
    };
    let mut param = param_with_priority(0);
    // SAFETY: the kernel writes one sched_param into `param`, owned by this frame.
    let rc = unsafe { libc::sched_getparam(tid, &mut param) };
    (rc == 0).then_some((policy, param.sched_priority))
}
