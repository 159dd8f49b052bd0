//! A run's time left beyond the running scenario, for the progress line of a suite
//! (`[3/40, ~2 min after this] NAME`): each later scenario's warm-up and bound (samples ×
//! period or its duration, whichever ends it first), scaled by how long the finished
//! scenarios really took against the same estimate (setup, loads, trace, saving).

use crate::plan::ScenarioPlan;
use crate::probe::CommonSettings;

/// Setup and saving around a scenario before any has finished to scale by.
const FIRST_GUESS_OVERHEAD_NS: u64 = 500_000_000;

/// The finished scenarios' estimates and real durations.
#[derive(Debug, Default)]
pub struct Eta {
    estimated_ns: u128,
    took_ns: u128,
}

impl Eta {
    /// Notes that a scenario estimated at `estimated_ns` took `took_ns`.
    pub fn finished(&mut self, estimated_ns: u64, took_ns: u64) {
        self.estimated_ns += u128::from(estimated_ns);
        self.took_ns += u128::from(took_ns);
    }

    /// The scenarios' estimates summed and scaled by what the finished ones took.
    pub fn left_ns(&self, estimates: impl Iterator<Item = u64>) -> u64 {
        let sum: u128 = estimates.map(u128::from).sum();
        let scaled = (sum * self.took_ns)
            .checked_div(self.estimated_ns)
            .unwrap_or(sum);
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
}

/// One scenario's length as planned (unscaled), with `settings` its bounds.
pub fn estimate_ns(sp: &ScenarioPlan, settings: &CommonSettings) -> u64 {
    let by_samples = settings
        .samples
        .map(|s| s.saturating_mul(sp.probe.period_ns()))
        .filter(|&ns| ns > 0);
    let bound = match (by_samples, settings.duration_ns) {
        (Some(s), Some(d)) => s.min(d),
        (Some(s), None) => s,
        (None, Some(d)) => d,
        (None, None) => 0,
    };
    settings
        .warmup_ns
        .saturating_add(bound)
        .saturating_add(FIRST_GUESS_OVERHEAD_NS)
}

/// The progress label of scenario `index` (0-based) of `total`: `[3/40] NAME`, with the
/// time the later ones will take when there are any.
pub fn label(name: &str, index: usize, total: usize, later_ns: u64) -> String {
    match (total, later_ns) {
        (1, _) => name.to_string(),
        (_, 0) => format!("[{}/{total}] {name}", index + 1),
        _ => format!(
            "[{}/{total}, ~{} after this] {name}",
            index + 1,
            rough(later_ns)
        ),
    }
}

/// A time left for people: `40 s`, `12 min`, `2.5 h` (as `suite --list` estimates).
fn rough(ns: u64) -> String {
    let s = ns.div_ceil(1_000_000_000);
    match s {
        0..120 => format!("{s} s"),
        120..7200 => format!("{} min", s.div_ceil(60)),
        _ => format!("{:.1} h", s as f64 / 3600.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_scales_by_what_finished_scenarios_took() {
        let mut eta = Eta::default();
        assert_eq!(eta.left_ns([10, 20].into_iter()), 30);
        eta.finished(100, 150);
        assert_eq!(eta.left_ns([10, 20].into_iter()), 45);
    }

    #[test]
    fn labels_name_position_and_time_after() {
        assert_eq!(label("t", 0, 1, 5_000_000_000), "t");
        assert_eq!(label("t", 2, 4, 0), "[3/4] t");
        let l = label("t", 0, 4, 90_000_000_000);
        assert_eq!(l, "[1/4, ~90 s after this] t");
        assert_eq!(rough(600_000_000_000), "10 min");
        assert_eq!(rough(9_000_000_000_000), "2.5 h");
    }
}
