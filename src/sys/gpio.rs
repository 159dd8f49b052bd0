//! The GPIO character device, uAPI v2 (linux/gpio.h): chip and line information, a line
//! requested for edge events or as an output, its values set and read, its events read.
//! The structures mirror the kernel's byte for byte (sizes checked in the tests).

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

const NAME_SIZE: usize = 32;
const LINES_MAX: usize = 64;
const ATTRS_MAX: usize = 10;

/// Line flags (enum gpio_v2_line_flag).
pub mod flag {
    pub const USED: u64 = 1 << 0;
    pub const ACTIVE_LOW: u64 = 1 << 1;
    pub const INPUT: u64 = 1 << 2;
    pub const OUTPUT: u64 = 1 << 3;
    pub const EDGE_RISING: u64 = 1 << 4;
    pub const EDGE_FALLING: u64 = 1 << 5;
    pub const BIAS_PULL_UP: u64 = 1 << 8;
    pub const BIAS_PULL_DOWN: u64 = 1 << 9;
    pub const BIAS_DISABLED: u64 = 1 << 10;
    pub const EVENT_CLOCK_REALTIME: u64 = 1 << 11;
    pub const EVENT_CLOCK_HTE: u64 = 1 << 12;
}

/// Event ids (enum gpio_v2_line_event_id).
pub const EVENT_RISING: u32 = 1;
pub const EVENT_FALLING: u32 = 2;

#[repr(C)]
struct ChipInfoRaw {
    name: [u8; NAME_SIZE],
    label: [u8; NAME_SIZE],
    lines: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LineAttribute {
    id: u32,
    padding: u32,
    /// flags, values or debounce_period_us (the union).
    value: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LineConfigAttribute {
    attr: LineAttribute,
    mask: u64,
}

#[repr(C)]
struct LineConfig {
    flags: u64,
    num_attrs: u32,
    padding: [u32; 5],
    attrs: [LineConfigAttribute; ATTRS_MAX],
}

#[repr(C)]
struct LineRequestRaw {
    offsets: [u32; LINES_MAX],
    consumer: [u8; NAME_SIZE],
    config: LineConfig,
    num_lines: u32,
    event_buffer_size: u32,
    padding: [u32; 5],
    fd: i32,
}

#[repr(C)]
struct LineInfoRaw {
    name: [u8; NAME_SIZE],
    consumer: [u8; NAME_SIZE],
    offset: u32,
    num_attrs: u32,
    flags: u64,
    attrs: [LineAttribute; ATTRS_MAX],
    padding: [u32; 4],
}

#[repr(C)]
struct LineValues {
    bits: u64,
    mask: u64,
}

/// One edge event as the kernel hands it (struct gpio_v2_line_event).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineEvent {
    /// Taken in the hard-IRQ handler, CLOCK_MONOTONIC unless the request asked otherwise.
    pub timestamp_ns: u64,
    /// EVENT_RISING or EVENT_FALLING.
    pub id: u32,
    pub offset: u32,
    /// The request's event number (1, 2, ...): a gap is events the kernel dropped.
    pub seqno: u32,
    pub line_seqno: u32,
    padding: [u32; 6],
}

const ATTR_DEBOUNCE: u32 = 3;
const ATTR_OUTPUT_VALUES: u32 = 2;

const fn iowr(nr: u64, size: usize) -> u64 {
    (3 << 30) | ((size as u64) << 16) | (0xB4 << 8) | nr
}
const CHIPINFO: u64 =
    (2 << 30) | ((std::mem::size_of::<ChipInfoRaw>() as u64) << 16) | (0xB4 << 8) | 0x01;
const GET_LINEINFO: u64 = iowr(0x05, std::mem::size_of::<LineInfoRaw>());
const GET_LINE: u64 = iowr(0x07, std::mem::size_of::<LineRequestRaw>());
const GET_VALUES: u64 = iowr(0x0E, std::mem::size_of::<LineValues>());
const SET_VALUES: u64 = iowr(0x0F, std::mem::size_of::<LineValues>());

fn text(bytes: &[u8]) -> String {
    CStr::from_bytes_until_nul(bytes)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

fn copy_name(dst: &mut [u8; NAME_SIZE], src: &str) {
    let n = src.len().min(NAME_SIZE - 1);
    dst[..n].copy_from_slice(&src.as_bytes()[..n]);
}

/// A chip: its kernel name, label and number of lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChipInfo {
    pub name: String,
    pub label: String,
    pub lines: u32,
}

/// One line of a chip: its name, who uses it and its flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInfo {
    pub offset: u32,
    pub name: String,
    pub consumer: String,
    pub flags: u64,
}

/// An open /dev/gpiochipN.
pub struct Chip {
    fd: OwnedFd,
}

impl Chip {
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        Ok(Self { fd: file.into() })
    }

    pub fn info(&self) -> io::Result<ChipInfo> {
        // SAFETY: an all-zero ChipInfoRaw is valid (bytes and an integer).
        let mut raw: ChipInfoRaw = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl writes one ChipInfoRaw (its size is in the request number)
        // into `raw`, owned by this frame.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), CHIPINFO as _, &mut raw) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        Ok(ChipInfo {
            name: text(&raw.name),
            label: text(&raw.label),
            lines: raw.lines,
        })
    }

    pub fn line_info(&self, offset: u32) -> io::Result<LineInfo> {
        // SAFETY: an all-zero LineInfoRaw is valid (bytes and integers).
        let mut raw: LineInfoRaw = unsafe { std::mem::zeroed() };
        raw.offset = offset;
        // SAFETY: the kernel reads the offset and writes one LineInfoRaw into `raw`.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), GET_LINEINFO as _, &mut raw) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        Ok(LineInfo {
            offset,
            name: text(&raw.name),
            consumer: text(&raw.consumer),
            flags: raw.flags,
        })
    }

    /// Requests one line with `flags` (INPUT + edges, or OUTPUT with `initial` value),
    /// a kernel event buffer of `event_buffer` events (0: the kernel's default) and a
    /// debounce period when not 0.
    pub fn request(&self, spec: &RequestSpec) -> io::Result<LineRequest> {
        // SAFETY: an all-zero LineRequestRaw is valid (arrays of integers and bytes).
        let mut raw: LineRequestRaw = unsafe { std::mem::zeroed() };
        raw.offsets[0] = spec.offset;
        raw.num_lines = 1;
        copy_name(&mut raw.consumer, &spec.consumer);
        raw.config.flags = spec.flags;
        raw.event_buffer_size = spec.event_buffer;
        let mut attrs = 0;
        if spec.flags & flag::OUTPUT != 0 {
            raw.config.attrs[attrs] = LineConfigAttribute {
                attr: LineAttribute {
                    id: ATTR_OUTPUT_VALUES,
                    padding: 0,
                    value: spec.initial as u64,
                },
                mask: 1,
            };
            attrs += 1;
        }
        if spec.debounce_us > 0 {
            raw.config.attrs[attrs] = LineConfigAttribute {
                attr: LineAttribute {
                    id: ATTR_DEBOUNCE,
                    padding: 0,
                    value: spec.debounce_us as u64,
                },
                mask: 1,
            };
            attrs += 1;
        }
        raw.config.num_attrs = attrs as u32;
        // SAFETY: `raw` is a complete gpio_v2_line_request; the kernel writes the new fd.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), GET_LINE as _, &mut raw) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        // SAFETY: the kernel returned a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw.fd) };
        Ok(LineRequest { fd })
    }
}

/// What to request of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    pub offset: u32,
    pub consumer: String,
    pub flags: u64,
    pub initial: bool,
    pub event_buffer: u32,
    pub debounce_us: u32,
}

/// A requested line (one line per request).
pub struct LineRequest {
    fd: OwnedFd,
}

impl LineRequest {
    /// Sets the line (an output request): the measured drive, one ioctl.
    #[inline(always)]
    pub fn set(&self, high: bool) -> io::Result<()> {
        let mut values = LineValues {
            bits: high as u64,
            mask: 1,
        };
        // SAFETY: `values` is a gpio_v2_line_values owned by this frame.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), SET_VALUES as _, &mut values) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        Ok(())
    }

    /// Reads the line's value.
    pub fn get(&self) -> io::Result<bool> {
        let mut values = LineValues { bits: 0, mask: 1 };
        // SAFETY: the kernel writes into `values`, owned by this frame.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), GET_VALUES as _, &mut values) };
        if rc < 0 {
            return Err(super::last_os_error());
        }
        Ok(values.bits & 1 != 0)
    }

    /// Waits up to `timeout_ms` for an event; Ok(None) when none came.
    #[inline(always)]
    pub fn read_event(&self, timeout_ms: i32) -> io::Result<Option<LineEvent>> {
        if !self.wait_event(timeout_ms)? {
            return Ok(None);
        }
        self.read_pending()
    }

    /// Waits up to `timeout_ms` until an event can be read, without reading it: true when
    /// one is pending (it stays in the kernel's buffer for `read_pending`).
    #[inline(always)]
    pub fn wait_event(&self, timeout_ms: i32) -> io::Result<bool> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd owned by this frame.
        let n = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if n < 0 {
            let e = super::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        Ok(n > 0)
    }

    /// Reads one pending event (after `wait_event`); Ok(None) when none was there.
    #[inline(always)]
    pub fn read_pending(&self) -> io::Result<Option<LineEvent>> {
        let mut event = LineEvent::default();
        let size = std::mem::size_of::<LineEvent>();
        // SAFETY: reads at most one LineEvent's bytes into `event`, owned by this frame;
        // every bit pattern is a valid LineEvent.
        let got = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                &mut event as *mut LineEvent as *mut libc::c_void,
                size,
            )
        };
        if got < 0 {
            let e = super::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Ok(None),
                _ => Err(e),
            };
        }
        Ok((got as usize == size).then_some(event))
    }
}

/// The /dev/gpiochip* character devices, sorted by number.
pub fn chip_paths() -> Vec<std::path::PathBuf> {
    let mut found: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/dev")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name.strip_prefix("gpiochip")?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structures_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<ChipInfoRaw>(), 68);
        assert_eq!(std::mem::size_of::<LineInfoRaw>(), 256);
        assert_eq!(std::mem::size_of::<LineRequestRaw>(), 592);
        assert_eq!(std::mem::size_of::<LineConfig>(), 272);
        assert_eq!(std::mem::size_of::<LineEvent>(), 48);
        assert_eq!(std::mem::size_of::<LineValues>(), 16);
        // The request numbers of linux/gpio.h.
        assert_eq!(CHIPINFO, 0x8044_B401);
        assert_eq!(GET_LINEINFO, 0xC100_B405);
        assert_eq!(GET_LINE, 0xC250_B407);
        assert_eq!(SET_VALUES, 0xC010_B40F);
    }
}
