//! Pinning the calling thread to one CPU, and reading which CPUs are online.

use std::io;

/// Pins the calling thread to `cpu` (sched_setaffinity on thread id 0 = self).
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    pin_current_thread_to(&[cpu])
}

/// Restricts the calling thread to the given CPUs.
pub fn pin_current_thread_to(cpus: &[usize]) -> io::Result<()> {
    set_affinity(0, cpus)
}

/// Restricts task `tid` (0 = the calling thread) to the given CPUs.
pub fn set_affinity(tid: libc::pid_t, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; all-zero is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is beyond CPU_SETSIZE"),
            ));
        }
        // SAFETY: `cpu` is below CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok(())
}

/// The CPUs task `tid` (0 = the calling thread) may run on.
pub fn get_affinity(tid: libc::pid_t) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; all-zero is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(super::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// How many CPUs this machine has configured (present, online or not): CPU numbers run
/// from 0 to this minus 1 (glibc's _SC_NPROCESSORS_CONF, which cyclictest's CPU sets are
/// checked against).
pub fn configured_cpu_count() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/present")
        .ok()
        .and_then(|s| super::cpu_list::parse_cpu_list_plain(s.trim()).ok())
        .and_then(|cpus| cpus.last().map(|c| c + 1))
        .unwrap_or_else(|| online_cpus().last().map_or(1, |c| c + 1))
}

/// Online CPUs as the kernel lists them in /sys/devices/system/cpu/online.
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| super::cpu_list::parse_cpu_list_plain(s.trim()).ok())
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            (0..n).collect()
        })
}
