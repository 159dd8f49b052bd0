//! Kernel threads that ran on the measured CPU in the observation window: each kernel
//! thread's context switches read from /proc before and after the spin, counted for the
//! CPU when the thread may only run there (ksoftirqd/1, kworker/1:*, migration/1: exact)
//! or, for a thread free to run anywhere, when it last ran there (marked as such).

use super::inputs::ProcStat;
use crate::sys::host_files::HostFiles;
use std::collections::BTreeMap;

/// One kernel thread as read at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KthreadState {
    pub comm: String,
    /// Voluntary and involuntary context switches: one per time it ran and stopped.
    pub switches: u64,
    /// The CPU it last ran on, and the CPUs it may run on.
    pub last_cpu: Option<usize>,
    pub allowed: Vec<usize>,
}

/// Context switches and allowed CPUs from a /proc/PID/status text.
pub fn parse_status(text: &str) -> (u64, Vec<usize>) {
    let mut switches = 0;
    let mut allowed = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key {
            "voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches" => {
                switches += value.trim().parse::<u64>().unwrap_or(0);
            }
            "Cpus_allowed_list" => {
                allowed = crate::units::parse_cpu_list_plain(value.trim()).unwrap_or_default();
            }
            _ => {}
        }
    }
    (switches, allowed)
}

/// Every kernel thread now, by pid.
pub fn snapshot(files: &HostFiles) -> BTreeMap<u32, KthreadState> {
    let mut out = BTreeMap::new();
    for pid in files
        .list("/proc")
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
    {
        let Some(stat) = files
            .read(&format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|t| ProcStat::parse(&t))
        else {
            continue;
        };
        if !stat.kernel_thread {
            continue;
        }
        let Ok(status) = files.read(&format!("/proc/{pid}/status")) else {
            continue;
        };
        let (switches, allowed) = parse_status(&status);
        out.insert(
            pid,
            KthreadState {
                comm: stat.comm,
                switches,
                last_cpu: stat.processor,
                allowed,
            },
        );
    }
    out
}

/// A kernel thread that ran on the CPU: its name, how often, and whether it is bound
/// there (else it was free to run anywhere and last ran there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub comm: String,
    pub pid: u32,
    pub times: u64,
    pub bound: bool,
}

/// The kernel threads that ran on `cpu` between `before` and `after`, most often first.
pub fn ran_on(
    before: &BTreeMap<u32, KthreadState>,
    after: &BTreeMap<u32, KthreadState>,
    cpu: usize,
) -> Vec<Ran> {
    let mut ran: Vec<Ran> = after
        .iter()
        .filter_map(|(pid, now)| {
            // A thread born in the window ran at least its switches so far.
            let then = before.get(pid).map_or(0, |b| b.switches);
            let times = now.switches.saturating_sub(then);
            let bound = now.allowed == [cpu];
            let here = bound || now.last_cpu == Some(cpu);
            (times > 0 && here).then(|| Ran {
                comm: now.comm.clone(),
                pid: *pid,
                times,
                bound,
            })
        })
        .collect();
    ran.sort_by(|a, b| b.times.cmp(&a.times).then(a.pid.cmp(&b.pid)));
    ran
}

/// Threads named on the line, most often first.
const NAMED: usize = 8;

/// "kernel threads ran 212 times on CPU 1 over 3.2 s: ksoftirqd/1 ×150, kworker/1:1 ×40,
/// rcu_preempt ×9 (free to run anywhere, last ran on CPU 1), …".
pub fn line(ran: &[Ran], cpu: usize, secs: f64) -> String {
    if ran.is_empty() {
        return format!("no kernel thread ran on CPU {cpu} over {secs:.1} s");
    }
    let total: u64 = ran.iter().map(|r| r.times).sum();
    let mut names: Vec<String> = ran
        .iter()
        .take(NAMED)
        .map(|r| {
            format!(
                "{} ×{}{}",
                r.comm,
                r.times,
                if r.bound {
                    ""
                } else {
                    " (free to run anywhere, last ran here)"
                }
            )
        })
        .collect();
    if ran.len() > NAMED {
        names.push(format!("{} more", ran.len() - NAMED));
    }
    format!(
        "kernel threads ran {total} time{} on CPU {cpu} over {secs:.1} s: {}",
        if total == 1 { "" } else { "s" },
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(comm: &str, switches: u64, last: usize, allowed: &[usize]) -> KthreadState {
        KthreadState {
            comm: comm.into(),
            switches,
            last_cpu: Some(last),
            allowed: allowed.to_vec(),
        }
    }

    #[test]
    fn status_lines_of_this_machine() {
        // /proc/22/status of this VM (ksoftirqd/1), the lines read.
        let text = "Name:\tksoftirqd/1\nCpus_allowed:\t2\nCpus_allowed_list:\t1\nvoluntary_ctxt_switches:\t12462\nnonvoluntary_ctxt_switches:\t775\n";
        assert_eq!(parse_status(text), (13237, vec![1]));
    }

    /// Bound threads count exactly; a free one counts only where it last ran; a thread
    /// that did not run, or ran elsewhere, is left out; a new one counts from zero.
    #[test]
    fn threads_that_ran_on_the_cpu_are_counted_and_named() {
        let before = BTreeMap::from([
            (22, state("ksoftirqd/1", 100, 1, &[1])),
            (41, state("kworker/1:1-events", 10, 1, &[1])),
            (16, state("rcu_preempt", 50, 0, &[0, 1])),
            (14, state("ksoftirqd/0", 70, 0, &[0])),
            (90, state("kworker/u8:3", 5, 0, &[0, 1])),
        ]);
        let mut after = before.clone();
        after.get_mut(&22).unwrap().switches = 250;
        after.get_mut(&41).unwrap().switches = 12;
        after.get_mut(&14).unwrap().switches = 99;
        after.insert(16, state("rcu_preempt", 59, 1, &[0, 1]));
        after.insert(90, state("kworker/u8:3", 9, 0, &[0, 1]));
        after.insert(300, state("kworker/1:2-mm_percpu_wq", 3, 1, &[1]));
        let ran = ran_on(&before, &after, 1);
        assert_eq!(
            line(&ran, 1, 3.2),
            "kernel threads ran 164 times on CPU 1 over 3.2 s: ksoftirqd/1 ×150, rcu_preempt ×9 (free to run anywhere, last ran here), kworker/1:2-mm_percpu_wq ×3, kworker/1:1-events ×2"
        );
        assert_eq!(
            line(&[], 1, 3.2),
            "no kernel thread ran on CPU 1 over 3.2 s"
        );
    }
}
