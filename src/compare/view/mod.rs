//! The renderings of a `Comparison` (src/compare/), each a `Reporter<Comparison>`: the
//! terminal tables and verdicts, Markdown, CSV (one row per aligned scenario × CPU ×
//! statistic × run) and HTML with overlaid histograms.

pub mod basis;
pub mod change;
pub mod multi;
pub mod trend;
pub mod verdicts;
pub mod worst_case;

pub use verdicts::verdict_lines;

use crate::compare::rules::{ratio_text, signed_change};
use crate::compare::{Aligned, Comparison, Verdict};
use crate::output::exports::Format;
use crate::render::histogram::HistogramLine;
use crate::render::Reporter;
use crate::result::stat_unknown;
use crate::result::ThreadResult;
use crate::stats::Stat;
use std::fmt::Write;

/// The statistics shown in comparison tables.
pub const STATS: [Stat; 10] = [
    Stat::Min,
    Stat::Avg,
    Stat::P50,
    Stat::P99,
    Stat::P999,
    Stat::P9999,
    Stat::Max,
    Stat::Stddev,
    Stat::Overruns,
    Stat::Missed,
];

/// A renderer of comparisons in one format.
pub type ComparisonReporter = dyn for<'a> Reporter<Comparison<'a>>;

/// The renderer of a comparison in `format`; None for the formats a comparison has not
/// (JSON, JUnit, LAVA: they render single runs).
pub fn reporter(format: Format, in_ns: bool) -> Option<Box<ComparisonReporter>> {
    Some(match format {
        Format::Table => Box::new(ComparisonTableReporter { in_ns }),
        Format::Markdown => Box::new(ComparisonMarkdownReporter { in_ns }),
        Format::Csv => Box::new(ComparisonCsvReporter),
        Format::Html => Box::new(ComparisonHtmlReporter { in_ns }),
        Format::Json | Format::Junit | Format::Lava => return None,
    })
}

fn cell(th: &ThreadResult, stat: Stat) -> Option<f64> {
    if stat_unknown(th, stat) {
        return None;
    }
    Some(th.summary.stat(stat))
}

/// A change in the column's unit, whatever its size (`+0.98`, `-20160.00` µs; `+976` ns;
/// `+3` for counts): a µs column never holds `976 ns` or `20.16 ms`.
fn change_cell(stat: Stat, delta: f64, in_ns: bool) -> String {
    if stat.is_count() {
        signed_change(stat, delta)
    } else if in_ns {
        format!("{:+.0}", delta)
    } else {
        format!("{:+.2}", delta / 1e3)
    }
}

fn value_text(stat: Stat, v: Option<f64>, in_ns: bool) -> String {
    match v {
        None => "–".into(),
        Some(v) if stat.is_count() => format!("{v:.0}"),
        Some(v) => crate::units::latency_cell(v.round() as u64, in_ns),
    }
}

/// Per aligned row (`row` of `cmp.aligned`): the header and one row per statistic (value
/// per run, then change and ratio for each later run, then the runs' 95 % intervals and
/// the rule's mark: `◀ regressed` on the statistics behind the verdict).
pub fn table(cmp: &Comparison, row: usize, in_ns: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let a: &Aligned = &cmp.aligned[row];
    let unit = if in_ns { "ns" } else { "µs" };
    let mut header = vec![format!("statistic ({unit})")];
    for (r, l) in cmp.labels.iter().enumerate() {
        header.push(l.clone());
        if r > 0 {
            header.push("change".into());
            header.push("ratio".into());
        }
    }
    header.push("95 % interval".into());
    header.push("rule".into());
    let mut rows = Vec::new();
    let mut samples = vec!["samples".to_string()];
    for (r, e) in a.entries.iter().enumerate() {
        samples.push(e.map_or("–".into(), |(_, t)| t.summary.samples.to_string()));
        if r > 0 {
            samples.extend(["".into(), "".into()]);
        }
    }
    samples.extend(["".into(), "".into()]);
    rows.push(samples);
    for stat in STATS {
        let base = a.entries[0].and_then(|(_, t)| cell(t, stat));
        let mut cells = vec![stat.to_string()];
        for (r, e) in a.entries.iter().enumerate() {
            let v = e.and_then(|(_, t)| cell(t, stat));
            cells.push(value_text(stat, v, in_ns));
            if r > 0 {
                match (base, v) {
                    (Some(b), Some(v)) => {
                        cells.push(change_cell(stat, v - b, in_ns));
                        cells.push(ratio_text(b, v));
                    }
                    _ => cells.extend(["–".into(), "–".into()]),
                }
            }
        }
        cells.push(basis::noise_cell(cmp, row, stat, in_ns));
        cells.push(basis::mark(cmp, row, stat));
        rows.push(cells);
    }
    (header, rows)
}

/// The terminal rendering, answers first: the verdicts (the worst first) and the count of
/// what lined up with nothing, then a table per lined-up scenario × CPU (changed ones
/// first), the loads' throughput and worst-case lines, and last the basis: the rule, the
/// noise method and the context (only what differs, the rest in one line); fitted to
/// the terminal's width.
pub struct ComparisonTableReporter {
    pub in_ns: bool,
}

/// The verdict lines as `compare` prints them first (and alone, on stderr, with `-q`):
/// painted, wrapped at `width`.
pub fn verdict_text(cmp: &Comparison, width: usize) -> String {
    use crate::render::table::wrap;
    let mut out = String::new();
    for (v, line) in verdict_lines(cmp) {
        // Names read from files escaped (issue 34, item 9); the verdicts' own colours kept.
        let line = crate::output::terminal::escape_controls(&line);
        out.push_str(&basis::paint(v, &wrap(&line, width)));
        out.push('\n');
    }
    out
}

impl ComparisonTableReporter {
    /// One lined-up scenario × CPU: its label and verdict, then its statistics fitted.
    fn row_text(&self, cmp: &Comparison, row: usize, width: usize) -> String {
        use crate::render::table::{fit_table, wrap, Fit};
        let unit = if self.in_ns { "ns" } else { "µs" };
        let verdict = cmp.verdicts[row]
            .iter()
            .flatten()
            .map(|j| basis::verdict_word(j.verdict))
            .collect::<Vec<_>>()
            .join(", ");
        let title = format!("{} — {verdict}", cmp.aligned[row].key.label());
        let (header, rows) = table(cmp, row, self.in_ns);
        let header = header
            .into_iter()
            .map(|h| h.replace(&format!(" ({unit})"), ""))
            .collect();
        let fit = Fit {
            above: Some(format!(
                "latencies in {unit}; samples, overruns and missed are counts"
            )),
            ..Fit::new(header, rows, 1)
        };
        format!("\n{}\n{}", wrap(&title, width), fit_table(fit, width))
    }

    /// The basis last: the rule and the noise method, the runs, then the context table of
    /// what differs and one line of what the runs share.
    fn basis_text(cmp: &Comparison, width: usize) -> String {
        use crate::render::table::{fit_table, wrap, Fit};
        let mut out = String::from("\n");
        for line in basis::rule_lines(cmp) {
            out.push_str(&wrap(&line, width));
            out.push('\n');
        }
        for (i, l) in cmp.labels.iter().enumerate() {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(out, "{} {role}: {l}", (b'A' + (i % 26) as u8) as char);
        }
        let (header, rows, shared) = basis::context(cmp);
        if !rows.is_empty() {
            // Words only: every column a label, long ones wrapped inside their cells.
            let columns = header.len();
            out.push_str(&fit_table(Fit::new(header, rows, columns), width));
        }
        let same = basis::same_line(cmp, &shared);
        if !same.is_empty() {
            out.push_str(&wrap(&same, width));
            out.push('\n');
        }
        out
    }
}

impl Reporter<Comparison<'_>> for ComparisonTableReporter {
    fn render(&self, cmp: &Comparison) -> anyhow::Result<Vec<u8>> {
        use crate::output::terminal::escape_controls;
        use crate::render::table::{terminal_width, wrap};
        if cmp.is_multi() {
            return Ok(crate::compare::view::multi::terminal_text(cmp, self.in_ns).into_bytes());
        }
        let width = terminal_width();
        let verdicts = verdict_text(cmp, width);
        let mut out = String::new();
        if crate::compare::view::change::wants_rt_cost_layout(cmp) {
            out.push_str(&crate::compare::view::change::rt_cost_text(
                cmp, self.in_ns, width,
            ));
        } else {
            for row in verdicts::printed_rows(cmp) {
                out.push_str(&self.row_text(cmp, row, width));
            }
            out.push_str(&crate::compare::view::change::throughput_text(cmp, width));
        }
        for line in crate::compare::worst_case::lines(cmp) {
            out.push_str(&wrap(&line, width));
            out.push('\n');
        }
        out.push_str(&Self::basis_text(cmp, width));
        // Names and labels read from files escaped (issue 34, item 9).
        Ok(format!("{verdicts}{}", escape_controls(&out)).into_bytes())
    }
}

/// Markdown: the same tables and verdicts.
pub struct ComparisonMarkdownReporter {
    pub in_ns: bool,
}

impl Reporter<Comparison<'_>> for ComparisonMarkdownReporter {
    fn render(&self, cmp: &Comparison) -> anyhow::Result<Vec<u8>> {
        use crate::render::markdown::{md_cell, md_table};
        if cmp.is_multi() {
            return Ok(crate::compare::view::multi::markdown_text(cmp, self.in_ns).into_bytes());
        }
        let mut out = String::from("## latscope comparison\n\n");
        for (i, l) in cmp.labels.iter().enumerate() {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(out, "- {role}: `{}`", l.replace('`', "'"));
        }
        // Answers first: the verdicts, then the tables (changed first), the basis last.
        out.push_str("\n### Verdicts\n\n");
        for (_, line) in verdict_lines(cmp) {
            let _ = writeln!(out, "- {}", md_cell(&line));
        }
        if crate::compare::view::change::wants_rt_cost_layout(cmp) {
            out.push_str(&crate::compare::view::change::rt_cost_markdown(
                cmp, self.in_ns,
            ));
        }
        for i in verdicts::printed_rows(cmp) {
            let (header, rows) = table(cmp, i, self.in_ns);
            let _ = writeln!(out, "\n### {}\n", md_cell(&cmp.aligned[i].key.label()));
            out.push_str(&md_table(&header, &rows, 1));
        }
        out.push_str(&worst_case::markdown(cmp, self.in_ns));
        out.push_str("\n### Basis\n\n");
        for line in basis::rule_lines(cmp) {
            let _ = writeln!(out, "{}\n", md_cell(&line));
        }
        out.push_str(&basis::context_markdown(cmp));
        Ok(out.into_bytes())
    }
}

/// CSV: one row per aligned scenario × CPU × statistic × run.
pub struct ComparisonCsvReporter;

impl Reporter<Comparison<'_>> for ComparisonCsvReporter {
    fn render(&self, cmp: &Comparison) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record([
            "scenario",
            "cpu",
            "metric",
            "statistic",
            "run",
            "value",
            "change",
            "ratio",
            "interval_lo",
            "interval_hi",
            "verdict",
        ])?;
        for ((a, vs), noise) in cmp.aligned.iter().zip(&cmp.verdicts).zip(&cmp.noise) {
            for stat in STATS {
                let base = a.entries[0].and_then(|(_, t)| cell(t, stat));
                for (r, e) in a.entries.iter().enumerate() {
                    let v = e.and_then(|(_, t)| cell(t, stat));
                    let (change, ratio) = match (r, base, v) {
                        (r, Some(b), Some(v)) if r > 0 => (
                            format!("{:.1}", v - b),
                            if b > 0.0 {
                                format!("{:.4}", v / b)
                            } else {
                                String::new()
                            },
                        ),
                        _ => (String::new(), String::new()),
                    };
                    let verdict = if r == 0 {
                        "baseline".to_string()
                    } else {
                        vs[r - 1]
                            .as_ref()
                            .map_or("missing".into(), |v| v.verdict.to_string())
                    };
                    let interval = noise[r].of(stat);
                    w.write_record([
                        a.key.label(),
                        a.key.cpu.to_string(),
                        a.key.metric.to_string(),
                        stat.to_string(),
                        cmp.labels[r].clone(),
                        v.map_or(String::new(), |v| format!("{v:.1}")),
                        change,
                        ratio,
                        interval.map_or(String::new(), |i| format!("{:.1}", i.lo)),
                        interval.map_or(String::new(), |i| format!("{:.1}", i.hi)),
                        verdict,
                    ])?;
                }
            }
        }
        Ok(w.into_inner()?)
    }
}

/// The verdict lines as HTML paragraphs, classed by verdict.
fn verdicts_html(cmp: &Comparison) -> String {
    let mut body = String::from("<h2>Verdicts</h2>\n");
    for (v, line) in verdict_lines(cmp) {
        let class = match v {
            Some(Verdict::Regressed) => "failtext",
            Some(Verdict::Improved) => "pass",
            Some(Verdict::WithinNoise | Verdict::Undecidable) => "noisetext",
            _ => "note",
        };
        let _ = writeln!(
            body,
            "<p class=\"{class}\">{}</p>",
            crate::render::escape::esc(&line)
        );
    }
    body
}

/// HTML: overlaid histograms (one line per run) per aligned scenario × CPU, the tables and
/// the verdicts.
pub struct ComparisonHtmlReporter {
    pub in_ns: bool,
}

impl Reporter<Comparison<'_>> for ComparisonHtmlReporter {
    fn render(&self, cmp: &Comparison) -> anyhow::Result<Vec<u8>> {
        use crate::render::escape::esc;
        use crate::render::html::page;
        let mut body = String::from("<h1>latscope comparison</h1>\n<ul>\n");
        for (i, l) in cmp.labels.iter().enumerate() {
            let role = if i == 0 { "baseline" } else { "compared" };
            let _ = writeln!(body, "<li>{role}: <code>{}</code></li>", esc(l));
        }
        body.push_str("</ul>\n");
        // Answers first: the verdicts, the tables (changed first), the basis last.
        body.push_str(&verdicts_html(cmp));
        if cmp.is_multi() {
            body.push_str(&crate::compare::view::multi::html_section(cmp, self.in_ns)?);
        }
        if crate::compare::view::change::wants_rt_cost_layout(cmp) {
            body.push_str(&crate::compare::view::change::rt_cost_html(cmp, self.in_ns));
        }
        for row in verdicts::printed_rows(cmp) {
            let a = &cmp.aligned[row];
            let _ = writeln!(body, "<section>\n<h2>{}</h2>", esc(&a.key.label()));
            let lines: Vec<HistogramLine> = a
                .entries
                .iter()
                .enumerate()
                .filter_map(|(r, e)| {
                    e.filter(|(_, t)| !t.histogram.is_empty())
                        .map(|(_, t)| HistogramLine {
                            label: cmp.labels[r].clone(),
                            buckets: &t.histogram,
                            max_ns: t.summary.max_ns,
                        })
                })
                .collect();
            if !lines.is_empty() {
                let deadline = a
                    .entries
                    .iter()
                    .flatten()
                    .next()
                    .map(|(s, _)| s.params.deadline_ns);
                let d = crate::render::histogram::Distribution {
                    name: format!("{} — histograms overlaid", a.key.label()),
                    lines: &lines,
                    deadline_ns: deadline.filter(|&d| d > 0),
                };
                let caption = "One line per run: every sample on a log latency axis, then \
the bodies on a linear axis in whole-µs bins, cut where the samples thin out; the samples \
beyond are marked in the strip and listed here.";
                body.push_str(&crate::render::figure::distribution(&d, caption)?);
            }
            let (header, rows) = table(cmp, row, self.in_ns);
            body.push_str("<table class=\"cards\">\n<tr>");
            for h in &header {
                let _ = write!(body, "<th>{}</th>", esc(h));
            }
            body.push_str("</tr>\n");
            for r in rows {
                let behind = r.last().is_some_and(|m| m.starts_with('◀'));
                body.push_str(if behind {
                    "<tr class=\"behind\">"
                } else {
                    "<tr>"
                });
                for (i, c) in r.iter().enumerate() {
                    let class = if i > 0 { " class=\"num\"" } else { "" };
                    let label = header.get(i).map_or(String::new(), |h| esc(h));
                    let _ = write!(body, "<td{class} data-label=\"{label}\">{}</td>", esc(c));
                }
                body.push_str("</tr>\n");
            }
            body.push_str("</table>\n</section>\n");
        }
        body.push_str(&worst_case::html(cmp, self.in_ns));
        for line in basis::rule_lines(cmp) {
            let _ = writeln!(body, "<p class=\"note\">{}</p>", esc(&line));
        }
        body.push_str(&basis::context_html(cmp));
        Ok(page("latscope comparison", &body).into_bytes())
    }
}
