//! Proves the hot path never allocates: a counting global allocator wraps the system
//! allocator, and every measuring loop runs with the counter watched: the timer's per
//! method, noise's, wake's waker and wakee (together), net's sender in rate and flood
//! mode with the in-process reflector answering. (Its own test binary without libtest's
//! harness, so no other thread allocates meanwhile: libtest's "has been running for over
//! 60 seconds" notice, printed while this test waited for the latency lock or ran slowly on
//! a loaded machine, was counted as 4 allocations in the timer loop once.)

mod common;

use latscope::probe::harness::ThreadPlacement;
use latscope::probe::net::{self, reflector::ReflectorThread, NetProbe, Sender};
use latscope::probe::noise::{loop_cost_ns, noise_phase};
use latscope::probe::timer::{
    measure_phase, BusyWaiter, ClockNanosleepWaiter, NanosleepWaiter, PhaseEnd, PosixTimerWaiter,
    TimerfdWaiter, Waiter,
};
use latscope::probe::wake::loops::{self, RawRows, Schedule, Shared};
use latscope::probe::wake::mechanism::EventfdChannel;
use latscope::stats::{Recorder, RecorderConfig};
use latscope::sys::sched::Policy;
use latscope::sys::wake_primitives::EventFd;
use latscope::sys::{clock, posix_timer::PosixTimer, sched, signals::SignalSet, timerfd::TimerFd};
use std::alloc::{GlobalAlloc, Layout, System};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

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

fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::SeqCst)
}

fn recorder_config(raw_capacity: usize) -> RecorderConfig {
    RecorderConfig {
        deadline_ns: PERIOD_NS,
        series_seconds: 4,
        raw_capacity,
    }
}

/// Runs one phase of `SAMPLES` samples (raw buffer and series included) and returns the
/// allocations made during it.
fn allocations_during<W: Waiter>(waiter: &mut W, start_ns: u64) -> u64 {
    let mut rec = Recorder::standalone(&recorder_config(SAMPLES as usize));
    let stop = AtomicBool::new(false);
    let end = PhaseEnd {
        until_ns: u64::MAX,
        samples: SAMPLES,
        // Never reached, but the compare runs on every sample like under --break-above.
        break_above_ns: u64::MAX - 1,
        shared_end: None,
    };
    let before = allocations();
    measure_phase(waiter, &mut rec, start_ns, PERIOD_NS, end, &stop);
    let after = allocations();
    assert_eq!(rec.count(), SAMPLES);
    assert_eq!(rec.raw().len(), SAMPLES as usize);
    after - before
}

/// `latscope cyclictest -h`: the timer loop with fixed buckets so narrow that every
/// sample overflows, filling the overflow log and going past it.
fn cyclictest_histogram_allocations(start_ns: u64) -> u64 {
    let buckets = latscope::stats::fixed_buckets::FixedBuckets::new(1, 2);
    let mut rec = Recorder::standalone(&recorder_config(0)).with_fixed_buckets(buckets);
    let stop = AtomicBool::new(false);
    let end = PhaseEnd {
        until_ns: u64::MAX,
        samples: SAMPLES,
        break_above_ns: u64::MAX - 1,
        shared_end: None,
    };
    let before = allocations();
    measure_phase(
        &mut ClockNanosleepWaiter,
        &mut rec,
        start_ns,
        PERIOD_NS,
        end,
        &stop,
    );
    let after = allocations();
    let fixed = rec.fixed_buckets().unwrap();
    assert_eq!(
        (fixed.overflows(), fixed.overflow_samples().len()),
        (SAMPLES, 2)
    );
    after - before
}

/// The noise loop for 50 ms with a 1 µs threshold (gaps recorded, raw kept).
fn noise_allocations() -> u64 {
    let mut rec = Recorder::standalone(&recorder_config(100_000));
    let stop = AtomicBool::new(false);
    let cost = loop_cost_ns(1_000_000, &stop);
    let before = allocations();
    let cost_again = loop_cost_ns(1_000_000, &stop);
    let until = clock::monotonic_ns() + 50_000_000;
    noise_phase(&mut rec, cost, 1_000, until, u64::MAX, &stop);
    let after = allocations();
    std::hint::black_box((cost, cost_again));
    after - before
}

/// The waker (on this thread) and the wakee (on another, started before counting)
/// through an eventfd: warm-up and measured phases, the stop wake-ups included.
fn wake_allocations() -> u64 {
    let channel = EventfdChannel(EventFd::new().unwrap());
    let shared = Shared::new();
    let config = recorder_config(0);
    let start_line = Barrier::new(2);
    std::thread::scope(|scope| {
        let wakee = scope.spawn(|| {
            let mut responses = Recorder::standalone(&config);
            let mut scratch = Recorder::scratch(&config, Arc::default());
            let mut raw = RawRows::with_capacity(SAMPLES as usize);
            start_line.wait();
            let counts = loops::wakee_loop(
                &channel,
                &mut (),
                &shared,
                &mut responses,
                &mut scratch,
                &mut raw,
            );
            (counts, responses.count(), raw.rows.len())
        });
        let mut calls = Recorder::standalone(&config);
        let mut scratch = Recorder::scratch(&config, Arc::default());
        let stop = AtomicBool::new(false);
        // The wakee has arrived: its thread's own start-up allocations are done.
        start_line.wait();
        let before = allocations();
        let start_ns = clock::monotonic_ns() + 1_000_000;
        let schedule = Schedule {
            start_ns,
            interval_ns: PERIOD_NS,
            measure_from_ns: start_ns + 20 * PERIOD_NS,
            until_ns: u64::MAX,
            samples: SAMPLES,
        };
        let waker = loops::waker_loop(&channel, &shared, &mut calls, &mut scratch, schedule, &stop);
        let after = allocations();
        let (wakee, responses, raw_rows) = wakee.join().unwrap();
        assert_eq!(waker.measured, SAMPLES);
        assert_eq!(responses + wakee.merged, SAMPLES, "{wakee:?}");
        assert_eq!(raw_rows as u64, responses);
        assert!(wakee.first_response_ns.is_some());
        after - before
    })
}

/// The net sender against the in-process reflector (started before counting), in rate
/// mode then flood mode.
fn net_allocations() -> u64 {
    let cpu = latscope::sys::affinity::get_affinity(0).unwrap()[0];
    let reflector = ReflectorThread::start(
        SocketAddr::new(net::LOOPBACK, 0),
        ThreadPlacement {
            cpu,
            policy: Policy::Other,
            priority: 0,
            timer_slack_ns: None,
        },
    )
    .unwrap();
    let probe = NetProbe {
        size: 64,
        interval_ns: PERIOD_NS,
        timeout_ns: 100_000_000,
        deadline_ns: PERIOD_NS,
        target: Some(reflector.addr),
        reflector_cpu: cpu,
    };
    let config = recorder_config(2 * SAMPLES as usize);
    let mut sender = Sender::new(&probe, reflector.addr, &config, Arc::default()).unwrap();
    let stop = AtomicBool::new(false);
    let phase = |samples| net::PhaseEnd {
        until_ns: u64::MAX,
        samples,
    };
    let before = allocations();
    let start_ns = clock::monotonic_ns() + 1_000_000;
    net::rate_phase(
        &mut sender,
        start_ns,
        PERIOD_NS,
        probe.timeout_ns,
        phase(SAMPLES),
        &stop,
    );
    net::flood_phase(&mut sender, probe.timeout_ns, phase(2 * SAMPLES), &stop);
    let after = allocations();
    let counts = sender.counts();
    assert_eq!(counts.sent, 2 * SAMPLES);
    assert_eq!(counts.received + counts.lost, counts.sent, "{counts:?}");
    assert_eq!(sender.round_trip().count(), counts.received);
    assert!(reflector.counts.reflected.load(Ordering::Relaxed) > 0);
    drop(reflector);
    after - before
}

fn main() {
    measuring_loops_do_not_allocate();
    println!("test measuring_loops_do_not_allocate ... ok");
}

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
    assert_eq!(
        cyclictest_histogram_allocations(start()),
        0,
        "cyclictest -h buckets"
    );
    assert_eq!(noise_allocations(), 0, "noise");
    assert_eq!(wake_allocations(), 0, "wake waker and wakee");
    assert_eq!(net_allocations(), 0, "net sender and reflector");
    // The counter does see allocations.
    let before = allocations();
    std::hint::black_box(vec![1u8; 16]);
    assert!(allocations() > before);
}
