//! The `prot-fault` load: map a region PROT_NONE, touch every page so each raises
//! SIGSEGV, whose handler makes that page writable, then unmap — the cost of the
//! kernel's fault and signal delivery path, as in the memory-load study.

use super::{round_robin, Counters, Load, Step, Worker};
use crate::sys::memory::{handled_prot_faults, ProtFaultRegion};
use std::sync::atomic::{AtomicU64, Ordering};

/// Default region per worker.
pub const DEFAULT_SIZE_BYTES: u64 = 16 << 20;
/// Pages touched per step.
const PAGES_PER_STEP: usize = 32;

pub struct ProtFaultLoad {
    cpus: Vec<usize>,
    workers: usize,
    size_bytes: usize,
    handled_at_start: AtomicU64,
}

impl ProtFaultLoad {
    pub fn new(cpus: &[usize], workers: usize, size_bytes: Option<u64>) -> Self {
        Self {
            cpus: cpus.to_vec(),
            workers,
            size_bytes: size_bytes.unwrap_or(DEFAULT_SIZE_BYTES) as usize,
            handled_at_start: AtomicU64::new(handled_prot_faults()),
        }
    }
}

struct ProtFaultWorker {
    size_bytes: usize,
    region: Option<ProtFaultRegion>,
    next_page: usize,
}

impl Worker for ProtFaultWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        if self.region.is_none() {
            self.region = Some(ProtFaultRegion::new(self.size_bytes)?);
            self.next_page = 0;
        }
        let region = self.region.as_ref().expect("mapped above");
        let end = (self.next_page + PAGES_PER_STEP).min(region.pages());
        for page in self.next_page..end {
            region.touch_page(page);
        }
        let done = (end - self.next_page) as u64;
        self.next_page = end;
        if end == region.pages() {
            self.region = None;
        }
        Ok(Step::Did(done))
    }
}

impl Load for ProtFaultLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn worker(&self, _index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(ProtFaultWorker {
            size_bytes: self.size_bytes,
            region: None,
            next_page: 0,
        }))
    }
    fn counters_after(&self) -> Counters {
        // SIGSEGVs the handler resolved while this load ran (process-wide counter, so
        // it includes other prot-fault loads running at the same time).
        let start = self.handled_at_start.load(Ordering::Relaxed);
        Counters::from([(
            "sigsegv_handled",
            handled_prot_faults().saturating_sub(start),
        )])
    }
}
