//! `latscope report RUN.json --iterations 1-20`: the thread-wake-up study's per-iteration
//! listing — iteration, switch time (the `--trace` split: the wakee's sched_wakeup to its
//! switch-in), response time — for every wake scenario, from the first iterations the
//! wake probe keeps in the result (`first_iterations`, docs/probes.md). Iteration 1 is
//! the very first wake-up, cold, before warm-up ends: the slow one the study shows.

use crate::error::UserError;
use crate::result::{Run, Scenario};
use crate::units::latency_cell;

/// An inclusive range of iterations, numbered from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IterationRange {
    pub first: u64,
    pub last: u64,
}

fn bad_range(text: &str, reason: impl Into<String>) -> UserError {
    UserError::InvalidValue {
        option: "--iterations".into(),
        value: text.into(),
        reason: reason.into(),
    }
}

/// Parses `N-M` or `N` (iterations from 1).
pub fn parse_range(text: &str) -> Result<IterationRange, UserError> {
    let number = |part: &str| -> Result<u64, UserError> {
        part.trim().parse::<u64>().map_err(|_| {
            bad_range(
                text,
                format!("'{}' is not an iteration number; write a range such as 1-20, or one iteration such as 5", part.trim()),
            )
        })
    };
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if first == 0 {
        return Err(bad_range(
            text,
            "iterations are numbered from 1 (the first wake-up); write e.g. 1-20",
        ));
    }
    if last < first {
        return Err(bad_range(
            text,
            format!(
                "the range ends ({last}) before it starts ({first}); write e.g. {last}-{first}"
            ),
        ));
    }
    Ok(IterationRange { first, last })
}

/// The wakee's kept rows of one scenario.
struct Kept<'a> {
    kept: u64,
    first_measured: u64,
    rows: &'a [Vec<u64>],
    switch_ns: Option<&'a [Option<i64>]>,
    not_joined: Option<&'a std::collections::BTreeMap<String, u64>>,
}

fn kept_rows(scenario: &Scenario) -> Option<Kept<'_>> {
    let first = scenario
        .threads
        .iter()
        .find(|t| t.metric == crate::result::Metric::Response)?
        .extra
        .first_iterations
        .as_ref()?;
    Some(Kept {
        kept: first.kept,
        first_measured: first.first_measured,
        rows: &first.rows,
        switch_ns: first.switch_ns.as_deref(),
        not_joined: first.switch_not_joined.as_ref(),
    })
}

fn cell(row: &[u64], column: usize) -> u64 {
    row.get(column).copied().unwrap_or(0)
}

/// The listing of every wake scenario of `run`. Refuses a run without wake scenarios,
/// and a range past the iterations kept.
pub fn listing(run: &Run, range: IterationRange, in_ns: bool) -> Result<String, UserError> {
    let text = format!("{}-{}", range.first, range.last);
    let wake: Vec<&Scenario> = run
        .scenarios
        .iter()
        .filter(|s| s.probe == crate::result::ProbeKind::Wake)
        .collect();
    if wake.is_empty() {
        return Err(bad_range(
            &text,
            "this result has no wake scenario; --iterations lists the wake probe's iterations (latscope wake, or a suite's wake blocks)",
        ));
    }
    let mut out = String::new();
    let mut untraced = false;
    for scenario in wake {
        out.push_str(&format!(
            "{} ({} {})\n",
            scenario.name, scenario.params.policy, scenario.params.priority
        ));
        let Some(kept) = kept_rows(scenario) else {
            out.push_str(
                "  no per-iteration rows in this result (written by a latscope before they were kept)\n\n",
            );
            continue;
        };
        if range.first > kept.kept || range.last > kept.kept {
            return Err(bad_range(
                &text,
                format!(
                    "the result keeps iterations 1-{} of each wake scenario; ask for a range within them",
                    kept.kept
                ),
            ));
        }
        let lines = iteration_lines(&kept, range, in_ns);
        if lines.len() == 1 {
            out.push_str(&format!(
                "  none of iterations {text} was served by a wake-up of its own (the run ended before them, or they were served with an earlier one)\n"
            ));
        } else {
            out.push_str(&aligned(&lines));
        }
        untraced |= switch_note(&mut out, &kept, scenario.trace.is_some());
        out.push_str(&format!(
            "  iteration 1 is the first wake-up of the run; iterations before {} were warm-up (not in the statistics)\n\n",
            kept.first_measured
        ));
    }
    if untraced {
        out.push_str("switch time '-': this run was not traced. The switch time (the wakee's sched_wakeup to its switch-in) comes from the --trace split: run the wake probe with --trace (root, tracefs) to see it.\n");
    }
    Ok(out)
}

/// The header and one line per kept row in `range`: iteration, switch time, response
/// time, notes (cold first wake-up, warm-up, iterations it served too).
fn iteration_lines(kept: &Kept, range: IterationRange, in_ns: bool) -> Vec<[String; 4]> {
    let unit = if in_ns { "ns" } else { "µs" };
    let header = [
        "iteration".to_string(),
        format!("switch time ({unit})"),
        format!("response time ({unit})"),
        String::new(),
    ];
    let mut lines = vec![header];
    let switch = |i: usize| -> Option<u64> {
        let value = (*kept.switch_ns?.get(i)?)?;
        Some(value.max(0) as u64)
    };
    for (i, row) in kept.rows.iter().enumerate() {
        let iteration = cell(row, 0);
        if iteration < range.first || iteration > range.last {
            continue;
        }
        let mut note = Vec::new();
        if iteration == 1 {
            note.push("first wake-up (cold)".to_string());
        }
        if iteration < kept.first_measured {
            note.push("warm-up".into());
        }
        let merged = cell(row, 4);
        if merged > 0 {
            note.push(format!(
                "also served {}",
                if merged == 1 {
                    format!("{}", iteration + 1)
                } else {
                    format!("{}-{}", iteration + 1, iteration + merged)
                }
            ));
        }
        lines.push([
            iteration.to_string(),
            switch(i).map_or("-".into(), |v| latency_cell(v, in_ns)),
            latency_cell(cell(row, 3), in_ns),
            note.join(", "),
        ]);
    }
    lines
}

/// Why switch times are `-`, under a scenario's rows; true when the run was not traced.
fn switch_note(out: &mut String, kept: &Kept, traced: bool) -> bool {
    match (kept.switch_ns, traced) {
        (None, false) => return true,
        (None, true) => out.push_str(
            "  switch time '-': this scenario's trace holds no per-iteration split (recorded by an older latscope)\n",
        ),
        (Some(_), _) => {
            if let Some(why) = kept.not_joined.filter(|m| !m.is_empty()) {
                let reasons: Vec<String> = why
                    .iter()
                    .map(|(k, v)| format!("{v} {}", super::trace::not_joined_words(k)))
                    .collect();
                out.push_str(&format!(
                    "  switch time '-': the trace could not split that iteration ({})\n",
                    reasons.join(", ")
                ));
            }
        }
    }
    false
}

/// Left-aligned first and last columns, numbers right-aligned, two spaces apart.
fn aligned(lines: &[[String; 4]]) -> String {
    let width = |c: usize| {
        lines
            .iter()
            .map(|l| l[c].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    let mut out = String::new();
    for l in lines {
        let line = format!(
            "  {:>w0$}  {:>w1$}  {:>w2$}  {}",
            l[0],
            l[1],
            l[2],
            l[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(
            parse_range("1-20").unwrap(),
            IterationRange { first: 1, last: 20 }
        );
        assert_eq!(
            parse_range("5").unwrap(),
            IterationRange { first: 5, last: 5 }
        );
        for (text, says) in [
            ("0-5", "numbered from 1"),
            ("20-1", "ends (1) before it starts (20)"),
            ("a-b", "'a' is not an iteration number"),
            ("1-", "'' is not"),
            ("", "not an iteration number"),
            ("-3", "not an iteration number"),
        ] {
            let e = parse_range(text).unwrap_err().to_string();
            assert!(
                e.contains("--iterations") && e.contains(says),
                "{text}: {e}"
            );
        }
    }
}
