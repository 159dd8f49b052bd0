//! The `cpu` load: an integer arithmetic loop (multiply, add, rotate) that keeps an
//! execution unit busy without touching memory.

use super::{round_robin, Load, Step, Worker};

/// Iterations per step: a few tens of µs, so the duty cycle stays accurate.
const ITERATIONS_PER_STEP: u64 = 20_000;

pub struct CpuLoad {
    cpus: Vec<usize>,
    workers: usize,
}

impl CpuLoad {
    pub fn new(cpus: &[usize], workers: usize) -> Self {
        Self {
            cpus: cpus.to_vec(),
            workers,
        }
    }
}

struct CpuWorker {
    state: u64,
}

impl Worker for CpuWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        let mut x = self.state;
        for i in 0..ITERATIONS_PER_STEP {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(i)
                .rotate_left(7);
        }
        self.state = std::hint::black_box(x);
        Ok(Step::Did(ITERATIONS_PER_STEP))
    }
}

impl Load for CpuLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(CpuWorker {
            state: index as u64 + 1,
        }))
    }
    fn units_per_reported(&self) -> f64 {
        1e6
    }
}
