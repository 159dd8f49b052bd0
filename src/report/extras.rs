//! Lines under the terminal table for numbers a probe keeps in `extra` (noise per
//! second, lost packets): the table's columns are shared, these are per probe.

use crate::result::{Run, ThreadResult};
use crate::units::human_ns;

fn u(t: &ThreadResult, key: &str) -> u64 {
    t.extra.get(key).and_then(|v| v.as_u64()).unwrap_or(0)
}

fn f(t: &ThreadResult, key: &str) -> f64 {
    t.extra.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0)
}

/// One line per noise thread and per net scenario; empty for other probes.
pub fn extra_lines(run: &Run) -> String {
    let mut out = String::new();
    for sc in &run.scenarios {
        for t in &sc.threads {
            match t.metric.as_str() {
                "gap" => out.push_str(&format!(
                    "noise cpu {}: {}/s lost ({:.4} % of the time), {:.1} gaps/s, largest gap {}, loop cost {} ns, threshold {}\n",
                    t.cpu,
                    human_ns(f(t, "noise_ns_per_second").round() as u64),
                    f(t, "noise_percent"),
                    f(t, "gaps_per_second"),
                    human_ns(t.summary.max_ns),
                    u(t, "loop_cost_ns"),
                    human_ns(u(t, "threshold_ns")),
                )),
                "round_trip" => out.push_str(&format!(
                    "net {}: sent {}, received {}, lost {}, reordered {}, duplicated {}, malformed {}\n",
                    t.method,
                    u(t, "sent"),
                    u(t, "received"),
                    u(t, "lost"),
                    u(t, "reordered"),
                    u(t, "duplicated"),
                    u(t, "malformed"),
                )),
                _ => {}
            }
        }
    }
    out
}
