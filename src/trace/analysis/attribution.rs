//! Spike attribution: for every timer sample above the threshold, what held its CPU from
//! the deadline to the switch-in of the measuring thread (tasks with policy and priority,
//! IRQs, softirqs, IPIs, page faults, RT throttling, silent host stops), one line per
//! spike, a summary over all spikes, and the worst spike's events for the text rendering.

use serde::{Deserialize, Serialize};

use crate::trace::analysis::account::{account_woken, Cause, CauseKind, SilenceBounds};
use crate::trace::analysis::split::{NotJoined, TimerSplit};
use crate::trace::analysis::threshold::Threshold;
use crate::trace::analysis::timeline::Timeline;
use crate::trace::event::Event;
use crate::units::human_ns;

/// Settings of the attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttributionConfig {
    pub threshold: Threshold,
    pub bounds: SilenceBounds,
    /// How far before the deadline the worst spike's event window starts.
    pub window_margin_ns: u64,
}

impl Default for AttributionConfig {
    fn default() -> Self {
        AttributionConfig {
            threshold: Threshold::P999,
            bounds: SilenceBounds::default(),
            window_margin_ns: 100_000,
        }
    }
}

/// One sample above the threshold and what held its CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spike {
    pub cpu: u32,
    /// Index of the sample in the thread's series.
    pub sample_index: usize,
    pub deadline_ns: u64,
    pub latency_ns: u64,
    /// End of the attributed interval: the measuring thread's clock read (deadline +
    /// latency; its switch-in if that was later).
    pub window_end_ns: u64,
    /// Largest first.
    pub causes: Vec<Cause>,
    /// Interval time no cause covers (the whole latency when nothing could be said).
    pub unexplained_ns: u64,
    /// The switch-in was inferred from the thread's first event (no sched_switch traced).
    pub switch_in_inferred: bool,
    /// Set when the sample could not be joined; then the interval ends at the wake-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_joined: Option<NotJoined>,
    /// When the measuring thread was woken where its sched_wakeup is not recorded (the
    /// timer's `--trace` leaves it out): its hrtimer's expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub woken_ns: Option<u64>,
}

/// At most this many causes on a spike's line.
const LINE_CAUSES: usize = 6;

impl Spike {
    /// `2.15 ms: stall-inj/16118 FIFO/RR 99 ran 2.13 ms; local_timer (vector 236) 27.00 µs ×2`.
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = self
            .causes
            .iter()
            .filter(|c| c.duration_ns > 0 || c.kind == CauseKind::PageFault)
            .take(LINE_CAUSES)
            .map(Cause::render)
            .collect();
        let shown = parts.len();
        let rest = self.causes.len().saturating_sub(shown);
        if rest > 0 && shown == LINE_CAUSES {
            parts.push(format!("+{rest} more"));
        }
        if self.unexplained_ns > 0 {
            parts.push(format!("unexplained {}", human_ns(self.unexplained_ns)));
        }
        match self.not_joined {
            Some(NotJoined::LostEvents) => parts.push("events lost on this CPU".to_string()),
            Some(NotJoined::OutsideWindow) => parts.push("outside the trace".to_string()),
            _ => {}
        }
        format!("{}: {}", human_ns(self.latency_ns), parts.join("; "))
    }
}

/// One line of the summary: a cause and the spikes it appeared in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryEntry {
    pub kind: CauseKind,
    /// `hypervisor`, `kworker/1:2/123`, `irq 36 virtio1`, ...
    pub label: String,
    /// Spikes it appeared in, and in how many it held the CPU longest.
    pub spikes: u64,
    pub dominant_in: u64,
    pub duration_ns: u64,
}

/// Causes over all spikes, most time first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpikeSummary {
    pub spikes: u64,
    pub entries: Vec<SummaryEntry>,
}

impl SpikeSummary {
    /// `hypervisor 14 spikes, 41.00 ms; kworker/1:2/99 3 spikes, 1.20 ms`.
    pub fn render(&self) -> String {
        if self.spikes == 0 {
            return "no spikes".to_string();
        }
        self.entries
            .iter()
            .map(|e| {
                let s = if e.spikes == 1 { "spike" } else { "spikes" };
                format!("{} {} {s}, {}", e.label, e.spikes, human_ns(e.duration_ns))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn summary_label(c: &Cause) -> String {
    match c.kind {
        CauseKind::Hypervisor => "hypervisor".to_string(),
        CauseKind::Task => format!("{}/{}", c.name, c.pid.unwrap_or(0)),
        _ => c.label(),
    }
}

/// Sums causes over spikes.
pub fn summarize(spikes: &[Spike]) -> SpikeSummary {
    let mut entries: Vec<SummaryEntry> = Vec::new();
    for spike in spikes {
        let dominant = spike
            .causes
            .iter()
            .filter(|c| c.duration_ns > 0)
            .max_by_key(|c| c.duration_ns);
        for c in spike.causes.iter().filter(|c| c.duration_ns > 0) {
            let label = summary_label(c);
            let is_dominant = dominant.is_some_and(|d| std::ptr::eq(d, c));
            match entries
                .iter_mut()
                .find(|e| e.label == label && e.kind == c.kind)
            {
                Some(e) => {
                    e.spikes += 1;
                    e.dominant_in += u64::from(is_dominant);
                    e.duration_ns += c.duration_ns;
                }
                None => entries.push(SummaryEntry {
                    kind: c.kind,
                    label,
                    spikes: 1,
                    dominant_in: u64::from(is_dominant),
                    duration_ns: c.duration_ns,
                }),
            }
        }
    }
    entries.sort_by(|a, b| {
        b.duration_ns
            .cmp(&a.duration_ns)
            .then(a.label.cmp(&b.label))
    });
    SpikeSummary {
        spikes: spikes.len() as u64,
        entries,
    }
}

/// The spikes of one measuring thread and their summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    pub threshold_ns: u64,
    pub spikes: Vec<Spike>,
    pub summary: SpikeSummary,
}

impl Attribution {
    /// The spike with the largest latency.
    pub fn worst(&self) -> Option<&Spike> {
        self.spikes.iter().max_by_key(|s| s.latency_ns)
    }
}

/// Attributes every sample of `split` above the threshold (strictly above; with the
/// default p99.9 about one sample in a thousand).
pub fn attribute(tl: &Timeline, split: &TimerSplit, cfg: &AttributionConfig) -> Attribution {
    let latencies: Vec<u64> = split.samples.iter().map(|s| s.latency_ns).collect();
    let threshold_ns = cfg.threshold.resolve(&latencies);
    let spikes: Vec<Spike> = split
        .samples
        .iter()
        .enumerate()
        .filter(|(_, s)| s.latency_ns > threshold_ns)
        .map(|(i, s)| {
            // Up to the clock read, not only the switch-in: a task preempting the measuring
            // thread between its switch-in and its return to user space delays it too.
            let wake = s.deadline_ns + s.latency_ns;
            let end = s.switch_in_ns.map_or(wake, |si| si.max(wake));
            let spike = Spike {
                cpu: split.cpu,
                sample_index: i,
                deadline_ns: s.deadline_ns,
                latency_ns: s.latency_ns,
                window_end_ns: end,
                causes: Vec::new(),
                unexplained_ns: s.latency_ns,
                switch_in_inferred: s.switch_in_inferred,
                not_joined: s.not_joined,
                woken_ns: s.expire_entry_ns,
            };
            if matches!(
                s.not_joined,
                Some(NotJoined::LostEvents | NotJoined::OutsideWindow | NotJoined::Busy)
            ) {
                return spike;
            }
            account_spike(tl, spike, split.tid, cfg.bounds)
        })
        .collect();
    let summary = summarize(&spikes);
    Attribution {
        threshold_ns,
        spikes,
        summary,
    }
}

/// Fills `spike`'s causes with what held its CPU over [deadline, window end] ([`account`];
/// `me`, the measuring thread, is no cause); the rest of the interval is unexplained.
pub fn account_spike(tl: &Timeline, mut spike: Spike, me: i32, bounds: SilenceBounds) -> Spike {
    let acc = account_woken(
        tl,
        spike.cpu,
        (spike.deadline_ns, spike.window_end_ns),
        me,
        spike.woken_ns,
        bounds,
    );
    let interval = spike.window_end_ns.saturating_sub(spike.deadline_ns);
    spike.unexplained_ns = interval.saturating_sub(acc.explained_ns());
    spike.causes = acc.causes;
    spike
}

/// A response of `me` on `cpu` from `at_ns` taking `latency_ns` (a wake-up: the waker's
/// stamp to the wakee's), accounted like a timer spike. Outside the trace or where events
/// were lost nothing is said (all unexplained, `not_joined` telling why).
pub fn attribute_response(
    tl: &Timeline,
    cpu: u32,
    sample_index: usize,
    at_ns: u64,
    latency_ns: u64,
    me: i32,
    bounds: SilenceBounds,
) -> Spike {
    let end = at_ns + latency_ns;
    let spike = Spike {
        cpu,
        sample_index,
        deadline_ns: at_ns,
        latency_ns,
        window_end_ns: end,
        causes: Vec::new(),
        unexplained_ns: latency_ns,
        switch_in_inferred: false,
        not_joined: None,
        woken_ns: None,
    };
    let inside = tl.window(cpu).is_some_and(|(a, b)| a <= at_ns && end <= b);
    if !inside {
        return Spike {
            not_joined: Some(NotJoined::OutsideWindow),
            ..spike
        };
    }
    if tl.lost_in(cpu, at_ns, end) {
        return Spike {
            not_joined: Some(NotJoined::LostEvents),
            ..spike
        };
    }
    account_spike(tl, spike, me, bounds)
}

/// The events of all CPUs from `margin_ns` before the spike's deadline to its window end:
/// a contiguous slice of the time-sorted `events`, for the kernel-format rendering.
pub fn spike_events<'a>(events: &'a [Event], spike: &Spike, margin_ns: u64) -> &'a [Event] {
    let from = spike.deadline_ns.saturating_sub(margin_ns);
    let a = events.partition_point(|e| e.ts_ns < from);
    let b = events.partition_point(|e| e.ts_ns <= spike.window_end_ns);
    &events[a..b.max(a)]
}
