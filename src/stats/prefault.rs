//! Prefaulting the buffers the Recorder writes in the measuring loop, without asking the
//! kernel for its page size, so stats imports nothing from sys: one write every 4 KiB,
//! the smallest page Linux has, reaches every page whatever the page size is (on larger
//! pages it writes a few times per page, before measuring). Probes prefault their own
//! buffers with sys::memlock::prefault_slice.

/// The smallest page size of any Linux architecture.
pub const SMALLEST_PAGE_BYTES: usize = 4096;

/// Writes one element per 4 KiB of `buf` so every page is present (and, under
/// MCL_ONFAULT, locked) before measuring: a zeroed allocation (calloc, fresh mmap) has
/// no page yet, and its first write in a measuring loop would page-fault.
pub fn prefault_slice<T: Copy>(buf: &mut [T]) {
    let stride = (SMALLEST_PAGE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    for i in (0..buf.len()).step_by(stride) {
        buf[i] = std::hint::black_box(buf[i]);
    }
}
