//! Comparing worst-case estimates of aligned threads: only when both runs passed every
//! check and have a bounded tail; then the 10⁻⁶-per-period estimates' 95 % intervals say
//! whether the later run is higher, lower or not clearly different. The estimates side by
//! side (`table`) for the Markdown and HTML views, the verdicts (`lines`) for every view.

use super::{Aligned, Comparison};
use crate::stats::worst_case::{Per, WorstCase, PROBABILITIES};
use crate::units::power_of_ten as power;

fn us(ns: u64) -> String {
    format!("{:.2} µs", ns as f64 / 1000.0)
}

/// Why an estimate cannot be compared, or None when it can.
fn not_usable(wc: Option<&WorstCase>) -> Option<String> {
    match wc {
        None => Some("no estimate (run with --worst-case)".into()),
        Some(w) => match &w.refused {
            Some(reason) => Some(format!(
                "refused by its checks ({})",
                reason.trim_end_matches(" (see the checks)")
            )),
            None if w.unbounded => Some("heavy tail, no finite worst case".into()),
            None if !w.usable() => Some("no estimate".into()),
            None => None,
        },
    }
}

fn worst_case_of<'a>(a: &Aligned<'a>, r: usize) -> Option<&'a WorstCase> {
    a.entries[r].and_then(|(_, t)| t.worst_case.as_ref())
}

/// Whether any run of `a` carries an estimate (refused ones included).
fn has_any(a: &Aligned) -> bool {
    (0..a.entries.len()).any(|r| worst_case_of(a, r).is_some())
}

/// The estimate of `wc` at `p` per period with its 95 % interval, or why there is none.
fn estimate_cell(wc: Option<&WorstCase>, p: f64, in_ns: bool) -> String {
    let v = |ns: u64| crate::units::latency_cell(ns, in_ns);
    if let Some(why) = not_usable(wc) {
        return why;
    }
    match wc.and_then(|w| w.at(p, Per::Period)) {
        None => "–".into(),
        Some(e) => format!(
            "{} [{}, {}]",
            v(e.value_ns),
            e.lower_ns.map_or("?".into(), v),
            e.upper_ns.map_or("∞".into(), v)
        ),
    }
}

/// The estimates side by side: a row per aligned scenario × CPU and probability (per
/// period) where any run has an estimate, a column per run with the value and its 95 %
/// interval or why there is none. None when no run has an estimate.
pub fn table(cmp: &Comparison, in_ns: bool) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let unit = if in_ns { "ns" } else { "µs" };
    let mut header = vec![
        "scenario".to_string(),
        format!("exceeded per period with probability ({unit}, [95 %])"),
    ];
    header.extend(cmp.labels.iter().cloned());
    let mut rows = Vec::new();
    for a in cmp.aligned.iter().filter(|a| has_any(a)) {
        for p in PROBABILITIES {
            let mut row = vec![a.key.label(), power(p)];
            row.extend((0..a.entries.len()).map(|r| estimate_cell(worst_case_of(a, r), p, in_ns)));
            rows.push(row);
        }
    }
    (!rows.is_empty()).then_some((header, rows))
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
