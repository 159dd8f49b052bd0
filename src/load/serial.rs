//! The `serial` load: bytes written to a terminal at a baud rate — a pseudo-terminal
//! (drained by a second thread) or a real tty (`dev=/dev/ttyS0`, whose UART sends them
//! out) — the serial-line load of the interrupt-response study. The terminal is set to
//! raw 8N1 at the rate and its settings are put back on every ending (stop, error,
//! Drop, a second Ctrl-C through an emergency restorer; after SIGKILL `latscope restore`
//! from the record written before the change, for a `dev=`); a pty does not throttle, so
//! the writer paces itself: BAUD/10 bytes per second (start + 8 data + stop bits).

use super::{Counters, Load, LoadSpec, Step, Worker};
use crate::error::UserError;
use crate::isolate::TerminalRecord;
use crate::sys::clock;
use crate::sys::tty::{self, Termios, TtyOpenError};
use anyhow::Context;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The rate when the spec gives none.
pub const DEFAULT_BAUD: u32 = 115_200;
/// Bits on the line per byte at 8N1.
const BITS_PER_BYTE: u64 = 10;
/// Most bytes one write may carry (catching up after a stall included).
const WRITE_CHUNK_BYTES: usize = 4096;
/// The writer wakes at least this often (so stopping stays prompt at low rates)…
const MAX_TICK_NS: u64 = 10_000_000;
/// …and at most this often (at high rates each write carries more bytes).
const MIN_TICK_NS: u64 = 1_000_000;
/// How long the drainer waits for input before checking whether to stop.
const DRAIN_WAIT_MS: i32 = 10;
/// The byte written: 0x55 alternates the line's bits, the classic UART test pattern.
const PATTERN: u8 = 0x55;

/// Bytes per second at `baud` (8N1).
pub fn bytes_per_second(baud: u32) -> u64 {
    baud as u64 / BITS_PER_BYTE
}

/// The baud rates a spec may give, for error messages.
pub fn allowed_bauds() -> String {
    tty::standard_bauds()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Refuses a `dev=` that does not exist, cannot be opened, is not a terminal, is a pty
/// master or is named twice — before anything runs, naming the spec and the path.
pub fn check_devices(specs: &[LoadSpec]) -> Result<(), UserError> {
    let mut seen: Vec<u64> = Vec::new();
    for spec in specs {
        if let Some(path) = &spec.device {
            let refuse = |reason: String| UserError::InvalidValue {
                option: "--load".into(),
                value: spec.text.clone(),
                reason: format!("dev={}: {reason}", path.display()),
            };
            let located = tty::locate_tty(path).map_err(|e| refuse(why_not(&e)))?;
            located.open().map_err(|e| refuse(why_not(&e)))?;
            if seen.contains(&located.rdev) {
                // The second would save the first's raw settings as the ones to put back.
                return Err(refuse("another serial load writes to this terminal already; give each load its own dev=".into()));
            }
            seen.push(located.rdev);
        }
    }
    Ok(())
}

fn why_not(e: &TtyOpenError) -> String {
    match e {
        TtyOpenError::NotATty => {
            "is not a terminal (tty); give a serial device such as /dev/ttyS0, or leave dev= out to write to a pseudo-terminal".into()
        }
        TtyOpenError::Open(io) if io.kind() == std::io::ErrorKind::NotFound => {
            "no such device; give an existing tty (ls /dev/ttyS* /dev/ttyUSB*), or leave dev= out to write to a pseudo-terminal".into()
        }
        TtyOpenError::Open(io) => format!(
            "cannot open it ({io}); run as root or a member of its group (dialout), or leave dev= out"
        ),
        TtyOpenError::PtyMaster => {
            "is a pseudo-terminal's master side (/dev/ptmx makes a new pty nobody reads); leave dev= out to write to a pseudo-terminal latscope drains, or give a terminal side (/dev/pts/N)".into()
        }
    }
}

/// The terminal's settings as found, put back on Drop and by the emergency restorer; for
/// a device named by `dev=`, also recorded before the change for `latscope restore`
/// (a pty of latscope's own goes away with the process).
struct TermiosGuard {
    fd: Arc<OwnedFd>,
    saved: Termios,
    record: Option<Arc<TerminalRecord>>,
    restorer: u64,
}

impl TermiosGuard {
    /// Saves the settings (and records them for a `device`: its path and device
    /// number), then sets raw 8N1 at `baud`.
    fn set_raw(fd: &OwnedFd, device: Option<(&Path, u64)>, baud: u32) -> anyhow::Result<Self> {
        let saved = tty::get_termios(fd).context("reading the terminal's settings")?;
        let raw = tty::raw_8n1(&saved, baud)
            .with_context(|| format!("{baud} baud is not a rate termios can set"))?;
        // Best effort: without root /run/latscope is not writable; the load then runs
        // with settings that only a live latscope puts back (`restorable_after_kill` 0).
        let mut record =
            device.and_then(|(path, rdev)| TerminalRecord::write(path, rdev, &saved, &raw).ok());
        let fd = Arc::new(fd.try_clone()?);
        let set = tty::set_termios(&fd, &raw);
        if let (Some(r), Ok(now)) = (record.as_mut(), tty::get_termios(&fd)) {
            let _ = r.applied(&now);
        }
        let record = record.map(Arc::new);
        let restorer = {
            let (fd, record) = (fd.clone(), record.clone());
            crate::interrupt::register_restorer(move || {
                if tty::restore_termios(&fd, &saved).is_ok() {
                    record.iter().for_each(|r| r.remove());
                }
            })
        };
        let guard = Self {
            fd,
            saved,
            record,
            restorer,
        };
        set.with_context(|| format!("setting the terminal to raw 8N1 at {baud} baud"))?;
        Ok(guard)
    }
}

impl Drop for TermiosGuard {
    fn drop(&mut self) {
        if tty::restore_termios(&self.fd, &self.saved).is_ok() {
            self.record.iter().for_each(|r| r.remove());
        }
        crate::interrupt::unregister_restorer(self.restorer);
    }
}

pub struct SerialLoad {
    cpu: usize,
    baud: u32,
    /// 2 for a pty (writer, drainer), 1 for a real tty (writer).
    workers: usize,
    /// The terminal written to, taken by worker 0.
    terminal: Mutex<Option<OwnedFd>>,
    /// A pty's master side, taken by worker 1 (none for a real tty).
    master: Mutex<Option<OwnedFd>>,
    /// A `dev=` device (not a pty of latscope's own).
    named_device: bool,
    /// Dropped after the workers (the engine drops the load once they are joined).
    termios: TermiosGuard,
}

impl SerialLoad {
    /// Opens the terminal (a new pty unless the spec names `dev=`) and sets it to raw
    /// 8N1 at the spec's rate. Writer and drainer share the first of `cpus`, like a
    /// serial driver and its reader would.
    pub fn new(cpus: &[usize], spec: &LoadSpec) -> anyhow::Result<Self> {
        let baud = spec.baud.unwrap_or(DEFAULT_BAUD);
        let (terminal, master, rdev) = match &spec.device {
            Some(path) => {
                let (fd, rdev) = open_device(path)?;
                (fd, None, Some(rdev))
            }
            None => {
                let pty = tty::open_pty().context("opening a pseudo-terminal")?;
                (pty.terminal, Some(pty.master), None)
            }
        };
        let device = spec.device.as_deref().zip(rdev);
        let termios = TermiosGuard::set_raw(&terminal, device, baud)?;
        Ok(Self {
            cpu: cpus[0],
            baud,
            workers: if master.is_some() { 2 } else { 1 },
            terminal: Mutex::new(Some(terminal)),
            master: Mutex::new(master),
            named_device: device.is_some(),
            termios,
        })
    }
}

/// Opens `dev=` (resolved once, judged on its descriptors); with its device number.
fn open_device(path: &Path) -> anyhow::Result<(OwnedFd, u64)> {
    let fail = |e: TtyOpenError| anyhow::anyhow!("dev={}: {}", path.display(), why_not(&e));
    let located = tty::locate_tty(path).map_err(fail)?;
    Ok((located.open().map_err(fail)?, located.rdev))
}

fn take(slot: &Mutex<Option<OwnedFd>>) -> anyhow::Result<OwnedFd> {
    slot.lock()
        .map_err(|_| anyhow::anyhow!("serial load state poisoned"))?
        .take()
        .ok_or_else(|| anyhow::anyhow!("serial load: terminal end taken twice"))
}

/// Writes the bytes due by now, every tick.
struct SerialWriter {
    fd: OwnedFd,
    bytes_per_s: u64,
    tick_ns: u64,
    /// When pacing began (the first step); 0 before.
    start_ns: u64,
    next_tick_ns: u64,
    written: u64,
    would_block: u64,
    buffer: Vec<u8>,
}

impl Worker for SerialWriter {
    fn step(&mut self) -> anyhow::Result<Step> {
        let mut now = clock::monotonic_ns();
        if self.start_ns == 0 {
            self.start_ns = now;
            self.next_tick_ns = now;
        }
        if now < self.next_tick_ns {
            clock::sleep_until_ns(self.next_tick_ns);
            now = clock::monotonic_ns();
        }
        self.next_tick_ns = (self.next_tick_ns + self.tick_ns).max(now);
        let due = ((now - self.start_ns) as u128 * self.bytes_per_s as u128 / 1_000_000_000) as u64;
        let owed = due
            .saturating_sub(self.written)
            .min(WRITE_CHUNK_BYTES as u64) as usize;
        if owed == 0 {
            return Ok(Step::Did(0));
        }
        let n = tty::write_nonblocking(&self.fd, &self.buffer[..owed])
            .context("writing to the terminal")?;
        if n < owed {
            self.would_block += 1;
        }
        self.written += n as u64;
        Ok(Step::Did(n as u64))
    }

    fn counters(&self) -> Counters {
        Counters::from([
            ("bytes_written", self.written),
            ("writes_would_block", self.would_block),
        ])
    }
}

/// Reads the pty's master side so the terminal's buffer never fills.
struct PtyDrainer {
    fd: OwnedFd,
    drained: u64,
    buffer: Vec<u8>,
}

impl Worker for PtyDrainer {
    fn step(&mut self) -> anyhow::Result<Step> {
        match tty::read_within(&self.fd, &mut self.buffer, DRAIN_WAIT_MS)
            .context("draining the pseudo-terminal")?
        {
            None => Ok(Step::Did(0)),
            Some(0) => Ok(Step::Finished),
            Some(n) => {
                self.drained += n as u64;
                // The writer counts the throughput.
                Ok(Step::Did(0))
            }
        }
    }

    fn counters(&self) -> Counters {
        Counters::from([("bytes_drained", self.drained)])
    }
}

impl Load for SerialLoad {
    fn workers(&self) -> usize {
        self.workers
    }
    fn cpu_of(&self, _index: usize) -> usize {
        self.cpu
    }
    fn follows_duty(&self, _index: usize) -> bool {
        false
    }
    fn worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
        if index == 0 {
            let bytes_per_s = bytes_per_second(self.baud).max(1);
            Ok(Box::new(SerialWriter {
                fd: take(&self.terminal)?,
                bytes_per_s,
                tick_ns: (1_000_000_000 / bytes_per_s).clamp(MIN_TICK_NS, MAX_TICK_NS),
                start_ns: 0,
                next_tick_ns: 0,
                written: 0,
                would_block: 0,
                buffer: vec![PATTERN; WRITE_CHUNK_BYTES],
            }))
        } else {
            Ok(Box::new(PtyDrainer {
                fd: take(&self.master)?,
                drained: 0,
                buffer: vec![0; WRITE_CHUNK_BYTES],
            }))
        }
    }
    fn counters_after(&self) -> Counters {
        let mut counters = Counters::from([("baud", self.baud as u64)]);
        if self.named_device {
            let recorded = self.termios.record.is_some() as u64;
            counters.insert("restorable_after_kill", recorded);
        }
        counters
    }
}
