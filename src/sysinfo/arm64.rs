//! What an Arm machine says about itself where x86 has a `model name`, CPUID flags and
//! DMI: the cores from /proc/cpuinfo's `CPU implementer`/`CPU part` codes, the board
//! from the device tree's `model`, a hypervisor from the device tree (QEMU's virt
//! machine, a `hypervisor` node), and the architecture the doctor's fixes are worded for.
//! Read through `HostFiles`, so the same code runs on this machine and on fixture trees.

use crate::sys::host_files::HostFiles;

/// The architecture a machine's /proc/cpuinfo shows (the fixes name its packages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuArch {
    X86,
    Arm64,
    /// A 32-bit Arm kernel (Raspberry Pi OS's 32-bit images, older boards).
    Arm32,
    Other,
}

impl CpuArch {
    /// From /proc/cpuinfo: x86 says `vendor_id`/`flags`; Arm says `CPU implementer`, with
    /// `CPU architecture: 8` and AArch64 `Features` (`asimd`) on a 64-bit kernel.
    pub fn of_cpuinfo(cpuinfo: &str) -> Self {
        let field = |name: &str| first_field(cpuinfo, name);
        if field("vendor_id").is_some() || field("flags").is_some() {
            return Self::X86;
        }
        if field("CPU implementer").is_none() {
            return Self::Other;
        }
        let aarch64 = field("Features").is_some_and(|f| f.split_whitespace().any(|x| x == "asimd"))
            || field("CPU architecture").as_deref() == Some("8") && field("model name").is_none();
        if aarch64 {
            Self::Arm64
        } else {
            Self::Arm32
        }
    }

    /// This machine's or a fixture tree's.
    pub fn of(files: &HostFiles) -> Self {
        Self::of_cpuinfo(&files.read("/proc/cpuinfo").unwrap_or_default())
    }
}

/// The value of the first `name : value` line of /proc/cpuinfo.
fn first_field(cpuinfo: &str, name: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_string())
    })
}

/// An implementer: its code, its name, its parts (code, name).
type Implementer = (u32, &'static str, &'static [(u32, &'static str)]);

/// The Arm CPU implementers and parts most boards, phones, clouds and Macs carry (the
/// kernel's arch/arm64/include/asm/cputype.h and util-linux's lscpu-arm.c name them);
/// a small table by hand, as no crate keeps one.
const PARTS: &[Implementer] = &[
    (
        0x41,
        "Arm",
        &[
            (0xb76, "ARM1176"),
            (0xc07, "Cortex-A7"),
            (0xc08, "Cortex-A8"),
            (0xc09, "Cortex-A9"),
            (0xc0f, "Cortex-A15"),
            (0xd03, "Cortex-A53"),
            (0xd04, "Cortex-A35"),
            (0xd05, "Cortex-A55"),
            (0xd07, "Cortex-A57"),
            (0xd08, "Cortex-A72"),
            (0xd09, "Cortex-A73"),
            (0xd0a, "Cortex-A75"),
            (0xd0b, "Cortex-A76"),
            (0xd0c, "Neoverse-N1"),
            (0xd0d, "Cortex-A77"),
            (0xd0e, "Cortex-A76AE"),
            (0xd40, "Neoverse-V1"),
            (0xd41, "Cortex-A78"),
            (0xd42, "Cortex-A78AE"),
            (0xd44, "Cortex-X1"),
            (0xd46, "Cortex-A510"),
            (0xd47, "Cortex-A710"),
            (0xd48, "Cortex-X2"),
            (0xd49, "Neoverse-N2"),
            (0xd4a, "Neoverse-E1"),
            (0xd4b, "Cortex-A78C"),
            (0xd4d, "Cortex-A715"),
            (0xd4e, "Cortex-X3"),
            (0xd4f, "Neoverse-V2"),
            (0xd80, "Cortex-A520"),
            (0xd81, "Cortex-A720"),
            (0xd82, "Cortex-X4"),
            (0xd84, "Neoverse-V3"),
            (0xd8e, "Neoverse-N3"),
        ],
    ),
    (0x42, "Broadcom", &[(0x516, "Vulcan")]),
    (
        0x43,
        "Cavium",
        &[
            (0x0a1, "ThunderX"),
            (0x0af, "ThunderX2"),
            (0x0b8, "ThunderX3"),
        ],
    ),
    (0x46, "Fujitsu", &[(0x001, "A64FX")]),
    (0x48, "HiSilicon", &[(0xd01, "TaiShan v110 (Kunpeng 920)")]),
    (0x4e, "NVIDIA", &[(0x003, "Denver 2"), (0x004, "Carmel")]),
    (
        0x51,
        "Qualcomm",
        &[
            (0x001, "Oryon"),
            (0x800, "Kryo 2xx Gold"),
            (0x801, "Kryo 2xx Silver"),
            (0x802, "Kryo 3xx Gold"),
            (0x803, "Kryo 3xx Silver"),
            (0x804, "Kryo 4xx Gold"),
            (0x805, "Kryo 4xx Silver"),
            (0xc00, "Falkor"),
        ],
    ),
    (
        0x61,
        "Apple",
        &[
            (0x022, "M1 Icestorm"),
            (0x023, "M1 Firestorm"),
            (0x032, "M2 Blizzard"),
            (0x033, "M2 Avalanche"),
        ],
    ),
    (0xc0, "Ampere", &[(0xac3, "Ampere-1"), (0xac4, "Ampere-1a")]),
];

fn hex(text: &str) -> Option<u32> {
    u32::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()
}

/// One core's name from its implementer and part codes: `Cortex-A57`, `Apple M1
/// Firestorm`, or the codes in hex where the table has none (`Arm part 0xd8f`,
/// `implementer 0x6d part 0xd49`).
pub fn part_name(implementer: u32, part: u32) -> String {
    match PARTS.iter().find(|(code, ..)| *code == implementer) {
        Some((_, vendor, parts)) => match parts.iter().find(|(p, _)| *p == part) {
            Some((_, name)) if implementer == 0x41 => (*name).to_string(),
            Some((_, name)) => format!("{vendor} {name}"),
            None => format!("{vendor} part {part:#05x}"),
        },
        None => format!("implementer {implementer:#04x} part {part:#05x}"),
    }
}

/// The cores of an Arm /proc/cpuinfo, each kind once with its count when they differ
/// (`Cortex-A57`, `4× Cortex-A55 + 4× Cortex-A76`); `None` without implementer codes.
pub fn arm_cores(cpuinfo: &str) -> Option<String> {
    let mut kinds: Vec<(String, usize)> = Vec::new();
    let mut implementer = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "CPU implementer" => implementer = hex(value),
            "CPU part" => {
                let (Some(i), Some(p)) = (implementer.take(), hex(value)) else {
                    continue;
                };
                let name = part_name(i, p);
                match kinds.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, count)) => *count += 1,
                    None => kinds.push((name, 1)),
                }
            }
            _ => {}
        }
    }
    match kinds.as_slice() {
        [] => None,
        [(name, _)] => Some(name.clone()),
        _ => Some(
            kinds
                .iter()
                .map(|(n, c)| format!("{c}× {n}"))
                .collect::<Vec<_>>()
                .join(" + "),
        ),
    }
}

/// A device tree property of strings (NUL-separated, as the kernel exposes it).
pub fn device_tree_strings(files: &HostFiles, property: &str) -> Vec<String> {
    files
        .read(&format!("/proc/device-tree/{property}"))
        .map(|text| {
            text.split('\0')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The board from the device tree's `model` ("Raspberry Pi 4 Model B Rev 1.4", QEMU's
/// `linux,dummy-virt` as "QEMU virt machine"); `None`
/// without a device tree (x86, ACPI servers) or a model.
pub fn board_model(files: &HostFiles) -> Option<String> {
    let model = device_tree_strings(files, "model").into_iter().next()?;
    // QEMU's virt machine calls itself by its compatible string.
    Some(if model == "linux,dummy-virt" {
        "QEMU virt machine".into()
    } else {
        model
    })
}

/// `cpu_model` of a result: x86's `model name`; on Arm the cores from their codes, with
/// the board from the device tree in parentheses ("Cortex-A72 (Raspberry Pi 4 Model B
/// Rev 1.4)"); a 32-bit Arm kernel's `model name` ("ARMv7 Processor rev 3 (v7l)") only
/// when the codes are missing.
pub fn cpu_model(files: &HostFiles) -> String {
    let cpuinfo = files.read("/proc/cpuinfo").unwrap_or_default();
    let model_name = first_field(&cpuinfo, "model name");
    let cores = match CpuArch::of_cpuinfo(&cpuinfo) {
        CpuArch::Arm64 | CpuArch::Arm32 => arm_cores(&cpuinfo).or(model_name),
        _ => model_name,
    };
    match (cores, board_model(files)) {
        (Some(c), Some(b)) => format!("{c} ({b})"),
        (Some(c), None) => c,
        (None, Some(b)) => b,
        (None, None) => String::new(),
    }
}

/// A hypervisor the device tree names: QEMU's virt machine (`compatible` =
/// `linux,dummy-virt`, under TCG or KVM alike), a `hypervisor` node (Xen: `xen,xen`).
/// The name and the evidence line; `None` on a board or without a device tree.
pub fn device_tree_hypervisor(files: &HostFiles) -> Option<(String, String)> {
    let node = device_tree_strings(files, "hypervisor/compatible");
    if let Some(first) = node.first() {
        let name = if first.starts_with("xen,") {
            "Xen".to_string()
        } else {
            first.clone()
        };
        return Some((
            name,
            format!(
                "/proc/device-tree/hypervisor/compatible: {}",
                node.join(" ")
            ),
        ));
    }
    let compatible = device_tree_strings(files, "compatible");
    compatible.iter().any(|c| c == "linux,dummy-virt").then(|| {
        (
            "QEMU virt machine".to_string(),
            format!("/proc/device-tree/compatible: {}", compatible.join(" ")),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_and_unknown_codes_printed_in_hex() {
        assert_eq!(part_name(0x41, 0xd07), "Cortex-A57");
        assert_eq!(part_name(0x41, 0xd0c), "Neoverse-N1");
        assert_eq!(part_name(0x61, 0x023), "Apple M1 Firestorm");
        assert_eq!(part_name(0x51, 0x805), "Qualcomm Kryo 4xx Silver");
        assert_eq!(part_name(0x41, 0xfff), "Arm part 0xfff");
        assert_eq!(part_name(0x6d, 0xd49), "implementer 0x6d part 0xd49");
    }

    #[test]
    fn big_little_cores_are_counted() {
        let core =
            |part: &str| format!("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: {part}\n\n");
        let text = [core("0xd05"), core("0xd05"), core("0xd0b")].concat();
        assert_eq!(arm_cores(&text).unwrap(), "2× Cortex-A55 + 1× Cortex-A76");
        assert_eq!(arm_cores("model name\t: Intel(R) Xeon(R)\n"), None);
    }

    #[test]
    fn architectures_from_cpuinfo() {
        assert_eq!(
            CpuArch::of_cpuinfo("vendor_id\t: GenuineIntel\nflags\t: fpu\n"),
            CpuArch::X86
        );
        let arm32 = "model name\t: ARMv7 Processor rev 3 (v7l)\nFeatures\t: half thumb fastmult vfp edsp neon vfpv3\nCPU implementer\t: 0x41\nCPU architecture: 7\n";
        assert_eq!(CpuArch::of_cpuinfo(arm32), CpuArch::Arm32);
        let arm64 =
            "Features\t: fp asimd evtstrm cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\n";
        assert_eq!(CpuArch::of_cpuinfo(arm64), CpuArch::Arm64);
        assert_eq!(CpuArch::of_cpuinfo(""), CpuArch::Other);
    }
}
