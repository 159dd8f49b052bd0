//! One recording: the instance set up, the drain thread started and tracing switched on at
//! `start`; at `stop` tracing off, the rest drained, the kernel's loss counters read, the
//! instance removed and the pages decoded into time-sorted events.

use crate::trace::event::{CpuLosses, Event, Losses};
use crate::trace::record::format::{Decoder, HeaderPage};
use crate::trace::record::instance::{Instance, DEFAULT_EVENTS};
use crate::trace::record::kernel_strings::KernelStrings;
use crate::trace::record::ringbuf::{self, DrainConfig, Drainer};
use crate::trace::record::tracefs::{TraceError, Tracefs};
use anyhow::Context;
use std::path::Path;

/// What to record.
#[derive(Debug, Clone)]
pub struct TraceConfig {
    /// Ring buffer per CPU (`buffer_size_kb`).
    pub buffer_kb_per_cpu: u64,
    /// CPUs to record (empty: every online CPU).
    pub cpus: Vec<usize>,
    /// CPUs the drain thread may run on: the ones not measured. Empty: anywhere (noted).
    pub drain_cpus: Vec<usize>,
    /// "system:name" (or "system:*"); `DEFAULT_EVENTS` by default.
    pub events: Vec<&'static str>,
    /// Cap on the raw pages kept in memory; pages beyond it are counted as `not_kept`.
    pub max_memory_bytes: usize,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            buffer_kb_per_cpu: 8 * 1024,
            cpus: Vec::new(),
            drain_cpus: Vec::new(),
            events: DEFAULT_EVENTS.to_vec(),
            max_memory_bytes: 512 << 20,
        }
    }
}

/// How the recorder itself fared (throughput of the drain, cost of decoding).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecorderStats {
    pub pages: u64,
    pub bytes_read: u64,
    /// Time the drain thread spent inside read(2).
    pub read_ns: u64,
    /// Time spent decoding pages into events after stop.
    pub decode_ns: u64,
    /// Events whose id was not one of the enabled formats, or shorter than their format.
    pub undecodable: u64,
    /// Pages whose events ran past the page end.
    pub malformed_pages: u64,
}

/// The result of a session.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Sorted by `ts_ns`, then CPU (each CPU's own order kept).
    pub events: Vec<Event>,
    pub losses: Losses,
    /// Requested events this kernel lacks ("system:name"), for a warning naming them.
    pub missing_events: Vec<String>,
    /// The events recorded (stand-ins included: `ipi:ipi_entry` on Arm).
    pub enabled_events: Vec<String>,
    /// The CPUs recorded.
    pub cpus: Vec<u32>,
    /// CLOCK_MONOTONIC ns when tracing was switched on and off.
    pub started_ns: u64,
    pub ended_ns: u64,
    /// Things the user should know (drain thread placement, mount left behind, ...).
    pub notes: Vec<String>,
    pub stats: RecorderStats,
}

/// A running recording; removes its instance when dropped without `stop`.
pub struct TraceSession {
    // Field order matters for Drop: the drain thread (holding the pipes) goes first.
    drainer: Option<Drainer>,
    instance: Instance,
    header_page: HeaderPage,
    decoder: Decoder,
    cpus: Vec<usize>,
    started_ns: u64,
    notes: Vec<String>,
}

fn page_size(instance: &Path) -> usize {
    std::fs::read_to_string(instance.join("buffer_subbuf_size_kb"))
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .map(|kb| kb * 1024)
        .filter(|&b| b > 0)
        .unwrap_or_else(crate::sys::memory::page_size)
}

/// Reads `overrun`, `commit overrun` and `dropped events` of per_cpu/cpuN/stats.
fn read_cpu_stats(instance: &Path, cpu: usize) -> CpuLosses {
    let mut l = CpuLosses {
        cpu: cpu as u32,
        ..Default::default()
    };
    let text = crate::trace::record::format::read_tracefs_file(
        &instance.join(format!("per_cpu/cpu{cpu}/stats")),
    )
    .unwrap_or_default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim().parse::<u64>().unwrap_or(0);
        match k.trim() {
            "overrun" => l.overrun = v,
            "commit overrun" => l.commit_overrun = v,
            "dropped events" => l.dropped = v,
            _ => {}
        }
    }
    l
}

impl TraceSession {
    /// Sets up the instance and starts recording.
    pub fn start(cfg: &TraceConfig) -> Result<TraceSession, TraceError> {
        let tracefs = Tracefs::open()?;
        let mut notes = Vec::new();
        let root = tracefs.root().to_path_buf();
        let mut cpus = if cfg.cpus.is_empty() {
            crate::sys::affinity::online_cpus()
        } else {
            cfg.cpus.clone()
        };
        cpus.sort_unstable();
        cpus.dedup();
        let instance = Instance::create(tracefs, cfg.buffer_kb_per_cpu, &cpus, &cfg.events)?;
        let hp_path = root.join("events/header_page");
        let header_page = crate::trace::record::format::read_tracefs_file(&hp_path)
            .map_err(|e| TraceError::io(format!("reading {}", hp_path.display()), e))
            .and_then(|t| {
                HeaderPage::parse(&t).map_err(|e| {
                    TraceError::io("events/header_page", std::io::Error::other(e.to_string()))
                })
            })?;
        let mut decoder = Decoder::load(&instance.dir().join("events"), instance.enabled_events())
            .map_err(|e| {
                TraceError::io(
                    "reading event formats",
                    std::io::Error::other(format!("{e:#}")),
                )
            })?;
        // Arm's IPIs name their reason by a pointer into the kernel's strings (unnamed
        // when printk_formats cannot be read).
        if instance
            .enabled_events()
            .iter()
            .any(|e| e == "ipi:ipi_entry")
        {
            let text =
                crate::trace::record::format::read_tracefs_file(&root.join("printk_formats"))
                    .unwrap_or_default();
            decoder = decoder.with_kernel_strings(KernelStrings::parse(&text));
        }
        let mut pipes = Vec::new();
        for &cpu in &cpus {
            let pipe = ringbuf::open_pipe(instance.dir(), cpu).map_err(|e| {
                TraceError::io(format!("opening per_cpu/cpu{cpu}/trace_pipe_raw"), e)
            })?;
            pipes.push((cpu, pipe));
        }
        if cfg.drain_cpus.is_empty() {
            notes.push(
                "every CPU is measured: the trace drain thread may run on any of them".to_string(),
            );
        }
        let drain = DrainConfig {
            page_size: page_size(instance.dir()),
            max_bytes: cfg.max_memory_bytes,
            sweep_ms: 50,
            drain_cpus: cfg.drain_cpus.clone(),
        };
        let drainer = Drainer::start(drain, header_page, pipes, instance.abort_flag())
            .map_err(|e| TraceError::io("starting the trace drain thread", e))?;
        let mut session = TraceSession {
            drainer: Some(drainer),
            instance,
            header_page,
            decoder,
            cpus,
            started_ns: 0,
            notes,
        };
        session.started_ns = crate::sys::clock::monotonic_ns();
        session.instance.set_tracing(true)?;
        Ok(session)
    }

    /// The instance's name (`latscope-PID`).
    pub fn instance_name(&self) -> &str {
        self.instance.name()
    }

    /// The instance directory, e.g. to read its `trace` text before `stop`.
    pub fn instance_dir(&self) -> &Path {
        self.instance.dir()
    }

    /// Requested events this kernel lacks.
    pub fn missing_events(&self) -> &[String] {
        self.instance.missing_events()
    }

    /// Switches tracing off and stops the drain thread reading, so the unread part of the
    /// buffer stays put (e.g. for the instance's non-consuming `trace` file); `stop` then
    /// drains and decodes everything as usual.
    pub fn pause(&self) -> Result<(), TraceError> {
        self.instance.set_tracing(false)?;
        self.hold_drain();
        Ok(())
    }

    /// Stops the drain thread reading while tracing goes on: what is recorded from now on
    /// stays in the kernel's buffer (up to its size) for the instance's non-consuming
    /// `trace` file; `stop` drains and decodes it as usual.
    pub fn hold_drain(&self) {
        if let Some(d) = &self.drainer {
            d.hold();
        }
    }

    /// Stops tracing, drains the rest, reads the loss counters, removes the instance and
    /// decodes everything.
    pub fn stop(mut self) -> anyhow::Result<Recording> {
        self.instance.set_tracing(false)?;
        let ended_ns = crate::sys::clock::monotonic_ns();
        let drained = self
            .drainer
            .take()
            .expect("drainer present until stop")
            .finish()
            .context("draining the trace buffers")?;
        let mut losses = Losses {
            per_cpu: self
                .cpus
                .iter()
                .map(|&c| read_cpu_stats(self.instance.dir(), c))
                .collect(),
        };
        let missing_events = self.instance.missing_events().to_vec();
        let enabled_events = self.instance.enabled_events().to_vec();
        let mut notes = std::mem::take(&mut self.notes);
        let mounted = self.instance.tracefs_root().to_path_buf();
        if let Err(e) = self.instance.finish() {
            notes.push(format!(
                "could not remove the trace instance or unmount {}: {e}",
                mounted.display()
            ));
        }
        let t0 = crate::sys::clock::monotonic_ns();
        let mut stats = RecorderStats {
            bytes_read: drained.bytes_read,
            read_ns: drained.read_ns,
            ..Default::default()
        };
        let mut events = Vec::new();
        for cpu_pages in &drained.per_cpu {
            let cpu = cpu_pages.cpu;
            let l = losses
                .per_cpu
                .iter_mut()
                .find(|l| l.cpu == cpu)
                .expect("a loss entry per recorded CPU");
            l.not_kept += cpu_pages.events_over_cap;
            for page in cpu_pages.bytes.chunks(drained.page_size) {
                stats.pages += 1;
                let mut undecodable = 0;
                let s = ringbuf::parse_page(&self.header_page, page, |ts, data| {
                    match self.decoder.decode(ts, cpu, data) {
                        Some(e) => events.push(e),
                        None => undecodable += 1,
                    }
                });
                stats.undecodable += undecodable;
                stats.malformed_pages += s.malformed as u64;
                if s.missed_events {
                    l.pages_missing_events += 1;
                    l.missed_events += s.missed_count.unwrap_or(0);
                }
            }
        }
        // Stable: each CPU's own order survives equal timestamps.
        events.sort_by_key(|e| (e.ts_ns, e.cpu));
        stats.decode_ns = crate::sys::clock::monotonic_ns() - t0;
        if stats.malformed_pages > 0 {
            notes.push(format!(
                "{} trace pages were malformed; their remaining events are lost",
                stats.malformed_pages
            ));
        }
        Ok(Recording {
            events,
            losses,
            missing_events,
            enabled_events,
            cpus: self.cpus.iter().map(|&c| c as u32).collect(),
            started_ns: self.started_ns,
            ended_ns,
            notes,
            stats,
        })
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        // Not stopped (an error or a panic unwinding): close the pipes, then the instance
        // removes itself in its own Drop.
        let _ = self.instance.set_tracing(false);
        if let Some(d) = self.drainer.take() {
            let _ = d.finish();
        }
    }
}
