//! The worst-case estimates of a two-run comparison in Markdown and HTML: the estimates
//! side by side with their intervals (or why a run has none), then the verdicts, as the
//! terminal prints them (src/compare/worst_case.rs).

use crate::compare::worst_case::{lines, table};
use crate::compare::Comparison;
use std::fmt::Write;

const TITLE: &str = "Worst case beyond the samples";

/// The Markdown part (empty when no run has an estimate).
pub fn markdown(cmp: &Comparison, in_ns: bool) -> String {
    use crate::render::markdown::{md_cell, md_table};
    let Some((header, rows)) = table(cmp, in_ns) else {
        return String::new();
    };
    let mut out = format!("\n### {TITLE}\n\n");
    out.push_str(&md_table(&header, &rows, 2));
    out.push('\n');
    for line in lines(cmp) {
        let _ = writeln!(out, "- {}", md_cell(&line));
    }
    out
}

/// The HTML part (empty when no run has an estimate).
pub fn html(cmp: &Comparison, in_ns: bool) -> String {
    use crate::render::escape::esc;
    let Some((header, rows)) = table(cmp, in_ns) else {
        return String::new();
    };
    let mut out = format!("<section>\n<h2>{TITLE}</h2>\n<table>\n<tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", esc(&h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if i > 1 { " class=\"num\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    for line in lines(cmp) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&line));
    }
    out.push_str("<p class=\"note\">An estimate holds only for the conditions measured; it is not a proof. Estimates are compared only when both runs passed every check.</p>\n</section>\n");
    out
}
