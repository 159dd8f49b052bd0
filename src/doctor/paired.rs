//! The verdict of an A/B: a sign test on the pairs' differences, looked at as the pairs
//! come in (every `LOOK_EVERY` pairs from `FIRST_LOOK` on, and at the cap), so a clear
//! effect stops early and no effect stops as soon as no later look could decide. The
//! level each look is judged at is the largest that keeps the whole sequence of looks at
//! `ALPHA` (computed exactly under "no effect"), so looking often does not buy false
//! findings. The median difference comes with the distribution-free interval of the
//! same order statistics the sign test counts.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The chance of calling a change better or worse that made no difference.
pub const ALPHA: f64 = 0.05;
/// Pairs before the first look (fewer cannot reach ALPHA with a look schedule).
pub const FIRST_LOOK: u32 = 6;
/// Pairs between looks.
pub const LOOK_EVERY: u32 = 2;
/// The wanted coverage of the median difference's interval.
pub const INTERVAL: f64 = 0.95;

/// What an A/B says about A (the side with the change) against B (the machine as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbVerdict {
    /// A's p99 was lower, beyond the noise.
    Better,
    /// A's p99 was higher, beyond the noise.
    Worse,
    /// The test could not tell A from B on this machine's noise.
    WithinNoise,
}

impl AbVerdict {
    pub fn text(self) -> &'static str {
        match self {
            AbVerdict::Better => "better",
            AbVerdict::Worse => "worse",
            AbVerdict::WithinNoise => "within noise",
        }
    }
}

/// Why the pairs stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// A look's p-value reached the level.
    Decided,
    /// No later look could reach the level whatever the pairs left show.
    CannotDecide,
    /// The pairs' cap (`--pairs`) or the time said up front was reached.
    Cap,
    /// Ctrl-C.
    Interrupted,
}

/// The test as printed and written to the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignTest {
    /// `sign test`: two-sided, on the pairs whose p99s differ.
    pub method: String,
    pub pairs: u32,
    /// Pairs where A's p99 was lower, higher, equal.
    pub lower: u32,
    pub higher: u32,
    pub ties: u32,
    /// The two-sided p-value of the last look.
    pub p_value: f64,
    /// The level each look is judged at (below ALPHA: the looks share it).
    pub level: f64,
    /// Median of A − B (ns), and the interval holding the true median with
    /// `interval_confidence` (not corrected for the adaptive stop).
    pub median_diff_ns: i64,
    pub interval_ns: [i64; 2],
    pub interval_confidence: f64,
    pub verdict: AbVerdict,
    pub stopped: Stopped,
}

/// P(X <= k) for X ~ Binomial(n, 1/2).
fn cdf(n: u32, k: u32) -> f64 {
    if k >= n {
        return 1.0;
    }
    match Binomial::new(0.5, u64::from(n)) {
        Ok(b) => b.cdf(u64::from(k)),
        Err(_) => 1.0,
    }
}

/// The two-sided sign test's p-value of `lower` lower of `n` untied pairs.
pub fn p_value(n: u32, lower: u32) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let tail = lower.min(n - lower);
    (2.0 * cdf(n, tail)).min(1.0)
}

/// The looks: every `LOOK_EVERY` pairs from `FIRST_LOOK`, and the cap.
fn looks(cap: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (FIRST_LOOK..=cap).step_by(LOOK_EVERY as usize).collect();
    if v.last() != Some(&cap) {
        v.push(cap);
    }
    v
}

/// The chance that a sequence judged at `level` calls a change that made no difference
/// better or worse (a pair lower or higher with 1/2 each, walked look by look).
fn false_finding_rate(looks: &[u32], level: f64) -> f64 {
    let last = looks.last().copied().unwrap_or(0) as usize;
    let mut alive = vec![0.0f64; last + 1];
    alive[0] = 1.0;
    let mut rejected = 0.0;
    for n in 1..=last {
        for k in (0..=n).rev() {
            let stay = if k < n { alive[k] * 0.5 } else { 0.0 };
            let up = if k > 0 { alive[k - 1] * 0.5 } else { 0.0 };
            alive[k] = stay + up;
        }
        if looks.contains(&(n as u32)) {
            for (k, p) in alive.iter_mut().enumerate().take(n + 1) {
                if p_value(n as u32, k as u32) <= level {
                    rejected += *p;
                    *p = 0.0;
                }
            }
        }
    }
    rejected
}

/// The adaptive plan of one A/B: its looks and the level each is judged at.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequential {
    pub cap: u32,
    pub looks: Vec<u32>,
    pub level: f64,
}

impl Sequential {
    /// The plan for at most `cap` pairs: the largest level (one of the p-values the looks
    /// can give) whose false finding rate stays within ALPHA.
    pub fn new(cap: u32) -> Self {
        let looks = looks(cap.max(1));
        let mut levels: Vec<f64> = looks
            .iter()
            .flat_map(|&n| (0..=n / 2).map(move |k| p_value(n, k)))
            .filter(|p| *p <= ALPHA)
            .collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        // The rate grows with the level: the largest level within ALPHA, by bisection.
        let (mut lo, mut hi) = (0usize, levels.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if false_finding_rate(&looks, levels[mid]) <= ALPHA {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let level = if lo == 0 { 0.0 } else { levels[lo - 1] };
        Self {
            cap: cap.max(1),
            looks,
            level,
        }
    }

    fn rejects(&self, n: u32, lower: u32) -> bool {
        n > 0 && p_value(n, lower) <= self.level
    }

    /// Whether some later look (after `done` pairs, `lower`/`higher` so far) could still
    /// decide, whatever the pairs left show.
    fn can_still_decide(&self, done: u32, lower: u32, higher: u32) -> bool {
        self.looks.iter().filter(|&&n| n > done).any(|&n| {
            let more = n - done;
            (0..=more).any(|extra_lower| self.rejects(lower + higher + more, lower + extra_lower))
        })
    }

    /// The verdict after `pairs` ([A, B] p99s), or `None`: measure another pair.
    pub fn look(&self, pairs: &[[u64; 2]]) -> Option<SignTest> {
        let done = pairs.len() as u32;
        let (lower, higher, _) = counts(pairs);
        let at_look = self.looks.contains(&done);
        if at_look && self.rejects(lower + higher, lower) {
            return Some(self.test(pairs, Stopped::Decided));
        }
        if done >= self.cap {
            return Some(self.test(pairs, Stopped::Cap));
        }
        if !self.can_still_decide(done, lower, higher) {
            return Some(self.test(pairs, Stopped::CannotDecide));
        }
        None
    }

    /// The test over `pairs` as they stand, stopped for `why`.
    pub fn test(&self, pairs: &[[u64; 2]], why: Stopped) -> SignTest {
        let (lower, higher, ties) = counts(pairs);
        let p = p_value(lower + higher, lower);
        // A stop for time is the last look; an interrupted or hopeless sequence decides nothing.
        let decided = match why {
            Stopped::Decided => true,
            Stopped::Cap => self.rejects(lower + higher, lower),
            Stopped::CannotDecide | Stopped::Interrupted => false,
        };
        let verdict = match (decided, lower > higher) {
            (true, true) => AbVerdict::Better,
            (true, false) => AbVerdict::Worse,
            (false, _) => AbVerdict::WithinNoise,
        };
        let diffs: Vec<i64> = pairs.iter().map(|p| p[0] as i64 - p[1] as i64).collect();
        let (median, interval, confidence) = median_interval(diffs);
        SignTest {
            method: "sign test".into(),
            pairs: pairs.len() as u32,
            lower,
            higher,
            ties,
            p_value: p,
            level: self.level,
            median_diff_ns: median,
            interval_ns: interval,
            interval_confidence: confidence,
            verdict,
            stopped: why,
        }
    }
}

/// Measures pairs (A B, then B A: a drift over the runs favours neither side) until
/// `seq` decides, `stop` is set, or another pair would pass `budget`; `measure` runs
/// one side (`true`: A) and returns its p99 in ns (the timer; a script in the tests).
pub fn measure_pairs(
    seq: &Sequential,
    stop: &AtomicBool,
    budget: Option<Duration>,
    mut measure: impl FnMut(bool) -> anyhow::Result<u64>,
) -> anyhow::Result<(Vec<[u64; 2]>, SignTest)> {
    let started = Instant::now();
    let mut pairs: Vec<[u64; 2]> = Vec::new();
    loop {
        let a_first = pairs.len() % 2 == 0;
        let mut pair = [0u64; 2];
        for a_turn in [a_first, !a_first] {
            if stop.load(Ordering::Relaxed) {
                let t = seq.test(&pairs, Stopped::Interrupted);
                return Ok((pairs, t));
            }
            pair[usize::from(!a_turn)] = measure(a_turn)?;
        }
        if stop.load(Ordering::Relaxed) {
            let t = seq.test(&pairs, Stopped::Interrupted);
            return Ok((pairs, t));
        }
        pairs.push(pair);
        if let Some(t) = seq.look(&pairs) {
            return Ok((pairs, t));
        }
        let spent = started.elapsed();
        let per_pair = spent / pairs.len() as u32;
        if budget.is_some_and(|b| spent + per_pair > b) {
            let t = seq.test(&pairs, Stopped::Cap);
            return Ok((pairs, t));
        }
    }
}

/// Pairs where A was lower, higher, equal.
fn counts(pairs: &[[u64; 2]]) -> (u32, u32, u32) {
    let lower = pairs.iter().filter(|p| p[0] < p[1]).count() as u32;
    let higher = pairs.iter().filter(|p| p[0] > p[1]).count() as u32;
    (lower, higher, pairs.len() as u32 - lower - higher)
}

/// The median of the differences, and the interval between the j-th smallest and j-th
/// largest with the largest j whose coverage reaches INTERVAL (or j = 1 with the
/// coverage it has, for too few pairs), with its coverage.
pub fn median_interval(mut d: Vec<i64>) -> (i64, [i64; 2], f64) {
    d.sort_unstable();
    let n = d.len();
    if n == 0 {
        return (0, [0, 0], 0.0);
    }
    let median = if n % 2 == 1 {
        d[n / 2]
    } else {
        (d[n / 2 - 1] + d[n / 2]).div_euclid(2)
    };
    // Coverage of [d(j), d(n+1-j)] is 1 - 2 P(X <= j-1), X ~ Bin(n, 1/2).
    let coverage = |j: u32| 1.0 - 2.0 * cdf(n as u32, j - 1);
    let mut j = 1u32;
    while (j as usize) < n.div_ceil(2) && coverage(j + 1) >= INTERVAL {
        j += 1;
    }
    let j = j as usize;
    (median, [d[j - 1], d[n - j]], coverage(j as u32).max(0.0))
}

#[cfg(test)]
#[path = "paired_tests.rs"]
mod tests;
