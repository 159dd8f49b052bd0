//! Markdown pieces every Markdown export builds from (run, comparison, doctor): cells
//! escaped, code spans, tables.

use std::fmt::Write;

/// Escapes what Markdown would read as markup inside a table cell.
pub fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' | '\\' | '*' | '_' | '`' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a code span inside a table cell: fenced by more backticks than it holds in a
/// row, its pipes escaped (GFM reads them as cell ends even in code), lines joined.
pub fn md_code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A Markdown table; columns from `first_numeric` on are right-aligned.
pub fn md_table(header: &[String], rows: &[Vec<String>], first_numeric: usize) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| md_cell(c)).collect())
        .collect();
    md_table_of_cells(header, &rows, first_numeric)
}

/// A Markdown table of cells already in Markdown (`md_cell`, `md_code`); the header is
/// escaped here.
pub fn md_table_of_cells(header: &[String], rows: &[Vec<String>], first_numeric: usize) -> String {
    let mut out = String::new();
    let cells = |r: &[String]| r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ");
    let _ = writeln!(out, "| {} |", cells(header));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i >= first_numeric { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::md_code;

    #[test]
    fn a_code_span_holds_backticks_and_pipes() {
        assert_eq!(md_code("latscope timer -l 300"), "`latscope timer -l 300`");
        assert_eq!(md_code("a | b"), "`a \\| b`");
        assert_eq!(md_code("echo `x` ``y``"), "``` echo `x` ``y`` ```");
        assert_eq!(md_code("`x`"), "`` `x` ``");
        assert_eq!(md_code("a\nb"), "`a b`");
    }
}
