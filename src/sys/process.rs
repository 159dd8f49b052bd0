//! Processes and their accounting for the loads: fork-and-exit, child commands that die
//! with latscope (own process group, PR_SET_PDEATHSIG), process-group signals, resource
//! usage, per-thread CPU time and the cheap system calls of the syscall load.

use std::io;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Resource usage of the whole process (all threads, living and exited).
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub user_ns: u64,
    pub system_ns: u64,
}

/// getrusage(RUSAGE_SELF).
pub fn usage_self() -> io::Result<Usage> {
    // SAFETY: rusage is plain data that getrusage fills in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Err(super::last_os_error());
    }
    let tv_ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    Ok(Usage {
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
        voluntary_switches: ru.ru_nvcsw as u64,
        involuntary_switches: ru.ru_nivcsw as u64,
        user_ns: tv_ns(ru.ru_utime),
        system_ns: tv_ns(ru.ru_stime),
    })
}

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), ns.
#[inline]
pub fn thread_cpu_time_ns() -> u64 {
    super::clock::clock_now_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Clock ticks per second of /proc/*/stat times (USER_HZ).
pub fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf takes a constant and returns a value or -1.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

/// Forks a child that exits at once, and reaps it: one process creation and exit.
pub fn fork_and_reap() -> io::Result<()> {
    // SAFETY: the child only calls _exit, which is async-signal-safe, so forking a
    // multi-threaded process is sound here.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(super::last_os_error());
    }
    if pid == 0 {
        // SAFETY: _exit ends the child without running any parent state (atexit, Drop).
        unsafe { libc::_exit(0) };
    }
    loop {
        let mut status = 0;
        // SAFETY: `pid` is our child; `status` is a valid int to write.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(());
        }
        let err = super::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// Starts `argv` (no shell) in its own process group, restricted to `cpus` at
/// SCHED_OTHER, killed by the kernel (SIGKILL) when the spawning thread dies.
/// Spawn from a long-lived thread: PR_SET_PDEATHSIG fires when that thread exits.
pub fn spawn_in_own_group(argv: &[String], cpus: &[usize]) -> io::Result<std::process::Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
    // SAFETY: cpu_set_t is plain data; all-zero is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu < libc::CPU_SETSIZE as usize {
            // SAFETY: `cpu` is below CPU_SETSIZE.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
    }
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe system calls (prctl, getppid, sched_setaffinity,
    // sched_setscheduler) on data prepared before the fork; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // latscope died between fork and prctl: do not outlive it.
                libc::_exit(1);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            let param = super::sched::param_with_priority(0);
            // syscall(2): musl's sched_setscheduler is an ENOSYS stub (src/sys/sched.rs).
            libc::syscall(libc::SYS_sched_setscheduler, 0, libc::SCHED_OTHER, &param);
            Ok(())
        });
    }
    command.spawn()
}

/// Makes `command`'s process die (SIGKILL) when the thread that spawns it ends, so it
/// never outlives latscope, even a SIGKILLed one (the `--host` ssh: its board's run then
/// hangs up and restores, issue 34 item 8). Spawn from the thread that waits for it.
pub fn die_with_parent(command: &mut std::process::Command) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe system calls (prctl, getppid, _exit); it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // latscope died between fork and prctl: do not outlive it.
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Sends `sig` to every process of process group `pgid`.
pub fn signal_group(pgid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing to signal process group <= 1",
        ));
    }
    // SAFETY: killpg takes plain integers; pgid > 1 was checked so it never means "all".
    if unsafe { libc::killpg(pgid, sig) } != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// Sends `sig` to process `pid` (> 0).
pub fn signal_process(pid: libc::pid_t, sig: libc::c_int) -> io::Result<()> {
    if pid <= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing to signal pid <= 0",
        ));
    }
    // SAFETY: kill takes plain integers; pid > 0 names exactly one process.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// Whether process `pid` still exists (signal 0 probe; a zombie counts as existing).
pub fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: kill with signal 0 only checks existence and permission.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// One cheap system call (getppid, never cached by libc).
#[inline]
pub fn cheap_syscall() -> i64 {
    // SAFETY: getppid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getppid) }
}

static COUNTED_SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn count_signal(_sig: libc::c_int) {
    COUNTED_SIGNALS.fetch_add(1, Ordering::Relaxed);
}

/// The signal the syscall load sends itself: SIGURG, whose default action is to be
/// ignored, so a stray one after the load ends is harmless.
pub const STORM_SIGNAL: libc::c_int = libc::SIGURG;

/// Installs (once) a handler for STORM_SIGNAL that only counts, so each signal is
/// really delivered (an ignored signal is dropped before delivery).
pub fn install_storm_signal_handler() -> io::Result<()> {
    static RESULT: OnceLock<Result<(), i32>> = OnceLock::new();
    let r = RESULT.get_or_init(|| {
        // SAFETY: zeroed sigaction is valid plain data.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = count_signal as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action.sa_mask` is a valid sigset_t to initialise.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: the handler only bumps an atomic, which is async-signal-safe.
        if unsafe { libc::sigaction(STORM_SIGNAL, &action, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(())
    });
    r.map_err(io::Error::from_raw_os_error)
}

/// STORM_SIGNAL deliveries handled so far.
pub fn storm_signals_handled() -> u64 {
    COUNTED_SIGNALS.load(Ordering::Relaxed)
}

/// The effective user id of this process (0 = root).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() }
}
