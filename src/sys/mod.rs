//! The only place with libc calls and `unsafe`: thin, safe wrappers around the kernel
//! interfaces latscope needs, each `unsafe` block carrying a SAFETY comment. It imports
//! nothing from the rest of latscope (std, libc and external crates only).

pub mod affinity;
pub mod clock;
pub mod cpu_list;
pub mod cpuid;
pub mod cpuset;
pub mod dma_latency;
pub mod fifo;
pub mod filelock;
pub mod flat_vec;
pub mod futex;
pub mod gpio;
pub mod host_files;
pub mod irq;
pub mod kmsg;
pub mod math_symbols;
pub mod memlock;
pub mod memory;
pub mod mount;
pub mod mqueue;
pub mod new_file;
pub mod pid_namespace;
pub mod posix_timer;
pub mod process;
pub mod procfs;
pub mod sched;
pub mod signals;
pub mod term_size;
pub mod timerfd;
pub mod tty;
pub mod udp_timestamps;
pub mod wake_primitives;

/// The last OS error as an `std::io::Error`, for wrappers that return `-1`.
pub(crate) fn last_os_error() -> std::io::Error {
    std::io::Error::last_os_error()
}
