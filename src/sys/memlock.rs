//! Locking memory (mlockall) and prefaulting a thread's stack before measuring, so no
//! page fault lands inside a measuring loop.

use std::io;

/// Locks all current and future mappings of the process into RAM.
pub fn lock_all_memory() -> io::Result<()> {
    // SAFETY: mlockall takes flags only; failure is reported through errno.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// Undoes `lock_all_memory`.
pub fn unlock_all_memory() {
    // SAFETY: munlockall has no arguments; it cannot fail in a way that matters here.
    unsafe { libc::munlockall() };
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
