//! Lines under the terminal table for numbers a probe keeps in `extra` (noise per
//! second, lost packets): the table's columns are shared, these are per probe.

use crate::result::{Metric, Run};
use crate::units::human_ns;

/// One line per noise thread and per net scenario; empty for other probes.
pub fn extra_lines(run: &Run) -> String {
    let mut out = String::new();
    for sc in &run.scenarios {
        for t in &sc.threads {
            match t.metric {
                Metric::Gap => out.push_str(&format!(
                    "noise cpu {}: {}/s lost ({:.4} % of the time), {:.1} gaps/s, largest gap {}, loop cost {} ns, threshold {}\n",
                    t.cpu,
                    human_ns(t.extra.noise_ns_per_second.unwrap_or(0.0).round() as u64),
                    t.extra.noise_percent.unwrap_or(0.0),
                    t.extra.gaps_per_second.unwrap_or(0.0),
                    human_ns(t.summary.max_ns),
                    t.extra.loop_cost_ns.unwrap_or(0),
                    human_ns(t.extra.threshold_ns.unwrap_or(0)),
                )),
                Metric::RoundTrip => out.push_str(&format!(
                    "net {}: sent {}, received {}, lost {}, reordered {}, duplicated {}, malformed {}\n",
                    t.method,
                    t.extra.sent.unwrap_or(0),
                    t.extra.received.unwrap_or(0),
                    t.extra.lost.unwrap_or(0),
                    t.extra.reordered.unwrap_or(0),
                    t.extra.duplicated.unwrap_or(0),
                    t.extra.malformed.unwrap_or(0),
                )),
                _ => {}
            }
        }
    }
    out
}
