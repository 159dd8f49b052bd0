//! Starting measuring threads the same way for every probe: pinned to their CPU, at
//! their policy, stack prefaulted, state allocated on that CPU, then all released at
//! once through a start barrier with a common start time.

use crate::sys::{affinity, clock, memlock, sched, sched::Policy};
use anyhow::{anyhow, Context};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Barrier;

/// Where and how one measuring thread runs.
#[derive(Debug, Clone, Copy)]
pub struct ThreadPlacement {
    pub cpu: usize,
    pub policy: Policy,
    pub priority: i32,
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
    let tids: Vec<AtomicI32> = placements.iter().map(|_| AtomicI32::new(0)).collect();
    let tids = &tids;
    let ready = Barrier::new(placements.len() + 1);
    let go = Barrier::new(placements.len() + 1);
    let start_ns = AtomicU64::new(0);
    let prepare = &prepare;
    let measure = &measure;
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(placements.len());
        for (index, placement) in placements.iter().copied().enumerate() {
            let (ready, go, start_ns) = (&ready, &go, &start_ns);
            let handle = std::thread::Builder::new()
                .name(format!("latscope-cpu{}", placement.cpu))
                .stack_size(MEASURING_STACK_BYTES)
                .spawn_scoped(scope, move || -> anyhow::Result<T> {
                    tids[index].store(sched::gettid(), Ordering::Relaxed);
                    let prepared = place_current_thread(&placement).and_then(|()| {
                        memlock::prefault_stack(PREFAULT_STACK_BYTES);
                        prepare(index)
                    });
                    ready.wait();
                    go.wait();
                    let state = prepared?;
                    Ok(measure(index, state, start_ns.load(Ordering::Acquire)))
                })
                .context("spawning a measuring thread")?;
            handles.push(handle);
        }
        ready.wait();
        start_ns.store(clock::monotonic_ns() + START_LEAD_NS, Ordering::Release);
        go.wait();
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
    // Timer slack only affects SCHED_OTHER; 1 ns keeps its wake-ups as precise as RT's.
    sched::set_timer_slack_ns(1);
    Ok(())
}
