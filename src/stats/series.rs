//! The maximum of each second of a run, preallocated so recording never allocates.

/// Per-second maxima from an origin time; slots beyond the preallocated capacity fold
/// into the last slot and mark the series truncated (never allocate in the loop).
#[derive(Debug, Clone)]
pub struct PerSecondMax {
    origin_ns: u64,
    slots: Vec<u64>,
    used: usize,
    truncated: bool,
}

impl PerSecondMax {
    pub fn new(origin_ns: u64, capacity_seconds: usize) -> Self {
        let mut slots = vec![0u64; capacity_seconds.max(1)];
        // Touch every slot so the pages are present before measuring.
        for s in slots.iter_mut() {
            *s = std::hint::black_box(0);
        }
        Self {
            origin_ns,
            slots,
            used: 0,
            truncated: false,
        }
    }

    /// Moves the origin (after a warm-up) and clears the series: only the slots used so
    /// far, the others are still zero (nothing to do on an unused series).
    pub fn restart(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
        self.slots[..self.used].iter_mut().for_each(|s| *s = 0);
        self.used = 0;
        self.truncated = false;
    }

    #[inline(always)]
    pub fn record(&mut self, at_ns: u64, value_ns: u64) {
        let mut index = (at_ns.saturating_sub(self.origin_ns) / 1_000_000_000) as usize;
        if index >= self.slots.len() {
            index = self.slots.len() - 1;
            self.truncated = true;
        }
        // SAFETY-free: the index is clamped above, so this never panics.
        let slot = &mut self.slots[index];
        if value_ns > *slot {
            *slot = value_ns;
        }
        if index + 1 > self.used {
            self.used = index + 1;
        }
    }

    /// The maxima of the seconds seen so far, in order.
    pub fn values(&self) -> &[u64] {
        &self.slots[..self.used]
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }
}
