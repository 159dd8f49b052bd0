//! Helpers shared by the integration tests: fixture paths and a CPU this process may use.
#![allow(dead_code)]

use std::path::PathBuf;

/// A file under tests/fixtures/.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The last CPU this process is allowed to run on (tests may be confined by a cpuset).
pub fn usable_cpu() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|list| latscope::units::parse_cpu_list_plain(list.trim()).ok())
        .and_then(|cpus| cpus.last().copied())
        .unwrap_or(0)
}

/// Whether a program is on PATH.
pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
