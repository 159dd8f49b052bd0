//! The `sleepers` load: N threads each looping nanosleep(1 µs) — a stream of timer
//! expiries and wake-ups for the scheduler (the competitors of the thread-wake study).

use super::{round_robin, Load, Step, Worker};
use crate::sys::clock;

/// Threads when the spec gives no count.
pub const DEFAULT_THREADS: usize = 16;
/// The sleep of each loop.
const SLEEP_NS: u64 = 1_000;

pub struct SleepersLoad {
    cpus: Vec<usize>,
    threads: usize,
}

impl SleepersLoad {
    pub fn new(cpus: &[usize], threads: usize) -> Self {
        Self {
            cpus: cpus.to_vec(),
            threads,
        }
    }
}

struct Sleeper;

impl Worker for Sleeper {
    fn step(&mut self) -> anyhow::Result<Step> {
        clock::sleep_for_ns(SLEEP_NS);
        Ok(Step::Did(1))
    }
}

impl Load for SleepersLoad {
    fn workers(&self) -> usize {
        self.threads
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn follows_duty(&self, _index: usize) -> bool {
        false
    }
    fn worker(&self, _index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(Sleeper))
    }
}
