//! `latscope compare A.json B.json [...]`: lines up the scenarios of several runs by
//! probe, method, period, loads, CPU and metric (align.rs) and judges every aligned
//! scenario × CPU of each later run against the first with rules (rules.rs). The
//! `Comparison` it makes is rendered by compare/view/; the command's printing and
//! exit code are in commands.rs.

pub mod align;
pub mod change;
pub mod multi;
pub mod rules;
pub mod view;
pub mod worst_case;

pub use align::{align, Aligned};
pub use rules::{judge, parse_rule, Judgement, Rule, Verdict, DEFAULT_RULE};

use crate::result::Run;

/// A judged comparison of several runs.
pub struct Comparison<'a> {
    /// The runs compared, the baseline first.
    pub runs: &'a [Run],
    /// A short label per run (its file name; with `--by`, its value on the axis).
    pub labels: Vec<String>,
    /// Each run's file name (the labels before `--by` replaced them).
    pub files: Vec<String>,
    pub aligned: Vec<Aligned<'a>>,
    /// Per aligned row, per later run: its verdict and reasons (None: missing in one).
    pub verdicts: Vec<Vec<Option<Judgement>>>,
    /// The many-results view's axis (`--by`); None: the two-run comparison.
    pub axis: Option<multi::Axis>,
}

/// Aligns and judges `runs` (the first is the baseline).
pub fn compare<'a>(labels: Vec<String>, runs: &'a [Run], rules: &[Rule]) -> Comparison<'a> {
    let aligned = align(runs);
    let verdicts = aligned
        .iter()
        .map(|a| {
            (1..runs.len())
                .map(|r| match (&a.entries[0], &a.entries[r]) {
                    (Some((_, base)), Some((_, new))) => Some(judge(base, new, rules)),
                    _ => None,
                })
                .collect()
        })
        .collect();
    Comparison {
        runs,
        files: labels.clone(),
        labels,
        aligned,
        verdicts,
        axis: None,
    }
}

impl Comparison<'_> {
    /// Whether this is the many-results view: `--by` given, or more than two runs.
    pub fn is_multi(&self) -> bool {
        self.axis.is_some() || self.runs.len() > 2
    }

    pub fn any_regressed(&self) -> bool {
        self.verdicts
            .iter()
            .flatten()
            .any(|v| matches!(v, Some((Verdict::Regressed, _))))
    }
}

/// Short labels for the runs: file names, or full paths where names repeat.
pub fn run_labels(paths: &[std::path::PathBuf]) -> Vec<String> {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect();
    names
        .iter()
        .zip(paths)
        .map(|(n, p)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                p.display().to_string()
            } else {
                n.clone()
            }
        })
        .collect()
}
