//! The `syscall` load: a storm of cheap system calls (getppid) with a signal sent to
//! the thread itself every step, each really delivered to a counting handler.

use super::{round_robin, Counters, Load, Step, Worker};
use crate::sys::{process, sched, signals};

/// Cheap system calls per step (plus one tgkill and one signal delivery).
const CALLS_PER_STEP: u64 = 256;

pub struct SyscallLoad {
    cpus: Vec<usize>,
    workers: usize,
    handled_at_start: u64,
}

impl SyscallLoad {
    pub fn new(cpus: &[usize], workers: usize) -> anyhow::Result<Self> {
        process::install_storm_signal_handler()?;
        Ok(Self {
            cpus: cpus.to_vec(),
            workers,
            handled_at_start: process::storm_signals_handled(),
        })
    }
}

struct SyscallWorker {
    tid: libc::pid_t,
    signals_sent: u64,
}

impl Worker for SyscallWorker {
    fn step(&mut self) -> anyhow::Result<Step> {
        for _ in 0..CALLS_PER_STEP {
            std::hint::black_box(process::cheap_syscall());
        }
        signals::send_to_thread(self.tid, process::STORM_SIGNAL)?;
        self.signals_sent += 1;
        Ok(Step::Did(CALLS_PER_STEP + 1))
    }

    fn counters(&self) -> Counters {
        Counters::from([("signals_sent", self.signals_sent)])
    }
}

impl Load for SyscallLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, index: usize) -> usize {
        round_robin(&self.cpus, index)
    }
    fn worker(&self, _index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(SyscallWorker {
            tid: sched::gettid(),
            signals_sent: 0,
        }))
    }
    fn counters_after(&self) -> Counters {
        Counters::from([(
            "signals_handled",
            process::storm_signals_handled().saturating_sub(self.handled_at_start),
        )])
    }
}
