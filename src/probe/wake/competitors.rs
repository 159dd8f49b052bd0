//! Competing threads for `latscope wake --competitors N`: SCHED_OTHER threads pinned to
//! the wakee's CPU, each looping nanosleep(1 µs) as in the study, so the wakee has to
//! win its CPU back from them. They take the scenario's `--timer-slack` (default 1 ns,
//! so a 1 µs sleep is 1 µs; at the kernel's 50 µs default each would sleep ~51 µs and
//! compete 50 times less often). They stop and are joined when the guard drops, on every
//! exit path of a scenario.

use crate::sys::{affinity, clock, sched, sched::Policy};
use anyhow::Context;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How long each competitor sleeps per loop (the study's 1 µs).
pub const COMPETITOR_SLEEP_NS: u64 = 1_000;
/// Competitors run little code: a small stack keeps mlockall's cost low.
const COMPETITOR_STACK_BYTES: usize = 64 * 1024;

/// Running competitors; dropping this stops and joins them.
pub struct Competitors {
    stop: Arc<AtomicBool>,
    loops: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl Competitors {
    /// Starts `count` competitors on `cpu` and waits until each has placed itself;
    /// `timer_slack_ns` as the measuring threads (None: the inherited slack).
    pub fn start(cpu: usize, count: usize, timer_slack_ns: Option<u64>) -> anyhow::Result<Self> {
        let mut me = Self {
            stop: Arc::new(AtomicBool::new(false)),
            loops: Arc::new(AtomicU64::new(0)),
            threads: Vec::with_capacity(count),
        };
        let (placed_tx, placed_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
        for n in 0..count {
            let stop = me.stop.clone();
            let loops = me.loops.clone();
            let placed = placed_tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("latscope-compete{n}"))
                .stack_size(COMPETITOR_STACK_BYTES)
                .spawn(move || {
                    // Competitors belong to the scenario: under --isolate they enter the
                    // shield with the wakee, since they compete on its CPU.
                    let placement = crate::isolate::enter_for_cpu(cpu)
                        .map_err(|e| std::io::Error::other(format!("{e:#}")))
                        .and_then(|()| affinity::pin_current_thread(cpu))
                        .and_then(|()| sched::set_current_thread(Policy::Other, 0));
                    let ok = placement.is_ok();
                    let _ = placed.send(placement);
                    if !ok {
                        return;
                    }
                    if let Some(ns) = timer_slack_ns {
                        sched::set_timer_slack_ns(ns);
                    }
                    let mut local: u64 = 0;
                    while !stop.load(Ordering::Relaxed) {
                        clock::sleep_for_ns(COMPETITOR_SLEEP_NS);
                        local += 1;
                    }
                    loops.fetch_add(local, Ordering::Relaxed);
                })
                .context("spawning a competitor thread")?;
            me.threads.push(handle);
        }
        drop(placed_tx);
        for _ in 0..count {
            match placed_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    return Err(e).with_context(|| format!("placing a competitor on CPU {cpu}"))
                }
                Err(_) => anyhow::bail!("a competitor thread ended before placing itself"),
            }
        }
        Ok(me)
    }

    /// Stops and joins the competitors; returns how many sleep loops they made in all.
    pub fn stop(mut self) -> u64 {
        self.halt();
        self.loops.load(Ordering::Relaxed)
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Competitors {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn competitor_threads_of_this_process() -> usize {
        std::fs::read_dir("/proc/self/task")
            .map(|dir| {
                dir.filter_map(|t| t.ok())
                    .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                    .filter(|comm| comm.starts_with("latscope-compet"))
                    .count()
            })
            .unwrap_or(0)
    }

    #[test]
    fn competitors_run_and_leave_nothing_behind() {
        let cpu = crate::sys::affinity::online_cpus()[0];
        let competitors = Competitors::start(cpu, 3, Some(1)).unwrap();
        assert_eq!(competitor_threads_of_this_process(), 3);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(competitors.stop() > 0, "competitors looped");
        assert_eq!(competitor_threads_of_this_process(), 0);
        drop(Competitors::start(cpu, 2, None).unwrap());
        assert_eq!(competitor_threads_of_this_process(), 0);
    }
}
