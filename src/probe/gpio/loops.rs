//! The GPIO measuring loops, one per mode, generic over how the input is driven (a
//! wire from an output line, or gpio-sim's `pull` file), so no loop matches on a mode.
//! Loopback: t0 clock before the drive, t1 the event's kernel stamp (hard IRQ), t2 clock
//! after the read. Respond: t1, t2, then t3 clock after the answering output is written.

use crate::stats::Recorder;
use crate::sys::clock;
use crate::sys::gpio::{LineEvent, LineRequest, EVENT_RISING};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// How the loopback's input line gets its edge.
pub trait Drive {
    fn drive(&mut self, high: bool) -> std::io::Result<()>;
}

/// A jumper wire: the output line is set (one ioctl).
pub struct WireDrive(pub LineRequest);

impl Drive for WireDrive {
    #[inline(always)]
    fn drive(&mut self, high: bool) -> std::io::Result<()> {
        self.0.set(high)
    }
}

/// gpio-sim: `pull-up`/`pull-down` written to the input line's `pull` file (one write).
pub struct SimDrive(pub File);

impl Drive for SimDrive {
    #[inline(always)]
    fn drive(&mut self, high: bool) -> std::io::Result<()> {
        let text: &[u8] = if high { b"pull-up" } else { b"pull-down" };
        self.0.write_at(text, 0).map(|_| ())
    }
}

/// Edge bookkeeping shared by the loops: seqno gaps (events the kernel dropped), edges
/// with no event in time, stale events, drive errors.
#[derive(Debug, Default, Clone, Copy)]
pub struct EdgeCounts {
    pub driven: u64,
    pub events: u64,
    /// Sum of the gaps in the events' seqno: edges the kernel's event buffer dropped.
    pub missed_seqno: u64,
    /// Driven edges whose event did not come within the timeout.
    pub timeouts: u64,
    /// Events stamped before the drive they were read after (a late one of an earlier edge).
    pub stale: u64,
    pub drive_errors: u64,
    pub last_seqno: u32,
    /// Events read during the warm-up (answered, not measured): with `events` they make
    /// every edge the kernel reported (its IRQ count is the judge).
    pub warmup_events: u64,
}

impl EdgeCounts {
    /// Counts `event` and any seqno gap before it; returns the gap.
    #[inline(always)]
    pub fn saw(&mut self, event: &LineEvent) -> u64 {
        self.events += 1;
        let gap = event.seqno.wrapping_sub(self.last_seqno).wrapping_sub(1) as u64;
        let gap = if event.seqno > self.last_seqno {
            gap
        } else {
            0
        };
        self.missed_seqno += gap;
        self.last_seqno = event.seqno;
        gap
    }
}

/// The loopback's recorders: drive→irq, irq→user, total.
pub struct LoopbackRecorders {
    pub drive_to_irq: Recorder,
    pub irq_to_user: Recorder,
    pub total: Recorder,
}

/// The respond mode's recorders: irq→user and user→output written.
pub struct RespondRecorders {
    pub irq_to_user: Recorder,
    pub user_to_output: Recorder,
}

/// What a loop is bounded by.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub until_ns: u64,
    pub max_samples: u64,
    pub timeout_ms: i32,
}

/// Which transitions the loopback measures: `rising` drives high (then low, unmeasured),
/// `falling` the reverse, both toggles and measures every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toggle {
    pub rising: bool,
    pub falling: bool,
}

/// Driven edges without any event after which loopback gives up (no wire, wrong line).
pub const NO_EDGE_GIVE_UP: u64 = 5;

/// One loopback phase: every `period_ns` from `next_ns`, drive, wait for the edge's event,
/// record the three stages. Returns the next deadline.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn loopback_phase<D: Drive>(
    drive: &mut D,
    input: &LineRequest,
    recs: &mut LoopbackRecorders,
    counts: &mut EdgeCounts,
    toggle: Toggle,
    level: &mut bool,
    period_ns: u64,
    mut next_ns: u64,
    bounds: Bounds,
    stop: &AtomicBool,
) -> u64 {
    loop {
        clock::sleep_until_ns(next_ns);
        let no_wire = counts.events == 0 && counts.timeouts >= NO_EDGE_GIVE_UP;
        if no_wire
            || stop.load(Ordering::Relaxed)
            || next_ns >= bounds.until_ns
            || recs.total.count() >= bounds.max_samples
        {
            return next_ns;
        }
        let both = toggle.rising && toggle.falling;
        let target = if both { !*level } else { toggle.rising };
        if *level == target {
            // The line must first leave the level the measured edge goes to (unmeasured).
            let _ = drive.drive(!target);
        }
        let t0 = clock::monotonic_ns();
        if drive.drive(target).is_err() {
            counts.drive_errors += 1;
        }
        counts.driven += 1;
        wait_for_edge(input, recs, counts, t0, bounds.timeout_ms);
        *level = target;
        if !both {
            // A single edge is measured: the other transition comes right after it,
            // unmeasured (its event is not asked for).
            let _ = drive.drive(!target);
            *level = !target;
        }
        next_ns += period_ns;
    }
}

/// Reads events until the one of the edge driven at `t0` (stamped after it) and records
/// its stages; an earlier edge's late event is counted stale and skipped.
#[inline(always)]
fn wait_for_edge(
    input: &LineRequest,
    recs: &mut LoopbackRecorders,
    counts: &mut EdgeCounts,
    t0: u64,
    timeout_ms: i32,
) {
    loop {
        let Ok(Some(event)) = input.read_event(timeout_ms) else {
            counts.timeouts += 1;
            recs.total.add_missed(1);
            return;
        };
        let t2 = clock::monotonic_ns();
        let gap = counts.saw(&event);
        if gap > 0 {
            recs.total.add_missed(gap);
        }
        let t1 = event.timestamp_ns;
        if t1 < t0 {
            counts.stale += 1;
            continue;
        }
        recs.drive_to_irq.record(t0, t2, t1 - t0);
        recs.irq_to_user.record(t0, t2, t2.saturating_sub(t1));
        recs.total.record(t0, t2, t2 - t0);
        return;
    }
}

/// Where the respond loop's edges come from: a line request, or a test's scripted source.
/// Waiting and reading are apart so a phase can end with an edge left unread.
pub trait EdgeSource {
    /// Waits up to `timeout_ms` until an event is pending (not read).
    fn wait_event(&self, timeout_ms: i32) -> std::io::Result<bool>;
    /// Reads the pending event.
    fn read_pending(&self) -> std::io::Result<Option<LineEvent>>;
}

impl EdgeSource for LineRequest {
    #[inline(always)]
    fn wait_event(&self, timeout_ms: i32) -> std::io::Result<bool> {
        LineRequest::wait_event(self, timeout_ms)
    }
    #[inline(always)]
    fn read_pending(&self) -> std::io::Result<Option<LineEvent>> {
        LineRequest::read_pending(self)
    }
}

/// One respond phase: every event on the input is answered on `output` (a pulse, or the
/// edge's level with both edges) and its stages recorded; runs until `bounds`.
///
/// The clock is looked at after the wait and before the read: an edge pending when the
/// phase ends stays in the kernel's buffer for the next phase (the warm-up's last edge is
/// the measured phase's first). Reading it first and then returning lost it, and the
/// measured phase took its seqno gap for an edge the kernel dropped (issue 38).
#[inline(never)]
pub fn respond_phase<S: EdgeSource>(
    input: &S,
    output: Option<&LineRequest>,
    follow: bool,
    recs: &mut RespondRecorders,
    counts: &mut EdgeCounts,
    bounds: Bounds,
    stop: &AtomicBool,
) {
    loop {
        if stop.load(Ordering::Relaxed) || recs.irq_to_user.count() >= bounds.max_samples {
            return;
        }
        let ready = input.wait_event(bounds.timeout_ms);
        if clock::monotonic_ns() >= bounds.until_ns {
            return;
        }
        let Ok(true) = ready else {
            continue;
        };
        let event = input.read_pending();
        let t2 = clock::monotonic_ns();
        let Ok(Some(event)) = event else {
            continue;
        };
        let gap = counts.saw(&event);
        if gap > 0 {
            recs.irq_to_user.add_missed(gap);
        }
        let t1 = event.timestamp_ns;
        recs.irq_to_user.record(t1, t2, t2.saturating_sub(t1));
        if let Some(out) = output {
            let high = !follow || event.id == EVENT_RISING;
            if out.set(high).is_err() {
                counts.drive_errors += 1;
            }
            let t3 = clock::monotonic_ns();
            if !follow && out.set(false).is_err() {
                counts.drive_errors += 1;
            }
            recs.user_to_output.record(t1, t3, t3 - t2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RecorderConfig;
    use std::cell::Cell;

    /// Edges pending from given clock times, one after another.
    struct Scripted {
        ready_ns: Vec<u64>,
        next: Cell<usize>,
    }

    impl EdgeSource for Scripted {
        fn wait_event(&self, timeout_ms: i32) -> std::io::Result<bool> {
            let Some(&at) = self.ready_ns.get(self.next.get()) else {
                std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64));
                return Ok(false);
            };
            let limit = clock::monotonic_ns() + timeout_ms as u64 * 1_000_000;
            clock::sleep_until_ns(at.min(limit));
            Ok(clock::monotonic_ns() >= at)
        }
        fn read_pending(&self) -> std::io::Result<Option<LineEvent>> {
            let i = self.next.get();
            self.next.set(i + 1);
            let mut event = LineEvent::default();
            event.timestamp_ns = self.ready_ns[i];
            event.id = if i % 2 == 0 { EVENT_RISING } else { 2 };
            event.seqno = i as u32 + 1;
            Ok(Some(event))
        }
    }

    fn recorders() -> RespondRecorders {
        let config = RecorderConfig {
            deadline_ns: 0,
            series_seconds: 4,
            raw_capacity: 0,
        };
        RespondRecorders {
            irq_to_user: Recorder::standalone(&config),
            user_to_output: Recorder::standalone(&config),
        }
    }

    /// An edge that becomes pending exactly when the warm-up ends (the wait returns at the
    /// boundary) is the measured phase's first sample, not a seqno gap; `-l 2` then ends
    /// the measured phase at its second edge, long before its 10 s limit.
    #[test]
    fn the_edge_at_the_warmup_boundary_is_measured_and_samples_end_the_phase() {
        let start = clock::monotonic_ns();
        let warm_end = start + 30_000_000;
        let source = Scripted {
            ready_ns: vec![start + 10_000_000, warm_end, warm_end + 20_000_000],
            next: Cell::new(0),
        };
        let stop = AtomicBool::new(false);
        let (mut counts, mut warm) = (EdgeCounts::default(), recorders());
        let warm_bounds = Bounds {
            until_ns: warm_end,
            max_samples: u64::MAX,
            timeout_ms: 100,
        };
        respond_phase(
            &source,
            None,
            true,
            &mut warm,
            &mut counts,
            warm_bounds,
            &stop,
        );
        assert_eq!((counts.events, warm.irq_to_user.count()), (1, 1));
        assert_eq!(source.next.get(), 1, "the boundary's edge stays unread");
        let mut counts = EdgeCounts {
            last_seqno: counts.last_seqno,
            ..Default::default()
        };
        let mut recs = recorders();
        let bounds = Bounds {
            until_ns: clock::monotonic_ns() + 10_000_000_000,
            max_samples: 2,
            timeout_ms: 100,
        };
        respond_phase(&source, None, true, &mut recs, &mut counts, bounds, &stop);
        assert_eq!((counts.events, counts.missed_seqno), (2, 0));
        assert_eq!(
            (recs.irq_to_user.count(), recs.irq_to_user.missed()),
            (2, 0)
        );
        assert!(
            clock::monotonic_ns() < start + 2_000_000_000,
            "-l 2 waited for -D"
        );
    }
}
