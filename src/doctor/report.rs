//! The doctor's outputs: the verdict and its exit code, the terminal checklist (grouped,
//! verdict first, each WARN/FAIL with its fix and measured effect) and the JSON file.

use super::finding::{Finding, Status, GROUPS};
use crate::error::{EXIT_NOT_READY, EXIT_OK, EXIT_WARNINGS};
use serde::{Deserialize, Serialize};

/// The overall answer: ready, ready with warnings, or not ready (a FAIL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ready,
    Warnings,
    NotReady,
}

impl Verdict {
    pub fn of(findings: &[Finding]) -> Self {
        match findings.iter().map(|f| f.status).max() {
            Some(Status::Fail) => Verdict::NotReady,
            Some(Status::Warn) => Verdict::Warnings,
            _ => Verdict::Ready,
        }
    }

    /// The documented exit code: 0 ready, 1 warnings, 7 not ready.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Ready => EXIT_OK,
            Verdict::Warnings => EXIT_WARNINGS,
            Verdict::NotReady => EXIT_NOT_READY,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Verdict::Ready => "READY",
            Verdict::Warnings => "READY WITH WARNINGS",
            Verdict::NotReady => "NOT READY",
        }
    }
}

/// How many findings have each status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub skip: usize,
    /// Reported, not judged (schema 2).
    #[serde(default)]
    pub info: usize,
}

/// Everything `doctor` found, as printed and as written by `--export-json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DoctorReport {
    /// `latscope-doctor/2`: the layout of this file (docs/doctor.md).
    pub schema: String,
    pub verdict: Verdict,
    pub counts: Counts,
    pub hostname: String,
    pub kernel_release: String,
    /// The CPUs judged and measured, and why those.
    pub cpus: Vec<usize>,
    pub cpus_why: String,
    pub priority: i32,
    /// Read only (`--quick`, a fixture tree, or not root): nothing was measured.
    pub measured: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_run: Option<String>,
    /// Why something was not measured, and other notes for the reader.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub findings: Vec<Finding>,
}

/// The layout written: 2 added `info` (status and count), `basis`, and each A/B's
/// `test` and `bearing`; a version-1 file reads as one without them.
pub const SCHEMA: &str = "latscope-doctor/2";
/// The layouts `latscope report` reads back.
pub const SCHEMAS_READ: [&str; 2] = ["latscope-doctor/1", SCHEMA];

impl Counts {
    /// `1 FAIL, 7 WARN, 17 PASS, 2 SKIP, 1 INFO` (INFO only when there is one).
    pub fn text(&self) -> String {
        let info = match self.info {
            0 => String::new(),
            n => format!(", {n} INFO"),
        };
        format!(
            "{} FAIL, {} WARN, {} PASS, {} SKIP{info}",
            self.fail, self.warn, self.pass, self.skip
        )
    }
}

impl DoctorReport {
    pub fn counts_of(findings: &[Finding]) -> Counts {
        let n = |s: Status| findings.iter().filter(|f| f.status == s).count();
        Counts {
            pass: n(Status::Pass),
            warn: n(Status::Warn),
            fail: n(Status::Fail),
            skip: n(Status::Skip),
            info: n(Status::Info),
        }
    }

    /// Which findings rest on a measurement here and which WARN/FAIL only on the
    /// settings read (`None` when nothing was measured: every finding is a reading).
    pub fn basis_line(&self) -> Option<String> {
        // A version-1 file was judged before measurements decided: it has no basis.
        if !self.measured || self.schema != SCHEMA {
            return None;
        }
        let (measured, read) = super::judge::bases(&self.findings);
        let names = |ids: &[super::finding::CheckId]| {
            ids.iter()
                .map(|i| i.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let on_measured = match measured.len() {
            0 => "no finding rests on a measurement here".to_string(),
            n => format!(
                "{n} finding{} rest{} on a measurement here ({})",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
                names(&measured)
            ),
        };
        let on_read = match read.len() {
            0 => String::new(),
            n => format!(
                "; {n} WARN/FAIL only on the settings read ({})",
                names(&read)
            ),
        };
        Some(format!("{on_measured}{on_read}"))
    }

    pub fn json(&self) -> anyhow::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// The terminal checklist at `width` columns (no line longer; 0 means 80); `verbose`
    /// adds each finding's evidence.
    pub fn terminal(&self, verbose: bool, width: usize) -> String {
        let width = if width == 0 { 80 } else { width };
        let mut out = String::new();
        let head = format!(
            "latscope doctor: {} ({})",
            self.verdict.text(),
            self.counts.text()
        );
        wrap_into(&mut out, "", "  ", &head, width);
        let machine = format!(
            "{} {}; CPU {} ({}); priority {}",
            self.hostname,
            self.kernel_release,
            crate::units::format_cpu_list(&self.cpus),
            self.cpus_why,
            self.priority
        );
        wrap_into(&mut out, "", "  ", &machine, width);
        if let Some(basis) = self.basis_line() {
            wrap_into(&mut out, "", "  ", &basis, width);
        }
        if let Some(planned) = &self.planned_run {
            wrap_into(
                &mut out,
                "",
                "  ",
                &format!("planned run: latscope {planned}"),
                width,
            );
        }
        let ids = self
            .findings
            .iter()
            .map(|f| f.id.as_str().len())
            .max()
            .unwrap_or(0);
        for (group, title) in GROUPS {
            let in_group: Vec<&Finding> = self
                .findings
                .iter()
                .filter(|f| f.id.group() == group)
                .collect();
            if in_group.is_empty() {
                continue;
            }
            out.push('\n');
            wrap_into(&mut out, "", "", title, width);
            for f in in_group {
                render_finding(&mut out, f, ids, verbose, width);
            }
        }
        if !self.notes.is_empty() {
            out.push('\n');
        }
        for note in &self.notes {
            wrap_into(&mut out, "note: ", "      ", note, width);
        }
        out
    }
}

/// The width the checklist fits: the terminal's, else `COLUMNS`; 80 when neither says
/// (a pipe, a serial console) or says 0 (the width every table fits, render/table.rs).
pub fn checklist_width() -> usize {
    crate::render::table::terminal_width()
}

/// Appends `text` wrapped at `width`: its first line after `first`, the others after
/// `rest` (a hanging indent), words longer than a line broken, so no line is longer.
fn wrap_into(out: &mut String, first: &str, rest: &str, text: &str, width: usize) {
    let text = text.replace('\t', " ");
    let options = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(true)
        // Commands and paths keep their hyphens: a line breaks between words only, and
        // never between a number and its unit.
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .word_separator(textwrap::WordSeparator::Custom(words_with_units));
    for line in textwrap::wrap(&text, options) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// A unit that stays on the line of the number before it (`16 %`, `2.5 ms`).
fn is_unit(word: &str) -> bool {
    let bare = word.trim_end_matches([',', ';', ':', ')', '.']);
    ["%", "µs", "ms", "ns", "s", "min", "Hz", "KiB"].contains(&bare)
}

/// The words of `line` split at spaces (textwrap's own way), a unit kept with the
/// number before it.
fn words_with_units(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    // Each token: its start and its end with the spaces after it.
    let mut tokens: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    while start < line.len() {
        let mut end = start;
        while end < line.len() && bytes[end] != b' ' {
            end += 1;
        }
        let word_end = end;
        while end < line.len() && bytes[end] == b' ' {
            end += 1;
        }
        match tokens.last_mut() {
            Some(last) if is_unit(&line[start..word_end]) => last.1 = end,
            _ => tokens.push((start, end)),
        }
        start = end;
    }
    Box::new(
        tokens
            .into_iter()
            .map(move |(a, b)| textwrap::core::Word::from(&line[a..b])),
    )
}

/// One finding: `  WARN id  summary` with the summary in its own column, then its
/// measured, fix and (verbose) evidence lines indented under it; on a terminal too
/// narrow for that column, the summary and the rest go under the ID.
fn render_finding(out: &mut String, f: &Finding, ids: usize, verbose: bool, width: usize) {
    let head = format!("  {} {:<ids$}  ", f.status.label(), f.id.as_str());
    let narrow = head.len() + 24 > width;
    let (first, text_col) = if narrow {
        wrap_into(out, "", "    ", head.trim_end(), width);
        ("      ".to_string(), "      ".to_string())
    } else {
        (head.clone(), " ".repeat(head.len()))
    };
    wrap_into(out, &first, &text_col, &f.summary, width);
    let pad = if narrow {
        "      ".to_string()
    } else {
        " ".repeat(head.len() - 1)
    };
    let more = format!("{pad}  ");
    for m in &f.measured {
        let text = format!(
            "{}{}",
            m.summary,
            if m.restored {
                ""
            } else {
                " (NOT RESTORED: run `latscope restore`)"
            }
        );
        wrap_into(out, &format!("{pad}measured: "), &more, &text, width);
    }
    if let Some(fix) = f.fix.as_ref().filter(|_| f.status >= Status::Warn) {
        wrap_into(out, &format!("{pad}fix: "), &more, fix, width);
    }
    if verbose {
        for e in &f.evidence {
            wrap_into(out, &format!("{pad}· "), &more, e, width);
        }
    }
}
