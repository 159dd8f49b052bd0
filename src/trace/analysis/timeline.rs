//! The analysis' view of a recorded trace: events per CPU in time order, where events may
//! be missing (losses), and what each pid was called and at which priority.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::trace::event::{Event, EventKind, Losses, TaskRef};

/// A time span on one CPU where the ring buffer lost events: nothing seen there may be
/// taken as "nothing happened".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostSpan {
    pub cpu: u32,
    pub from_ns: u64,
    pub to_ns: u64,
}

/// Per-CPU event lists of one trace, with the spans where events were lost.
#[derive(Debug, Clone)]
pub struct Timeline<'a> {
    by_cpu: BTreeMap<u32, Vec<&'a Event>>,
    lost: Vec<LostSpan>,
    tasks: HashMap<i32, TaskRef>,
    /// Switch-ins out of idle that the kernel did not record, keyed by the (cpu, ts_ns,
    /// pid) of the task's first event after them; see `implied_switch_ins`.
    implied: HashMap<(u32, u64, i32), u64>,
}

impl<'a> Timeline<'a> {
    /// `events` sorted by time (as the recorder yields them; re-sorted per CPU here anyway).
    pub fn new(events: &'a [Event]) -> Self {
        let mut by_cpu: BTreeMap<u32, Vec<&'a Event>> = BTreeMap::new();
        let mut tasks: HashMap<i32, TaskRef> = HashMap::new();
        for event in events {
            by_cpu.entry(event.cpu).or_default().push(event);
            let mut note = |t: &TaskRef| {
                if t.pid != 0 {
                    tasks.insert(t.pid, t.clone());
                }
            };
            match &event.kind {
                EventKind::SchedSwitch { prev, next, .. } => {
                    note(prev);
                    note(next);
                }
                EventKind::SchedWaking { task, .. } | EventKind::SchedWakeup { task, .. } => {
                    note(task)
                }
                _ => {}
            }
        }
        for list in by_cpu.values_mut() {
            list.sort_by_key(|e| e.ts_ns);
        }
        let implied = implied_switch_ins(&by_cpu, events);
        Timeline {
            by_cpu,
            lost: Vec::new(),
            tasks,
            implied,
        }
    }

    /// When the task of `e` was switched in, if `e` is its first event after its CPU sat
    /// idle and the kernel recorded no switch out of idle (see `implied_switch_ins`).
    pub fn switched_in_before(&self, e: &Event) -> Option<u64> {
        self.implied.get(&(e.cpu, e.ts_ns, e.pid)).copied()
    }

    /// Adds spans where events were lost (from the recorder's page headers).
    pub fn with_lost_spans(mut self, spans: &[LostSpan]) -> Self {
        self.lost.extend_from_slice(spans);
        self
    }

    /// Marks every CPU that lost anything as lost over its whole recorded window: the
    /// per-CPU counters do not say when, so no silence on such a CPU is trusted.
    pub fn with_losses(mut self, losses: &Losses) -> Self {
        for c in &losses.per_cpu {
            let n =
                c.overrun + c.dropped + c.commit_overrun + c.pages_missing_events + c.missed_events;
            if n > 0 {
                self.lost.push(LostSpan {
                    cpu: c.cpu,
                    from_ns: 0,
                    to_ns: u64::MAX,
                });
            }
        }
        self
    }

    /// All events of one CPU, in time order.
    pub fn cpu(&self, cpu: u32) -> &[&'a Event] {
        self.by_cpu.get(&cpu).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The CPUs that have events.
    pub fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_cpu.keys().copied()
    }

    /// Index of the first event on `cpu` at or after `ts_ns`.
    pub fn index_at(&self, cpu: u32, ts_ns: u64) -> usize {
        self.cpu(cpu).partition_point(|e| e.ts_ns < ts_ns)
    }

    /// Events on `cpu` with `from_ns <= ts <= to_ns`.
    pub fn range(&self, cpu: u32, from_ns: u64, to_ns: u64) -> &[&'a Event] {
        let list = self.cpu(cpu);
        let a = list.partition_point(|e| e.ts_ns < from_ns);
        let b = list.partition_point(|e| e.ts_ns <= to_ns);
        &list[a..b.max(a)]
    }

    /// First and last event time on `cpu`: the window the trace covers there.
    pub fn window(&self, cpu: u32) -> Option<(u64, u64)> {
        let list = self.cpu(cpu);
        Some((list.first()?.ts_ns, list.last()?.ts_ns))
    }

    /// Whether `[from_ns, to_ns]` on `cpu` overlaps a span with lost events.
    pub fn lost_in(&self, cpu: u32, from_ns: u64, to_ns: u64) -> bool {
        self.lost
            .iter()
            .any(|s| s.cpu == cpu && s.from_ns <= to_ns && from_ns <= s.to_ns)
    }

    /// The last name and priority traced for `pid` (sched_switch/sched_waking fields).
    pub fn task(&self, pid: i32) -> Option<&TaskRef> {
        self.tasks.get(&pid)
    }
}

/// Switch-ins out of idle the trace does not show. Some kernels record no sched_switch
/// from the idle task (6.18 on this project's x86 VM: none on CPU 1, though CPU 0 has
/// them), so a task woken onto an idle CPU seems to start at its first own event, which
/// for a spinning task can be milliseconds later, and the time between looks like idle.
/// When a task's event follows idle-context events and the task was woken onto that CPU
/// since it went idle (`wakeups_by_cpu`), it was switched in after both the wakeup and the
/// last idle-context event: the later of the two. Without such a wakeup nothing is
/// implied (the switch-in is then unknowable).
fn implied_switch_ins(
    by_cpu: &BTreeMap<u32, Vec<&Event>>,
    events: &[Event],
) -> HashMap<(u32, u64, i32), u64> {
    let wakeups = wakeups_by_cpu(events);
    let mut implied = HashMap::new();
    for (&cpu, list) in by_cpu {
        let woken = wakeups.get(&cpu).map(Vec::as_slice).unwrap_or(&[]);
        // (since, last idle-context event) while the CPU is believed idle.
        let mut idle: Option<(u64, u64)> = None;
        for e in list {
            if let EventKind::SchedSwitch { next, .. } = &e.kind {
                idle = (next.pid == 0).then_some((e.ts_ns, e.ts_ns));
                continue;
            }
            match (e.pid, idle) {
                (0, Some((since, _))) => idle = Some((since, e.ts_ns)),
                (0, None) => idle = Some((e.ts_ns, e.ts_ns)),
                (pid, Some((since, last))) => {
                    let a = woken.partition_point(|w| w.0 < since);
                    let b = woken.partition_point(|w| w.0 <= e.ts_ns);
                    let waker = woken[a..b]
                        .iter()
                        .rev()
                        .find(|w| w.1 == pid || w.1 == UNKNOWN_SLEEPER);
                    if let Some(&(w, _)) = waker {
                        implied.insert((cpu, e.ts_ns, pid), w.max(last));
                    }
                    idle = None;
                }
                (_, None) => {}
            }
        }
    }
    implied
}

/// Who a wake-up woke: a known task, or some sleeper whose timer was armed before the
/// recording began.
const UNKNOWN_SLEEPER: i32 = -1;

/// (ts_ns, pid) of every wake-up the trace shows, by the CPU woken onto, in time order: a
/// sched_wakeup/waking (recorded on any CPU, with its target), or, where those are not
/// recorded (the timer's `--trace`), the expiry in idle context of an hrtimer that task
/// armed last (its clock_nanosleep or timerfd: the sleeper is who armed it). A timer
/// armed before the recording has no known owner; its expiry is a wake-up of
/// `UNKNOWN_SLEEPER` when its callback is one that tasks in the trace arm right before
/// they sleep (hrtimer_wakeup, timerfd's), so it woke whoever runs next.
fn wakeups_by_cpu(events: &[Event]) -> BTreeMap<u32, Vec<(u64, i32)>> {
    let mut timers: Vec<&Event> = events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::HrtimerStart { .. } | EventKind::HrtimerExpireEntry { .. }
            )
        })
        .collect();
    timers.sort_by_key(|e| e.ts_ns);
    let sleepers = sleeper_callbacks(events);
    let mut armed_by: HashMap<u64, i32> = HashMap::new();
    let mut wakeups: BTreeMap<u32, Vec<(u64, i32)>> = BTreeMap::new();
    for e in timers {
        match e.kind {
            EventKind::HrtimerStart { hrtimer, .. } if e.pid != 0 => {
                armed_by.insert(hrtimer, e.pid);
            }
            EventKind::HrtimerExpireEntry {
                hrtimer, function, ..
            } if e.pid == 0 => {
                let owner = match armed_by.get(&hrtimer) {
                    Some(&pid) => pid,
                    None if sleepers.contains(&function) => UNKNOWN_SLEEPER,
                    None => continue,
                };
                wakeups.entry(e.cpu).or_default().push((e.ts_ns, owner));
            }
            _ => {}
        }
    }
    for e in events {
        if let EventKind::SchedWaking { task, target_cpu }
        | EventKind::SchedWakeup { task, target_cpu } = &e.kind
        {
            wakeups
                .entry(*target_cpu)
                .or_default()
                .push((e.ts_ns, task.pid));
        }
    }
    for list in wakeups.values_mut() {
        list.sort_unstable();
    }
    wakeups
}

/// The hrtimer callbacks of sleepers: timers a task armed and then switched out asleep
/// (its next event on that CPU a sched_switch away from it, not runnable).
fn sleeper_callbacks(events: &[Event]) -> std::collections::HashSet<u64> {
    let mut by_cpu: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
    for e in events {
        by_cpu.entry(e.cpu).or_default().push(e);
    }
    let mut found = std::collections::HashSet::new();
    for list in by_cpu.values_mut() {
        list.sort_by_key(|e| e.ts_ns);
        for pair in list.windows(2) {
            if let (
                EventKind::HrtimerStart { function, .. },
                EventKind::SchedSwitch {
                    prev, prev_state, ..
                },
            ) = (&pair[0].kind, &pair[1].kind)
            {
                if prev.pid == pair[0].pid && prev.pid != 0 && prev_state & 0xff != 0 {
                    found.insert(*function);
                }
            }
        }
    }
    found
}

/// Scheduling class as far as the traced kernel priority tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// SCHED_FIFO or SCHED_RR (the trace does not tell them apart); `priority` is rt_priority.
    Rt,
    /// SCHED_OTHER/BATCH/IDLE; `priority` is the nice value.
    Other,
    /// SCHED_DEADLINE (kernel prio -1).
    Deadline,
}

/// Policy and user-visible priority from the traced kernel prio: below 100 is RT with
/// rt_priority 99 - prio, 100-139 is normal with nice prio - 120, -1 is deadline.
pub fn policy_of(prio: i32) -> (Policy, i32) {
    if prio < 0 {
        (Policy::Deadline, 0)
    } else if prio < 100 {
        (Policy::Rt, 99 - prio)
    } else {
        (Policy::Other, prio - 120)
    }
}

/// The kernel's softirq vector names (irq:softirq_entry `vec`).
pub fn softirq_name(vec: u32) -> &'static str {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    NAMES.get(vec as usize).copied().unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities() {
        assert_eq!(policy_of(0), (Policy::Rt, 99));
        assert_eq!(policy_of(4), (Policy::Rt, 95));
        assert_eq!(policy_of(120), (Policy::Other, 0));
        assert_eq!(policy_of(139), (Policy::Other, 19));
        assert_eq!(softirq_name(9), "RCU");
        assert_eq!(softirq_name(42), "?");
    }
}
