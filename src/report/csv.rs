//! `--export-csv`: one row per scenario × thread with every statistic in ns and the
//! scenario's parameters, for spreadsheets and pandas.

use super::Reporter;
use crate::result::Run;
use crate::stats::Stat;

pub struct CsvReporter;

impl Reporter<Run> for CsvReporter {
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
        header.extend(Stat::ALL.map(Stat::field));
        header.extend(["elapsed_ns", "interrupted"]);
        w.write_record(&header)?;
        for sc in &run.scenarios {
            let p = &sc.params;
            for th in &sc.threads {
                let mut row: Vec<String> = vec![
                    sc.name.clone(),
                    sc.probe.name().to_string(),
                    th.method.clone(),
                    p.period_ns.to_string(),
                    p.deadline_ns.to_string(),
                    p.policy.clone(),
                    p.priority.to_string(),
                    p.loads.join("+"),
                    crate::units::format_cpu_list(&p.isolate),
                    th.cpu.to_string(),
                    th.metric.to_string(),
                ];
                // Every statistic in Summary order, as the JSON has it.
                for stat in Stat::ALL {
                    row.push(if super::stat_unknown(th, stat) {
                        String::new()
                    } else if stat == Stat::Samples {
                        th.summary.samples.to_string()
                    } else if matches!(stat, Stat::Avg | Stat::Stddev) {
                        format!("{:.1}", th.summary.stat(stat))
                    } else {
                        format!("{}", th.summary.stat(stat) as u64)
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
