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

/// Whether a failed affinity write is the kernel refusing this IRQ any affinity (EPERM,
/// EIO before 6.x: kernel-managed or per-CPU), not a bad value.
pub fn is_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EIO))
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

/// Handlers of interrupts every CPU has its own of (Arm's private peripheral interrupts,
/// RISC-V's local ones, the IPIs): no affinity can move them.
const PER_CPU_HANDLERS: &[&str] = &[
    "arch_timer",
    "arm-pmu",
    "arm_spe_pmu",
    "IPI",
    "kvm guest vtimer",
    "kvm guest ptimer",
    "vgic",
    "riscv-timer",
];

/// Whether handler names (comma-joined, as [`name`] gives them) are a per-CPU interrupt's.
pub fn is_per_cpu_handler(names: &str) -> bool {
    names.split(',').any(|n| PER_CPU_HANDLERS.contains(&n))
}

/// The per-CPU interrupts of a /proc/interrupts text: rows whose chip is an Arm GIC
/// (`GIC-0` of GICv2, `GICv3`) with a private hardware number (a PPI: 16-31, or
/// GICv3.1's extended PPIs 1056-1119), or whose handler is one of the per-CPU ones
/// (`arch_timer`, `arm-pmu`, ...). The kernel refuses them a new affinity (EIO, EPERM
/// from 6.x) as it does kernel-managed IRQs; unlike those, they fire on every CPU.
pub fn per_cpu_irqs(interrupts: &str) -> Vec<u32> {
    let mut lines = interrupts.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    let mut out = Vec::new();
    for line in lines {
        let mut words = line.split_whitespace();
        let Some(irq) = words
            .next()
            .and_then(|w| w.strip_suffix(':'))
            .and_then(|w| w.parse::<u32>().ok())
        else {
            continue;
        };
        let rest: Vec<&str> = words.skip(cpus).collect();
        let chip = rest.first().copied().unwrap_or_default();
        let hwirq = rest.get(1).and_then(|w| {
            let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        let private = chip.starts_with("GIC")
            && hwirq.is_some_and(|h| (16..32).contains(&h) || (1056..1120).contains(&h));
        let handlers = rest.get(3..).map(|h| h.join(" ")).unwrap_or_default();
        if private || handlers.split(", ").any(|h| PER_CPU_HANDLERS.contains(&h)) {
            out.push(irq);
        }
    }
    out
}

/// This machine's per-CPU interrupts ([`per_cpu_irqs`] of /proc/interrupts) and those
/// whose handlers say so; empty on x86, whose per-CPU vectors have no /proc/irq entry.
pub fn per_cpu_here() -> Vec<u32> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    let mut irqs = per_cpu_irqs(&text);
    for n in list() {
        if !irqs.contains(&n) && is_per_cpu_handler(&name(n)) {
            irqs.push(n);
        }
    }
    irqs.sort_unstable();
    irqs
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

    #[test]
    fn per_cpu_interrupts_of_a_gic() {
        // An arm64 guest's rows (QEMU virt, GICv2) and an x86 one's.
        let text = "           CPU0       CPU1       \n 11:       2958       2747      GIC-0  27 Level     arch_timer\n 13:         41          0      GIC-0  33 Level     uart-pl011\n 14:          0          0      GIC-0  23 Level     arm-pmu\n 17:         40          0  9030000.pl061   3 Edge      latscope-812\n 20:          1          2      GICv3 1056 Level     kvm guest vtimer\nIPI0:        10         12       Rescheduling interrupts\n 26:          0          9  IO-APIC   4-edge      ttyS0\n";
        assert_eq!(per_cpu_irqs(text), vec![11, 14, 20]);
        assert!(is_per_cpu_handler("arch_timer"));
        assert!(!is_per_cpu_handler("virtio0,uart-pl011"));
    }
}
