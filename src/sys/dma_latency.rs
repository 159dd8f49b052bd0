//! /dev/cpu_dma_latency: reading the system's PM QoS latency limit and holding a request
//! open for the length of a run (the kernel drops the request when the file is closed).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};

const DEVICE: &str = "/dev/cpu_dma_latency";

/// The current aggregate cpu_dma_latency value in µs, if the device is readable.
pub fn current_us() -> Option<i32> {
    let mut f = File::open(DEVICE).ok()?;
    let mut buf = [0u8; 4];
    f.read_exact(&mut buf).ok()?;
    Some(i32::from_ne_bytes(buf))
}

/// Holds `/dev/cpu_dma_latency` at a value while alive; dropping it closes the file,
/// which removes the request and restores the system's own setting.
#[derive(Debug)]
pub struct DmaLatencyGuard {
    _file: File,
    pub value_us: i32,
}

impl DmaLatencyGuard {
    pub fn hold(value_us: i32) -> io::Result<Self> {
        let mut file = OpenOptions::new().write(true).open(DEVICE)?;
        file.write_all(&value_us.to_ne_bytes())?;
        Ok(Self {
            _file: file,
            value_us,
        })
    }
}

/// The processes holding /dev/cpu_dma_latency open (each a request the kernel counts in
/// the aggregate), from their /proc/PID/fd links; only the ones this user may see.
pub fn holders() -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = procs
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                    .any(|target| target == std::path::Path::new(DEVICE))
            })
        })
        .collect();
    pids.sort_unstable();
    pids
}
