//! Where tracefs is (mounting it when nobody did, unmounting only what we mounted), and the
//! errors a user can fix, each saying how.

use std::io;
use std::path::{Path, PathBuf};

/// The standard mount point (mounted by us when tracefs is mounted nowhere).
pub const TRACEFS_MOUNT: &str = "/sys/kernel/tracing";

/// Problems with tracing that the user can fix, each with the fix in its message.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("--trace needs root (CAP_SYS_ADMIN) to use tracefs; run with sudo")]
    NotRoot,
    #[error("this kernel has no tracefs (built without CONFIG_FTRACE/CONFIG_TRACING), so --trace cannot record; use a kernel with tracing enabled")]
    NoTracefs,
    #[error("mounting tracefs on {path} failed: {source}; mount it yourself (`mount -t tracefs nodev {path}`) and try again")]
    Mount { path: String, source: io::Error },
    #[error("instance {name} in use by running latscope PID {pid}; wait for it to finish or stop it (a killed run's instance is removed by `latscope restore`)")]
    InstanceInUse { name: String, pid: i32 },
    #[error("none of the requested trace events exists in this kernel: {0}")]
    NoEvents(String),
    #[error("tracefs: {what}: {source}")]
    Io { what: String, source: io::Error },
}

impl TraceError {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::PermissionDenied {
            return TraceError::NotRoot;
        }
        TraceError::Io {
            what: what.into(),
            source,
        }
    }
}

/// A located (possibly self-mounted) tracefs.
#[derive(Debug)]
pub struct Tracefs {
    root: PathBuf,
    mounted_by_us: bool,
}

/// Finds a mounted tracefs in a /proc/self/mounts text: a `tracefs` mount, else `tracing/`
/// under a `debugfs` mount (old kernels and setups).
pub fn find_in_mounts(mounts: &str) -> Option<PathBuf> {
    let mut debugfs = None;
    for line in mounts.lines() {
        let mut f = line.split_whitespace();
        let (_src, target, fstype) = (f.next()?, f.next()?, f.next()?);
        let target = target.replace("\\040", " ");
        match fstype {
            "tracefs" => return Some(PathBuf::from(target)),
            "debugfs" if debugfs.is_none() => debugfs = Some(PathBuf::from(target).join("tracing")),
            _ => {}
        }
    }
    debugfs.filter(|p| p.join("trace").exists())
}

/// True when the running kernel knows the tracefs filesystem type.
pub fn kernel_has_tracefs() -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .map(|t| filesystems_list_tracefs(&t))
        .unwrap_or(false)
}

/// True when a /proc/filesystems text names tracefs.
fn filesystems_list_tracefs(filesystems: &str) -> bool {
    filesystems
        .lines()
        .any(|l| l.split_whitespace().last() == Some("tracefs"))
}

impl Tracefs {
    /// Finds tracefs, mounting it on /sys/kernel/tracing when it is mounted nowhere.
    pub fn open() -> Result<Tracefs, TraceError> {
        if crate::sys::process::effective_uid() != 0 {
            return Err(TraceError::NotRoot);
        }
        let mounts = std::fs::read_to_string("/proc/self/mounts")
            .map_err(|e| TraceError::io("reading /proc/self/mounts", e))?;
        if let Some(root) = find_in_mounts(&mounts) {
            return Ok(Tracefs {
                root,
                mounted_by_us: false,
            });
        }
        if !kernel_has_tracefs() {
            return Err(TraceError::NoTracefs);
        }
        let path = Path::new(TRACEFS_MOUNT);
        crate::sys::mount::mount_pseudo("tracefs", path).map_err(|source| {
            if source.raw_os_error() == Some(libc::EPERM) {
                TraceError::NotRoot
            } else {
                TraceError::Mount {
                    path: TRACEFS_MOUNT.into(),
                    source,
                }
            }
        })?;
        Ok(Tracefs {
            root: path.to_path_buf(),
            mounted_by_us: true,
        })
    }

    /// The tracefs directory (e.g. /sys/kernel/tracing).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `open` mounted it (and `release` will unmount it).
    pub fn mounted_by_us(&self) -> bool {
        self.mounted_by_us
    }

    /// Unmounts tracefs if we mounted it; idempotent. An error (e.g. busy because another
    /// tool opened it meanwhile) is returned and the mount stays.
    pub fn release(&mut self) -> io::Result<()> {
        if self.mounted_by_us {
            self.mounted_by_us = false;
            crate::sys::mount::umount(&self.root)?;
        }
        Ok(())
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            eprintln!(
                "latscope: warning: could not unmount the tracefs we mounted on {}: {e}",
                self.root.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracefs_before_debugfs() {
        let m = "sysfs /sys sysfs rw 0 0\ndebugfs /sys/kernel/debug debugfs rw 0 0\nnodev /sys/kernel/tracing tracefs rw,relatime 0 0\n";
        assert_eq!(
            find_in_mounts(m),
            Some(PathBuf::from("/sys/kernel/tracing"))
        );
    }

    #[test]
    fn nothing_mounted_is_none() {
        assert_eq!(find_in_mounts("sysfs /sys sysfs rw 0 0\n"), None);
    }

    #[test]
    fn a_kernel_without_tracefs_is_told_apart() {
        assert!(filesystems_list_tracefs("nodev\tsysfs\nnodev\ttracefs\n"));
        assert!(!filesystems_list_tracefs("nodev\tsysfs\n\text4\n"));
        let no = TraceError::NoTracefs.to_string();
        assert!(
            no.contains("CONFIG_FTRACE") && no.contains("--trace"),
            "{no}"
        );
        let mount = TraceError::Mount {
            path: "/sys/kernel/tracing".into(),
            source: io::Error::from_raw_os_error(libc::ENODEV),
        }
        .to_string();
        assert!(
            mount.contains("mount -t tracefs nodev /sys/kernel/tracing"),
            "{mount}"
        );
    }

    #[test]
    fn errors_say_the_fix() {
        assert!(TraceError::NotRoot.to_string().contains("run with sudo"));
        let e = TraceError::InstanceInUse {
            name: "latscope-12".into(),
            pid: 12,
        };
        assert_eq!(
            e.to_string().split(';').next().unwrap(),
            "instance latscope-12 in use by running latscope PID 12"
        );
    }
}
