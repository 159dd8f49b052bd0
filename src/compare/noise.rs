//! The noise of a comparison, from the data: each run's 95 % bootstrap interval of p99,
//! p99.9 and max (and any other percentile a rule judges), from its stored histogram
//! (stats/bootstrap.rs). A change counts only where the two runs' intervals do not
//! overlap; inside them the verdict is "within noise".

use crate::result::{stat_unknown, ThreadResult};
use crate::stats::bootstrap::{self, Interval};
use crate::stats::Stat;

/// The statistics whose intervals every comparison shows.
pub const SHOWN: [Stat; 3] = [Stat::P99, Stat::P999, Stat::Max];

/// One thread's intervals, per statistic.
#[derive(Debug, Clone, Default)]
pub struct Noise {
    pub intervals: Vec<(Stat, Interval)>,
}

impl Noise {
    pub fn of(&self, stat: Stat) -> Option<Interval> {
        self.intervals
            .iter()
            .find(|(s, _)| *s == stat)
            .map(|(_, i)| *i)
    }
}

/// The bootstrap intervals of `stats` (those that are percentiles or the max and that the
/// thread knows) of one thread; empty without a histogram.
pub fn thread_noise(th: &ThreadResult, stats: &[Stat]) -> Noise {
    let Some(r) = bootstrap::Resampler::new(&th.histogram, th.summary.min_ns, th.summary.max_ns)
    else {
        return Noise::default();
    };
    let mut intervals = Vec::new();
    for &stat in stats {
        let p = match stat {
            Stat::Max => 100.0,
            s => match s.percentile() {
                Some(p) => p,
                None => continue,
            },
        };
        if stat_unknown(th, stat) || intervals.iter().any(|(s, _)| *s == stat) {
            continue;
        }
        let i = r.interval(
            p,
            bootstrap::RESAMPLES,
            bootstrap::SEED,
            bootstrap::EXACT_UP_TO,
        );
        intervals.push((stat, i));
    }
    Noise { intervals }
}

/// How the noise is judged, in one sentence (printed with the rule).
pub fn method_text() -> String {
    format!(
        "each run's 95 % bootstrap interval ({} resamples of its histogram, seed {:#x}); \
a change counts only where the two runs' intervals do not overlap, else it is \"within noise\"",
        bootstrap::RESAMPLES,
        bootstrap::SEED
    )
}
