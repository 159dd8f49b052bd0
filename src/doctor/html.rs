//! `doctor --export-html`: the checklist as one self-contained page (the report's page
//! frame and escaping), a table per group with each finding's evidence, fix and measured
//! effect.

use super::finding::{Finding, GROUPS};
use super::report::DoctorReport;
use crate::render::escape::esc;
use crate::render::html::page;
use std::fmt::Write;

fn row(out: &mut String, f: &Finding) {
    let colour = match f.status {
        super::finding::Status::Pass => "#2e7d32",
        super::finding::Status::Info => "#1565c0",
        super::finding::Status::Skip => "#757575",
        super::finding::Status::Warn => "#ef6c00",
        super::finding::Status::Fail => "#c62828",
    };
    let mut detail = String::new();
    for m in &f.measured {
        let _ = write!(
            detail,
            "<div><b>measured:</b> {}{}</div>",
            esc(&m.summary),
            if m.restored {
                ""
            } else {
                " <b>(not restored)</b>"
            }
        );
    }
    if let Some(fix) = f
        .fix
        .as_ref()
        .filter(|_| f.status >= super::finding::Status::Warn)
    {
        let _ = write!(detail, "<div><b>fix:</b> <code>{}</code></div>", esc(fix));
    }
    if !f.evidence.is_empty() {
        let items: String = f
            .evidence
            .iter()
            .map(|e| format!("<li><code>{}</code></li>", esc(e)))
            .collect();
        let _ = write!(
            detail,
            "<details><summary>evidence</summary><ul>{items}</ul></details>"
        );
    }
    let _ = writeln!(
        out,
        "<tr><td style=\"color:{colour};font-weight:bold\">{}</td><td><code>{}</code></td><td>{}{detail}</td></tr>",
        f.status.label(),
        esc(f.id.as_str()),
        esc(&f.summary)
    );
}

/// The page's bytes.
pub fn render(report: &DoctorReport) -> Vec<u8> {
    let mut body = format!(
        "<h1>latscope doctor: {}</h1>\n<p>{} — {} {}; CPU {} ({}); priority {}</p>\n",
        esc(report.verdict.text()),
        esc(&report.counts.text()),
        esc(&report.hostname),
        esc(&report.kernel_release),
        esc(&crate::units::format_cpu_list(&report.cpus)),
        esc(&report.cpus_why),
        report.priority
    );
    if let Some(basis) = report.basis_line() {
        let _ = writeln!(body, "<p>{}</p>", esc(&basis));
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
        let _ = writeln!(body, "<h2>{}</h2>\n<table>", esc(title));
        for f in findings {
            row(&mut body, f);
        }
        body.push_str("</table>\n");
    }
    for note in &report.notes {
        let _ = writeln!(body, "<p><i>note: {}</i></p>", esc(note));
    }
    page("latscope doctor", &body).into_bytes()
}
