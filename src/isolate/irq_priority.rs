//! `latscope gpio --irq-priority N`: the IRQ thread of the measured line at SCHED_FIFO N
//! for the run. Its policy and priority are saved before the write and put back on Drop
//! and by the emergency restorer (a second Ctrl-C), like every knob latscope turns.

use crate::sys::sched::{self, Policy};
use std::sync::{Arc, Mutex};

/// The IRQ thread's original scheduling, restored when dropped.
pub struct IrqPriorityGuard {
    tid: i32,
    original: (Policy, i32),
    restored: Arc<Mutex<bool>>,
    restorer: u64,
}

fn put_back(tid: i32, original: (Policy, i32), restored: &Mutex<bool>) {
    let mut done = restored.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        // The thread may be gone (its line released): nothing to restore then.
        let _ = sched::set_task(tid, original.0, original.1);
        *done = true;
    }
}

impl IrqPriorityGuard {
    /// Saves `tid`'s policy and priority, then sets SCHED_FIFO `priority`.
    pub fn set(tid: i32, priority: i32) -> anyhow::Result<Self> {
        let original = sched::task_policy(tid)
            .ok_or_else(|| anyhow::anyhow!("reading the scheduling of IRQ thread {tid}"))?;
        let restored = Arc::new(Mutex::new(false));
        let for_restorer = restored.clone();
        let restorer =
            crate::interrupt::register_restorer(move || put_back(tid, original, &for_restorer));
        let guard = Self {
            tid,
            original,
            restored,
            restorer,
        };
        sched::set_task(tid, Policy::Fifo, priority).map_err(|e| {
            anyhow::anyhow!("setting IRQ thread {tid} to SCHED_FIFO {priority}: {e}")
        })?;
        Ok(guard)
    }

    /// The policy and priority found before the change.
    pub fn original(&self) -> (Policy, i32) {
        self.original
    }

    /// Restores now (also done on Drop); returns what the thread has afterwards.
    pub fn restore(&mut self) -> Option<(Policy, i32)> {
        put_back(self.tid, self.original, &self.restored);
        sched::task_policy(self.tid)
    }
}

impl Drop for IrqPriorityGuard {
    fn drop(&mut self) {
        put_back(self.tid, self.original, &self.restored);
        crate::interrupt::unregister_restorer(self.restorer);
    }
}
