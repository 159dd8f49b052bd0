//! The kernel log as /dev/kmsg holds it (what `dmesg` prints), read without blocking:
//! doctor looks in it for what the kernel said at boot ("Hypervisor detected: KVM").

use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;

/// Records read at most (the ring buffer holds a few thousand).
const MAX_RECORDS: usize = 65_536;

/// The messages of the kernel log (one a line, the record's prefix `6,0,0,-;` cut),
/// or the error opening it (not root with dmesg_restrict, no /dev/kmsg).
pub fn messages() -> std::io::Result<String> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")?;
    let mut out = String::new();
    let mut record = vec![0u8; 8192];
    for _ in 0..MAX_RECORDS {
        // One record a read; EAGAIN at the end; EPIPE when the record was overwritten
        // while reading (the next read goes on with the oldest left).
        match file.read(&mut record) {
            Ok(0) => break,
            Ok(n) => out.push_str(&message_of(&String::from_utf8_lossy(&record[..n]))),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// A /dev/kmsg record's message line: after the first `;` of its first line (a plain
/// text line, as a fixture tree stores the log, is kept as it is).
pub fn message_of(record: &str) -> String {
    let first = record.lines().next().unwrap_or("");
    let text = match first.split_once(';') {
        Some((prefix, text)) if prefix.starts_with(|c: char| c.is_ascii_digit()) => text,
        _ => first,
    };
    format!("{text}\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn records_become_message_lines() {
        // This VM's record, and one with a continuation line.
        assert_eq!(
            super::message_of("6,0,0,-,caller=T0;Hypervisor detected: KVM\n"),
            "Hypervisor detected: KVM\n"
        );
        assert_eq!(super::message_of("4,1,2,-;a; b\n SUBSYSTEM=x\n"), "a; b\n");
        assert_eq!(super::message_of("plain line"), "plain line\n");
    }
}
