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

/// One respond phase: every event on the input is answered on `output` (a pulse, or the
/// edge's level with both edges) and its stages recorded; runs until `bounds`.
#[inline(never)]
pub fn respond_phase(
    input: &LineRequest,
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
        let event = input.read_event(bounds.timeout_ms);
        let t2 = clock::monotonic_ns();
        if t2 >= bounds.until_ns {
            return;
        }
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
