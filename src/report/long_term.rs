//! `latscope report` of many interval files (a month of `latscope watch`'s daily files, or
//! its directory): OSADL's long-term view — a row per interval (start, samples, p99, max,
//! missed) in time order, the spans without measurement, the long-term plot, and the
//! worst-case estimate over the whole period from the intervals' per-second maxima.

use crate::render::long_term::{long_term_svg, Interval, LongTerm};
use crate::result::{Run, ThreadResult};
use crate::stats::worst_case::{Options, WorstCase};
use serde::Serialize;
use std::collections::BTreeMap;

/// One interval (one file): its span and its statistics over every CPU.
#[derive(Debug, Clone, Serialize)]
pub struct IntervalRow {
    /// The file it was read from, as the user named it.
    pub file: String,
    pub started_at: String,
    pub finished_at: String,
    #[serde(skip)]
    pub start_s: f64,
    #[serde(skip)]
    pub end_s: f64,
    /// Samples of every CPU.
    pub samples: u64,
    /// The largest p99 of its CPUs (the histograms are per CPU).
    pub p99_ns: u64,
    pub max_ns: u64,
    pub missed: u64,
    pub overruns: u64,
    pub interrupted: bool,
    /// Spans inside the interval without measurement (a restart of `latscope watch`,
    /// its `params.extra.watch_gaps`).
    pub gaps: Vec<Gap>,
    /// Each second's largest latency over its CPUs, a slot per second from `start_s` (0:
    /// none, as in a gap's seconds).
    #[serde(skip)]
    pub second_maxima_ns: Vec<u64>,
}

/// A span between two intervals in which nothing was measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gap {
    pub from: f64,
    pub to: f64,
}

/// The whole period's estimate of one CPU (its per-second maxima of every interval, in
/// time order).
#[derive(Debug, Clone, Serialize)]
pub struct WholePeriod {
    pub cpu: usize,
    pub seconds: usize,
    pub samples: u64,
    /// Seconds per block when the per-second maxima were merged (`WHOLE_PERIOD_BLOCKS`).
    pub block_s: Option<u64>,
    pub worst_case: WorstCase,
}

/// The long-term view of one machine's interval files.
#[derive(Debug, Clone, Serialize)]
pub struct LongTermView {
    pub host: String,
    pub probe: String,
    pub period_ns: u64,
    pub intervals: Vec<IntervalRow>,
    pub gaps: Vec<Gap>,
    pub whole_period: Vec<WholePeriod>,
    /// The `--fail-above max=` limit, drawn as a line.
    pub fail_above_ns: Option<u64>,
}

/// Why files cannot make one long-term view (the user can fix it).
#[derive(Debug, thiserror::Error)]
pub enum LongTermError {
    #[error("{file}: started_at/finished_at {value:?} is not an RFC 3339 time; the long-term view places each file by its own span (give the files `latscope watch` or `--export-json` wrote)")]
    NoTime { file: String, value: String },
    #[error("the files come from {count} machines ({hosts}); the long-term view is one machine's: give one host's files (DIR/watch-HOST-*.json), or compare machines with `latscope compare --by host`")]
    ManyHosts { count: usize, hosts: String },
}

/// A span of `s` seconds in its unit: `38 s`, `5.2 h`, `12.0 days`.
pub fn span_text(s: f64) -> String {
    match s.max(0.0) {
        s if s >= 2.0 * 86_400.0 => format!("{:.1} days", s / 86_400.0),
        s if s >= 2.0 * 3_600.0 => format!("{:.1} h", s / 3_600.0),
        s => crate::units::human_ns((s * 1e9) as u64),
    }
}

/// One file's interval row.
fn interval_of(file: &str, run: &Run) -> Result<IntervalRow, LongTermError> {
    let time = |value: &str| {
        crate::result::epoch_s(value).ok_or_else(|| LongTermError::NoTime {
            file: file.into(),
            value: value.into(),
        })
    };
    let (start_s, end_s) = (time(&run.started_at)?, time(&run.finished_at)?);
    let end_s = end_s.max(start_s);
    let threads = || run.scenarios.iter().flat_map(|s| &s.threads);
    let seconds = threads()
        .map(|t| t.per_second_max_ns.len())
        .max()
        .unwrap_or(0);
    let mut measured = vec![0u64; seconds];
    for t in threads() {
        for (m, &v) in measured.iter_mut().zip(&t.per_second_max_ns) {
            *m = (*m).max(v);
        }
    }
    let extra = run.scenarios.first().map(|s| &s.params.extra);
    let marked = extra.and_then(|e| e.watch_gaps.clone()).unwrap_or_default();
    let before = extra.and_then(|e| e.watch_gap_seconds.clone());
    let mut gaps = Vec::new();
    for [from, to] in &marked {
        let (from, to) = (time(from)?, time(to)?);
        gaps.push(Gap {
            from: from.clamp(start_s, end_s),
            to: to.clamp(start_s, end_s),
        });
    }
    // How many maxima each life stored, when the watch wrote it (else estimated).
    let lives = before
        .filter(|b| b.len() == gaps.len() && b.is_sorted())
        .map(|b| b.into_iter().map(|n| n as usize).collect::<Vec<_>>());
    let second_maxima_ns = place_seconds(measured, start_s, end_s, &gaps, lives.as_deref());
    gaps.retain(|g| g.to > g.from);
    Ok(IntervalRow {
        file: file.into(),
        started_at: run.started_at.clone(),
        finished_at: run.finished_at.clone(),
        start_s,
        end_s,
        samples: threads().map(|t| t.summary.samples).sum(),
        p99_ns: threads().map(|t| t.summary.p99_ns).max().unwrap_or(0),
        max_ns: threads().map(|t| t.summary.max_ns).max().unwrap_or(0),
        missed: threads().map(|t| t.summary.missed).sum(),
        overruns: threads().map(|t| t.summary.overruns).sum(),
        interrupted: run.interrupted,
        gaps,
        second_maxima_ns,
    })
}

/// The measured seconds' maxima (`measured`, in order, none for a gap's seconds: watch
/// invents none) placed a slot per second from `start_s`. Without gaps they follow on from
/// the start. With gaps the file holds several lives of the watch (`start_s` to the first
/// gap, ..., the last gap to `end_s`), each life's maxima ending where it was last written
/// (its first seconds are its warm-up), never starting before the life did. `before[k]`:
/// the maxima stored before gap `k` (watch's `watch_gap_seconds`); without it each life
/// from the last back takes as many as it has seconds.
fn place_seconds(
    measured: Vec<u64>,
    start_s: f64,
    end_s: f64,
    gaps: &[Gap],
    before: Option<&[usize]>,
) -> Vec<u64> {
    if gaps.is_empty() {
        return measured;
    }
    let slot = |t: f64| (t - start_s).max(0.0).round() as usize;
    let mut ends: Vec<usize> = gaps.iter().map(|g| slot(g.from)).collect();
    ends.push(slot(end_s));
    let starts: Vec<usize> = std::iter::once(0)
        .chain(gaps.iter().map(|g| slot(g.to)))
        .collect();
    let n = measured.len();
    let mut bounds: Vec<usize> = match before {
        Some(b) => b.iter().map(|&i| i.min(n)).collect(),
        None => {
            let mut left = n;
            let mut b = vec![0; gaps.len()];
            for k in (1..ends.len()).rev() {
                left -= left.min(ends[k].saturating_sub(starts[k]));
                b[k - 1] = left;
            }
            b
        }
    };
    bounds.insert(0, 0);
    bounds.push(n);
    let mut placed = vec![0u64; slot(end_s)];
    for (k, &end) in ends.iter().enumerate() {
        let life = &measured[bounds[k]..bounds[k + 1].max(bounds[k])];
        // Never before the life began: a stop's last read adds the second it began in.
        let first = end.saturating_sub(life.len()).max(starts[k]);
        if placed.len() < first + life.len() {
            placed.resize(first + life.len(), 0);
        }
        placed[first..first + life.len()].copy_from_slice(life);
    }
    placed
}

/// The spans without measurement between consecutive intervals that are longer than the
/// usual space between them (plus a minute): for files that follow on (watch's rotation)
/// every missing minute shows, for short runs twice a day a missing run does.
pub fn gaps(rows: &[IntervalRow]) -> Vec<Gap> {
    let mut between: Vec<f64> = rows
        .windows(2)
        .map(|w| (w[1].start_s - w[0].end_s).max(0.0))
        .collect();
    if between.is_empty() {
        return Vec::new();
    }
    let spaces = between.clone();
    between.sort_by(f64::total_cmp);
    let usual = between[between.len() / 2];
    let longer_than = usual * 1.5 + 60.0;
    rows.windows(2)
        .zip(spaces)
        .filter(|(_, s)| *s > longer_than)
        .map(|(w, _)| Gap {
            from: w[0].end_s,
            to: w[1].start_s,
        })
        .collect()
}

/// Every CPU's estimate over the whole period: its per-second maxima of every interval in
/// time order, as a saved run's estimate reads them (result::worst_case::thread_estimate).
fn whole_period(runs: &[&Run], opts: Options) -> Vec<WholePeriod> {
    let mut by_cpu: BTreeMap<usize, ThreadResult> = BTreeMap::new();
    let mut period_ns = 0;
    for run in runs {
        for sc in &run.scenarios {
            period_ns = sc.params.period_ns;
            for t in &sc.threads {
                let whole = by_cpu.entry(t.cpu).or_insert_with(|| ThreadResult {
                    summary: Default::default(),
                    histogram: Vec::new(),
                    per_second_max_ns: Vec::new(),
                    worst_case: None,
                    ..t.clone()
                });
                whole.summary.samples += t.summary.samples;
                whole.summary.max_ns = whole.summary.max_ns.max(t.summary.max_ns);
                whole
                    .per_second_max_ns
                    .extend_from_slice(&t.per_second_max_ns);
            }
        }
    }
    by_cpu
        .into_values()
        .map(|t| {
            let seconds = t.per_second_max_ns.len();
            let opts = merged_blocks(opts, seconds, t.summary.samples);
            WholePeriod {
                cpu: t.cpu,
                seconds,
                samples: t.summary.samples,
                block_s: opts.block_size.map(|b| {
                    (b as f64 * seconds as f64 / t.summary.samples.max(1) as f64).round() as u64
                }),
                worst_case: crate::result::worst_case::thread_estimate(&t, &[], period_ns, opts),
            }
        })
        .collect()
}

/// The most blocks the whole period's estimate fits (a month has 2.6 million seconds; the
/// fit of 10⁵ takes over a second, issue 37's bench): past it, and unless `--block-size`
/// chose, blocks of whole seconds merged so that at most this many remain. Above the
/// estimator's PROFILE_MAX (2000) values, where its intervals come from the quadratic
/// approximation: 2000 blocks of a month took 15 s of CPU in the exact profile search,
/// 10 000 blocks 1.4 s for two CPUs (bench/long-term-month.sh).
pub const WHOLE_PERIOD_BLOCKS: usize = 10_000;

/// `opts` with blocks of whole seconds when `seconds` per-second maxima are too many.
fn merged_blocks(opts: Options, seconds: usize, samples: u64) -> Options {
    if opts.block_size.is_some() || seconds <= WHOLE_PERIOD_BLOCKS {
        return opts;
    }
    let per_second = samples as f64 / seconds as f64;
    let secs = seconds.div_ceil(WHOLE_PERIOD_BLOCKS);
    Options {
        block_size: Some((per_second * secs as f64).round().max(1.0) as u64),
        ..opts
    }
}

/// The view of `files` (each named as the user gave it, with its run), put in time order;
/// with `opts` (`--worst-case`) each CPU's estimate over the whole period.
pub fn build(
    files: Vec<(String, Run)>,
    opts: Option<Options>,
    fail_above_ns: Option<u64>,
) -> Result<LongTermView, LongTermError> {
    let hosts: std::collections::BTreeSet<&str> = files
        .iter()
        .map(|(_, r)| r.system.hostname.as_str())
        .collect();
    if hosts.len() > 1 {
        return Err(LongTermError::ManyHosts {
            count: hosts.len(),
            hosts: hosts.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    let mut rows = Vec::new();
    for (file, run) in &files {
        rows.push((interval_of(file, run)?, run));
    }
    rows.sort_by(|a, b| a.0.start_s.total_cmp(&b.0.start_s));
    let runs: Vec<&Run> = rows.iter().map(|r| r.1).collect();
    let first = runs.first().and_then(|r| r.scenarios.first());
    let whole_period = opts.map(|o| whole_period(&runs, o)).unwrap_or_default();
    let intervals: Vec<IntervalRow> = rows.iter().map(|r| r.0.clone()).collect();
    let mut all_gaps = gaps(&intervals);
    all_gaps.extend(intervals.iter().flat_map(|r| r.gaps.iter().copied()));
    all_gaps.sort_by(|a, b| a.from.total_cmp(&b.from));
    Ok(LongTermView {
        host: hosts.into_iter().next().unwrap_or_default().to_string(),
        probe: first.map(|s| s.name.clone()).unwrap_or_default(),
        period_ns: first.map(|s| s.params.period_ns).unwrap_or(0),
        gaps: all_gaps,
        intervals,
        whole_period,
        fail_above_ns,
    })
}

impl LongTermView {
    /// The plot's data (render knows no result type).
    pub fn plot(&self) -> LongTerm<'_> {
        LongTerm {
            intervals: self
                .intervals
                .iter()
                .map(|r| Interval {
                    start_s: r.start_s,
                    end_s: r.end_s,
                    max_ns: r.max_ns,
                    p99_ns: r.p99_ns,
                    second_maxima_ns: &r.second_maxima_ns,
                })
                .collect(),
            gaps: self.gaps.iter().map(|g| (g.from, g.to)).collect(),
            fail_above_ns: self.fail_above_ns,
        }
    }

    /// The title of the plot and of every rendering: the machine, the probe, the span.
    pub fn title(&self) -> String {
        let day = |r: Option<&IntervalRow>, end: bool| {
            r.map(|r| if end { &r.finished_at } else { &r.started_at })
                .map(|t| t.get(..10).unwrap_or(t).to_string())
                .unwrap_or_default()
        };
        format!(
            "Long-term latency of {}: {} intervals, {} to {}",
            self.host,
            self.intervals.len(),
            day(self.intervals.first(), false),
            day(self.intervals.last(), true)
        )
    }

    /// The time measured and the time covered, in one line.
    pub fn coverage_line(&self) -> String {
        let measured: f64 = self
            .intervals
            .iter()
            .map(|r| r.end_s - r.start_s - r.gaps.iter().map(|g| g.to - g.from).sum::<f64>())
            .sum();
        let span = match (self.intervals.first(), self.intervals.last()) {
            (Some(a), Some(b)) => b.end_s - a.start_s,
            _ => 0.0,
        };
        let secs = span_text;
        let gaps = match self.gaps.len() {
            0 => "no gap".to_string(),
            1 => "1 gap (no measurement)".to_string(),
            n => format!("{n} gaps (no measurement)"),
        };
        format!(
            "{} measured over {}, {gaps}; p99 is the largest of the CPUs' p99",
            secs(measured),
            secs(span)
        )
    }

    /// The long-term plot as SVG at one size.
    pub fn svg(&self, c: crate::render::canvas::Canvas) -> anyhow::Result<String> {
        long_term_svg(&self.title(), &self.plot(), c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of 20 s with a restart: measured 100..106 (6 maxima, its last write at 106: `watch_gap_seconds` [6]),
    /// not from 106 to 112, measured again 113..120 (7 maxima after a 1 s warm-up).
    #[test]
    fn a_restart_inside_a_file_places_each_life_before_and_after_its_gap() {
        let measured: Vec<u64> = (1..=13).collect();
        let gap = Gap {
            from: 106.0,
            to: 112.0,
        };
        let placed = place_seconds(measured.clone(), 100.0, 120.0, &[gap], Some(&[6]));
        assert_eq!(placed.len(), 20);
        assert_eq!(
            &placed[..6],
            &[1, 2, 3, 4, 5, 6],
            "the first life from its start"
        );
        assert!(
            placed[6..13].iter().all(|&v| v == 0),
            "{placed:?}: the gap and the warm-up"
        );
        assert_eq!(
            &placed[13..],
            &[7, 8, 9, 10, 11, 12, 13],
            "the second life to its end"
        );
        let guessed = place_seconds(measured.clone(), 100.0, 120.0, &[gap], None);
        assert_eq!(
            &guessed[12..],
            &measured[5..],
            "without the counts: as many as fit"
        );
        assert_eq!(
            place_seconds(measured.clone(), 100.0, 120.0, &[], None),
            measured
        );
    }
}
