//! The `fork` load: create a process that exits at once, and reap it — process
//! creation, exit and the page-table work they cost.

use super::{round_robin, Load, Step, Worker};
use crate::sys::process;

pub struct ForkLoad {
    cpus: Vec<usize>,
    workers: usize,
}

impl ForkLoad {
    pub fn new(cpus: &[usize], workers: usize) -> Self {
        Self {
            cpus: cpus.to_vec(),
            workers,
        }
    }
}

struct ForkWorker;

impl Worker for ForkWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        process::fork_and_reap()?;
        Ok(Step::Did(1))
    }
}

impl Load for ForkLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn worker(&self, _index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(ForkWorker))
    }
}
