//! The percent-change table of two runs (compare/change.rs) as the terminal, Markdown and
//! HTML comparisons show it: the RT-cost study's table (`latscope compare vanilla.json
//! rt.json` of two `rt-cost` suite runs) and, for any two runs, the loads' throughput.

use crate::compare::change::{
    changes, chosen_stats, is_rt_cost, percent_text, ChangeGroup, ChangeItem, ChangeKind,
};
use crate::compare::Comparison;
use std::fmt::Write;

/// How to read the sign of a change (printed above every change table).
pub const SIGN_CONVENTION: &str =
    "change = (B \u{2212} A) / A. Latency: higher is worse, so + is worse. \
Throughput: lower is worse, so \u{2212} is worse.";

/// Whether the comparison gets the RT-cost study's layout: two runs, both `rt-cost`.
pub fn wants_rt_cost_layout(cmp: &Comparison) -> bool {
    cmp.runs.len() == 2 && cmp.runs.iter().all(is_rt_cost)
}

fn value_text(item: &ChangeItem, v: f64, in_ns: bool) -> String {
    match &item.kind {
        ChangeKind::Latency(stat) if stat.is_count() => format!("{v:.0}"),
        ChangeKind::Latency(_) => crate::units::latency_cell(v.round() as u64, in_ns),
        ChangeKind::Throughput(_) if v >= 100.0 => format!("{v:.0}"),
        ChangeKind::Throughput(_) => format!("{v:.2}"),
    }
}

fn what_text(item: &ChangeItem, in_ns: bool) -> String {
    let unit = if in_ns { "ns" } else { "µs" };
    match &item.kind {
        ChangeKind::Latency(stat) if stat.is_count() => stat.name().to_string(),
        ChangeKind::Latency(stat) => format!("{} ({unit})", stat.name()),
        ChangeKind::Throughput(u) => format!("throughput ({u})"),
    }
}

fn judgement(item: &ChangeItem) -> &'static str {
    match item.worse() {
        Some(true) => "worse",
        Some(false) => "better",
        None => "",
    }
}

/// Header and rows of a change table of `items` between runs labelled `a` and `b`.
pub fn change_rows(
    items: &[ChangeItem],
    a: &str,
    b: &str,
    in_ns: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    let header = vec![
        "item".to_string(),
        "statistic".into(),
        format!("A {a}"),
        format!("B {b}"),
        "change".into(),
        String::new(),
    ];
    let mut rows = Vec::new();
    let mut last_item = String::new();
    for it in items {
        let item = if it.item == last_item {
            String::new()
        } else {
            it.item.clone()
        };
        last_item = it.item.clone();
        rows.push(vec![
            item,
            what_text(it, in_ns),
            value_text(it, it.base, in_ns),
            value_text(it, it.new, in_ns),
            percent_text(it.percent()),
            judgement(it).to_string(),
        ]);
    }
    (header, rows)
}

/// The study's finding in words, one line per throughput item: `B (PREEMPT_RT) costs
/// 9.0 % of net load throughput (1000 → 910 MB/s)`; `who` names B.
pub fn finding_lines(items: &[ChangeItem], who: &str) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.group == ChangeGroup::Throughput)
        .filter_map(|i| {
            let p = i.percent()?;
            let ChangeKind::Throughput(unit) = &i.kind else {
                return None;
            };
            let verb = if p < 0.0 { "costs" } else { "gains" };
            Some(format!(
                "{who} {verb} {:.1} % of {} ({} \u{2192} {} {unit})",
                p.abs(),
                i.item,
                value_text(i, i.base, false),
                value_text(i, i.new, false),
            ))
        })
        .collect()
}

/// The RT-cost study's table for the terminal: sign convention, one row per item and
/// statistic, then the finding lines.
pub fn rt_cost_text(cmp: &Comparison, in_ns: bool, width: usize) -> String {
    use crate::render::table::{fit_table, wrap, Fit};
    let items = changes(cmp, 1, &chosen_stats(&cmp.runs[0]));
    let mut out = String::new();
    let intro = format!(
        "\nRT cost: B against A\n{SIGN_CONVENTION}\nA: {} ({})\nB: {} ({})\n",
        cmp.labels[0],
        kernel_text(&cmp.runs[0]),
        cmp.labels[1],
        kernel_text(&cmp.runs[1])
    );
    out.push_str(&wrap(&intro, width));
    let (header, rows) = change_rows(&items, "", "", in_ns);
    let header = header.into_iter().map(|h| h.trim().to_string()).collect();
    out.push_str(&fit_table(Fit::new(header, rows, 2), width));
    for line in finding_lines(&items, &who_is_b(cmp)) {
        out.push_str(&wrap(&line, width));
        out.push('\n');
    }
    out
}

/// `B (PREEMPT_RT)`: the compared run and its preemption model.
fn who_is_b(cmp: &Comparison) -> String {
    let model = &cmp.runs[1].system.preemption_model;
    if model.is_empty() {
        "B".into()
    } else {
        format!("B ({model})")
    }
}

fn kernel_text(run: &crate::result::Run) -> String {
    format!(
        "{} {}, {}",
        run.system.hostname, run.system.kernel_release, run.system.preemption_model
    )
}

/// For any two runs whose scenarios ran loads: the loads' throughput change, or nothing.
pub fn throughput_text(cmp: &Comparison, width: usize) -> String {
    if cmp.runs.len() != 2 {
        return String::new();
    }
    let items: Vec<ChangeItem> = changes(cmp, 1, &[])
        .into_iter()
        .filter(|i| i.group == ChangeGroup::Throughput)
        .collect();
    if items.is_empty() {
        return String::new();
    }
    let (header, rows) = change_rows(&items, "", "", false);
    let header = header.into_iter().map(|h| h.trim().to_string()).collect();
    let fit = crate::render::table::Fit::new(header, rows, 2);
    format!(
        "\nLoad throughput, B against A (lower is worse)\n{}",
        crate::render::table::fit_table(fit, width)
    )
}

/// The RT-cost table as Markdown.
pub fn rt_cost_markdown(cmp: &Comparison, in_ns: bool) -> String {
    use crate::render::markdown::{md_cell, md_table};
    let items = changes(cmp, 1, &chosen_stats(&cmp.runs[0]));
    let (header, rows) = change_rows(&items, &cmp.labels[0], &cmp.labels[1], in_ns);
    let mut out = format!("\n### RT cost\n\n{}\n\n", md_cell(SIGN_CONVENTION));
    out.push_str(&md_table(&header, &rows, 2));
    for line in finding_lines(&items, &who_is_b(cmp)) {
        let _ = writeln!(out, "\n**{}**", md_cell(&line));
    }
    out
}

/// The RT-cost table as an HTML section.
pub fn rt_cost_html(cmp: &Comparison, in_ns: bool) -> String {
    use crate::render::escape::esc;
    let items = changes(cmp, 1, &chosen_stats(&cmp.runs[0]));
    let (header, rows) = change_rows(&items, &cmp.labels[0], &cmp.labels[1], in_ns);
    let mut out = format!(
        "<section>\n<h2>RT cost</h2>\n<p class=\"note\">{}</p>\n",
        esc(SIGN_CONVENTION)
    );
    for line in finding_lines(&items, &who_is_b(cmp)) {
        let _ = writeln!(out, "<p><strong>{}</strong></p>", esc(&line));
    }
    out.push_str(&html_table(&header, &rows));
    out.push_str("</section>\n");
    out
}

/// A plain HTML table, the columns after the second right-aligned.
pub fn html_table(header: &[String], rows: &[Vec<String>]) -> String {
    crate::render::html::html_table(header, rows, 2)
}
