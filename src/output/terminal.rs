//! Text from result files and boards made harmless for a terminal (issue 34, item 9):
//! `report` printed the ESC and OSC sequences a result file held (a window title, an
//! OSC 52 clipboard write, clear screen) and a board's output was passed through as it
//! came. Control characters are shown as Rust escapes (`\u{1b}`), never obeyed; a
//! board's progress line keeps the few cursor and colour codes it is drawn with. By hand:
//! the one rule (control characters but newline and tab) is shorter than a crate's API.

use crate::output::exports::Format;
use std::borrow::Cow;

/// Whether `c` is shown as an escape: every control character (C0, DEL, C1) but newline
/// and tab.
fn escaped(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with every control character but newline and tab (a CR before a newline kept)
/// written as its escape, so an ESC, CSI or OSC sequence is shown, not obeyed.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            out.push(c);
        } else if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Bytes of text escaped as `escape_controls` does (bytes that are not UTF-8 are kept:
/// a terminal shows them as replacement characters).
pub fn escape_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(bytes) {
        Ok(text) => match escape_controls(text) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
        Err(_) => {
            let mut out = Vec::with_capacity(bytes.len());
            for chunk in bytes.utf8_chunks() {
                out.extend_from_slice(escape_controls(chunk.valid()).as_bytes());
                out.extend_from_slice(chunk.invalid());
            }
            Cow::Owned(out)
        }
    }
}

/// A rendered export as it may reach a terminal: the text formats (table, Markdown, CSV,
/// JUnit, LAVA) escaped; JSON (serde escapes control characters) and HTML (a browser's)
/// as they are.
pub fn escape_export(format: Format, bytes: Vec<u8>) -> Vec<u8> {
    match format {
        Format::Json | Format::Html => bytes,
        _ => match escape_bytes(&bytes) {
            Cow::Borrowed(_) => bytes,
            Cow::Owned(escaped) => escaped,
        },
    }
}

/// The longest escape sequence a progress line is drawn with that is kept whole across
/// reads; a longer one is escaped.
const MAX_SEQUENCE: usize = 16;

/// A board's terminal output passed on as it streams in: text, newlines, `\r` and the
/// CSI sequences a progress line is drawn with (colours `m`, erase in line `K`, cursor
/// moves `A B C D G`, cursor shown or hidden `?25h`/`?25l`) pass; every other control
/// character or sequence (OSC titles and clipboard writes, clear screen, modes) is
/// escaped. A sequence cut between two reads is held until its end arrives.
#[derive(Debug, Default)]
pub struct ProgressFilter {
    pending: Vec<u8>,
}

impl ProgressFilter {
    /// Filters `input` into `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(input);
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                0x1b => match csi_end(&bytes[i..]) {
                    Some(Some(len)) => {
                        out.extend_from_slice(&bytes[i..i + len]);
                        i += len;
                    }
                    // Cut off: wait for the rest (a short wait only).
                    None if bytes.len() - i <= MAX_SEQUENCE => {
                        self.pending = bytes[i..].to_vec();
                        return;
                    }
                    _ => {
                        out.extend_from_slice(b"\\u{1b}");
                        i += 1;
                    }
                },
                b'\n' | b'\r' | b'\t' => {
                    out.push(bytes[i]);
                    i += 1;
                }
                _ => {
                    let mut end = bytes[i..]
                        .iter()
                        .position(|&b| b == 0x1b || b == b'\n' || b == b'\r' || b == b'\t')
                        .map_or(bytes.len(), |n| i + n);
                    if end == bytes.len() {
                        // A character cut between reads waits for its last bytes (a C1
                        // control is two bytes in UTF-8).
                        if let Err(e) = std::str::from_utf8(&bytes[i..end]) {
                            if e.error_len().is_none() {
                                end = i + e.valid_up_to();
                                self.pending = bytes[end..].to_vec();
                            }
                        }
                    }
                    out.extend_from_slice(&escape_bytes(&bytes[i..end]));
                    if !self.pending.is_empty() {
                        return;
                    }
                    i = end;
                }
            }
        }
    }

    /// What is held at the end of the stream, escaped.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let rest = std::mem::take(&mut self.pending);
        out.extend_from_slice(&escape_bytes(&rest));
    }
}

/// At an ESC: `Some(Some(len))` for a whole allowed CSI sequence of `len` bytes,
/// `Some(None)` for anything else, `None` when the bytes end before it does.
fn csi_end(bytes: &[u8]) -> Option<Option<usize>> {
    match bytes.get(1) {
        None => return None,
        Some(b'[') => {}
        Some(_) => return Some(None),
    }
    let params_end = bytes[2..]
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';' || *b == b'?'))
        .map(|n| n + 2);
    let at = params_end?;
    let params = &bytes[2..at];
    let allowed = match bytes[at] {
        b'm' | b'K' | b'A' | b'B' | b'C' | b'D' | b'G' => !params.contains(&b'?'),
        b'h' | b'l' => params == b"?25",
        _ => false,
    };
    Some(allowed.then_some(at + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The audit's sequences: a window title (OSC 0), an OSC 52 clipboard write, clear
    /// screen, a bare ESC and a C1 CSI are shown as escapes; text, newlines and tabs stay.
    #[test]
    fn sequences_in_text_are_shown_not_obeyed() {
        let evil =
            "a\u{1b}]0;owned\u{7}b\u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}[2J\u{1b}c\u{9b}31m\tz\r\n";
        let shown = escape_controls(evil);
        assert_eq!(
            shown,
            "a\\u{1b}]0;owned\\u{7}b\\u{1b}]52;c;ZWNobyBoaQ==\\u{7}\\u{1b}[2J\\u{1b}c\\u{9b}31m\tz\r\n"
        );
        assert!(!shown.replace("\r\n", "\n").chars().any(escaped));
        assert!(matches!(escape_controls("plain µs\n"), Cow::Borrowed(_)));
        let bytes = [b'x', 0x1b, b'[', b'2', b'J', 0xff, b'\n'];
        assert_eq!(&*escape_bytes(&bytes), b"x\\u{1b}[2J\xff\n");
    }

    /// A progress line keeps its drawing codes, even cut between reads; an OSC title,
    /// clear screen and the alternate screen are escaped.
    #[test]
    fn a_progress_line_keeps_its_codes_and_loses_the_rest() {
        let mut f = ProgressFilter::default();
        let mut out = Vec::new();
        f.feed(b"\r\x1b[2K 1s timer \x1b[3", &mut out);
        f.feed(
            b"2mok\x1b[0m\x1b[?25l\x1b]0;title\x07\x1b[2J\x1b[?1049h\n",
            &mut out,
        );
        f.finish(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\r\x1b[2K 1s timer \x1b[32mok\x1b[0m\x1b[?25l\\u{1b}]0;title\\u{7}\\u{1b}[2J\\u{1b}[?1049h\n"
        );
        let mut out = Vec::new();
        f.feed(b"end\xc2", &mut out);
        f.feed(b"\x9b2J\x1b", &mut out);
        f.finish(&mut out);
        assert_eq!(out, b"end\\u{9b}2J\\u{1b}");
    }
}
