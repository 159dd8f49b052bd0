//! What each noise gap was, as rtla osnoise tells it: IRQs, softirqs, NMIs and other
//! threads on the CPU inside the gap with their own durations, or no guest event at all
//! (the hypervisor or SMM stopped the CPU).

use serde::{Deserialize, Serialize};

use crate::trace::analysis::account::{
    account, Accounting, Cause, CauseKind, SilenceBounds, HYPERVISOR_LABEL,
};
use crate::trace::analysis::timeline::Timeline;

/// One noise gap as `--raw` writes it: the loop saw no clock advance from `start_ns` for
/// `gap_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoiseGap {
    pub start_ns: u64,
    pub gap_ns: u64,
}

/// A gap and what held the CPU during it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GapClass {
    pub cpu: u32,
    pub start_ns: u64,
    pub gap_ns: u64,
    /// Largest first; page faults carry a count only.
    pub causes: Vec<Cause>,
    /// The kind with the most time (Hypervisor when nothing was traced in the gap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dominant: Option<CauseKind>,
    /// The gap's time no cause covers: the noise thread's own untraced kernel entry and
    /// exit around the events, below the silence bound.
    pub unexplained_ns: u64,
    /// The gap lies outside the trace on this CPU or overlaps lost events: not classified.
    pub unknown: bool,
}

impl GapClass {
    /// `46.91 µs: irq 36 virtio1-req.0 8.00 µs; softirq BLOCK 5.00 µs` or
    /// `24.02 µs: no guest activity: hypervisor/SMI 24.02 µs`.
    pub fn render(&self) -> String {
        let head = crate::units::human_ns(self.gap_ns);
        if self.unknown {
            return format!("{head}: not classified (outside the trace or events lost)");
        }
        let parts: Vec<String> = self.causes.iter().map(Cause::render).collect();
        format!("{head}: {}", parts.join("; "))
    }
}

/// Classifies each gap of the noise thread `tid` on `cpu`. A gap with no event at all is
/// the host's as a whole; inside gaps with events, stretches of the noise thread's own
/// time longer than `bounds.waiting_ns` are too.
pub fn classify_gaps(
    tl: &Timeline,
    cpu: u32,
    tid: i32,
    gaps: &[NoiseGap],
    bounds: SilenceBounds,
) -> Vec<GapClass> {
    let window = tl.window(cpu);
    gaps.iter()
        .map(|g| {
            let end = g.start_ns + g.gap_ns;
            let inside = window.is_some_and(|(a, b)| a <= g.start_ns && end <= b);
            let lost = tl.lost_in(cpu, g.start_ns, end);
            if !inside || lost {
                return GapClass {
                    cpu,
                    start_ns: g.start_ns,
                    gap_ns: g.gap_ns,
                    causes: Vec::new(),
                    dominant: None,
                    unexplained_ns: g.gap_ns,
                    unknown: true,
                };
            }
            let acc: Accounting = if tl.range(cpu, g.start_ns, end).is_empty() {
                // Nothing at all in the gap: the loop was not running and neither was
                // anything the guest traces.
                let mut a = Accounting::default();
                a.causes.push(Cause {
                    kind: CauseKind::Hypervisor,
                    name: HYPERVISOR_LABEL.to_string(),
                    pid: None,
                    policy: None,
                    priority: None,
                    irq: None,
                    vector: None,
                    duration_ns: g.gap_ns,
                    count: 1,
                });
                a
            } else {
                account(tl, cpu, g.start_ns, end, tid, bounds)
            };
            GapClass {
                cpu,
                start_ns: g.start_ns,
                gap_ns: g.gap_ns,
                dominant: acc.dominant().map(|c| c.kind),
                unexplained_ns: acc.unexplained_ns,
                causes: acc.causes,
                unknown: false,
            }
        })
        .collect()
}
