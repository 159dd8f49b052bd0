//! A board's output relayed to stderr while its run goes: as it comes for one board
//! (its progress line redrawn in place), line by line with the host before each line for
//! several. Either way control sequences are escaped but for the few a progress line is
//! drawn with (output::terminal), so a board cannot set the window title, write the
//! clipboard or clear the screen here (issue 34, item 9), and a line without end is cut.

use crate::output::terminal::{escape_controls, ProgressFilter};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Several boards: a progress line of one board printed at most this often.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);
/// Several boards: the longest line of a board's output kept (the rest of it dropped).
const MAX_LINE: usize = 64 << 10;

/// Copies a board's terminal output (or ssh's stderr) to stderr until it ends.
pub fn relay(stream: impl Read, prefix: Option<&str>) {
    match prefix {
        None => relay_as_it_comes(stream),
        Some(prefix) => relay_lines(stream, prefix),
    }
}

/// One board: `\r\n` (the terminal's newline) made `\n`, a lone `\r` (the progress
/// line's redraw) kept, filtered.
fn relay_as_it_comes(mut stream: impl Read) {
    let mut buf = [0u8; 4096];
    let mut filter = ProgressFilter::default();
    let mut pending_cr = false;
    let mut out = Vec::new();
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut plain = Vec::with_capacity(n + 1);
        for &b in &buf[..n] {
            if pending_cr && b != b'\n' {
                plain.push(b'\r');
            }
            pending_cr = b == b'\r';
            if !pending_cr {
                plain.push(b);
            }
        }
        out.clear();
        filter.feed(&plain, &mut out);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&out).and_then(|()| err.flush());
    }
    out.clear();
    if pending_cr {
        filter.feed(b"\r", &mut out);
    }
    filter.finish(&mut out);
    let _ = std::io::stderr().write_all(&out);
}

/// Several boards: each line with `prefix` before it, a progress line (ended by a lone
/// `\r`) at most every PROGRESS_EVERY, control sequences dropped or escaped.
fn relay_lines(mut stream: impl Read, prefix: &str) {
    let mut buf = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    let mut last_progress: Option<Instant> = None;
    let mut pending_cr = false;
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut out = Vec::new();
        for &b in &buf[..n] {
            // `\r\n` ends a line; a `\r` alone ends a progress line's redraw.
            if pending_cr && b != b'\n' {
                let text = shown(&line);
                if !text.is_empty() && last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
                    let _ = writeln!(out, "{prefix}{text}");
                    last_progress = Some(Instant::now());
                }
                line.clear();
            }
            pending_cr = b == b'\r';
            match b {
                b'\n' => {
                    let text = shown(&line);
                    if !text.is_empty() {
                        let _ = writeln!(out, "{prefix}{text}");
                    }
                    line.clear();
                }
                b'\r' => {}
                _ if line.len() < MAX_LINE => line.push(b),
                _ => {}
            }
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&out).and_then(|()| err.flush());
    }
    let text = shown(&line);
    if !text.is_empty() {
        let _ = writeln!(std::io::stderr(), "{prefix}{text}");
    }
}

/// A line as shown after a host's name: its cursor and colour codes dropped, every
/// other control character escaped, trimmed.
fn shown(line: &[u8]) -> String {
    let text = without_escapes(&String::from_utf8_lossy(line));
    escape_controls(&text).into_owned()
}

/// A progress line without its terminal control sequences (`ESC [ ... letter`: the
/// cursor and erase codes the progress bar draws with), trimmed. By hand: these dozen lines
/// are all of ANSI that a progress line uses.
fn without_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for d in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn progress_lines_lose_their_control_codes() {
        assert_eq!(
            super::without_escapes("\u{1b}[2K⠁   1s timer  8% | cpu0: 248\u{1b}[0m "),
            "⠁   1s timer  8% | cpu0: 248"
        );
        assert_eq!(
            super::shown(b"\x1b[2Kok\x1b]0;title\x07 \x9b"),
            "ok0;title\\u{7} \u{fffd}"
        );
    }
}
