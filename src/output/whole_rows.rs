//! Appending text rows to a file so that a reader polling it, or a SIGKILL, never finds a
//! half-written row at its end: bytes are held until a row is complete, and each write(2)
//! ends at a row boundary and stays inside one page of the file where the rows allow it.
//!
//! Why inside a page: the kernel copies a write into the page cache page by page and raises
//! the file's size after each page, and a fatal signal is checked between pages. A write
//! within one page is therefore seen whole or not at all, by a reader and after a kill;
//! one crossing a page boundary may be seen (or left) cut at that boundary. So rows are
//! written in runs that end at the last row boundary before the next page boundary; only a
//! row that itself straddles a boundary is written by a write that crosses it.

use std::io::Write;

/// The unit the kernel makes a write visible in: the smallest page size Linux uses (a
/// larger page holds whole 4 KiB-aligned runs, so they stay within one page there too).
const PAGE: u64 = 4096;

/// A writer that passes only complete rows (ended by `\n`) to `out`, in writes that end
/// at row boundaries and do not cross a page boundary of the file (see the module note).
pub struct WholeRows<W: Write> {
    out: W,
    /// The file offset the next write lands at.
    offset: u64,
    held: Vec<u8>,
}

impl<W: Write> WholeRows<W> {
    /// Appends to `out`, whose next write lands at file offset `offset`.
    pub fn new(out: W, offset: u64) -> Self {
        Self {
            out,
            offset,
            held: Vec::with_capacity(2 * PAGE as usize),
        }
    }

    /// Writes every complete row still held; an incomplete last row is an error (the
    /// caller ends every row), so nothing is ever left half-written.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.write_rows(true)?;
        self.out.flush()?;
        match self.held.is_empty() {
            true => Ok(()),
            false => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a row without its line end was left unwritten",
            )),
        }
    }

    /// Writes the held rows that fill the rest of the current page (all complete rows
    /// when `all`), one write per run of rows.
    fn write_rows(&mut self, all: bool) -> std::io::Result<()> {
        loop {
            let room = (PAGE - self.offset % PAGE) as usize;
            let in_page = &self.held[..room.min(self.held.len())];
            let end = match in_page.iter().rposition(|&b| b == b'\n') {
                // Rows that end inside this page: wait for the page to fill unless `all`.
                Some(last) if all || self.held.len() >= room => last + 1,
                Some(_) => return Ok(()),
                // The first row straddles the page boundary: it alone, once complete.
                None => match self.held[in_page.len()..].iter().position(|&b| b == b'\n') {
                    Some(at) => in_page.len() + at + 1,
                    None => return Ok(()),
                },
            };
            self.out.write_all(&self.held[..end])?;
            self.offset += end as u64;
            self.held.drain(..end);
        }
    }
}

impl<W: Write> Write for WholeRows<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(buf);
        self.write_rows(false)?;
        Ok(buf.len())
    }

    /// Holds what is not a complete row yet: `finish` ends the rows.
    fn flush(&mut self) -> std::io::Result<()> {
        self.write_rows(true)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each write the wrapped writer receives.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl Write for &mut Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn rows(n: usize, width: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                let mut row = format!("{i:0>w$}", w = width - 1).into_bytes();
                row.push(b'\n');
                row
            })
            .collect()
    }

    /// Every write ends a row and stays in one page, unless it is one straddling row.
    fn check(writes: &Writes, start: u64, text: &[u8]) {
        let mut offset = start;
        let mut all = Vec::new();
        for w in &writes.0 {
            assert_eq!(w.last(), Some(&b'\n'), "a write ends mid-row");
            let crosses = offset / PAGE != (offset + w.len() as u64 - 1) / PAGE;
            let one_row = w.iter().filter(|&&b| b == b'\n').count() == 1;
            assert!(
                !crosses || one_row,
                "a write of several rows crosses a page"
            );
            offset += w.len() as u64;
            all.extend_from_slice(w);
        }
        assert_eq!(all, text, "every byte written once, in order");
    }

    #[test]
    fn writes_end_at_rows_and_stay_in_a_page() {
        for (start, width, chunk) in [
            (0, 37, 8192),
            (4000, 61, 100),
            (123, 7, 1),
            (4095, 9000, 777),
        ] {
            let text = rows(500, width);
            let mut writes = Writes::default();
            let mut w = WholeRows::new(&mut writes, start);
            for piece in text.chunks(chunk) {
                w.write_all(piece).unwrap();
            }
            w.finish().unwrap();
            check(&writes, start, &text);
        }
    }

    #[test]
    fn an_unended_row_is_refused_not_written() {
        let mut writes = Writes::default();
        let mut w = WholeRows::new(&mut writes, 0);
        w.write_all(b"a,b\nc,").unwrap();
        assert!(w.finish().is_err());
        assert_eq!(writes.0, vec![b"a,b\n".to_vec()]);
    }
}
