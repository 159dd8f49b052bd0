//! The terminal's `--trace` section under the latency table: the split parts per thread
//! (min avg p50 p99 p99.9 max), one line per spike (at most `MAX_SPIKE_LINES`), and the
//! cause summary.

use crate::result::extras::Bound;
use crate::result::{Run, ThreadResult};
use crate::stats::Stat;
use crate::units::{human_ns, latency_cell};

/// Spike lines shown in the terminal; the rest are in the JSON.
pub const MAX_SPIKE_LINES: usize = 20;

/// The statistics of each split part (terminal and HTML).
pub const PART_STATS: [Stat; 6] = [
    Stat::Min,
    Stat::Avg,
    Stat::P50,
    Stat::P99,
    Stat::P999,
    Stat::Max,
];

/// A part's name in the tables, `≥` / `≤` after it when some of its samples are a lower /
/// upper bound (an untraced switch-in; the note under the table says how many).
pub fn part_label(p: &ThreadResult) -> String {
    match p.extra.bound {
        Some(Bound::Lower) => format!("{} ≥", p.metric),
        Some(Bound::Upper) => format!("{} ≤", p.metric),
        None => p.metric.to_string(),
    }
}

/// A part's statistic as a table cell: `–` when the part was not measured for any sample
/// (never a 0 that was not measured).
/// Why samples were not joined, as a reader wants it: the wake and GPIO splits store
/// their reasons by name (`NoWakeup`, the JSON's keys); the timer's are words already.
pub fn not_joined_words(why: &str) -> &str {
    match why {
        "OutsideWindow" => "outside the trace window",
        "LostEvents" => "events lost there",
        "NoIrq" => "no hard IRQ handler around the event's stamp",
        "NoWakeup" => "read without sleeping (the event came first)",
        "NotAsleep" => "woken before it slept (no switch-in to split)",
        "NoSwitchIn" => "no switch-in traced",
        other => other,
    }
}

pub fn part_cell(p: &ThreadResult, stat: Stat, in_ns: bool) -> String {
    if p.summary.samples == 0 {
        "–".into()
    } else {
        latency_cell(p.summary.stat(stat).round() as u64, in_ns)
    }
}

/// The spikes (worst first, at most `MAX_SPIKE_LINES`) and the causes over all of them.
fn spike_lines(out: &mut String, t: &crate::result::trace::TraceResult) {
    if t.spikes.is_empty() {
        out.push_str("  no spike above the threshold\n");
    } else {
        out.push_str(&format!("  spikes ({}, worst first):\n", t.spikes.len()));
        for s in t.spikes.iter().take(MAX_SPIKE_LINES) {
            out.push_str(&format!("    CPU {}: {}\n", s.cpu, s.line));
        }
        if t.spikes.len() > MAX_SPIKE_LINES {
            out.push_str(&format!(
                "    … {} more in the JSON\n",
                t.spikes.len() - MAX_SPIKE_LINES
            ));
        }
    }
    if !t.cause_summary.is_empty() {
        out.push_str("  causes over all spikes:\n");
        let shown = &t.cause_summary[..t.cause_summary.len().min(10)];
        // One column for the labels, as wide as the longest shown.
        let width = shown
            .iter()
            .map(|c| c.cause.chars().count())
            .max()
            .unwrap_or(0);
        for c in shown {
            out.push_str(&format!(
                "    {:<width$} in {:>4} spikes (longest in {}), {} total\n",
                c.cause,
                c.spikes,
                c.dominant_in,
                human_ns(c.total_ns)
            ));
        }
    }
}

/// The trace section of every traced scenario (empty when none was traced).
pub fn trace_lines(run: &Run, in_ns: bool, width: usize) -> String {
    let mut out = String::new();
    for sc in &run.scenarios {
        let Some(t) = &sc.trace else { continue };
        out.push_str(&format!(
            "\n--trace [{}]: {} events on CPU {}, threshold {} ({})\n",
            sc.name,
            t.events_recorded,
            crate::units::format_cpu_list(&t.cpus),
            human_ns(t.threshold_ns),
            t.threshold_source
        ));
        let lost: u64 = t
            .losses
            .per_cpu
            .iter()
            .map(|c| c.overrun + c.dropped + c.commit_overrun + c.missed_events)
            .sum();
        if t.losses.any() {
            out.push_str(&format!("  LOST {lost} events (per CPU in the JSON)\n"));
        }
        let unit = if in_ns { "ns" } else { "µs" };
        let mut rows = Vec::new();
        for th in &t.threads {
            if th.samples_total > 0 {
                out.push_str(&format!(
                    "  CPU {} tid {} ({}): {} of {} samples joined",
                    th.cpu, th.tid, th.role, th.samples_joined, th.samples_total
                ));
                for (why, n) in &th.not_joined {
                    out.push_str(&format!("; {n} not: {}", not_joined_words(why)));
                }
                out.push('\n');
            }
            for p in &th.parts {
                let mut row = vec![th.cpu.to_string(), part_label(p)];
                for stat in PART_STATS {
                    row.push(part_cell(p, stat, in_ns));
                }
                rows.push(row);
            }
        }
        if !rows.is_empty() {
            let mut header = vec!["cpu".to_string(), "part".to_string()];
            header.extend(PART_STATS.map(|s| s.header(unit)));
            let fit = crate::render::table::Fit::new(header, rows, 2);
            out.push_str(&crate::render::table::fit_table(fit, width));
        }
        for th in &t.threads {
            for note in &th.notes {
                out.push_str(&format!("  CPU {}: {note}\n", th.cpu));
            }
        }
        spike_lines(&mut out, t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::not_joined_words;

    #[test]
    fn not_joined_reasons_read_as_words_and_the_timers_words_pass_through() {
        assert_eq!(
            not_joined_words("NoWakeup"),
            "read without sleeping (the event came first)"
        );
        assert_eq!(
            not_joined_words("NotAsleep"),
            "woken before it slept (no switch-in to split)"
        );
        assert_eq!(not_joined_words("no hrtimer expiry"), "no hrtimer expiry");
    }
}
