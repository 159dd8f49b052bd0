//! The cpuset cgroup file system, v1 and v2: finding its mount, reading and writing
//! its knobs (one value per write, as the kernel demands) and moving tasks, so the
//! isolation guard never spells a cgroup path or a file name itself.

use anyhow::Context;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Which cgroup hierarchy carries the cpuset controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpusetMount {
    /// cgroup v1 `cpuset` hierarchy; `prefix` is `cpuset.` unless mounted `noprefix`.
    V1 { root: PathBuf, prefix: String },
    /// cgroup v2 (unified) hierarchy whose root offers the cpuset controller.
    V2 { root: PathBuf },
}

impl CpusetMount {
    pub fn root(&self) -> &Path {
        match self {
            CpusetMount::V1 { root, .. } | CpusetMount::V2 { root } => root,
        }
    }

    /// The path of knob `name` (`cpus`, `mems`, `cpu_exclusive`, ...) in `dir`.
    pub fn knob(&self, dir: &Path, name: &str) -> PathBuf {
        match self {
            CpusetMount::V1 { prefix, .. } => dir.join(format!("{prefix}{name}")),
            CpusetMount::V2 { .. } => dir.join(format!("cpuset.{name}")),
        }
    }

    /// `cgroup-v1` or `cgroup-v2`, as reports name the mechanism.
    pub fn mechanism(&self) -> &'static str {
        match self {
            CpusetMount::V1 { .. } => "cgroup-v1",
            CpusetMount::V2 { .. } => "cgroup-v2",
        }
    }
}

/// Finds the cpuset hierarchy from /proc/mounts: a v2 mount whose root offers the
/// cpuset controller wins (the kernel binds a controller to one hierarchy only), else a
/// v1 mount with the `cpuset` option.
pub fn find_mount() -> Option<CpusetMount> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    find_mount_in(&mounts, |p| std::fs::read_to_string(p).ok())
}

/// [`find_mount`] over given /proc/mounts text and a file reader (for tests).
pub fn find_mount_in(mounts: &str, read: impl Fn(&Path) -> Option<String>) -> Option<CpusetMount> {
    let mut v1 = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 {
            continue;
        }
        let (dir, fstype, options) = (PathBuf::from(fields[1]), fields[2], fields[3]);
        match fstype {
            "cgroup2" => {
                let controllers = read(&dir.join("cgroup.controllers")).unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "cpuset") {
                    return Some(CpusetMount::V2 { root: dir });
                }
            }
            "cgroup" if v1.is_none() && options.split(',').any(|o| o == "cpuset") => {
                let noprefix = options.split(',').any(|o| o == "noprefix");
                v1 = Some(CpusetMount::V1 {
                    root: dir,
                    prefix: if noprefix { "" } else { "cpuset." }.into(),
                });
            }
            _ => {}
        }
    }
    v1
}

/// Reads a knob, trimmed of its trailing newline.
pub fn read_value(path: &Path) -> io::Result<String> {
    Ok(std::fs::read_to_string(path)?.trim_end().to_string())
}

/// Writes `value` to a cgroup or proc knob in a single write(2), as these files need.
pub fn write_value(path: &Path, value: &str) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(value.as_bytes())
}

/// Like [`write_value`], with the path and value in the error.
pub fn set(path: &Path, value: &str) -> anyhow::Result<()> {
    write_value(path, value).with_context(|| format!("writing '{value}' to {}", path.display()))
}

/// The task (thread) ids listed in `file` (v1 `tasks`, v2 `cgroup.procs`/`cgroup.threads`).
pub fn task_ids(file: &Path) -> io::Result<Vec<i32>> {
    Ok(std::fs::read_to_string(file)?
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect())
}

/// Moves task `tid` into the cgroup whose task list is `file`.
pub fn move_task(file: &Path, tid: i32) -> io::Result<()> {
    write_value(file, &tid.to_string())
}

/// The cpuset directories below `dir` (not `dir` itself), parents before children.
pub fn child_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect(),
        Err(_) => return out,
    };
    entries.sort();
    for e in entries {
        out.push(e.clone());
        out.extend(child_dirs(&e));
    }
    out
}

/// Creates a cgroup directory.
pub fn make_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir(dir).with_context(|| format!("creating cpuset {}", dir.display()))
}

/// Attempts to remove a just-emptied cgroup directory (10 ms apart).
const RMDIR_TRIES: u32 = 100;

/// Removes a cgroup directory whose tasks were just moved out; the kernel answers EBUSY
/// until the last of them has really left, so this retries for up to a second.
pub fn remove_dir_when_empty(dir: &Path) -> io::Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < RMDIR_TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Whether a failed [`move_task`] failed because the task has exited meanwhile (ESRCH).
pub fn task_exited(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ESRCH)
}

/// The cgroup v2 path of process `pid` relative to the v2 root (from /proc/PID/cgroup).
pub fn v2_cgroup_of(pid: i32) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| PathBuf::from(p.trim_start_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_found_when_v2_lacks_cpuset() {
        let mounts = "cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        let m = find_mount_in(mounts, |_| Some("hugetlb".into())).unwrap();
        assert_eq!(
            m,
            CpusetMount::V1 {
                root: "/sys/fs/cgroup/cpuset".into(),
                prefix: "cpuset.".into()
            }
        );
        assert_eq!(
            m.knob(Path::new("/x"), "cpus"),
            PathBuf::from("/x/cpuset.cpus")
        );
    }

    #[test]
    fn v2_wins_when_it_offers_cpuset() {
        let mounts = "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n";
        let m = find_mount_in(mounts, |_| Some("cpuset cpu io memory".into())).unwrap();
        assert_eq!(
            m,
            CpusetMount::V2 {
                root: "/sys/fs/cgroup".into()
            }
        );
    }

    #[test]
    fn noprefix_v1() {
        let mounts = "none /dev/cpuset cgroup rw,cpuset,noprefix 0 0\n";
        let m = find_mount_in(mounts, |_| None).unwrap();
        assert_eq!(
            m.knob(Path::new("/dev/cpuset"), "cpus"),
            PathBuf::from("/dev/cpuset/cpus")
        );
    }
}
