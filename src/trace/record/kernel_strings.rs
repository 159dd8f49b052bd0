//! Kernel strings by address, from tracefs' `printk_formats`: some events carry a
//! `const char *` that the binary record holds only as a pointer (Arm's ipi:ipi_entry
//! `reason`, a `__tracepoint_string`), and this file is where the kernel says what each
//! such pointer reads. Parsed by hand: one line per string, `0xADDR : "TEXT"`.

use std::collections::HashMap;

/// What the kernel's trace strings read, by address.
#[derive(Debug, Clone, Default)]
pub struct KernelStrings(HashMap<u64, String>);

impl KernelStrings {
    /// The lines of `printk_formats`; a line that is not `0xADDR : "TEXT"` is skipped.
    pub fn parse(text: &str) -> KernelStrings {
        let strings = text
            .lines()
            .filter_map(|line| {
                let (addr, rest) = line.split_once(" : ")?;
                let addr = u64::from_str_radix(addr.trim().strip_prefix("0x")?, 16).ok()?;
                let text = rest.strip_prefix('"')?;
                let text = text.strip_suffix('"').unwrap_or(text);
                Some((addr, text.to_string()))
            })
            .collect();
        KernelStrings(strings)
    }

    /// The string at `addr`, if the kernel listed it.
    pub fn get(&self, addr: u64) -> Option<&str> {
        self.0.get(&addr).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::{EventKind, ARM_IPI};
    use crate::trace::record::format::{Decoder, EventFormat};

    /// Recorded in the arm64 lab's stock guest (Debian 6.1.0-56-arm64): the whole file,
    /// and ipi:ipi_entry's format.
    const PRINTK_FORMATS: &str =
        include_str!("../../../tests/fixtures/trace/arm64-6.1-printk_formats");
    const IPI_ENTRY: &str =
        include_str!("../../../tests/fixtures/trace/arm64-6.1-ipi_entry-format");

    #[test]
    fn the_guests_printk_formats_name_every_line() {
        let strings = KernelStrings::parse(PRINTK_FORMATS);
        let lines = PRINTK_FORMATS.lines().count();
        let distinct: std::collections::HashSet<&str> = PRINTK_FORMATS
            .lines()
            .filter_map(|l| l.split(" : ").next())
            .collect();
        assert_eq!((lines, strings.len()), (167, distinct.len()));
        assert_eq!(
            strings.get(0xffffd9a91b7ea858),
            Some("Rescheduling interrupts")
        );
        assert_eq!(
            strings.get(0xffffd9a91b7ea8a8),
            Some("CPU stop (for crash dump) interrupts")
        );
        assert_eq!(strings.get(0x1234), None);
        assert!(KernelStrings::parse("garbage\n0xzz : \"x\"\n\n").is_empty());
    }

    /// An ipi:ipi_entry record whose reason points at `addr`, decoded with and without the
    /// kernel's strings.
    fn ipi_name(addr: u64, strings: Option<KernelStrings>) -> String {
        let mut dec = Decoder::new(vec![EventFormat::parse("ipi", IPI_ENTRY).unwrap()]).unwrap();
        if let Some(s) = strings {
            dec = dec.with_kernel_strings(s);
        }
        let mut d = 32u16.to_le_bytes().to_vec();
        d.extend([0, 0]);
        d.extend(0i32.to_le_bytes());
        d.extend(addr.to_le_bytes());
        match dec.decode(1, 0, &d).unwrap().kind {
            EventKind::VectorEntry { name, vector } if vector == ARM_IPI => name,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_arm_ipi_is_named_by_the_string_its_reason_points_at() {
        let strings = || Some(KernelStrings::parse(PRINTK_FORMATS));
        assert_eq!(ipi_name(0xffffd9a91b7ea870, strings()), "call_function");
        assert_eq!(ipi_name(0xffffd9a91b7ea858, strings()), "reschedule");
        assert_eq!(ipi_name(0xffffd9a91b7ea908, strings()), "cpu_wakeup");
        // Not listed (or no printk_formats): the plain name, as before.
        assert_eq!(ipi_name(0xdead, strings()), "ipi");
        assert_eq!(ipi_name(0xffffd9a91b7ea870, None), "ipi");
    }
}
