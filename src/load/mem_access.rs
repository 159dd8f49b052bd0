//! The `mem-access` load: volatile stores to every cache line and a streaming read over
//! a buffer larger than the last-level cache — memory-bus and cache pressure.

use super::{round_robin, Load, Step, Worker};
use crate::sys::memory::volatile_store;

/// Bytes streamed per step (a write pass and a read pass over this chunk).
const CHUNK_BYTES: usize = 256 * 1024;
/// The smallest default buffer.
const MIN_DEFAULT_BYTES: u64 = 64 << 20;
const LINE_WORDS: usize = 64 / 8;

/// The largest cache this machine reports (sysfs), in bytes.
pub fn last_level_cache_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
        .filter_map(|s| crate::units::parse_size_bytes(s.trim()).ok())
        .max()
}

/// The default buffer: twice the last-level cache, at least 64 MiB.
pub fn default_size_bytes() -> u64 {
    last_level_cache_bytes()
        .map(|c| c * 2)
        .unwrap_or(0)
        .max(MIN_DEFAULT_BYTES)
}

pub struct MemAccessLoad {
    cpus: Vec<usize>,
    workers: usize,
    size_bytes: usize,
}

impl MemAccessLoad {
    pub fn new(cpus: &[usize], workers: usize, size_bytes: Option<u64>) -> Self {
        Self {
            cpus: cpus.to_vec(),
            workers,
            size_bytes: size_bytes.unwrap_or_else(default_size_bytes) as usize,
        }
    }
}

struct MemAccessWorker {
    buffer: Vec<u64>,
    position: usize,
    sum: u64,
}

impl Worker for MemAccessWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        let words = CHUNK_BYTES / 8;
        if self.position + words > self.buffer.len() {
            self.position = 0;
        }
        let chunk = &mut self.buffer[self.position..self.position + words];
        for line in chunk.chunks_exact_mut(LINE_WORDS) {
            volatile_store(&mut line[0], self.sum);
        }
        let mut sum = self.sum;
        for &w in chunk.iter() {
            sum = sum.wrapping_add(w);
        }
        self.sum = std::hint::black_box(sum);
        self.position += words;
        Ok(Step::Did(2 * CHUNK_BYTES as u64))
    }
}

impl Load for MemAccessLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let words = self.size_bytes.max(CHUNK_BYTES) / 8;
        // Filled (so every page is present) on the worker's own CPU.
        let buffer = vec![index as u64 + 1; words];
        Ok(Box::new(MemAccessWorker {
            buffer,
            position: 0,
            sum: 0,
        }))
    }
    fn units_per_reported(&self) -> f64 {
        1e6
    }
}
