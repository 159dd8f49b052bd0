//! The `--raw` CSV: every sample in order, one row per iteration with its CLOCK_MONOTONIC
//! timestamp, for per-iteration listings, for matching samples with logs, traces and
//! injectors, and for plotting elsewhere.

use crate::result::RawSeries;

/// CSV with a header (fields quoted where needed) into a Vec (tests, small series).
pub fn render_raw(series: &[(String, RawSeries)]) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_raw(series, &mut out);
    out
}

/// Streams the CSV row by row into `out` (buffered by the csv writer), so saving holds
/// no text of the whole series: memory stays the samples' own buffer (issue 12, item 9).
/// The value columns are those of the first series (every series of one probe has the
/// same columns).
pub fn write_raw(series: &[(String, RawSeries)], out: impl std::io::Write) -> std::io::Result<()> {
    write_csv(series, out, true)
}

/// The rows alone, no header: a later scenario's rows appended to the file (the runner
/// writes each scenario's series once, when it ends).
pub fn write_raw_rows(
    series: &[(String, RawSeries)],
    out: impl std::io::Write,
) -> std::io::Result<()> {
    write_csv(series, out, false)
}

fn write_csv(
    series: &[(String, RawSeries)],
    out: impl std::io::Write,
    header: bool,
) -> std::io::Result<()> {
    let mut out = csv::Writer::from_writer(out);
    if header {
        let columns: Vec<&str> = series
            .first()
            .map(|(_, s)| s.columns.iter().map(String::as_str).collect())
            .unwrap_or_else(|| vec!["value_ns"]);
        let mut names = vec!["scenario", "cpu", "method", "metric", "iteration"];
        names.extend(columns);
        out.write_record(&names)?;
    }
    let mut record = csv::StringRecord::new();
    let mut number = itoa::Buffer::new();
    for (scenario, s) in series {
        let cpu = s.cpu.to_string();
        for (i, row) in s.rows().enumerate() {
            record.clear();
            record.push_field(scenario);
            record.push_field(&cpu);
            record.push_field(&s.method);
            record.push_field(s.metric.name());
            record.push_field(number.format(i));
            for &v in row {
                if v == RawSeries::EMPTY {
                    record.push_field("");
                } else {
                    record.push_field(number.format(v));
                }
            }
            out.write_record(&record)?;
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_carry_their_stamps_and_names_with_commas_are_quoted() {
        let s = RawSeries {
            cpu: 1,
            method: "clock-nanosleep".into(),
            metric: crate::result::Metric::Latency,
            columns: vec!["deadline_ns".into(), "latency_ns".into()],
            values: vec![1_000, 5, 2_000, 7],
        };
        let text =
            String::from_utf8(render_raw(&[("timer load=cpu:50%,cpus=0".into(), s)])).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("scenario,cpu,method,metric,iteration,deadline_ns,latency_ns")
        );
        assert_eq!(
            lines.next(),
            Some("\"timer load=cpu:50%,cpus=0\",1,clock-nanosleep,latency,0,1000,5")
        );
        assert_eq!(
            lines.next(),
            Some("\"timer load=cpu:50%,cpus=0\",1,clock-nanosleep,latency,1,2000,7")
        );
    }
}
