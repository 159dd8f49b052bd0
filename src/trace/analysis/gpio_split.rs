//! The GPIO probe's per-edge split, joined by the event's kernel stamp t1 (taken inside
//! the line's hard IRQ handler, CLOCK_MONOTONIC): t1 → the line's IRQ thread running
//! (`irq/N-…`, which queues the event) → sched_wakeup of the measuring thread → its
//! switch-in → return to user space (rseq_update) → latscope's clock read t2. The parts
//! sum to irq→user (t2 − t1).

use serde::{Deserialize, Serialize};

use crate::trace::analysis::split::{find_rseq, find_switch_in, on_cpu_at};
use crate::trace::analysis::timeline::Timeline;
use crate::trace::analysis::wake_split::find_wakeup;
use crate::trace::event::EventKind;

/// One edge: its kernel stamp t1 and the measuring thread's clock read t2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpioSample {
    pub irq_ns: u64,
    pub user_ns: u64,
}

/// Why an edge could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpioNotJoined {
    OutsideWindow,
    LostEvents,
    /// No irq_handler_entry/exit brackets t1: the IRQ was not traced (its CPU not
    /// recorded) or t1 is not a hard-IRQ stamp (`--event-clock` other than the IRQ's).
    NoIrq,
    /// No sched_wakeup of the measuring thread between t1 and t2: it was not asleep (the
    /// event was queued before its read), so there is no wake-up to split.
    NoWakeup,
    /// A sched_wakeup of the measuring thread came while it was still on its CPU (it had
    /// not yet switched out to sleep in its read): the wake-up ran, but there is no
    /// switch-in to split. The same race as `NoWakeup`, a few instructions later.
    NotAsleep,
    NoSwitchIn,
}

/// One edge's split. When `joined` is false only `remainder_ns` is non-zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpioSplit {
    pub irq_ns: u64,
    pub irq_to_user_ns: u64,
    pub joined: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_joined: Option<GpioNotJoined>,
    /// The line's IRQ number and the CPU its hard handler ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<(i32, u32)>,
    /// t1 → switch-in of the IRQ thread; None when none ran between t1 and the wakeup
    /// (the handler woke the measuring thread itself, or its thread was already running):
    /// that time is then in `to_wakeup_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_thread_ns: Option<i64>,
    /// The IRQ thread's switch-in (or t1) → sched_wakeup of the measuring thread.
    pub to_wakeup_ns: i64,
    /// sched_wakeup → switch-in of the measuring thread.
    pub switch_ns: i64,
    /// switch-in → rseq_update (0 and not measured when `no_rseq`).
    pub to_user_ns: i64,
    /// irq→user − the parts: the read's own return path and the clock read.
    pub remainder_ns: i64,
    /// As in the wake split: no sched_switch into the measuring thread was traced, its
    /// switch-in placed at its lower bound.
    pub switch_in_inferred: bool,
    pub switch_in_uncertainty_ns: u64,
    pub no_rseq: bool,
    /// The measuring thread's CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
}

impl GpioSplit {
    fn unjoined(s: GpioSample, why: GpioNotJoined) -> Self {
        let response = s.user_ns.saturating_sub(s.irq_ns);
        GpioSplit {
            irq_ns: s.irq_ns,
            irq_to_user_ns: response,
            joined: false,
            not_joined: Some(why),
            irq: None,
            irq_thread_ns: None,
            to_wakeup_ns: 0,
            switch_ns: 0,
            to_user_ns: 0,
            remainder_ns: response as i64,
            switch_in_inferred: false,
            switch_in_uncertainty_ns: 0,
            no_rseq: false,
            cpu: None,
        }
    }

    /// The parts in order (irq_thread, to_wakeup, switch, to_user, remainder); they sum to
    /// `irq_to_user_ns` exactly.
    pub fn parts(&self) -> [i64; 5] {
        [
            self.irq_thread_ns.unwrap_or(0),
            self.to_wakeup_ns,
            self.switch_ns,
            self.to_user_ns,
            self.remainder_ns,
        ]
    }
}

/// Splits every edge of the measuring thread `tid`. `slack_ns` is how much a trace stamp
/// may lie from latscope's own of the same moment (1 µs text, ~0 binary).
pub fn split_gpio(
    tl: &Timeline,
    tid: i32,
    samples: &[GpioSample],
    slack_ns: u64,
) -> Vec<GpioSplit> {
    samples
        .iter()
        .map(|&s| split_one(tl, tid, s, slack_ns))
        .collect()
}

/// The hard IRQ whose handler ran across `t1`: (irq, cpu, entry ts). The latest entry at
/// or before t1 (+slack) whose exit is at or after t1 (−slack), on any CPU.
fn find_irq(tl: &Timeline, t1: u64, slack_ns: u64) -> Option<(i32, u32, u64)> {
    let mut best: Option<(i32, u32, u64)> = None;
    for cpu in tl.cpus() {
        let list = tl.cpu(cpu);
        let end = tl.index_at(cpu, t1 + slack_ns + 1);
        for (i, e) in list[..end].iter().enumerate().rev() {
            let EventKind::IrqHandlerEntry { irq, .. } = e.kind else {
                continue;
            };
            let exit = list[i + 1..]
                .iter()
                .find(|x| matches!(x.kind, EventKind::IrqHandlerExit { irq: n, .. } if n == irq));
            if exit.is_some_and(|x| x.ts_ns + slack_ns >= t1) {
                if best.is_none_or(|b| e.ts_ns > b.2) {
                    best = Some((irq, cpu, e.ts_ns));
                }
                break;
            }
            if t1.saturating_sub(e.ts_ns) > 1_000_000 {
                break;
            }
        }
    }
    best
}

/// The first switch-in of the IRQ thread of `irq` (`irq/N-…`) in [from, until]: a
/// sched_switch into it, else its first own event (a switch out of idle the kernel did
/// not record: placed where the timeline implies it).
fn irq_thread_in(tl: &Timeline, irq: i32, from: u64, until: u64) -> Option<u64> {
    let prefix = format!("irq/{irq}-");
    let named = |pid: i32| tl.task(pid).is_some_and(|t| t.comm.starts_with(&prefix));
    let mut first: Option<u64> = None;
    for cpu in tl.cpus() {
        for e in tl.range(cpu, from, until) {
            let at = match &e.kind {
                EventKind::SchedSwitch { next, .. } if next.comm.starts_with(&prefix) => e.ts_ns,
                EventKind::SchedSwitch { .. } => continue,
                _ if e.pid != 0 && named(e.pid) => tl.switched_in_before(e).unwrap_or(e.ts_ns),
                _ => continue,
            };
            first = Some(first.map_or(at, |f| f.min(at)));
            break;
        }
    }
    first
}

fn split_one(tl: &Timeline, tid: i32, s: GpioSample, slack_ns: u64) -> GpioSplit {
    use GpioNotJoined::*;
    let until = s.user_ns + slack_ns;
    let from = s.irq_ns.saturating_sub(slack_ns);
    let found = find_wakeup(tl, tid, from, until);
    let (first, last) = found.window;
    if !(first <= s.irq_ns && s.user_ns <= last) {
        return GpioSplit::unjoined(s, OutsideWindow);
    }
    if tl.cpus().any(|c| tl.lost_in(c, from, until)) {
        return GpioSplit::unjoined(s, LostEvents);
    }
    let Some((irq, irq_cpu, _)) = find_irq(tl, s.irq_ns, slack_ns) else {
        return GpioSplit::unjoined(s, NoIrq);
    };
    let Some((wakeup_ns, cpu, idx)) = found.wakeup else {
        return GpioSplit::unjoined(s, NoWakeup);
    };
    let Some(sw) = find_switch_in(tl, cpu, tid, idx, until) else {
        let why = if on_cpu_at(tl, cpu, tid, idx) {
            NotAsleep
        } else {
            NoSwitchIn
        };
        return GpioSplit::unjoined(s, why);
    };
    let thread_in = irq_thread_in(tl, irq, from, wakeup_ns);
    let rseq = find_rseq(tl, cpu, tid, sw.index, until);
    let response = s.user_ns.saturating_sub(s.irq_ns) as i64;
    let irq_thread = thread_in.map(|t| t as i64 - s.irq_ns as i64);
    let to_wakeup = wakeup_ns as i64 - thread_in.unwrap_or(s.irq_ns) as i64;
    let switch = sw.ts_ns as i64 - wakeup_ns as i64;
    let to_user = rseq.map_or(0, |r| r as i64 - sw.ts_ns as i64);
    GpioSplit {
        irq_ns: s.irq_ns,
        irq_to_user_ns: response as u64,
        joined: true,
        not_joined: None,
        irq: Some((irq, irq_cpu)),
        irq_thread_ns: irq_thread,
        to_wakeup_ns: to_wakeup,
        switch_ns: switch,
        to_user_ns: to_user,
        remainder_ns: response - irq_thread.unwrap_or(0) - to_wakeup - switch - to_user,
        switch_in_inferred: sw.inferred,
        switch_in_uncertainty_ns: sw.uncertainty_ns,
        no_rseq: rseq.is_none(),
        cpu: Some(cpu),
    }
}
