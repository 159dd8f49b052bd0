//! `latscope cyclictest -b USEC --tracemark`, as cyclictest does it: when the break
//! stops the run, `hit latency threshold (VALUE > USEC)` is written to the kernel's
//! trace_marker and tracing is stopped (`0` into tracing_on), so the trace the user
//! records (trace-cmd, rteval's breaktrace) ends at the spike with the marker beside it.
//! Stopping tracing is the point of the option, so it is not undone; tracefs is mounted
//! for the run when nobody had it mounted, and unmounted after it (`finish`).
//!
//! Both files are opened just before the run (not when planning: `doctor -- cyclictest`
//! plans too); the marker is written once, by the measuring thread that broke, after its
//! loop ended, from a buffer on its stack (no allocation).

use crate::probe::timer::BreakMarker;
use crate::trace::record::tracefs::Tracefs;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// `--tracemark`'s marker: made with the plan, its files opened just before the run
/// (`open`), tracefs released after it (`finish`, or when dropped).
#[derive(Debug)]
pub struct TraceMarker {
    /// The `-b` value, and the unit the break value is printed in (ns per unit).
    limit: u64,
    unit_ns: u64,
    written: AtomicBool,
    files: Mutex<Option<Files>>,
    tracefs: Mutex<Option<Tracefs>>,
}

/// The open trace_marker and tracing_on of the top-level trace instance.
#[derive(Debug)]
struct Files {
    marker: File,
    tracing_on: File,
}

impl TraceMarker {
    pub fn new(limit: u64, unit_ns: u64) -> Self {
        Self {
            limit,
            unit_ns: unit_ns.max(1),
            written: AtomicBool::new(false),
            files: Mutex::new(None),
            tracefs: Mutex::new(None),
        }
    }

    /// Opens the files (mounting tracefs when nobody has); Err is cyclictest's warning,
    /// and the run goes on without a marker.
    pub fn open(&self) -> Result<(), String> {
        let tracefs =
            Tracefs::open().map_err(|e| format!("WARN: unable to open trace_marker file: {e}"))?;
        let root = tracefs.root().to_path_buf();
        if let Ok(mut held) = self.tracefs.lock() {
            *held = Some(tracefs);
        }
        let open = |name: &str| {
            let path = root.join(name);
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|_| format!("WARN: unable to open {name} file: {}", path.display()))
        };
        match (open("trace_marker"), open("tracing_on")) {
            (Ok(marker), Ok(tracing_on)) => {
                if let Ok(mut files) = self.files.lock() {
                    *files = Some(Files { marker, tracing_on });
                }
                Ok(())
            }
            (Err(e), _) | (_, Err(e)) => {
                self.finish();
                Err(e)
            }
        }
    }

    /// Unmounts tracefs if this run mounted it (the marker and the stopped trace stay in
    /// the kernel's buffer).
    pub fn finish(&self) {
        // Closed first: an open file keeps tracefs busy.
        if let Ok(mut files) = self.files.lock() {
            files.take();
        }
        if let Ok(mut held) = self.tracefs.lock() {
            if let Some(mut tracefs) = held.take() {
                let _ = tracefs.release();
            }
        }
    }
}

impl Drop for TraceMarker {
    fn drop(&mut self) {
        self.finish();
    }
}

impl BreakMarker for TraceMarker {
    fn mark(&self, latency_ns: u64) {
        if self.written.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(files) = self.files.lock() else {
            return;
        };
        let Some(files) = files.as_ref() else {
            return;
        };
        let mut buf = [0u8; 96];
        let len = {
            let mut cursor = std::io::Cursor::new(&mut buf[..]);
            let value = latency_ns / self.unit_ns;
            let _ = write!(cursor, "hit latency threshold ({value} > {})", self.limit);
            cursor.position() as usize
        };
        let _ = (&files.marker).write_all(&buf[..len]);
        let _ = (&files.tracing_on).write_all(b"0\n");
    }
}
