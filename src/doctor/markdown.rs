//! The doctor's checklist as Markdown (`latscope report doctor.json --export-markdown`):
//! the verdict first, a table per group with each finding's fix and measured effect,
//! for a ticket or a wiki page.

use super::finding::{Finding, Status, GROUPS};
use super::report::DoctorReport;
use std::fmt::Write;

/// A table cell: no pipe or newline may break the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn row(out: &mut String, f: &Finding) {
    let mut text = cell(&f.summary);
    for m in &f.measured {
        let _ = write!(
            text,
            "<br>**measured:** {}{}",
            cell(&m.summary),
            if m.restored {
                ""
            } else {
                " (**not restored**)"
            }
        );
    }
    if let Some(fix) = f.fix.as_ref().filter(|_| f.status >= Status::Warn) {
        let _ = write!(text, "<br>**fix:** `{}`", cell(fix).replace('`', "'"));
    }
    let _ = writeln!(
        out,
        "| {} | `{}` | {text} |",
        f.status.label(),
        f.id.as_str()
    );
}

/// The Markdown text.
pub fn render(report: &DoctorReport) -> String {
    let mut out = format!(
        "# latscope doctor: {}\n\n{} — {} {}; CPU {} ({}); priority {}\n",
        report.verdict.text(),
        report.counts.text(),
        cell(&report.hostname),
        cell(&report.kernel_release),
        crate::units::format_cpu_list(&report.cpus),
        cell(&report.cpus_why),
        report.priority
    );
    if let Some(basis) = report.basis_line() {
        let _ = writeln!(out, "\n{}", cell(&basis));
    }
    if let Some(planned) = &report.planned_run {
        let _ = writeln!(out, "\nplanned run: `latscope {}`", cell(planned));
    }
    for (group, title) in GROUPS {
        let findings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.id.group() == group)
            .collect();
        if findings.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n## {title}\n\n| status | check | finding |\n|---|---|---|"
        );
        for f in findings {
            row(&mut out, f);
        }
    }
    if !report.notes.is_empty() {
        out.push('\n');
        for note in &report.notes {
            let _ = writeln!(out, "- note: {}", cell(note));
        }
    }
    out
}
