//! `--export-junit`: JUnit XML for Jenkins, GitLab and other CI dashboards. One test
//! suite per scenario, one test case per thread (scenario × CPU) with every statistic
//! as a property; a case fails when a `--fail-above` limit fails.

use super::Reporter;
use crate::result::limits::{thread_failures, Limit};
use crate::result::{metric_label, Run};
use crate::stats::Stat;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

pub struct JunitReporter {
    pub limits: Vec<Limit>,
}

impl Reporter<Run> for JunitReporter {
    fn render(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut report = Report::new("latscope");
        let mut total = Duration::ZERO;
        for sc in &run.scenarios {
            let mut suite = TestSuite::new(sc.name.as_str());
            let elapsed = Duration::from_nanos(sc.elapsed_ns);
            total += elapsed;
            suite.set_time(elapsed);
            suite.add_property(Property::new("probe", sc.probe.name()));
            suite.add_property(Property::new("period_ns", sc.params.period_ns.to_string()));
            suite.add_property(Property::new(
                "deadline_ns",
                sc.params.deadline_ns.to_string(),
            ));
            suite.add_property(Property::new(
                "policy",
                format!("{} {}", sc.params.policy, sc.params.priority),
            ));
            if sc.partial {
                // A checkpoint of a run that was killed: the statistics cover that part.
                let note = format!("checkpoint after {}", crate::units::human_ns(sc.elapsed_ns));
                suite.add_property(Property::new("partial", note));
            }
            if !sc.params.loads.is_empty() {
                suite.add_property(Property::new("loads", sc.params.loads.join("+")));
            }
            for th in &sc.threads {
                let failures = thread_failures(sc, th, &self.limits);
                let status = if failures.is_empty() {
                    TestCaseStatus::success()
                } else {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let lines: Vec<String> = failures.iter().map(|f| f.to_string()).collect();
                    s.set_message(lines.join("; "));
                    s.set_type("latency limit");
                    s.set_description(lines.join("\n"));
                    s
                };
                let name = metric_label(&format!("cpu{}", th.cpu), th.metric);
                let mut case = TestCase::new(name, status);
                case.set_classname(format!("latscope.{}", sc.name));
                case.set_time(elapsed);
                // The judged statistics (ns, or counts), then the sample count.
                for stat in Stat::JUDGED.iter().copied().chain([Stat::Samples]) {
                    if super::stat_unknown(th, stat) {
                        continue;
                    }
                    let v = th.summary.stat(stat);
                    let (key, value) = if stat.is_count() {
                        (stat.name().to_string(), format!("{v:.0}"))
                    } else {
                        (format!("{stat}_ns"), format!("{:.0}", v.round()))
                    };
                    case.add_property(Property::new(key, value));
                }
                suite.add_test_case(case);
            }
            report.add_test_suite(suite);
        }
        report.set_time(total);
        let mut bytes = Vec::new();
        report.serialize(&mut bytes)?;
        Ok(bytes)
    }
}
