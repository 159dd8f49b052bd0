//! The basis of a comparison's verdict, shown beside it: the rule and the noise method in
//! words, both runs' context side by side (kernel, date, command line, dma latency,
//! policy, loads, warnings), each statistic's 95 % intervals and the mark of the rows
//! behind the verdict. Shared by the terminal, Markdown and HTML views.

use crate::compare::noise::method_text;
use crate::compare::rules::rules_sentence;
use crate::compare::{Comparison, Verdict};
use crate::result::Run;
use crate::stats::Stat;

/// The rule and the noise method, one sentence each.
pub fn rule_lines(cmp: &Comparison) -> Vec<String> {
    vec![
        format!(
            "Rule: a scenario regressed when {} than in {}, beyond the noise; improved when \
better by as much.",
            rules_sentence(&cmp.rules),
            cmp.labels[0]
        ),
        format!("Noise: {}.", method_text()),
    ]
}

/// Distinct values over a run's scenarios, joined (`–` when none).
fn distinct(run: &Run, of: impl Fn(&crate::result::Scenario) -> String) -> String {
    let mut v: Vec<String> = run.scenarios.iter().map(of).collect();
    v.dedup();
    let mut seen = Vec::new();
    v.retain(|x| {
        let new = !seen.contains(x);
        seen.push(x.clone());
        new
    });
    if v.is_empty() {
        "–".into()
    } else {
        v.join(", ")
    }
}

fn dma_text(run: &Run, sc: &crate::result::Scenario) -> String {
    match (sc.params.dma_latency_us, run.system.cpu_dma_latency_us) {
        (Some(v), _) => format!("held at {v} µs"),
        // 2 000 s is the kernel's "no limit".
        (None, Some(s)) if s >= 2_000_000_000 => "not held (system: no limit)".into(),
        (None, Some(s)) => format!("not held (system: {s} µs)"),
        (None, None) => "not held".into(),
    }
}

/// The command line with the program's directory left out (`latscope timer -l 300`).
fn command_text(run: &Run) -> String {
    let mut words = run.command_line.clone();
    if let Some(first) = words.first_mut() {
        if let Some(name) = std::path::Path::new(first.as_str()).file_name() {
            *first = name.to_string_lossy().into_owned();
        }
    }
    words.join(" ")
}

fn warnings_text(run: &Run) -> String {
    let mut codes: Vec<String> = run
        .warnings
        .iter()
        .chain(run.scenarios.iter().flat_map(|s| s.warnings.iter()))
        .map(|w| w.code.to_string())
        .collect();
    let n = codes.len();
    codes.sort();
    codes.dedup();
    if n == 0 {
        "none".into()
    } else {
        format!("{n}: {}", codes.join(", "))
    }
}

/// The context table's row of the command lines (shown as code in Markdown and HTML).
const COMMAND_LINE: &str = "command line";

/// The runs' context side by side, narrow: a header (`context`, then each run's label),
/// one row per item that differs between the runs, and the items every run shares said
/// once (`host vm · policy fifo 95 · tool latscope 0.1.0`).
pub fn context(cmp: &Comparison) -> (Vec<String>, Vec<Vec<String>>, String) {
    let (header, rows) = context_table(cmp);
    let (same, differ): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .partition(|r| r[1..].iter().all(|c| *c == r[1]));
    let shared: Vec<String> = same.iter().map(|r| format!("{} {}", r[0], r[1])).collect();
    (header, differ, shared.join(" · "))
}

/// `same in both: ...` (or `in all`) under the context table, or nothing.
pub fn same_line(cmp: &Comparison, shared: &str) -> String {
    if shared.is_empty() {
        return String::new();
    }
    let all = if cmp.runs.len() > 2 { "all" } else { "both" };
    format!("same in {all}: {shared}")
}

/// Both (all) runs' context side by side: a header (`""`, then each run's label) and
/// one row per item.
pub fn context_table(cmp: &Comparison) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["context".to_string()];
    header.extend(cmp.labels.iter().cloned());
    type Item = (&'static str, fn(&Run) -> String);
    let items: [Item; 9] = [
        ("started", |r| r.started_at.clone()),
        ("host", |r| r.system.hostname.clone()),
        ("kernel", |r| {
            crate::compare::multi::axis_value(r, "", crate::compare::multi::Axis::Kernel)
        }),
        (COMMAND_LINE, command_text),
        ("policy", |r| {
            distinct(r, |s| format!("{} {}", s.params.policy, s.params.priority))
        }),
        ("dma latency", |r| distinct(r, |s| dma_text(r, s))),
        ("loads", |r| {
            distinct(r, |s| match s.params.loads.join(" + ") {
                l if l.is_empty() => "none".into(),
                l => l,
            })
        }),
        ("tool", |r| format!("{} {}", r.tool, r.tool_version)),
        ("warnings", warnings_text),
    ];
    let rows = items
        .iter()
        .map(|(name, f)| {
            let mut row = vec![name.to_string()];
            row.extend(cmp.runs.iter().map(|r| {
                let v = f(r);
                if v.is_empty() {
                    "–".into()
                } else {
                    v
                }
            }));
            row
        })
        .collect();
    (header, rows)
}

/// The 95 % intervals of `stat` in aligned row `row`, one per run (`lo–hi`, in the
/// table's unit), empty when no run has one.
pub fn noise_cell(cmp: &Comparison, row: usize, stat: Stat, in_ns: bool) -> String {
    let per_run: Vec<Option<String>> = cmp.noise[row]
        .iter()
        .map(|n| {
            n.of(stat).map(|i| {
                if in_ns {
                    format!("{:.0}–{:.0}", i.lo, i.hi)
                } else {
                    format!("{:.2}–{:.2}", i.lo / 1e3, i.hi / 1e3)
                }
            })
        })
        .collect();
    if per_run.iter().all(Option::is_none) {
        return String::new();
    }
    per_run
        .into_iter()
        .map(|c| c.unwrap_or_else(|| "–".into()))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The mark of `stat` in aligned row `row` against the first later run: `◀ regressed`,
/// `◀ improved`, `◀ undecidable`, `◀ within noise` for the statistics behind the
/// verdict, `within noise` or `undecidable` for a change beside them, `judged` for the
/// rest a rule judges, empty otherwise.
pub fn mark(cmp: &Comparison, row: usize, stat: Stat) -> String {
    let judged = cmp.rules.iter().any(|r| r.stats.contains(&stat));
    match cmp.verdicts[row].first().and_then(Option::as_ref) {
        Some(j) if j.behind.contains(&stat) => format!("◀ {}", j.verdict),
        Some(j) if j.noisy.contains(&stat) => "within noise".into(),
        Some(j) if j.unclear.contains(&stat) => "undecidable".into(),
        _ if judged => "judged".into(),
        _ => String::new(),
    }
}

/// The headline word of a verdict as the verdict lines print it.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Regressed => "REGRESSED",
        Verdict::Improved => "improved",
        Verdict::WithinNoise => "within noise",
        Verdict::Undecidable => "undecidable",
        Verdict::Unchanged => "unchanged",
    }
}

/// A verdict line in the terminal's colours: regressed red and bold, improved green,
/// within noise yellow, undecidable magenta. The caller writes through anstream, which drops the colours when
/// stdout is not a terminal or `NO_COLOR` is set.
pub fn paint(v: Option<Verdict>, line: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let style = match v {
        Some(Verdict::Regressed) => AnsiColor::Red.on_default().bold(),
        Some(Verdict::Improved) => AnsiColor::Green.on_default(),
        Some(Verdict::WithinNoise) => AnsiColor::Yellow.on_default(),
        Some(Verdict::Undecidable) => AnsiColor::Magenta.on_default(),
        _ => Style::new(),
    };
    format!("{style}{line}{style:#}")
}

/// The context table and the styles of the marked rows, as HTML.
pub fn context_html(cmp: &Comparison) -> String {
    use crate::render::escape::esc;
    let mut out = String::from(
        "<style>tr.behind td{background:#fff3cd;font-weight:bold}\
.noisetext{color:#8a6d00;font-weight:bold}</style>\n<h2>Context</h2>\n<table>\n<tr>",
    );
    let (header, rows, shared) = context(cmp);
    for h in header {
        out.push_str(&format!("<th>{}</th>", esc(&h)));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        let code = r[0] == COMMAND_LINE;
        for (i, c) in r.iter().enumerate() {
            if code && i > 0 && c != "–" {
                out.push_str(&format!("<td><code>{}</code></td>", esc(c)));
            } else {
                out.push_str(&format!("<td>{}</td>", esc(c)));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    let same = same_line(cmp, &shared);
    if !same.is_empty() {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", esc(&same)));
    }
    out
}

/// The context table in Markdown, each command line a code span.
pub fn context_markdown(cmp: &Comparison) -> String {
    use crate::render::markdown::{md_cell, md_code, md_table_of_cells};
    let (header, rows, shared) = context(cmp);
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let code = r[0] == COMMAND_LINE;
            r.iter()
                .enumerate()
                .map(|(i, c)| {
                    if code && i > 0 && c != "–" {
                        md_code(c)
                    } else {
                        md_cell(c)
                    }
                })
                .collect()
        })
        .collect();
    let mut out = md_table_of_cells(&header, &rows, 1);
    let same = same_line(cmp, &shared);
    if !same.is_empty() {
        out.push_str(&format!("\n{}\n", md_cell(&same)));
    }
    out
}
