//! The wake probe's per-iteration split: the waker's t0 → sched_wakeup of the wakee →
//! switch-in of the wakee ("switch time", as the thread wake-up study measures it) →
//! return to user space (rseq_update) → the wakee's t1. The parts sum to the response.

use serde::{Deserialize, Serialize};

use crate::result::extras::FirstIterations;
use crate::trace::analysis::split::{find_rseq, find_switch_in, on_cpu_at};
use crate::trace::analysis::timeline::Timeline;
use crate::trace::event::EventKind;

/// One wake iteration as `--raw` writes it (`t0_ns,t1_ns,response_ns`, CLOCK_MONOTONIC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakeSample {
    pub t0_ns: u64,
    pub t1_ns: u64,
}

/// Why an iteration could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakeNotJoined {
    OutsideWindow,
    LostEvents,
    /// No sched_wakeup of the wakee between t0 and t1: it was not asleep (already running
    /// or spinning), so there is no wake-up to split.
    NoWakeup,
    /// A sched_wakeup of the wakee came while it was still on its CPU, before it switched
    /// out to sleep: the wake-up ran, but there is no switch-in to split.
    NotAsleep,
    NoSwitchIn,
}

/// One iteration's split. When `joined` is false only `remainder_ns` is non-zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakeSplit {
    pub t0_ns: u64,
    pub response_ns: u64,
    pub joined: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_joined: Option<WakeNotJoined>,
    /// t0 → sched_waking of the wakee (the waker's call up to try_to_wake_up), if traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_waking_ns: Option<i64>,
    /// t0 → sched_wakeup (the wakee is runnable; includes the IPI to its CPU).
    pub to_wakeup_ns: i64,
    /// sched_wakeup → switch-in of the wakee: the switch time.
    pub switch_ns: i64,
    /// switch-in → rseq_update (0 and not measured when `no_rseq`).
    pub to_user_ns: i64,
    /// response − the parts: the wakee's own return path and clock read.
    pub remainder_ns: i64,
    /// No sched_switch into the wakee was traced: the switch-in is placed at its lower
    /// bound, the CPU's previous traced event (`switch_ns` a lower bound, `to_user_ns` an
    /// upper one), `switch_in_uncertainty_ns` before the wakee's first event.
    pub switch_in_inferred: bool,
    pub switch_in_uncertainty_ns: u64,
    pub no_rseq: bool,
    /// The wakee's CPU (where the wakeup landed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
}

impl WakeSplit {
    fn unjoined(s: WakeSample, why: WakeNotJoined) -> Self {
        let response = s.t1_ns.saturating_sub(s.t0_ns);
        WakeSplit {
            t0_ns: s.t0_ns,
            response_ns: response,
            joined: false,
            not_joined: Some(why),
            to_waking_ns: None,
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
}

/// Splits every iteration of the wakee `wakee_tid`. `slack_ns` is how much later than
/// latscope's clock read a trace stamp of the same moment may be (1 µs text, ~0 binary).
pub fn split_wake(
    tl: &Timeline,
    wakee_tid: i32,
    samples: &[WakeSample],
    slack_ns: u64,
) -> Vec<WakeSplit> {
    samples
        .iter()
        .map(|&s| split_one(tl, wakee_tid, s, slack_ns))
        .collect()
}

/// Adds the switch time of each of the wakee's first iterations to their listing
/// (`first_iterations` of the response, docs/probes.md): `switch_ns`, one per row, null
/// where the row could not be split, and `switch_not_joined` counting why not.
pub fn add_first_iteration_switches(
    tl: &Timeline,
    wakee_tid: i32,
    first_iterations: &mut FirstIterations,
    slack_ns: u64,
) {
    let samples: Vec<WakeSample> = first_iterations
        .rows
        .iter()
        .map(|r| WakeSample {
            t0_ns: r.get(1).copied().unwrap_or(0),
            t1_ns: r.get(2).copied().unwrap_or(0),
        })
        .collect();
    let splits = split_wake(tl, wakee_tid, &samples, slack_ns);
    let mut why: std::collections::BTreeMap<String, u64> = Default::default();
    let switches: Vec<Option<i64>> = splits
        .iter()
        .map(|w| {
            if w.joined {
                Some(w.switch_ns)
            } else {
                if let Some(n) = w.not_joined {
                    *why.entry(format!("{n:?}")).or_default() += 1;
                }
                None
            }
        })
        .collect();
    first_iterations.switch_ns = Some(switches);
    first_iterations.switch_not_joined = Some(why);
}

/// What `find_wakeup` found of a thread's wake-up in a time range.
pub(crate) struct FoundWakeup {
    /// The earliest sched_waking of the thread.
    pub waking_ns: Option<u64>,
    /// The earliest sched_wakeup: (ts_ns, target CPU, index on that CPU).
    pub wakeup: Option<(u64, u32, usize)>,
    /// The trace's window over all CPUs (first, last event).
    pub window: (u64, u64),
}

/// The first wake-up of `tid` in [from_ns, until_ns] on any CPU (the wakeup may be traced
/// on the waker's CPU or on the target's).
pub(crate) fn find_wakeup(tl: &Timeline, tid: i32, from_ns: u64, until_ns: u64) -> FoundWakeup {
    let mut waking = None::<u64>;
    let mut wakeup = None::<(u64, u32, usize)>;
    let (mut first, mut last) = (u64::MAX, 0);
    for cpu in tl.cpus() {
        if let Some((a, b)) = tl.window(cpu) {
            first = first.min(a);
            last = last.max(b);
        }
        let start = tl.index_at(cpu, from_ns);
        for (i, e) in tl.cpu(cpu).iter().enumerate().skip(start) {
            if e.ts_ns > until_ns {
                break;
            }
            match &e.kind {
                EventKind::SchedWaking { task, .. } if task.pid == tid => {
                    waking = Some(waking.map_or(e.ts_ns, |w| w.min(e.ts_ns)));
                }
                EventKind::SchedWakeup { task, target_cpu } if task.pid == tid => {
                    if wakeup.is_none_or(|(t, _, _)| e.ts_ns < t) {
                        let idx = if *target_cpu == cpu {
                            i
                        } else {
                            tl.index_at(*target_cpu, e.ts_ns)
                        };
                        wakeup = Some((e.ts_ns, *target_cpu, idx));
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    FoundWakeup {
        waking_ns: waking,
        wakeup,
        window: (first, last),
    }
}

fn split_one(tl: &Timeline, tid: i32, s: WakeSample, slack_ns: u64) -> WakeSplit {
    use WakeNotJoined::*;
    let until = s.t1_ns + slack_ns;
    let from = s.t0_ns.saturating_sub(slack_ns);
    let found = find_wakeup(tl, tid, from, until);
    let (waking, (first, last)) = (found.waking_ns, found.window);
    if !(first <= s.t0_ns && s.t1_ns <= last) {
        return WakeSplit::unjoined(s, OutsideWindow);
    }
    let lost = tl.cpus().any(|c| tl.lost_in(c, from, until));
    let Some((wakeup_ns, cpu, idx)) = found.wakeup else {
        return WakeSplit::unjoined(s, if lost { LostEvents } else { NoWakeup });
    };
    if lost {
        return WakeSplit::unjoined(s, LostEvents);
    }
    let Some(sw) = find_switch_in(tl, cpu, tid, idx, until) else {
        let why = if on_cpu_at(tl, cpu, tid, idx) {
            NotAsleep
        } else {
            NoSwitchIn
        };
        return WakeSplit::unjoined(s, why);
    };
    let sw_ns = sw.ts_ns;
    let rseq = find_rseq(tl, cpu, tid, sw.index, until);
    let response = s.t1_ns.saturating_sub(s.t0_ns) as i64;
    let to_wakeup = wakeup_ns as i64 - s.t0_ns as i64;
    let switch = sw_ns as i64 - wakeup_ns as i64;
    let to_user = rseq.map_or(0, |r| r as i64 - sw_ns as i64);
    WakeSplit {
        t0_ns: s.t0_ns,
        response_ns: response as u64,
        joined: true,
        not_joined: None,
        to_waking_ns: waking.map(|w| w as i64 - s.t0_ns as i64),
        to_wakeup_ns: to_wakeup,
        switch_ns: switch,
        to_user_ns: to_user,
        remainder_ns: response - to_wakeup - switch - to_user,
        switch_in_inferred: sw.inferred,
        switch_in_uncertainty_ns: sw.uncertainty_ns,
        no_rseq: rseq.is_none(),
        cpu: Some(cpu),
    }
}
