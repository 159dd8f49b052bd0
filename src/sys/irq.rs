//! Interrupt affinity in /proc/irq: listing IRQs with their handler names, reading and
//! writing `smp_affinity_list` and the default affinity given to new IRQs.

use std::io;
use std::path::PathBuf;

/// The default affinity file for IRQs created later (a hex mask).
pub const DEFAULT_AFFINITY_PATH: &str = "/proc/irq/default_smp_affinity";

/// Every IRQ number that has a /proc/irq/N directory, ascending.
pub fn list() -> Vec<u32> {
    let mut irqs: Vec<u32> = std::fs::read_dir("/proc/irq")
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    irqs.sort_unstable();
    irqs
}

fn affinity_path(irq: u32) -> PathBuf {
    PathBuf::from(format!("/proc/irq/{irq}/smp_affinity_list"))
}

/// The affinity list of `irq` exactly as the kernel prints it (without the newline).
pub fn affinity_list(irq: u32) -> io::Result<String> {
    super::cpuset::read_value(&affinity_path(irq))
}

/// Sets the affinity list of `irq`; the kernel answers EIO for IRQs it will not move.
pub fn set_affinity_list(irq: u32, list: &str) -> io::Result<()> {
    super::cpuset::write_value(&affinity_path(irq), list)
}

/// Whether the kernel refuses user space any new affinity for `irq`: a kernel-managed
/// IRQ (the per-queue interrupts of virtio-blk, NVMe, ...), or `noirqaffinity`. Asked
/// without changing anything: the kernel checks this before it parses what is written
/// (kernel/irq/proc.c, write_irq_affinity), so an unparsable value is refused with EPERM
/// (EIO before 6.x) when the IRQ is managed and EINVAL when it could be moved, and
/// nothing is set either way. `None`: not asked (not root, no such IRQ).
pub fn refuses_new_affinity(irq: u32) -> Option<bool> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(affinity_path(irq))
        .ok()?;
    match file.write_all(b"x\n") {
        Ok(()) => None,
        Err(e) => match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EIO) => Some(true),
            Some(libc::EINVAL) => Some(false),
            _ => None,
        },
    }
}

/// The CPUs the kernel actually delivers `irq` to, where it says.
pub fn effective_affinity_list(irq: u32) -> Option<String> {
    super::cpuset::read_value(&PathBuf::from(format!(
        "/proc/irq/{irq}/effective_affinity_list"
    )))
    .ok()
}

/// The handler names of `irq` (the subdirectories of /proc/irq/N), comma-joined.
pub fn name(irq: u32) -> String {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/irq/{irq}"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.join(",")
}

/// The default IRQ affinity mask as the kernel prints it.
pub fn default_affinity() -> io::Result<String> {
    super::cpuset::read_value(&PathBuf::from(DEFAULT_AFFINITY_PATH))
}

/// Sets the default IRQ affinity mask (hex, as [`cpu_mask_hex`] formats it).
pub fn set_default_affinity(mask: &str) -> io::Result<()> {
    super::cpuset::write_value(&PathBuf::from(DEFAULT_AFFINITY_PATH), mask)
}

/// A CPU list as the kernel's hex bitmap format: 32-bit groups, most significant first,
/// separated by commas (`0-1` -> `3`, CPU 33 -> `2,00000000`).
pub fn cpu_mask_hex(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut words = vec![0u32; groups];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    let mut out = Vec::with_capacity(groups);
    for (i, w) in words.iter().rev().enumerate() {
        out.push(if i == 0 {
            format!("{w:x}")
        } else {
            format!("{w:08x}")
        });
    }
    out.join(",")
}

/// The CPUs of a kernel hex bitmap (`3`, `2,00000000`); `None` if it is not one.
pub fn parse_mask_hex(mask: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for (word_index, word) in mask.trim().rsplit(',').enumerate() {
        let bits = u32::from_str_radix(word, 16).ok()?;
        for bit in 0..32 {
            if bits & (1 << bit) != 0 {
                cpus.push(word_index * 32 + bit);
            }
        }
    }
    cpus.sort_unstable();
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(cpu_mask_hex(&[0, 1]), "3");
        assert_eq!(cpu_mask_hex(&[0]), "1");
        assert_eq!(cpu_mask_hex(&[4, 5, 6, 7]), "f0");
        assert_eq!(cpu_mask_hex(&[33]), "2,00000000");
        assert_eq!(parse_mask_hex("2,00000001"), Some(vec![0, 33]));
        assert_eq!(parse_mask_hex("3"), Some(vec![0, 1]));
        assert_eq!(parse_mask_hex("zz"), None);
    }
}
