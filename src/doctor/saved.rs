//! `latscope report doctor.json`: a file written by `doctor --export-json` rendered
//! again, as the checklist (terminal), Markdown, HTML or JSON, for the page of a ticket
//! or a CI artifact. Nothing is checked again: the file says what was true when it was
//! written.

use super::report::{DoctorReport, SCHEMA, SCHEMAS_READ};
use crate::cli::ReportArgs;
use crate::error::{UserError, EXIT_OK};
use crate::output::exports::Format;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Whether an input's text (read once, within the input limit) is a doctor file: its
/// top-level `schema` names `latscope-doctor/`. Decided by what was read, never by a
/// peek at the file that a larger or piped input would get past (issue 34, item 6).
pub fn is_doctor_text(text: &str) -> bool {
    crate::result::sniff::top_keys(text).is_ok_and(|k| k.is_doctor())
}

/// A doctor file's text read from `path` (named in errors); refuses a layout this
/// latscope does not know.
pub fn from_text(path: &Path, text: &str) -> anyhow::Result<DoctorReport> {
    let report: DoctorReport = serde_json::from_str(text)
        .with_context(|| format!("{} is not a doctor file latscope can read", path.display()))?;
    if !SCHEMAS_READ.contains(&report.schema.as_str()) {
        return Err(UserError::InvalidValue {
            option: "RUN.json".into(),
            value: path.display().to_string(),
            reason: format!(
                "its schema is {}, this latscope reads {SCHEMA}; render it with the latscope that wrote it",
                report.schema
            ),
        }
        .into());
    }
    Ok(report)
}

/// An option `report` offers for runs that a doctor file has no use for.
fn refuse(option: &str, value: &str) -> anyhow::Error {
    UserError::InvalidValue {
        option: option.into(),
        value: value.into(),
        reason: "a doctor file is rendered as the checklist only: --format table, markdown, html or json, and --export-markdown/--export-html/--export-json".into(),
    }
    .into()
}

/// What to write where: the `--format` output (stdout or -o) and each export.
fn outputs(args: &ReportArgs) -> anyhow::Result<Vec<(Format, PathBuf)>> {
    let o = &args.output;
    if !args.more_inputs.is_empty() {
        return Err(refuse(
            "MORE.json",
            &args.more_inputs[0].display().to_string(),
        ));
    }
    for (option, set) in [
        ("--export-csv", o.exports.csv.is_some()),
        ("--export-junit", o.exports.junit.is_some()),
        ("--export-lava", o.exports.lava.is_some()),
        ("--fail-above", o.exports.fail_above.is_some()),
        ("--iterations", args.iterations.is_some()),
        ("--worst-case", args.worst_case.worst_case),
    ] {
        if set {
            return Err(refuse(option, "given"));
        }
    }
    if matches!(args.format, Format::Csv | Format::Junit | Format::Lava) {
        return Err(refuse("--format", args.format.name()));
    }
    let mut all = vec![(
        args.format,
        args.out_file.clone().unwrap_or_else(|| "-".into()),
    )];
    for (format, path) in [
        (Format::Json, &o.export_json),
        (Format::Markdown, &o.exports.markdown),
        (Format::Html, &o.exports.html),
    ] {
        if let Some(p) = path {
            all.push((format, p.clone()));
        }
    }
    Ok(all)
}

fn render(report: &DoctorReport, format: Format) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        Format::Html => super::html::render(report),
        Format::Markdown => super::markdown::render(report).into_bytes(),
        Format::Json => report.json()?,
        _ => report
            .terminal(true, super::report::checklist_width())
            .into_bytes(),
    })
}

/// `latscope report doctor.json ...` of the file's text: exit 0 once written (the
/// verdict is in the file).
pub fn report(args: &ReportArgs, text: &str) -> anyhow::Result<i32> {
    let outputs = outputs(args)?;
    let claimed: Vec<crate::output::exports::Export> = outputs
        .iter()
        .map(|(format, path)| crate::output::exports::Export {
            format: *format,
            path: path.clone(),
        })
        .collect();
    let _locked = crate::output::exports::claim(&claimed)?;
    let report = from_text(&args.input, text)?;
    for (format, path) in &outputs {
        // The file's text may hold control sequences (issue 34, item 9).
        let bytes = crate::output::terminal::escape_export(*format, render(&report, *format)?);
        if path.as_os_str() == "-" {
            crate::output::pipe::write_stdout(&bytes).context("writing to stdout")?;
        } else {
            crate::output::exports::write_bytes(path, &bytes)?;
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    /// A file the previous latscope wrote (`latscope-doctor/1`, recorded on this VM by
    /// `doctor -v --export-json` before issue 36) reads and renders: no INFO, no basis,
    /// its A/B line as it was.
    #[test]
    fn a_version_1_file_reads_and_renders() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/doctor/saved-v1.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let report = super::from_text(&path, &text).unwrap();
        assert_eq!(report.schema, "latscope-doctor/1");
        assert_eq!((report.counts.info, report.counts.warn), (0, 7));
        let text = report.terminal(false, 80);
        assert!(
            text.starts_with("latscope doctor: NOT READY (1 FAIL, 7 WARN, 17 PASS, 2 SKIP)\n"),
            "{text}"
        );
        assert!(!text.contains("rest on"), "{text}");
        assert!(
            text.contains("measured: cpu_dma_latency 0: p99 53 → 51 µs"),
            "{text}"
        );
    }
}
