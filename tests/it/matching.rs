//! The matcher the latency tests use (tests/common/matching.rs) checked on synthetic series:
//! injected stalls find their samples, the host's are left over, gaps hold their stalls.

use crate::common;
use common::matching::{match_events, unmatched, SampleSpan};

/// A 100 µs timer whose samples are 20 µs late, except where something stalled it.
fn timer_rows(period: u64, n: u64, stalls: &[(u64, u64)]) -> Vec<[u64; 2]> {
    let mut rows = Vec::new();
    let mut deadline = period;
    while rows.len() < n as usize {
        let blocked_until = stalls
            .iter()
            .find(|&&(s, e)| s <= deadline && deadline < e)
            .map(|&(_, e)| e);
        let woke = blocked_until.unwrap_or(deadline) + 20_000;
        let latency = woke - deadline;
        rows.push([deadline, latency]);
        deadline += (1 + latency / period) * period;
    }
    rows
}

fn injected_stalls_are_matched_and_host_stalls_are_left_over() {
    let period = 100_000;
    let injected = [(1_000_050, 4_000_050), (9_000_000, 12_000_000)];
    let host = [(6_000_000, 8_000_000), (14_000_000, 14_900_000)];
    let all: Vec<(u64, u64)> = injected.iter().chain(&host).copied().collect();
    let rows = timer_rows(period, 200, &all);
    let spans: Vec<SampleSpan> = rows.iter().copied().map(SampleSpan::of_row).collect();

    let matched = match_events(&spans, &injected);
    assert_eq!(matched.len(), 2);
    for (&(start, end), m) in injected.iter().zip(&matched) {
        let i = m.expect("every injected stall has its sample");
        let [deadline, latency] = rows[i];
        assert!(
            deadline >= start && deadline < end,
            "the deadline inside the stall"
        );
        assert_eq!(
            deadline + latency,
            end + 20_000,
            "woke right after the stall"
        );
    }
    // What is left above 1 ms is exactly the host's two stalls.
    let left: Vec<usize> = unmatched(spans.len(), &matched)
        .into_iter()
        .filter(|&i| rows[i][1] > 500_000)
        .collect();
    assert_eq!(left.len(), 2);
    let host_matched = match_events(&spans, &host);
    let mut host_idx: Vec<usize> = host_matched.into_iter().flatten().collect();
    host_idx.sort_unstable();
    assert_eq!(left, host_idx);
}

fn an_event_between_samples_matches_nothing() {
    let spans = [SampleSpan::of_row([100, 10]), SampleSpan::of_row([200, 10])];
    assert_eq!(match_events(&spans, &[(150, 160)]), vec![None]);
    assert_eq!(match_events(&spans, &[(105, 205)]), vec![Some(0)]);
    assert_eq!(
        match_events(&spans, &[(0, 50), (205, 400)]),
        vec![None, Some(1)]
    );
}

fn noise_gaps_match_the_stall_inside_them() {
    // Gaps: (start, length); the stall of 2 ms sits inside the second.
    let gaps = [[1_000, 5_000], [100_000, 2_030_000], [3_000_000, 40_000]];
    let spans: Vec<SampleSpan> = gaps.iter().copied().map(SampleSpan::of_row).collect();
    assert_eq!(match_events(&spans, &[(110_000, 2_110_000)]), vec![Some(1)]);
}

/// This module's tests, for tests/it/main.rs.
pub fn cases() -> Vec<common::Case> {
    common::test_cases![
        injected_stalls_are_matched_and_host_stalls_are_left_over,
        an_event_between_samples_matches_nothing,
        noise_gaps_match_the_stall_inside_them
    ]
}
