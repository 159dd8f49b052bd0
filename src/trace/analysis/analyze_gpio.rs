//! The bridge for the GPIO probe (analyze.rs does the others): each edge's t1 and t2 from
//! its `--raw` series, and the split's parts (gpio_split.rs) with their statistics and
//! notes (analyze.rs splits and accounts the spikes as the wake probe's).

use crate::result::extras::Bound;
use crate::result::trace::{TraceThread, SWITCH_IN_PLACEMENT};
use crate::result::{Metric, RawSeries};
use crate::trace::analysis::gpio_split::{GpioSample, GpioSplit};
use crate::trace::analysis::parts::{mark_bound, part_result};
use std::collections::BTreeMap;

/// The edges of the measuring thread on `cpu`: t1 and t2 of each. Loopback rows are
/// stamped with the drive (t0): t1 = t0 + drive→irq, t2 = t1 + irq→user; respond rows are
/// stamped with t1 itself.
pub(crate) fn gpio_samples(raw: &[RawSeries], cpu: usize) -> Vec<GpioSample> {
    let series = |m: Metric| raw.iter().find(|r| r.cpu == cpu && r.metric == m);
    let Some(irq_to_user) = series(Metric::IrqToUser) else {
        return Vec::new();
    };
    let drive: Option<Vec<i64>> = series(Metric::DriveToIrq).map(|d| {
        let n = d.columns.len();
        d.rows().map(|r| r[n - 1]).collect()
    });
    let n = irq_to_user.columns.len();
    irq_to_user
        .rows()
        .enumerate()
        .map(|(i, r)| {
            let stamp = r[0].max(0) as u64;
            let t1 = match &drive {
                Some(d) => stamp + d.get(i).copied().unwrap_or(0).max(0) as u64,
                None => stamp,
            };
            GpioSample {
                irq_ns: t1,
                user_ns: t1 + r[n - 1].max(0) as u64,
            }
        })
        .collect()
}

/// Join counts, parts and notes, as the wake probe's: `irq_thread` only from edges whose
/// IRQ thread was seen running, `to_user` only where rseq_update was traced, `switch` a
/// lower and `to_user` an upper bound where the switch-in was inferred.
pub(crate) fn gpio_parts(t: &mut TraceThread, splits: &[GpioSplit], method: &str) {
    let mut why: BTreeMap<String, u64> = BTreeMap::new();
    let mut parts: [Vec<(u64, i64)>; 5] = Default::default();
    let (mut inferred, mut inferred_with_rseq, mut no_thread) = (0u64, 0u64, 0u64);
    let mut irqs: BTreeMap<(i32, u32), u64> = BTreeMap::new();
    for s in splits {
        let Some(irq) = s.irq.filter(|_| s.joined) else {
            if let Some(n) = s.not_joined {
                *why.entry(format!("{n:?}")).or_default() += 1;
            }
            continue;
        };
        t.samples_joined += 1;
        *irqs.entry(irq).or_default() += 1;
        inferred += u64::from(s.switch_in_inferred);
        inferred_with_rseq += u64::from(s.switch_in_inferred && !s.no_rseq);
        t.no_rseq += u64::from(s.no_rseq);
        no_thread += u64::from(s.irq_thread_ns.is_none());
        for (i, v) in s.parts().into_iter().enumerate() {
            let measured = match i {
                0 => s.irq_thread_ns.is_some(),
                3 => !s.no_rseq,
                _ => true,
            };
            if measured {
                parts[i].push((s.irq_ns, v));
            }
        }
    }
    t.not_joined = why;
    let names = [
        Metric::IrqThread,
        Metric::ToWakeup,
        Metric::Switch,
        Metric::ToUser,
        Metric::Remainder,
    ];
    for (name, values) in names.iter().zip(&parts) {
        t.parts.push(part_result(t.cpu, method, *name, values));
    }
    mark_bound(&mut t.parts[2], Bound::Lower, inferred);
    mark_bound(&mut t.parts[3], Bound::Upper, inferred_with_rseq);
    if no_thread > 0 {
        t.parts[0].extra.not_measured_samples = Some(no_thread);
    }
    t.switch_in_inferred = inferred;
    gpio_notes(t, &irqs, inferred, no_thread);
}

/// What the parts mean where something was not seen, and which IRQ the edges came by.
fn gpio_notes(
    t: &mut TraceThread,
    irqs: &BTreeMap<(i32, u32), u64>,
    inferred: u64,
    no_thread: u64,
) {
    let joined = t.samples_joined;
    if !irqs.is_empty() {
        let list: Vec<String> = irqs
            .iter()
            .map(|((irq, cpu), n)| format!("IRQ {irq} on CPU {cpu} ({n})"))
            .collect();
        t.notes.push(format!(
            "edges joined by their kernel stamp to the hard IRQ handler that took it: {}; \
             irq_thread is t1 to the switch-in of its thread (irq/N-…), to_wakeup from \
             there to the measuring thread's sched_wakeup",
            list.join(", ")
        ));
    }
    if no_thread > 0 {
        t.notes.push(format!(
            "irq_thread not measured for {no_thread} of {joined} joined edges (no switch-in \
             of the line's IRQ thread before the wakeup: it was already running, or the \
             handler woke the reader itself): their time is in to_wakeup"
        ));
    }
    if inferred > 0 {
        t.switch_in_placement = Some(SWITCH_IN_PLACEMENT.into());
        t.notes.push(format!(
            "switch-in not traced for {inferred} of {joined} joined edges: placed at the \
             CPU's previous traced event, the earliest it can have been, so there switch is \
             a lower bound (≥) and to_user an upper bound (≤); their sum is exact"
        ));
    }
    if t.no_rseq > 0 {
        t.notes.push(format!(
            "to_user not measured for {} of {joined} joined edges (no rseq_update of the \
             measuring thread): their return to user space is in remainder",
            t.no_rseq
        ));
    }
}
