//! What the kernel holds for a running process's threads (/proc/PID/task): name, policy,
//! RT priority, allowed CPUs and scheduler time. Tests check with it what latscope asked
//! for (a policy, a placement, a duty cycle), not how the scheduler then served it.

use std::process::{Child, Output};
use std::time::Duration;

pub const SCHED_OTHER: u32 = 0;
pub const SCHED_RR: u32 = 2;

/// One thread as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSched {
    pub tid: u32,
    pub comm: String,
    pub policy: u32,
    pub rt_priority: u32,
    /// `Cpus_allowed_list` as the kernel prints it ("1", "0-3").
    pub cpus: String,
    /// /proc/…/schedstat: time on a CPU and time runnable but waiting for one.
    pub run_ns: u64,
    pub wait_ns: u64,
}

/// The threads of `pid` now (those that end while being read are left out).
pub fn threads_of(pid: u32) -> Vec<ThreadSched> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten().filter_map(|t| thread(&t.path())).collect()
}

fn thread(task: &std::path::Path) -> Option<ThreadSched> {
    let stat = std::fs::read_to_string(task.join("stat")).ok()?;
    let status = std::fs::read_to_string(task.join("status")).ok()?;
    let schedstat = std::fs::read_to_string(task.join("schedstat")).unwrap_or_default();
    let comm = stat[stat.find('(')? + 1..stat.rfind(')')?].to_string();
    // Fields after the comm start at field 3 (state): rt_priority is field 40, policy 41.
    let rest: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
        .trim()
        .to_string();
    let mut times = schedstat.split_whitespace().map(|v| v.parse().unwrap_or(0));
    Some(ThreadSched {
        tid: task.file_name()?.to_str()?.parse().ok()?,
        comm,
        rt_priority: rest.get(37)?.parse().ok()?,
        policy: rest.get(38)?.parse().ok()?,
        cpus,
        run_ns: times.next().unwrap_or(0),
        wait_ns: times.next().unwrap_or(0),
    })
}

/// Reads `threads_of(child)` every 20 ms until it exits; every reading, and its output.
pub fn watch_threads(mut child: Child) -> (Vec<Vec<ThreadSched>>, Output) {
    let mut seen = Vec::new();
    while child.try_wait().expect("child status").is_none() {
        seen.push(threads_of(child.id()));
        std::thread::sleep(Duration::from_millis(20));
    }
    (seen, child.wait_with_output().expect("child output"))
}

/// The threads named `comm` (exactly, or by prefix when `comm` ends in `*`) in `seen`: each
/// one's (policy, rt_priority, cpus) as last read (a thread is named before it places itself,
/// so an early reading may still show its parent's), distinct ones in the order the threads
/// appeared, and the most of them seen at once.
pub fn sched_of(seen: &[Vec<ThreadSched>], comm: &str) -> (Vec<(u32, u32, String)>, usize) {
    let matches = |c: &str| match comm.strip_suffix('*') {
        Some(prefix) => c.starts_with(prefix),
        None => c == comm,
    };
    let mut last: Vec<(u32, (u32, u32, String))> = Vec::new();
    let mut most = 0;
    for reading in seen {
        let these: Vec<&ThreadSched> = reading.iter().filter(|t| matches(&t.comm)).collect();
        most = most.max(these.len());
        for t in these {
            let k = (t.policy, t.rt_priority, t.cpus.clone());
            match last.iter_mut().find(|(tid, _)| *tid == t.tid) {
                Some(entry) => entry.1 = k,
                None => last.push((t.tid, k)),
            }
        }
    }
    let mut kinds = Vec::new();
    for (_, k) in last {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    (kinds, most)
}
