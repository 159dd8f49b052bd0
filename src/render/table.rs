//! The terminal's tables and prose, fitted to its width: the condensed UTF-8 table every
//! terminal rendering draws (run, study, loads, trace parts, worst case, comparison),
//! the width to fit (the terminal's, `COLUMNS`, else 80), `fit_table` (what is constant
//! said once above, optional columns left out with a note, a wide table split, long
//! labels wrapped inside their cells) and `wrap` (prose lines with a hanging indent), so
//! every command fits alike and none imports another for it.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};

/// The width when none is known: a pipe without `COLUMNS`, or a serial console (which
/// reports 0 columns).
pub const DEFAULT_WIDTH: usize = 80;

/// A condensed UTF-8 table of `header` and `rows`, the columns from `first_numeric`
/// on right-aligned.
pub fn condensed_table(header: Vec<String>, rows: Vec<Vec<String>>, first_numeric: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header);
    for row in rows {
        t.add_row(row);
    }
    for i in first_numeric..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The width terminal output must fit: the terminal's when stdout is one, else `COLUMNS`
/// when set, else 80; 0 (a serial console's answer) counts as unknown.
pub fn terminal_width() -> usize {
    let tty = Table::new().width().map(usize::from).filter(|w| *w > 0);
    tty.unwrap_or_else(fallback_width)
}

/// The width stderr's prose (warnings, notes) must fit: its terminal's, else as
/// `fallback_width`.
pub fn stderr_width() -> usize {
    crate::sys::term_size::stderr_columns()
        .filter(|w| *w > 0)
        .unwrap_or_else(fallback_width)
}

/// The width when the terminal says none (or 0): `COLUMNS` when set and above 0, else 80.
pub fn fallback_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|w: &usize| *w > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

/// The widest line of a rendered text, in characters.
pub fn text_width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Every line of `text` wrapped at `width`, continuation lines indented two spaces more
/// than the line they continue; a trailing newline kept; a table's lines (they start with
/// a box-drawing character: `fit_table` fitted them) left alone. textwrap breaks at
/// spaces (and inside a word longer than the width, so no line is ever longer).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        let table = line.starts_with(['│', '┌', '╞', '├', '└', '╭', '╰']);
        if table || line.chars().count() <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let hang = " ".repeat((indent + 2).min(width / 2));
        let options = textwrap::Options::new(width.max(8))
            .initial_indent(&line[..indent])
            .subsequent_indent(&hang)
            .word_splitter(textwrap::WordSplitter::NoHyphenation)
            .break_words(true);
        for part in textwrap::wrap(line.trim_start(), options) {
            out.push_str(part.trim_end());
            out.push('\n');
        }
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

/// A table to fit: its header and rows, where the label columns end, and what may go.
pub struct Fit<'a> {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns before this one are labels (left-aligned; said once above the table when
    /// every row has the same value); the rest are right-aligned values.
    pub first_numeric: usize,
    /// Value columns that may be left out, in this order, while the table is too wide
    /// (named in a note below it).
    pub optional: &'a [&'a str],
    /// Where the columns left out can be read (`--export-csv has all`), for the note.
    pub left_out_hint: &'a str,
    /// Said first in the line above the table (`latencies in µs`).
    pub above: Option<String>,
}

impl<'a> Fit<'a> {
    /// A table whose columns before `first_numeric` are labels; nothing optional.
    pub fn new(header: Vec<String>, rows: Vec<Vec<String>>, first_numeric: usize) -> Self {
        Fit {
            header,
            rows,
            first_numeric,
            optional: &[],
            left_out_hint: "",
            above: None,
        }
    }
}

/// Removes column `i` from the header and every row.
fn remove_column(header: &mut Vec<String>, rows: &mut [Vec<String>], i: usize) {
    header.remove(i);
    for r in rows.iter_mut() {
        if i < r.len() {
            r.remove(i);
        }
    }
}

/// The label columns with one value in every row (of two rows or more), taken out of the
/// table as `header value` phrases.
fn lift_constants(fit: &mut Fit) -> Vec<String> {
    let mut said = Vec::new();
    if fit.rows.len() < 2 {
        return said;
    }
    let mut i = 0;
    while i < fit.first_numeric.min(fit.header.len()) {
        let first = fit.rows[0].get(i).cloned().unwrap_or_default();
        let constant =
            !first.is_empty() && first != "–" && fit.rows.iter().all(|r| r.get(i) == Some(&first));
        // Keep one label column, so every row still has a name.
        if constant && fit.first_numeric > 1 {
            said.push(format!("{} {first}", fit.header[i]));
            remove_column(&mut fit.header, &mut fit.rows, i);
            fit.first_numeric -= 1;
        } else {
            i += 1;
        }
    }
    said
}

/// Fits a table to `width`: the constant label columns said once in a line above it
/// (after `above`), then, while it is too wide, the optional columns left out in order
/// (a note says which), then the value columns split into several tables that each fit
/// beside the labels (rows with nothing in a later part left out of it), and labels still
/// too long wrapped inside their cells. No line is longer than `width` unless one cell
/// word is.
pub fn fit_table(mut fit: Fit, width: usize) -> String {
    let mut above: Vec<String> = fit.above.take().into_iter().collect();
    above.extend(lift_constants(&mut fit));
    let mut out = String::new();
    if !above.is_empty() {
        out.push_str(&wrap(&above.join(" · "), width));
        out.push('\n');
    }
    let render = |h: &[String], r: &[Vec<String>], first: usize| {
        condensed_table(h.to_vec(), r.to_vec(), first).to_string()
    };
    let mut text = render(&fit.header, &fit.rows, fit.first_numeric);
    let mut dropped = Vec::new();
    for name in fit.optional {
        if text_width(&text) <= width {
            break;
        }
        if let Some(i) = fit.header.iter().position(|h| h == name) {
            remove_column(&mut fit.header, &mut fit.rows, i);
            dropped.push(*name);
            text = render(&fit.header, &fit.rows, fit.first_numeric);
        }
    }
    if text_width(&text) <= width {
        out.push_str(&text);
        out.push('\n');
    } else {
        for part in split_columns(&fit, width) {
            out.push_str(&part);
            out.push('\n');
        }
    }
    if !dropped.is_empty() {
        let hint = if fit.left_out_hint.is_empty() {
            String::new()
        } else {
            format!("; {}", fit.left_out_hint)
        };
        let note = format!(
            "({} left out to fit {width} columns{hint})",
            dropped.join(", ")
        );
        out.push_str(&wrap(&note, width));
        out.push('\n');
    }
    out
}

/// The widest line of a cell (cells may hold several lines).
fn cell_width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The label columns' cells wrapped onto several lines where the labels would take more
/// than `budget` characters of each line (borders included): the widest columns are
/// capped first, so short labels stay whole.
fn wrap_labels(header: &mut [String], rows: &mut [Vec<String>], labels: usize, budget: usize) {
    let natural: Vec<usize> = (0..labels)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .chain(std::iter::once(&header[i]))
                .map(|c| cell_width(c))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let total =
        |cap: usize| -> usize { natural.iter().map(|&n| n.min(cap) + 3).sum::<usize>() + 1 };
    let widest = natural.iter().copied().max().unwrap_or(0);
    let mut cap = widest;
    while cap > 6 && total(cap) > budget {
        cap -= 1;
    }
    if cap >= widest {
        return;
    }
    let wrap_cell = |text: &str| -> String {
        let options = textwrap::Options::new(cap)
            .word_splitter(textwrap::WordSplitter::NoHyphenation)
            .break_words(true);
        textwrap::wrap(text, options).join("\n")
    };
    for i in (0..labels).filter(|&i| natural[i] > cap) {
        header[i] = wrap_cell(&header[i]);
        for r in rows.iter_mut() {
            if let Some(c) = r.get_mut(i) {
                *c = wrap_cell(c);
            }
        }
    }
}

/// The value columns in consecutive groups, each rendered beside the label columns and
/// fitting `width` where a group of one column can; a later group leaves out the rows
/// with nothing in it. Labels wider than what the values leave (at least half the width)
/// are wrapped inside their cells first.
fn split_columns(fit: &Fit, width: usize) -> Vec<String> {
    let labels = fit.first_numeric.min(fit.header.len());
    let (mut header, mut rows) = (fit.header.clone(), fit.rows.clone());
    let values_width: usize = (labels..header.len())
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .chain(std::iter::once(&header[i]))
                .map(|c| cell_width(c))
                .max()
                .unwrap_or(0)
                + 3
        })
        .sum();
    wrap_labels(
        &mut header,
        &mut rows,
        labels,
        (width / 2).max(width.saturating_sub(values_width)),
    );
    let part = |cols: &[usize], skip_empty: bool| -> (Vec<String>, Vec<Vec<String>>) {
        let pick = |r: &[String]| -> Vec<String> {
            (0..labels)
                .chain(cols.iter().copied())
                .map(|i| r.get(i).cloned().unwrap_or_default())
                .collect()
        };
        let kept = rows
            .iter()
            .filter(|r| {
                !skip_empty
                    || cols
                        .iter()
                        .any(|&i| r.get(i).is_some_and(|c| !c.is_empty()))
            })
            .map(|r| pick(r))
            .collect();
        (pick(&header), kept)
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for col in labels..header.len() {
        let mut trial = current.clone();
        trial.push(col);
        let (h, r) = part(&trial, false);
        if current.is_empty() || text_width(&condensed_table(h, r, labels).to_string()) <= width {
            current = trial;
        } else {
            groups.push(std::mem::replace(&mut current, vec![col]));
        }
    }
    if !current.is_empty() || groups.is_empty() {
        groups.push(current);
    }
    groups
        .iter()
        .enumerate()
        .map(|(g, cols)| {
            let (h, r) = part(cols, g > 0);
            let mut t = condensed_table(h, r, labels);
            let text = t.to_string();
            if text_width(&text) <= width {
                return text;
            }
            // One value column wider than what is left: comfy-table wraps the cells.
            t.set_content_arrangement(ContentArrangement::Dynamic);
            t.set_width(u16::try_from(width).unwrap_or(u16::MAX));
            t.to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize, cols: usize) -> Vec<Vec<String>> {
        (0..n)
            .map(|r| {
                let mut row = vec![
                    format!("scenario number {r} with a long name"),
                    "fifo 95".into(),
                ];
                row.extend((0..cols).map(|c| format!("{}.{:02}", 1000 * (c + 1) + r, r)));
                row
            })
            .collect()
    }

    fn header(cols: usize) -> Vec<String> {
        let mut h = vec!["scenario".to_string(), "policy".to_string()];
        h.extend((0..cols).map(|c| format!("stat{c}")));
        h
    }

    #[test]
    fn constant_labels_are_said_once_and_every_width_is_kept() {
        for width in [40, 60, 80, 120, 200] {
            let text = fit_table(Fit::new(header(12), rows(5, 12), 2), width);
            assert!(text_width(&text) <= width, "{width}:\n{text}");
            assert!(text.starts_with("policy fifo 95\n"), "{text}");
            for c in 0..12 {
                assert!(
                    text.contains(&format!("stat{c}")),
                    "{width}: stat{c} lost:\n{text}"
                );
            }
            for r in 0..5 {
                assert!(text.contains(&format!("{}.{:02}", 12_000 + r, r)), "{text}");
            }
        }
    }

    #[test]
    fn optional_columns_go_first_and_a_note_says_so() {
        let fit = Fit {
            optional: &["stat0", "stat1"],
            left_out_hint: "--export-csv has all",
            above: Some("latencies in µs".into()),
            ..Fit::new(header(8), rows(2, 8), 2)
        };
        let text = fit_table(fit, 90);
        assert!(text_width(&text) <= 90, "{text}");
        assert!(
            text.starts_with("latencies in µs · policy fifo 95\n"),
            "{text}"
        );
        assert!(
            text.contains("(stat0, stat1 left out to fit 90 columns; --export-csv has all)"),
            "{text}"
        );
    }

    #[test]
    fn a_later_part_leaves_out_rows_with_nothing_in_it() {
        let h: Vec<String> = ["statistic", "a", "b", "interval"]
            .map(String::from)
            .to_vec();
        let mut r = vec![
            vec![
                "p99".into(),
                "10.00".into(),
                "12.00".into(),
                "9.00–11.00 | 11.00–13.00".into(),
            ],
            vec!["min".into(), "1.00".into(), "2.00".into(), String::new()],
        ];
        r[0][3] = "9.00–11.00 | 11.00–13.00".repeat(2);
        let text = fit_table(Fit::new(h, r, 1), 40);
        assert!(text_width(&text) <= 40, "{text}");
        assert_eq!(text.matches("min").count(), 1, "{text}");
        assert_eq!(text.matches("p99").count(), 2, "{text}");
    }

    #[test]
    fn prose_wraps_with_a_hanging_indent() {
        let line = "worst 3 s on CPU 1 in timer clock-nanosleep 300 µs load=mem-access:50%,cpus=1 (10000× the 300 µs deadline) · 3000 missed";
        let text = wrap(line, 60);
        assert!(text_width(&text) <= 60, "{text}");
        assert!(text.lines().skip(1).all(|l| l.starts_with("  ")), "{text}");
        assert_eq!(
            text.split_whitespace().collect::<Vec<_>>(),
            line.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(wrap("short\n", 60), "short\n");
        assert!(text_width(&wrap(&"x".repeat(100), 30)) <= 30);
    }
}
