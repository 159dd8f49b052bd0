//! Attaching worst-case estimates to results: per thread from its samples in time order
//! (`--worst-case` on a run), or from its per-second maxima (a saved result: the
//! histogram has no time order, the per-second maxima do).

use super::{RawSeries, Run, Scenario, ThreadResult};
use crate::stats::worst_case::{estimate, Input, Options};

/// The samples of `th` in time order from the run's raw series (its `METRIC_ns` column).
fn samples_of(th: &ThreadResult, raw: &[RawSeries]) -> Option<Vec<u64>> {
    let series = raw
        .iter()
        .find(|r| r.cpu == th.cpu && r.metric == th.metric && r.method == th.method)
        .or_else(|| {
            raw.iter()
                .find(|r| r.cpu == th.cpu && r.metric == th.metric)
        })?;
    let column = format!("{}_ns", th.metric);
    let at = series.columns.iter().position(|c| *c == column)?;
    Some(
        series
            .rows()
            .map(|row| row[at])
            .filter(|&v| v != RawSeries::EMPTY && v >= 0)
            .map(|v| v as u64)
            .collect(),
    )
}

/// The estimate of one thread: from its samples when the run kept them, else from its
/// per-second maxima.
pub fn thread_estimate(
    th: &ThreadResult,
    raw: &[RawSeries],
    period_ns: u64,
    opts: Options,
) -> crate::stats::worst_case::WorstCase {
    let opts = Options {
        period_ns: (period_ns > 0).then_some(period_ns),
        ..opts
    };
    match samples_of(th, raw) {
        Some(xs) if !xs.is_empty() => estimate(Input::Samples(&xs), &opts),
        _ => estimate(
            Input::BlockMaxima {
                maxima: &th.per_second_max_ns,
                samples: th.summary.samples,
            },
            &opts,
        ),
    }
}

/// `--worst-case` at the end of a scenario: every thread's estimate from the samples kept.
pub fn attach_to_scenario(scenario: &mut Scenario, raw: &[RawSeries]) {
    let period = scenario.params.period_ns;
    for th in &mut scenario.threads {
        let opts = Options {
            plot: true,
            ..Options::default()
        };
        th.worst_case = Some(thread_estimate(th, raw, period, opts));
    }
}

/// `latscope report FILE --worst-case`: every thread's estimate from its per-second maxima.
pub fn attach_to_run(run: &mut Run, opts: Options) {
    for sc in &mut run.scenarios {
        let period = sc.params.period_ns;
        for th in &mut sc.threads {
            th.worst_case = Some(thread_estimate(th, &[], period, opts));
        }
    }
}
