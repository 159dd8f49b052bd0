//! Raw futex(2) wait and wake on a 32-bit word shared by two threads of this process,
//! for the wake probe's `futex` mechanism (the primitive every other lock is built on).

use std::sync::atomic::AtomicU32;

/// Blocks while `word` still holds `expected` (FUTEX_WAIT_PRIVATE, no timeout). Returns
/// at once if the value already differs; may return spuriously, so callers re-check.
#[inline(always)]
pub fn wait(word: &AtomicU32, expected: u32) {
    // SAFETY: `word` is a live, aligned 32-bit atomic for the whole call; a null timeout
    // means no timeout; the kernel only reads the word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

/// Wakes up to `count` threads blocked in `wait` on `word` (FUTEX_WAKE_PRIVATE);
/// returns how many were woken.
#[inline(always)]
pub fn wake(word: &AtomicU32, count: i32) -> i64 {
    // SAFETY: `word` is a live, aligned 32-bit atomic; FUTEX_WAKE does not dereference
    // anything else.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            count,
        )
    }
}
