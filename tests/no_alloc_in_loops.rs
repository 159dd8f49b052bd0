//! Proves the hot path never allocates: a counting global allocator wraps the system
//! allocator, and every method's measuring loop runs with the counter watched.
//! (Its own test binary, with one test, so no other test thread allocates meanwhile.)

mod common;

use latscope::probe::timer::{
    measure_phase, BusyWaiter, ClockNanosleepWaiter, NanosleepWaiter, PhaseEnd, PosixTimerWaiter,
    TimerfdWaiter, Waiter,
};
use latscope::stats::{Recorder, RecorderConfig};
use latscope::sys::{clock, posix_timer::PosixTimer, sched, signals::SignalSet, timerfd::TimerFd};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

struct CountingAllocator;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: delegates every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const PERIOD_NS: u64 = 200_000;
const SAMPLES: u64 = 1500;

/// Runs one phase of `SAMPLES` samples (raw buffer and series included) and returns the
/// allocations made during it.
fn allocations_during<W: Waiter>(waiter: &mut W, start_ns: u64) -> u64 {
    let config = RecorderConfig {
        deadline_ns: PERIOD_NS,
        series_seconds: 4,
        raw_capacity: SAMPLES as usize,
    };
    let mut rec = Recorder::standalone(&config);
    let stop = AtomicBool::new(false);
    let end = PhaseEnd {
        until_ns: u64::MAX,
        samples: SAMPLES,
        // Never reached, but the compare runs on every sample like under --break-above.
        break_above_ns: u64::MAX - 1,
    };
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    measure_phase(waiter, &mut rec, start_ns, PERIOD_NS, end, &stop);
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    assert_eq!(rec.count(), SAMPLES);
    assert_eq!(rec.raw().len(), SAMPLES as usize);
    after - before
}

#[test]
fn measuring_loops_do_not_allocate() {
    let _lock = common::latency_lock();
    let start = || clock::monotonic_ns() + 1_000_000;
    assert_eq!(
        allocations_during(&mut ClockNanosleepWaiter, start()),
        0,
        "clock-nanosleep"
    );
    assert_eq!(
        allocations_during(&mut NanosleepWaiter, start()),
        0,
        "nanosleep"
    );
    assert_eq!(allocations_during(&mut BusyWaiter, start()), 0, "busy");
    let s = start();
    let mut tfd = TimerfdWaiter(TimerFd::periodic(s, PERIOD_NS).unwrap());
    assert_eq!(allocations_during(&mut tfd, s), 0, "timerfd");
    let signal = latscope::probe::timer::timer_signal();
    let signals = SignalSet::of(&[signal]);
    signals.block_in_current_thread().unwrap();
    let s = start();
    let timer = PosixTimer::periodic_to_thread(sched::gettid(), signal, s, PERIOD_NS).unwrap();
    let mut ptw = PosixTimerWaiter { timer, signals };
    assert_eq!(allocations_during(&mut ptw, s), 0, "posix-timer");
    // The counter does see allocations.
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    std::hint::black_box(vec![1u8; 16]);
    assert!(ALLOCATIONS.load(Ordering::SeqCst) > before);
}
