//! The `io` load: write a file in 256 KiB blocks with an fsync every 4 MiB, drop it
//! from the page cache, read it back sequentially, truncate, repeat — block I/O and
//! its interrupts. Files live in a temporary directory removed afterwards (also on a
//! second Ctrl-C, through an emergency restorer).

use super::{Counters, Load, Step, Worker};
use crate::sys::memory::drop_file_cache;
use anyhow::Context;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The scratch directory's name starts with this and latscope's PID (`latscope-io-PID-…`),
/// so `latscope restore` can remove those of dead runs.
pub const SCRATCH_PREFIX: &str = "latscope-io-";

/// Removes `latscope-io-PID-*` directories under `dir` whose PID is no longer running;
/// returns one line per directory (removed, or why not).
pub fn remove_stale_scratch_in(dir: &Path) -> Vec<Result<String, String>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stale: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid: i32 = name
                .strip_prefix(SCRATCH_PREFIX)?
                .split('-')
                .next()?
                .parse()
                .ok()?;
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (is_dir && !crate::sys::mount::pid_alive(pid)).then(|| e.path())
        })
        .collect();
    stale.sort();
    stale
        .into_iter()
        .map(|p| match std::fs::remove_dir_all(&p) {
            Ok(()) => Ok(format!(
                "removed io load scratch directory {} (its latscope run is gone)",
                p.display()
            )),
            Err(e) => Err(format!("cannot remove {}: {e}", p.display())),
        })
        .collect()
}

/// Default file size per worker.
pub const DEFAULT_SIZE_BYTES: u64 = 32 << 20;
/// Bytes per write or read step.
const BLOCK_BYTES: usize = 256 * 1024;
/// Bytes between fsyncs.
const FSYNC_EVERY_BYTES: u64 = 4 << 20;

pub struct IoLoad {
    cpus: Vec<usize>,
    workers: usize,
    size_bytes: u64,
    dir: tempfile::TempDir,
    restorer: u64,
}

impl IoLoad {
    pub fn new(
        cpus: &[usize],
        workers: usize,
        size_bytes: Option<u64>,
        dir: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let parent = dir
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{SCRATCH_PREFIX}{}-", std::process::id()))
            .tempdir_in(&parent)
            .with_context(|| format!("creating the io load's directory in {}", parent.display()))?;
        let path = dir.path().to_path_buf();
        let restorer = crate::interrupt::register_restorer(move || {
            let _ = std::fs::remove_dir_all(&path);
        });
        Ok(Self {
            cpus: cpus.to_vec(),
            workers,
            size_bytes: size_bytes.unwrap_or(DEFAULT_SIZE_BYTES),
            dir,
            restorer,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for IoLoad {
    fn drop(&mut self) {
        crate::interrupt::unregister_restorer(self.restorer);
    }
}

struct IoWorker {
    file: File,
    _path: PathBuf,
    size_bytes: u64,
    buffer: Vec<u8>,
    offset: u64,
    reading: bool,
    unsynced: u64,
    written: u64,
    read: u64,
    fsyncs: u64,
}

impl IoWorker {
    fn sync(&mut self) -> anyhow::Result<()> {
        self.file.sync_data().context("fsync")?;
        self.fsyncs += 1;
        self.unsynced = 0;
        Ok(())
    }
}

impl Worker for IoWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        if !self.reading {
            let n = (BLOCK_BYTES as u64).min(self.size_bytes - self.offset) as usize;
            self.file
                .write_all(&self.buffer[..n])
                .context("writing the io load's file")?;
            self.offset += n as u64;
            self.unsynced += n as u64;
            self.written += n as u64;
            if self.unsynced >= FSYNC_EVERY_BYTES || self.offset >= self.size_bytes {
                self.sync()?;
            }
            if self.offset >= self.size_bytes {
                drop_file_cache(&self.file).context("dropping the file from the cache")?;
                self.file.seek(SeekFrom::Start(0))?;
                self.offset = 0;
                self.reading = true;
            }
            return Ok(Step::Did(n as u64));
        }
        let n = self
            .file
            .read(&mut self.buffer)
            .context("reading the io load's file")?;
        self.read += n as u64;
        if n == 0 {
            // Read to the end: start over with a fresh, empty file.
            self.file.set_len(0)?;
            self.file.seek(SeekFrom::Start(0))?;
            self.reading = false;
        }
        Ok(Step::Did(n as u64))
    }

    fn counters(&self) -> Counters {
        Counters::from([
            ("bytes_written", self.written),
            ("bytes_read", self.read),
            ("fsyncs", self.fsyncs),
        ])
    }
}

impl Load for IoLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        super::round_robin(&self.cpus, index)
    }
    fn worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let path = self.dir.path().join(format!("worker-{index}"));
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        Ok(Box::new(IoWorker {
            file,
            _path: path,
            size_bytes: self.size_bytes,
            buffer: vec![0xa5; BLOCK_BYTES],
            offset: 0,
            reading: false,
            unsynced: 0,
            written: 0,
            read: 0,
            fsyncs: 0,
        }))
    }
    fn units_per_reported(&self) -> f64 {
        1e6
    }
}
