//! Starting measuring threads the same way for every probe: pinned to their CPU, at
//! their policy, stack prefaulted, state allocated on that CPU, then all released at
//! once through a start barrier with a common start time.

use crate::sys::{affinity, clock, memlock, sched, sched::Policy};
use anyhow::{anyhow, Context};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Condvar, Mutex};

/// Where and how one measuring thread runs.
#[derive(Debug, Clone, Copy)]
pub struct ThreadPlacement {
    pub cpu: usize,
    pub policy: Policy,
    pub priority: i32,
    /// The timer slack to set (PR_SET_TIMERSLACK), ns; None leaves the slack the thread
    /// inherits (the kernel's 50 µs default unless the parent changed it), as
    /// cyclictest does.
    pub timer_slack_ns: Option<u64>,
}

/// Stack size of measuring threads: small, because mlockall(MCL_FUTURE) makes every
/// page of it resident.
pub const MEASURING_STACK_BYTES: usize = 512 * 1024;
/// How much of that stack is touched before the start.
pub const PREFAULT_STACK_BYTES: usize = 256 * 1024;
/// Delay between the release and the common start time.
const START_LEAD_NS: u64 = 2_000_000;

/// Runs one thread per placement. Each pins itself, sets its policy, prefaults its
/// stack, runs `prepare` (allocations go here), waits for the others, then runs
/// `measure` with the common start time. Returns the results in placement order.
pub fn run_measuring_threads<S, T, P, M>(
    placements: &[ThreadPlacement],
    prepare: P,
    measure: M,
) -> anyhow::Result<Vec<T>>
where
    S: Send,
    T: Send,
    P: Fn(usize) -> anyhow::Result<S> + Sync,
    M: Fn(usize, S, u64) -> T + Sync,
{
    run_measuring_threads_with_tids(placements, prepare, measure).map(|(results, _)| results)
}

/// `run_measuring_threads`, also returning each thread's kernel thread id (gettid) in
/// placement order, so `--trace` can find the measuring threads in sched events.
pub fn run_measuring_threads_with_tids<S, T, P, M>(
    placements: &[ThreadPlacement],
    prepare: P,
    measure: M,
) -> anyhow::Result<(Vec<T>, Vec<i32>)>
where
    S: Send,
    T: Send,
    P: Fn(usize) -> anyhow::Result<S> + Sync,
    M: Fn(usize, S, u64) -> T + Sync,
{
    run_threads(placements, prepare, measure, |_| Ok(()))
}

/// The body of `run_measuring_threads_with_tids`; `before_spawn(index)` runs before each
/// spawn and its error stands for a failed spawn (tests inject one there).
fn run_threads<S, T, P, M>(
    placements: &[ThreadPlacement],
    prepare: P,
    measure: M,
    before_spawn: impl Fn(usize) -> std::io::Result<()>,
) -> anyhow::Result<(Vec<T>, Vec<i32>)>
where
    S: Send,
    T: Send,
    P: Fn(usize) -> anyhow::Result<S> + Sync,
    M: Fn(usize, S, u64) -> T + Sync,
{
    let tids: Vec<AtomicI32> = placements.iter().map(|_| AtomicI32::new(0)).collect();
    let tids = &tids;
    let gate = StartGate::default();
    let prepare = &prepare;
    let measure = &measure;
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(placements.len());
        for (index, placement) in placements.iter().copied().enumerate() {
            let gate = &gate;
            let spawned = before_spawn(index).and_then(|()| {
                std::thread::Builder::new()
                    .name(format!("latscope-cpu{}", placement.cpu))
                    .stack_size(MEASURING_STACK_BYTES)
                    .spawn_scoped(scope, move || -> anyhow::Result<T> {
                        // Leaving before `wait` (a panic in prepare) opens the gate as
                        // aborted, so the others are not left waiting.
                        let arrival = Arrival {
                            gate,
                            waited: false,
                        };
                        tids[index].store(sched::gettid(), Ordering::Relaxed);
                        let prepared = place_current_thread(&placement).and_then(|()| {
                            memlock::prefault_stack(PREFAULT_STACK_BYTES);
                            prepare(index)
                        });
                        let start_ns = arrival.wait();
                        let state = prepared?;
                        let start_ns = start_ns.ok_or_else(|| {
                            anyhow!("another measuring thread could not be started")
                        })?;
                        Ok(measure(index, state, start_ns))
                    })
            });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    // The started threads wait at the gate: release them before the
                    // scope joins them, or it would wait forever.
                    gate.abort();
                    return Err(anyhow::Error::new(e).context("spawning a measuring thread"));
                }
            }
        }
        gate.release_when_all_arrived(handles.len(), || clock::monotonic_ns() + START_LEAD_NS);
        let mut results = Vec::with_capacity(handles.len());
        let mut first_error = None;
        for h in handles {
            match h.join() {
                Ok(Ok(t)) => results.push(t),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error.get_or_insert(anyhow!("a measuring thread panicked"));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok((
                results,
                tids.iter().map(|t| t.load(Ordering::Relaxed)).collect(),
            )),
        }
    })
}

/// The start barrier, breakable: measuring threads arrive and wait; the starter
/// releases them all with the common start time once every one has arrived, or
/// aborts (a spawn failed, a thread died before arriving) and they return None.
#[derive(Default)]
struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    start_ns: Option<u64>,
    aborted: bool,
}

impl StartGate {
    /// Arrives and waits: Some(start time) once released, None once aborted.
    fn arrive_and_wait(&self) -> Option<u64> {
        let mut state = self.lock();
        state.arrived += 1;
        self.changed.notify_all();
        loop {
            if state.aborted {
                return None;
            }
            if let Some(start_ns) = state.start_ns {
                return Some(start_ns);
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
    }

    /// Waits until `count` threads have arrived (or the gate was aborted), then releases
    /// them with the start time `start_ns()` computes at that moment.
    fn release_when_all_arrived(&self, count: usize, start_ns: impl FnOnce() -> u64) {
        let mut state = self.lock();
        while state.arrived < count && !state.aborted {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
        state.start_ns = Some(start_ns());
        self.changed.notify_all();
    }

    /// Releases every waiting (and later arriving) thread without a start time.
    fn abort(&self) {
        self.lock().aborted = true;
        self.changed.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// A thread's place at the gate: waiting consumes it; dropping it unused (the thread
/// is unwinding) aborts the gate.
struct Arrival<'a> {
    gate: &'a StartGate,
    waited: bool,
}

impl Arrival<'_> {
    fn wait(mut self) -> Option<u64> {
        self.waited = true;
        self.gate.arrive_and_wait()
    }
}

impl Drop for Arrival<'_> {
    fn drop(&mut self) {
        if !self.waited {
            self.gate.abort();
        }
    }
}

/// Pins the calling thread and sets its scheduling, naming what failed.
pub fn place_current_thread(p: &ThreadPlacement) -> anyhow::Result<()> {
    // Under --isolate the thread must be inside the shield before it can pin there.
    crate::isolate::enter_for_cpu(p.cpu)?;
    affinity::pin_current_thread(p.cpu).with_context(|| {
        let allowed = affinity::get_affinity(0).unwrap_or_default();
        format!(
            "pinning a measuring thread to CPU {} (this process may use CPUs {}: is CPU {} in another cpuset, e.g. isolated by another run?)",
            p.cpu,
            crate::units::format_cpu_list(&allowed),
            p.cpu
        )
    })?;
    sched::set_current_thread(p.policy, p.priority).with_context(|| {
        format!(
            "setting {} priority {} on CPU {}",
            p.policy, p.priority, p.cpu
        )
    })?;
    // Timer slack only delays SCHED_OTHER wake-ups (the kernel ignores it for RT).
    if let Some(ns) = p.timer_slack_ns {
        sched::set_timer_slack_ns(ns);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn on_cpu0(count: usize) -> Vec<ThreadPlacement> {
        let cpu = affinity::get_affinity(0)
            .ok()
            .and_then(|cpus| cpus.first().copied())
            .unwrap_or(0);
        vec![
            ThreadPlacement {
                cpu,
                policy: Policy::Other,
                priority: 0,
                timer_slack_ns: None,
            };
            count
        ]
    }

    /// Runs `run_threads` on its own thread; None when it has not returned in 10 s.
    fn within_10s(
        placements: Vec<ThreadPlacement>,
        fail_spawn: Option<usize>,
    ) -> Option<anyhow::Result<Vec<u64>>> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let result = run_threads(
                &placements,
                |_| Ok(()),
                |_, (), start_ns| start_ns,
                |index| match fail_spawn {
                    Some(i) if i == index => Err(std::io::Error::other("injected spawn failure")),
                    _ => Ok(()),
                },
            );
            let _ = tx.send(result.map(|(starts, _)| starts));
        });
        rx.recv_timeout(Duration::from_secs(10)).ok()
    }

    #[test]
    fn a_failed_spawn_releases_the_started_threads() {
        let result = within_10s(on_cpu0(3), Some(2)).expect("hung at the start barrier");
        let error = format!("{:#}", result.expect_err("the spawn failure is reported"));
        assert!(error.contains("injected spawn failure"), "{error}");
    }

    #[test]
    fn a_failed_first_spawn_returns_at_once() {
        let result = within_10s(on_cpu0(2), Some(0)).expect("hung");
        assert!(result.is_err());
    }

    #[test]
    fn all_threads_get_one_start_time() {
        let starts = within_10s(on_cpu0(3), None).expect("hung").unwrap();
        assert_eq!(starts.len(), 3);
        assert!(starts.iter().all(|&s| s == starts[0] && s > 0));
    }

    #[test]
    fn a_panicking_prepare_does_not_hang_the_others() {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let result = run_threads(
                &on_cpu0(2),
                |index| -> anyhow::Result<()> {
                    if index == 1 {
                        panic!("prepare panicked (expected by this test)");
                    }
                    Ok(())
                },
                |_, (), start_ns| start_ns,
                |_| Ok(()),
            );
            let _ = tx.send(result.is_err());
        });
        let failed = rx.recv_timeout(Duration::from_secs(10)).expect("hung");
        assert!(failed);
    }
}
