//! The doctor's checklist as Markdown (`latscope report doctor.json --export-markdown`):
//! the verdict first, a table per group with each finding's fix and measured effect,
//! for a ticket or a wiki page.

use super::finding::{Finding, Status, GROUPS};
use super::report::DoctorReport;
use crate::render::markdown::{md_cell as cell, md_code, md_table_of_cells};
use std::fmt::Write;

fn row(f: &Finding) -> Vec<String> {
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
        let _ = write!(text, "<br>**fix:** {}", md_code(fix));
    }
    vec![f.status.label().to_string(), md_code(f.id.as_str()), text]
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
        let _ = writeln!(
            out,
            "\nplanned run: {}",
            md_code(&format!("latscope {planned}"))
        );
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
        let header = ["status", "check", "finding"].map(String::from);
        let rows: Vec<Vec<String>> = findings.into_iter().map(row).collect();
        let _ = write!(
            out,
            "\n## {title}\n\n{}",
            md_table_of_cells(&header, &rows, 3)
        );
    }
    if !report.notes.is_empty() {
        out.push('\n');
        for note in &report.notes {
            let _ = writeln!(out, "- note: {}", cell(note));
        }
    }
    out
}
