//! The one-line verdicts of a comparison (`REGRESSED: ...`, `improved: ...`,
//! `undecidable: ...`, `within noise: ...`), the worst first, and one line counting the
//! scenarios only some runs have (never compared, never printed); shared by the two-run
//! views (mod.rs) and the many-results view (multi.rs), so neither imports the other.

use crate::compare::{Comparison, Verdict};

/// The order verdicts are told in: what needs attention first.
pub fn rank(v: Option<Verdict>) -> u8 {
    match v {
        Some(Verdict::Regressed) => 0,
        Some(Verdict::Improved) => 1,
        Some(Verdict::Undecidable) => 2,
        Some(Verdict::WithinNoise) => 3,
        Some(Verdict::Unchanged) => 4,
        None => 5,
    }
}

/// Whether aligned row `row` is in the baseline and at least one later run: the rows a
/// view prints (the others are only counted).
pub fn lined_up(cmp: &Comparison, row: usize) -> bool {
    cmp.verdicts[row].iter().any(Option::is_some)
}

/// The aligned rows a view prints, the worst verdict first (then in the runs' order).
pub fn printed_rows(cmp: &Comparison) -> Vec<usize> {
    let worst = |row: usize| {
        cmp.verdicts[row]
            .iter()
            .map(|j| rank(j.as_ref().map(|j| j.verdict)))
            .min()
            .unwrap_or(5)
    };
    let mut rows: Vec<usize> = (0..cmp.aligned.len())
        .filter(|&r| lined_up(cmp, r))
        .collect();
    rows.sort_by_key(|&r| worst(r));
    rows
}

/// One line per lined-up row and later run, the worst first: `REGRESSED: ...`,
/// `improved: ...`, `undecidable: ...` (both values and why the intervals cannot tell),
/// `within noise: ...`; then the count of rows nothing lines up with, if any.
pub fn verdict_lines(cmp: &Comparison) -> Vec<(Option<Verdict>, String)> {
    let mut lines = Vec::new();
    for row in printed_rows(cmp) {
        let a = &cmp.aligned[row];
        for (i, v) in cmp.verdicts[row].iter().enumerate() {
            let Some(j) = v else { continue };
            let label = &cmp.labels[i + 1];
            let head = crate::compare::view::basis::verdict_word(j.verdict);
            let why = match (j.reasons.is_empty(), j.verdict) {
                (true, _) => String::new(),
                (false, Verdict::WithinNoise) => format!(
                    " ({}: the runs' 95 % intervals overlap)",
                    j.reasons.join(", ")
                ),
                (false, Verdict::Undecidable) => format!(
                    " ({}: too wide to tell a change from the noise; measure longer, or judge p99)",
                    j.reasons.join(", ")
                ),
                (false, _) => format!(" ({})", j.reasons.join(", ")),
            };
            lines.push((
                Some(j.verdict),
                format!("{head}: {} in {label}{why}", a.key.label()),
            ));
        }
    }
    lines.sort_by_key(|(v, _)| rank(*v));
    lines.extend(not_lined_up_line(cmp).map(|l| (None, l)));
    lines
}

/// `26 scenarios × CPUs of suite.json line up with nothing in idle.json: not compared,
/// not shown`, or None when every row lined up.
pub fn not_lined_up_line(cmp: &Comparison) -> Option<String> {
    let rest: Vec<usize> = (0..cmp.aligned.len())
        .filter(|&r| !lined_up(cmp, r))
        .collect();
    if rest.is_empty() {
        return None;
    }
    let mut per_run = vec![0usize; cmp.labels.len()];
    for &r in &rest {
        for (run, e) in cmp.aligned[r].entries.iter().enumerate() {
            if e.is_some() {
                per_run[run] += 1;
            }
        }
    }
    let whose: Vec<String> = per_run
        .iter()
        .zip(&cmp.labels)
        .filter(|(n, _)| **n > 0)
        .map(|(n, l)| format!("{n} in {l}"))
        .collect();
    let n = rest.len();
    let noun = if n == 1 {
        "scenario × CPU lines"
    } else {
        "scenarios × CPUs line"
    };
    Some(format!(
        "not compared: {n} {noun} up with nothing in the other {} ({}); not shown",
        if cmp.labels.len() > 2 {
            "files"
        } else {
            "file"
        },
        whose.join(", ")
    ))
}
