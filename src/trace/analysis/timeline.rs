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
        Timeline {
            by_cpu,
            lost: Vec::new(),
            tasks,
        }
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
