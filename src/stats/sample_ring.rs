//! A measuring thread's latest samples as atomics, so a reader outside the loop can
//! print them while the run goes on (`latscope cyclictest -v` and `--spike` stream them
//! as cyclictest does from its per-thread value buffer). The one writer (the Recorder)
//! stores two words per sample into a slot and then publishes the sample count with
//! Release; the reader loads the count with Acquire and reads the slots behind it. A
//! reader that falls a whole ring behind loses the oldest samples and is told how many
//! (`Drained::lost`), never reads a half-written slot as a sample. Allocated and touched
//! before measuring; `push` only stores.

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots of a ring: 32768 samples, 160 ms at a 5 µs interval, 3.2 s at 100 µs (the
/// reader drains every 10 ms). cyclictest's buffer holds 16384.
pub const SAMPLE_RING_SLOTS: usize = 1 << 15;

/// One sample as the ring keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingSample {
    /// 0-based number of the sample in its thread's run.
    pub index: u64,
    /// When it was taken (CLOCK_MONOTONIC ns: the wake-up).
    pub at_ns: u64,
    pub value_ns: u64,
}

/// The ring: `slots` pairs (at_ns, value_ns), slot = sample index modulo its length.
#[derive(Debug)]
pub struct SampleRing {
    slots: Box<[[AtomicU64; 2]]>,
    mask: u64,
}

/// What one `drain` read: the samples in order, and how many were overwritten before
/// they could be read.
#[derive(Debug, Default)]
pub struct Drained {
    pub samples: Vec<RingSample>,
    pub lost: u64,
}

impl SampleRing {
    /// A ring of `slots` (rounded up to a power of two), every slot written once here.
    pub fn new(slots: usize) -> Self {
        let len = slots.max(2).next_power_of_two();
        let slots: Box<[[AtomicU64; 2]]> = (0..len)
            .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
            .collect();
        Self {
            slots,
            mask: len as u64 - 1,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// Stores sample number `index` (the writer publishes the count after this).
    #[inline(always)]
    pub fn push(&self, index: u64, at_ns: u64, value_ns: u64) {
        let slot = &self.slots[(index & self.mask) as usize];
        slot[0].store(at_ns, Ordering::Relaxed);
        slot[1].store(value_ns, Ordering::Relaxed);
    }

    /// Reads the samples from `*cursor` up to `published` (the count the writer stored
    /// with Release, loaded with Acquire) and moves the cursor past them; `now_published`
    /// is loaded again after reading, so a slot the writer may have reused meanwhile is
    /// counted as lost instead of returned. Allocates (the reader's side only).
    pub fn drain(
        &self,
        cursor: &mut u64,
        published: u64,
        now_published: impl FnOnce() -> u64,
    ) -> Drained {
        let cap = self.capacity();
        let mut out = Drained::default();
        let mut from = *cursor;
        if published.saturating_sub(from) > cap {
            out.lost += published - cap - from;
            from = published - cap;
        }
        let mut read: Vec<RingSample> = (from..published)
            .map(|index| {
                let slot = &self.slots[(index & self.mask) as usize];
                RingSample {
                    index,
                    at_ns: slot[0].load(Ordering::Relaxed),
                    value_ns: slot[1].load(Ordering::Relaxed),
                }
            })
            .collect();
        // Slots below `after - cap` may have been rewritten while they were read.
        let safe_from = now_published().saturating_sub(cap);
        let torn = read.iter().take_while(|s| s.index < safe_from).count();
        out.lost += torn as u64;
        read.drain(..torn);
        out.samples = read;
        *cursor = published.max(*cursor);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_gets_every_sample_in_order_while_it_keeps_up() {
        let ring = SampleRing::new(8);
        let mut cursor = 0;
        let mut seen = Vec::new();
        for i in 0..20u64 {
            ring.push(i, 1000 + i, 10 * i);
            if i % 3 == 2 {
                let d = ring.drain(&mut cursor, i + 1, || i + 1);
                assert_eq!(d.lost, 0);
                seen.extend(d.samples);
            }
        }
        let d = ring.drain(&mut cursor, 20, || 20);
        seen.extend(d.samples);
        let expected: Vec<RingSample> = (0..20)
            .map(|i| RingSample {
                index: i,
                at_ns: 1000 + i,
                value_ns: 10 * i,
            })
            .collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_reader_a_ring_behind_loses_the_oldest_and_counts_them() {
        let ring = SampleRing::new(4);
        for i in 0..10u64 {
            ring.push(i, i, i);
        }
        let mut cursor = 0;
        let d = ring.drain(&mut cursor, 10, || 10);
        assert_eq!(d.lost, 6);
        assert_eq!(
            d.samples.iter().map(|s| s.index).collect::<Vec<_>>(),
            [6, 7, 8, 9]
        );
        // The writer went on by two while the slots were read: the two oldest of them
        // may be torn, so they are lost too.
        let mut cursor = 6;
        let d = ring.drain(&mut cursor, 10, || 12);
        assert_eq!((d.lost, d.samples.len(), cursor), (2, 2, 10));
    }
}
