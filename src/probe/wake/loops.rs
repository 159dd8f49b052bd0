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
    /// Iterations whose deadline is at or after this are measured (the end of warm-up;
    /// iteration 0, the cold first one, never is).
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
    /// Index of the first measured iteration (0-based; the warm-up's come before it).
    pub first_measured: u64,
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

/// Where the waker is in its schedule, carried from the warm-up into the measured phase.
struct WakerCursor {
    /// The next deadline.
    deadline_ns: u64,
    /// The next iteration's index.
    iteration: u64,
    interval_ns: u64,
    wake_failed: u64,
}

/// One phase of the waker: sleep until the next absolute deadline, t0, publish, wake,
/// record the call's cost. Late deadlines are skipped and counted as missed, like
/// `timer`. Ends before a deadline at or past `until_ns`, after `samples` samples, or
/// when `stop` is set.
#[inline(never)]
fn waker_phase<C: Channel>(
    channel: &C,
    shared: &Shared,
    calls: &mut Recorder,
    cursor: &mut WakerCursor,
    until_ns: u64,
    samples: u64,
    stop: &AtomicBool,
) {
    let mask = (T0_RING - 1) as u64;
    while cursor.deadline_ns < until_ns && calls.count() < samples && !stop.load(Ordering::Relaxed)
    {
        clock::sleep_until_ns(cursor.deadline_ns);
        let t0 = clock::monotonic_ns();
        let i = cursor.iteration;
        shared.t0_ns[(i & mask) as usize].store(t0, Ordering::Relaxed);
        shared.posted.store(i + 1, Ordering::Release);
        let delivered = channel.wake();
        let after = clock::monotonic_ns();
        calls.record(t0, after, after - t0);
        cursor.wake_failed += u64::from(!delivered);
        cursor.iteration = i + 1;
        let skipped = t0.saturating_sub(cursor.deadline_ns) / cursor.interval_ns;
        if skipped > 0 {
            calls.add_missed(skipped);
        }
        cursor.deadline_ns += (1 + skipped) * cursor.interval_ns;
    }
}

/// The waker: a warm-up phase (the cold first iteration and every deadline before
/// `measure_from_ns`, recorded into `scratch`, thrown away), then the measured phase
/// into `calls`, then wake-ups until the wakee has left.
pub fn waker_loop<C: Channel>(
    channel: &C,
    shared: &Shared,
    calls: &mut Recorder,
    scratch: &mut Recorder,
    schedule: Schedule,
    stop: &AtomicBool,
) -> WakerCounts {
    let mut cursor = WakerCursor {
        deadline_ns: schedule.start_ns,
        iteration: 0,
        interval_ns: schedule.interval_ns,
        wake_failed: 0,
    };
    // Iteration 0 is always warm-up, even without a warm-up time.
    let warm_until = schedule.measure_from_ns.max(schedule.start_ns + 1);
    let warm_until = warm_until.min(schedule.until_ns);
    waker_phase(
        channel,
        shared,
        scratch,
        &mut cursor,
        warm_until,
        u64::MAX,
        stop,
    );
    // Published before the first measured iteration is (Release on `posted`).
    shared
        .first_measured
        .store(cursor.iteration, Ordering::Relaxed);
    let measure_started_ns = cursor.deadline_ns.max(schedule.measure_from_ns);
    calls.restart(measure_started_ns);
    waker_phase(
        channel,
        shared,
        calls,
        &mut cursor,
        schedule.until_ns,
        schedule.samples,
        stop,
    );
    let first_measured = shared.first_measured.load(Ordering::Relaxed);
    let mut counts = WakerCounts {
        iterations: cursor.iteration,
        measured: calls.count(),
        first_measured,
        wake_failed: cursor.wake_failed,
        stop_wakeups: 0,
        measure_started_ns,
        ended_ns: clock::monotonic_ns(),
    };
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

/// Iterations from the very first (warm-up included) whose rows the wakee keeps for the
/// per-iteration listing (`latscope report --iterations`).
pub const FIRST_ITERATIONS_KEPT: usize = 100;

/// The wakee's preallocated rows: (t0, t1, response) of every measured wake-up for
/// `--raw`, and `first_iterations` — (iteration, t0, t1, merged) of each wake-up
/// serving one of the first `FIRST_ITERATIONS_KEPT` iterations, the cold first one and
/// the warm-up's included (`merged`: later iterations it served too).
pub struct RawRows {
    pub rows: Vec<[u64; 3]>,
    pub dropped: u64,
    pub first_iterations: Vec<[u64; 4]>,
}

impl RawRows {
    pub fn with_capacity(capacity: usize) -> Self {
        let mut rows = vec![[0u64; 3]; capacity];
        crate::sys::memlock::prefault_slice(&mut rows);
        rows.clear();
        let mut first_iterations = vec![[0u64; 4]; FIRST_ITERATIONS_KEPT];
        crate::sys::memlock::prefault_slice(&mut first_iterations);
        first_iterations.clear();
        Self {
            rows,
            dropped: 0,
            first_iterations,
        }
    }

    /// Keeps the row of a wake-up serving iteration `iteration` (and `merged` more) if
    /// it is one of the first ones; never allocates.
    #[inline(always)]
    fn note_first(&mut self, iteration: u64, t0_ns: u64, t1_ns: u64, merged: u64) {
        if iteration < FIRST_ITERATIONS_KEPT as u64
            && self.first_iterations.len() < self.first_iterations.capacity()
        {
            self.first_iterations
                .push([iteration, t0_ns, t1_ns, merged]);
        }
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

/// One return of the wakee's blocking call: what had been posted by then, and t1.
#[derive(Clone, Copy)]
struct Wakeup {
    posted: u64,
    t1_ns: u64,
}

/// Blocks until woken, then reads `posted` and the clock (t1), in that order.
#[inline(always)]
fn wait_for_wakeup<C: Channel>(channel: &C, rx: &mut C::Receiver, shared: &Shared) -> Wakeup {
    channel.wait(rx);
    let posted = shared.posted.load(Ordering::Acquire);
    Wakeup {
        posted,
        t1_ns: clock::monotonic_ns(),
    }
}

/// The wakee's progress through the posted iterations, carried across its phases.
#[derive(Default)]
struct WakeeCursor {
    /// Iterations served so far (the oldest pending one's index).
    served: u64,
    counts: WakeeCounts,
}

impl WakeeCursor {
    /// The oldest pending iteration of `w` (counting ring overflows) and its t0.
    #[inline(always)]
    fn oldest_t0(&mut self, shared: &Shared, w: Wakeup) -> (u64, u64) {
        let mask = (T0_RING - 1) as u64;
        let oldest = if w.posted - self.served > T0_RING as u64 {
            self.counts.ring_overflow += w.posted - self.served - T0_RING as u64;
            w.posted - T0_RING as u64
        } else {
            self.served
        };
        (
            oldest,
            shared.t0_ns[(oldest & mask) as usize].load(Ordering::Relaxed),
        )
    }

    /// The waker is done and every posted iteration has been served.
    #[inline(always)]
    fn finished(&self, shared: &Shared) -> bool {
        shared.done.load(Ordering::Acquire) && self.served == shared.posted.load(Ordering::Acquire)
    }
}

/// The warm-up phase: serves wake-ups whose oldest pending iteration is a warm-up one
/// (the cold first one included), recording into `scratch`. Returns the first wake-up
/// whose oldest pending iteration is measured, unserved; None when the waker finished
/// first.
#[inline(never)]
fn wakee_warm_up<C: Channel>(
    channel: &C,
    rx: &mut C::Receiver,
    shared: &Shared,
    scratch: &mut Recorder,
    raw: &mut RawRows,
    cursor: &mut WakeeCursor,
) -> Option<Wakeup> {
    loop {
        let w = wait_for_wakeup(channel, rx, shared);
        if w.posted > cursor.served {
            let first_measured = shared.first_measured.load(Ordering::Relaxed);
            if cursor.served >= first_measured {
                return Some(w);
            }
            let (oldest, t0) = cursor.oldest_t0(shared, w);
            let response = w.t1_ns.saturating_sub(t0);
            if cursor.served == 0 {
                cursor.counts.first_response_ns = Some(response);
            }
            scratch.record(t0, w.t1_ns, response);
            raw.note_first(oldest, t0, w.t1_ns, w.posted - oldest - 1);
            if w.posted > first_measured {
                // Measured iterations served together with a warm-up one: merged.
                cursor.counts.merged += w.posted - first_measured;
            }
            cursor.served = w.posted;
        } else {
            cursor.counts.stale_wakeups += 1;
        }
        if cursor.finished(shared) {
            return None;
        }
    }
}

/// The measured phase, from wake-up `first` on: the oldest pending iteration gives the
/// response t1 − t0, the others count as merged. Ends once the waker is done and every
/// posted iteration has been served.
#[inline(never)]
fn wakee_measure<C: Channel>(
    channel: &C,
    rx: &mut C::Receiver,
    shared: &Shared,
    responses: &mut Recorder,
    raw: &mut RawRows,
    cursor: &mut WakeeCursor,
    first: Wakeup,
) {
    let mut w = first;
    loop {
        if w.posted > cursor.served {
            let (oldest, t0) = cursor.oldest_t0(shared, w);
            let response = w.t1_ns.saturating_sub(t0);
            responses.record(t0, w.t1_ns, response);
            raw.push([t0, w.t1_ns, response]);
            raw.note_first(oldest, t0, w.t1_ns, w.posted - oldest - 1);
            cursor.counts.merged += w.posted - cursor.served - 1;
            cursor.served = w.posted;
        } else {
            cursor.counts.stale_wakeups += 1;
        }
        if cursor.finished(shared) {
            break;
        }
        w = wait_for_wakeup(channel, rx, shared);
    }
}

/// The wakee: block, read `posted`, t1, serve the pending iterations, record. A
/// warm-up phase into `scratch` (thrown away), then the measured phase into
/// `responses`; leaves once the waker is done and every posted iteration is served.
pub fn wakee_loop<C: Channel>(
    channel: &C,
    rx: &mut C::Receiver,
    shared: &Shared,
    responses: &mut Recorder,
    scratch: &mut Recorder,
    raw: &mut RawRows,
) -> WakeeCounts {
    let mut cursor = WakeeCursor::default();
    if let Some(first) = wakee_warm_up(channel, rx, shared, scratch, raw, &mut cursor) {
        responses.restart(first.t1_ns);
        wakee_measure(channel, rx, shared, responses, raw, &mut cursor, first);
    }
    cursor.counts.served = cursor.served;
    shared.wakee_exited.store(true, Ordering::Release);
    cursor.counts
}
