//! Results written to standard output, a pipe or a FIFO that nobody may be reading: every
//! wait for room is a step that gives up when a signal arrives during the write (issue
//! 34, item 4: `timer --export-json - | sleep 600` ignored SIGTERM, a second SIGTERM and
//! SIGINT), so a signal ends the run with what it saved elsewhere and exit code 130.

use crate::sys::fifo::{GiveUp, PollWriter};
use std::io::{self, Write};

/// Gives up once a terminating signal arrives after this call (one that came before,
/// and ended the measurement, does not stop the results being written).
pub fn at_next_signal() -> GiveUp<'static> {
    let before = crate::interrupt::signals_received();
    Box::new(move || {
        (crate::interrupt::signals_received() > before).then(|| {
            crate::interrupt::latest_signal()
                .unwrap_or("a signal")
                .to_string()
        })
    })
}

/// Standard output for a result: written in steps that a signal ends when it is a pipe,
/// FIFO, socket or terminal, plainly when it is a file; buffered.
pub fn stdout() -> io::Result<Box<dyn Write>> {
    // What print! left in std's buffer goes first (at most a line).
    io::stdout().flush()?;
    let out = io::stdout();
    Ok(if crate::sys::fifo::may_wait(&out) {
        Box::new(io::BufWriter::with_capacity(
            1 << 16,
            PollWriter::new(out, "standard output", at_next_signal()),
        ))
    } else {
        Box::new(io::BufWriter::with_capacity(1 << 16, out))
    })
}

/// Writes `bytes` to standard output as `stdout` does, and flushes.
pub fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = stdout()?;
    out.write_all(bytes)?;
    out.flush()
}

/// Writes `bytes` to standard error, giving up at the next signal when it waits (a
/// stderr pipe nobody reads must not hold the run either).
pub fn write_stderr(bytes: &[u8]) -> io::Result<()> {
    let err = io::stderr();
    if crate::sys::fifo::may_wait(&err) {
        PollWriter::new(err, "standard error", at_next_signal()).write_all(bytes)
    } else {
        err.lock().write_all(bytes)
    }
}
