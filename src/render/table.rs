//! The condensed UTF-8 table every terminal rendering draws (run, study, trace parts,
//! comparison), so they look alike and none imports another for it; and the width it
//! must fit (the terminal's, or `COLUMNS` when stdout is not one).

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

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

/// The width terminal tables must fit: the terminal's when stdout is one, else `COLUMNS`
/// when set (so a pipe or a script keeps the full table unless it asks).
pub fn terminal_width() -> Option<usize> {
    if let Some(w) = Table::new().width() {
        return Some(usize::from(w));
    }
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|w| *w > 0)
}

/// The widest line of a rendered table, in characters.
pub fn text_width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}
