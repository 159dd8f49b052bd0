//! The latency distribution no spike can flatten, in two charts drawn from the same
//! buckets: every sample on a logarithmic latency axis (log-spaced bins, as HdrHistogram
//! stores them: `whole`), and the body on a linear axis in whole-µs bins, OSADL style, cut
//! where the data's body ends, with every sample beyond it in a tail strip under it
//! (`body`). The body ends where the samples thin out above the median (`body_end_ns`),
//! not at a multiple of a percentile that a spike can itself be.

pub mod body;
pub mod draw;
pub mod whole;

#[cfg(test)]
mod tests;

use crate::units::human_ns;
use std::collections::BTreeMap;

/// One line of a histogram: a label, sparse `[value_ns, count]` buckets and the exact max.
pub struct HistogramLine<'a> {
    pub label: String,
    pub buckets: &'a [[u64; 2]],
    /// The exact largest sample (the buckets hold upper bounds); 0: unknown.
    pub max_ns: u64,
}

impl HistogramLine<'_> {
    /// The largest sample: the exact max, else the largest bucket.
    pub fn max(&self) -> u64 {
        let top = self.buckets.iter().filter(|b| b[1] > 0).map(|b| b[0]).max();
        match (self.max_ns, top) {
            (0, top) => top.unwrap_or(0),
            (m, _) => m,
        }
    }

    fn total(&self) -> u64 {
        self.buckets.iter().map(|b| b[1]).sum()
    }

    fn min(&self) -> Option<u64> {
        self.buckets.iter().filter(|b| b[1] > 0).map(|b| b[0]).min()
    }
}

/// The lines a chart draws and the deadline it marks.
pub struct Distribution<'a> {
    /// What ran (a scenario's name, a comparison's row): titles start with it.
    pub name: String,
    pub lines: &'a [HistogramLine<'a>],
    pub deadline_ns: Option<u64>,
}

/// Bins per decade where the body's end is looked for (each 12 % wider than the last).
const BODY_BINS_PER_DECADE: f64 = 20.0;

fn log_bin(value_ns: u64, per_decade: f64) -> i64 {
    ((value_ns.max(1) as f64).log10() * per_decade).floor() as i64
}

/// The value below which `q` of a line's samples fall (bucket upper bounds).
pub fn quantile(buckets: &[[u64; 2]], q: f64) -> u64 {
    let total: u64 = buckets.iter().map(|b| b[1]).sum();
    let want = ((total as f64 * q).ceil() as u64).max(1);
    let mut seen = 0;
    for &[v, c] in buckets {
        seen += c;
        if seen >= want {
            return v;
        }
    }
    buckets.last().map_or(0, |b| b[0])
}

/// Where one line's body ends: walking up from the median in log bins (20 to a decade), the
/// body goes on through every bin holding at least 1/1000 of the samples (and 2); the first
/// thinner bin ends it: a gap before the host's stops, or a smooth tail thinning out (about
/// three standard deviations up a log-normal body, so its p50 to p99 spans a third of a
/// linear axis over the body). Spikes, up to half the samples, never hold up the walk when
/// a thin bin lies between them and the body; a smooth tail of them joins it. The body
/// holds three quarters of the samples at least. Returns its largest sample.
pub fn line_body_end_ns(buckets: &[[u64; 2]]) -> Option<u64> {
    let total: u64 = buckets.iter().map(|b| b[1]).sum();
    if total == 0 {
        return None;
    }
    let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
    for &[v, c] in buckets.iter().filter(|b| b[1] > 0) {
        *bins.entry(log_bin(v, BODY_BINS_PER_DECADE)).or_default() += c;
    }
    let floor = (total / 1000).max(2);
    let mut last = log_bin(quantile(buckets, 0.5), BODY_BINS_PER_DECADE);
    while bins.get(&(last + 1)).is_some_and(|&c| c >= floor) {
        last += 1;
    }
    let last = last.max(log_bin(quantile(buckets, 0.75), BODY_BINS_PER_DECADE));
    buckets
        .iter()
        .filter(|b| b[1] > 0 && log_bin(b[0], BODY_BINS_PER_DECADE) <= last)
        .map(|b| b[0])
        .max()
}

/// The body's axis: (from, to) in µs. From 0 when the body starts within a tenth of its
/// end (as OSADL's), else from a round value under its smallest sample (the body of a VM's
/// run starting at 15 µs of 80 would lose a fifth of the width to empty bins).
pub fn body_range(lo_ns: u64, end_ns: u64) -> (f64, f64) {
    let hi = (end_ns as f64 / 1e3 * 1.04).max(lo_ns as f64 / 1e3 + 1.0);
    let lo = lo_ns as f64 / 1e3;
    if lo < 0.1 * hi {
        return (0.0, hi);
    }
    let step = crate::render::axis::nice_step(hi - lo, 10);
    ((lo / step).floor() * step, hi)
}

/// How many times its p50 to p99 a body's axis may span at most: the middle of the body
/// takes a third of its chart or more (2.8, not 3: the axis ends 4 % after the body).
const SPREAD: f64 = 2.8;

/// The end of the body the lines share: the largest of their walks' ends (`line_body_end_ns`),
/// or sooner where a line's p50 to p99 would take under a third of the body's axis (but
/// not before the line's own p99.9): a heavy tail thinning slowly (a loaded run's) goes on
/// in the strip, sample by sample, rather than squeezing the body's middle into a corner.
/// Never before a line's p99 lying within twice its walk's end.
pub fn body_end_ns(lines: &[HistogramLine]) -> u64 {
    let ends: Vec<(usize, u64)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| line_body_end_ns(l.buckets).map(|e| (i, e)))
        .collect();
    let Some(walk) = ends.iter().map(|e| e.1).max() else {
        return 1000;
    };
    let (lo, _) = body_range(extent(lines).0, walk);
    let cap = ends
        .iter()
        .map(|&(i, end)| {
            let inside: Vec<[u64; 2]> = lines[i]
                .buckets
                .iter()
                .copied()
                .filter(|b| b[0] <= end)
                .collect();
            let spread = quantile(&inside, 0.99).saturating_sub(quantile(&inside, 0.5));
            // Never short of the body's own p99.9 (a straggler far under the median
            // widens the axis; the body still reaches past its p99).
            (lo * 1e3 + SPREAD * spread as f64).max(quantile(&inside, 0.999) as f64)
        })
        .fold(0.0, f64::max);
    // A line's p99 within twice its walk's end (a short run's sparse shoulder: at 1000
    // samples the walk stops at the first log bin under 2) stays in the body, so the body
    // chart holds p50 to p99; a p99 farther out is a spike's, drawn in the strip.
    let shoulder = ends
        .iter()
        .map(|&(i, _)| quantile(lines[i].buckets, 0.99))
        .zip(ends.iter().map(|e| e.1))
        .filter(|&(p99, end)| p99 <= 2 * end)
        .map(|(p99, _)| p99)
        .max()
        .unwrap_or(0);
    let limit = walk.min(cap as u64).max(shoulder);
    lines
        .iter()
        .flat_map(|l| {
            l.buckets
                .iter()
                .filter(|b| b[1] > 0 && b[0] <= limit)
                .map(|b| b[0])
        })
        .max()
        .unwrap_or(walk)
}

/// Each line's samples beyond `end_ns` as (value, count), largest first; a line's largest
/// bucket is shown at its exact max.
pub fn tail(line: &HistogramLine, end_ns: u64) -> Vec<(u64, u64)> {
    let top = line.buckets.iter().filter(|b| b[1] > 0).map(|b| b[0]).max();
    let mut out: Vec<(u64, u64)> = line
        .buckets
        .iter()
        .filter(|b| b[0] > end_ns && b[1] > 0)
        .map(|&[v, c]| match (Some(v) == top, line.max_ns) {
            (true, m) if m > 0 => (m, c),
            _ => (v, c),
        })
        .collect();
    out.sort_by_key(|t| std::cmp::Reverse(t.0));
    out
}

/// Distinct values a tail listing names before summing up the rest.
const LISTED: usize = 16;

/// The samples beyond the body, every one, a line each: "CPU 0: 14 of 4000 beyond 79 µs:
/// 340.37 µs (max), 333.57 µs, 329.73 µs ×2, …"; the largest `LISTED` values by name, the
/// rest as a count and a range. None when no sample lies beyond it.
pub fn tail_listing(lines: &[HistogramLine], end_ns: u64) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines {
        let tail = tail(l, end_ns);
        let n: u64 = tail.iter().map(|t| t.1).sum();
        if n == 0 {
            continue;
        }
        let shown: Vec<String> = tail
            .iter()
            .take(LISTED)
            .enumerate()
            .map(|(i, &(v, c))| {
                let max = if i == 0 { " (max)" } else { "" };
                let times = if c > 1 {
                    format!(" ×{c}")
                } else {
                    String::new()
                };
                format!("{}{times}{max}", human_ns(v))
            })
            .collect();
        let mut text = format!(
            "{}: {} of {} beyond {}: {}",
            l.label,
            n,
            l.total(),
            human_ns(end_ns),
            shown.join(", ")
        );
        if tail.len() > LISTED {
            let rest = &tail[LISTED..];
            let count: u64 = rest.iter().map(|t| t.1).sum();
            let (lo, hi) = (rest[rest.len() - 1].0, rest[0].0);
            text.push_str(&format!(
                ", and {count} more from {} to {}",
                human_ns(lo),
                human_ns(hi)
            ));
        }
        out.push(text);
    }
    out
}

/// `buckets` up to `limit_ns` in equal bins of `bin_ns`: the runs of adjacent non-empty
/// bins as `(bin centre µs, count)`, so no line is drawn where a bin is empty.
pub fn rebin_runs(buckets: &[[u64; 2]], bin_ns: u64, limit_ns: u64) -> Vec<Vec<(f64, f64)>> {
    let mut bins: BTreeMap<u64, u64> = Default::default();
    for &[value, count] in buckets.iter().filter(|b| b[0] <= limit_ns && b[1] > 0) {
        *bins.entry(value / bin_ns).or_default() += count;
    }
    runs(bins, |b| ((b as f64) + 0.5) * bin_ns as f64 / 1e3)
}

/// `buckets` in log-spaced bins, `per_decade` to a factor of ten: the runs of adjacent
/// non-empty bins as `(bin's geometric centre µs, count)`.
pub fn log_runs(buckets: &[[u64; 2]], per_decade: f64) -> Vec<Vec<(f64, f64)>> {
    let mut bins: BTreeMap<i64, u64> = Default::default();
    for &[value, count] in buckets.iter().filter(|b| b[1] > 0) {
        *bins.entry(log_bin(value, per_decade)).or_default() += count;
    }
    runs(bins, |b| 10f64.powf((b as f64 + 0.5) / per_decade) / 1e3)
}

fn runs<K: Copy + Into<i128>>(
    bins: BTreeMap<K, u64>,
    x: impl Fn(K) -> f64,
) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut prev: Option<i128> = None;
    for (b, c) in bins {
        let k: i128 = b.into();
        if prev.is_none_or(|p| k != p + 1) {
            runs.push(Vec::new());
        }
        runs.last_mut().expect("pushed").push((x(b), c as f64));
        prev = Some(k);
    }
    runs
}

/// A line's label with its max, as OSADL's legends have it ("CPU 0 — max 8.97 ms").
pub fn legend_label(l: &HistogramLine) -> String {
    format!("{} — max {}", l.label, human_ns(l.max()))
}

/// The smallest sample of all lines and the largest (ns, at least 1 µs).
fn extent(lines: &[HistogramLine]) -> (u64, u64) {
    let lo = lines.iter().filter_map(|l| l.min()).min().unwrap_or(1000);
    let hi = lines
        .iter()
        .map(|l| l.max())
        .max()
        .unwrap_or(1000)
        .max(1000);
    (lo.max(1), hi)
}

/// The deadline when some sample came within a third of it, else the note saying it is off.
pub fn deadline_on_axis(d: &Distribution) -> (Option<u64>, Option<String>) {
    let (_, max) = extent(d.lines);
    match d.deadline_ns.filter(|&d| d > 0) {
        Some(dl) if dl > max.saturating_mul(3) => (
            None,
            Some(format!(
                "deadline {} is off the axis: no sample came within a third of it",
                human_ns(dl)
            )),
        ),
        other => (other, None),
    }
}
