//! The timer probe's per-sample kernel-side split: deadline → timer interrupt
//! (hrtimer_expire_entry) → switch-in of the measuring thread → return to user space
//! (rseq_update) → latscope's own clock read. The parts always sum to the sample's latency.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::trace::analysis::timeline::Timeline;
use crate::trace::event::{Event, EventKind};

/// How the timer probe waited (the probe's own `Method`, parsed once in plan); decides how
/// samples are joined to hrtimers: clock-nanosleep's hrtimer_start `softexpires` equals
/// the deadline exactly; nanosleep is relative, its `softexpires` is the deadline plus the
/// call's own delay, matched within [`SplitConfig::nanosleep_tolerance_ns`]; timerfd and
/// posix-timer are periodic (exact `softexpires` where the kernel re-arms with
/// hrtimer_start, else the hrtimer pointer and the first expiry at or after the deadline);
/// busy has no timer: nothing to split.
pub use crate::probe::timer::Method as TimerMethod;

/// Whether the kernel re-arms the method's hrtimer itself.
fn periodic(method: TimerMethod) -> bool {
    matches!(method, TimerMethod::Timerfd | TimerMethod::PosixTimer)
}

/// One timer sample as `--raw` writes it: it woke at `deadline_ns + latency_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerSample {
    pub deadline_ns: u64,
    pub latency_ns: u64,
}

/// Tolerances of the join.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitConfig {
    /// nanosleep is relative: its hrtimer's `softexpires` may lie this far from the deadline.
    pub nanosleep_tolerance_ns: u64,
    /// Trace events may be stamped this much after latscope's own clock read of the same
    /// moment (clock granularity; 1 µs for the text format).
    pub clock_slack_ns: u64,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            nanosleep_tolerance_ns: 50_000,
            clock_slack_ns: 2_000,
        }
    }
}

/// Why a sample could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotJoined {
    /// The busy method arms no timer.
    Busy,
    /// The sample lies (partly) outside the events recorded on its CPU.
    OutsideWindow,
    /// Its CPU lost events around it: joining might name the wrong events.
    LostEvents,
    /// No hrtimer_start of the measuring thread for this deadline.
    NoHrtimerStart,
    /// The hrtimer was started but no expiry (or a cancel) followed before the wake-up.
    NoExpiry,
    /// Neither a switch-in nor any event of the thread between the expiry and the wake-up.
    NoSwitchIn,
}

/// One sample's split. When `joined` is false every part but `remainder_ns` is 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleSplit {
    pub deadline_ns: u64,
    pub latency_ns: u64,
    pub joined: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_joined: Option<NotJoined>,
    /// hrtimer_expire_entry − deadline: how late the timer interrupt ran the expiry.
    pub irq_latency_ns: i64,
    /// hrtimer_expire_entry → switch-in of the measuring thread.
    pub wake_to_run_ns: i64,
    /// switch-in → rseq_update of the thread (0 and not measured when `no_rseq`: that
    /// time is then in the remainder).
    pub to_user_ns: i64,
    /// latency − the three parts: latscope's own return path and clock read. May be
    /// negative by the clocks' granularity.
    pub remainder_ns: i64,
    /// No sched_switch into the thread was traced: the switch-in is placed at its lower
    /// bound, the CPU's previous traced event (so `wake_to_run_ns` is a lower bound and
    /// `to_user_ns` an upper one); the thread's first event came `switch_in_uncertainty_ns`
    /// later, and the real switch lies in between.
    pub switch_in_inferred: bool,
    pub switch_in_uncertainty_ns: u64,
    /// No rseq_update was found for this wake-up (`to_user_ns` is 0, its time is in the
    /// remainder).
    pub no_rseq: bool,
    /// Trace times of the joined events (for attribution and rendering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_entry_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_in_ns: Option<u64>,
}

impl SampleSplit {
    fn unjoined(s: TimerSample, why: NotJoined) -> Self {
        SampleSplit {
            deadline_ns: s.deadline_ns,
            latency_ns: s.latency_ns,
            joined: false,
            not_joined: Some(why),
            irq_latency_ns: 0,
            wake_to_run_ns: 0,
            to_user_ns: 0,
            remainder_ns: s.latency_ns as i64,
            switch_in_inferred: false,
            switch_in_uncertainty_ns: 0,
            no_rseq: false,
            expire_entry_ns: None,
            switch_in_ns: None,
        }
    }

    /// The parts in order; they sum to `latency_ns` exactly.
    pub fn parts(&self) -> [i64; 4] {
        [
            self.irq_latency_ns,
            self.wake_to_run_ns,
            self.to_user_ns,
            self.remainder_ns,
        ]
    }
}

/// Samples joined and why the others were not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinCounts {
    pub total: u64,
    pub joined: u64,
    pub busy: u64,
    pub outside_window: u64,
    pub lost_events: u64,
    pub no_hrtimer_start: u64,
    pub no_expiry: u64,
    pub no_switch_in: u64,
    /// Joined samples whose switch-in was inferred / that had no rseq_update.
    pub switch_in_inferred: u64,
    pub no_rseq: u64,
}

impl JoinCounts {
    fn count(&mut self, s: &SampleSplit) {
        self.total += 1;
        if s.joined {
            self.joined += 1;
            self.switch_in_inferred += u64::from(s.switch_in_inferred);
            self.no_rseq += u64::from(s.no_rseq);
        }
        match s.not_joined {
            None => {}
            Some(NotJoined::Busy) => self.busy += 1,
            Some(NotJoined::OutsideWindow) => self.outside_window += 1,
            Some(NotJoined::LostEvents) => self.lost_events += 1,
            Some(NotJoined::NoHrtimerStart) => self.no_hrtimer_start += 1,
            Some(NotJoined::NoExpiry) => self.no_expiry += 1,
            Some(NotJoined::NoSwitchIn) => self.no_switch_in += 1,
        }
    }
}

/// The split of every sample of one measuring thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerSplit {
    pub method: TimerMethod,
    pub tid: i32,
    pub cpu: u32,
    pub samples: Vec<SampleSplit>,
    pub counts: JoinCounts,
    /// nanosleep samples are joined by nearness (within the tolerance), not exactly.
    pub approximate_join: bool,
    /// The thread has no rseq_update event at all (glibc without rseq, or the event off):
    /// every `to_user_ns` is 0.
    pub no_rseq_events: bool,
}

/// Where a wake-up's switch-in was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SwitchIn {
    /// The sched_switch into the thread, or (inferred) the thread's first event after it.
    pub index: usize,
    /// The switch-in's time: the sched_switch's, or (inferred) the CPU's previous traced
    /// event not of the thread, the earliest the untraced switch can have happened.
    pub ts_ns: u64,
    /// No sched_switch into the thread was traced.
    pub inferred: bool,
    /// Inferred: how far the thread's first event lies after `ts_ns` (the switch happened
    /// somewhere in there); 0 when traced.
    pub uncertainty_ns: u64,
}

/// The switch-in of `tid` on `cpu` after event index `from`, before `until_ns`: the
/// sched_switch into it, else (inferred) the lower bound: the CPU's last event before the
/// thread's first one that is not its own.
pub(crate) fn find_switch_in(
    tl: &Timeline,
    cpu: u32,
    tid: i32,
    from: usize,
    until_ns: u64,
) -> Option<SwitchIn> {
    let list = tl.cpu(cpu);
    for (i, e) in list.iter().enumerate().skip(from) {
        if e.ts_ns > until_ns {
            break;
        }
        if let EventKind::SchedSwitch { next, .. } = &e.kind {
            if next.pid == tid {
                return Some(SwitchIn {
                    index: i,
                    ts_ns: e.ts_ns,
                    inferred: false,
                    uncertainty_ns: 0,
                });
            }
        } else if e.pid == tid {
            // The thread already runs: the switch into it was not traced. It happened after
            // the previous event on this CPU that was not its own.
            let before = list[..i].iter().rev().find(|p| p.pid != tid);
            let ts_ns = before.map_or(e.ts_ns, |p| p.ts_ns);
            return Some(SwitchIn {
                index: i,
                ts_ns,
                inferred: true,
                uncertainty_ns: e.ts_ns - ts_ns,
            });
        }
    }
    None
}

/// Whether `tid` was on `cpu` at event index `at`: the last sched_switch on that CPU
/// before it switched `tid` in (and none switched it out since). A wake-up then came
/// before the thread slept: there is no switch-in to find.
pub(crate) fn on_cpu_at(tl: &Timeline, cpu: u32, tid: i32, at: usize) -> bool {
    let list = tl.cpu(cpu);
    list[..at.min(list.len())]
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::SchedSwitch { prev, next, .. } if prev.pid == tid || next.pid == tid => {
                Some(next.pid == tid)
            }
            _ => None,
        })
        == Some(true)
}

/// The switch-in when no event of `tid` was traced between its hrtimer's expiry (index
/// `expiry`) and its clock read at `wake_ns`: the timer's `--trace` records no rseq_update
/// (its cost would land on the wake path) and some kernels record no sched_switch out of
/// idle. The clock read proves the thread ran by `wake_ns`, so the switch-in is placed at
/// its lower bound, the CPU's last traced event at or before it, and is at most
/// `uncertainty_ns` later.
pub(crate) fn switch_in_before_sample(
    tl: &Timeline,
    cpu: u32,
    tid: i32,
    expiry: usize,
    wake_ns: u64,
) -> Option<SwitchIn> {
    let list = tl.cpu(cpu);
    let mut last = expiry;
    for (i, e) in list.iter().enumerate().skip(expiry + 1) {
        if e.ts_ns > wake_ns {
            break;
        }
        if e.pid == tid {
            return None;
        }
        last = i;
    }
    let ts_ns = list.get(last)?.ts_ns;
    Some(SwitchIn {
        index: last + 1,
        ts_ns,
        inferred: true,
        uncertainty_ns: wake_ns.saturating_sub(ts_ns),
    })
}

/// The first rseq_update of `tid` after index `from` on `cpu`, before it switches out.
pub(crate) fn find_rseq(
    tl: &Timeline,
    cpu: u32,
    tid: i32,
    from: usize,
    until_ns: u64,
) -> Option<u64> {
    for e in tl.cpu(cpu).iter().skip(from) {
        if e.ts_ns > until_ns {
            break;
        }
        match &e.kind {
            EventKind::RseqUpdate { .. } if e.pid == tid => return Some(e.ts_ns),
            EventKind::SchedSwitch { prev, .. } if prev.pid == tid => return None,
            _ => {}
        }
    }
    None
}

/// Splits every sample of the measuring thread `tid` on `cpu`. `samples` in the order the
/// probe recorded them.
pub fn split_timer(
    tl: &Timeline,
    tid: i32,
    cpu: u32,
    method: TimerMethod,
    samples: &[TimerSample],
    cfg: &SplitConfig,
) -> TimerSplit {
    let list = tl.cpu(cpu);
    // The thread's hrtimer_start events by softexpires.
    let mut starts: HashMap<i64, Vec<usize>> = HashMap::new();
    let mut sorted_starts: Vec<(i64, usize)> = Vec::new();
    let mut has_rseq = false;
    for (i, e) in list.iter().enumerate() {
        if e.pid != tid {
            continue;
        }
        match e.kind {
            EventKind::HrtimerStart { softexpires_ns, .. } => {
                starts.entry(softexpires_ns).or_default().push(i);
                sorted_starts.push((softexpires_ns, i));
            }
            EventKind::RseqUpdate { .. } => has_rseq = true,
            _ => {}
        }
    }
    sorted_starts.sort_unstable();
    let window = tl.window(cpu);
    let mut pointer: Option<u64> = None;
    let mut used_expiry: Option<usize> = None;
    let mut out = Vec::with_capacity(samples.len());
    let mut counts = JoinCounts::default();
    for &s in samples {
        let split = split_one(
            tl,
            list,
            tid,
            cpu,
            method,
            s,
            cfg,
            window,
            &starts,
            &sorted_starts,
            &mut pointer,
            &mut used_expiry,
        );
        counts.count(&split);
        out.push(split);
    }
    TimerSplit {
        method,
        tid,
        cpu,
        samples: out,
        counts,
        approximate_join: method == TimerMethod::Nanosleep,
        no_rseq_events: !has_rseq,
    }
}

#[allow(clippy::too_many_arguments)]
fn split_one(
    tl: &Timeline,
    list: &[&Event],
    tid: i32,
    cpu: u32,
    method: TimerMethod,
    s: TimerSample,
    cfg: &SplitConfig,
    window: Option<(u64, u64)>,
    starts: &HashMap<i64, Vec<usize>>,
    sorted_starts: &[(i64, usize)],
    pointer: &mut Option<u64>,
    used_expiry: &mut Option<usize>,
) -> SampleSplit {
    use NotJoined::*;
    if method == TimerMethod::Busy {
        return SampleSplit::unjoined(s, Busy);
    }
    let deadline = s.deadline_ns;
    let wake = deadline + s.latency_ns;
    let until = wake + cfg.clock_slack_ns;
    match window {
        Some((first, last)) if first <= deadline && wake <= last => {}
        _ => return SampleSplit::unjoined(s, OutsideWindow),
    }
    let lost = |from_ns: u64| tl.lost_in(cpu, from_ns, wake);
    let start = find_start(list, method, deadline, wake, cfg, starts, sorted_starts);
    // Find the expiry: by the start's pointer, or (periodic timers re-armed inside the
    // handler) by the pointer of earlier samples and the first expiry after the deadline.
    let (expiry, from_ns) = match start {
        Some(i) => {
            let EventKind::HrtimerStart { hrtimer, .. } = list[i].kind else {
                unreachable!()
            };
            if periodic(method) {
                *pointer = Some(hrtimer);
            }
            (expiry_after(list, i, hrtimer, until), list[i].ts_ns)
        }
        None if periodic(method) && pointer.is_some() => {
            let p = pointer.unwrap();
            let from = used_expiry.map_or(0, |u| u + 1);
            let found =
                expiry_by_pointer(list, p, from, deadline).filter(|&j| list[j].ts_ns <= until);
            if found.is_none() && lost(deadline) {
                return SampleSplit::unjoined(s, LostEvents);
            }
            (found, deadline)
        }
        None => {
            let why = if lost(deadline.saturating_sub(1_000_000)) {
                LostEvents
            } else {
                NoHrtimerStart
            };
            return SampleSplit::unjoined(s, why);
        }
    };
    if lost(from_ns.min(deadline)) {
        return SampleSplit::unjoined(s, LostEvents);
    }
    let Some(expiry) = expiry else {
        return SampleSplit::unjoined(s, NoExpiry);
    };
    *used_expiry = Some(expiry);
    let sw = find_switch_in(tl, cpu, tid, expiry + 1, until)
        .or_else(|| switch_in_before_sample(tl, cpu, tid, expiry, wake));
    let Some(sw) = sw else {
        return SampleSplit::unjoined(s, NoSwitchIn);
    };
    let rseq = find_rseq(tl, cpu, tid, sw.index, until);
    joined(s, list[expiry].ts_ns, &sw, rseq)
}

/// The hrtimer_start for a deadline, latest first (the kernel may re-arm); nanosleep's is
/// relative: the nearest within the tolerance.
fn find_start(
    list: &[&Event],
    method: TimerMethod,
    deadline: u64,
    wake: u64,
    cfg: &SplitConfig,
    starts: &HashMap<i64, Vec<usize>>,
    sorted_starts: &[(i64, usize)],
) -> Option<usize> {
    match method {
        TimerMethod::Nanosleep => {
            let tol = cfg.nanosleep_tolerance_ns as i64;
            let d = deadline as i64;
            let a = sorted_starts.partition_point(|(x, _)| *x < d - tol);
            let b = sorted_starts.partition_point(|(x, _)| *x <= d + tol);
            sorted_starts[a..b]
                .iter()
                .filter(|(_, i)| list[*i].ts_ns <= wake)
                .min_by_key(|(x, _)| (x - d).abs())
                .map(|(_, i)| *i)
        }
        _ => starts
            .get(&(deadline as i64))
            .and_then(|v| v.iter().rev().copied().find(|&i| list[i].ts_ns <= wake)),
    }
}

/// The expiry of `hrtimer` after its start at `list[start]`, until `until` (none when it
/// is cancelled or started again first).
fn expiry_after(list: &[&Event], start: usize, hrtimer: u64, until: u64) -> Option<usize> {
    for (j, e) in list.iter().enumerate().skip(start + 1) {
        if e.ts_ns > until {
            break;
        }
        match e.kind {
            EventKind::HrtimerExpireEntry { hrtimer: h, .. } if h == hrtimer => return Some(j),
            EventKind::HrtimerCancel { hrtimer: h } if h == hrtimer => break,
            EventKind::HrtimerStart { hrtimer: h, .. } if h == hrtimer => break,
            _ => {}
        }
    }
    None
}

/// A periodic timer's first expiry of `hrtimer` from index `from` on, at or after the
/// deadline (its re-arm happened inside the handler, so no hrtimer_start names it).
fn expiry_by_pointer(list: &[&Event], hrtimer: u64, from: usize, deadline: u64) -> Option<usize> {
    list.iter()
        .enumerate()
        .skip(from)
        .find_map(|(j, e)| match e.kind {
            EventKind::HrtimerExpireEntry {
                hrtimer: h, now_ns, ..
            } if h == hrtimer && now_ns >= deadline as i64 => Some(j),
            _ => None,
        })
}

/// A joined sample's parts: deadline → expiry entry → switch-in → rseq (to user space).
fn joined(s: TimerSample, entry_ns: u64, sw: &SwitchIn, rseq: Option<u64>) -> SampleSplit {
    let deadline = s.deadline_ns;
    let sw_ns = sw.ts_ns;
    let irq = entry_ns as i64 - deadline as i64;
    let wake_to_run = sw_ns as i64 - entry_ns as i64;
    let to_user = rseq.map_or(0, |r| r as i64 - sw_ns as i64);
    SampleSplit {
        deadline_ns: deadline,
        latency_ns: s.latency_ns,
        joined: true,
        not_joined: None,
        irq_latency_ns: irq,
        wake_to_run_ns: wake_to_run,
        to_user_ns: to_user,
        remainder_ns: s.latency_ns as i64 - irq - wake_to_run - to_user,
        switch_in_inferred: sw.inferred,
        switch_in_uncertainty_ns: sw.uncertainty_ns,
        no_rseq: rseq.is_none(),
        expire_entry_ns: Some(entry_ns),
        switch_in_ns: Some(sw_ns),
    }
}
