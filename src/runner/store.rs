//! Where a run's results go while it runs: each finished scenario is appended once to
//! the journal (the `--export-json` file, or an unnamed temporary file when there is none
//! to grow) and its raw series to `--raw`, then only its summary stays in memory. The cost
//! of saving a scenario does not grow with the scenarios before it.

use crate::output::whole_rows::WholeRows;
use crate::plan::Plan;
use crate::result::journal::{self, Line};
use crate::result::{RawSeries, Run, Scenario};
use anyhow::Context;
use std::fs::File;
use std::io::{BufRead, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// The journal and the raw file of a run.
pub struct Store {
    journal: File,
    /// The `--export-json` file when the journal is it (checkpoints rewrite it).
    named: Option<PathBuf>,
    raw: Option<RawSink>,
    /// Seconds spent appending, per scenario (the benchmark's write time), ns.
    pub write_ns: Vec<u64>,
}

/// `--raw`: created with the first scenario's rows (and the header), appended after.
struct RawSink {
    path: PathBuf,
    file: Option<File>,
    /// A FIFO, device or `-`: every row waits in memory for the end.
    held: Vec<(String, RawSeries)>,
    started: bool,
}

impl Store {
    /// A new journal holding `run`'s header and the scenarios it already has (kept by
    /// `--resume`).
    pub fn open(plan: &Plan, run: &Run) -> anyhow::Result<Self> {
        let header = journal::header_line(run)?;
        let mut kept = Vec::new();
        for s in &run.scenarios {
            kept.extend(journal::line(&Line::Scenario(Box::new(s.clone())))?);
        }
        let fill = |out: &mut dyn Write| {
            out.write_all(&header)?;
            out.write_all(&kept)
        };
        let named_path = plan
            .output
            .export_json
            .as_ref()
            .filter(|p| p.as_os_str() != "-");
        let (journal, named) = match named_path {
            Some(path) => match crate::output::atomic::create_growing(path, fill)
                .with_context(|| format!("writing {}", path.display()))?
            {
                Some(file) => (file, Some(path.clone())),
                None => (anonymous(&header, &kept)?, None),
            },
            None => (anonymous(&header, &kept)?, None),
        };
        let raw = plan.output.raw.clone().map(|path| RawSink {
            path,
            file: None,
            held: Vec::new(),
            started: false,
        });
        Ok(Self {
            journal,
            named,
            raw,
            write_ns: Vec::new(),
        })
    }

    /// Appends a finished scenario (one write, then fsync) and its raw series.
    pub fn append(&mut self, scenario: &Scenario, raw: Vec<RawSeries>) -> anyhow::Result<()> {
        let start = crate::sys::clock::monotonic_ns();
        let bytes = journal::line(&Line::Scenario(Box::new(scenario.clone())))?;
        self.journal
            .write_all(&bytes)
            .and_then(|()| self.journal.sync_data())
            .with_context(|| format!("writing {}", self.journal_name()))?;
        if let Some(sink) = &mut self.raw {
            sink.append(&scenario.name, raw)?;
        }
        self.write_ns
            .push(crate::sys::clock::monotonic_ns().saturating_sub(start));
        Ok(())
    }

    /// What a checkpoint rewrites: the named journal and a handle to copy it from.
    pub fn checkpoint_target(&self) -> Option<(PathBuf, File)> {
        let path = self.named.clone()?;
        Some((path, self.journal.try_clone().ok()?))
    }

    /// After a checkpoint replaced the journal file: append to the new one.
    pub fn replace_journal(&mut self, file: File) {
        self.journal = file;
    }

    fn journal_name(&self) -> String {
        match &self.named {
            Some(p) => p.display().to_string(),
            None => "the run's temporary journal".into(),
        }
    }

    /// Reads every finished scenario back, one at a time (memory: one scenario).
    pub fn each_scenario(
        &self,
        each: &mut dyn FnMut(Scenario) -> anyhow::Result<()>,
    ) -> anyhow::Result<Run> {
        let mut failed = None;
        let file = readable(&self.journal)
            .with_context(|| format!("reading {} back", self.journal_name()))?;
        let (header, _) = journal::read(
            std::io::BufReader::with_capacity(1 << 16, PreadReader::new(&file)),
            &self.journal_name(),
            |s| {
                if failed.is_none() {
                    failed = each(s).err();
                }
                Ok(())
            },
        )?;
        match failed {
            Some(e) => Err(e),
            None => Ok(header),
        }
    }

    /// Writes the raw rows held for a FIFO, device or stdout, and syncs the raw file.
    pub fn finish_raw(&mut self) -> anyhow::Result<()> {
        let Some(sink) = &mut self.raw else {
            return Ok(());
        };
        if let Some(f) = &sink.file {
            f.sync_data()
                .with_context(|| format!("writing {}", sink.path.display()))?;
        }
        if sink.file.is_none() {
            let held = std::mem::take(&mut sink.held);
            crate::output::atomic::write_atomically_with(&sink.path, |out| {
                crate::report::raw::write_raw(&held, out)
            })
            .with_context(|| format!("writing {}", sink.path.display()))?;
        }
        Ok(())
    }
}

/// An unnamed journal in the temporary directory (gone with the process).
fn anonymous(header: &[u8], kept: &[u8]) -> anyhow::Result<File> {
    let mut file = tempfile::tempfile().context("creating the run's temporary journal")?;
    file.write_all(header)?;
    file.write_all(kept)?;
    Ok(file)
}

impl RawSink {
    fn append(&mut self, name: &str, raw: Vec<RawSeries>) -> anyhow::Result<()> {
        let series: Vec<(String, RawSeries)> =
            raw.into_iter().map(|r| (name.to_string(), r)).collect();
        if series.is_empty() {
            return Ok(());
        }
        let context = || format!("writing {}", self.path.display());
        if !self.started {
            self.started = true;
            let first = |out: &mut dyn Write| crate::report::raw::write_raw(&series, out);
            self.file =
                crate::output::atomic::create_growing(&self.path, first).with_context(context)?;
            if self.file.is_none() {
                self.held.extend(series);
            }
            return Ok(());
        }
        match &mut self.file {
            Some(f) => {
                // Rows land whole: a reader polling the file, or a SIGKILL, never finds
                // a half row at its end (output/whole_rows.rs).
                let append = |f: &File| -> std::io::Result<()> {
                    let mut f = f;
                    let mut out = WholeRows::new(f, f.stream_position()?);
                    crate::report::raw::write_raw_rows(&series, &mut out)?;
                    out.finish()
                };
                append(f).with_context(context)?;
            }
            None => self.held.extend(series),
        }
        Ok(())
    }
}

/// Reads a file from its start with pread, leaving the descriptor's offset (where the
/// next append goes) alone.
pub struct PreadReader<'a> {
    file: &'a File,
    at: u64,
}

impl<'a> PreadReader<'a> {
    pub fn new(file: &'a File) -> Self {
        Self { file, at: 0 }
    }
}

impl std::io::Read for PreadReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The complete lines of a journal other than checkpoints, copied into `out` (a
/// checkpoint's rewrite keeps every scenario and drops the superseded partial line).
pub fn copy_scenario_lines(from: &File, out: &mut dyn Write) -> std::io::Result<()> {
    let from = readable(from)?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, PreadReader::new(&from));
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 || line.last() != Some(&b'\n') {
            return Ok(());
        }
        if !line.starts_with(b"{\"partial\":") {
            out.write_all(&line)?;
        }
    }
}

/// The same file opened again for reading (a journal created for writing only is read
/// back through its descriptor: no path is looked up again, so a file put in its place
/// since is never read).
fn readable(file: &File) -> std::io::Result<File> {
    use std::os::fd::AsRawFd;
    File::open(format!("/proc/self/fd/{}", file.as_raw_fd()))
}
