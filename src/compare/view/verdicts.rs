//! The one-line verdicts of a comparison (`REGRESSED: ...`, `improved: ...`, `within
//! noise: ...`, a scenario only in one run), shared by the two-run views (mod.rs) and the many-results view
//! (multi.rs), so neither imports the other.

use crate::compare::{Comparison, Verdict};

/// One line per aligned row and later run: `REGRESSED: ...`, `improved: ...`.
pub fn verdict_lines(cmp: &Comparison) -> Vec<(Option<Verdict>, String)> {
    let mut lines = Vec::new();
    for (a, vs) in cmp.aligned.iter().zip(&cmp.verdicts) {
        for (i, v) in vs.iter().enumerate() {
            let label = &cmp.labels[i + 1];
            match v {
                Some(j) => {
                    let head = crate::compare::view::basis::verdict_word(j.verdict);
                    let why = match (j.reasons.is_empty(), j.verdict) {
                        (true, _) => String::new(),
                        (false, Verdict::WithinNoise) => format!(
                            " ({}: the runs' 95 % intervals overlap)",
                            j.reasons.join(", ")
                        ),
                        (false, _) => format!(" ({})", j.reasons.join(", ")),
                    };
                    lines.push((
                        Some(j.verdict),
                        format!("{head}: {} in {label}{why}", a.key.label()),
                    ));
                }
                None => {
                    let missing = if a.entries[0].is_none() {
                        format!(
                            "{} only in {label}, not in {}",
                            a.key.label(),
                            cmp.labels[0]
                        )
                    } else {
                        format!("{} not in {label}", a.key.label())
                    };
                    if !lines
                        .iter()
                        .any(|(_, l): &(Option<Verdict>, String)| l.ends_with(&missing))
                    {
                        lines.push((None, format!("missing: {missing}")));
                    }
                }
            }
        }
    }
    lines
}
