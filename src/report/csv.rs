//! `--export-csv`: one row per scenario × thread with every statistic in ns and the
//! scenario's parameters, for spreadsheets and pandas.

use super::Reporter;
use crate::result::Run;

pub struct CsvReporter;

/// The statistic columns, in `Summary` order, with the names `Summary::stat` knows.
const STATS: [(&str, &str); 13] = [
    ("samples", "samples"),
    ("min_ns", "min"),
    ("mean_ns", "avg"),
    ("stddev_ns", "stddev"),
    ("p50_ns", "p50"),
    ("p90_ns", "p90"),
    ("p99_ns", "p99"),
    ("p999_ns", "p99.9"),
    ("p9999_ns", "p99.99"),
    ("p99999_ns", "p99.999"),
    ("max_ns", "max"),
    ("overruns", "overruns"),
    ("missed", "missed"),
];

impl Reporter for CsvReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let mut header: Vec<&str> = vec![
            "scenario",
            "probe",
            "method",
            "period_ns",
            "deadline_ns",
            "policy",
            "priority",
            "loads",
            "isolate",
            "cpu",
            "metric",
        ];
        header.extend(STATS.iter().map(|(col, _)| *col));
        header.extend(["elapsed_ns", "interrupted"]);
        w.write_record(&header)?;
        for sc in &run.scenarios {
            let p = &sc.params;
            for th in &sc.threads {
                let mut row: Vec<String> = vec![
                    sc.name.clone(),
                    sc.probe.clone(),
                    th.method.clone(),
                    p.period_ns.to_string(),
                    p.deadline_ns.to_string(),
                    p.policy.clone(),
                    p.priority.to_string(),
                    p.loads.join("+"),
                    crate::units::format_cpu_list(&p.isolate),
                    th.cpu.to_string(),
                    th.metric.clone(),
                ];
                for (col, stat) in STATS {
                    row.push(if super::stat_unknown(th, stat) {
                        String::new()
                    } else if col == "samples" {
                        th.summary.samples.to_string()
                    } else if col == "mean_ns" || col == "stddev_ns" {
                        format!("{:.1}", th.summary.stat(stat).unwrap_or(0.0))
                    } else {
                        format!("{}", th.summary.stat(stat).unwrap_or(0.0) as u64)
                    });
                }
                row.push(sc.elapsed_ns.to_string());
                row.push(sc.interrupted.to_string());
                w.write_record(&row)?;
            }
        }
        Ok(w.into_inner()?)
    }
}
