//! Many results, one view (`latscope compare|report A B C ... --by host|kernel|date|file`):
//! each run's value on the chosen axis becomes its column label, and the runs are put in
//! the axis' order (dates oldest first, otherwise as given) so the first is the baseline.

use crate::result::Run;

/// What the columns of a many-results view stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The machine (`system.hostname`).
    Host,
    /// The kernel (`system.kernel_release` and preemption model).
    Kernel,
    /// When the run started (columns oldest first; the HTML report draws a trend chart).
    Date,
    /// The file (its name).
    File,
}

impl Axis {
    pub fn name(self) -> &'static str {
        match self {
            Axis::Host => "host",
            Axis::Kernel => "kernel",
            Axis::Date => "date",
            Axis::File => "file",
        }
    }
}

/// A run's start as seconds since the Unix epoch (None when `started_at` is not RFC 3339).
pub fn started_epoch_s(run: &Run) -> Option<f64> {
    crate::result::epoch_s(&run.started_at)
}

/// The date part (`2026-11-23`) and time (`21:15`) of a run's start as written.
fn date_and_minute(run: &Run) -> (String, String) {
    let s = &run.started_at;
    let date = s.get(..10).unwrap_or(s).to_string();
    let minute = s.get(11..16).unwrap_or("").to_string();
    (date, minute)
}

/// A run's value on `axis` (`file_label` for `file`).
pub fn axis_value(run: &Run, file_label: &str, axis: Axis) -> String {
    match axis {
        Axis::Host => run.system.hostname.clone(),
        Axis::Kernel => {
            let model = &run.system.preemption_model;
            if model.is_empty() || run.system.kernel_release.contains(model.as_str()) {
                run.system.kernel_release.clone()
            } else {
                format!("{} {model}", run.system.kernel_release)
            }
        }
        Axis::Date => date_and_minute(run).0,
        Axis::File => file_label.to_string(),
    }
}

/// The order the runs are shown in: by start for `date` (runs without a readable start
/// last, as given), else as given.
pub fn order(runs: &[Run], axis: Axis) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..runs.len()).collect();
    if axis == Axis::Date {
        idx.sort_by(|&a, &b| {
            let (ta, tb) = (started_epoch_s(&runs[a]), started_epoch_s(&runs[b]));
            match (ta, tb) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.cmp(&b),
            }
        });
    }
    idx
}

/// The column labels of runs (already in order) on `axis`: the axis value, made unique
/// where several runs share it (`board-a (a2.json)`; dates get their minute first).
pub fn column_labels(runs: &[Run], file_labels: &[String], axis: Axis) -> Vec<String> {
    let mut values: Vec<String> = runs
        .iter()
        .zip(file_labels)
        .map(|(r, f)| axis_value(r, f, axis))
        .collect();
    if axis == Axis::Date {
        let repeated = |vals: &[String], v: &String| vals.iter().filter(|x| *x == v).count() > 1;
        let snapshot = values.clone();
        for (i, run) in runs.iter().enumerate() {
            if repeated(&snapshot, &snapshot[i]) {
                let (d, m) = date_and_minute(run);
                values[i] = format!("{d} {m}");
            }
        }
    }
    let snapshot = values.clone();
    values
        .iter()
        .zip(file_labels)
        .map(|(v, f)| {
            if snapshot.iter().filter(|x| *x == v).count() > 1 && v != f {
                format!("{v} ({f})")
            } else {
                v.clone()
            }
        })
        .collect()
}

/// Runs put in the order of an axis, with their file names and column labels.
pub struct Arranged {
    pub runs: Vec<Run>,
    pub files: Vec<String>,
    pub columns: Vec<String>,
    /// None: the two-run comparison (no `--by`, at most two files).
    pub axis: Option<Axis>,
}

/// Orders `runs` on `by` (the file axis when more than two runs and no `by`) and names
/// their columns; two runs without `by` stay as they are.
pub fn arrange(runs: Vec<Run>, files: Vec<String>, by: Option<Axis>) -> Arranged {
    if by.is_none() && runs.len() <= 2 {
        return Arranged {
            runs,
            columns: files.clone(),
            files,
            axis: None,
        };
    }
    let axis = by.unwrap_or(Axis::File);
    let idx = order(&runs, axis);
    let mut slots: Vec<Option<Run>> = runs.into_iter().map(Some).collect();
    let runs: Vec<Run> = idx
        .iter()
        .map(|&i| slots[i].take().expect("each once"))
        .collect();
    let files: Vec<String> = idx.iter().map(|&i| files[i].clone()).collect();
    let columns = column_labels(&runs, &files, axis);
    Arranged {
        runs,
        files,
        columns,
        axis: Some(axis),
    }
}
