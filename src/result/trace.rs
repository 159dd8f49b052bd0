//! `scenario.trace` in the result file: what `--trace` recorded (events, losses, missing
//! events), how many samples it could join, each measuring thread's split parts with full
//! statistics, the spikes with their causes, the cause summary and the worst spike's events
//! in the kernel's text format. Documented in docs/result-schema.md.

use super::ThreadResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything `--trace` found for one scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TraceResult {
    /// The tracefs instance used (`latscope-PID`; removed at the end of the run).
    pub instance: String,
    /// CPUs traced.
    pub cpus: Vec<usize>,
    /// The trace's span on CLOCK_MONOTONIC (its clock is `mono`).
    pub started_ns: u64,
    pub ended_ns: u64,
    /// Events recorded (all CPUs), and per tracepoint.
    pub events_recorded: u64,
    #[serde(default)]
    pub events_by_type: BTreeMap<String, u64>,
    /// Events lost per CPU (overwritten, dropped, pages with missed events): never hidden.
    pub losses: Losses,
    /// Requested events this kernel does not have (the analysis that needs them is partial).
    #[serde(default)]
    pub missing_events: Vec<String>,
    /// Samples above this are spikes (`--trace-threshold`, default the scenario's p99.9).
    pub threshold_ns: u64,
    /// Where the threshold came from: `--trace-threshold` or `p99.9`.
    pub threshold_source: String,
    /// One entry per measuring thread.
    pub threads: Vec<TraceThread>,
    /// Spikes above the threshold, worst first (all of them; the terminal shows ~20).
    pub spikes: Vec<TraceSpike>,
    /// Per cause: how many spikes it appears in and the time it took in them.
    pub cause_summary: Vec<CauseSummary>,
    /// The events on the traced CPUs around the worst spike, as the kernel's `trace` file
    /// prints them.
    #[serde(default)]
    pub worst_spike_events: Vec<String>,
    /// The worst spike's events as spans for the HTML timeline.
    #[serde(default)]
    pub worst_spike_spans: Vec<TimelineSpan>,
}

/// How an untraced switch-in is placed: at the CPU's last traced event before the thread's
/// first one (the earliest the switch can have been: a lower bound).
pub const SWITCH_IN_PLACEMENT: &str = "lower_bound_previous_event_on_cpu";

/// One measuring thread's side of the join.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TraceThread {
    pub cpu: usize,
    /// gettid(): the pid in sched events.
    pub tid: i32,
    /// `timer`, `noise`, `waker`, `wakee`.
    pub role: String,
    /// Samples (timer/wake) or gaps (noise) measured, and how many the events explained.
    pub samples_total: u64,
    pub samples_joined: u64,
    /// Why the others were not joined, reason -> count.
    #[serde(default)]
    pub not_joined: BTreeMap<String, u64>,
    /// Per part (metric = the part's name, e.g. `irq_latency`): full statistics.
    #[serde(default)]
    pub parts: Vec<ThreadResult>,
    /// Joined samples whose switch-in was not traced (some kernels record no sched_switch
    /// out of idle): placed per `switch_in_placement`; the parts it bounds say so in their
    /// `extra` (`bound`: `lower`/`upper`, `bounded_samples`).
    #[serde(default)]
    pub switch_in_inferred: u64,
    /// Where an untraced switch-in is placed: `SWITCH_IN_PLACEMENT` (set when any was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_in_placement: Option<String>,
    /// Joined samples without the thread's rseq_update: `to_user` not measured for them
    /// (left out of its statistics, counted in its `extra.not_measured_samples`).
    #[serde(default)]
    pub no_rseq: u64,
    /// What the parts' figures mean where something was not measured, as printed under
    /// the parts table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Noise: gaps per class (`irq`, `softirq`, `thread`, `no_guest_activity`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub classes: BTreeMap<String, u64>,
}

/// A sample above the threshold and what held its CPU.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TraceSpike {
    pub cpu: usize,
    /// The sample's stamp: timer deadline, wake t0, noise gap start (CLOCK_MONOTONIC ns).
    pub at_ns: u64,
    pub latency_ns: u64,
    /// What held the CPU, largest first (structured as the analysis names them).
    pub causes: Vec<serde_json::Value>,
    /// Latency the events do not account for (on a VM: the host took the CPU).
    pub unexplained_ns: u64,
    /// The one-line rendering (`3.1 ms: stall-inj/4242 FIFO 99 ran 2.98 ms; ...`).
    pub line: String,
}

/// One cause over all spikes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CauseSummary {
    /// `task`, `irq`, `softirq`, `vector`, `ipi`, `hypervisor`, `rt_throttling`, `not_preempted`, ...
    pub kind: String,
    /// e.g. `stall-inj/4242`, `irq 36 virtio1`, `softirq TIMER`, `hypervisor`.
    pub cause: String,
    /// Spikes it appeared in, and in how many it held the CPU longest.
    pub spikes: u64,
    pub dominant_in: u64,
    /// Its time inside those spikes.
    pub total_ns: u64,
}

/// A span of one CPU's timeline (HTML): a task, IRQ or softirq running, or a marker.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TimelineSpan {
    pub cpu: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    /// `task`, `irq`, `softirq`, `deadline`, `switch_in`.
    pub kind: String,
    pub label: String,
}

/// Events the recorder could not deliver, reported beside every analysis (never hidden).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Losses {
    /// Per CPU: events the ring buffer overwrote or dropped (per_cpu/cpuN/stats `overrun`
    /// + `dropped events`), commit overruns, and pages flagged as having missed events.
    pub per_cpu: Vec<CpuLosses>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuLosses {
    pub cpu: u32,
    pub overrun: u64,
    pub dropped: u64,
    pub commit_overrun: u64,
    /// Data pages whose header flagged missed events before them.
    pub pages_missing_events: u64,
    /// Events the page headers say were missed, where the kernel stored the count.
    pub missed_events: u64,
    /// Events read out of the kernel but not kept: the recorder's memory cap was reached.
    #[serde(default)]
    pub not_kept: u64,
}

impl Losses {
    /// Whether anything at all was lost.
    pub fn any(&self) -> bool {
        self.per_cpu.iter().any(|c| {
            c.overrun
                + c.dropped
                + c.commit_overrun
                + c.pages_missing_events
                + c.missed_events
                + c.not_kept
                > 0
        })
    }
}
