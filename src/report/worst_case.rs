//! The worst-case estimate in words for the terminal: per thread the method and input,
//! quantised data and clusters, the fit, every check with its result, then the estimates
//! with their 95 % intervals (how many periods an hour is, the far extrapolations marked)
//! — or the refusal, or the words for a heavy tail — next to the observed maximum, and
//! the estimate against the number of samples.

use crate::result::Run;
use crate::stats::worst_case::{Convergence, UNBOUNDED_WORDS};
use crate::stats::worst_case::{Per, WorstCase, EXTRAPOLATION_WARN, PROBABILITIES};
use std::fmt::Write;

fn value(ns: u64, in_ns: bool) -> String {
    if in_ns {
        format!("{ns} ns")
    } else {
        crate::units::human_ns(ns)
    }
}

/// The mark of an estimate reaching beyond `EXTRAPOLATION_WARN` times the data.
const FAR: &str = "‡";

fn cell(wc: &WorstCase, p: f64, per: Per, in_ns: bool) -> String {
    match wc.at(p, per) {
        None => "–".into(),
        Some(e) => {
            let end = |v: Option<u64>, open: &str| v.map_or(open.into(), |v| value(v, in_ns));
            let far = if e.extrapolation > EXTRAPOLATION_WARN {
                FAR
            } else {
                ""
            };
            format!(
                "{} [{}, {}]{far}",
                value(e.value_ns, in_ns),
                end(e.lower_ns, "?"),
                end(e.upper_ns, "∞")
            )
        }
    }
}

/// The fit in one line: the rule, what was fitted (exceedances, clusters or blocks), the
/// parameters and whether the shape was fixed.
fn fit_line(wc: &WorstCase, in_ns: bool) -> Option<String> {
    let f = wc.fit.as_ref()?;
    let choice = match (f.exceedances, f.blocks, &wc.clusters) {
        (Some(k), _, Some(c)) => format!(
            "{} exceedances in {k} clusters (extremal index θ = {:.2}): the cluster maxima fitted",
            c.exceedances, c.extremal_index
        ),
        (Some(k), _, None) => format!("{k} exceedances"),
        (_, Some(b), _) => format!("{b} blocks of {} samples", f.block_size.unwrap_or(0)),
        _ => String::new(),
    };
    let shape = if f.widened {
        format!(
            "shape ξ = {:.3} (bounded, not shown lighter than exponential: the intervals also hold the exponential tail's)",
            f.shape
        )
    } else {
        format!("shape ξ = {:.3}", f.shape)
    };
    let scale = value(f.scale_ns.round() as u64, in_ns);
    Some(format!(
        "  fit: {}: {choice}; {shape}, scale {scale}",
        f.rule
    ))
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
    if let Some(q) = wc.quantum_ns {
        let _ = writeln!(
            out,
            "  quantised: the values sit on a {} grid with ties; each was spread uniformly within its step (fixed seed) before fitting",
            value(q, in_ns)
        );
    }
    if let Some(line) = fit_line(wc, in_ns) {
        let _ = writeln!(out, "{line}");
    }
    for c in &wc.checks {
        let mark = if c.passed { "pass" } else { "FAIL" };
        let _ = writeln!(out, "  {mark}  {}: {}", c.name, c.detail);
    }
    if let Some(reason) = &wc.refused {
        let _ = writeln!(out, "  refused, no estimate: {reason}");
        if wc.unbounded {
            let _ = writeln!(out, "  and the tail is heavy besides: {UNBOUNDED_WORDS}");
        }
    } else if wc.unbounded {
        let _ = writeln!(out, "  {UNBOUNDED_WORDS}");
    } else {
        render_estimates(&mut out, wc, period_ns, in_ns, width);
    }
    if let Some(line) = convergence_line(&wc.convergence, in_ns) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The 10⁻⁶ estimate from growing parts of the run, in one line.
fn convergence_line(points: &[Convergence], in_ns: bool) -> Option<String> {
    if points.len() < 2 {
        return None;
    }
    let parts: Vec<String> = points
        .iter()
        .map(|c| match c.value_ns {
            Some(v) => value(v, in_ns),
            None => c.status.clone(),
        })
        .collect();
    Some(format!(
        "  10⁻⁶ per period from the first {} samples on, in {} steps to all {} (has it settled?): {}",
        points[0].samples,
        points.len(),
        points[points.len() - 1].samples,
        parts.join(" · ")
    ))
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
        header.push(format!(
            "per hour at {} ({} periods) [95 %]",
            crate::units::human_ns(p),
            crate::units::scientific(3.6e12 / p as f64)
        ));
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
    if let Some(c) = &wc.clusters {
        let _ = writeln!(
            out,
            "  (the late samples come in clusters: a period starts an episode above an estimate with its probability; a single sample exceeds it with probability p/θ = p/{:.2})",
            c.extremal_index
        );
    }
    if wc
        .estimates
        .iter()
        .any(|e| e.extrapolation > EXTRAPOLATION_WARN)
    {
        let _ = writeln!(
            out,
            "  ({FAR} beyond 10⁶ times the data: exceeded once in more periods than 10⁶ times the {} samples measured; no run checks that far)",
            wc.samples
        );
    }
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
