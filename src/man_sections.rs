//! The man page sections clap_mangen has no place for (it puts every after-help line into
//! one refilled EXTRA paragraph): EXAMPLES, EXIT STATUS and SEE ALSO in man-pages(7)'s
//! order, read from each command's after-help, whose aligned tables stay tables (tbl).

/// One paragraph of a command's after-help, sorted by what it is.
#[derive(Debug, PartialEq)]
enum Block {
    /// The `Examples:` paragraph's command lines.
    Examples(Vec<String>),
    /// The command's own list of exit codes (code, meaning).
    ExitCodes(Vec<(String, String)>),
    /// Aligned rows (an option table, a list of presets): (option, meaning).
    Table(Vec<(String, String)>),
    /// Anything else: text to fill.
    Prose(String),
}

/// The roff text of the sections after OPTIONS (no preamble: it follows clap_mangen's
/// page). `name` is the page's name (`latscope-timer`); `subcommands` the pages the main
/// page points to.
pub fn render(name: &str, after_help: &str, subcommands: &[String]) -> String {
    let blocks = split(after_help);
    let mut out = String::new();
    let notes: Vec<&Block> = blocks
        .iter()
        .filter(|b| matches!(b, Block::Table(_) | Block::Prose(_)))
        .collect();
    let own_codes = blocks.iter().find_map(|b| match b {
        Block::ExitCodes(codes) => Some(codes.clone()),
        _ => None,
    });
    // The drop-in's after-help is its option table: it reads as options, first.
    if name == "latscope-cyclictest" {
        section(&mut out, "CYCLICTEST OPTIONS", &notes);
        exit_status(&mut out, own_codes);
    } else {
        exit_status(&mut out, own_codes);
        section(&mut out, "NOTES", &notes);
    }
    for block in &blocks {
        if let Block::Examples(lines) = block {
            out.push_str(".SH EXAMPLES\n.RS 4\n.nf\n");
            for line in lines {
                out.push_str(&escape_line(line));
                out.push('\n');
            }
            out.push_str(".fi\n.RE\n");
        }
    }
    see_also(&mut out, name, subcommands);
    out
}

/// Splits the after-help at blank lines and sorts each paragraph (a table's heading
/// lines, such as `Presets (...):`, become prose before it).
fn split(text: &str) -> Vec<Block> {
    let prose =
        |lines: &[&str]| Block::Prose(lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "));
    let mut blocks = Vec::new();
    for p in text.split("\n\n").map(str::trim_end) {
        let lines: Vec<&str> = p.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            continue;
        }
        if let Some(first) = lines[0].strip_prefix("Examples:") {
            let first = Some(first.trim()).filter(|f| !f.is_empty());
            let rest = lines[1..].iter().map(|l| l.trim());
            let examples = first.into_iter().chain(rest).map(str::to_string).collect();
            blocks.push(Block::Examples(examples));
        } else if let Some(codes) = exit_codes(p) {
            blocks.push(Block::ExitCodes(codes));
        } else if let Some(rows) = table_rows(&lines) {
            let heading = lines.iter().take_while(|l| !starts_row(l)).count();
            if heading > 0 {
                blocks.push(prose(&lines[..heading]));
            }
            blocks.push(Block::Table(rows));
        } else {
            blocks.push(prose(&lines));
        }
    }
    blocks
}

/// A line of an aligned table starts indented or with an option's dash.
fn starts_row(line: &str) -> bool {
    line.starts_with([' ', '-'])
}

/// `Exit codes: 0 ready, 1 warnings, 7 not ready (a FAIL), 2 bad input.` as (code,
/// meaning) pairs; None when the paragraph is not such a list.
fn exit_codes(paragraph: &str) -> Option<Vec<(String, String)>> {
    let list = paragraph.strip_prefix("Exit codes:")?.trim();
    let list = list.strip_suffix('.').unwrap_or(list);
    list.split(", ")
        .map(|item| {
            let (code, meaning) = item.trim().split_once(' ')?;
            code.parse::<i32>().ok()?;
            Some((code.to_string(), meaning.to_string()))
        })
        .collect()
}

/// Rows of an aligned table: after its heading lines, every line splits into an option
/// part and a meaning at a run of two or more spaces ending at column 16 or later, or
/// continues the meaning above. None when that fails or gives fewer than two rows.
fn table_rows(lines: &[&str]) -> Option<Vec<(String, String)>> {
    if lines.len() < 2 || !lines[1..].iter().all(|l| starts_row(l)) {
        return None;
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    for line in lines.iter().skip_while(|l| !starts_row(l)) {
        match (split_row(line), rows.last_mut()) {
            (Some(row), _) => rows.push(row),
            (None, Some(row)) => {
                row.1.push(' ');
                row.1.push_str(line.trim());
            }
            (None, None) => return None,
        }
    }
    (rows.len() >= 2).then_some(rows)
}

/// `-a [CPUSET] --affinity     thread N on CPU N` -> (`-a [CPUSET] --affinity`, `thread
/// N on CPU N`); None for a line without such a gap after text (a wrapped meaning).
fn split_row(line: &str) -> Option<(String, String)> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b' ' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        let key = line[..start].trim();
        if i - start >= 2 && i >= 16 && i < bytes.len() && !key.is_empty() {
            return Some((key.to_string(), line[i..].trim().to_string()));
        }
    }
    None
}

/// NOTES (or the drop-in's option table): prose as paragraphs, tables through tbl with
/// the meaning column filled and wrapped.
fn section(out: &mut String, title: &str, blocks: &[&Block]) {
    if blocks.is_empty() {
        return;
    }
    out.push_str(&format!(".SH \"{title}\"\n"));
    for block in blocks {
        match block {
            Block::Prose(text) => {
                out.push_str(".PP\n");
                out.push_str(&escape_line(text));
                out.push('\n');
            }
            Block::Table(rows) => {
                out.push_str(".PP\n.TS\nlB lx.\n");
                for (key, meaning) in rows {
                    let (key, meaning) = (escape_cell(key), escape_line(meaning));
                    out.push_str(&format!("{key}\tT{{\n{meaning}\nT}}\n"));
                }
                out.push_str(".TE\n");
            }
            Block::Examples(_) | Block::ExitCodes(_) => {}
        }
    }
}

/// EXIT STATUS: the command's own codes, else every code latscope uses.
fn exit_status(out: &mut String, own: Option<Vec<(String, String)>>) {
    let codes = own.unwrap_or_else(|| {
        crate::error::EXIT_CODES
            .iter()
            .map(|(code, meaning)| (code.to_string(), meaning.to_string()))
            .collect()
    });
    out.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in codes {
        out.push_str(&format!(".TP\n.B {code}\n{}\n", escape_line(&meaning)));
    }
}

/// The pages a subcommand's page points to beside latscope(1): where its results go
/// and the tools it stands beside.
fn neighbours(subcommand: &str) -> &'static [&'static str] {
    match subcommand {
        "timer" => &[
            "latscope-report(1)",
            "latscope-compare(1)",
            "latscope-cyclictest(1)",
            "cyclictest(8)",
        ],
        "suite" => &[
            "latscope-timer(1)",
            "latscope-report(1)",
            "latscope-compare(1)",
        ],
        "wake" | "net" | "gpio" => &["latscope-timer(1)", "latscope-report(1)"],
        "noise" => &["latscope-timer(1)", "latscope-report(1)", "oslat(8)"],
        "load" => &["latscope-timer(1)", "stress-ng(1)"],
        "report" => &["latscope-compare(1)", "latscope-timer(1)"],
        "compare" => &["latscope-report(1)", "latscope-timer(1)"],
        "restore" => &["latscope-timer(1)"],
        "cyclictest" => &["cyclictest(8)", "latscope-timer(1)", "latscope-report(1)"],
        "doctor" => &["latscope-timer(1)", "latscope-suite(1)"],
        _ => &[],
    }
}

/// SEE ALSO: the main page lists every subcommand's page; a subcommand's names the main
/// page and its neighbours.
fn see_also(out: &mut String, name: &str, subcommands: &[String]) {
    let related: Vec<String> = match name.strip_prefix("latscope-") {
        None => subcommands
            .iter()
            .map(|s| format!("latscope-{s}(1)"))
            .chain(["cyclictest(8)".to_string()])
            .collect(),
        Some(sub) => std::iter::once("latscope(1)")
            .chain(neighbours(sub).iter().copied())
            .map(str::to_string)
            .collect(),
    };
    out.push_str(".SH \"SEE ALSO\"\n");
    let last = related.len().saturating_sub(1);
    for (i, page) in related.iter().enumerate() {
        let (title, section) = page.split_once('(').unwrap_or((page, "1)"));
        let comma = if i < last { "," } else { "" };
        out.push_str(&format!(".BR {} ({section}{comma}\n", escape_cell(title)));
    }
}

/// Text for a roff line: backslashes and hyphens escaped, a leading `.` or `'` made
/// literal.
fn escape_line(text: &str) -> String {
    let escaped = escape_cell(text);
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn escape_cell(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_exit_codes_tables_and_prose_are_told_apart() {
        let text = "Intro line one\nline two.\n\nOptions:\n-a LIST   --cpus=LIST     the CPUs\n\
-d DIST  --distance=DIST   interval of thread N\n                           += N x DIST\n\
         --laptop          leave it\n\nExit codes: 0 ready, 7 not ready (a FAIL).\n\n\
Examples:\n  latscope doctor     # checks";
        let blocks = split(text);
        assert_eq!(blocks[0], Block::Prose("Intro line one line two.".into()));
        assert_eq!(blocks[1], Block::Prose("Options:".into()));
        let row = |k: &str, m: &str| (k.to_string(), m.to_string());
        assert_eq!(
            blocks[2],
            Block::Table(vec![
                row("-a LIST   --cpus=LIST", "the CPUs"),
                row(
                    "-d DIST  --distance=DIST",
                    "interval of thread N += N x DIST"
                ),
                row("--laptop", "leave it"),
            ])
        );
        assert_eq!(
            blocks[3],
            Block::ExitCodes(vec![row("0", "ready"), row("7", "not ready (a FAIL)")])
        );
        assert_eq!(
            blocks[4],
            Block::Examples(vec!["latscope doctor     # checks".into()])
        );
    }

    #[test]
    fn every_page_gets_exit_status_examples_and_see_also_in_order() {
        let roff = render(
            "latscope-report",
            "Examples:\n  latscope report a.json",
            &[],
        );
        let exit = roff.find(".SH \"EXIT STATUS\"").unwrap();
        let examples = roff.find(".SH EXAMPLES").unwrap();
        let see = roff.find(".SH \"SEE ALSO\"").unwrap();
        assert!(exit < examples && examples < see, "{roff}");
        assert!(roff.contains(".BR latscope (1),\n"), "{roff}");
        assert!(roff.contains("latscope report a.json"), "{roff}");
    }
}
