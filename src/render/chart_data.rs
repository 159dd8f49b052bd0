//! The numbers behind each chart of the HTML page as table rows (header, rows), for the
//! closed `<details>` table under it (`figure::charts_figure`): a screen reader, a
//! colour-blind reader or a script reads them instead of the picture.

use super::histogram::HistogramLine;
use std::collections::BTreeMap;

/// Rows past this are left to the JSON result (a table under a chart, not a dump).
pub const MAX_ROWS: usize = 500;

pub type Table = (Vec<String>, Vec<Vec<String>>);

/// A category chart: a row per category, a column per series.
pub fn categories(x_desc: &str, cats: &[String], series: &[(String, Vec<Option<f64>>)]) -> Table {
    let header = std::iter::once(x_desc.to_string())
        .chain(series.iter().map(|(name, _)| name.clone()))
        .collect();
    let rows = cats
        .iter()
        .enumerate()
        .map(|(i, cat)| {
            std::iter::once(cat.clone())
                .chain(series.iter().map(|(_, values)| match values.get(i) {
                    Some(Some(v)) => format!("{v:.2}"),
                    _ => "–".to_string(),
                }))
                .collect()
        })
        .collect();
    (header, rows)
}

/// A histogram: a row per recorded latency bucket (its upper bound, µs), a count column
/// per line; the first `MAX_ROWS` buckets.
pub fn histogram(lines: &[HistogramLine]) -> Table {
    let mut by_value: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        for &[value, count] in line.buckets.iter().filter(|b| b[1] > 0) {
            by_value
                .entry(value)
                .or_insert_with(|| vec![0; lines.len()])[i] += count;
        }
    }
    let header = std::iter::once("latency (µs)".to_string())
        .chain(lines.iter().map(|l| format!("{} samples", l.label)))
        .collect();
    let rows = by_value
        .into_iter()
        .take(MAX_ROWS)
        .map(|(value, counts)| {
            std::iter::once(format!("{:.2}", value as f64 / 1e3))
                .chain(counts.iter().map(u64::to_string))
                .collect()
        })
        .collect();
    (header, rows)
}

/// Per-second maxima: a row per second (the first `MAX_ROWS`), a column per line (µs).
pub fn per_second(series: &[(String, &[u64])]) -> Table {
    let header = std::iter::once("second".to_string())
        .chain(series.iter().map(|(label, _)| format!("{label} max (µs)")))
        .collect();
    let seconds = series.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    let rows = (0..seconds.min(MAX_ROWS))
        .map(|second| {
            std::iter::once((second + 1).to_string())
                .chain(series.iter().map(|(_, s)| match s.get(second) {
                    Some(&ns) => format!("{:.2}", ns as f64 / 1e3),
                    None => "–".to_string(),
                }))
                .collect()
        })
        .collect();
    (header, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_rows_merge_lines_by_bucket() {
        let a = [[1_000, 3], [2_000, 0], [5_000, 1]];
        let b = [[1_000, 2], [3_000, 4]];
        let lines = [
            HistogramLine {
                label: "CPU 0".into(),
                buckets: &a,
                max_ns: 5_000,
            },
            HistogramLine {
                label: "CPU 1".into(),
                buckets: &b,
                max_ns: 3_000,
            },
        ];
        let (header, rows) = histogram(&lines);
        assert_eq!(header, ["latency (µs)", "CPU 0 samples", "CPU 1 samples"]);
        assert_eq!(rows[0], ["1.00", "3", "2"]);
        assert_eq!(rows[1], ["3.00", "0", "4"]);
        assert_eq!(rows[2], ["5.00", "1", "0"]);
        let (_, rows) = categories("load", &["none".into()], &[("max".into(), vec![None])]);
        assert_eq!(rows[0], ["none", "–"]);
    }
}
