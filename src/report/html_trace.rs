//! The HTML report's `--trace` section (split parts per thread, spikes, cause summary, the
//! worst spike's timeline), in a file of its own to keep html.rs readable.

use crate::render::escape::esc;
use crate::render::figure::{charts_figure, Chart};
use crate::result::Scenario;
use crate::units::human_ns;
use std::fmt::Write;

/// `--trace`: the split parts per thread, the spikes, the cause summary and a timeline of
/// the worst spike with its events in the kernel's format.
pub fn trace_section(
    sc: &Scenario,
    t: &crate::result::trace::TraceResult,
) -> anyhow::Result<String> {
    use crate::units::human_ns;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<h3>Why was it late (--trace)</h3>\n<p class=\"note\">{} events on CPU {}; spike threshold {} ({}).</p>",
        t.events_recorded,
        esc(&crate::units::format_cpu_list(&t.cpus)),
        esc(&human_ns(t.threshold_ns)),
        esc(&t.threshold_source)
    );
    if t.losses.any() {
        let _ = writeln!(
            out,
            "<p class=\"warn\">Events were lost: {}</p>",
            esc(&serde_json::to_string(&t.losses).unwrap_or_default())
        );
    }
    trace_parts(&mut out, t);
    trace_causes(&mut out, t);
    if !t.worst_spike_spans.is_empty() {
        let title = format!("{} — the worst spike", sc.name);
        let chart = Chart::drawn(&title, |c| {
            super::spike_timeline::spike_timeline_svg(&title, &t.worst_spike_spans, c)
        })?;
        out.push_str(&charts_figure(
            &[chart],
            "One lane per traced CPU: tasks low in the lane (idle light grey; the others a colour and fill each), IRQ handlers (cross-hatched) and softirqs (striped) high; the dashed black line is the deadline (or the gap's start), the solid blue one the switch-in.",
            &[],
            &[],
            &[],
        ));
    }
    if !t.worst_spike_events.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>The worst spike's events ({})</summary><pre>{}</pre></details>",
            t.worst_spike_events.len(),
            esc(&t.worst_spike_events.join("\n"))
        );
    }
    Ok(out)
}

/// The split parts per thread and part, then each thread's join counts and notes.
fn trace_parts(out: &mut String, t: &crate::result::trace::TraceResult) {
    out.push_str("<table>\n<tr><th>CPU</th><th>part</th>");
    for stat in super::trace::PART_STATS {
        let _ = write!(out, "<th>{stat}</th>");
    }
    out.push_str("</tr>\n");
    for th in &t.threads {
        for p in &th.parts {
            let label = super::trace::part_label(p);
            let _ = write!(out, "<tr><td>{}</td><td>{}</td>", th.cpu, esc(&label));
            for stat in super::trace::PART_STATS {
                let cell = super::trace::part_cell(p, stat, false);
                let unit = if p.summary.samples == 0 { "" } else { " µs" };
                let _ = write!(out, "<td class=\"num\">{}{unit}</td>", esc(&cell));
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</table>\n");
    for th in t.threads.iter().filter(|th| th.samples_total > 0) {
        let _ = writeln!(
            out,
            "<p class=\"note\">CPU {} tid {} ({}): {} of {} samples joined{}</p>",
            th.cpu,
            th.tid,
            esc(&th.role),
            th.samples_joined,
            th.samples_total,
            esc(&th
                .not_joined
                .iter()
                .map(|(k, v)| format!("; {v} not: {}", super::trace::not_joined_words(k)))
                .collect::<String>())
        );
    }
    for th in &t.threads {
        for note in &th.notes {
            let _ = writeln!(out, "<p class=\"note\">CPU {}: {}</p>", th.cpu, esc(note));
        }
    }
}

/// The spikes (worst first) and the causes over all of them.
fn trace_causes(out: &mut String, t: &crate::result::trace::TraceResult) {
    if !t.spikes.is_empty() {
        let _ = writeln!(
            out,
            "<h4>Spikes ({}, worst first)</h4>\n<ul>",
            t.spikes.len()
        );
        for s in t.spikes.iter().take(50) {
            let _ = writeln!(out, "<li>CPU {}: {}</li>", s.cpu, esc(&s.line));
        }
        out.push_str("</ul>\n");
    }
    if !t.cause_summary.is_empty() {
        out.push_str("<h4>Causes over all spikes</h4>\n<table>\n<tr><th>cause</th><th>spikes</th><th>longest in</th><th>total</th></tr>\n");
        for c in &t.cause_summary {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&c.cause),
                c.spikes,
                c.dominant_in,
                esc(&human_ns(c.total_ns))
            );
        }
        out.push_str("</table>\n");
    }
}
