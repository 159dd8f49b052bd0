//! CPU time of load threads and child processes as the kernel accounts it in /proc, so
//! a load's CPU share is measured, not assumed.

use std::path::Path;

/// CPU time the calling thread has used, ns: /proc/thread-self/schedstat (exact,
/// nanoseconds), else utime+stime of /proc/thread-self/stat (clock ticks).
pub fn current_thread_cpu_ns() -> u64 {
    if let Some(ns) = schedstat_ns(Path::new("/proc/thread-self/schedstat")) {
        return ns;
    }
    stat_cpu_ns(Path::new("/proc/thread-self/stat")).unwrap_or(0)
}

/// The first field of a schedstat file: time spent on the CPU, ns.
fn schedstat_ns(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The fields of a /proc/PID/stat line after the command name (which may contain
/// spaces and parentheses, so it is skipped up to the last ')').
fn stat_fields(text: &str) -> Option<Vec<&str>> {
    let after = &text[text.rfind(')')? + 1..];
    Some(after.split_whitespace().collect())
}

/// utime + stime of a /proc stat file, ns.
pub fn stat_cpu_ns(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let f = stat_fields(&text)?;
    // After the name: state(0) ppid(1) pgrp(2) ... utime(11) stime(12).
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 1_000_000_000 / crate::sys::process::clock_ticks_per_second())
}

/// The CPU time (utime + stime, plus cutime + cstime of the children they reaped, ns)
/// of every live process in process group `pgid`, and how many there are.
pub fn group_cpu_ns(pgid: i32) -> (u64, usize) {
    let mut total = 0;
    let mut count = 0;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return (0, 0);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(f) = stat_fields(&text) else {
            continue;
        };
        if f.get(2).and_then(|g| g.parse::<i32>().ok()) != Some(pgid) {
            continue;
        }
        let ticks: u64 = (11..=14)
            .map(|i| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
            .sum();
        total += ticks * 1_000_000_000 / crate::sys::process::clock_ticks_per_second();
        count += 1;
    }
    (total, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_thread_and_process() {
        let start = current_thread_cpu_ns();
        let mut x = 1u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        assert!(current_thread_cpu_ns() > start);
        assert!(stat_cpu_ns(Path::new("/proc/self/stat")).is_some());
        let f = stat_fields("1 (a b) c) S 0 1 1").unwrap();
        assert_eq!(f[0], "S");
    }
}
