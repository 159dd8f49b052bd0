//! The worst-case estimate in words for the terminal: per thread the method and input,
//! the fit, every check with its result, then the estimates with their 95 % intervals —
//! or the refusal, or the words for a heavy tail — next to the observed maximum.

use crate::result::Run;
use crate::stats::worst_case::{Per, WorstCase, PROBABILITIES, UNBOUNDED_WORDS};
use std::fmt::Write;

fn value(ns: u64, in_ns: bool) -> String {
    if in_ns {
        format!("{ns} ns")
    } else {
        crate::units::human_ns(ns)
    }
}

fn cell(wc: &WorstCase, p: f64, per: Per, in_ns: bool) -> String {
    match wc.at(p, per) {
        None => "–".into(),
        Some(e) => {
            let end = |v: Option<u64>, open: &str| v.map_or(open.into(), |v| value(v, in_ns));
            format!(
                "{} [{}, {}]",
                value(e.value_ns, in_ns),
                end(e.lower_ns, "?"),
                end(e.upper_ns, "∞")
            )
        }
    }
}

/// One thread's estimate as text (`title` names the scenario and thread).
pub fn render_one(
    title: &str,
    wc: &WorstCase,
    period_ns: Option<u64>,
    in_ns: bool,
    width: usize,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Worst case beyond the samples: {title}");
    let _ = writeln!(
        out,
        "  {} from {} ({} samples, observed max {})",
        wc.method.label(),
        wc.input,
        wc.samples,
        value(wc.observed_max_ns, in_ns)
    );
    if let Some(f) = &wc.fit {
        let choice = match (f.exceedances, f.blocks) {
            (Some(k), _) => format!("{k} exceedances"),
            (_, Some(b)) => format!("{b} blocks of {} samples", f.block_size.unwrap_or(0)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  fit: {}: {choice}; shape ξ = {:.3}, scale {}",
            f.rule,
            f.shape,
            value(f.scale_ns.round() as u64, in_ns)
        );
    }
    for c in &wc.checks {
        let mark = if c.passed { "pass" } else { "FAIL" };
        let _ = writeln!(out, "  {mark}  {}: {}", c.name, c.detail);
    }
    if let Some(reason) = &wc.refused {
        let _ = writeln!(out, "  refused, no estimate: {reason}");
    } else if wc.unbounded {
        let _ = writeln!(out, "  {UNBOUNDED_WORDS}");
    } else {
        render_estimates(&mut out, wc, period_ns, in_ns, width);
    }
    out
}

fn render_estimates(
    out: &mut String,
    wc: &WorstCase,
    period_ns: Option<u64>,
    in_ns: bool,
    width: usize,
) {
    let hour = period_ns.filter(|_| wc.estimates.iter().any(|e| e.per == Per::Hour));
    let mut header = vec![
        "exceeded with probability".to_string(),
        "per period [95 %]".into(),
    ];
    if let Some(p) = hour {
        header.push(format!("per hour at {} [95 %]", crate::units::human_ns(p)));
    }
    let rows = PROBABILITIES
        .iter()
        .map(|&p| {
            let mut row = vec![
                crate::units::power_of_ten(p),
                cell(wc, p, Per::Period, in_ns),
            ];
            if hour.is_some() {
                row.push(cell(wc, p, Per::Hour, in_ns));
            }
            row
        })
        .collect();
    let table =
        crate::render::table::fit_table(crate::render::table::Fit::new(header, rows, 1), width);
    out.push_str(&table);
    let _ = writeln!(
        out,
        "  (observed max {}; an estimate holds only for the conditions measured, it is not a proof)",
        value(wc.observed_max_ns, in_ns)
    );
}

/// Every thread's estimate of a run, after its table.
pub fn render_run(run: &Run, in_ns: bool, width: usize) -> String {
    let mut out = String::new();
    for sc in &run.scenarios {
        for th in &sc.threads {
            let Some(wc) = &th.worst_case else { continue };
            let label = crate::result::metric_label(&format!("CPU {}", th.cpu), th.metric);
            let title = format!("{} {label}", sc.name);
            let period = (sc.params.period_ns > 0).then_some(sc.params.period_ns);
            out.push('\n');
            out.push_str(&render_one(&title, wc, period, in_ns, width));
        }
    }
    out
}
