//! The condensed UTF-8 table every terminal rendering draws (run, study, trace parts,
//! comparison), so they look alike and none imports another for it.

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
