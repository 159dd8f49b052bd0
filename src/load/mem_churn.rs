//! The `mem-churn` load: map a region, write every page (a minor fault each), unmap,
//! again and again — page-fault and allocator pressure, as in the memory-load study.

use super::{round_robin, Counters, Load, Step, Worker};
use crate::sys::memory::AnonMapping;

/// Default region per worker.
pub const DEFAULT_SIZE_BYTES: u64 = 64 << 20;
/// Pages written per step (bounded work per step for the duty cycle).
const PAGES_PER_STEP: usize = 64;

pub struct MemChurnLoad {
    /// Process minor faults when the load was built (to show they are real faults).
    faults_at_start: u64,
    cpus: Vec<usize>,
    workers: usize,
    size_bytes: usize,
}

impl MemChurnLoad {
    pub fn new(cpus: &[usize], workers: usize, size_bytes: Option<u64>) -> Self {
        Self {
            faults_at_start: minor_faults(),
            cpus: cpus.to_vec(),
            workers,
            size_bytes: size_bytes.unwrap_or(DEFAULT_SIZE_BYTES) as usize,
        }
    }
}

struct MemChurnWorker {
    size_bytes: usize,
    region: Option<AnonMapping>,
    next_page: usize,
    maps: u64,
}

impl Worker for MemChurnWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        if self.region.is_none() {
            self.region = Some(AnonMapping::new_faulting(self.size_bytes)?);
            self.next_page = 0;
            self.maps += 1;
        }
        let region = self.region.as_ref().expect("mapped above");
        let end = (self.next_page + PAGES_PER_STEP).min(region.pages());
        for page in self.next_page..end {
            region.touch_page(page, page as u8 | 1);
        }
        let done = (end - self.next_page) as u64;
        self.next_page = end;
        if end == region.pages() {
            // munmap: the next step maps a fresh region whose pages fault again.
            self.region = None;
        }
        Ok(Step::Did(done))
    }

    fn counters(&self) -> Counters {
        Counters::from([("mmaps", self.maps)])
    }
}

impl Load for MemChurnLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn counters_after(&self) -> Counters {
        Counters::from([(
            "process_minor_faults",
            minor_faults().saturating_sub(self.faults_at_start),
        )])
    }
    fn worker(&self, _index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(MemChurnWorker {
            size_bytes: self.size_bytes,
            region: None,
            next_page: 0,
            maps: 0,
        }))
    }
}

/// The process's minor faults so far (all threads; 0 if getrusage fails).
pub(crate) fn minor_faults() -> u64 {
    crate::sys::process::usage_self()
        .map(|u| u.minor_faults)
        .unwrap_or(0)
}
