//! The `--raw` CSV: every sample in order, one row per iteration, for per-iteration
//! listings and for plotting elsewhere.

use crate::probe::RawSeries;
use std::fmt::Write;

/// CSV with a header; the value columns are those of the first series.
pub fn render_raw(series: &[(String, RawSeries)]) -> Vec<u8> {
    let mut out = String::new();
    let columns = series
        .first()
        .map(|(_, s)| s.columns.join(","))
        .unwrap_or_else(|| "value_ns".into());
    let _ = writeln!(out, "scenario,cpu,method,metric,iteration,{columns}");
    for (scenario, s) in series {
        for (i, row) in s.rows.iter().enumerate() {
            let _ = write!(out, "{scenario},{},{},{},{i}", s.cpu, s.method, s.metric);
            for v in row {
                let _ = write!(out, ",{v}");
            }
            out.push('\n');
        }
    }
    out.into_bytes()
}
