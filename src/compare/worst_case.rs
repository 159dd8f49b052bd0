//! Comparing worst-case estimates of aligned threads: only when both runs passed every
//! check and have a bounded tail; then the 10⁻⁶-per-period estimates' 95 % intervals say
//! whether the later run is higher, lower or not clearly different.

use super::Comparison;
use crate::stats::worst_case::{Per, WorstCase, PROBABILITIES};

fn us(ns: u64) -> String {
    format!("{:.2} µs", ns as f64 / 1000.0)
}

/// Why an estimate cannot be compared, or None when it can.
fn not_usable(wc: Option<&WorstCase>) -> Option<&'static str> {
    match wc {
        None => Some("no estimate (run with --worst-case)"),
        Some(w) if w.refused.is_some() => Some("refused by its checks"),
        Some(w) if w.unbounded => Some("heavy tail, no finite worst case"),
        Some(w) if !w.usable() => Some("no estimate"),
        Some(_) => None,
    }
}

/// One line per aligned row and later run where either side has an estimate.
pub fn lines(cmp: &Comparison) -> Vec<String> {
    let p = PROBABILITIES[0];
    let mut out = Vec::new();
    for a in &cmp.aligned {
        let Some((_, base)) = a.entries[0] else {
            continue;
        };
        for (r, entry) in a.entries.iter().enumerate().skip(1) {
            let Some((_, new)) = entry else { continue };
            let (wa, wb) = (base.worst_case.as_ref(), new.worst_case.as_ref());
            if wa.is_none() && wb.is_none() {
                continue;
            }
            let head = format!(
                "worst case 10⁻⁶ per period [{}] {}:",
                a.key.label(),
                cmp.labels[r]
            );
            if let Some(why) = not_usable(wa) {
                out.push(format!("{head} not compared: {} {why}", cmp.labels[0]));
                continue;
            }
            if let Some(why) = not_usable(wb) {
                out.push(format!("{head} not compared: {} {why}", cmp.labels[r]));
                continue;
            }
            let (Some(ea), Some(eb)) = (
                wa.and_then(|w| w.at(p, Per::Period)),
                wb.and_then(|w| w.at(p, Per::Period)),
            ) else {
                continue;
            };
            let (alo, ahi) = (ea.lower_ns.unwrap_or(0), ea.upper_ns.unwrap_or(u64::MAX));
            let (blo, bhi) = (eb.lower_ns.unwrap_or(0), eb.upper_ns.unwrap_or(u64::MAX));
            let verdict = if blo > ahi {
                "higher (the 95 % intervals do not overlap)"
            } else if bhi < alo {
                "lower (the 95 % intervals do not overlap)"
            } else {
                "no clear difference (the 95 % intervals overlap)"
            };
            out.push(format!(
                "{head} {} → {}: {verdict}",
                us(ea.value_ns),
                us(eb.value_ns)
            ));
        }
    }
    out
}
