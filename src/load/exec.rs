//! The `exec` load: any external command (stress-ng, iperf3, a user's own program),
//! run from argv without a shell, in its own PID namespace (as root; else inside a new
//! user namespace where unprivileged ones are allowed) and process group on
//! the load CPUs, dying with latscope (PR_SET_PDEATHSIG; the namespace takes every
//! grandchild with it, even after SIGKILL) and killed as a group when the scenario ends.

use super::active::{summarize, ActiveLoad};
use super::LoadSpec;
use crate::result::LoadResult;
use crate::sys::pid_namespace::{spawn_contained, ContainedChild, Containment};
use crate::sys::{clock, process};
use anyhow::Context;
use std::process::{Child, ExitStatus};

/// The command's process: under a namespace init (root), else a plain child whose
/// process group is all that holds its descendants.
enum LoadProcess {
    Contained(ContainedChild),
    Plain(Child),
}

impl LoadProcess {
    fn id(&self) -> u32 {
        match self {
            LoadProcess::Contained(c) => c.id(),
            LoadProcess::Plain(c) => c.id(),
        }
    }

    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        match self {
            LoadProcess::Contained(c) => c.try_wait(),
            LoadProcess::Plain(c) => c.try_wait(),
        }
    }

    fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            LoadProcess::Contained(c) => c.wait(),
            LoadProcess::Plain(c) => c.wait(),
        }
    }
}

/// Starts the command in its own PID namespace; without CAP_SYS_ADMIN in a user
/// namespace owning one (unprivileged user namespaces); where neither is allowed, in its
/// own process group only (its grandchildren may then outlive a `kill -9`ed latscope).
fn spawn(argv: &[String], cpus: &[usize]) -> std::io::Result<(LoadProcess, Option<Containment>)> {
    let refused = |e: &std::io::Error| {
        matches!(
            e.raw_os_error(),
            Some(libc::EPERM) | Some(libc::EINVAL) | Some(libc::ENOSPC) | Some(libc::EUSERS)
        )
    };
    for how in [Containment::PidNamespace, Containment::UserAndPidNamespace] {
        match spawn_contained(argv, cpus, how) {
            Ok(c) => return Ok((LoadProcess::Contained(c), Some(how))),
            Err(e) if refused(&e) => continue,
            Err(e) => return Err(e),
        }
    }
    let child = process::spawn_in_own_group(argv, cpus)?;
    Ok((LoadProcess::Plain(child), None))
}

/// How long a command gets to exit after SIGTERM before the group is killed.
const TERM_GRACE_NS: u64 = 1_000_000_000;

pub struct ExecLoad {
    spec: LoadSpec,
    cpus: Vec<usize>,
    child: LoadProcess,
    /// Whether the command runs in its own PID namespace, and how.
    contained: bool,
    containment: Option<Containment>,
    pgid: i32,
    started_ns: u64,
    restorer: u64,
}

impl ExecLoad {
    /// Starts the command. Call from a long-lived thread (see `spawn_in_own_group`).
    pub fn start(spec: &LoadSpec, cpus: &[usize]) -> anyhow::Result<Self> {
        let (child, containment) = spawn(&spec.command, cpus)
            .with_context(|| format!("starting load '{}' ({:?})", spec.text, spec.command))?;
        let pgid = child.id() as i32;
        let restorer = crate::interrupt::register_restorer(move || {
            let _ = process::signal_group(pgid, libc::SIGKILL);
        });
        Ok(Self {
            spec: spec.clone(),
            cpus: cpus.to_vec(),
            child,
            contained: containment.is_some(),
            containment,
            pgid,
            started_ns: clock::monotonic_ns(),
            restorer,
        })
    }

    /// The process id of the command (also its process group id).
    pub fn pid(&self) -> i32 {
        self.pgid
    }
}

impl ActiveLoad for ExecLoad {
    fn halt(&self) {}

    fn finish(mut self: Box<Self>) -> LoadResult {
        let elapsed_ns = clock::monotonic_ns().saturating_sub(self.started_ns);
        // Measure before stopping: the group's processes vanish once killed.
        let (cpu_ns, mut processes) = super::proc_stat::group_cpu_ns(self.pgid);
        if self.contained {
            // The namespace's init is latscope's, not the command's.
            processes = processes.saturating_sub(1);
        }
        let exited_early = matches!(self.child.try_wait(), Ok(Some(_)));
        let _ = process::signal_group(self.pgid, libc::SIGTERM);
        let deadline = clock::monotonic_ns() + TERM_GRACE_NS;
        let mut status = None;
        while clock::monotonic_ns() < deadline {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            clock::sleep_for_ns(10_000_000);
        }
        // Whatever is left of the group (helpers that ignored SIGTERM) is killed.
        let _ = process::signal_group(self.pgid, libc::SIGKILL);
        if status.is_none() {
            status = self.child.wait().ok();
        }
        crate::interrupt::unregister_restorer(self.restorer);
        let mut result = summarize(&self.spec, &self.cpus, 0.0, cpu_ns, elapsed_ns);
        result.extra.insert("pid".into(), self.pgid.into());
        result
            .extra
            .insert("processes_at_stop".into(), processes.into());
        result
            .extra
            .insert("command".into(), self.spec.command.clone().into());
        result
            .extra
            .insert("pid_namespace".into(), self.contained.into());
        if self.containment == Some(Containment::UserAndPidNamespace) {
            result.extra.insert("user_namespace".into(), true.into());
        }
        if exited_early {
            result.extra.insert(
                "exited_early".into(),
                status.map(|s| s.to_string()).unwrap_or_default().into(),
            );
        }
        result
    }
}
