//! The timer split's hrtimer expiries recorded by a small BPF program instead of the
//! `timer:hrtimer_expire_entry` trace event: on this project's VM one trace event on the wake
//! path cost about 1 µs before the thread ran (bench/README.md, issue 21), the BPF program
//! far less. It runs on the raw tracepoint, keeps only the measured CPUs, and writes
//! (now, hrtimer, CPU, pid) into a BPF ring buffer without waking anyone; the drain reads it
//! from CPU 0 through shared pages.

use crate::sys::bpf::{self, RingbufReader};
use crate::trace::event::{Event, EventKind};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// One record: the hrtimer base's time, the hrtimer, (CPU << 32 | pid).
const RECORD_BYTES: usize = 24;

/// What the recorder keeps of an attached expiry program.
pub struct ExpiryProbe {
    _link: OwnedFd,
    _prog: OwnedFd,
    reader: RingbufReader,
    dropped: OwnedFd,
}

/// The ring buffer's size: room for many sweeps of every measured CPU's expiries
/// (a power of two and a multiple of the page, as the kernel requires).
fn ring_bytes(cpus: usize) -> usize {
    (cpus.max(1) * 256 * 1024).next_power_of_two().max(1 << 20)
}

impl ExpiryProbe {
    /// Loads and attaches the program for `cpus`. Errors say what the kernel refused.
    pub fn attach(cpus: &[usize]) -> io::Result<ExpiryProbe> {
        let ring_len = ring_bytes(cpus.len());
        let ring = bpf::map_create(bpf::MAP_TYPE_RINGBUF, 0, 0, ring_len as u32)?;
        let dropped = bpf::map_create(bpf::MAP_TYPE_ARRAY, 4, 8, 1)?;
        let insns = program(cpus, ring.as_raw_fd(), dropped.as_raw_fd());
        let prog = bpf::load_raw_tracepoint_program(&insns, "latscope_expiry").map_err(|e| {
            io::Error::new(
                e.error.kind(),
                format!(
                    "the kernel refused the expiry program: {} {}",
                    e.error, e.verifier_log
                ),
            )
        })?;
        let link = bpf::attach_raw_tracepoint(&prog, "hrtimer_expire_entry")?;
        let reader = RingbufReader::map(ring, ring_len)?;
        Ok(ExpiryProbe {
            _link: link,
            _prog: prog,
            reader,
            dropped,
        })
    }

    /// Moves every record written so far into `out` as `HrtimerExpireEntry` events.
    pub fn drain(&mut self, out: &mut Vec<Event>) {
        self.reader.consume(|b| {
            if let Some(e) = decode(b) {
                out.push(e);
            }
        });
    }

    /// Records the kernel could not write because the ring buffer was full.
    pub fn dropped(&self) -> u64 {
        bpf::map_lookup_u64(&self.dropped, 0).unwrap_or(0)
    }
}

/// A record as the event the split reads. Its time is the hrtimer base's `now` (read at the
/// timer interrupt's start, CLOCK_MONOTONIC like the trace clock `mono`); the callback is not
/// read (0): the split matches the hrtimer's address, which hrtimer_start names.
fn decode(b: &[u8]) -> Option<Event> {
    if b.len() < RECORD_BYTES {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let now = word(0);
    let cpu_pid = word(2);
    Some(Event {
        ts_ns: now,
        cpu: (cpu_pid >> 32) as u32,
        pid: cpu_pid as u32 as i32,
        flags: 0,
        preempt_count: 0,
        kind: EventKind::HrtimerExpireEntry {
            hrtimer: word(1),
            now_ns: now as i64,
            function: 0,
        },
    })
}

// eBPF instruction encoding (`struct bpf_insn`: code, dst:4|src:4, off, imm), little-endian.
fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    u64::from(code)
        | u64::from((src << 4) | (dst & 0xf)) << 8
        | u64::from(off as u16) << 16
        | u64::from(imm as u32) << 32
}

const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R6: u8 = 6;
const R7: u8 = 7;
const R10: u8 = 10;
const MOV64_REG: u8 = 0xbf;
const MOV64_IMM: u8 = 0xb7;
const MOV32_REG: u8 = 0xbc;
const ADD64_IMM: u8 = 0x07;
const LSH64_IMM: u8 = 0x67;
const OR64_REG: u8 = 0x4f;
const LDX_DW: u8 = 0x79;
const STX_DW: u8 = 0x7b;
const ATOMIC_DW: u8 = 0xdb;
const JEQ_IMM: u8 = 0x15;
const JA: u8 = 0x05;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const LD_IMM64: u8 = 0x18;
const PSEUDO_MAP_FD: u8 = 1;
const PSEUDO_MAP_VALUE: u8 = 2;
const HELPER_GET_SMP_PROCESSOR_ID: i32 = 8;
const HELPER_GET_CURRENT_PID_TGID: i32 = 14;
const HELPER_PROBE_READ_KERNEL: i32 = 113;
const HELPER_RINGBUF_OUTPUT: i32 = 130;
const RB_NO_WAKEUP: i32 = 1;

/// The program, for the raw tracepoint `hrtimer_expire_entry(struct hrtimer *, ktime_t *now)`:
///
/// ```text
///   r6 = ctx; r0 = cpu; if r0 is not a measured CPU: return 0
///   stack[-8] = cpu << 32 | pid; stack[-16] = args[0]; stack[-24] = *args[1]
///   if ringbuf_output(ring, stack-24, 24, NO_WAKEUP) != 0: dropped[0] += 1
///   return 0
/// ```
fn program(cpus: &[usize], ring_fd: i32, dropped_fd: i32) -> Vec<u64> {
    let mut p = vec![
        insn(MOV64_REG, R6, R1, 0, 0),
        insn(CALL, 0, 0, 0, HELPER_GET_SMP_PROCESSOR_ID),
    ];
    // One test per measured CPU, each jumping past the rest and the "return" below.
    let n = cpus.len();
    for (i, &cpu) in cpus.iter().enumerate() {
        p.push(insn(JEQ_IMM, R0, 0, (n - i) as i16, cpu as i32));
    }
    let exit_jump = p.len();
    p.push(0); // patched: ja EXIT
    p.extend([
        insn(MOV64_REG, R7, R0, 0, 0),
        insn(LSH64_IMM, R7, 0, 0, 32),
        insn(CALL, 0, 0, 0, HELPER_GET_CURRENT_PID_TGID),
        insn(MOV32_REG, R0, R0, 0, 0),
        insn(OR64_REG, R0, R7, 0, 0),
        insn(STX_DW, R10, R0, -8, 0),
        insn(LDX_DW, R1, R6, 0, 0),
        insn(STX_DW, R10, R1, -16, 0),
        insn(LDX_DW, R3, R6, 8, 0),
        insn(MOV64_REG, R1, R10, 0, 0),
        insn(ADD64_IMM, R1, 0, 0, -24),
        insn(MOV64_IMM, R2, 0, 0, 8),
        insn(CALL, 0, 0, 0, HELPER_PROBE_READ_KERNEL),
        insn(LD_IMM64, R1, PSEUDO_MAP_FD, 0, ring_fd),
        0,
        insn(MOV64_REG, R2, R10, 0, 0),
        insn(ADD64_IMM, R2, 0, 0, -24),
        insn(MOV64_IMM, R3, 0, 0, RECORD_BYTES as i32),
        insn(MOV64_IMM, R4, 0, 0, RB_NO_WAKEUP),
        insn(CALL, 0, 0, 0, HELPER_RINGBUF_OUTPUT),
        insn(JEQ_IMM, R0, 0, 4, 0),
        insn(LD_IMM64, R1, PSEUDO_MAP_VALUE, 0, dropped_fd),
        0,
        insn(MOV64_IMM, R2, 0, 0, 1),
        insn(ATOMIC_DW, R1, R2, 0, 0),
    ]);
    let exit = p.len();
    p[exit_jump] = insn(JA, 0, 0, (exit - exit_jump - 1) as i16, 0);
    p.extend([insn(MOV64_IMM, R0, 0, 0, 0), insn(EXIT, 0, 0, 0, 0)]);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_encode_as_the_kernel_reads_them() {
        // r1 = r10 (bf a1 00 00 00 00 00 00), r1 += -24 (07 01 00 00 e8 ff ff ff).
        assert_eq!(
            insn(MOV64_REG, R1, R10, 0, 0).to_le_bytes(),
            [0xbf, 0xa1, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            insn(ADD64_IMM, R1, 0, 0, -24).to_le_bytes(),
            [0x07, 0x01, 0, 0, 0xe8, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            insn(STX_DW, R10, R0, -8, 0).to_le_bytes(),
            [0x7b, 0x0a, 0xf8, 0xff, 0, 0, 0, 0]
        );
    }

    #[test]
    fn every_cpu_test_jumps_to_the_record_and_the_fallthrough_to_the_exit() {
        let p = program(&[1, 3], 7, 8);
        let exit = p.len() - 2;
        for (i, cpu) in [(2usize, 1u64), (3, 3)] {
            assert_eq!(p[i] & 0xff, JEQ_IMM as u64);
            assert_eq!(p[i] >> 32, cpu);
            let off = (p[i] >> 16) as u16 as usize;
            assert_eq!(
                i + 1 + off,
                5,
                "CPU test {i} lands on the record's first insn"
            );
        }
        let ja_off = (p[4] >> 16) as u16 as usize;
        assert_eq!(4 + 1 + ja_off, exit);
    }

    #[test]
    fn records_the_expiry_of_a_sleep_on_the_measured_cpu() {
        let cpu = 0;
        crate::sys::affinity::pin_current_thread(cpu).expect("pin to CPU 0");
        let mut probe = match ExpiryProbe::attach(&[cpu]) {
            Ok(p) => p,
            Err(e) => panic!("attach: {e}"),
        };
        let before = crate::sys::clock::monotonic_ns();
        std::thread::sleep(std::time::Duration::from_millis(3));
        let after = crate::sys::clock::monotonic_ns();
        let mut events = Vec::new();
        probe.drain(&mut events);
        eprintln!(
            "{} events: {:?}",
            events.len(),
            events.iter().take(3).collect::<Vec<_>>()
        );
        assert!(events.iter().all(|e| e.cpu == cpu as u32));
        assert!(events
            .iter()
            .any(|e| e.ts_ns >= before + 3_000_000 && e.ts_ns <= after));
        assert_eq!(probe.dropped(), 0);
    }
}
