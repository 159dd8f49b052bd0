//! Locking memory (mlockall) and prefaulting a thread's stack before measuring, so no
//! page fault lands inside a measuring loop, while only what the run touches is
//! resident: MCL_ONFAULT locks pages as they are first touched instead of populating
//! every mapping (all program text, every thread stack, every malloc arena) at once.

use std::io;

/// Stack size of every helper thread (progress line, signals, loads, trace drain,
/// competitors, reflector): small and explicit, not the 2 MB default.
pub const HELPER_STACK_BYTES: usize = 256 * 1024;

/// How `lock_all_memory` locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// MCL_ONFAULT: pages present now and every page touched later stay resident.
    OnFault,
    /// The kernel has no MCL_ONFAULT (before 4.4): every mapping is populated.
    Populate,
}

/// Locks the process's memory into RAM: pages already present and every page touched
/// from now on (MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT), falling back to locking and
/// populating everything where the kernel refuses MCL_ONFAULT with EINVAL.
pub fn lock_all_memory() -> io::Result<LockMode> {
    // SAFETY: mlockall takes flags only; failure is reported through errno.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT) };
    if rc == 0 {
        return Ok(LockMode::OnFault);
    }
    let err = super::last_os_error();
    if err.raw_os_error() != Some(libc::EINVAL) {
        return Err(err);
    }
    // SAFETY: as above.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(LockMode::Populate)
}

/// Undoes `lock_all_memory`.
pub fn unlock_all_memory() {
    // SAFETY: munlockall has no arguments; it cannot fail in a way that matters here.
    unsafe { libc::munlockall() };
}

/// Writes one element per page of `buf` so every page is present (and, under
/// MCL_ONFAULT, locked) before measuring: a zeroed allocation (calloc, fresh mmap) has
/// no page yet, and its first write in a measuring loop would page-fault.
pub fn prefault_slice<T: Copy>(buf: &mut [T]) {
    let stride = (super::memory::page_size() / std::mem::size_of::<T>().max(1)).max(1);
    for i in (0..buf.len()).step_by(stride) {
        buf[i] = std::hint::black_box(buf[i]);
    }
}

/// Touches `bytes` of the calling thread's stack so its pages are present before the loop.
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const CHUNK: usize = 16 * 1024;
    fn touch(depth: usize) {
        let mut buf = [0u8; CHUNK];
        std::hint::black_box(&mut buf);
        if depth > 1 {
            touch(depth - 1);
        }
        std::hint::black_box(&buf);
    }
    touch(bytes.div_ceil(CHUNK).max(1));
}

/// Allocations of at least `bytes` get mappings of their own, unmapped when freed (a fixed
/// glibc M_MMAP_THRESHOLD; glibc's default threshold rises after the first such free, so
/// later large blocks come from a heap arena). Why: under mlockall every page freed into
/// an arena stays resident, since glibc gives arena memory back with
/// madvise(MADV_DONTNEED), which the kernel refuses on locked pages (EINVAL; malloc_trim
/// too), so a long run's large temporaries (a `latscope watch` file's JSON, its
/// histogram rows) would leave the process at their high-water mark, growing with
/// fragmentation; munmap returns them whatever the lock. False where the C library
/// refused (not glibc: nothing changed).
pub fn large_allocations_mapped(bytes: usize) -> bool {
    let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt takes two integers and changes only the allocator's tunable;
        // it returns 1 on success, 0 on error, and is safe to call with threads running.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, bytes) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = bytes;
        false
    }
}
