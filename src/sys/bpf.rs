//! The bpf(2) calls `--trace` needs to learn a timer's expiry without writing a trace event
//! on the measured CPU's wake path: create a map, load a raw-tracepoint program, attach it,
//! read a counter, and consume a BPF ring buffer through its shared pages.
//!
//! Written by hand: the crates that load BPF (aya, libbpf-rs) build their programs with
//! bpf-linker or clang, and wrap far more than these five calls.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;

/// `BPF_MAP_TYPE_ARRAY`.
pub const MAP_TYPE_ARRAY: u32 = 2;
/// `BPF_MAP_TYPE_RINGBUF` (Linux 5.8).
pub const MAP_TYPE_RINGBUF: u32 = 27;
/// `BPF_PROG_TYPE_RAW_TRACEPOINT`.
const PROG_TYPE_RAW_TRACEPOINT: u32 = 17;

/// The prefix of `union bpf_attr` that BPF_MAP_CREATE reads.
#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
}

/// The prefix of `union bpf_attr` that BPF_MAP_LOOKUP_ELEM reads.
#[repr(C)]
#[derive(Default)]
struct MapElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// The prefix of `union bpf_attr` that BPF_PROG_LOAD reads.
#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
}

/// The prefix of `union bpf_attr` that BPF_RAW_TRACEPOINT_OPEN reads.
#[repr(C)]
#[derive(Default)]
struct RawTracepointAttr {
    name: u64,
    prog_fd: u32,
    _pad: u32,
}

/// bpf(2) for a command whose reply is a new file descriptor.
fn bpf_fd<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<OwnedFd> {
    // SAFETY: `attr` is a live, initialised #[repr(C)] prefix of `union bpf_attr` for `cmd`,
    // and its exact size is passed, so the kernel reads only that many bytes (it treats
    // the rest of the union as zero). Pointers inside it point to buffers the caller keeps
    // alive for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if rc < 0 {
        return Err(super::last_os_error());
    }
    // SAFETY: on success these commands return a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as libc::c_int) })
}

/// Creates a map; `map_flags` e.g. 0.
pub fn map_create(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
) -> io::Result<OwnedFd> {
    let mut attr = MapCreateAttr {
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags: 0,
    };
    bpf_fd(BPF_MAP_CREATE, &mut attr)
}

/// Reads the u64 value at `key` of an array map.
pub fn map_lookup_u64(map: &OwnedFd, key: u32) -> io::Result<u64> {
    let mut value = 0u64;
    let mut attr = MapElemAttr {
        map_fd: map.as_raw_fd() as u32,
        key: (&key as *const u32) as u64,
        value: (&mut value as *mut u64) as u64,
        ..Default::default()
    };
    // SAFETY: `attr` is the #[repr(C)] prefix BPF_MAP_LOOKUP_ELEM reads, its size passed;
    // `key` and `value` live on this stack for the call, sized as the map was created
    // (4-byte key, 8-byte value).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_MAP_LOOKUP_ELEM,
            (&mut attr as *mut MapElemAttr).cast::<libc::c_void>(),
            std::mem::size_of::<MapElemAttr>() as libc::c_uint,
        )
    };
    if rc < 0 {
        return Err(super::last_os_error());
    }
    Ok(value)
}

/// A program the verifier refused (its log says why), or a load the kernel refused.
#[derive(Debug)]
pub struct LoadError {
    pub error: io::Error,
    pub verifier_log: String,
}

/// Loads a raw-tracepoint program (`insns`: encoded `struct bpf_insn`s).
pub fn load_raw_tracepoint_program(insns: &[u64], name: &str) -> Result<OwnedFd, LoadError> {
    let license = c"GPL";
    let mut log = vec![0u8; 64 * 1024];
    let mut prog_name = [0u8; 16];
    for (d, s) in prog_name.iter_mut().zip(name.bytes().take(15)) {
        *d = s;
    }
    let mut attr = ProgLoadAttr {
        prog_type: PROG_TYPE_RAW_TRACEPOINT,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        prog_name,
        ..Default::default()
    };
    bpf_fd(BPF_PROG_LOAD, &mut attr).map_err(|error| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        LoadError {
            error,
            verifier_log: String::from_utf8_lossy(&log[..end]).into_owned(),
        }
    })
}

/// Attaches a loaded program to the raw tracepoint `name` (e.g. `hrtimer_expire_entry`);
/// it stays attached while the returned descriptor is open.
pub fn attach_raw_tracepoint(prog: &OwnedFd, name: &str) -> io::Result<OwnedFd> {
    let name = std::ffi::CString::new(name).map_err(io::Error::other)?;
    let mut attr = RawTracepointAttr {
        name: name.as_ptr() as u64,
        prog_fd: prog.as_raw_fd() as u32,
        _pad: 0,
    };
    bpf_fd(BPF_RAW_TRACEPOINT_OPEN, &mut attr)
}

/// A record header's length bits: still being written, or discarded.
const RINGBUF_BUSY_BIT: u32 = 1 << 31;
const RINGBUF_DISCARD_BIT: u32 = 1 << 30;
const RINGBUF_HEADER: u64 = 8;

/// The user side of a `BPF_MAP_TYPE_RINGBUF`: the consumer page (ours to write) and the
/// producer page followed by the data, mapped twice in a row by the kernel so a record
/// never wraps.
pub struct RingbufReader {
    _map: OwnedFd,
    consumer: *mut libc::c_void,
    producer: *mut libc::c_void,
    page: usize,
    data_len: usize,
}

// SAFETY: the mappings belong to this reader alone and are only read through atomics or
// after an acquire load of the producer position; moving it to another thread is fine.
unsafe impl Send for RingbufReader {}

impl RingbufReader {
    /// Maps a ring buffer map of `data_len` bytes (its `max_entries`).
    pub fn map(map: OwnedFd, data_len: usize) -> io::Result<RingbufReader> {
        let page = super::memory::page_size();
        // SAFETY: mapping a BPF ring buffer's descriptor as the kernel documents it: one
        // writable page at offset 0 (consumer position), then read-only from offset `page`
        // the producer page and twice the data. Failure is checked before use.
        let consumer = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                0,
            )
        };
        if consumer == libc::MAP_FAILED {
            return Err(super::last_os_error());
        }
        // SAFETY: as above, for the read-only part.
        let producer = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page + 2 * data_len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                page as libc::off_t,
            )
        };
        if producer == libc::MAP_FAILED {
            let e = super::last_os_error();
            // SAFETY: `consumer` was mapped above with this length and is not used again.
            unsafe { libc::munmap(consumer, page) };
            return Err(e);
        }
        Ok(RingbufReader {
            _map: map,
            consumer,
            producer,
            page,
            data_len,
        })
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the consumer page is mapped for the reader's life, 8-aligned at its start,
        // and the kernel only reads it; AtomicU64 has u64's layout.
        unsafe { &*(self.consumer as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: the producer page is mapped for the reader's life and starts with the
        // kernel's producer position, which it writes with release semantics.
        unsafe { &*(self.producer as *const AtomicU64) }
    }

    /// Hands every committed record's bytes to `f`, in order, and frees their room.
    pub fn consume(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let mut cons = self.consumer_pos().load(Ordering::Acquire);
        let prod = self.producer_pos().load(Ordering::Acquire);
        let mask = self.data_len as u64 - 1;
        let mut n = 0;
        while cons < prod {
            let off = self.page + (cons & mask) as usize;
            // SAFETY: `off` is inside the producer mapping (page + data_len), 8-aligned as
            // the kernel places records; the header's length word is read atomically.
            let len_word = unsafe { &*(self.producer.add(off) as *const AtomicU32) };
            let len = len_word.load(Ordering::Acquire);
            if len & RINGBUF_BUSY_BIT != 0 {
                break;
            }
            let body = (len & !(RINGBUF_BUSY_BIT | RINGBUF_DISCARD_BIT)) as usize;
            if len & RINGBUF_DISCARD_BIT == 0 {
                // SAFETY: the record's body follows its header and, the data being mapped
                // twice in a row, lies whole inside the mapping; committed (not busy), so
                // the kernel no longer writes it until the consumer position passes it.
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        (self.producer as *const u8).add(off + RINGBUF_HEADER as usize),
                        body,
                    )
                };
                f(bytes);
                n += 1;
            }
            cons += (RINGBUF_HEADER + body as u64).div_ceil(8) * 8;
            self.consumer_pos().store(cons, Ordering::Release);
        }
        n
    }
}

impl Drop for RingbufReader {
    fn drop(&mut self) {
        // SAFETY: both regions were mapped in `map` with these lengths and no reference
        // into them outlives the reader.
        unsafe {
            libc::munmap(self.consumer, self.page);
            libc::munmap(self.producer, self.page + 2 * self.data_len);
        }
    }
}
