//! The binary ring buffer: walking one `trace_pipe_raw` page (page header, compressed event
//! headers, time extends and absolute stamps, missed-event flags) and the drain thread that
//! copies pages out of the kernel while a probe measures, so the buffer never fills.

use crate::trace::record::format::HeaderPage;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Event header type_len values (include/linux/ring_buffer.h).
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// time_delta has 27 bits; an extend carries the bits above.
const TS_SHIFT: u32 = 27;
/// Bits of the commit word that are flags, not length.
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
/// Top bits an absolute TIME_STAMP event does not carry (kernel `TS_MSB`).
const TS_MSB: u64 = 0xf8 << 56;

/// What a page's header said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageSummary {
    /// Events delivered to the callback.
    pub events: u64,
    /// The page header flagged events missed before this page.
    pub missed_events: bool,
    /// How many, when the kernel stored the count at the end of the data.
    pub missed_count: Option<u64>,
    /// Events whose header or length ran past the page (corrupt or truncated).
    pub malformed: bool,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn uint_at(b: &[u8], off: usize, size: usize) -> Option<u64> {
    Some(match size {
        4 => u32_at(b, off)? as u64,
        8 => u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?),
        _ => return None,
    })
}

/// Walks the events of one page, calling `f(ts_ns, data)` for every data event.
pub fn parse_page(hp: &HeaderPage, page: &[u8], mut f: impl FnMut(u64, &[u8])) -> PageSummary {
    let mut sum = PageSummary::default();
    let (Some(mut ts), Some(commit)) = (
        uint_at(page, hp.timestamp_offset, hp.timestamp_size),
        uint_at(page, hp.commit_offset, hp.commit_size),
    ) else {
        sum.malformed = true;
        return sum;
    };
    let len = (commit & (MISSED_STORED - 1)) as usize;
    let start = hp.data_offset;
    let end = start + len;
    if end > page.len() {
        sum.malformed = true;
        return sum;
    }
    sum.missed_events = commit & MISSED_EVENTS != 0;
    if commit & MISSED_STORED != 0 {
        sum.missed_count = uint_at(page, end, hp.commit_size);
    }
    let mut pos = start;
    while pos + 4 <= end {
        let Some(h) = u32_at(page, pos) else { break };
        let (type_len, delta) = (h & 0x1f, (h >> 5) as u64);
        let array0 = u32_at(page, pos + 4);
        match type_len {
            TYPE_PADDING => {
                // delta 0: the rest of the page is empty; else a discarded event.
                match array0 {
                    Some(l) if delta != 0 && l > 0 => pos += 4 + l as usize,
                    _ => break,
                }
            }
            TYPE_TIME_EXTEND => {
                let Some(ext) = array0 else { break };
                ts += ((ext as u64) << TS_SHIFT) | delta;
                pos += 8;
            }
            TYPE_TIME_STAMP => {
                let Some(ext) = array0 else { break };
                let mut abs = ((ext as u64) << TS_SHIFT) | delta;
                if ts & TS_MSB != 0 {
                    abs |= ts & TS_MSB;
                    if abs < ts {
                        abs += 1 << 59;
                    }
                }
                ts = abs;
                pos += 8;
            }
            _ => {
                // type_len 0: array[0] holds the length (counting itself); data after it.
                let (data_start, total) = if type_len == 0 {
                    let Some(l) = array0 else { break };
                    (pos + 8, 4 + l as usize)
                } else {
                    (pos + 4, 4 + type_len as usize * 4)
                };
                if total < 8 && type_len == 0 || pos + total > end {
                    sum.malformed = true;
                    break;
                }
                ts += delta;
                f(ts, &page[data_start..pos + total]);
                sum.events += 1;
                pos += total;
            }
        }
    }
    sum
}

/// The raw pages read from one CPU's buffer.
#[derive(Debug, Default)]
pub struct CpuPages {
    pub cpu: u32,
    /// Whole pages, `page_size` bytes each, in read order.
    pub bytes: Vec<u8>,
    /// Pages read but not kept because the memory cap was reached.
    pub pages_over_cap: u64,
    /// Events in those pages (counted, not decoded).
    pub events_over_cap: u64,
}

/// What the drain thread hands back.
#[derive(Debug, Default)]
pub struct Drained {
    pub per_cpu: Vec<CpuPages>,
    pub page_size: usize,
    /// Bytes read in total (kept or not) and the time spent reading, for throughput.
    pub bytes_read: u64,
    pub read_ns: u64,
}

/// Opens `per_cpu/cpuN/trace_pipe_raw` of an instance, non-blocking. The drain never
/// blocks in read(2) nor polls: the ring buffer wakes a waiting reader with irq_work queued
/// on the CPU that wrote the event (the measured one), and a reader that only reads on
/// its own timer never waits, so `buffer_percent` never comes into play.
pub fn open_pipe(instance: &Path, cpu: usize) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(instance.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw")))
}

/// Makes room for `more` bytes in `bytes`, growing it 1 MiB (or its size) at a time and
/// touching the new room at once. Under MCL_ONFAULT every first touch of a page is a traced
/// page fault: one per page read, on the drain's CPU, made a new nearly empty page to read
/// at once, and the drain chased its own events until the memory cap was full.
fn grow_touched(bytes: &mut Vec<u8>, more: usize) {
    if bytes.capacity() - bytes.len() >= more {
        return;
    }
    let len = bytes.len();
    let step = len.clamp(1 << 20, 64 << 20).max(more);
    bytes.reserve_exact(step);
    bytes.resize(bytes.capacity(), 0);
    bytes.truncate(len);
}

/// Reads every page available now from one pipe; returns the bytes read.
fn drain_once(
    pipe: &mut File,
    out: &mut CpuPages,
    page: &mut [u8],
    hp: &HeaderPage,
    cap: &mut usize,
) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        match pipe.read(page) {
            Ok(0) => return Ok(total),
            Ok(n) => {
                total += n as u64;
                // A short read still is one page's worth of header + events; pad it.
                page[n..].fill(0);
                if *cap >= page.len() {
                    *cap -= page.len();
                    grow_touched(&mut out.bytes, page.len());
                    out.bytes.extend_from_slice(page);
                } else {
                    out.pages_over_cap += 1;
                    out.events_over_cap += parse_page(hp, page, |_, _| {}).events;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The drain thread's settings.
#[derive(Debug, Clone)]
pub struct DrainConfig {
    pub page_size: usize,
    /// Cap on kept page bytes over all CPUs.
    pub max_bytes: usize,
    /// Sleep between sweeps (the buffer must hold this long's worth of events).
    pub sweep_ms: u64,
    /// CPUs the thread may run on (empty: anywhere).
    pub drain_cpus: Vec<usize>,
}

/// A running drain thread.
pub struct Drainer {
    stop: Arc<AtomicBool>,
    /// While set, the thread reads nothing; `sweep` is held during every sweep.
    hold: Arc<AtomicBool>,
    sweep: Arc<std::sync::Mutex<()>>,
    handle: std::thread::JoinHandle<io::Result<Drained>>,
}

impl Drainer {
    /// Starts the thread; `pipes` are (cpu, open trace_pipe_raw). `abort` (set by the
    /// emergency restorer) makes it close the files and quit at once.
    pub fn start(
        cfg: DrainConfig,
        hp: HeaderPage,
        pipes: Vec<(usize, File)>,
        abort: Arc<AtomicBool>,
    ) -> io::Result<Drainer> {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let hold = Arc::new(AtomicBool::new(false));
        let hold2 = hold.clone();
        let sweep = Arc::new(std::sync::Mutex::new(()));
        let sweep2 = sweep.clone();
        let handle = std::thread::Builder::new()
            .name("latscope-trace".into())
            .stack_size(crate::sys::memlock::HELPER_STACK_BYTES)
            .spawn(move || {
                if !cfg.drain_cpus.is_empty() {
                    crate::sys::affinity::pin_current_thread_to(&cfg.drain_cpus)?;
                }
                drain_loop(cfg, hp, pipes, &stop2, &abort, &hold2, &sweep2)
            })?;
        Ok(Drainer {
            stop,
            hold,
            sweep,
            handle,
        })
    }

    /// Stops reading (returns once no sweep is in progress), so the buffer can be looked at
    /// through the instance's non-consuming `trace` file; `finish` reads the rest anyway.
    pub fn hold(&self) {
        self.hold.store(true, Ordering::SeqCst);
        drop(self.sweep.lock());
    }

    /// Tells the thread to read what is left (call after tracing_on=0) and returns all.
    pub fn finish(self) -> io::Result<Drained> {
        self.hold.store(false, Ordering::SeqCst);
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .join()
            .map_err(|_| io::Error::other("the trace drain thread panicked"))?
    }
}

fn drain_loop(
    cfg: DrainConfig,
    hp: HeaderPage,
    mut pipes: Vec<(usize, File)>,
    stop: &AtomicBool,
    abort: &AtomicBool,
    hold: &AtomicBool,
    sweep: &std::sync::Mutex<()>,
) -> io::Result<Drained> {
    let mut out = Drained {
        page_size: cfg.page_size,
        per_cpu: pipes
            .iter()
            .map(|(c, _)| CpuPages {
                cpu: *c as u32,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let mut page = vec![0u8; cfg.page_size];
    let mut cap = cfg.max_bytes;
    loop {
        if abort.load(Ordering::SeqCst) {
            return Err(io::Error::other("trace recording aborted"));
        }
        // Read the flag before the sweep: a sweep after stop drains everything left.
        let last = stop.load(Ordering::SeqCst);
        let t0 = crate::sys::clock::monotonic_ns();
        let mut got = 0;
        {
            let _sweeping = sweep.lock();
            if last || !hold.load(Ordering::SeqCst) {
                for ((_, pipe), pages) in pipes.iter_mut().zip(out.per_cpu.iter_mut()) {
                    got += drain_once(pipe, pages, &mut page, &hp, &mut cap)?;
                }
            }
        }
        out.bytes_read += got;
        out.read_ns += crate::sys::clock::monotonic_ns() - t0;
        if last {
            pipes.clear();
            return Ok(out);
        }
        // Sleep even after a sweep that found data: reading at once would mostly catch
        // the page the kernel is still writing and copy it out nearly empty.
        std::thread::sleep(std::time::Duration::from_millis(cfg.sweep_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HP: HeaderPage = HeaderPage {
        timestamp_offset: 0,
        timestamp_size: 8,
        commit_offset: 8,
        commit_size: 8,
        data_offset: 16,
    };

    fn page(ts: u64, events: &[u8], flags: u64) -> Vec<u8> {
        let mut p = vec![0u8; 4096];
        p[..8].copy_from_slice(&ts.to_le_bytes());
        p[8..16].copy_from_slice(&(events.len() as u64 | flags).to_le_bytes());
        p[16..16 + events.len()].copy_from_slice(events);
        p
    }

    fn hdr(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | (delta << 5)).to_le_bytes()
    }

    #[test]
    fn walks_small_long_extend_and_absolute_events() {
        let mut ev = Vec::new();
        ev.extend(hdr(2, 10)); // 8 data bytes at ts 1010
        ev.extend([1, 0, 0, 0, 0, 0, 0, 0]);
        ev.extend(hdr(TYPE_TIME_EXTEND, 5)); // + (1 << 27) + 5
        ev.extend(1u32.to_le_bytes());
        ev.extend(hdr(0, 0)); // long form: array[0] = 4 + 8
        ev.extend(12u32.to_le_bytes());
        ev.extend([2, 0, 0, 0, 0, 0, 0, 0]);
        ev.extend(hdr(TYPE_PADDING, 3)); // discarded event of 8 bytes after the header
        ev.extend(8u32.to_le_bytes());
        ev.extend([0; 4]);
        ev.extend(hdr(TYPE_TIME_STAMP, 7)); // absolute 7 + (2 << 27)
        ev.extend(2u32.to_le_bytes());
        ev.extend(hdr(1, 1));
        ev.extend([3, 0, 0, 0]);
        let p = page(1000, &ev, 0);
        let mut got = Vec::new();
        let s = parse_page(&HP, &p, |ts, d| got.push((ts, d.to_vec())));
        assert_eq!(s.events, 3);
        assert!(!s.missed_events && !s.malformed);
        assert_eq!(got[0], (1010, vec![1, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!(got[1], (1010 + (1 << 27) + 5, vec![2, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!(got[2], ((2 << 27) + 7 + 1, vec![3, 0, 0, 0]));
    }

    #[test]
    fn missed_events_flag_and_stored_count() {
        let mut ev = Vec::new();
        ev.extend(hdr(1, 1));
        ev.extend([0; 4]);
        let mut p = page(0, &ev, MISSED_EVENTS | MISSED_STORED);
        p[16 + 8..16 + 16].copy_from_slice(&77u64.to_le_bytes());
        let s = parse_page(&HP, &p, |_, _| {});
        assert!(s.missed_events);
        assert_eq!(s.missed_count, Some(77));
        assert_eq!(s.events, 1);
    }

    #[test]
    fn truncated_event_is_malformed_not_a_panic() {
        let mut ev = Vec::new();
        ev.extend(hdr(0, 0));
        ev.extend(400u32.to_le_bytes());
        let s = parse_page(&HP, &page(0, &ev, 0), |_, _| panic!("no event"));
        assert!(s.malformed);
    }
}
