//! One `--trace` part's full statistics (a standalone Recorder over the joined samples'
//! values) and its bound marks: shared by every probe's bridge (analyze.rs,
//! analyze_gpio.rs).

use crate::result::extras::Bound;
use crate::result::{Metric, ThreadResult};
use crate::stats::{Recorder, RecorderConfig};

/// Full statistics of one split part (negative values, possible only for `remainder`
/// within the clock slack, count as 0 and are noted).
pub fn part_result(cpu: usize, method: &str, name: Metric, values: &[(u64, i64)]) -> ThreadResult {
    let config = RecorderConfig {
        deadline_ns: u64::MAX,
        series_seconds: 1,
        raw_capacity: 0,
    };
    let mut rec = Recorder::standalone(&config);
    rec.restart(values.first().map_or(0, |v| v.0));
    let mut negative = 0u64;
    for &(stamp, v) in values {
        negative += u64::from(v < 0);
        rec.record(stamp, stamp, v.max(0) as u64);
    }
    let mut tr = ThreadResult::from_recorder(cpu, method, name, &rec);
    tr.per_second_max_ns.clear();
    if negative > 0 {
        tr.extra.negative_counted_as_zero = Some(negative);
    }
    tr
}

/// The part's samples whose value is a bound, and which (`lower`/`upper`), in its `extra`.
pub fn mark_bound(part: &mut ThreadResult, bound: Bound, samples: u64) {
    if samples > 0 {
        part.extra.bound = Some(bound);
        part.extra.bounded_samples = Some(samples);
    }
}
