//! Matching events known by time (an injected stall, a log line, a trace event) to the
//! samples they made, through the CLOCK_MONOTONIC stamps `--raw` keeps: the way the tests
//! tell an injected event's sample from the host's on a noisy machine. Test-only, so it
//! lives here and not in the shipped binary; tests/it/matching.rs checks it.

/// A sample as an interval on CLOCK_MONOTONIC: from its stamp (timer: the deadline; noise:
/// the gap's start) to stamp + value (timer: the wake-up; noise: the gap's end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleSpan {
    pub start_ns: u64,
    pub end_ns: u64,
}

impl SampleSpan {
    /// The span of a `--raw` row: (stamp_ns, value_ns).
    pub fn of_row([stamp_ns, value_ns]: [u64; 2]) -> Self {
        Self {
            start_ns: stamp_ns,
            end_ns: stamp_ns.saturating_add(value_ns),
        }
    }

    fn overlap_ns(&self, start_ns: u64, end_ns: u64) -> u64 {
        self.end_ns
            .min(end_ns)
            .saturating_sub(self.start_ns.max(start_ns))
    }
}

/// For each event [start_ns, end_ns], the index of the sample whose span overlaps it the
/// most (None when no sample overlaps it: the event fell between samples or outside the
/// run). `samples` must be in time order, as `--raw` writes them.
pub fn match_events(samples: &[SampleSpan], events: &[(u64, u64)]) -> Vec<Option<usize>> {
    events
        .iter()
        .map(|&(start, end)| {
            // Samples are ordered and do not overlap each other: start at the first one
            // that ends after the event starts.
            let first = samples.partition_point(|s| s.end_ns <= start);
            samples[first..]
                .iter()
                .enumerate()
                .take_while(|(_, s)| s.start_ns < end)
                .map(|(i, s)| (first + i, s.overlap_ns(start, end)))
                .filter(|&(_, overlap)| overlap > 0)
                .max_by_key(|&(i, overlap)| (overlap, std::cmp::Reverse(i)))
                .map(|(i, _)| i)
        })
        .collect()
}

/// The samples no event matched: the host's (or anything else's) on a noisy machine.
pub fn unmatched(samples: usize, matched: &[Option<usize>]) -> Vec<usize> {
    let mut taken = vec![false; samples];
    for &i in matched.iter().flatten() {
        taken[i] = true;
    }
    (0..samples).filter(|&i| !taken[i]).collect()
}
