//! What a package installs beside the binary, generated at run time from the clap
//! `Command` (src/cli/mod.rs) so it never drifts from the options: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), one page per subcommand.

use crate::cli::Cli;
use clap::CommandFactory;
use clap_complete::Shell;

/// The command line as clap sees it, built (so subcommands know their full names, like
/// `latscope-timer`), without the `help` subcommand, which needs no page.
fn built_command() -> clap::Command {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// The completion script for `shell`, covering every subcommand and option.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut command = built_command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "latscope", &mut script);
    script
}

/// One man page: its file name (`latscope-timer.1`) and its roff text.
pub struct ManPage {
    pub file_name: String,
    pub roff: Vec<u8>,
}

/// The main page, `latscope.1`, which lists the subcommands' pages.
pub fn main_man_page() -> std::io::Result<ManPage> {
    render_man_page(built_command())
}

/// The main page and one page per subcommand (nested ones too), in the order of the
/// command line's help; hidden subcommands get none.
pub fn all_man_pages() -> std::io::Result<Vec<ManPage>> {
    let mut pages = Vec::new();
    collect_man_pages(built_command(), &mut pages)?;
    Ok(pages)
}

fn collect_man_pages(command: clap::Command, pages: &mut Vec<ManPage>) -> std::io::Result<()> {
    let subcommands: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .cloned()
        .collect();
    pages.push(render_man_page(command)?);
    for sub in subcommands {
        collect_man_pages(sub, pages)?;
    }
    Ok(())
}

fn render_man_page(command: clap::Command) -> std::io::Result<ManPage> {
    // Every page names the build (clap only gives the top command a version), and the
    // commit's date: roff needs a non-empty date field or the later fields shift left.
    let date = match crate::build_info::COMMIT_DATE {
        "" => "undated",
        date => date,
    };
    // The after-help becomes EXIT STATUS, NOTES, EXAMPLES and SEE ALSO (man_sections)
    // instead of clap_mangen's one refilled EXTRA paragraph.
    let after_help = command
        .get_after_long_help()
        .or_else(|| command.get_after_help())
        .map(|text| text.to_string())
        .unwrap_or_default();
    let subcommands: Vec<String> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| sub.get_name().to_string())
        .collect();
    let command = command
        .after_help(None::<&str>)
        .after_long_help(None::<&str>);
    let page = clap_mangen::Man::new(command)
        .date(date)
        .source(format!("latscope {}", crate::build_info::VERSION))
        .manual("latscope manual");
    let file_name = page.get_filename();
    let name = file_name.trim_end_matches(".1");
    // `'\" t` first: man runs tbl for the tables of the sections below.
    let mut roff = b"'\\\" t\n".to_vec();
    page.render(&mut roff)?;
    let sections = crate::man_sections::render(name, &after_help, &subcommands);
    roff.extend_from_slice(sections.as_bytes());
    Ok(ManPage {
        file_name,
        roff: escape_non_ascii(&roff),
    })
}

/// Writes every non-ASCII character (µ, ×, —) as a roff glyph escape (`\[u00B5]`), so the
/// page reads the same under groff without preconv, mandoc, or an old `man`.
fn escape_non_ascii(roff: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(roff);
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            escaped.push(c);
        } else {
            escaped.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    escaped.into_bytes()
}
