//! Child commands in their own PID namespace, so nothing they start outlives latscope:
//! a small init (PID 1 of the namespace, killed by PR_SET_PDEATHSIG when latscope dies)
//! runs the command as its child and reaps everything; when the init ends, the kernel
//! kills every process left in the namespace, grandchildren included.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// A command running under its own namespace init; `pid` (in latscope's namespace) is the
/// init's, which is also the process group of everything in the namespace.
#[derive(Debug)]
pub struct ContainedChild {
    pid: libc::pid_t,
    status: Option<ExitStatus>,
    /// Write end of the liveness pipe: the init checks it once, after PR_SET_PDEATHSIG, to
    /// catch latscope dying between clone and prctl. Closed with the child handle.
    _alive: std::fs::File,
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in argument"))
}

/// `program` as execve wants it: a path (searched in PATH when it has no `/`).
fn resolve_program(program: &str) -> io::Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("{program}: not found in PATH"),
    ))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A raw fork (clone with only SIGCHLD and `extra` flags): no atfork handlers, no libc
/// locks, so the child may run async-signal-safe code even though latscope has threads.
///
/// # Safety
/// The child must only make async-signal-safe system calls and end with execve or _exit.
unsafe fn raw_fork(extra: libc::c_long) -> libc::c_long {
    // SAFETY: clone without CLONE_VM and with a null stack behaves like fork (the child
    // continues on a copy of the caller's stack); the caller upholds the child's rules.
    unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_long | extra,
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
            0 as libc::c_long,
        )
    }
}

/// How a command is contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// A new PID namespace (needs CAP_SYS_ADMIN).
    PidNamespace,
    /// A new user namespace owning a new PID namespace: what a user without root may
    /// create where unprivileged user namespaces are allowed. No uid map is written, so
    /// inside the command sees itself as the overflow user (65534); outside, its files
    /// and permissions stay the caller's.
    UserAndPidNamespace,
}

/// Starts `argv` (no shell) as the only child of a new PID namespace's init, on `cpus` at
/// SCHED_OTHER, in its own process group. `Err` with EPERM/EINVAL/ENOSPC when this
/// containment is not allowed here (the caller tries the next, or falls back to a plain
/// process group). Spawn from a long-lived thread: PR_SET_PDEATHSIG fires when that
/// thread exits.
pub fn spawn_contained(
    argv: &[String],
    cpus: &[usize],
    how: Containment,
) -> io::Result<ContainedChild> {
    let flags = match how {
        Containment::PidNamespace => libc::CLONE_NEWPID,
        Containment::UserAndPidNamespace => libc::CLONE_NEWUSER | libc::CLONE_NEWPID,
    };
    let (program, _) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
    // Everything the children use is prepared here: they must not allocate.
    let path = cstring(resolve_program(program)?.as_os_str().as_bytes())?;
    let args: Vec<CString> = argv
        .iter()
        .map(|a| cstring(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let env: Vec<CString> = std::env::vars_os()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(OsStr::as_bytes(&v));
            cstring(&kv)
        })
        .collect::<io::Result<_>>()?;
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // SAFETY: cpu_set_t is plain data; all-zero is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu < libc::CPU_SETSIZE as usize {
            // SAFETY: `cpu` is below CPU_SETSIZE.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
    }
    let mut pipe_fds = [0; 2];
    // SAFETY: `pipe_fds` is a writable array of two ints.
    if unsafe { libc::pipe2(pipe_fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(super::last_os_error());
    }
    let [read_end, write_end] = pipe_fds;
    // SAFETY: the child (the namespace's init) and its child (the command) only make
    // async-signal-safe system calls on data prepared above, and end in execve or _exit.
    let pid = unsafe { raw_fork(flags as libc::c_long) };
    if pid < 0 {
        let err = super::last_os_error();
        // SAFETY: both descriptors are ours and open.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return Err(err);
    }
    if pid == 0 {
        // SAFETY: see above; nothing here allocates or takes a lock.
        unsafe { namespace_init(read_end, write_end, &set, &path, &arg_ptrs, &env_ptrs) };
    }
    let pid = pid as libc::pid_t;
    // SAFETY: `read_end` is ours; `write_end` now belongs to the File below.
    unsafe { libc::close(read_end) };
    // SAFETY: also done by the child itself; whichever runs first wins, both agree.
    unsafe { libc::setpgid(pid, pid) };
    // SAFETY: `write_end` is an open descriptor nothing else owns.
    let alive = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(write_end) };
    Ok(ContainedChild {
        pid,
        status: None,
        _alive: alive,
    })
}

/// PID 1 of the new namespace: dies with latscope, starts the command, reaps every
/// orphan, and exits with the command's status (which kills the rest of the namespace).
///
/// # Safety
/// Only in the child of `raw_fork`; every pointer stays valid (copied address space).
unsafe fn namespace_init(
    read_end: libc::c_int,
    write_end: libc::c_int,
    set: &libc::cpu_set_t,
    path: &CString,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
) -> ! {
    // SAFETY: plain system calls on our own descriptors and prepared data.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::close(write_end);
        // latscope died before prctl took effect: its write end is closed (hang-up).
        let mut poll = libc::pollfd {
            fd: read_end,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut poll, 1, 0) > 0 && poll.revents & libc::POLLHUP != 0 {
            libc::_exit(1);
        }
        libc::close(read_end);
        libc::setpgid(0, 0);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
        let param = super::sched::param_with_priority(0);
        // syscall(2): musl's sched_setscheduler is an ENOSYS stub (src/sys/sched.rs).
        libc::syscall(libc::SYS_sched_setscheduler, 0, libc::SCHED_OTHER, &param);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        let command = raw_fork(0);
        if command < 0 {
            libc::_exit(126);
        }
        if command == 0 {
            // latscope ignores SIGPIPE (Rust's default); the command gets the usual one.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(127);
        }
        loop {
            let mut status = 0;
            let reaped = libc::waitpid(-1, &mut status, 0);
            if reaped as libc::c_long == command {
                if libc::WIFEXITED(status) {
                    libc::_exit(libc::WEXITSTATUS(status));
                }
                libc::_exit(128 + libc::WTERMSIG(status));
            }
            if reaped < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(1);
            }
        }
    }
}

impl ContainedChild {
    /// The init's process id in latscope's namespace (also the process group id).
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// The exit status if the init (hence the command) has ended, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_with(libc::WNOHANG)
    }

    /// Waits for the init to end.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            match self.wait_with(0) {
                Ok(Some(s)) => return Ok(s),
                Ok(None) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn wait_with(&mut self, flags: libc::c_int) -> io::Result<Option<ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let mut status = 0;
        // SAFETY: `self.pid` is our child; `status` is a writable int.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, flags) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        if rc == 0 {
            return Ok(None);
        }
        let s = ExitStatus::from_raw(status);
        self.status = Some(s);
        Ok(Some(s))
    }
}
