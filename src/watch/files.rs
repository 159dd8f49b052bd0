//! The interval files of `latscope watch`: their names (UTC, the interval's start), the
//! result they hold (an ordinary run: one timer scenario, a thread per CPU), the file a
//! restart goes on with (its counts kept, the span not measured recorded as a gap), and
//! the atomic rewrite through src/output/.

use super::interval::Interval;
use crate::result::{ProbeKind, Run, Scenario, ScenarioParams};
use crate::warning::{Warning, WarningCode};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// RFC 3339, UTC, whole seconds, of Unix second `s`.
pub fn rfc3339(s: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(s)).to_string()
}

/// The Unix second of an RFC 3339 time (None: not one).
pub fn unix_seconds(text: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(text.trim_end_matches('Z')).ok()?;
    Some(t.duration_since(UNIX_EPOCH).ok()?.as_secs())
}

/// `watch-HOST-YYYY-MM-DD.json` for daily intervals, else
/// `watch-HOST-YYYY-MM-DDTHH-MM-SS.json` (UTC, the interval's start).
pub fn file_name(host: &str, start_s: u64, rotate_s: u64) -> String {
    let stamp = rfc3339(start_s);
    let stamp = stamp.trim_end_matches('Z');
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if rotate_s == super::settings::DAY_S {
        format!("watch-{host}-{}.json", &stamp[..10])
    } else {
        format!("watch-{host}-{}.json", stamp.replace(':', "-"))
    }
}

/// The interval a file is written for.
#[derive(Debug)]
pub struct IntervalFile {
    pub path: PathBuf,
    /// The interval's start and end (Unix seconds).
    pub start_s: u64,
    pub end_s: u64,
    /// When measuring began in it (later than `start_s` after a start or restart).
    pub measured_from_s: u64,
    /// Spans not measured, `[from, to]` RFC 3339.
    pub gaps: Vec<[String; 2]>,
    /// For each gap, the per-second maxima stored before it.
    pub gap_seconds: Vec<u64>,
    /// Seconds measured in earlier lives of the file.
    pub measured_before_s: u64,
}

/// What the file is built from besides the intervals.
pub struct FileContext<'a> {
    pub template: &'a Run,
    pub params: &'a ScenarioParams,
    pub name: &'a str,
}

impl IntervalFile {
    pub fn new(dir: &Path, host: &str, start_s: u64, rotate_s: u64, now_s: u64) -> Self {
        Self {
            path: dir.join(file_name(host, start_s, rotate_s)),
            start_s,
            end_s: start_s + rotate_s,
            measured_from_s: now_s.max(start_s),
            gaps: Vec::new(),
            gap_seconds: Vec::new(),
            measured_before_s: 0,
        }
    }

    /// A restart: the file of this interval as saved, if any, with its threads' counts;
    /// the span from its last write to `now_s` becomes a gap. A file that cannot be read
    /// is kept aside as `NAME.unreadable` (never lost) and the interval starts afresh.
    pub fn resume(&mut self, now_s: u64) -> Vec<(usize, Interval)> {
        if !self.path.exists() {
            return Vec::new();
        }
        let run = match Run::load(&self.path) {
            Ok(run) => run,
            Err(e) => {
                let aside = self.path.with_extension("json.unreadable");
                let _ = std::fs::rename(&self.path, &aside);
                eprintln!(
                    "latscope watch: {e}; kept as {} and started the interval afresh",
                    aside.display()
                );
                return Vec::new();
            }
        };
        let Some(sc) = run.scenarios.first() else {
            return Vec::new();
        };
        let from_s = unix_seconds(&run.started_at).unwrap_or(self.start_s);
        let last_s = unix_seconds(&run.finished_at).unwrap_or(now_s);
        self.gaps = sc.params.extra.watch_gaps.clone().unwrap_or_default();
        self.gap_seconds = sc
            .params
            .extra
            .watch_gap_seconds
            .clone()
            .unwrap_or_default();
        if now_s > last_s {
            self.gaps.push([rfc3339(last_s), rfc3339(now_s)]);
            let stored = sc.threads.iter().map(|t| t.per_second_max_ns.len());
            self.gap_seconds.push(stored.max().unwrap_or(0) as u64);
        }
        self.measured_before_s = sc.elapsed_ns / 1_000_000_000;
        self.measured_from_s = from_s.max(self.start_s);
        sc.threads
            .iter()
            .map(|th| (th.cpu, Interval::from_thread(th)))
            .collect()
    }

    /// The interval as a result, written `now_s`; `complete` once the interval is over.
    pub fn run(
        &self,
        ctx: &FileContext<'_>,
        intervals: &[(usize, &Interval)],
        now_s: u64,
        complete: bool,
        this_life_from_s: u64,
    ) -> Run {
        let mut run = ctx.template.clone();
        let end_s = now_s.min(self.end_s);
        run.started_at = rfc3339(self.measured_from_s);
        run.finished_at = rfc3339(end_s);
        run.interrupted = !complete;
        let mut params = ctx.params.clone();
        params.duration_ns = (self.end_s - self.start_s) * 1_000_000_000;
        if !self.gaps.is_empty() {
            params.extra.watch_gaps = Some(self.gaps.clone());
            params.extra.watch_gap_seconds = Some(self.gap_seconds.clone());
        }
        let mut sc = Scenario::new(
            ctx.name.to_string(),
            ProbeKind::Timer,
            params,
            run.started_at.clone(),
        );
        sc.interrupted = !complete;
        let measured_s = self.measured_before_s + end_s.saturating_sub(this_life_from_s);
        sc.elapsed_ns = measured_s * 1_000_000_000;
        sc.threads = intervals
            .iter()
            .map(|(cpu, iv)| iv.thread_result(*cpu, &ctx.params.method))
            .collect();
        for [from, to] in &self.gaps {
            sc.warnings.push(Warning::new(
                WarningCode::WatchGap,
                format!("not measured from {from} to {to} (latscope watch was restarted)"),
            ));
        }
        run.scenarios = vec![sc];
        run
    }
}

/// Writes the run atomically (a reader sees the old file or the new one, whole), encoded
/// straight into the file's buffered writer: no copy of the whole text is held (a day's
/// file is megabytes, and under mlockall a buffer's pages stay resident once touched).
pub fn save(path: &Path, run: &Run) -> anyhow::Result<()> {
    use anyhow::Context;
    crate::output::atomic::write_atomically_with(path, |out| {
        serde_json::to_writer_pretty(&mut *out, run).map_err(std::io::Error::other)?;
        out.write_all(b"\n")
    })
    .with_context(|| format!("writing {}", path.display()))
}

/// The current Unix second.
pub fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_utc_start_of_the_interval() {
        let t = 1_764_324_000; // 2025-11-28T10:00:00Z
        assert_eq!(
            file_name("rt-box", t, 86_400),
            "watch-rt-box-2025-11-28.json"
        );
        assert_eq!(
            file_name("rt box", t + 2, 2),
            "watch-rt_box-2025-11-28T10-00-02.json"
        );
        assert_eq!(unix_seconds(&rfc3339(t)), Some(t));
    }
}
