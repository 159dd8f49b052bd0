//! `latscope compare A.json B.json [...]`: lines up the scenarios of several runs by
//! probe, method, period, loads, CPU and metric (align.rs; `--ignore` leaves axes out)
//! and judges every aligned scenario × CPU of each later run against the first with rules
//! (rules.rs) and each run's bootstrap noise (noise.rs). The
//! `Comparison` it makes is rendered by compare/view/; the command's printing and
//! exit code are in commands.rs.

pub mod align;
pub mod change;
pub mod multi;
pub mod noise;
pub mod rules;
pub mod view;
pub mod worst_case;

pub use align::{align, Aligned, IgnoreAxis};
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
    /// Per aligned row, per run: its bootstrap intervals (empty where it is missing).
    pub noise: Vec<Vec<noise::Noise>>,
    /// The rules the verdicts used.
    pub rules: Vec<Rule>,
    /// The many-results view's axis (`--by`); None: the two-run comparison.
    pub axis: Option<multi::Axis>,
}

/// Aligns (without the `ignore` axes) and judges `runs` (the first is the baseline).
pub fn compare<'a>(
    labels: Vec<String>,
    runs: &'a [Run],
    rules: &[Rule],
    ignore: &[IgnoreAxis],
) -> Comparison<'a> {
    let aligned = align(runs, ignore);
    let mut stats = noise::SHOWN.to_vec();
    stats.extend(rules.iter().flat_map(|r| r.stats.iter().copied()));
    let noise: Vec<Vec<noise::Noise>> = aligned
        .iter()
        .map(|a| {
            a.entries
                .iter()
                .map(|e| {
                    e.map_or_else(noise::Noise::default, |(_, t)| {
                        noise::thread_noise(t, &stats)
                    })
                })
                .collect()
        })
        .collect();
    let verdicts = aligned
        .iter()
        .zip(&noise)
        .map(|(a, n)| {
            (1..runs.len())
                .map(|r| match (&a.entries[0], &a.entries[r]) {
                    (Some((_, base)), Some((_, new))) => {
                        Some(judge(base, new, rules, (&n[0], &n[r])))
                    }
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
        noise,
        rules: rules.to_vec(),
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
            .any(|v| v.as_ref().is_some_and(|j| j.verdict == Verdict::Regressed))
    }

    /// The regressed scenarios × CPUs, each with the run it regressed in (`--fail-on-
    /// regression` names them).
    pub fn regressed(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (a, vs) in self.aligned.iter().zip(&self.verdicts) {
            for (r, v) in vs.iter().enumerate() {
                if v.as_ref().is_some_and(|j| j.verdict == Verdict::Regressed) {
                    out.push((a.key.label(), self.labels[r + 1].clone()));
                }
            }
        }
        out
    }

    /// Whether any scenario of a later run lined up with one of the baseline.
    pub fn compared_any(&self) -> bool {
        self.verdicts.iter().flatten().any(Option::is_some)
    }

    /// The later runs (indices) with nothing lined up with the baseline.
    pub fn uncompared_runs(&self) -> Vec<usize> {
        (1..self.runs.len())
            .filter(|&r| self.verdicts.iter().all(|v| v[r - 1].is_none()))
            .collect()
    }
}

/// Why run `r` lined up with nothing of the baseline: the axes that differ, and the
/// `--ignore` that would line them up.
pub fn nothing_lined_up_text(cmp: &Comparison, r: usize) -> String {
    let (a, b) = (&cmp.labels[0], &cmp.labels[r]);
    let diffs = align::differences(&cmp.runs[0], &cmp.runs[r]);
    let mut text = format!(
        "nothing to compare: no scenario × CPU of {b} lines up with one of {a} (scenarios line \
up by probe, method, period, load, probe parameters, CPU and metric)"
    );
    if diffs.is_empty() {
        text.push_str("; check that both files hold measured scenarios");
        return text;
    }
    let said: Vec<String> = diffs
        .iter()
        .map(|d| format!("{} ({a}: {}; {b}: {})", d.axis, d.first, d.second))
        .collect();
    text.push_str(&format!(". They differ in {}", said.join(", ")));
    let fixed: Vec<String> = diffs
        .iter()
        .filter_map(|d| d.ignore)
        .map(|i| format!("--ignore {}", i.name()))
        .collect();
    if diffs.iter().any(|d| d.ignore.is_none()) {
        text.push_str(
            "; different probes or metrics measure different things and cannot be compared",
        );
    } else if !fixed.is_empty() {
        text.push_str(&format!("; add {} to line them up anyway", fixed.join(" ")));
    }
    text
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
