//! The two measuring loops of the wake probe and the lock-free state they share: the
//! waker publishes t0 of iteration i in a preallocated ring and advances `posted` to
//! i + 1 before its wake call; the wakee, once its blocking call returns, reads
//! `posted`, then the clock (t1), and serves every iteration posted since its last
//! wake-up: the oldest gives the response t1 − t0, the others count as merged.

use super::mechanism::Channel;
use crate::stats::Recorder;
use crate::sys::clock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// t0 slots kept (a power of two): the wakee may lag this many iterations behind before
/// the oldest pending t0 is overwritten (counted as `ring_overflow`).
pub const T0_RING: usize = 1 << 16;

/// What waker and wakee share; allocated before the threads start.
pub struct Shared {
    t0_ns: Box<[AtomicU64]>,
    /// Iterations posted so far (iteration i is posted as i + 1).
    posted: AtomicU64,
    /// Index of the first measured iteration (after warm-up, never 0); u64::MAX until
    /// the waker gets there. Stored before that iteration is posted.
    first_measured: AtomicU64,
    /// Set by the waker after its last iteration, before the final wake-ups.
    done: AtomicBool,
    /// Set by the wakee when it has left its loop.
    wakee_exited: AtomicBool,
    /// Threads whose placement and preparation succeeded; both must before either runs.
    pub prepared: AtomicU64,
}

impl Shared {
    pub fn new() -> Self {
        Self {
            t0_ns: (0..T0_RING).map(|_| AtomicU64::new(0)).collect(),
            posted: AtomicU64::new(0),
            first_measured: AtomicU64::new(u64::MAX),
            done: AtomicBool::new(false),
            wakee_exited: AtomicBool::new(false),
            prepared: AtomicU64::new(0),
        }
    }

    /// Lets a waker whose partner never got ready return at once.
    pub fn mark_wakee_exited(&self) {
        self.wakee_exited.store(true, Ordering::Release);
    }
}

impl Default for Shared {
    fn default() -> Self {
        Self::new()
    }
}

/// When the waker's iterations count and when they end.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub start_ns: u64,
    pub interval_ns: u64,
    /// Iterations whose t0 is at or after this are measured (the end of warm-up).
    pub measure_from_ns: u64,
    /// No iteration is started at or after this deadline.
    pub until_ns: u64,
    /// Measured iterations to run at most.
    pub samples: u64,
}

/// What the waker counted besides its call-cost recorder.
#[derive(Debug, Default, Clone, Copy)]
pub struct WakerCounts {
    /// All iterations, warm-up and the cold first one included.
    pub iterations: u64,
    /// Measured iterations (after warm-up, not the first).
    pub measured: u64,
    /// Wake calls that found the channel full (the iteration still counts).
    pub wake_failed: u64,
    /// Extra wake-ups sent after the last iteration until the wakee left.
    pub stop_wakeups: u64,
    pub measure_started_ns: u64,
    pub ended_ns: u64,
}

/// How long the waker keeps sending stop wake-ups before giving up on the wakee.
const STOP_RETRY_LIMIT: u32 = 10_000;
/// Pause between stop wake-ups.
const STOP_RETRY_PAUSE_NS: u64 = 1_000_000;

/// The waker: sleep until the next absolute deadline, t0, publish, wake, record the
/// call's cost. Late deadlines are skipped and counted as missed, like `timer`.
#[inline(never)]
pub fn waker_loop<C: Channel>(
    channel: &C,
    shared: &Shared,
    calls: &mut Recorder,
    schedule: Schedule,
    stop: &AtomicBool,
) -> WakerCounts {
    let mut counts = WakerCounts {
        measure_started_ns: schedule.measure_from_ns,
        ..Default::default()
    };
    let mask = (T0_RING - 1) as u64;
    let mut deadline = schedule.start_ns;
    let mut measuring = false;
    let mut i: u64 = 0;
    while deadline < schedule.until_ns
        && counts.measured < schedule.samples
        && !stop.load(Ordering::Relaxed)
    {
        clock::sleep_until_ns(deadline);
        let t0 = clock::monotonic_ns();
        let measured = i > 0 && t0 >= schedule.measure_from_ns;
        if measured && !measuring {
            shared.first_measured.store(i, Ordering::Relaxed);
        }
        shared.t0_ns[(i & mask) as usize].store(t0, Ordering::Relaxed);
        shared.posted.store(i + 1, Ordering::Release);
        let delivered = channel.wake();
        let after = clock::monotonic_ns();
        if measured {
            if !measuring {
                calls.restart(t0);
                counts.measure_started_ns = t0;
                measuring = true;
            }
            calls.record(t0, after, after - t0);
            counts.measured += 1;
        }
        counts.wake_failed += u64::from(!delivered);
        i += 1;
        let skipped = t0.saturating_sub(deadline) / schedule.interval_ns;
        if skipped > 0 && measuring {
            calls.add_missed(skipped);
        }
        deadline += (1 + skipped) * schedule.interval_ns;
    }
    counts.iterations = i;
    counts.ended_ns = clock::monotonic_ns();
    shared.done.store(true, Ordering::Release);
    for _ in 0..STOP_RETRY_LIMIT {
        if shared.wakee_exited.load(Ordering::Acquire) {
            break;
        }
        channel.wake();
        counts.stop_wakeups += 1;
        clock::sleep_for_ns(STOP_RETRY_PAUSE_NS);
    }
    counts
}

/// What the wakee counted besides its response recorder.
#[derive(Debug, Default, Clone, Copy)]
pub struct WakeeCounts {
    /// Response of iteration 0 (cold caches, first wake of the thread).
    pub first_response_ns: Option<u64>,
    /// Measured iterations that shared a wake-up with an earlier pending one (also one
    /// of the warm-up's), so responses + merged = measured iterations.
    pub merged: u64,
    /// Wake-ups that found no new iteration (a queued token of an already served one).
    pub stale_wakeups: u64,
    /// Pending iterations whose t0 slot had been overwritten (lag > T0_RING).
    pub ring_overflow: u64,
    /// Iterations served, the first and warm-up ones included.
    pub served: u64,
}

/// A preallocated buffer of (t0, t1, response) rows for `--raw`.
pub struct RawRows {
    pub rows: Vec<[u64; 3]>,
    pub dropped: u64,
}

impl RawRows {
    pub fn with_capacity(capacity: usize) -> Self {
        let mut rows = vec![[0u64; 3]; capacity];
        rows.clear();
        Self { rows, dropped: 0 }
    }

    #[inline(always)]
    fn push(&mut self, row: [u64; 3]) {
        if self.rows.len() < self.rows.capacity() {
            self.rows.push(row);
        } else if self.rows.capacity() > 0 {
            self.dropped += 1;
        }
    }
}

/// The wakee: block, read `posted`, t1, serve the pending iterations, record. Leaves
/// once the waker is done and every posted iteration has been served.
#[inline(never)]
pub fn wakee_loop<C: Channel>(
    channel: &C,
    rx: &mut C::Receiver,
    shared: &Shared,
    responses: &mut Recorder,
    raw: &mut RawRows,
) -> WakeeCounts {
    let mut counts = WakeeCounts::default();
    let mask = (T0_RING - 1) as u64;
    let mut served: u64 = 0;
    let mut measuring = false;
    loop {
        channel.wait(rx);
        let posted = shared.posted.load(Ordering::Acquire);
        let t1 = clock::monotonic_ns();
        if posted > served {
            let oldest = if posted - served > T0_RING as u64 {
                counts.ring_overflow += posted - served - T0_RING as u64;
                posted - T0_RING as u64
            } else {
                served
            };
            let t0 = shared.t0_ns[(oldest & mask) as usize].load(Ordering::Relaxed);
            let response = t1.saturating_sub(t0);
            let first_measured = shared.first_measured.load(Ordering::Relaxed);
            if served == 0 {
                counts.first_response_ns = Some(response);
            }
            if served >= first_measured {
                if !measuring {
                    responses.restart(t1);
                    measuring = true;
                }
                responses.record(t0, t1, response);
                raw.push([t0, t1, response]);
                counts.merged += posted - served - 1;
            } else if posted > first_measured {
                // A warm-up (or the cold first) iteration served together with measured
                // ones: those count as merged.
                counts.merged += posted - first_measured;
            }
            served = posted;
        } else {
            counts.stale_wakeups += 1;
        }
        if shared.done.load(Ordering::Acquire) && served == shared.posted.load(Ordering::Acquire) {
            break;
        }
    }
    counts.served = served;
    shared.wakee_exited.store(true, Ordering::Release);
    counts
}
