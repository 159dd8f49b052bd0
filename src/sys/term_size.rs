//! The width of the terminal behind a descriptor (TIOCGWINSZ), so the live progress line
//! can fit it instead of wrapping into a second row that the next redraw leaves behind.

use std::os::fd::AsRawFd;

/// The columns of the terminal on stderr, or None (not a terminal, or a size of 0 as a
/// fresh pseudo-terminal reports before anyone sets it).
pub fn stderr_columns() -> Option<usize> {
    let fd = std::io::stderr().as_raw_fd();
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which points to a live,
    // writable local of that type; the descriptor is only read, and an error leaves it unset.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size as *mut libc::winsize) };
    (rc == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
