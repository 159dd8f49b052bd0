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
    /// Each second's largest latency over its CPUs, in time order.
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
    let threads = || run.scenarios.iter().flat_map(|s| &s.threads);
    let seconds = threads()
        .map(|t| t.per_second_max_ns.len())
        .max()
        .unwrap_or(0);
    let mut second_maxima_ns = vec![0u64; seconds];
    for t in threads() {
        for (m, &v) in second_maxima_ns.iter_mut().zip(&t.per_second_max_ns) {
            *m = (*m).max(v);
        }
    }
    Ok(IntervalRow {
        file: file.into(),
        started_at: run.started_at.clone(),
        finished_at: run.finished_at.clone(),
        start_s,
        end_s: end_s.max(start_s),
        samples: threads().map(|t| t.summary.samples).sum(),
        p99_ns: threads().map(|t| t.summary.p99_ns).max().unwrap_or(0),
        max_ns: threads().map(|t| t.summary.max_ns).max().unwrap_or(0),
        missed: threads().map(|t| t.summary.missed).sum(),
        overruns: threads().map(|t| t.summary.overruns).sum(),
        interrupted: run.interrupted,
        second_maxima_ns,
    })
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
    Ok(LongTermView {
        host: hosts.into_iter().next().unwrap_or_default().to_string(),
        probe: first.map(|s| s.name.clone()).unwrap_or_default(),
        period_ns: first.map(|s| s.params.period_ns).unwrap_or(0),
        gaps: gaps(&intervals),
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
        let measured: f64 = self.intervals.iter().map(|r| r.end_s - r.start_s).sum();
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
