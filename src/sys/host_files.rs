//! Reading the machine's own files (/proc, /sys, /boot, /dev) below a root that is `/`
//! on a real run and a fixture tree in tests (`latscope doctor --root DIR`), so every
//! readiness check reads through one place and can be tested on other machines' trees.
//! What is not a file (the CPUID signature, whether an IRQ refuses a new affinity) a
//! fixture tree holds as recorded under `/.recorded/`.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The file system a check reads: `/`, or a fixture tree standing in for it.
#[derive(Debug, Clone)]
pub struct HostFiles {
    root: PathBuf,
}

impl HostFiles {
    /// This machine's files.
    pub fn real() -> Self {
        Self { root: "/".into() }
    }

    /// A tree laid out like `/` (a fixture).
    pub fn under(root: &Path) -> Self {
        Self { root: root.into() }
    }

    /// Whether these are this machine's own files (measuring and trying makes sense).
    pub fn is_real(&self) -> bool {
        self.root == Path::new("/")
    }

    /// `path` (absolute, as on the machine) below the root.
    pub fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The whole file as text (lossy UTF-8; at most 4 MiB: these are kernel text files).
    pub fn read(&self, path: &str) -> io::Result<String> {
        let mut bytes = Vec::new();
        std::fs::File::open(self.path(path))?
            .take(4 << 20)
            .read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The file trimmed, `None` when it cannot be read.
    pub fn read_trim(&self, path: &str) -> Option<String> {
        self.read(path).ok().map(|s| s.trim().to_string())
    }

    /// A gzip-compressed text file (/proc/config.gz), decompressed (at most 16 MiB).
    pub fn read_gz(&self, path: &str) -> io::Result<String> {
        let file = std::fs::File::open(self.path(path))?;
        let mut text = String::new();
        flate2::read::GzDecoder::new(file)
            .take(16 << 20)
            .read_to_string(&mut text)?;
        Ok(text)
    }

    /// A native-endian i32 file (/dev/cpu_dma_latency reads as one).
    pub fn read_i32(&self, path: &str) -> io::Result<i32> {
        let mut buf = [0u8; 4];
        std::fs::File::open(self.path(path))?.read_exact(&mut buf)?;
        Ok(i32::from_ne_bytes(buf))
    }

    /// The kernel log's messages, one a line: /dev/kmsg read without blocking here, a
    /// text file /dev/kmsg in a fixture tree.
    pub fn kernel_log(&self) -> io::Result<String> {
        if self.is_real() {
            return super::kmsg::messages();
        }
        Ok(self
            .read("/dev/kmsg")?
            .lines()
            .map(super::kmsg::message_of)
            .collect())
    }

    /// The hypervisor's CPUID signature (`KVMKVMKVM`): the CPU's here, a tree's
    /// `/.recorded/cpuid-0x40000000`; `None` on bare metal or when not recorded.
    pub fn hypervisor_signature(&self) -> Option<String> {
        if self.is_real() {
            return super::cpuid::hypervisor_signature();
        }
        self.read_trim("/.recorded/cpuid-0x40000000")
            .filter(|s| !s.is_empty())
    }

    /// Whether the kernel refuses user space a new affinity for `irq` (a kernel-managed
    /// IRQ): asked here (`irq::refuses_new_affinity`, root only), a tree's
    /// `/.recorded/irq-N-affinity-refused` (present: refused). `None`: unknown.
    pub fn irq_refuses_affinity(&self, irq: u32) -> Option<bool> {
        if self.is_real() {
            return super::irq::refuses_new_affinity(irq);
        }
        Some(self.exists(&format!("/.recorded/irq-{irq}-affinity-refused")))
    }

    pub fn exists(&self, path: &str) -> bool {
        self.path(path).exists()
    }

    /// The names in a directory, sorted (empty when it cannot be read).
    pub fn list(&self, path: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(path))
            .map(|dir| {
                dir.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// Why a file could not be read, in the words a SKIP line uses.
pub fn why_unreadable(err: &io::Error) -> &'static str {
    match err.kind() {
        io::ErrorKind::NotFound => "missing",
        io::ErrorKind::PermissionDenied => "not readable without root",
        _ => "unreadable",
    }
}
