//! Anonymous mappings that really page-fault (even under mlockall), and the SIGSEGV
//! handler of the prot-fault load: the memory loads' only contact with the kernel.

use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The page size of this machine.
pub fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf takes a constant and returns a value or -1.
        let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if v > 0 {
            v as usize
        } else {
            4096
        }
    })
}

/// A private anonymous mapping, unmapped on Drop. Its pages are not locked even when
/// the process runs under mlockall(MCL_FUTURE), so touching them page-faults.
pub struct AnonMapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned exclusively by this value; moving it to another thread
// moves that ownership, and nothing else refers to the memory.
unsafe impl Send for AnonMapping {}

impl AnonMapping {
    /// Maps `len` bytes (rounded up to pages) that start inaccessible (PROT_NONE) and
    /// unlocked: mmap PROT_NONE is never prefaulted, munlock drops the MCL_FUTURE lock.
    pub fn new_prot_none(len: usize) -> io::Result<Self> {
        let page = page_size();
        let len = len.max(1).div_ceil(page) * page;
        // SAFETY: a fresh private anonymous mapping at an address the kernel chooses;
        // no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(super::last_os_error());
        }
        let mapping = Self {
            ptr: ptr as *mut u8,
            len,
        };
        // SAFETY: the range is exactly the mapping created above. munlock fails only
        // with ENOMEM for unmapped ranges, which cannot happen here; ignoring is fine.
        unsafe { libc::munlock(ptr, len) };
        Ok(mapping)
    }

    /// Maps `len` bytes readable and writable, no page present yet: every first write
    /// to a page is a minor fault.
    pub fn new_faulting(len: usize) -> io::Result<Self> {
        let mapping = Self::new_prot_none(len)?;
        mapping.protect_all(libc::PROT_READ | libc::PROT_WRITE)?;
        Ok(mapping)
    }

    fn protect_all(&self, prot: libc::c_int) -> io::Result<()> {
        // SAFETY: the range is exactly this mapping, which is alive while `self` is.
        let rc = unsafe { libc::mprotect(self.ptr as *mut libc::c_void, self.len, prot) };
        if rc != 0 {
            return Err(super::last_os_error());
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn pages(&self) -> usize {
        self.len / page_size()
    }

    /// Writes one byte at the start of page `index` (volatile, so it is never elided).
    /// For a PROT_NONE mapping this raises SIGSEGV, which the prot-fault handler turns
    /// into a writable page before the write is retried.
    pub fn touch_page(&self, index: usize, value: u8) {
        let offset = (index * page_size()).min(self.len - 1);
        // SAFETY: `offset` is inside the mapping; a protection fault is handled by the
        // registered SIGSEGV handler (only prot-fault regions are PROT_NONE when touched).
        unsafe { std::ptr::write_volatile(self.ptr.add(offset), value) };
    }

    fn address_range(&self) -> (usize, usize) {
        (self.ptr as usize, self.len)
    }
}

impl Drop for AnonMapping {
    fn drop(&mut self) {
        // SAFETY: the range is exactly the mapping created in `new_prot_none`; no
        // reference into it outlives `self`.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// A store the optimiser may not remove or merge (the mem-access load's writes).
#[inline(always)]
pub fn volatile_store(slot: &mut u64, value: u64) {
    // SAFETY: `slot` is a valid, aligned, exclusive reference.
    unsafe { std::ptr::write_volatile(slot, value) };
}

/// Advises the kernel to drop the cached pages of `file`, so the next read goes to the
/// device (used by the io load after fsync).
pub fn drop_file_cache(file: &std::fs::File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is valid while `file` is borrowed; fadvise only advises.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// prot-fault: PROT_NONE regions whose pages the SIGSEGV handler makes writable.

/// Most prot-fault regions alive at once (one per prot-fault worker).
const MAX_REGIONS: usize = 64;

/// (base, len) of each registered region; base 0 = free slot. Read by the handler.
static REGION_BASE: [AtomicUsize; MAX_REGIONS] = [const { AtomicUsize::new(0) }; MAX_REGIONS];
static REGION_LEN: [AtomicUsize; MAX_REGIONS] = [const { AtomicUsize::new(0) }; MAX_REGIONS];
/// SIGSEGVs the handler resolved since the process started.
static HANDLED_FAULTS: AtomicU64 = AtomicU64::new(0);
/// The SIGSEGV action that was installed before ours (Rust's stack-overflow handler),
/// to forward faults that are not ours.
static PREVIOUS_ACTION: OnceLock<PreviousAction> = OnceLock::new();

struct PreviousAction(libc::sigaction);
// SAFETY: the stored sigaction is written once before the handler is installed and only
// read afterwards; it holds plain integers and a function address.
unsafe impl Sync for PreviousAction {}
// SAFETY: as above; it is plain data.
unsafe impl Send for PreviousAction {}

/// SIGSEGVs handled by the prot-fault handler so far (process-wide).
pub fn handled_prot_faults() -> u64 {
    HANDLED_FAULTS.load(Ordering::Relaxed)
}

/// The SIGSEGV handler. Async-signal-safe: it reads atomics, calls mprotect (a system
/// call) and bumps an atomic counter; faults outside our regions go to the previous
/// handler or, if there was none, to the default action.
extern "C" fn on_sigsegv(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers; si_addr is
    // the faulting address for SIGSEGV.
    let addr = unsafe { (*info).si_addr() } as usize;
    for i in 0..MAX_REGIONS {
        let base = REGION_BASE[i].load(Ordering::Acquire);
        if base == 0 {
            continue;
        }
        let len = REGION_LEN[i].load(Ordering::Acquire);
        if addr >= base && addr < base + len {
            let page = addr & !(page_size_in_handler() - 1);
            // SAFETY: `page` lies inside a live region registered by ProtFaultRegion
            // (it unregisters before unmapping); mprotect is async-signal-safe.
            unsafe {
                libc::mprotect(
                    page as *mut libc::c_void,
                    page_size_in_handler(),
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            HANDLED_FAULTS.fetch_add(1, Ordering::Relaxed);
            return;
        }
    }
    forward_fault(sig, info, ctx);
}

/// The page size without OnceLock initialisation (already initialised before any
/// region exists, so this is a plain atomic read in practice).
fn page_size_in_handler() -> usize {
    static CACHED: AtomicUsize = AtomicUsize::new(0);
    let v = CACHED.load(Ordering::Relaxed);
    if v != 0 {
        return v;
    }
    let p = page_size();
    CACHED.store(p, Ordering::Relaxed);
    p
}

/// Hands a fault that is not ours to the handler installed before, or restores the
/// default action so that returning re-raises it as a crash.
fn forward_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if let Some(prev) = PREVIOUS_ACTION.get() {
        let handler = prev.0.sa_sigaction;
        if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
            if prev.0.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous action declared SA_SIGINFO, so its address is a
                // three-argument handler; we pass the arguments we were given.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(handler) };
                f(sig, info, ctx);
            } else {
                // SAFETY: without SA_SIGINFO the address is a one-argument handler.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
                f(sig);
            }
            return;
        }
    }
    // SAFETY: a zeroed sigaction with SIG_DFL is valid; sigaction is async-signal-safe.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGSEGV, &dfl, std::ptr::null_mut());
    }
}

/// Installs the prot-fault SIGSEGV handler once per process. It stays installed: faults
/// outside prot-fault regions are forwarded, so it changes nothing for other code, and
/// it never races with a fault in flight.
fn install_handler() -> io::Result<()> {
    static RESULT: OnceLock<Result<(), i32>> = OnceLock::new();
    let result = RESULT.get_or_init(|| {
        page_size_in_handler();
        // SAFETY: sigaction structs are plain data; zeroed is a valid starting value.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only queries the current one into `old`.
        if unsafe { libc::sigaction(libc::SIGSEGV, std::ptr::null(), &mut old) } != 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        let _ = PREVIOUS_ACTION.set(PreviousAction(old));
        // SAFETY: as above.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_sigsegv as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `action.sa_mask` is a valid sigset_t to initialise.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: `action` is fully initialised and its handler is async-signal-safe.
        if unsafe { libc::sigaction(libc::SIGSEGV, &action, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(())
    });
    result.map_err(io::Error::from_raw_os_error)
}

/// A PROT_NONE mapping registered with the SIGSEGV handler: touching a page faults
/// once, the handler makes that page writable and the write completes.
pub struct ProtFaultRegion {
    mapping: AnonMapping,
    slot: usize,
}

impl ProtFaultRegion {
    pub fn new(len: usize) -> io::Result<Self> {
        install_handler()?;
        let mapping = AnonMapping::new_prot_none(len)?;
        let (base, len) = mapping.address_range();
        // Registration is serialised so a slot's length is written before its base
        // becomes visible to the handler (which reads base, then length).
        static REGISTER: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _guard = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
        for slot in 0..MAX_REGIONS {
            if REGION_BASE[slot].load(Ordering::Acquire) == 0 {
                REGION_LEN[slot].store(len, Ordering::Release);
                REGION_BASE[slot].store(base, Ordering::Release);
                return Ok(Self { mapping, slot });
            }
        }
        Err(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("more than {MAX_REGIONS} prot-fault regions at once"),
        ))
    }

    pub fn pages(&self) -> usize {
        self.mapping.pages()
    }

    /// Writes page `index`; the first write to each page goes through the handler.
    pub fn touch_page(&self, index: usize) {
        self.mapping.touch_page(index, 1);
    }
}

impl Drop for ProtFaultRegion {
    fn drop(&mut self) {
        REGION_BASE[self.slot].store(0, Ordering::Release);
    }
}
